/*
 * hash.c: hasher threads (see hash.h).
 *
 * Reads PixChunks from its input queue; writes finished PixItems to the
 * store queue.  One thread per input queue; all messages of a file come
 * through one queue, in order, so one thread sees a whole file.
 *
 * With AVX2 or AVX-512 (md5-lanes.c), a hasher keeps every file it has
 * data for and runs up to 8 or 16 of them at a time in SIMD lanes,
 * gathering whichever have whole 64-byte blocks ready, so files of any
 * sizes keep the lanes busy; a file alone goes through OpenSSL's block
 * function on the same state.  Without either, each file goes through
 * OpenSSL's EVP MD5, the reference.  Either way the metadata parser gets the same bytes, in order,
 * as they arrive.
 *
 * The hasher waits on its queue only when none of its files has work;
 * otherwise it takes what is queued without waiting, then hashes.
 *
 * Invariants:
 *  1. A File's MD5 state (or EVP context) and metadata parser have seen
 *     exactly the bytes of the current pass up to the consumed position, in
 *     file order (RESTART starts both anew).
 *  2. Bytes not yet hashed are in the File's chunks (from `off` in the
 *     first) and its carry (fewer than 64, preceding the chunks).
 *  3. An item leaves with has_md5 set only when its END had no error: a
 *     failed or unstable read never yields a hash.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hash.h"
#include "log.h"
#include "md5-lanes.h"
#include "meta.h"
#include "read.h"

/* MD5_CTX and MD5_Update: deprecated in OpenSSL 3 for callers who want a
 * whole MD5; here they run OpenSSL's assembler block function on the state
 * of a file that is hashing alone */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_MD_CTX, EVP_MD_CTX_free)

/* Most blocks one lane step runs before the hasher looks at its queue
 * again (1 MiB per lane). */
#define MAX_STEP_BLOCKS 16384

/* Messages taken from the queue, and finished items handed on, at once. */
#define TAKE_BATCH 64
#define FINISH_BATCH 64

struct PixHashers {
	GThread **threads;
	guint n;
};

typedef struct {
	PixQueue *in;
	PixQueue *out;
	guint n_lanes;              /* streams hashed at once; 0: OpenSSL per file */
	gboolean is_lanes;          /* n_lanes > 0 */
} HasherArgs;

/* A file between its START and its END. */
typedef struct {
	PixItem *item;              /* (owned) */
	PixMd5 md5;                 /* is_lanes: the state */
	EVP_MD_CTX *evp;            /* !is_lanes: the state (owned) */
	PixMetaParser *meta;        /* (owned) */
	GQueue chunks;              /* PixChunk* with bytes not yet hashed (owned) */
	gsize off;                  /* bytes of the first chunk already hashed */
	guint8 carry[PIX_MD5_BLOCK];/* bytes of a block split across chunks */
	gsize carry_len;
	PixChunk *end;              /* the END message once it came (owned;
	                               its data, if any, is also in `chunks`) */
} File;

/* Drops the first chunk, hashed or discarded; the END message is freed
 * with the File, not here. */
static void pop_chunk(File *f)
{
	PixChunk *c = g_queue_pop_head(&f->chunks);
	if (c != f->end)
		pix_chunk_free(c);
	f->off = 0;
}

static void file_reset(File *f, gboolean is_lanes)
{
	while (!g_queue_is_empty(&f->chunks))
		pop_chunk(f);
	f->carry_len = 0;
	if (is_lanes) {
		pix_md5_init(&f->md5);
	} else {
		if (f->evp == NULL)
			f->evp = EVP_MD_CTX_new();
		if (f->evp == NULL || EVP_DigestInit_ex(f->evp, EVP_md5(), NULL) != 1)
			g_error("OpenSSL cannot initialise MD5");
	}
	pix_meta_parser_free(f->meta);
	f->meta = pix_meta_parser_new();
}

static void file_free(File *f)
{
	while (!g_queue_is_empty(&f->chunks))
		pop_chunk(f);
	EVP_MD_CTX_free(f->evp);
	pix_meta_parser_free(f->meta);
	pix_chunk_free(f->end);
	g_free(f);
}

/* Bytes of whole blocks ready at the head of the file, contiguous. */
static gsize ready_blocks(File *f)
{
	const PixChunk *c = g_queue_peek_head(&f->chunks);
	if (c == NULL || f->carry_len > 0)
		return 0;
	return (c->len - f->off) / PIX_MD5_BLOCK;
}

static void consume(File *f, gsize n_blocks)
{
	PixChunk *c = g_queue_peek_head(&f->chunks);
	f->off += n_blocks * PIX_MD5_BLOCK;
	if (f->off == c->len)
		pop_chunk(f);
}

/*
 * Makes the next block contiguous: bytes left at the end of a chunk (fewer
 * than a block) go to the carry, and the carry is completed from the next
 * chunk and hashed.  Chunks are whole reads, multiples of 64, so this only
 * happens at the end of a file, or when a read came up short.
 */
static void settle(File *f)
{
	for (;;) {
		PixChunk *c = g_queue_peek_head(&f->chunks);
		if (c == NULL)
			return;
		gsize left = c->len - f->off;
		if (f->carry_len > 0) {
			gsize take = MIN(left, PIX_MD5_BLOCK - f->carry_len);
			memcpy(f->carry + f->carry_len, c->data + f->off, take);
			f->carry_len += take;
			f->off += take;
			if (f->carry_len == PIX_MD5_BLOCK) {
				pix_md5_blocks(&f->md5, f->carry, 1);
				f->carry_len = 0;
			}
		} else if (left < PIX_MD5_BLOCK) {
			memcpy(f->carry, c->data + f->off, left);
			f->carry_len = left;
			f->off = c->len;
		} else {
			return;
		}
		if (f->off == c->len)
			pop_chunk(f);
	}
}

/* Takes one message; returns the File it concerns (new for START). */
static File *take(GPtrArray *files, PixChunk *c, gboolean is_lanes)
{
	File *f = NULL;
	if (c->flags & PIX_CHUNK_START) {
		f = g_new0(File, 1);
		f->item = c->item;
		g_queue_init(&f->chunks);
		file_reset(f, is_lanes);
		g_ptr_array_add(files, f);
	} else {
		for (guint i = 0; i < files->len && f == NULL; i++)
			if (((File *)g_ptr_array_index(files, i))->item == c->item)
				f = g_ptr_array_index(files, i);
		g_assert(f != NULL);
	}
	if (c->flags & PIX_CHUNK_RESTART)
		file_reset(f, is_lanes);
	if (c->len > 0) {
		if (f->item->action != PIX_ACT_VERIFY)
			pix_meta_parser_feed(f->meta, c->data, c->len);
		if (!is_lanes && EVP_DigestUpdate(f->evp, c->data, c->len) != 1)
			g_error("OpenSSL cannot update MD5");
	}
	if (c->flags & PIX_CHUNK_END)
		f->end = c;
	if (is_lanes && c->len > 0)
		g_queue_push_tail(&f->chunks, c);
	else if (!(c->flags & PIX_CHUNK_END))
		pix_chunk_free(c);
	return f;
}

/* The file is complete (END came, every byte hashed): finish its item. */
static PixItem *finish(File *f, gboolean is_lanes)
{
	PixItem *item = g_steal_pointer(&f->item);
	PixChunk *end = f->end;

	item->is_read = TRUE;
	if (end->is_vanished) {
		item->is_vanished = TRUE;
		return item;
	}
	if (end->error != NULL) {
		item->is_unstable = end->is_unstable;
		g_free(item->error);
		item->error = g_steal_pointer(&end->error);
		return item;
	}
	if (is_lanes) {
		g_assert(g_queue_is_empty(&f->chunks));
		pix_md5_finish(&f->md5, f->carry, f->carry_len, item->md5);
	} else {
		unsigned int len = 0;
		if (EVP_DigestFinal_ex(f->evp, item->md5, &len) != 1 || len != 16)
			g_error("OpenSSL cannot finish MD5");
	}
	item->has_md5 = TRUE;
	item->st = end->st;
	item->bytes_read = end->bytes_read;
	item->is_racy = end->is_racy;
	if (item->action == PIX_ACT_VERIFY)
		return item;
	pix_meta_parser_finish(f->meta, item);
	if (item->error != NULL) {
		g_autofree char *path = pix_item_path(item);
		g_autofree char *q = pix_quote(path);
		pix_warn("damaged '%s': %s (indexed with its MD5)", q, item->error);
	}
	return item;
}

/* Whether the file has nothing left to hash but its last partial block
 * (lanes: after settle(), which puts that block in the carry). */
static gboolean is_complete(File *f)
{
	if (f->end == NULL)
		return FALSE;
	return f->end->error != NULL || f->end->is_aborted || f->end->is_vanished || g_queue_is_empty(&f->chunks);
}

/* Finishes complete files and passes them on to `out` in one hand-off;
 * returns how many it passed on or dropped. */
static guint finish_complete(GPtrArray *files, PixQueue *out, gboolean is_lanes)
{
	gpointer done[FINISH_BATCH];
	guint n = 0, n_done = 0;
	for (guint i = 0; i < files->len;) {
		File *f = g_ptr_array_index(files, i);
		if (is_lanes)
			settle(f);
		if (!is_complete(f)) {
			i++;
			continue;
		}
		if (f->end->is_aborted) {
			pix_item_free(g_steal_pointer(&f->item));
		} else {
			done[n_done++] = finish(f, is_lanes);
			if (n_done == FINISH_BATCH) {
				pix_queue_push_many(out, done, n_done);
				n_done = 0;
			}
		}
		g_ptr_array_remove_index(files, i);   /* keeps arrival order */
		file_free(f);
		n++;
	}
	if (n_done > 0)
		pix_queue_push_many(out, done, n_done);
	return n;
}

/*
 * Whole blocks of a file hashing alone, through OpenSSL's block function
 * (assembler on x86-64, about 15% faster than ours) on our state: with no
 * bytes buffered in the context, MD5_Update runs the blocks straight
 * through.  The padding stays ours (pix_md5_finish).
 */
static void blocks_alone(PixMd5 *m, const guint8 *data, gsize n_blocks)
{
	MD5_CTX c;
	memset(&c, 0, sizeof c);
	c.A = m->h[0];
	c.B = m->h[1];
	c.C = m->h[2];
	c.D = m->h[3];
	if (MD5_Update(&c, data, n_blocks * PIX_MD5_BLOCK) != 1)
		g_error("OpenSSL cannot update MD5");
	g_assert(c.num == 0);
	m->h[0] = c.A;
	m->h[1] = c.B;
	m->h[2] = c.C;
	m->h[3] = c.D;
	m->length_bytes += (guint64)n_blocks * PIX_MD5_BLOCK;
}

/* One lane step over up to n_lanes files with whole blocks; returns
 * whether there was anything to hash. */
static gboolean hash_step(GPtrArray *files, guint n_lanes)
{
	PixMd5 *states[PIX_MD5_MAX_LANES];
	const guint8 *data[PIX_MD5_MAX_LANES];
	File *picked[PIX_MD5_MAX_LANES];
	gsize n_blocks = MAX_STEP_BLOCKS;
	guint n = 0;

	/* oldest first: finishing files soonest frees their buffers */
	for (guint i = 0; i < files->len && n < n_lanes; i++) {
		File *f = g_ptr_array_index(files, i);
		gsize ready = ready_blocks(f);
		if (ready == 0)
			continue;
		const PixChunk *c = g_queue_peek_head(&f->chunks);
		picked[n] = f;
		states[n] = &f->md5;
		data[n] = c->data + f->off;
		n_blocks = MIN(n_blocks, ready);
		n++;
	}
	if (n == 0)
		return FALSE;
	if (n == 1)
		blocks_alone(states[0], data[0], n_blocks);
	else
		pix_md5_lanes_blocks(states, data, n, n_blocks);
	for (guint i = 0; i < n; i++)
		consume(picked[i], n_blocks);
	return TRUE;
}

static gpointer hasher_main(gpointer data)
{
	HasherArgs *args = data;
	GPtrArray *files = g_ptr_array_new();
	gboolean is_open = TRUE;

	while (is_open || files->len > 0) {
		/* wait only when there is nothing to hash */
		gboolean is_busy = FALSE;
		for (guint i = 0; i < files->len && !is_busy; i++)
			is_busy = ready_blocks(g_ptr_array_index(files, i)) > 0;
		gboolean is_timeout = FALSE;
		gpointer chunks[TAKE_BATCH];
		guint n = is_open ? pix_queue_pop_many(args->in, chunks, TAKE_BATCH, is_busy ? 0 : -1, &is_timeout) : 0;
		/* what metadata costs (fed in take(), finished in
		 * finish_complete()) is counted apart from hashing, to compare
		 * with tools that only read metadata: one clock reading per
		 * batch, not per file (a thread's CPU clock is a system call) */
		gint64 t0 = pix_thread_cpu_ns();
		for (guint i = 0; i < n; i++)
			take(files, chunks[i], args->is_lanes);
		if (n == 0 && !is_timeout)
			is_open = FALSE;
		finish_complete(files, args->out, args->is_lanes);
		pix_count_add(PIX_NS_META, pix_thread_cpu_ns() - t0);
		if (args->is_lanes) {
			hash_step(files, args->n_lanes);
			t0 = pix_thread_cpu_ns();
			finish_complete(files, args->out, args->is_lanes);
			pix_count_add(PIX_NS_META, pix_thread_cpu_ns() - t0);
		}
	}
	g_assert(files->len == 0);
	g_ptr_array_free(files, TRUE);
	pix_queue_close(args->out);
	g_free(args);
	return NULL;
}

PixHashers *pix_hash_start(PixQueue **in, guint n, PixQueue *out)
{
	PixHashers *h = g_new0(PixHashers, 1);
	h->n = n;
	h->threads = g_new0(GThread *, n);
	for (guint i = 0; i < n; i++) {
		HasherArgs *args = g_new0(HasherArgs, 1);
		args->in = in[i];
		args->out = out;
		args->n_lanes = pix_md5_lane_count();
		args->is_lanes = args->n_lanes > 0;
		h->threads[i] = g_thread_new("pix-hash", hasher_main, args);
	}
	return h;
}

void pix_hash_join(PixHashers *h)
{
	for (guint i = 0; i < h->n; i++)
		g_thread_join(h->threads[i]);
	g_free(h->threads);
	g_free(h);
}

void pix_md5_buffer(const void *data, gsize len, guint8 out[16])
{
	g_autoptr(EVP_MD_CTX) ctx = EVP_MD_CTX_new();
	unsigned int n = 0;
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, data, len) != 1 || EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != 16)
		g_error("OpenSSL cannot compute MD5");
}

void pix_md5_hex(const guint8 md5[16], char hex[33])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[2 * i] = digits[md5[i] >> 4];
		hex[2 * i + 1] = digits[md5[i] & 15];
	}
	hex[32] = '\0';
}
