/*
 * fuzz-xmp.c: libFuzzer target for the XMP reader (meta-xmp.c): packets
 * found in images and sidecar files.
 * What it runs and checks: fuzz_xmp() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_xmp)
