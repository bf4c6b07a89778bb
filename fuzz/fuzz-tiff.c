/*
 * fuzz-tiff.c: libFuzzer target for our TIFF reader (tiff.c), EXIF
 * blocks through exif.c, and the TIFF container (meta-tiff.c).
 * What it runs and checks: fuzz_tiff() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_tiff)
