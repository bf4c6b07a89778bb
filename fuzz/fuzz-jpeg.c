/*
 * fuzz-jpeg.c: libFuzzer target for meta-jpeg.c's stream parser
 * (PixJpegParser).
 * What it runs and checks: fuzz_jpeg() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_jpeg)
