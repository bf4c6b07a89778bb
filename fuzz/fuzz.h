/*
 * fuzz.h: what the libFuzzer targets (fuzz/fuzz-*.c) share: feeding an
 * input in pieces, running a PixContainer over a PixStream, and checking
 * the PixMeta a parser returns.
 *
 * The photoidx pipeline hands a parser the file's bytes in pieces whose
 * sizes depend on the read buffers, so the stream code's piece boundaries
 * are part of the attack surface.  A target cuts its input at boundaries
 * drawn from a small PRNG seeded by a hash of the input itself: the same
 * input is always cut the same way, so a crash file reproduces.
 *
 * Each target is a function here (fuzz_jpeg() ...), so the regression
 * test (tests/unit/test-fuzz-regressions.c) runs a saved input exactly as
 * the fuzzer did; fuzz/fuzz-TARGET.c only names it (FUZZ_TARGET()).
 * Thread-safety: none needed (libFuzzer runs a target on one thread).
 */
#ifndef PIX_FUZZ_H
#define PIX_FUZZ_H

#include "exif.h"
#include "item.h"
#include "meta-int.h"
#include "tiff.h"
#include "thumb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry points */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a over the input: the seed of the cutting PRNG. */
static inline guint64 fuzz_hash(const guint8 *data, gsize size)
{
	guint64 h = 0xcbf29ce484222325ull;
	for (gsize i = 0; i < size; i++) {
		h ^= data[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* xorshift64*: a state of 0 is nudged, since it would stay 0. */
static inline guint64 fuzz_next(guint64 *state)
{
	guint64 x = *state != 0 ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/*
 * The size of the next piece, at most `left` (> 0): mostly small (1..16
 * bytes, so headers straddle boundaries), sometimes up to a read buffer's
 * worth, sometimes all that is left.
 */
static inline gsize fuzz_piece(guint64 *state, gsize left)
{
	guint64 r = fuzz_next(state);
	gsize n;
	switch (r & 3) {
	case 0: n = 1 + (gsize)(r >> 8) % 16; break;
	case 1: n = 1 + (gsize)(r >> 8) % 512; break;
	case 2: n = 1 + (gsize)(r >> 8) % 65536; break;
	default: n = left; break;
	}
	return MIN(n, left);
}

typedef void (*FuzzFeedFn)(void *ctx, const guint8 *data, gsize len);

/*
 * Feeds `data` to `fn` in pieces cut by the PRNG seeded with `seed`.  Each
 * piece is copied to a buffer of its own size, so ASan catches a parser
 * that reads past the piece it was given (and not just past the input).
 */
static inline void fuzz_feed(guint64 seed, const guint8 *data, gsize size, FuzzFeedFn fn, void *ctx)
{
	guint64 state = seed;
	gsize at = 0;
	while (at < size) {
		gsize n = fuzz_piece(&state, size - at);
		guint8 *piece = g_memdup2(data + at, n);
		fn(ctx, piece, n);
		g_free(piece);
		at += n;
	}
}

/* Aborts (a crash for libFuzzer) when `m` breaks item.h's contract: every
 * string valid UTF-8, the date and its offset in their documented forms. */
static inline void fuzz_check_meta(const PixMeta *m)
{
	const char *strings[] = { m->date_taken, m->date_tz, m->date_source, m->make, m->model, m->lens };
	for (guint i = 0; i < G_N_ELEMENTS(strings); i++)
		g_assert_true(strings[i] == NULL || g_utf8_validate(strings[i], -1, NULL));
	/* "YYYY-MM-DDTHH:MM:SS[.fff]" and "+HH:MM" */
	if (m->date_taken != NULL) {
		g_assert_cmpuint(strlen(m->date_taken), >=, 19);
		g_assert_true(m->date_taken[4] == '-' && m->date_taken[7] == '-' && m->date_taken[10] == 'T' &&
		              m->date_taken[13] == ':' && m->date_taken[16] == ':');
	}
	if (m->date_tz != NULL)
		g_assert_true(strlen(m->date_tz) == 6 && (m->date_tz[0] == '+' || m->date_tz[0] == '-') &&
		              m->date_tz[3] == ':');
	g_assert_true(m->orientation == -1 || (m->orientation >= 1 && m->orientation <= 8));
}

/* A finished PixTags keeps its contract (tags.h). */
static inline void fuzz_check_tags(PixMeta *m)
{
	char *note = pix_meta_finish_tags(m);
	g_assert_true(note == NULL || g_utf8_validate(note, -1, NULL));
	g_assert_true(m->tags == NULL || pix_tags_check(m->tags));
	g_free(note);
}

static void fuzz_stream_feed(void *ctx, const guint8 *data, gsize len)
{
	pix_stream_feed(ctx, data, len);
}

/* Runs container `c` over `data` fed through a PixStream in pieces, as
 * meta.c does after recognising the format, and checks what it read. */
static inline void fuzz_container(const PixContainer *c, const guint8 *data, gsize size)
{
	PixStream *s = pix_stream_new(c->keep_head, c->keep_tail);
	void *state = c->start(s);
	fuzz_feed(fuzz_hash(data, size), data, size, fuzz_stream_feed, s);
	pix_stream_finish(s);
	PixMeta *m = pix_meta_new();
	c->finish(state, s, m);
	fuzz_check_meta(m);
	char *problems = pix_stream_problems(s);
	g_assert_true(problems == NULL || g_utf8_validate(problems, -1, NULL));
	g_free(problems);
	pix_meta_free(m);
	c->free(state);
	pix_stream_free(s);
}

/* GLib criticals (a g_return_if_fail() tripped) and warnings are bugs in
 * a parser: make them crashes. */
static inline void fuzz_init(void)
{
	g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

/* --- the targets: one function per parser, each checking what it can --- */

static void fuzz_jpeg_feed(void *ctx, const guint8 *data, gsize len)
{
	pix_jpeg_parser_feed(ctx, data, len);
}

/*
 * meta-jpeg.c's stream parser, at the entropy-scan width the input's hash
 * picks (scalar, SSE2, AVX2 or AVX-512 where the CPU has it).  Checks what
 * meta.c relies on: an EXIF payload starts with "Exif\0\0".
 */
static inline void fuzz_jpeg(const guint8 *data, gsize size)
{
	static const guint widths[] = { 0, 128, 256, 512 };
	guint64 seed = fuzz_hash(data, size);
	PixJpegInfo info;

	pix_jpeg_set_scan_bits(widths[seed >> 62]);
	PixJpegParser *p = pix_jpeg_parser_new();
	fuzz_feed(seed, data, size, fuzz_jpeg_feed, p);
	pix_jpeg_parser_finish(p, &info);
	if (info.exif != NULL) {
		gsize len;
		const guint8 *exif = g_bytes_get_data(info.exif, &len);
		g_assert_true(len >= 6 && memcmp(exif, "Exif\0\0", 6) == 0);
	}
	g_assert_true(info.error == NULL || g_utf8_validate(info.error, -1, NULL));
	g_assert_true(info.width_px >= -1 && info.height_px >= -1);
	pix_jpeg_info_clear(&info);
	pix_jpeg_parser_free(p);
}

static void fuzz_tiff_check(const guint8 *data, gsize len, guint64 total_len)
{
	/* a copy of exactly `len` bytes, so reading past them is caught */
	guint8 *copy = g_memdup2(data, len);
	char *damage = pix_tiff_check(copy, len, total_len);
	g_assert_true(damage == NULL || g_utf8_validate(damage, -1, NULL));
	g_free(damage);
	g_free(copy);
}

/*
 * A TIFF block: pix_tiff_check() judges it whole and as the first part of
 * a longer file; pix_tiff_read_mem() reads it as IFD0 of each role (main,
 * Exif, GPS); pix_exif_read() gets it in APP1 form; and
 * pix_container_tiff reads it as a file.
 */
static inline void fuzz_tiff(const guint8 *data, gsize size)
{
	guint64 seed = fuzz_hash(data, size);

	fuzz_tiff_check(data, size, size);
	/* the head of a file that goes on: what lies beyond cannot be checked */
	fuzz_tiff_check(data, size / 2, (guint64)size + (seed & 0xffff));

	static const PixTiffRole roles[] = { PIX_TIFF_ROLE_MAIN, PIX_TIFF_ROLE_EXIF, PIX_TIFF_ROLE_GPS };
	for (guint i = 0; i < G_N_ELEMENTS(roles); i++) {
		PixMeta *m = pix_meta_new();
		guint8 *copy = g_memdup2(data, size);
		pix_tiff_read_mem(copy, size, roles[i], m);
		fuzz_check_meta(m);
		g_free(copy);
		pix_meta_free(m);
	}

	guint8 *block = g_malloc(size + 6);
	memcpy(block, "Exif\0\0", 6);
	memcpy(block + 6, data, size);
	PixMeta *m = pix_meta_new();
	char *problem = NULL;
	if (!pix_exif_read(block, size + 6, m, &problem))
		g_assert_true(problem != NULL && g_utf8_validate(problem, -1, NULL));
	fuzz_check_meta(m);
	g_free(problem);
	pix_meta_free(m);
	g_free(block);

	fuzz_container(&pix_container_tiff, data, size);
}

/* An XMP packet as found inside an image (pix_meta_read_xmp()), and a
 * sidecar file through pix_container_xmp. */
static inline void fuzz_xmp(const guint8 *data, gsize size)
{
	/* a copy of exactly `size` bytes: a packet is not NUL-terminated */
	guint8 *packet = g_memdup2(data, size);
	PixMeta *m = pix_meta_new();
	pix_meta_read_xmp(packet, size, m);
	fuzz_check_meta(m);
	fuzz_check_tags(m);
	pix_meta_free(m);
	g_free(packet);

	fuzz_container(&pix_container_xmp, data, size);
}

/*
 * IPTC-IIM (meta-iptc.c): the input as the datasets themselves (a TIFF's
 * IPTC tag) and as Photoshop resources (a JPEG's APP13, a TIFF's
 * Photoshop tag).  Checks the tags' contract and that problems are text.
 */
static inline void fuzz_iptc(const guint8 *data, gsize size)
{
	for (guint as_irb = 0; as_irb < 2; as_irb++) {
		guint8 *copy = g_memdup2(data, size);
		PixMeta *m = pix_meta_new();
		PixStream *s = pix_stream_new(0, 0);
		if (as_irb)
			pix_meta_read_irb(s, copy, size, m);
		else
			pix_meta_read_iptc(s, copy, size, m);
		fuzz_check_tags(m);
		fuzz_check_meta(m);
		char *problems = pix_stream_problems(s);
		g_assert_true(problems == NULL || g_utf8_validate(problems, -1, NULL));
		g_free(problems);
		pix_stream_free(s);
		pix_meta_free(m);
		g_free(copy);
	}
}

/*
 * ExtendedXMP's assembly (meta-xmpext.c): the input is a sequence of
 * APP1 payloads after the extension header (GUID, full length, offset,
 * bytes), each preceded by its length (16-bit big-endian); the GUID of
 * the first one is asked for.  What comes out is whole (its length the
 * declared one) and goes through the XMP reader.
 */
static inline void fuzz_xmpext(const guint8 *data, gsize size)
{
	PixXmpExt *x = pix_xmp_ext_new();
	char guid[33] = "";
	for (gsize at = 0; at + 2 <= size;) {
		gsize n = MIN((gsize)(data[at] << 8 | data[at + 1]), size - at - 2);
		guint8 *part = g_memdup2(data + at + 2, n);
		if (guid[0] == '\0' && n >= 32) {
			memcpy(guid, part, 32);
			guid[32] = '\0';
		}
		pix_xmp_ext_add(x, part, n);
		g_free(part);
		at += 2 + n;
	}
	char *problem = NULL;
	GBytes *whole = guid[0] != '\0' && strlen(guid) == 32 ? pix_xmp_ext_take(x, guid, &problem) : NULL;
	g_assert_true(whole == NULL || problem == NULL);
	g_assert_true(problem == NULL || g_utf8_validate(problem, -1, NULL));
	if (whole != NULL) {
		gsize len;
		const guint8 *p = g_bytes_get_data(whole, &len);
		PixMeta *m = pix_meta_new();
		pix_meta_read_xmp(p, len, m);
		fuzz_check_tags(m);
		fuzz_check_meta(m);
		pix_meta_free(m);
		g_bytes_unref(whole);
	}
	g_free(problem);
	pix_xmp_ext_free(x);
}

static void fuzz_meta_feed(void *ctx, const guint8 *data, gsize len)
{
	pix_meta_parser_feed(ctx, data, len);
}

/*
 * The whole PixMetaParser (meta.c): the format decided from the content,
 * then its parser, fed in pieces of `piece` bytes (0: the PRNG's cuts).
 * Checks the item's contract: a static mime type, metadata strings valid
 * UTF-8, an error that is valid UTF-8.
 */
static inline void fuzz_meta_pieces(const guint8 *data, gsize size, gsize piece)
{
	PixDir *dir = pix_dir_new("/fuzz");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "input");
	PixMetaParser *mp = pix_meta_parser_new();
	if (piece == 0)
		fuzz_feed(fuzz_hash(data, size), data, size, fuzz_meta_feed, mp);
	else
		for (gsize at = 0; at < size; at += piece)
			pix_meta_parser_feed(mp, data + at, MIN(piece, size - at));
	pix_meta_parser_finish(mp, item);
	g_assert_nonnull(item->mime);
	if (item->meta != NULL)
		fuzz_check_meta(item->meta);
	g_assert_true(item->meta == NULL || item->meta->tags == NULL || pix_tags_check(item->meta->tags));
	g_assert_true(item->error == NULL || g_utf8_validate(item->error, -1, NULL));
	pix_meta_parser_free(mp);
	pix_item_free(item);
	pix_dir_unref(dir);
}

static inline void fuzz_meta(const guint8 *data, gsize size)
{
	fuzz_meta_pieces(data, size, 0);
}

static inline void fuzz_bmff(const guint8 *data, gsize size) { fuzz_container(&pix_container_bmff, data, size); }
static inline void fuzz_png(const guint8 *data, gsize size) { fuzz_container(&pix_container_png, data, size); }
static inline void fuzz_riff(const guint8 *data, gsize size) { fuzz_container(&pix_container_riff, data, size); }
static inline void fuzz_raf(const guint8 *data, gsize size) { fuzz_container(&pix_container_raf, data, size); }
static inline void fuzz_mrw(const guint8 *data, gsize size) { fuzz_container(&pix_container_mrw, data, size); }
static inline void fuzz_crw(const guint8 *data, gsize size) { fuzz_container(&pix_container_crw, data, size); }
static inline void fuzz_x3f(const guint8 *data, gsize size) { fuzz_container(&pix_container_x3f, data, size); }

/*
 * The thumbnail maker's glue (thumb.c and its decoders), run as the
 * hasher runs it: each piece to the metadata parser first (which finds
 * the previews), then to the maker; the image's size and orientation from
 * the metadata at the end.  The input gets the format's magic number in
 * front when it lacks it, so that a target's mutations stay in its
 * format.  Checks the contract of thumb.h: a note (valid UTF-8) and no
 * rendition, or both renditions as JPEGs within their edges, with a
 * source.
 */
typedef struct {
	PixMetaParser *mp;
	PixThumbMaker *m;
} FuzzThumb;

static void fuzz_thumb_feed(void *ctx, const guint8 *data, gsize len)
{
	FuzzThumb *t = ctx;
	pix_meta_parser_feed(t->mp, data, len);
	pix_thumb_maker_feed(t->m, data, len);
}

static inline void fuzz_thumb_with(const char *magic, gsize magic_len, const guint8 *data, gsize size)
{
	g_autofree guint8 *joined = NULL;
	if (size < magic_len || memcmp(data, magic, magic_len) != 0) {
		joined = g_malloc(magic_len + size);
		memcpy(joined, magic, magic_len);
		if (size > 0)
			memcpy(joined + magic_len, data, size);
		data = joined;
		size += magic_len;
	}
	PixDir *dir = pix_dir_new("/fuzz");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "input");
	FuzzThumb t = { pix_meta_parser_new(), pix_thumb_maker_new() };
	pix_thumb_maker_start(t.m, t.mp, (gint64)size);
	fuzz_feed(fuzz_hash(data, size), data, size, fuzz_thumb_feed, &t);
	pix_meta_parser_finish(t.mp, item);
	if (item->meta != NULL)
		pix_thumb_maker_set_image(t.m, item->meta->width_px, item->meta->height_px, item->meta->orientation);
	PixThumb *th = pix_thumb_maker_finish(t.m);
	if (th != NULL && th->note != NULL) {
		g_assert_true(g_utf8_validate(th->note, -1, NULL));
		g_assert_null(th->jpeg[PIX_THUMB_LARGE]);
		g_assert_null(th->jpeg[PIX_THUMB_XLARGE]);
	} else if (th != NULL) {
		g_assert_nonnull(th->source);
		for (guint i = 0; i < PIX_THUMB_N_SIZES; i++) {
			gsize n = 0;
			const guint8 *j = g_bytes_get_data(th->jpeg[i], &n);
			g_assert_true(n > 3 && j[0] == 0xFF && j[1] == 0xD8);
			g_assert_cmpuint(MAX(th->width_px[i], th->height_px[i]), <=, pix_thumb_edge(i));
			g_assert_cmpuint(MIN(th->width_px[i], th->height_px[i]), >=, 1);
		}
	}
	pix_thumb_free(th);
	pix_thumb_maker_free(t.m);
	pix_meta_parser_free(t.mp);
	pix_item_free(item);
	pix_dir_unref(dir);
}

#define FUZZ_MAGIC(s) s, sizeof(s) - 1
static inline void fuzz_thumbjpeg(const guint8 *d, gsize n) { fuzz_thumb_with(FUZZ_MAGIC("\xff\xd8\xff"), d, n); }
static inline void fuzz_thumbpng(const guint8 *d, gsize n) { fuzz_thumb_with(FUZZ_MAGIC("\x89PNG\r\n\x1a\n"), d, n); }
static inline void fuzz_thumbwebp(const guint8 *d, gsize n) { fuzz_thumb_with(FUZZ_MAGIC("RIFF"), d, n); }
static inline void fuzz_thumbheif(const guint8 *d, gsize n) { fuzz_thumb_with(FUZZ_MAGIC("\0\0\0\x18" "ftypheic"), d, n); }
static inline void fuzz_thumbraw(const guint8 *d, gsize n) { fuzz_thumb_with(FUZZ_MAGIC("II\x2a\0"), d, n); }

/* The targets by name, for tests/unit/test-fuzz-regressions.c. */
typedef struct {
	const char *name;
	void (*run)(const guint8 *data, gsize size);
} FuzzTarget;

static const FuzzTarget fuzz_targets[] G_GNUC_UNUSED = {
	{ "jpeg", fuzz_jpeg }, { "tiff", fuzz_tiff }, { "meta", fuzz_meta }, { "bmff", fuzz_bmff },
	{ "png", fuzz_png }, { "riff", fuzz_riff }, { "raf", fuzz_raf }, { "mrw", fuzz_mrw },
	{ "crw", fuzz_crw }, { "x3f", fuzz_x3f }, { "xmp", fuzz_xmp }, { "iptc", fuzz_iptc },
	{ "xmpext", fuzz_xmpext },
	{ "thumbjpeg", fuzz_thumbjpeg }, { "thumbpng", fuzz_thumbpng }, { "thumbwebp", fuzz_thumbwebp },
	{ "thumbheif", fuzz_thumbheif }, { "thumbraw", fuzz_thumbraw },
};

/* A target's libFuzzer entry points. */
#define FUZZ_TARGET(fn) \
	int LLVMFuzzerInitialize(int *argc, char ***argv) \
	{ \
		(void)argc; \
		(void)argv; \
		fuzz_init(); \
		return 0; \
	} \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) \
	{ \
		fn(data, size); \
		return 0; \
	}

#endif
