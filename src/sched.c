/*
 * sched.c: reading order (see sched.h).
 *
 * Reads and writes nothing but the caller's array; runs on plan's thread.
 *
 * Invariants:
 *  1. The order is total and deterministic: (dev, ino), then name, so two
 *     hard links of one inode come out in the same order every scan.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sched.h"

#include <string.h>

static int compare_read_order(gconstpointer a, gconstpointer b)
{
	const PixItem *x = *(PixItem *const *)a, *y = *(PixItem *const *)b;
	if (x->st.dev != y->st.dev)
		return x->st.dev < y->st.dev ? -1 : 1;
	if (x->st.ino != y->st.ino)
		return x->st.ino < y->st.ino ? -1 : 1;
	return strcmp(x->name, y->name);
}

void pix_sched_order(GPtrArray *items)
{
	g_ptr_array_sort(items, compare_read_order);
}
