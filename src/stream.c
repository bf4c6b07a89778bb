/*
 * stream.c: byte ranges for metadata parsers out of a one-pass read (see
 * stream.h).
 *
 * Reads the pieces it is fed; writes nothing but the parsers' callbacks.
 * Runs on a hash thread (or a fuzz target), one thread per stream.
 *
 * A range asked for is filled front to back from whatever holds its next
 * byte: the kept head, the kept tail, or the piece being fed.  A range
 * wholly inside one of them is handed over in place, without a copy.
 * Callbacks are made from one loop (deliver()), never from inside another
 * callback, so a chain of ranges each asked for by the previous one's
 * callback costs no stack.
 *
 * Invariants:
 *  1. Every accepted want is called back exactly once, unless the stream
 *     fails first; none is called back after a failure.  Until then it is
 *     pending (waiting for bytes) or ready (complete, waiting for
 *     deliver()), and no public call but one made from inside a callback
 *     returns with a want ready.
 *  2. A pending want has its bytes [off, off + got) filled and off + got >=
 *     the position the file has reached (else it would be missed).
 *  3. held_bytes is the sum of the capacities of the buffers of the wants
 *     not yet called back (pending and ready), and never exceeds
 *     PIX_STREAM_MAX_HELD once a call returns (the call that would exceed
 *     it fails the stream).
 *
 * stream_check() asserts all three where a piece was fed, at the end and
 * at a failure, in O(pending wants), as fill_pending() costs anyway;
 * want_check() asserts 2 for a want left pending when it is asked for.
 * Not checked: that the bytes filled are the file's (that would take a
 * copy of the file).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "stream.h"

#include <string.h>

#define MAX_PROBLEMS 4

typedef struct {
	guint64 off;
	gsize len;
	gsize got;              /* bytes filled from off */
	guint8 *buf;            /* copy of the bytes (owned), or NULL */
	gsize cap;
	const guint8 *direct;   /* the whole range in place (head, tail, piece) */
	gboolean is_missed;     /* its bytes went by before it was asked for */
	PixStreamFn fn;
	void *ctx;
	guint64 arg;
	guint64 seq;
} Want;

struct PixStream {
	guint64 pos;            /* bytes fed before the current piece */
	const guint8 *piece;    /* the piece being fed, or NULL */
	gsize piece_len;
	gboolean is_finished;
	gboolean is_failed;
	gboolean is_delivering;

	guint8 *head;           /* the first keep_head bytes (owned) */
	gsize keep_head;
	gsize head_len;
	gsize head_cap;         /* bytes allocated at head */
	guint8 *tail;           /* bytes [tail_off, tail_off + tail_len) (owned) */
	gsize keep_tail;
	gsize tail_len;
	guint64 tail_off;
	guint64 expect_size;    /* the file's size as listed, or 0 */

	GPtrArray *pending;     /* Want* waiting for bytes */
	GPtrArray *ready;       /* Want* to call back */
	guint64 n_called;       /* wants called back (counted before the call) */
	guint64 n_wants;
	gsize held_bytes;
	GPtrArray *problems;    /* char* (owned) */
};

/* The end of what the file has delivered so far. */
static guint64 reached(const PixStream *s)
{
	return s->pos + (s->piece != NULL ? s->piece_len : 0);
}

/* Invariant 2 for pending want `w`. */
static gboolean want_check(const PixStream *s, const Want *w)
{
	return w->direct == NULL && !w->is_missed && w->got < w->len && w->got <= w->cap &&
	       (w->got == 0 || w->buf != NULL) && w->off + w->got >= reached(s);
}

/* Invariants 1 to 3 (see the top of the file). */
static gboolean stream_check(const PixStream *s)
{
	if (s->is_failed)
		return s->pending->len == 0 && s->ready->len == 0 && s->held_bytes == 0;
	if (s->n_wants != s->n_called + s->pending->len + s->ready->len)
		return FALSE;
	if ((s->is_finished && s->pending->len > 0) || (!s->is_delivering && s->ready->len > 0))
		return FALSE;
	gsize held = 0;
	for (guint i = 0; i < s->pending->len; i++) {
		const Want *w = g_ptr_array_index(s->pending, i);
		if (!want_check(s, w))
			return FALSE;
		held += w->cap;
	}
	for (guint i = 0; i < s->ready->len; i++)
		held += ((const Want *)g_ptr_array_index(s->ready, i))->cap;
	return held == s->held_bytes && held <= PIX_STREAM_MAX_HELD;
}

PixStream *pix_stream_new(gsize keep_head, gsize keep_tail)
{
	PixStream *s = g_new0(PixStream, 1);
	s->keep_head = keep_head;
	s->keep_tail = keep_tail = MAX(keep_tail, PIX_STREAM_BACK);
	/* the head grows as bytes arrive (most files are far smaller than what
	 * a container asks to keep, a sidecar's 4 MiB), the tail comes with
	 * the first bytes (a stream that only collects problems needs none) */
	s->pending = g_ptr_array_new();
	s->ready = g_ptr_array_new();
	s->problems = g_ptr_array_new_with_free_func(g_free);
	return s;
}

void pix_stream_expect_size(PixStream *s, guint64 size)
{
	g_assert(s->pos == 0 && s->piece == NULL);
	s->expect_size = size;
}

static void want_free(Want *w)
{
	g_free(w->buf);
	g_free(w);
}

/* Frees and forgets every want of `wants`. */
static void drop_all(GPtrArray *wants)
{
	for (guint i = 0; i < wants->len; i++)
		want_free(g_ptr_array_index(wants, i));
	g_ptr_array_set_size(wants, 0);
}

void pix_stream_free(PixStream *s)
{
	if (s == NULL)
		return;
	drop_all(s->pending);
	drop_all(s->ready);
	g_ptr_array_free(s->pending, TRUE);
	g_ptr_array_free(s->ready, TRUE);
	g_ptr_array_free(s->problems, TRUE);
	g_free(s->head);
	g_free(s->tail);
	g_free(s);
}

/* A buffer of file bytes at hand: `len` bytes from file offset `off`. */
typedef struct {
	const guint8 *data;
	guint64 off;
	gsize len;
} Span;

/* The buffers at hand, in the order they are searched: head, the piece
 * being fed, tail.  Returns how many. */
static guint spans(const PixStream *s, Span out[3])
{
	guint n = 0;
	if (s->head != NULL)
		out[n++] = (Span){ s->head, 0, s->head_len };
	if (s->piece != NULL)
		out[n++] = (Span){ s->piece, s->pos, s->piece_len };
	if (s->tail != NULL)
		out[n++] = (Span){ s->tail, s->tail_off, s->tail_len };
	return n;
}

/* Where byte `off` and those after it are at hand: sets *n to how many
 * are contiguous there (at most `want`). */
static const guint8 *locate(const PixStream *s, guint64 off, gsize want, gsize *n)
{
	Span sp[3];
	for (guint i = 0, k = spans(s, sp); i < k; i++) {
		if (off >= sp[i].off && off - sp[i].off < sp[i].len) {
			*n = MIN(want, sp[i].len - (off - sp[i].off));
			return sp[i].data + (off - sp[i].off);
		}
	}
	*n = 0;
	return NULL;
}

/* `len` bytes at `off` wholly inside one of the buffers at hand, or NULL. */
static const guint8 *contiguous(const PixStream *s, guint64 off, gsize len)
{
	Span sp[3];
	for (guint i = 0, k = spans(s, sp); i < k; i++)
		if (off >= sp[i].off && off - sp[i].off <= sp[i].len && len <= sp[i].len - (off - sp[i].off))
			return sp[i].data + (off - sp[i].off);
	return NULL;
}

const guint8 *pix_stream_peek(const PixStream *s, guint64 off, gsize len)
{
	return contiguous(s, off, len);
}

/* Fills `w` from what is at hand; returns whether it is complete (or
 * cannot get more, and should be called back now). */
static gboolean fill(PixStream *s, Want *w)
{
	if (w->got == 0 && w->direct == NULL && w->len > 0) {
		const guint8 *p = contiguous(s, w->off, w->len);
		if (p != NULL) {
			w->direct = p;
			w->got = w->len;
			return TRUE;
		}
	}
	while (w->got < w->len) {
		guint64 at = w->off + w->got;
		gsize n;
		const guint8 *p = locate(s, at, w->len - w->got, &n);
		if (p == NULL) {
			if (at < reached(s)) {
				w->is_missed = TRUE;   /* went by, not kept */
				return TRUE;
			}
			return s->is_finished;
		}
		if (w->got + n > w->cap) {
			gsize cap = MAX(w->cap * 2, 4096);
			cap = MIN(MAX(cap, w->got + n), w->len);
			s->held_bytes += cap - w->cap;
			w->buf = g_realloc(w->buf, cap);
			w->cap = cap;
		}
		memcpy(w->buf + w->got, p, n);
		w->got += n;
	}
	return TRUE;
}

/* Calls back ready wants, earliest end first, until none is left. */
static void deliver(PixStream *s)
{
	if (s->is_delivering)
		return;
	s->is_delivering = TRUE;
	while (s->ready->len > 0 && !s->is_failed) {
		guint best = 0;
		for (guint i = 1; i < s->ready->len; i++) {
			const Want *a = g_ptr_array_index(s->ready, i), *b = g_ptr_array_index(s->ready, best);
			if (a->off + a->len < b->off + b->len || (a->off + a->len == b->off + b->len && a->seq < b->seq))
				best = i;
		}
		Want *w = g_ptr_array_steal_index(s->ready, best);
		s->held_bytes -= w->cap;
		s->n_called++;
		const guint8 *data = w->direct != NULL ? w->direct : w->buf;
		gsize len = w->is_missed ? 0 : w->got;
		w->fn(s, w->ctx, w->arg, w->off, len > 0 ? data : NULL, len);
		want_free(w);
	}
	s->is_delivering = FALSE;
}

gboolean pix_stream_want(PixStream *s, guint64 off, gsize len, PixStreamFn fn, void *ctx, guint64 arg)
{
	if (s->is_failed)
		return FALSE;
	if (s->n_wants >= PIX_STREAM_MAX_WANTS) {
		pix_stream_fail(s, "more than %u structures", PIX_STREAM_MAX_WANTS);
		return FALSE;
	}
	if (s->pending->len >= PIX_STREAM_MAX_PENDING) {
		pix_stream_fail(s, "more than %u structures at once", PIX_STREAM_MAX_PENDING);
		return FALSE;
	}
	Want *w = g_new0(Want, 1);
	w->off = off;
	w->len = MIN(len, PIX_STREAM_MAX_WANT);
	if (off > G_MAXUINT64 - w->len)
		w->len = 0;
	w->fn = fn;
	w->ctx = ctx;
	w->arg = arg;
	w->seq = s->n_wants++;
	if (fill(s, w)) {
		g_ptr_array_add(s->ready, w);
	} else {
		g_assert(want_check(s, w));
		g_ptr_array_add(s->pending, w);
	}
	if (s->held_bytes > PIX_STREAM_MAX_HELD) {
		pix_stream_fail(s, "structures larger than %u MiB in all", PIX_STREAM_MAX_HELD >> 20);
		return FALSE;
	}
	deliver(s);
	return TRUE;
}

/* Keeps the piece's bytes that the head and the tail keep. */
static void keep(PixStream *s, const guint8 *data, gsize len)
{
	if (s->head_len < s->keep_head && s->pos < s->keep_head) {
		gsize n = MIN(len, s->keep_head - s->head_len);
		if (s->head_len + n > s->head_cap) {
			s->head_cap = MIN(MAX(s->head_cap * 2, s->head_len + n), s->keep_head);
			s->head = g_realloc(s->head, s->head_cap);
		}
		memcpy(s->head + s->head_len, data, n);
		s->head_len += n;
	}
	if (s->tail == NULL)
		s->tail = g_malloc(s->keep_tail);
	guint64 end = s->pos + len;
	/* the tail's window: the last keep_tail bytes, or, while the end of
	 * the file as listed is farther, those from its last keep_tail bytes
	 * on, and at least PIX_STREAM_BACK: it starts no later than it did */
	gsize win = s->keep_tail;
	if (s->expect_size > s->keep_tail && end <= s->expect_size) {
		guint64 from = s->expect_size - s->keep_tail;   /* where that tail starts */
		win = end > from ? MAX((gsize)(end - from), PIX_STREAM_BACK) : PIX_STREAM_BACK;
	}
	if (len >= win) {
		memcpy(s->tail, data + len - win, win);
		s->tail_len = win;
	} else {
		gsize keep_old = MIN(s->tail_len, win - len);
		memmove(s->tail, s->tail + s->tail_len - keep_old, keep_old);
		memcpy(s->tail + keep_old, data, len);
		s->tail_len = keep_old + len;
	}
	s->tail_off = end - s->tail_len;
}

/* Moves the pending wants that `fill` completes to the ready list. */
static void fill_pending(PixStream *s)
{
	for (guint i = 0; i < s->pending->len;) {
		Want *w = g_ptr_array_index(s->pending, i);
		if (fill(s, w))
			g_ptr_array_add(s->ready, g_ptr_array_steal_index(s->pending, i));
		else
			i++;
	}
	if (s->held_bytes > PIX_STREAM_MAX_HELD)
		pix_stream_fail(s, "structures larger than %u MiB in all", PIX_STREAM_MAX_HELD >> 20);
}

void pix_stream_feed(PixStream *s, const guint8 *data, gsize len)
{
	if (len == 0 || s->is_finished)
		return;
	if (!s->is_failed && s->pending->len > 0) {
		s->piece = data;
		s->piece_len = len;
		fill_pending(s);
		deliver(s);
		s->piece = NULL;
		s->piece_len = 0;
	}
	keep(s, data, len);
	s->pos += len;
	g_assert(stream_check(s));
}

void pix_stream_finish(PixStream *s)
{
	if (s->is_finished)
		return;
	s->is_finished = TRUE;
	if (!s->is_failed)
		fill_pending(s);
	deliver(s);
	g_assert(stream_check(s));
}

guint64 pix_stream_pos(const PixStream *s)
{
	return reached(s);
}

gboolean pix_stream_is_finished(const PixStream *s)
{
	return s->is_finished;
}

static void add_problem(PixStream *s, const char *fmt, va_list ap)
{
	if (s->problems->len < MAX_PROBLEMS)
		g_ptr_array_add(s->problems, g_strdup_vprintf(fmt, ap));
}

void pix_stream_problem(PixStream *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_problem(s, fmt, ap);
	va_end(ap);
}

void pix_stream_fail(PixStream *s, const char *fmt, ...)
{
	va_list ap;
	if (s->is_failed)
		return;
	va_start(ap, fmt);
	add_problem(s, fmt, ap);
	va_end(ap);
	s->is_failed = TRUE;
	drop_all(s->pending);
	drop_all(s->ready);
	s->held_bytes = 0;
	g_assert(stream_check(s));
}

gboolean pix_stream_has_failed(const PixStream *s)
{
	return s->is_failed;
}

char *pix_stream_problems(const PixStream *s)
{
	if (s->problems->len == 0)
		return NULL;
	GString *out = g_string_new(NULL);
	for (guint i = 0; i < s->problems->len; i++) {
		if (i > 0)
			g_string_append(out, "; ");
		g_string_append(out, g_ptr_array_index(s->problems, i));
	}
	return g_string_free(out, FALSE);
}
