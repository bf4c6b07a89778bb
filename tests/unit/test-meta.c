/*
 * test-meta.c: unit tests of src/meta.h: the streaming JPEG structure
 * parser (PixJpegParser) and the format-sniffing PixMetaParser.
 *
 * The JPEG inputs come from the fixture generator (tests/tools/mkfixture,
 * through pix_test_mkfixture(); the tests skip without it) or are built by
 * hand where a structure is needed that the generator does not write.
 *
 * The central property of a stream parser is that its result does not
 * depend on how the input is cut into feed() calls: every JPEG here is
 * parsed whole, byte by byte and at random cut points, and the results
 * (width, height, EXIF payload bytes, error text) must be identical.
 * Truncated files must end with an error, never a crash; hostile inputs
 * (random bytes, endless 0xFF, bad lengths, mutated fixtures) must never
 * make the parser read out of bounds, which the SANITIZE=1 build checks.
 *
 * For PixMetaParser: the media type from magic bytes for each format it
 * knows, whatever the feed pieces, and the metadata that reaches
 * item->meta at pix_meta_parser_finish() for fixture JPEGs and TIFFs.
 * With the shared samples present, all of them go through both parsers.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "item.h"
#include "meta-int.h"
#include "testlib.h"

#include <math.h>

/* --- fixtures --- */


/*
 * The payload of the first APP1 "Exif\0\0" segment of a well-formed JPEG,
 * found by walking its markers here, independently of the parser under
 * test (transfer full); `end` gets the offset just past that segment.
 */
static GBytes *exif_segment(GBytes *jpeg, gsize *end)
{
	gsize len;
	const guint8 *d = g_bytes_get_data(jpeg, &len);
	gsize i = 2;

	g_assert_true(len >= 4 && d[0] == 0xff && d[1] == 0xd8);
	while (i + 4 <= len) {
		g_assert_cmpuint(d[i], ==, 0xff);
		guint8 m = d[i + 1];
		gsize seg = (gsize)d[i + 2] << 8 | d[i + 3];
		if (m == 0xda || m == 0xd9)
			break;
		if (m == 0xe1 && seg >= 8 && memcmp(d + i + 4, "Exif\0\0", 6) == 0) {
			if (end != NULL)
				*end = i + 2 + seg;
			return g_bytes_new(d + i + 4, seg - 2);
		}
		i += 2 + seg;
	}
	return NULL;
}

/* --- running the JPEG parser --- */

/* Parses `data` fed in pieces that end at the ascending offsets `cuts`
 * (then the rest). */
static void parse_cuts(const guint8 *data, gsize len, const gsize *cuts, guint n_cuts, PixJpegInfo *info)
{
	PixJpegParser *p = pix_jpeg_parser_new();
	gsize at = 0;

	for (guint i = 0; i < n_cuts; i++) {
		g_assert_cmpuint(cuts[i], >=, at);
		g_assert_cmpuint(cuts[i], <=, len);
		/* a copy of exactly the piece, so ASan sees any read past it */
		g_autofree guint8 *piece = g_memdup2(data + at, cuts[i] - at);
		pix_jpeg_parser_feed(p, piece, cuts[i] - at);
		at = cuts[i];
	}
	g_autofree guint8 *rest = g_memdup2(data + at, len - at);
	pix_jpeg_parser_feed(p, rest, len - at);
	pix_jpeg_parser_finish(p, info);
	pix_jpeg_parser_free(p);
}

static void parse_whole(const guint8 *data, gsize len, PixJpegInfo *info)
{
	parse_cuts(data, len, NULL, 0, info);
}

static void parse_chunks(const guint8 *data, gsize len, gsize chunk, PixJpegInfo *info)
{
	g_autofree gsize *cuts = g_new(gsize, len / chunk + 1);
	guint n = 0;
	for (gsize at = chunk; at < len; at += chunk)
		cuts[n++] = at;
	parse_cuts(data, len, cuts, n, info);
}

static void parse_random(const guint8 *data, gsize len, guint max_cuts, PixJpegInfo *info)
{
	guint n = len > 0 ? (guint)g_test_rand_int_range(0, (gint32)max_cuts + 1) : 0;
	g_autofree gsize *cuts = g_new(gsize, n + 1);
	for (guint i = 0; i < n; i++)
		cuts[i] = (gsize)g_test_rand_int_range(0, (gint32)len + 1);
	/* sorted ascending; equal cuts give empty feeds, which are legal */
	for (guint i = 1; i < n; i++) {
		for (guint j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
			gsize t = cuts[j];
			cuts[j] = cuts[j - 1];
			cuts[j - 1] = t;
		}
	}
	parse_cuts(data, len, cuts, n, info);
}

static void assert_same_info(const PixJpegInfo *a, const PixJpegInfo *b, const char *how)
{
	if (a->width_px != b->width_px || a->height_px != b->height_px ||
	    (a->exif == NULL) != (b->exif == NULL) || (a->exif != NULL && !g_bytes_equal(a->exif, b->exif)) ||
	    g_strcmp0(a->error, b->error) != 0)
		g_error("fed %s, the parser gave %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
		        " exif %s error '%s'; fed whole, %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
		        " exif %s error '%s'", how, b->width_px, b->height_px, b->exif ? "yes" : "no",
		        b->error ? b->error : "", a->width_px, a->height_px, a->exif ? "yes" : "no",
		        a->error ? a->error : "");
}

/* Parses `data` whole, byte by byte, in odd-sized chunks and at `n_random`
 * random cut sets, asserts that all agree, and returns the whole-parse
 * result in `info`. */
static void parse_every_way(const guint8 *data, gsize len, guint n_random, PixJpegInfo *info)
{
	PixJpegInfo other;

	parse_whole(data, len, info);
	parse_chunks(data, len, 1, &other);
	assert_same_info(info, &other, "byte by byte");
	pix_jpeg_info_clear(&other);
	static const gsize chunks[] = { 2, 3, 7, 64, 4095, 65536 };
	for (guint i = 0; i < G_N_ELEMENTS(chunks); i++) {
		parse_chunks(data, len, chunks[i], &other);
		assert_same_info(info, &other, "in chunks");
		pix_jpeg_info_clear(&other);
	}
	for (guint i = 0; i < n_random; i++) {
		parse_random(data, len, 40, &other);
		assert_same_info(info, &other, "at random cuts");
		pix_jpeg_info_clear(&other);
	}
}

/* --- JPEG parser tests --- */

static void test_jpeg_whole_file(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--width", "64", "--height", "48", "--make", "Canon",
	                                 "--model", "Canon EOS 5D", "--date", "2021:07:04 13:45:56");
	if (jpeg == NULL)
		return;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	PixJpegInfo info;

	parse_whole(data, len, &info);
	g_assert_null(info.error);
	g_assert_cmpint(info.width_px, ==, 64);
	g_assert_cmpint(info.height_px, ==, 48);
	g_assert_nonnull(info.exif);
	g_autoptr(GBytes) want = exif_segment(jpeg, NULL);
	g_assert_nonnull(want);
	g_assert_true(g_bytes_equal(info.exif, want));
	pix_jpeg_info_clear(&info);
	/* clear leaves a clean struct */
	g_assert_null(info.exif);
	g_assert_null(info.error);
}

/* Large noise-filled image data (0xFF bytes stuffed in the entropy data),
 * an embedded thumbnail (a whole JPEG, SOI to EOI, inside APP1), XMP and
 * extra APPn segments: all of it split at every kind of boundary. */
static void test_jpeg_any_split(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--size", "40000", "--thumbnail", "--xmp", "--app-before", "2",
	                                 "--make", "Nikon", "--gps", "48.8584,2.2945,35", "--seed", "7");
	if (jpeg == NULL)
		return;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	PixJpegInfo info;

	g_assert_cmpuint(len, >, 35000);
	parse_every_way(data, len, 200, &info);
	g_assert_null(info.error);
	g_assert_cmpint(info.width_px, >, 0);
	g_autoptr(GBytes) want = exif_segment(jpeg, NULL);
	g_assert_true(g_bytes_equal(info.exif, want));
	pix_jpeg_info_clear(&info);
}

/* Every prefix of a file is a truncated JPEG: it must end with an error,
 * and what lies wholly before the cut (the EXIF segment, the SOF) is
 * still found. */
static void check_prefixes(GBytes *jpeg, gsize step)
{
	gsize len, exif_end = 0;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	g_autoptr(GBytes) exif = exif_segment(jpeg, &exif_end);
	PixJpegInfo full;

	parse_whole(data, len, &full);
	g_assert_null(full.error);
	for (gsize n = 0; n < len; n = n + step < len ? n + step : (n == len - 1 ? len : len - 1)) {
		PixJpegInfo info;
		parse_whole(data, n, &info);
		if (info.error == NULL)
			g_error("a JPEG cut to %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes has no error", n, len);
		if (n >= exif_end) {
			g_assert_nonnull(info.exif);
			g_assert_true(g_bytes_equal(info.exif, exif));
		} else {
			g_assert_null(info.exif);
		}
		g_assert_true(info.width_px == -1 || info.width_px == full.width_px);
		pix_jpeg_info_clear(&info);
	}
	pix_jpeg_info_clear(&full);
}

static void test_jpeg_truncated(void)
{
	/* small: every length */
	g_autoptr(GBytes) small = FIXTURE("jpeg", "--make", "Canon", "--date", "2020:01:02 03:04:05");
	if (small == NULL)
		return;
	check_prefixes(small, 1);

	/* large, with image data: every 64 bytes */
	g_autoptr(GBytes) large = FIXTURE("jpeg", "--size", "30000", "--thumbnail", "--make", "Canon");
	check_prefixes(large, 64);

	/* mkfixture's own --truncate writes those same prefixes */
	gsize len;
	const guint8 *data = g_bytes_get_data(large, &len);
	static const char *const cuts[] = { "1", "2", "100", "5000", "29000" };
	for (guint i = 0; i < G_N_ELEMENTS(cuts); i++) {
		g_autoptr(GBytes) cut = FIXTURE("jpeg", "--size", "30000", "--thumbnail", "--make", "Canon",
		                                "--truncate", cuts[i]);
		gsize cut_len;
		const guint8 *cut_data = g_bytes_get_data(cut, &cut_len);
		g_assert_cmpuint(cut_len, ==, (gsize)atoi(cuts[i]));
		g_assert_cmpmem(cut_data, cut_len, data, cut_len);
		PixJpegInfo info;
		parse_every_way(cut_data, cut_len, 10, &info);
		g_assert_nonnull(info.error);
		pix_jpeg_info_clear(&info);
	}
}

/* Phones append videos and makers append trailers after EOI. */
static void test_jpeg_bytes_after_eoi(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--make", "Google", "--size", "5000");
	if (jpeg == NULL)
		return;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	g_autoptr(GByteArray) longer = g_byte_array_new();
	PixJpegInfo plain, info;

	g_byte_array_append(longer, data, (guint)len);
	for (guint i = 0; i < 3000; i++) {
		guint8 b = i % 5 == 0 ? 0xff : (guint8)(i * 37);
		g_byte_array_append(longer, &b, 1);
	}
	parse_whole(data, len, &plain);
	parse_every_way(longer->data, longer->len, 50, &info);
	g_assert_null(info.error);
	assert_same_info(&plain, &info, "with a trailer");
	pix_jpeg_info_clear(&plain);
	pix_jpeg_info_clear(&info);
}

/* Appends a marker segment: 0xFF, `marker`, the length, the body. */
static void append_segment(GByteArray *out, guint8 marker, const void *body, gsize body_len)
{
	guint8 head[4] = { 0xff, marker, (guint8)((body_len + 2) >> 8), (guint8)(body_len + 2) };
	g_assert_cmpuint(body_len + 2, <=, 0xffff);
	g_byte_array_append(out, head, 4);
	g_byte_array_append(out, body, (guint)body_len);
}

static void append_marker(GByteArray *out, guint8 marker)
{
	guint8 m[2] = { 0xff, marker };
	g_byte_array_append(out, m, 2);
}

/* SOI, APP1, EOI: metadata-only JPEGs (test files, stripped previews)
 * are not damaged. */
static void test_jpeg_without_image_data(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--make", "Sony");
	if (jpeg == NULL)
		return;
	g_autoptr(GBytes) exif = exif_segment(jpeg, NULL);
	g_autoptr(GByteArray) b = g_byte_array_new();
	PixJpegInfo info;

	append_marker(b, 0xd8);
	append_segment(b, 0xe1, g_bytes_get_data(exif, NULL), g_bytes_get_size(exif));
	append_marker(b, 0xd9);
	parse_every_way(b->data, b->len, 50, &info);
	g_assert_null(info.error);
	g_assert_true(g_bytes_equal(info.exif, exif));
	g_assert_cmpint(info.width_px, ==, -1);
	g_assert_cmpint(info.height_px, ==, -1);
	pix_jpeg_info_clear(&info);
}

static void test_jpeg_app_segments_before_exif(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--app-before", "3", "--make", "Pentax");
	if (jpeg == NULL)
		return;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	g_autoptr(GBytes) want = exif_segment(jpeg, NULL);
	PixJpegInfo info;

	/* the premise: the Exif APP1 is not the first segment */
	g_assert_false(data[2] == 0xff && data[3] == 0xe1);
	parse_every_way(data, len, 50, &info);
	g_assert_null(info.error);
	g_assert_nonnull(info.exif);
	g_assert_true(g_bytes_equal(info.exif, want));
	pix_jpeg_info_clear(&info);
}

/* Builds SOI, the given APP1 segments, then the fixture from its first
 * segment on. */
static GByteArray *with_app1_first(GBytes *jpeg, const void *body, gsize body_len)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	GByteArray *b = g_byte_array_new();

	append_marker(b, 0xd8);
	append_segment(b, 0xe1, body, body_len);
	g_byte_array_append(b, data + 2, (guint)(len - 2));
	return b;
}

/* Both are APP1; only the "Exif\0\0" one is the EXIF block. */
static void test_jpeg_xmp_before_exif(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--make", "Fujifilm");
	if (jpeg == NULL)
		return;
	static const char xmp[] = "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
	g_autoptr(GByteArray) b = with_app1_first(jpeg, xmp, sizeof xmp - 1);
	g_autoptr(GBytes) want = exif_segment(jpeg, NULL);
	PixJpegInfo info;

	parse_every_way(b->data, b->len, 50, &info);
	g_assert_null(info.error);
	g_assert_nonnull(info.exif);
	g_assert_true(g_bytes_equal(info.exif, want));
	pix_jpeg_info_clear(&info);

	/* also an APP1 too short to hold the "Exif\0\0" header */
	g_autoptr(GByteArray) c = with_app1_first(jpeg, "Ex", 2);
	parse_every_way(c->data, c->len, 20, &info);
	g_assert_null(info.error);
	g_assert_true(g_bytes_equal(info.exif, want));
	pix_jpeg_info_clear(&info);
}

static void test_jpeg_first_exif_wins(void)
{
	g_autoptr(GBytes) first = FIXTURE("jpeg", "--make", "First");
	if (first == NULL)
		return;
	g_autoptr(GBytes) second = FIXTURE("jpeg", "--make", "Second");
	g_autoptr(GBytes) first_exif = exif_segment(first, NULL);
	g_autoptr(GBytes) second_exif = exif_segment(second, NULL);
	/* first's Exif APP1 goes in front of the whole of second */
	g_autoptr(GByteArray) b = with_app1_first(second, g_bytes_get_data(first_exif, NULL),
	                                          g_bytes_get_size(first_exif));
	PixJpegInfo info;

	g_assert_false(g_bytes_equal(first_exif, second_exif));
	parse_every_way(b->data, b->len, 20, &info);
	g_assert_null(info.error);
	g_assert_true(g_bytes_equal(info.exif, first_exif));
	pix_jpeg_info_clear(&info);
}

/* The size comes from the first SOFn (any of C0-CF but DHT C4, JPG C8 and
 * DAC CC, which share the range). */
static void test_jpeg_size_from_sof(void)
{
	static const guint8 dht[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07 };
	static const guint8 sof2[] = { 8, 0x01, 0x2c, 0x01, 0x90, 1, 1, 0x11, 0 };  /* 400x300 */
	static const guint8 sof0[] = { 8, 0x00, 0x10, 0x00, 0x20, 1, 1, 0x11, 0 };  /* 32x16 */
	g_autoptr(GByteArray) b = g_byte_array_new();
	PixJpegInfo info;

	append_marker(b, 0xd8);
	append_segment(b, 0xc4, dht, sizeof dht);
	append_segment(b, 0xcc, dht, sizeof dht);
	append_segment(b, 0xc2, sof2, sizeof sof2);
	append_segment(b, 0xc0, sof0, sizeof sof0);
	append_marker(b, 0xd9);
	parse_every_way(b->data, b->len, 30, &info);
	g_assert_null(info.error);
	g_assert_cmpint(info.width_px, ==, 400);
	g_assert_cmpint(info.height_px, ==, 300);
	g_assert_null(info.exif);
	pix_jpeg_info_clear(&info);
}

/* Entropy-coded data: stuffed 0xFF00, restart markers and fill bytes are
 * not markers; the first other marker ends the scan. */
static void test_jpeg_entropy_data(void)
{
	static const guint8 sos[] = { 1, 1, 0, 0, 63, 0 };
	static const guint8 scan[] = { 0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56, 0xff, 0xff, 0xd7,
	                               0xff, 0x00, 0xff, 0x00, 0x78 };
	g_autoptr(GByteArray) b = g_byte_array_new();
	PixJpegInfo info;

	append_marker(b, 0xd8);
	append_segment(b, 0xda, sos, sizeof sos);
	g_byte_array_append(b, scan, sizeof scan);
	/* a second scan (progressive JPEGs have many), then the end */
	append_segment(b, 0xda, sos, sizeof sos);
	g_byte_array_append(b, scan, sizeof scan);
	append_marker(b, 0xd9);
	parse_every_way(b->data, b->len, 50, &info);
	g_assert_null(info.error);
	pix_jpeg_info_clear(&info);

	/* without the EOI: truncated in the image data */
	parse_every_way(b->data, b->len - 2, 50, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);
}

/*
 * The vector scans look at 16, 32 or 64 bytes a step: a marker must be
 * found at every position in a step, and stuffing must be recognised when
 * the 0xFF ends a step and its 0x00 starts the next.  So: noisy, stuffed
 * entropy data of every length from 0 to 300 bytes, then a marker whose
 * loss would show (an APP1 Exif segment: the parser keeps its payload only
 * if it stops there), another scan, and the EOI (missed, the file would be
 * "truncated").
 */
static void test_jpeg_marker_at_every_offset(void)
{
	static const guint8 sos[] = { 1, 1, 0, 0, 63, 0 };
	static const guint8 app1[] = { 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0 };
	GRand *r = g_rand_new_with_seed(99);

	for (guint k = 0; k <= 300; k++) {
		g_autoptr(GByteArray) b = g_byte_array_new();
		PixJpegInfo info;
		append_marker(b, 0xd8);
		append_segment(b, 0xda, sos, sizeof sos);
		for (guint i = 0; i < k; i++) {
			guint8 v = (guint8)g_rand_int_range(r, 0, 256);
			if (i % 7 == 3 || v == 0xff) {
				/* stuffed 0xFF (or a restart marker), often */
				guint8 pair[2] = { 0xff, i % 5 == 0 ? (guint8)(0xd0 + i % 8) : 0x00 };
				g_byte_array_append(b, pair, 2);
				i++;
			} else {
				g_byte_array_append(b, &v, 1);
			}
		}
		append_segment(b, 0xe1, app1, sizeof app1);
		append_segment(b, 0xda, sos, sizeof sos);
		for (guint i = 0; i < k % 97; i++) {
			guint8 v = (guint8)(i * 37 + 1);
			g_byte_array_append(b, &v, 1);
		}
		append_marker(b, 0xd9);
		parse_every_way(b->data, b->len, 7, &info);
		if (info.error != NULL)
			g_error("%u bytes of entropy data before the APP1: %s", k, info.error);
		if (info.exif == NULL)
			g_error("%u bytes of entropy data: the APP1 marker after them was missed", k);
		pix_jpeg_info_clear(&info);
		/* and cut before the EOI, it must say truncated */
		parse_every_way(b->data, b->len - 2, 7, &info);
		g_assert_nonnull(info.error);
		pix_jpeg_info_clear(&info);
	}
	g_rand_free(r);
}

/* Inputs no camera writes; the parser must end with an error and never
 * read past what it was given (the sanitizer build checks). */
static void test_jpeg_garbage(void)
{
	PixJpegInfo info;

	/* nothing at all */
	parse_whole((const guint8 *)"", 0, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);

	/* not a JPEG */
	parse_every_way((const guint8 *)"GIF89a", 6, 5, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);

	/* only 0xFF, and SOI then only 0xFF (all fill bytes) */
	g_autofree guint8 *ff = g_malloc(70000);
	memset(ff, 0xff, 70000);
	parse_every_way(ff, 70000, 5, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);
	ff[1] = 0xd8;
	parse_every_way(ff, 70000, 5, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);

	/* a segment length below 2, then a valid-looking rest */
	static const guint8 short_len[] = { 0xff, 0xd8, 0xff, 0xe1, 0x00, 0x01, 0xff, 0xd9 };
	parse_every_way(short_len, sizeof short_len, 20, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);
	static const guint8 zero_len[] = { 0xff, 0xd8, 0xff, 0xe1, 0x00, 0x00, 0xff, 0xd9 };
	parse_every_way(zero_len, sizeof zero_len, 20, &info);
	g_assert_nonnull(info.error);
	pix_jpeg_info_clear(&info);

	/* a length of exactly 2 is an empty segment, which is fine */
	static const guint8 empty_seg[] = { 0xff, 0xd8, 0xff, 0xe1, 0x00, 0x02, 0xff, 0xd9 };
	parse_every_way(empty_seg, sizeof empty_seg, 20, &info);
	g_assert_null(info.error);
	g_assert_null(info.exif);
	pix_jpeg_info_clear(&info);

	/* an APP1 claiming 65535 bytes with 20 there */
	static const guint8 long_len[] = { 0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 'E', 'x', 'i', 'f', 0, 0,
	                                   'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0, 0xff, 0xd9 };
	parse_every_way(long_len, sizeof long_len, 20, &info);
	g_assert_nonnull(info.error);
	g_assert_null(info.exif);
	pix_jpeg_info_clear(&info);

	/* a SOF too short to hold a size */
	static const guint8 short_sof[] = { 0xff, 0xd8, 0xff, 0xc0, 0x00, 0x04, 8, 0, 0xff, 0xd9 };
	parse_every_way(short_sof, sizeof short_sof, 20, &info);
	g_assert_cmpint(info.width_px, ==, -1);
	pix_jpeg_info_clear(&info);

	/* random bytes, with and without a SOI in front */
	for (guint iter = 0; iter < 300; iter++) {
		gsize len = (gsize)g_test_rand_int_range(0, 3000);
		g_autofree guint8 *junk = g_malloc(len + 2);
		for (gsize i = 0; i < len + 2; i++)
			junk[i] = g_test_rand_bit() ? 0xff : (guint8)g_test_rand_int_range(0, 256);
		if (iter % 2 == 0 && len >= 2) {
			junk[0] = 0xff;
			junk[1] = 0xd8;
		}
		parse_whole(junk, len, &info);
		PixJpegInfo other;
		parse_random(junk, len, 20, &other);
		assert_same_info(&info, &other, "random bytes at random cuts");
		pix_jpeg_info_clear(&other);
		pix_jpeg_info_clear(&info);
	}
}

/* A real structure with a few bytes changed: the hostile input that
 * looks most like a JPEG.  Same result at any split, never a crash. */
static void test_jpeg_mutations(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--thumbnail", "--make", "Olympus", "--size", "4000");
	if (jpeg == NULL)
		return;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	g_autofree guint8 *copy = g_malloc(len);

	for (guint iter = 0; iter < 1500; iter++) {
		memcpy(copy, data, len);
		guint n = (guint)g_test_rand_int_range(1, 9);
		for (guint i = 0; i < n; i++) {
			/* mostly in the marker-dense head */
			gsize at = (gsize)g_test_rand_int_range(0, (gint32)(g_test_rand_bit() ? MIN(len, 600) : len));
			copy[at] = g_test_rand_bit() ? (guint8)g_test_rand_int_range(0, 256) : 0xff;
		}
		gsize cut = g_test_rand_int_range(0, 4) == 0 ? (gsize)g_test_rand_int_range(0, (gint32)len) : len;
		PixJpegInfo info, other;
		parse_whole(copy, cut, &info);
		parse_random(copy, cut, 30, &other);
		assert_same_info(&info, &other, "mutated, at random cuts");
		if (info.exif != NULL)
			g_assert_cmpuint(g_bytes_get_size(info.exif), <=, 65533);
		pix_jpeg_info_clear(&info);
		pix_jpeg_info_clear(&other);
	}
}

/* --- PixMetaParser --- */

/* Feeds `data` to a new PixMetaParser in pieces of `chunk` bytes (0: at
 * once) and finishes into a new item (transfer full). */
static PixItem *sniff(const guint8 *data, gsize len, gsize chunk)
{
	g_autoptr(PixDir) dir = pix_dir_new("/t");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "name.txt");
	PixMetaParser *mp = pix_meta_parser_new();

	if (chunk == 0)
		chunk = MAX(len, 1);
	for (gsize at = 0; at < len; at += chunk) {
		gsize n = MIN(chunk, len - at);
		g_autofree guint8 *piece = g_memdup2(data + at, n);
		pix_meta_parser_feed(mp, piece, n);
	}
	pix_meta_parser_finish(mp, item);
	pix_meta_parser_free(mp);
	return item;
}

static void test_mime_from_magic(void)
{
	static const struct {
		const char *head;
		gsize head_len;
		const char *mime;
		PixMediaKind media;
	} cases[] = {
#define C(bytes, mime, media) { bytes, sizeof(bytes) - 1, mime, media }
		C("\xff\xd8\xff\xe0\x00\x10JFIF\0", "image/jpeg", PIX_MEDIA_IMAGE),
		C("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", "image/png", PIX_MEDIA_IMAGE),
		C("GIF87a\x10\0\x10\0", "image/gif", PIX_MEDIA_IMAGE),
		C("GIF89a\x10\0\x10\0", "image/gif", PIX_MEDIA_IMAGE),
		C("II\x2a\0\x08\0\0\0", "image/tiff", PIX_MEDIA_IMAGE),
		C("MM\0\x2a\0\0\0\x08", "image/tiff", PIX_MEDIA_IMAGE),
		C("RIFF\x24\0\0\0WEBPVP8 ", "image/webp", PIX_MEDIA_IMAGE),
		C("RIFF\x24\0\0\0AVI LIST", "video/x-msvideo", PIX_MEDIA_VIDEO),
		C("\0\0\0\x18" "ftypheic\0\0\0\0mif1heic", "image/heic", PIX_MEDIA_IMAGE),
		C("\0\0\0\x1c" "ftypavif\0\0\0\0avifmif1", "image/avif", PIX_MEDIA_IMAGE),
		C("\0\0\0\x18" "ftypcrx \0\0\0\x01" "crx isom", "image/x-canon-cr3", PIX_MEDIA_RAW),
		C("\0\0\0\x14" "ftypqt  \0\0\0\0qt  ", "video/quicktime", PIX_MEDIA_VIDEO),
		C("\0\0\0\x20" "ftypisom\0\0\x02\0isomiso2", "video/mp4", PIX_MEDIA_VIDEO),
		C("FUJIFILMCCD-RAW 0201FF383501", "image/x-fujifilm-raf", PIX_MEDIA_RAW),
		C("Hello, this is a plain text file.\n", "application/octet-stream", PIX_MEDIA_OTHER),
		C("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", "application/octet-stream", PIX_MEDIA_OTHER),
#undef C
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		/* the head alone (a short file), and padded well past the
		 * parser's head buffer; in one piece and byte by byte */
		g_autofree guint8 *padded = g_malloc0(5000);
		memcpy(padded, cases[i].head, cases[i].head_len);
		const gsize lens[] = { cases[i].head_len, 5000 };
		for (guint l = 0; l < G_N_ELEMENTS(lens); l++) {
			static const gsize chunks[] = { 0, 1, 5, 63, 64, 65 };
			for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
				g_autoptr(PixItem) item = sniff(padded, lens[l], chunks[c]);
				if (g_strcmp0(item->mime, cases[i].mime) != 0 || item->media != cases[i].media)
					g_error("case %u (%" G_GSIZE_FORMAT " bytes in pieces of %" G_GSIZE_FORMAT
					        "): mime %s media %d, want %s media %d", i, lens[l], chunks[c],
					        item->mime, item->media, cases[i].mime, cases[i].media);
			}
		}
	}
}

/* A file shorter than a magic number is not of that type, even when the
 * bytes it has match the magic's start (and the rest would be zeros). */
static void test_mime_cut_magic(void)
{
	static const struct {
		const char *data;
		gsize len;
	} cases[] = {
		{ "IIU", 3 }, { "II\x2a", 3 }, { "MM\0", 3 }, { "\x89PNG", 4 }, { "GIF8", 4 }, { "\xff\xd8", 2 },
		{ "RIFF\0\0\0\0WEB", 11 }, { "\0\0\0\x18" "ftyphei", 11 }, { "FUJIFILMCCD-RA", 14 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(PixItem) item = sniff((const guint8 *)cases[i].data, cases[i].len, 1);
		if (g_strcmp0(item->mime, "application/octet-stream") != 0)
			g_error("case %u (%" G_GSIZE_FORMAT " bytes) taken as %s", i, cases[i].len, item->mime);
	}
}

static void test_mime_empty_file(void)
{
	g_autoptr(PixItem) item = sniff(NULL, 0, 0);
	g_assert_cmpstr(item->mime, ==, "application/x-empty");
	g_assert_cmpint(item->media, ==, PIX_MEDIA_OTHER);
	g_assert_null(item->meta);
	g_assert_null(item->error);
}

/* The type comes from the content: a JPEG whose name says text is a JPEG,
 * a text file named .jpg is not. */
static void test_mime_ignores_name(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--make", "Canon");
	if (jpeg == NULL)
		return;
	g_autofree char *dir = pix_test_dir("names");
	g_autofree char *as_txt = g_build_filename(dir, "notes.txt", NULL);
	g_autofree char *as_jpg = g_build_filename(dir, "IMG_0001.JPG", NULL);
	pix_test_write(as_txt, g_bytes_get_data(jpeg, NULL), g_bytes_get_size(jpeg));
	pix_test_write(as_jpg, "just text\n", 10);

	g_autofree char *data = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(as_txt, &data, &len, NULL));
	g_autoptr(PixItem) a = sniff((const guint8 *)data, len, 0);
	g_assert_cmpstr(a->mime, ==, "image/jpeg");
	g_free(data);
	g_assert_true(g_file_get_contents(as_jpg, &data, &len, NULL));
	g_autoptr(PixItem) b = sniff((const guint8 *)data, len, 0);
	g_assert_cmpstr(b->mime, ==, "application/octet-stream");
	g_assert_null(b->meta);
}

static void assert_fixture_meta(const PixMeta *m)
{
	g_assert_nonnull(m);
	g_assert_cmpstr(m->make, ==, "Canon");
	g_assert_cmpstr(m->model, ==, "Canon EOS R5");
	g_assert_cmpstr(m->date_taken, ==, "2022-03-04T05:06:07");
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	g_assert_cmpint(m->iso, ==, 800);
	g_assert_cmpint(m->orientation, ==, 8);
	g_assert_cmpfloat_with_epsilon(m->gps_lat, -33.8568, 1e-7);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, 151.2153, 1e-7);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -12.5, 1e-9);
}

#define META_OPTS "--make", "Canon", "--model", "Canon EOS R5", "--date", "2022:03:04 05:06:07", \
	"--iso", "800", "--orientation", "8", "--gps", "-33.8568,151.2153,-12.5", "--width", "160", "--height", "120"

static void test_finish_jpeg_metadata(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", META_OPTS, "--size", "9000");
	if (jpeg == NULL)
		return;
	static const gsize chunks[] = { 0, 1, 100, 4096 };
	for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
		g_autoptr(PixItem) item = sniff(g_bytes_get_data(jpeg, NULL), g_bytes_get_size(jpeg), chunks[c]);
		g_assert_cmpstr(item->mime, ==, "image/jpeg");
		g_assert_cmpint(item->media, ==, PIX_MEDIA_IMAGE);
		g_assert_null(item->error);
		assert_fixture_meta(item->meta);
		/* the real pixel size, from the SOF */
		g_assert_cmpint(item->meta->width_px, ==, 160);
		g_assert_cmpint(item->meta->height_px, ==, 120);
	}
}

static void test_finish_tiff_metadata(void)
{
	static const char *const orders[] = { "--seed", "--big-endian" };
	for (guint i = 0; i < G_N_ELEMENTS(orders); i++) {
		/* "--seed 1" is the default: a no-op stand-in for little-endian */
		g_autoptr(GBytes) tiff = i == 0 ? FIXTURE("tiff", META_OPTS, orders[i], "1")
		                                : FIXTURE("tiff", META_OPTS, orders[i]);
		if (tiff == NULL)
			return;
		const guint8 *d = g_bytes_get_data(tiff, NULL);
		g_assert_cmpint(d[0], ==, i == 0 ? 'I' : 'M');
		static const gsize chunks[] = { 0, 1, 777 };
		for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
			g_autoptr(PixItem) item = sniff(d, g_bytes_get_size(tiff), chunks[c]);
			g_assert_cmpstr(item->mime, ==, "image/tiff");
			g_assert_null(item->error);
			assert_fixture_meta(item->meta);
		}
	}
}

/* IFD0 past the part of a TIFF the parser keeps: that cannot be checked,
 * so it is not called damage. */
static void test_finish_tiff_ifd_beyond_head(void)
{
	g_autoptr(GBytes) tiff = FIXTURE("tiff", "--make", "Canon", "--pad-before-ifd", "400000");
	if (tiff == NULL)
		return;
	g_assert_cmpuint(g_bytes_get_size(tiff), >, 400000);
	g_autoptr(PixItem) item = sniff(g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff), 65536);
	g_assert_cmpstr(item->mime, ==, "image/tiff");
	g_assert_null(item->error);
	g_assert_nonnull(item->meta);
}

/* Known data is kept: a JPEG cut in its image data still has its EXIF
 * fields, and says what is wrong. */
static void test_finish_truncated_jpeg_keeps_metadata(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", META_OPTS, "--size", "9000", "--truncate", "6000");
	if (jpeg == NULL)
		return;
	g_autoptr(PixItem) item = sniff(g_bytes_get_data(jpeg, NULL), g_bytes_get_size(jpeg), 1000);
	g_assert_cmpstr(item->mime, ==, "image/jpeg");
	g_assert_nonnull(item->error);
	assert_fixture_meta(item->meta);
	g_assert_cmpint(item->meta->width_px, ==, 160);
}

/* An EXIF block whose IFD0 offset points outside it: the file is
 * recorded as damaged. */
static void test_finish_corrupt_exif(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", "--make", "Canon");
	if (jpeg == NULL)
		return;
	gsize len;
	g_autofree guint8 *data = g_memdup2(g_bytes_get_data(jpeg, NULL), g_bytes_get_size(jpeg));
	len = g_bytes_get_size(jpeg);
	g_autoptr(GBytes) exif = exif_segment(jpeg, NULL);
	guint8 *found = memmem(data, len, g_bytes_get_data(exif, NULL), 14);
	g_assert_nonnull(found);
	/* "Exif\0\0" "II" 42 0, then the IFD0 offset (little-endian) */
	g_assert_cmpint(found[6], ==, 'I');
	found[10] = 0xf0;
	found[11] = 0xff;
	found[12] = 0x00;
	found[13] = 0x00;

	g_autoptr(PixItem) item = sniff(data, len, 0);
	g_assert_cmpstr(item->mime, ==, "image/jpeg");
	g_assert_nonnull(item->error);
	g_assert_nonnull(strstr(item->error, "EXIF"));
	/* what the JPEG structure says is still known */
	g_assert_nonnull(item->meta);
	g_assert_cmpint(item->meta->width_px, ==, 16);
}

/* Formats without a metadata parser yet: the type, no metadata, no
 * error. */
static void test_finish_formats_without_metadata(void)
{
	static const guint8 gif[] = "GIF89a\x10\0\x10\0\x80\0\0\0\0\0\xff\xff\xff,\0\0\0\0\x10\0\x10\0\0\x02\x02D\x01\0;";
	g_autoptr(PixItem) item = sniff(gif, sizeof gif - 1, 3);
	g_assert_cmpstr(item->mime, ==, "image/gif");
	g_assert_null(item->meta);
	g_assert_null(item->error);
}

/* Mutated JPEGs and TIFFs through the whole parser (format sniffing, the
 * JPEG stream, the TIFF check and reader): any verdict but a crash, and the
 * metadata that comes out is well-formed. */
static void test_finish_hostile_inputs(void)
{
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", META_OPTS, "--thumbnail");
	if (jpeg == NULL)
		return;
	g_autoptr(GBytes) tiff = FIXTURE("tiff", META_OPTS, "--big-endian");
	GBytes *inputs[] = { jpeg, tiff };

	for (guint f = 0; f < G_N_ELEMENTS(inputs); f++) {
		gsize len;
		const guint8 *data = g_bytes_get_data(inputs[f], &len);
		g_autofree guint8 *copy = g_malloc(len);
		for (guint iter = 0; iter < 1000; iter++) {
			memcpy(copy, data, len);
			guint n = (guint)g_test_rand_int_range(1, 8);
			for (guint i = 0; i < n; i++) {
				/* the headers and IFDs are in the first kilobytes */
				gsize at = (gsize)g_test_rand_int_range(4, (gint32)MIN(len, 3000));
				copy[at] = (guint8)g_test_rand_int_range(0, 256);
			}
			gsize cut = g_test_rand_bit() ? len : (gsize)g_test_rand_int_range(0, (gint32)len);
			g_autoptr(PixItem) item = sniff(copy, cut, (gsize)g_test_rand_int_range(0, 2000));
			g_assert_nonnull(item->mime);
			if (item->meta != NULL) {
				const PixMeta *m = item->meta;
				const char *strings[] = { m->make, m->model, m->lens, m->date_taken, m->date_tz };
				for (guint i = 0; i < G_N_ELEMENTS(strings); i++)
					g_assert_true(strings[i] == NULL || g_utf8_validate(strings[i], -1, NULL));
				g_assert_true(m->orientation == -1 || (m->orientation >= 1 && m->orientation <= 8));
			}
			g_assert_true(item->error == NULL || g_utf8_validate(item->error, -1, NULL));
		}
	}
}

/* Collects the regular files under `dir` (transfer full paths). */
static void list_files(const char *dir, GPtrArray *out)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (d == NULL)
		return;
	while ((name = g_dir_read_name(d)) != NULL) {
		char *path = g_build_filename(dir, name, NULL);
		if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
			list_files(path, out);
			g_free(path);
		} else {
			g_ptr_array_add(out, path);
		}
	}
}

/* The real files, broken ones included: every JPEG parses the same at any
 * split, and every file goes through the whole parser without a crash. */
/* A JPEG stream test run with the entropy scan at one vector width. */
typedef struct {
	guint bits;
	void (*fn)(void);
} ScanTest;

static void run_at_width(gconstpointer data)
{
	const ScanTest *st = data;
	guint got = pix_jpeg_set_scan_bits(st->bits);
	if (got != st->bits) {
		g_test_skip("this CPU lacks that vector width");
		return;
	}
	st->fn();
}

static void test_samples(void)
{
	const char *samples = pix_test_samples();
	if (samples == NULL)
		return;
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
	guint n_jpeg = 0;

	list_files(samples, files);
	g_assert_cmpuint(files->len, >, 100);
	for (guint i = 0; i < files->len; i++) {
		g_autofree char *data = NULL;
		gsize len;
		g_assert_true(g_file_get_contents(g_ptr_array_index(files, i), &data, &len, NULL));
		const guint8 *d = (const guint8 *)data;
		if (len >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff) {
			PixJpegInfo info;
			parse_whole(d, len, &info);
			for (guint r = 0; r < 3; r++) {
				PixJpegInfo other;
				parse_random(d, len, 50, &other);
				assert_same_info(&info, &other, g_ptr_array_index(files, i));
				pix_jpeg_info_clear(&other);
			}
			pix_jpeg_info_clear(&info);
			n_jpeg++;
		}
		g_autoptr(PixItem) item = sniff(d, len, 65536);
		g_assert_nonnull(item->mime);
	}
	g_assert_cmpuint(n_jpeg, >, 20);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	/* the stream tests at every width of the entropy scan */
	static const struct {
		const char *name;
		void (*fn)(void);
	} jpeg_tests[] = {
		{ "whole-file", test_jpeg_whole_file },
		{ "any-split", test_jpeg_any_split },
		{ "truncated", test_jpeg_truncated },
		{ "bytes-after-eoi", test_jpeg_bytes_after_eoi },
		{ "without-image-data", test_jpeg_without_image_data },
		{ "app-segments-before-exif", test_jpeg_app_segments_before_exif },
		{ "xmp-before-exif", test_jpeg_xmp_before_exif },
		{ "first-exif-wins", test_jpeg_first_exif_wins },
		{ "size-from-sof", test_jpeg_size_from_sof },
		{ "entropy-data", test_jpeg_entropy_data },
		{ "marker-at-every-offset", test_jpeg_marker_at_every_offset },
		{ "garbage", test_jpeg_garbage },
		{ "mutations", test_jpeg_mutations },
	};
	static const guint widths[] = { 512, 256, 128, 0 };
	for (guint w = 0; w < G_N_ELEMENTS(widths); w++) {
		for (guint t = 0; t < G_N_ELEMENTS(jpeg_tests); t++) {
			ScanTest *st = g_new0(ScanTest, 1);
			st->bits = widths[w];
			st->fn = jpeg_tests[t].fn;
			g_autofree char *path = g_strdup_printf("/meta/jpeg-%u/%s", widths[w], jpeg_tests[t].name);
			g_test_add_data_func_full(path, st, run_at_width, g_free);
		}
	}
	g_test_add_func("/meta/mime/from-magic", test_mime_from_magic);
	g_test_add_func("/meta/mime/cut-magic", test_mime_cut_magic);
	g_test_add_func("/meta/mime/empty-file", test_mime_empty_file);
	g_test_add_func("/meta/mime/ignores-name", test_mime_ignores_name);
	g_test_add_func("/meta/finish/jpeg-metadata", test_finish_jpeg_metadata);
	g_test_add_func("/meta/finish/tiff-metadata", test_finish_tiff_metadata);
	g_test_add_func("/meta/finish/tiff-ifd-beyond-head", test_finish_tiff_ifd_beyond_head);
	g_test_add_func("/meta/finish/truncated-jpeg-keeps-metadata", test_finish_truncated_jpeg_keeps_metadata);
	g_test_add_func("/meta/finish/corrupt-exif", test_finish_corrupt_exif);
	g_test_add_func("/meta/finish/formats-without-metadata", test_finish_formats_without_metadata);
	g_test_add_func("/meta/finish/hostile-inputs", test_finish_hostile_inputs);
	g_test_add_func("/meta/samples", test_samples);
	return g_test_run();
}
