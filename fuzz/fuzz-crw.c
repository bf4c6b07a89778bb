/*
 * fuzz-crw.c: libFuzzer target for Canon CRW (CIFF) files (meta-raw.c):
 * the container run directly, past meta.c's magic check.
 * What it runs and checks: fuzz_crw() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_crw)
