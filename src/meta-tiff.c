/*
 * meta-tiff.c: TIFF files and the RAW formats built on TIFF (CR2, NEF,
 * NRW, DNG, ARW, SR2, PEF, ORF, RW2, IIQ, 3FR, ERF) as a PixContainer
 * (see meta.h).
 *
 * Reads the file through its PixStream; writes PixMeta.  Runs on a hash
 * thread.
 *
 * A TIFF's directories and values may lie anywhere: cameras put them near
 * the start, image editors (libtiff) often at the end after the image
 * data, multi-page files in between.  Our reader (pix_tiff_read()) is a
 * function of random access, and the file is read once, front to back;
 * so while the file goes by, the reader is run again and again ("rounds")
 * over what is at hand, and each byte range it asked for and lacked is
 * asked of the stream (pix_stream_want()).  Each range that arrives runs
 * the next round, which goes one level deeper (the header gives IFD0,
 * IFD0 its values and the Exif IFD, that its values ...).
 * Ranges that lie behind the read position when they become known come
 * from the stream's kept head and tail (KEEP_BYTES each), or are lost.
 * After the file ended the reader runs once more, for real.
 *
 * The structure check judges the head against the file's real length
 * (EXIF blocks in other containers are judged as whole blocks, exif.c).
 *
 * Invariants:
 *  1. The structure check judges the file against its real length, so
 *     directories beyond what is kept pass unchecked rather than being
 *     called corrupt.
 *  2. Pieces holds disjoint ranges sorted by offset (adjacent or
 *     overlapping ones are merged), at most MAX_CACHE_BYTES in all.
 *  3. A range is asked of the stream at most once: asked records every
 *     range asked for; a round asks only ranges not within one of them.
 *  4. Rounds are finite: one runs at the start and after each range
 *     arrives (at most MAX_ASKED do), and at most MAX_ROUNDS run.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"
#include "tiff.h"

#include <string.h>

#define KEEP_BYTES (256 * 1024)
#define MAX_ROUNDS 1024        /* reader runs while the file goes by */
#define MAX_CACHE_BYTES (4u << 20)
#define MAX_ASKED 4096          /* ranges asked for over the file's life */
#define MAX_ASK_AT_ONCE 256     /* ranges asked for by one round */

typedef struct {
	guint64 off;
	gsize len;
	guint8 *data;           /* (owned) */
} Piece;

typedef struct {
	guint64 off;
	gsize len;
} Range;

typedef struct {
	PixStream *s;
	GArray *pieces;         /* Piece, see invariant 2 */
	gsize cache_bytes;
	GArray *asked;          /* Range, every range asked for */
	GArray *misses;         /* Range, what the running round lacked */
	gboolean is_round;      /* a round is running: record misses */
	gboolean is_in_rounds;  /* run_rounds() is on the stack */
	gboolean has_news;      /* a range arrived while it was */
	guint n_rounds;
	PixTiffKind kind;       /* what the last run found */
	PixPreview previews[PIX_META_MAX_PREVIEWS];  /* what the last round found */
	guint n_previews;
	char *make;             /* the file's Make, for its RAW type (owned) */
} TiffState;

/* The piece holding [off, off + len), or NULL. */
static const Piece *find_piece(const TiffState *t, guint64 off, gsize len)
{
	guint lo = 0, hi = t->pieces->len;
	/* the last piece starting at or before off */
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (g_array_index(t->pieces, Piece, mid).off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const Piece *p = &g_array_index(t->pieces, Piece, lo - 1);
	return off - p->off <= p->len && len <= p->len - (off - p->off) ? p : NULL;
}

/* Invariant 2: pieces sorted, disjoint, apart, within the budget. */
static gboolean tiff_state_check(const TiffState *t)
{
	gsize total = 0;
	for (guint i = 0; i < t->pieces->len; i++) {
		const Piece *p = &g_array_index(t->pieces, Piece, i);
		if (p->len == 0 || p->data == NULL)
			return FALSE;
		if (i > 0) {
			const Piece *prev = &g_array_index(t->pieces, Piece, i - 1);
			if (prev->off + prev->len >= p->off)
				return FALSE;
		}
		total += p->len;
	}
	return total == t->cache_bytes && total <= MAX_CACHE_BYTES;
}

/* Adds a range's bytes to the pieces, merging it with those it touches. */
static void add_piece(TiffState *t, guint64 off, const guint8 *data, gsize len)
{
	if (len == 0 || t->cache_bytes + len > MAX_CACHE_BYTES || off > G_MAXUINT64 - len)
		return;
	guint64 start = off, end = off + len;
	guint first = 0;
	while (first < t->pieces->len && g_array_index(t->pieces, Piece, first).off +
	                                     g_array_index(t->pieces, Piece, first).len < start)
		first++;
	guint last = first;
	while (last < t->pieces->len && g_array_index(t->pieces, Piece, last).off <= end)
		last++;
	/* pieces [first, last) touch the new range: one piece covers them all */
	if (last > first) {
		start = MIN(start, g_array_index(t->pieces, Piece, first).off);
		const Piece *l = &g_array_index(t->pieces, Piece, last - 1);
		end = MAX(end, l->off + l->len);
	}
	Piece merged = { start, (gsize)(end - start), g_malloc((gsize)(end - start)) };
	for (guint i = first; i < last; i++) {
		Piece *p = &g_array_index(t->pieces, Piece, i);
		memcpy(merged.data + (p->off - start), p->data, p->len);
		t->cache_bytes -= p->len;
		g_free(p->data);
	}
	memcpy(merged.data + (off - start), data, len);
	t->cache_bytes += merged.len;
	if (last > first)
		g_array_remove_range(t->pieces, first, last - first);
	g_array_insert_val(t->pieces, first, merged);
	g_assert(tiff_state_check(t));
}

static gboolean was_asked(const TiffState *t, guint64 off, gsize len)
{
	for (guint i = 0; i < t->asked->len; i++) {
		const Range *a = &g_array_index(t->asked, Range, i);
		if (off >= a->off && off - a->off <= a->len && len <= a->len - (off - a->off))
			return TRUE;
	}
	return FALSE;
}

/*
 * The reader's getter: the kept head, the pieces fetched, and after the
 * file ended the kept tail.  While the file goes by the tail is not
 * used (what it holds now is gone at the end): a range there is asked
 * for, so it is copied into the pieces.
 */
static const guint8 *get_bytes(void *src, guint64 off, gsize len)
{
	TiffState *t = src;
	const guint8 *p = NULL;

	if (off <= KEEP_BYTES && len <= KEEP_BYTES - off)
		p = pix_stream_peek(t->s, off, len);
	else if (pix_stream_is_finished(t->s))
		p = pix_stream_peek(t->s, off, len);
	if (p != NULL)
		return p;
	const Piece *piece = find_piece(t, off, len);
	if (piece != NULL)
		return piece->data + (off - piece->off);
	if (t->is_round && len > 0 && t->misses->len < MAX_ASK_AT_ONCE) {
		Range miss = { off, len };
		g_array_append_val(t->misses, miss);
	}
	return NULL;
}

static void run_rounds(TiffState *t);

static void on_range(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	TiffState *t = ctx;
	(void)s;
	(void)arg;
	/* even what the head will keep: the head takes in the bytes being
	 * fed only after the callbacks */
	add_piece(t, off, data, len);
	run_rounds(t);
}

/* Runs the reader over what is at hand and asks for what it lacked; again
 * while ranges arrive at once (kept ones, asked for outside a callback).
 * A range that arrives later runs the next round from its callback, so
 * one range far ahead (or past the end) holds up nothing else. */
static void run_rounds(TiffState *t)
{
	if (t->is_in_rounds) {
		t->has_news = TRUE;
		return;
	}
	t->is_in_rounds = TRUE;
	do {
		t->has_news = FALSE;
		if (t->n_rounds >= MAX_ROUNDS || pix_stream_has_failed(t->s))
			break;
		g_autoptr(PixMeta) scratch = pix_meta_new();
		t->n_rounds++;
		g_array_set_size(t->misses, 0);
		t->is_round = TRUE;
		/* the file's size is not known yet: the reader's bounds are
		 * the largest a TIFF can have; the last run knows better */
		pix_tiff_read(get_bytes, t, G_MAXUINT32 * (guint64)65536, PIX_TIFF_ROLE_MAIN, scratch, NULL);
		/* the previews' pointers, for the thumbnail maker, which needs
		 * them before the previews go by: what they lack is asked too */
		PixPreview found[PIX_META_MAX_PREVIEWS];
		guint n = pix_tiff_previews(get_bytes, t, G_MAXUINT32 * (guint64)65536, found, PIX_META_MAX_PREVIEWS);
		if (n >= t->n_previews) {
			/* more of the file at hand finds more, never less */
			memcpy(t->previews, found, n * sizeof *found);
			t->n_previews = n;
		}
		t->is_round = FALSE;
		for (guint i = 0; i < t->misses->len && t->asked->len < MAX_ASKED; i++) {
			Range *m = &g_array_index(t->misses, Range, i);
			if (was_asked(t, m->off, m->len))
				continue;
			g_array_append_val(t->asked, *m);
			if (!pix_stream_want(t->s, m->off, m->len, on_range, t, 0))
				break;
		}
	} while (t->has_news);
	t->is_in_rounds = FALSE;
}

static const PixPreview *tiff_previews(void *state, guint *n)
{
	TiffState *t = state;
	*n = t->n_previews;
	return t->previews;
}

static void tiff_free(void *state)
{
	TiffState *t = state;
	if (t == NULL)
		return;
	for (guint i = 0; i < t->pieces->len; i++)
		g_free(g_array_index(t->pieces, Piece, i).data);
	g_array_free(t->pieces, TRUE);
	g_array_free(t->asked, TRUE);
	g_array_free(t->misses, TRUE);
	g_free(t->make);
	pix_tiff_kind_clear(&t->kind);
	g_free(t);
}

static void *tiff_start(PixStream *s)
{
	TiffState *t = g_new0(TiffState, 1);
	t->s = s;
	t->pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
	t->asked = g_array_new(FALSE, FALSE, sizeof(Range));
	t->misses = g_array_new(FALSE, FALSE, sizeof(Range));
	/* the first round needs the header: it asks for it */
	run_rounds(t);
	return t;
}

static void tiff_finish(void *state, PixStream *s, PixMeta *m)
{
	TiffState *t = state;
	guint64 size = pix_stream_pos(s);
	gsize len = (gsize)MIN(size, KEEP_BYTES);
	const guint8 *head = pix_stream_peek(s, 0, len);

	if (head == NULL)
		return;
	g_autofree char *damage = pix_tiff_check(head, len, size);
	if (damage != NULL)
		pix_stream_problem(s, "corrupt TIFF structure: %s", damage);
	pix_tiff_read(get_bytes, t, size, PIX_TIFF_ROLE_MAIN, m, &t->kind);
	t->make = g_strdup(m->make);
	/* the photographer's metadata, after EXIF: XMP, then IPTC-IIM (the
	 * IPTC tag, else Photoshop's resources) for what it does not say */
	if (t->kind.xmp != NULL) {
		const guint8 *xmp = g_bytes_get_data(t->kind.xmp, &len);
		pix_meta_read_xmp_in(s, xmp, len, m, NULL);
	}
	if (t->kind.iptc != NULL) {
		const guint8 *iim = g_bytes_get_data(t->kind.iptc, &len);
		pix_meta_read_iptc(s, iim, len, m);
	} else if (t->kind.irb != NULL) {
		const guint8 *irb = g_bytes_get_data(t->kind.irb, &len);
		pix_meta_read_irb(s, irb, len, m);
	}
	if (t->kind.data.end > size)
		pix_stream_problem(s, "truncated TIFF: its image data (a %s at offset %" G_GUINT64_FORMAT ") ends at byte %"
		                   G_GUINT64_FORMAT ", past the end of the file (%" G_GUINT64_FORMAT " bytes)",
		                   t->kind.data.what, t->kind.data.off, t->kind.data.end, size);
}

/*
 * A TIFF that holds sensor data is a RAW file: DNG by its DNGVersion, the
 * others (which share TIFF's magic number) by their maker, with the media
 * types exiftool and shared-mime-info give them.  A TIFF picture from the
 * same maker (a scan, an export) has no sensor data and stays image/tiff.
 */
static const char *tiff_mime(void *state, PixMediaKind *media)
{
	static const struct {
		const char *make;
		const char *mime;
	} makers[] = {
		{ "NIKON", "image/x-nikon-nef" }, { "SONY", "image/x-sony-arw" },
		{ "PENTAX", "image/x-pentax-pef" }, { "RICOH IMAGING", "image/x-pentax-pef" },
		{ "SAMSUNG", "image/x-samsung-srw" }, { "Hasselblad", "image/x-hasselblad-3fr" },
		{ "SEIKO EPSON", "image/x-epson-erf" }, { "KODAK", "image/x-kodak-dcr" },
		{ "Canon", "image/x-canon-cr2" }, { "OLYMPUS", "image/x-olympus-orf" },
		{ "Panasonic", "image/x-panasonic-rw2" },
	};
	const TiffState *t = state;
	if (!t->kind.has_raw_data)
		return NULL;
	*media = PIX_MEDIA_RAW;
	if (t->kind.is_dng)
		return "image/x-adobe-dng";
	for (guint i = 0; t->make != NULL && i < G_N_ELEMENTS(makers); i++)
		if (g_ascii_strncasecmp(t->make, makers[i].make, strlen(makers[i].make)) == 0)
			return makers[i].mime;
	return "image/x-raw";   /* Phase One, Leaf, Mamiya and the rest, as exiftool has it */
}

const PixContainer pix_container_tiff = {
	.name = "TIFF",
	.keep_head = KEEP_BYTES,
	.keep_tail = KEEP_BYTES,
	.start = tiff_start,
	.finish = tiff_finish,
	.mime = tiff_mime,
	.previews = tiff_previews,
	.free = tiff_free,
};
