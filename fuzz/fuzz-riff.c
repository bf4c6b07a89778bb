/*
 * fuzz-riff.c: libFuzzer target for RIFF files (meta-riff.c: WebP, AVI):
 * the container run directly, past meta.c's magic check.
 * What it runs and checks: fuzz_riff() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_riff)
