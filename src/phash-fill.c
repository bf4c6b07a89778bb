/*
 * phash-fill.c: the perceptual hashes of thumbnails stored before there
 * were any (a catalog made by photoidx before schema 8), or of an older
 * PIX_PHASH_VERSION: each content's stored 256 px rendition is decoded
 * (thumb.c, pix_thumb_from_buffer()) and hashed as a scan would have
 * hashed it (phash.c), so no image file is opened.  Run by a scan with
 * thumbnails before its walk (cmd-scan.c), on the writer.
 *
 * Reads the renditions the store hands over (pix_store_fill_phashes()),
 * writes each job's hash.  The store's side runs on the main thread; the
 * decoding on one thread per core, the main thread waiting.
 *
 * Invariants:
 *  1. A job's hash is that of its stored rendition: its pixels as libjpeg
 *     decodes them, a weak hash the digest of the stored bytes (not of
 *     those pix_thumb_from_buffer() encodes again), as thumb.c's digest
 *     is of the bytes it stores.
 *  2. Each job is hashed by one thread (job i by thread i mod n).
 * Not checked at run time: 1 is tested by t3007 (the hashes filled in
 * against those of the pass), 2 holds by the slices' arithmetic.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "phash-fill.h"
#include "log.h"
#include "thumb.h"

#include <string.h>

typedef struct {
	PixPhashJob *jobs;
	guint n, first, step;
} Slice;

static void hash_job(PixPhashJob *j)
{
	memset(&j->phash, 0, sizeof j->phash);
	if (j->jpeg == NULL)
		return;         /* a note: no rendition, no hash */
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(j->jpeg, &len);
	g_autoptr(PixThumb) t = pix_thumb_from_buffer(data, len);
	if (t == NULL || t->note != NULL || !t->phash.is_set)
		return;         /* a rendition that does not decode: no hash */
	j->phash = t->phash;
	if (j->phash.is_weak)
		j->phash.value = pix_phash_digest(data, len);    /* invariant 1 */
}

static gpointer hash_slice(gpointer data)
{
	Slice *s = data;
	for (guint i = s->first; i < s->n; i += s->step)
		hash_job(&s->jobs[i]);
	return NULL;
}

void pix_phash_fill_jobs(PixPhashJob *jobs, guint n, gpointer data)
{
	(void)data;
	guint n_threads = MIN(MAX(g_get_num_processors(), 1u), MAX(n, 1u));
	Slice slices[64];
	GThread *threads[64];
	n_threads = MIN(n_threads, G_N_ELEMENTS(slices));
	for (guint k = 0; k < n_threads; k++) {
		slices[k] = (Slice){ .jobs = jobs, .n = n, .first = k, .step = n_threads };
		threads[k] = k == 0 ? NULL : g_thread_new("phash", hash_slice, &slices[k]);
	}
	hash_slice(&slices[0]);
	for (guint k = 1; k < n_threads; k++)
		g_thread_join(threads[k]);
}

gboolean pix_phash_fill(PixStore *writer, GError **error)
{
	gint64 n = 0;
	gboolean is_ok = pix_store_fill_phashes(writer, pix_phash_fill_jobs, NULL, &n, error);
	pix_count_add(PIX_N_PHASHES_FILLED, n);
	return is_ok;
}
