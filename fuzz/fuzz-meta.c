/*
 * fuzz-meta.c: libFuzzer target for the whole PixMetaParser (meta.c):
 * the format decided by content, then its parser.
 * What it runs and checks: fuzz_meta() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_meta)
