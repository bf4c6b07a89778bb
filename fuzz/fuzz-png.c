/*
 * fuzz-png.c: libFuzzer target for PNG files (meta-png.c): the container
 * run directly, past meta.c's magic check.
 * What it runs and checks: fuzz_png() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_png)
