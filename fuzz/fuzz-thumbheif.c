/*
 * fuzz-thumbheif.c: libFuzzer target for the thumbnail maker's glue on a HEIF/HEIC/AVIF (libheif),
 * with the metadata parser that finds its previews, as the hasher runs
 * them.  What it runs and checks: fuzz_thumb_with() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_thumbheif)
