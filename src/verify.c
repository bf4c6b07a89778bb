/*
 * verify.c: the files `photoidx verify` reads (see verify.h).
 *
 * Reads the catalog through a reader PixStore; writes PixItems to the read
 * queue.  Runs on its own thread.
 *
 * Invariants:
 *  1. Files are handed out in the catalog's order (oldest verification
 *     first), in windows of WINDOW files that sched may reorder for the
 *     device, so a run cut short by its budget has verified the files
 *     that waited longest.
 *  2. Only files with an MD5 the catalog trusts (state not 'missing',
 *     regular) are read; nothing else is touched.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "verify.h"
#include "log.h"

#include <string.h>

/* Files chosen before they are ordered for the device. */
#define WINDOW 4096

typedef struct {
	const PixVerifyPlanConfig *cfg;
	GPtrArray *window;          /* PixItem, chosen, not handed out yet */
	gint64 bytes_chosen;
} Chooser;

static gboolean is_done(const Chooser *c)
{
	const PixVerifyPlanConfig *cfg = c->cfg;
	return pix_stop_requested() || (cfg->max_bytes > 0 && c->bytes_chosen >= cfg->max_bytes) ||
	       (cfg->deadline_us > 0 && g_get_monotonic_time() >= cfg->deadline_us);
}

static gboolean choose(gpointer data, PixFileRow *row)
{
	Chooser *c = data;
	g_autoptr(PixFileRow) owned = row;

	if (is_done(c))
		return FALSE;
	g_autoptr(PixDir) dir = pix_dir_new(row->dir_path);
	PixItem *item = pix_item_new(PIX_ACT_VERIFY, dir, row->name);
	item->row_id = row->id;
	item->st = row->st;
	item->old_st = row->st;
	item->has_old_md5 = TRUE;
	memcpy(item->old_md5, row->md5, 16);
	item->is_read = TRUE;
	c->bytes_chosen += row->st.size_bytes;
	g_ptr_array_add(c->window, item);
	if (c->window->len >= WINDOW)
		pix_sched_push(c->window, c->cfg->device_class, c->cfg->to_read);
	return TRUE;
}

gboolean pix_verify_plan_run(const PixVerifyPlanConfig *cfg, GError **error)
{
	Chooser c = { .cfg = cfg, .window = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free) };
	gboolean is_ok = pix_store_each_to_verify(cfg->catalog, cfg->paths, g_get_real_time() / G_USEC_PER_SEC, choose,
	                                          &c, error);

	if (is_ok && !pix_stop_requested())
		pix_sched_push(c.window, cfg->device_class, cfg->to_read);
	pix_queue_close(cfg->to_read);
	pix_queue_close(cfg->to_store);
	g_ptr_array_free(c.window, TRUE);
	if (!is_ok)
		pix_request_stop();
	return is_ok;
}
