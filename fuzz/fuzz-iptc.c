/*
 * fuzz-iptc.c: libFuzzer target for IPTC-IIM and Photoshop resources (meta-iptc.c).
 * What it runs and checks: fuzz_iptc() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_iptc)
