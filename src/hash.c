/*
 * hash.c: hasher threads (see hash.h).
 *
 * Reads PixChunks from its input queue; writes finished PixItems to the
 * store queue.  One thread per input queue; a file's chunks all come
 * through one queue, in order, so one thread sees a whole file.
 *
 * Invariants:
 *  1. Between a file's START and END, item->hash_state holds an MD5 context
 *     and item->meta_state a metadata parser that have seen exactly the
 *     bytes of the current pass, in file order (RESTART starts both anew).
 *  2. An item leaves with has_md5 set only when its END had no error: a
 *     failed or unstable read never yields a hash.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hash.h"
#include "log.h"
#include "meta.h"
#include "read.h"

#include <openssl/evp.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_MD_CTX, EVP_MD_CTX_free)

struct PixHashers {
	GThread **threads;
	guint n;
};

typedef struct {
	PixQueue *in;
	PixQueue *out;
} HasherArgs;

static void begin_file(PixItem *item)
{
	EVP_MD_CTX *ctx = item->hash_state;
	if (ctx == NULL)
		item->hash_state = ctx = EVP_MD_CTX_new();
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1)
		g_error("OpenSSL cannot initialise MD5");
	pix_meta_parser_free(item->meta_state);
	item->meta_state = pix_meta_parser_new();
}

static void end_file(PixItem *item)
{
	EVP_MD_CTX_free(item->hash_state);
	item->hash_state = NULL;
	pix_meta_parser_free(item->meta_state);
	item->meta_state = NULL;
}

/* Applies END to the item; returns it when it goes to the store. */
static PixItem *finish_file(PixChunk *end)
{
	PixItem *item = end->item;

	if (end->is_aborted) {
		end_file(item);
		pix_item_free(item);
		return NULL;
	}
	item->is_read = TRUE;
	if (end->error != NULL) {
		g_free(item->error);
		item->error = g_steal_pointer(&end->error);
		end_file(item);
		return item;
	}
	unsigned int len = 0;
	if (EVP_DigestFinal_ex(item->hash_state, item->md5, &len) != 1 || len != 16)
		g_error("OpenSSL cannot finish MD5");
	item->has_md5 = TRUE;
	item->st = end->st;
	item->bytes_read = end->bytes_read;
	item->is_racy = end->is_racy;
	pix_meta_parser_finish(item->meta_state, item);
	end_file(item);
	if (item->error != NULL) {
		g_autofree char *path = pix_item_path(item);
		g_autofree char *q = pix_quote(path);
		pix_warn("damaged '%s': %s (indexed with its MD5)", q, item->error);
	}
	return item;
}

static gpointer hasher_main(gpointer data)
{
	HasherArgs *args = data;
	PixChunk *c;

	while ((c = pix_queue_pop(args->in)) != NULL) {
		PixItem *item = c->item;
		switch (c->kind) {
		case PIX_CHUNK_START:
		case PIX_CHUNK_RESTART:
			begin_file(item);
			break;
		case PIX_CHUNK_DATA:
			if (EVP_DigestUpdate(item->hash_state, c->data, c->len) != 1)
				g_error("OpenSSL cannot update MD5");
			pix_meta_parser_feed(item->meta_state, c->data, c->len);
			break;
		case PIX_CHUNK_END:
			item = finish_file(c);
			if (item != NULL)
				pix_queue_push(args->out, item);
			break;
		}
		pix_chunk_free(c);
	}
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
