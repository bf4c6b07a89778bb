/*
 * fuzz-bmff.c: libFuzzer target for ISO base media files (meta-bmff.c:
 * HEIF, AVIF, CR3, MP4, MOV, JPEG XL): the container run directly, past
 * meta.c's magic check.
 * What it runs and checks: fuzz_bmff() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_bmff)
