/*
 * fuzz-xmpext.c: libFuzzer target for a JPEG's ExtendedXMP put together (meta-xmpext.c).
 * What it runs and checks: fuzz_xmpext() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_xmpext)
