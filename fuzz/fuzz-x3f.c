/*
 * fuzz-x3f.c: libFuzzer target for Sigma X3F files (meta-raw.c): the
 * container run directly, past meta.c's magic check.
 * What it runs and checks: fuzz_x3f() in fuzz.h.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

FUZZ_TARGET(fuzz_x3f)
