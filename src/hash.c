/*
 * hash.c: the hash stage (see hash.h).
 *
 * Reads PixChunks from its input queue; writes finished PixItems to the
 * store queue.  One thread per input queue; all messages of a file come
 * through one queue, in order, so one thread sees a whole file.  Each
 * thread runs one PixHasher, which is also what the unit tests drive
 * directly, without threads.
 *
 * With AVX2 or AVX-512 (md5-lanes.c), a hasher keeps the files it has
 * data for and runs up to 8 or 16 of them at a time in SIMD lanes,
 * gathering whichever have whole 64-byte blocks ready, so files of any
 * sizes keep the lanes busy; a file alone goes through OpenSSL's block
 * function on the same state.  Without either, each file goes through
 * OpenSSL's EVP MD5, the reference, as its bytes arrive.  Either way the
 * metadata parser gets the same bytes, in order, as they arrive.
 *
 * The bookkeeping is O(1) per message and per finished file, however
 * many files are in flight (an import of a million small files once spent
 * two thirds of its CPU walking every file held at every step, issue 24):
 * a file is found by its item in a hash table (only while it spans several
 * messages: a small file is one message, START | END, and never enters
 * it), and each file is on at most one of two intrusive lists, `ready`
 * (whole blocks to hash, in the order they became ready: the oldest first,
 * which frees their buffers soonest) or `complete` (to finish).  A step
 * takes the head of `ready`; a file leaves a list by its own links.  Files
 * are recycled through a free list with their EVP context and metadata
 * parser (reset, not made anew), chunks linked through their own `next`:
 * the hasher's own records cost no allocation per file once it has warmed
 * up (what the parsers allocate for a file's content is theirs).
 *
 * The thread waits on its queue only when no file has work; otherwise it
 * takes what is queued without waiting, then hashes; it takes nothing
 * while MAX_READY files are ready, so that files do not pile up in it
 * faster than the lanes take them (files waiting for their next message
 * do not count: each holds a reader's buffer, which the pool bounds).
 *
 * Invariants (hasher_check):
 *  1. A File's MD5 state (or EVP context) and metadata parser have seen
 *     exactly the bytes of the current pass up to the consumed position, in
 *     file order (RESTART starts both anew).
 *  2. Bytes not yet hashed are in the File's chunks (from `off` in the
 *     first) and its carry (fewer than 64, preceding the chunks); after
 *     settle(), a carry is only left when there are no chunks.
 *  3. An item leaves with has_md5 set only when its END had no error: a
 *     failed or unstable read never yields a hash.
 *  4. A File is on `ready` iff it is not complete and has whole blocks at
 *     the head of its chunks, on `complete` iff its END came and nothing
 *     is left to hash but the carry (or it failed or was aborted), and in
 *     `open` iff its START came and its END did not; each list counts
 *     its files, n_files counts every File in flight.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hash.h"
#include "log.h"
#include "md5-lanes.h"
#include "meta.h"
#include "read.h"
#include "thumb.h"

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

/* Ready files above which the thread takes no more messages: enough to
 * fill the lanes four times over. */
#define MAX_READY (4 * PIX_MD5_MAX_LANES)

/* Bytes of possible copies (item->thumbs_known) a hasher keeps at once
 * until their MD5 says whether their thumbnail exists; a file that does
 * not fit is decoded as it streams, as any other. */
#define HOLD_BUDGET ((gsize)32 << 20)

typedef enum {
	ON_NONE,      /* waiting for more data */
	ON_READY,
	ON_COMPLETE,
} ListKind;

/* A file between its START and its finish. */
typedef struct File File;
struct File {
	PixItem *item;              /* (owned) */
	PixMd5 md5;                 /* is_lanes: the state */
	EVP_MD_CTX *evp;            /* !is_lanes: the state (owned, kept
	                               when the File is recycled) */
	PixMetaParser *meta;        /* (owned) */
	PixThumbMaker *thumb;       /* (owned, made for the first file that
	                               wants a thumbnail, kept when recycled) */
	gboolean is_thumbing;       /* the item wants a thumbnail: the maker
	                               sees its bytes */
	gboolean is_holding;        /* ... of a possible copy: its bytes are
	                               kept in `held` instead, for the maker
	                               once its MD5 is known, if need be */
	GByteArray *held;           /* (owned, nullable) */
	gsize reserved;             /* of the hasher's HOLD_BUDGET, for it */
	PixChunk *head, *tail;      /* chunks with bytes not yet hashed,
	                               linked by PixChunk.next (owned) */
	gsize off;                  /* bytes of `head` already hashed */
	guint8 carry[PIX_MD5_BLOCK];/* bytes of a block split across chunks */
	gsize carry_len;
	PixChunk *end;              /* the END message once it came (owned;
	                               its data, if any, is also in the chunks) */
	gboolean is_open;           /* in PixHasher.open */
	ListKind on;                /* the list it is on */
	File *prev, *next;          /* its links on that list, or on the free
	                               list (next only) */
};

typedef struct {
	File *head, *tail;
	guint n;                    /* files on it */
} FileList;

struct PixHasher {
	guint n_lanes;              /* streams hashed at once; 0: OpenSSL per file */
	gboolean is_lanes;          /* n_lanes > 0 */
	GHashTable *open;           /* PixItem* -> File*: START came, END not yet */
	FileList ready;
	FileList complete;
	File *free_files;           /* recycled Files, linked by `next` */
	gsize held_bytes;           /* HOLD_BUDGET reserved by the Files */
	guint n_files;              /* in flight */
	GPtrArray *done;            /* finished items, until drained (owned) */
	PixHasherStats stats;
};

/* --- the lists ------------------------------------------------------------ */

static FileList *list_of(PixHasher *h, ListKind on)
{
	return on == ON_READY ? &h->ready : &h->complete;
}

static void list_remove(PixHasher *h, File *f)
{
	if (f->on == ON_NONE)
		return;
	FileList *l = list_of(h, f->on);
	if (f->prev != NULL)
		f->prev->next = f->next;
	else
		l->head = f->next;
	if (f->next != NULL)
		f->next->prev = f->prev;
	else
		l->tail = f->prev;
	l->n--;
	f->prev = f->next = NULL;
	f->on = ON_NONE;
}

static void list_append(PixHasher *h, File *f, ListKind on)
{
	g_assert(f->on == ON_NONE && on != ON_NONE);
	FileList *l = list_of(h, on);
	f->on = on;
	f->prev = l->tail;
	f->next = NULL;
	if (l->tail != NULL)
		l->tail->next = f;
	else
		l->head = f;
	l->tail = f;
	l->n++;
}

/* --- one file's bytes ------------------------------------------------------ */

/* Drops the first chunk, hashed or discarded; the END message is freed
 * with the File, not here. */
static void pop_chunk(File *f)
{
	PixChunk *c = f->head;
	f->head = c->next;
	if (f->head == NULL)
		f->tail = NULL;
	c->next = NULL;
	if (c != f->end)
		pix_chunk_free(c);
	f->off = 0;
}

static void push_chunk(File *f, PixChunk *c)
{
	c->next = NULL;
	if (f->tail != NULL)
		f->tail->next = c;
	else
		f->head = c;
	f->tail = c;
}

/* Gives back what a File kept of a possible copy. */
static void release_hold(PixHasher *h, File *f)
{
	g_assert(h->held_bytes >= f->reserved);
	h->held_bytes -= f->reserved;
	f->reserved = 0;
	f->is_holding = FALSE;
	if (f->held != NULL && f->held->len > (1u << 20))
		g_clear_pointer(&f->held, g_byte_array_unref);
	else if (f->held != NULL)
		g_byte_array_set_size(f->held, 0);
}

/* Keeps a possible copy's bytes; one that grew past twice what was
 * reserved for it (a file written while read) gets no thumbnail. */
static void hold(File *f, const guint8 *data, gsize len)
{
	if (f->held->len + len > 2 * f->reserved + 65536) {
		g_byte_array_set_size(f->held, 0);
		f->is_thumbing = FALSE;
		f->is_holding = FALSE;
		return;
	}
	g_byte_array_append(f->held, data, (guint)len);
}

/* Makes the File ready for the first pass over its item's bytes, or for
 * another (`is_again`: the file changed while it was read). */
static void file_reset(PixHasher *h, File *f, gboolean is_again)
{
	while (f->head != NULL)
		pop_chunk(f);
	f->carry_len = 0;
	if (h->is_lanes) {
		pix_md5_init(&f->md5);
	} else {
		if (f->evp == NULL)
			f->evp = EVP_MD_CTX_new();
		if (f->evp == NULL || EVP_DigestInit_ex(f->evp, EVP_md5(), NULL) != 1)
			g_error("OpenSSL cannot initialise MD5");
	}
	/* a verify reads no metadata; a parser is kept with the File */
	release_hold(h, f);
	f->is_thumbing = FALSE;
	if (f->item->action == PIX_ACT_VERIFY)
		return;
	if (f->meta == NULL)
		f->meta = pix_meta_parser_new();
	else
		pix_meta_parser_reset(f->meta);
	/* a file read again changed size: its listed size is no guide */
	if (!is_again)
		pix_meta_parser_expect_size(f->meta, (guint64)MAX(f->item->st.size_bytes, 0));
	if (f->item->want_thumb) {
		if (f->thumb == NULL)
			f->thumb = pix_thumb_maker_new();
		/* the parser is fed each piece first: the maker asks it where
		 * the previews lie */
		pix_thumb_maker_start(f->thumb, f->meta, f->item->st.size_bytes);
		f->is_thumbing = TRUE;
		gsize size = (gsize)MAX(f->item->st.size_bytes, 0);
		if (f->item->thumbs_known != NULL && h->held_bytes + size <= HOLD_BUDGET) {
			f->is_holding = TRUE;
			f->reserved = size;
			h->held_bytes += size;
			if (f->held == NULL)
				f->held = g_byte_array_sized_new((guint)size);
		}
	}
}

/* A File for a new START: a recycled one, else a new one. */
static File *file_get(PixHasher *h)
{
	File *f = h->free_files;
	if (f != NULL) {
		h->free_files = f->next;
		f->next = NULL;
	} else {
		f = g_new0(File, 1);
		h->stats.n_file_allocs++;
	}
	h->n_files++;
	return f;
}

/* Gives a finished File (its item gone) back to the free list. */
static void file_put(PixHasher *h, File *f)
{
	g_assert(f->item == NULL && f->on == ON_NONE && !f->is_open);
	while (f->head != NULL)
		pop_chunk(f);
	pix_chunk_free(g_steal_pointer(&f->end));
	/* what it held of the file's content goes now, not at the next use */
	if (f->meta != NULL)
		pix_meta_parser_reset(f->meta);
	if (f->thumb != NULL)
		pix_thumb_maker_reset(f->thumb);
	release_hold(h, f);
	f->is_thumbing = FALSE;
	f->carry_len = 0;
	f->off = 0;
	f->next = h->free_files;
	h->free_files = f;
	h->n_files--;
}

/* Bytes of whole blocks ready at the head of the file, contiguous. */
static gsize ready_blocks(const File *f)
{
	if (f->head == NULL || f->carry_len > 0)
		return 0;
	return (f->head->len - f->off) / PIX_MD5_BLOCK;
}

static void consume(File *f, gsize n_blocks)
{
	f->off += n_blocks * PIX_MD5_BLOCK;
	if (f->off == f->head->len)
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
	while (f->head != NULL) {
		PixChunk *c = f->head;
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

/* Whether the file has nothing left to hash but its last partial block
 * (lanes: after settle(), which puts that block in the carry). */
static gboolean is_complete(const File *f)
{
	if (f->end == NULL)
		return FALSE;
	return f->end->error != NULL || f->end->is_aborted || f->end->is_vanished || f->head == NULL;
}

/* Puts the file on the list its state calls for (invariant 4): one visit. */
static void place(PixHasher *h, File *f)
{
	ListKind want = ON_NONE;
	h->stats.n_visits++;
	if (h->is_lanes)
		settle(f);
	if (is_complete(f))
		want = ON_COMPLETE;
	else if (ready_blocks(f) > 0)
		want = ON_READY;
	if (want == f->on)
		return;
	list_remove(h, f);
	if (want != ON_NONE)
		list_append(h, f, want);
}

/* --- taking messages -------------------------------------------------------- */

/* The File a message concerns: new for START, else found by its item. */
static File *file_of(PixHasher *h, PixChunk *c)
{
	if (c->flags & PIX_CHUNK_START) {
		File *f = file_get(h);
		f->item = c->item;
		file_reset(h, f, FALSE);
		if (!(c->flags & PIX_CHUNK_END)) {
			g_hash_table_insert(h->open, f->item, f);
			f->is_open = TRUE;
		}
		return f;
	}
	File *f = g_hash_table_lookup(h->open, c->item);
	g_assert(f != NULL);
	return f;
}

void pix_hasher_take(PixHasher *h, PixChunk *c)
{
	File *f = file_of(h, c);
	h->stats.n_visits++;
	if (c->flags & PIX_CHUNK_RESTART) {
		file_reset(h, f, TRUE);
		list_remove(h, f);
	}
	if (c->len > 0) {
		if (f->item->action != PIX_ACT_VERIFY)
			pix_meta_parser_feed(f->meta, c->data, c->len);
		if (f->is_holding)
			hold(f, c->data, c->len);
		else if (f->is_thumbing)
			pix_thumb_maker_feed(f->thumb, c->data, c->len);
		if (!h->is_lanes && EVP_DigestUpdate(f->evp, c->data, c->len) != 1)
			g_error("OpenSSL cannot update MD5");
	}
	if (c->flags & PIX_CHUNK_END) {
		f->end = c;
		if (f->is_open) {
			g_hash_table_remove(h->open, f->item);
			f->is_open = FALSE;
		}
	}
	if (h->is_lanes && c->len > 0)
		push_chunk(f, c);
	else if (!(c->flags & PIX_CHUNK_END))
		pix_chunk_free(c);
	place(h, f);
}

/* --- finishing ---------------------------------------------------------------- */

/* The file is complete (END came, every byte hashed): finish its item. */
static PixItem *finish(PixHasher *h, File *f)
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
	if (h->is_lanes) {
		g_assert(f->head == NULL);
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
	if (f->is_holding && pix_thumb_index_has(item->thumbs_known, item->st.size_bytes, item->md5)) {
		/* a copy of a content with its thumbnail: nothing to decode */
		pix_count_add(PIX_N_THUMBS_KNOWN, 1);
	} else if (f->is_thumbing) {
		if (f->is_holding)
			pix_thumb_maker_feed(f->thumb, f->held->data, f->held->len);
		if (item->meta != NULL)
			pix_thumb_maker_set_image(f->thumb, item->meta->width_px, item->meta->height_px,
			                          item->meta->orientation);
		item->thumb = pix_thumb_maker_finish(f->thumb);
		/* a budget was in use: no row, the next scan tries again */
		gboolean is_deferred = item->thumb != NULL && item->thumb->is_deferred;
		if (is_deferred)
			g_clear_pointer(&item->thumb, pix_thumb_free);
		/* what no maker reads is recorded, so that it is not read again
		 * for a thumbnail (until a maker of a later version may) */
		if (is_deferred)
			;
		else if (item->thumb == NULL && item->media == PIX_MEDIA_VIDEO)
			item->thumb = pix_thumb_new_note("videos get no thumbnail");
		else if (item->thumb == NULL && (item->media == PIX_MEDIA_IMAGE || item->media == PIX_MEDIA_RAW))
			item->thumb = pix_thumb_new_note("no thumbnail is made of %s files yet",
			                                 item->mime != NULL ? item->mime : "these");
		if (item->thumb != NULL)
			pix_count_add(item->thumb->note == NULL ? PIX_N_THUMBS : PIX_N_THUMB_NOTES, 1);
	}
	if (item->error != NULL) {
		g_autofree char *path = pix_item_path(item);
		g_autofree char *q = pix_quote(path);
		pix_warn("damaged '%s': %s (indexed with its MD5)", q, item->error);
	}
	return item;
}

guint pix_hasher_finish(PixHasher *h)
{
	guint n = 0;
	File *f;
	while ((f = h->complete.head) != NULL) {
		list_remove(h, f);
		h->stats.n_visits++;
		if (f->end->is_aborted)
			pix_item_free(g_steal_pointer(&f->item));
		else
			g_ptr_array_add(h->done, finish(h, f));
		file_put(h, f);
		n++;
	}
	return n;
}

/* --- hashing ------------------------------------------------------------------ */

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

gboolean pix_hasher_step(PixHasher *h)
{
	PixMd5 *states[PIX_MD5_MAX_LANES];
	const guint8 *data[PIX_MD5_MAX_LANES];
	File *picked[PIX_MD5_MAX_LANES];
	gsize n_blocks = MAX_STEP_BLOCKS;
	guint n = 0;

	/* the head of `ready`: the oldest, whose finishing frees buffers soonest */
	for (File *f = h->ready.head; f != NULL && n < h->n_lanes; f = f->next) {
		gsize ready = ready_blocks(f);
		g_assert(ready > 0);
		h->stats.n_visits++;
		picked[n] = f;
		states[n] = &f->md5;
		data[n] = f->head->data + f->off;
		n_blocks = MIN(n_blocks, ready);
		n++;
	}
	if (n == 0)
		return FALSE;
	if (n == 1)
		blocks_alone(states[0], data[0], n_blocks);
	else
		pix_md5_lanes_blocks(states, data, n, n_blocks);
	for (guint i = 0; i < n; i++) {
		consume(picked[i], n_blocks);
		place(h, picked[i]);
	}
	return TRUE;
}

/* --- the hasher ---------------------------------------------------------------- */

PixHasher *pix_hasher_new(guint n_lanes)
{
	PixHasher *h = g_new0(PixHasher, 1);
	h->n_lanes = MIN(n_lanes, pix_md5_lane_count());
	h->is_lanes = h->n_lanes > 0;
	h->open = g_hash_table_new(g_direct_hash, g_direct_equal);
	h->done = g_ptr_array_new();
	return h;
}

void pix_hasher_free(PixHasher *h)
{
	if (h == NULL)
		return;
	g_assert(h->n_files == 0 && h->done->len == 0);
	while (h->free_files != NULL) {
		File *f = h->free_files;
		h->free_files = f->next;
		EVP_MD_CTX_free(f->evp);
		pix_meta_parser_free(f->meta);
		pix_thumb_maker_free(f->thumb);
		if (f->held != NULL)
			g_byte_array_free(f->held, TRUE);
		g_free(f);
	}
	g_hash_table_destroy(h->open);
	g_ptr_array_free(h->done, TRUE);
	g_free(h);
}

gboolean pix_hasher_is_busy(const PixHasher *h)
{
	return h->ready.n > 0 || h->complete.n > 0;
}

GPtrArray *pix_hasher_done(PixHasher *h)
{
	return h->done;
}

void pix_hasher_stats(const PixHasher *h, PixHasherStats *out)
{
	*out = h->stats;
	out->n_in_flight = h->n_files;
	out->n_ready = h->ready.n;
}

/* Invariant 2 (after settle()) for one file, and its list links. */
static gboolean file_check(const PixHasher *h, const File *f, ListKind on)
{
	if (f->on != on || f->item == NULL)
		return FALSE;
	if (h->is_lanes && f->carry_len > 0 && f->head != NULL)
		return FALSE;
	if (f->prev != NULL && f->prev->next != f)
		return FALSE;
	return f->is_open == (g_hash_table_lookup(h->open, f->item) == f);
}

static gboolean list_check(const PixHasher *h, const FileList *l, ListKind on)
{
	guint count = 0;
	for (const File *f = l->head; f != NULL; f = f->next, count++) {
		if (!file_check(h, f, on) || (f->next == NULL) != (f == l->tail) || (f == l->head) != (f->prev == NULL))
			return FALSE;
		/* invariant 4: each list holds what its name says */
		if ((on == ON_READY) == is_complete(f) || (on == ON_READY && ready_blocks(f) == 0))
			return FALSE;
	}
	return count == l->n;
}

gboolean pix_hasher_check(const PixHasher *h)
{
	if (!list_check(h, &h->ready, ON_READY) || !list_check(h, &h->complete, ON_COMPLETE))
		return FALSE;
	/* the open files: in flight, on no list unless ready, never complete */
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, h->open);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		const File *f = value;
		if (f->item != key || !f->is_open || f->end != NULL || f->on == ON_COMPLETE ||
		    !file_check(h, f, f->on))
			return FALSE;
	}
	return g_hash_table_size(h->open) + h->complete.n <= h->n_files;
}

/* --- the threads ---------------------------------------------------------------- */

struct PixHashers {
	GThread **threads;
	guint n;
};

typedef struct {
	PixQueue *in;
	PixQueue *out;
} HasherArgs;

/* Finishes the complete files and hands their items on, FINISH_BATCH at
 * a time. */
static void hand_on(PixHasher *h, PixQueue *out)
{
	pix_hasher_finish(h);
	GPtrArray *done = pix_hasher_done(h);
	for (guint i = 0; i < done->len; i += FINISH_BATCH)
		pix_queue_push_many(out, done->pdata + i, MIN(FINISH_BATCH, done->len - i));
	g_ptr_array_set_size(done, 0);
}

static gpointer hasher_main(gpointer data)
{
	HasherArgs *args = data;
	PixHasher *h = pix_hasher_new(pix_md5_lane_count());
	gboolean is_open = TRUE;

	while (is_open || h->n_files > 0) {
		/* what metadata costs (fed in take, finished in hand_on) is
		 * counted apart from hashing, to compare with tools that only
		 * read metadata: one pair of clock readings per round, not per
		 * file (a thread's CPU clock is a system call; a wait in the
		 * queue costs it nothing); only when asked for */
		gboolean is_timed = pix_is_meta_timing();
		gint64 t0 = is_timed ? pix_thread_cpu_ns() : 0;
		if (is_open && h->ready.n < MAX_READY) {
			/* wait only when there is nothing to hash */
			gboolean is_timeout = FALSE;
			gpointer chunks[TAKE_BATCH];
			guint n = pix_queue_pop_many(args->in, chunks, TAKE_BATCH, pix_hasher_is_busy(h) ? 0 : -1,
			                             &is_timeout);
			for (guint i = 0; i < n; i++)
				pix_hasher_take(h, chunks[i]);
			if (n == 0 && !is_timeout)
				is_open = FALSE;
		}
		/* the files the last step and these messages completed */
		hand_on(h, args->out);
		if (is_timed)
			pix_count_add(PIX_NS_META, pix_thread_cpu_ns() - t0);
		pix_hasher_step(h);
		g_assert(is_open || h->n_files == 0 || pix_hasher_is_busy(h));
	}
	pix_hasher_free(h);
	pix_queue_close(args->out);
	g_free(args);
	return NULL;
}

PixHashers *pix_hash_start(PixQueue **in, guint n, PixQueue *out)
{
	PixHashers *hs = g_new0(PixHashers, 1);
	hs->n = n;
	hs->threads = g_new0(GThread *, n);
	for (guint i = 0; i < n; i++) {
		HasherArgs *args = g_new0(HasherArgs, 1);
		args->in = in[i];
		args->out = out;
		hs->threads[i] = g_thread_new("pix-hash", hasher_main, args);
	}
	return hs;
}

void pix_hash_join(PixHashers *hs)
{
	for (guint i = 0; i < hs->n; i++)
		g_thread_join(hs->threads[i]);
	g_free(hs->threads);
	g_free(hs);
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

gboolean pix_md5_from_hex(const char *hex, guint8 md5[16])
{
	if (hex == NULL || strlen(hex) != 32)
		return FALSE;
	for (int i = 0; i < 16; i++) {
		int hi = g_ascii_xdigit_value(hex[2 * i]), lo = g_ascii_xdigit_value(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return FALSE;
		md5[i] = (guint8)(hi << 4 | lo);
	}
	return TRUE;
}
