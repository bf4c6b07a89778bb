/*
 * test-bmff.c: unit tests of meta-bmff.c, ISO base media files (HEIF,
 * CR3, MP4/MOV, JPEG XL) through the metadata parser (meta.h).
 *
 * Each file is built here box by box (box()), so that what the parser must
 * find is known exactly: a movie with its header, a video track and a
 * position, with 'moov' before and after 'mdat'; a QuickTime movie whose
 * Apple keys give the local offset; a HEIF whose Exif item lies in 'mdat'
 * after 'meta'; a CR3 whose CMT1 box is a TIFF block; a JPEG XL.  Every
 * file is fed whole, a byte at a time and in random pieces, with the same
 * result.  Hostile variants (sizes smaller than a header, past the
 * parent, 64-bit sizes, boxes nested past the limit, truncation at every
 * byte, random mutations) must end in a recorded problem or nothing,
 * never a crash or a hang; run the SANITIZE=1 build to catch bad reads.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta.h"
#include "testlib.h"

#include <math.h>
#include <string.h>

/* --- building boxes --- */

static void put32(GByteArray *a, guint32 v)
{
	guint8 b[4] = { v >> 24, v >> 16, v >> 8, v };
	g_byte_array_append(a, b, 4);
}

static void put16(GByteArray *a, guint16 v)
{
	guint8 b[2] = { v >> 8, v };
	g_byte_array_append(a, b, 2);
}

/* A box of `type` around `payload` (which it frees). */
static GByteArray *box(const char *type, GByteArray *payload)
{
	GByteArray *a = g_byte_array_new();
	put32(a, 8 + (payload != NULL ? payload->len : 0));
	g_byte_array_append(a, (const guint8 *)type, 4);
	if (payload != NULL) {
		g_byte_array_append(a, payload->data, payload->len);
		g_byte_array_unref(payload);
	}
	return a;
}

/* Concatenates NULL-terminated byte arrays (freeing them). */
static GByteArray *cat(GByteArray *first, ...)
{
	GByteArray *a = g_byte_array_new();
	va_list ap;
	va_start(ap, first);
	for (GByteArray *b = first; b != NULL; b = va_arg(ap, GByteArray *)) {
		g_byte_array_append(a, b->data, b->len);
		g_byte_array_unref(b);
	}
	va_end(ap);
	return a;
}

static GByteArray *bytes(const void *data, gsize len)
{
	GByteArray *a = g_byte_array_new();
	g_byte_array_append(a, data, (guint)len);
	return a;
}

static GByteArray *zeros(gsize len)
{
	GByteArray *a = g_byte_array_new();
	g_byte_array_set_size(a, (guint)len);
	memset(a->data, 0x5a, len);
	return a;
}

static GByteArray *ftyp(const char *brand)
{
	GByteArray *p = bytes(brand, 4);
	put32(p, 0);
	g_byte_array_append(p, (const guint8 *)brand, 4);
	return box("ftyp", p);
}

/* 2020-01-02 03:04:05 UTC in seconds since 1904 */
#define CREATED (1577934245u + 2082844800u)

static GByteArray *mvhd(void)
{
	GByteArray *p = g_byte_array_new();
	put32(p, 0);            /* version 0, flags */
	put32(p, CREATED);
	put32(p, CREATED);
	put32(p, 1000);         /* timescale */
	put32(p, 12345);        /* duration: 12.345 s */
	g_byte_array_append(p, zeros(80)->data, 80);
	return box("mvhd", p);
}

static GByteArray *tkhd(guint32 w, guint32 h)
{
	GByteArray *p = g_byte_array_new();
	put32(p, 0);
	g_autoptr(GByteArray) z = zeros(72);
	memset(z->data, 0, z->len);
	g_byte_array_append(p, z->data, z->len);
	put32(p, w << 16);
	put32(p, h << 16);
	return box("tkhd", p);
}

static GByteArray *hdlr(const char *kind)
{
	GByteArray *p = g_byte_array_new();
	put32(p, 0);
	put32(p, 0);
	g_byte_array_append(p, (const guint8 *)kind, 4);
	g_byte_array_append(p, zeros(13)->data, 13);
	return box("hdlr", p);
}

/* A QuickTime user-data string atom. */
static GByteArray *udta_text(const char *type, const char *text)
{
	GByteArray *p = g_byte_array_new();
	put16(p, (guint16)strlen(text));
	put16(p, 0x15c7);
	g_byte_array_append(p, (const guint8 *)text, strlen(text));
	return box(type, p);
}

static GByteArray *movie_moov(void)
{
	return box("moov", cat(mvhd(),
	                       box("trak", cat(tkhd(0, 0), box("mdia", hdlr("soun")), NULL)),
	                       box("trak", cat(tkhd(1920, 1080), box("mdia", hdlr("vide")), NULL)),
	                       box("udta", udta_text("\xa9xyz", "+48.8577+002.2950+035.000/")),
	                       NULL));
}

/* A minimal little-endian TIFF block: IFD0 with Make. */
static GByteArray *tiff_with_make(const char *make)
{
	GByteArray *t = bytes("II*\0\x08\0\0\0", 8);
	guint8 entry[12] = { 0x0f, 0x01, 2, 0 };
	guint32 count = (guint32)strlen(make) + 1, off = 8 + 2 + 12 + 4;
	memcpy(entry + 4, &count, 4);   /* the test runs little-endian */
	memcpy(entry + 8, &off, 4);
	g_byte_array_append(t, (const guint8 *)"\x01\x00", 2);
	g_byte_array_append(t, entry, 12);
	g_byte_array_append(t, (const guint8 *)"\0\0\0\0", 4);
	g_byte_array_append(t, (const guint8 *)make, count);
	return t;
}

/* --- running the parser --- */

/* Feeds `f` in pieces: 0 whole, 1 a byte at a time, else random sizes
 * from seed `how`. */
static PixItem *parse(const GByteArray *f, guint how)
{
	PixMetaParser *mp = pix_meta_parser_new();
	g_autoptr(GRand) r = g_rand_new_with_seed(how);
	for (gsize at = 0; at < f->len;) {
		gsize n = how == 0 ? f->len : how == 1 ? 1 : (gsize)g_rand_int_range(r, 1, 3000);
		n = MIN(n, f->len - at);
		pix_meta_parser_feed(mp, f->data + at, n);
		at += n;
	}
	g_autoptr(PixDir) dir = pix_dir_new("/t");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "f");
	pix_meta_parser_finish(mp, item);
	pix_meta_parser_free(mp);
	return item;
}

/* Fed a byte at a time only up to this size: a file of megabytes that way
 * took 80 s under ASan, and the pieces of 1 to 3,000 bytes cross its box
 * boundaries at every offset class all the same. */
#define BYTEWISE_MAX (256 * 1024)

/* The same fields whatever the pieces. */
static PixItem *parse_all_ways(const GByteArray *f)
{
	PixItem *whole = parse(f, 0);
	for (guint how = f->len > BYTEWISE_MAX ? 2 : 1; how < 6; how++) {
		g_autoptr(PixItem) other = parse(f, how);
		const PixMeta *a = whole->meta, *b = other->meta;
		g_assert_cmpstr(whole->error, ==, other->error);
		g_assert_true((a == NULL) == (b == NULL));
		if (a == NULL)
			continue;
		g_assert_cmpstr(a->date_taken, ==, b->date_taken);
		g_assert_cmpstr(a->make, ==, b->make);
		g_assert_cmpint(a->width_px, ==, b->width_px);
		g_assert_true(a->duration_s == b->duration_s || (isnan(a->duration_s) && isnan(b->duration_s)));
	}
	return whole;
}

static void test_movie(void)
{
	/* moov before mdat, and after it (as cameras write it) */
	for (int at_end = 0; at_end < 2; at_end++) {
		g_autoptr(GByteArray) f = at_end ? cat(ftyp("isom"), box("mdat", zeros(100000)), movie_moov(), NULL)
		                                 : cat(ftyp("isom"), movie_moov(), box("mdat", zeros(100000)), NULL);
		g_autoptr(PixItem) item = parse_all_ways(f);
		g_assert_cmpstr(item->mime, ==, "video/mp4");
		g_assert_null(item->error);
		const PixMeta *m = item->meta;
		g_assert_cmpstr(m->date_taken, ==, "2020-01-02T03:04:05");
		g_assert_null(m->date_tz);
		g_assert_cmpfloat_with_epsilon(m->duration_s, 12.345, 1e-9);
		g_assert_cmpint(m->width_px, ==, 1920);
		g_assert_cmpint(m->height_px, ==, 1080);
		g_assert_cmpfloat_with_epsilon(m->gps_lat, 48.8577, 1e-9);
		g_assert_cmpfloat_with_epsilon(m->gps_lon, 2.295, 1e-9);
		g_assert_cmpfloat_with_epsilon(m->gps_alt_m, 35, 1e-9);
		g_assert_true(m->has_osdb_hash);
	}
}

/* The OpenSubtitles hash: size plus the little-endian 64-bit sums of
 * the first and last 64 KiB, computed here the slow way. */
static void test_osdb_hash(void)
{
	g_autoptr(GByteArray) f = cat(ftyp("isom"), movie_moov(), box("mdat", zeros(200000)), NULL);
	/* noise in the media data, so every word of both ends counts */
	for (guint i = f->len - 200000; i < f->len; i++)
		f->data[i] ^= (guint8)(i * 31);
	g_autoptr(PixItem) item = parse(f, 7);
	guint64 expect = f->len;
	const gsize starts[2] = { 0, f->len - 65536 };
	for (int e = 0; e < 2; e++) {
		for (gsize i = 0; i < 65536; i += 8) {
			guint64 w = 0;
			for (int b = 0; b < 8; b++)
				w |= (guint64)f->data[starts[e] + i + b] << (8 * b);
			expect += w;
		}
	}
	g_assert_true(item->meta->has_osdb_hash);
	g_assert_cmphex(item->meta->osdb_hash, ==, expect);
}

/* QuickTime 'meta' (not a full box) with Apple's keys: make, model, and a
 * creationdate whose offset places mvhd's UTC instant in local time. */
static void test_apple_keys(void)
{
	const char *names[] = { "com.apple.quicktime.make", "com.apple.quicktime.model",
		                "com.apple.quicktime.creationdate", "com.apple.quicktime.location.ISO6709" };
	const char *values[] = { "Apple", "iPhone 6", "2020-01-02T05:04:00+0200", "+10.5-020.25/" };
	GByteArray *keys = g_byte_array_new();
	put32(keys, 0);
	put32(keys, 4);
	for (int i = 0; i < 4; i++) {
		put32(keys, 8 + (guint32)strlen(names[i]));
		g_byte_array_append(keys, (const guint8 *)"mdta", 4);
		g_byte_array_append(keys, (const guint8 *)names[i], strlen(names[i]));
	}
	GByteArray *ilst = g_byte_array_new();
	for (int i = 0; i < 4; i++) {
		GByteArray *data = g_byte_array_new();
		put32(data, 1);
		put32(data, 0);
		g_byte_array_append(data, (const guint8 *)values[i], strlen(values[i]));
		GByteArray *item = box("data", data);
		put32(ilst, 8 + item->len);
		put32(ilst, (guint32)i + 1);
		g_byte_array_append(ilst, item->data, item->len);
		g_byte_array_unref(item);
	}
	g_autoptr(GByteArray) f = cat(ftyp("qt  "), box("mdat", zeros(5000)),
	                              box("moov", cat(mvhd(), box("meta", cat(hdlr("mdta"), box("keys", keys),
	                                                                      box("ilst", ilst), NULL)),
	                                              NULL)),
	                              NULL);
	g_autoptr(PixItem) item = parse_all_ways(f);
	g_assert_cmpstr(item->mime, ==, "video/quicktime");
	const PixMeta *m = item->meta;
	g_assert_cmpstr(m->make, ==, "Apple");
	g_assert_cmpstr(m->model, ==, "iPhone 6");
	g_assert_cmpstr(m->date_taken, ==, "2020-01-02T05:04:05");
	g_assert_cmpstr(m->date_tz, ==, "+02:00");
	g_assert_cmpfloat_with_epsilon(m->gps_lat, 10.5, 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, -20.25, 1e-9);
}

/* A HEIF: 'meta' with an Exif item whose data lies in 'mdat' after it,
 * and the primary item's 'ispe'. */
static GByteArray *heif(gboolean is_exif_outside)
{
	g_autoptr(GByteArray) exif = cat(bytes("\0\0\0\6Exif\0\0", 10), tiff_with_make("HeifCam"), NULL);
	GByteArray *infe1 = g_byte_array_new(), *infe2 = g_byte_array_new();
	put32(infe1, 2 << 24);
	put16(infe1, 1);
	put16(infe1, 0);
	g_byte_array_append(infe1, (const guint8 *)"hvc1\0", 5);
	put32(infe2, 2 << 24);
	put16(infe2, 2);
	put16(infe2, 0);
	g_byte_array_append(infe2, (const guint8 *)"Exif\0", 5);
	GByteArray *iinf = g_byte_array_new();
	put32(iinf, 0);
	put16(iinf, 2);
	GByteArray *e1 = box("infe", infe1), *e2 = box("infe", infe2);
	g_byte_array_append(iinf, e1->data, e1->len);
	g_byte_array_append(iinf, e2->data, e2->len);
	g_byte_array_unref(e1);
	g_byte_array_unref(e2);
	GByteArray *ispe = g_byte_array_new();
	put32(ispe, 0);
	put32(ispe, 4032);
	put32(ispe, 3024);
	GByteArray *ipma = g_byte_array_new();
	put32(ipma, 0);
	put32(ipma, 1);
	put16(ipma, 1);
	g_byte_array_append(ipma, (const guint8 *)"\x01\x81", 2);
	GByteArray *pitm = g_byte_array_new();
	put32(pitm, 0);
	put16(pitm, 1);
	/* iloc v0, offset and length 4 bytes, no base; offsets fixed below */
	GByteArray *iloc = g_byte_array_new();
	put32(iloc, 0);
	g_byte_array_append(iloc, (const guint8 *)"\x44\x00", 2);
	put16(iloc, 2);
	for (guint16 id = 1; id <= 2; id++) {
		put16(iloc, id);
		put16(iloc, 0);
		put16(iloc, 1);
		put32(iloc, 0);         /* offset: patched */
		put32(iloc, id == 1 ? 1000 : exif->len);
	}
	GByteArray *meta_payload = g_byte_array_new();
	put32(meta_payload, 0);
	GByteArray *children = cat(hdlr("pict"), box("pitm", pitm), box("iloc", iloc), box("iinf", iinf),
	                           box("iprp", cat(box("ipco", box("ispe", ispe)), box("ipma", ipma), NULL)), NULL);
	g_byte_array_append(meta_payload, children->data, children->len);
	g_byte_array_unref(children);
	GByteArray *f = cat(ftyp("heic"), box("meta", meta_payload), NULL);
	guint32 mdat_at = f->len, image_at = mdat_at + 8, exif_at = image_at + 1000;
	GByteArray *mdat = cat(zeros(1000), bytes(exif->data, exif->len), NULL);
	GByteArray *m = box("mdat", mdat);
	g_byte_array_append(f, m->data, m->len);
	g_byte_array_unref(m);
	/* patch the iloc offsets: find the box and its two extents */
	guint8 *p = memmem(f->data, f->len, "iloc", 4);
	g_assert_nonnull(p);
	guint8 *item = p + 4 + 4 + 2 + 2;  /* type, version/flags, sizes, count */
	for (int i = 0; i < 2; i++) {
		guint32 off = i == 0 ? image_at : is_exif_outside ? 10000000 : exif_at;
		guint8 *o = item + i * 14 + 6;
		o[0] = off >> 24, o[1] = off >> 16, o[2] = off >> 8, o[3] = off;
	}
	return f;
}

static void test_heif(void)
{
	g_autoptr(GByteArray) f = heif(FALSE);
	g_autoptr(PixItem) item = parse_all_ways(f);
	g_assert_cmpstr(item->mime, ==, "image/heic");
	g_assert_null(item->error);
	g_assert_cmpstr(item->meta->make, ==, "HeifCam");
	g_assert_cmpint(item->meta->width_px, ==, 4032);
	g_assert_cmpint(item->meta->height_px, ==, 3024);
	g_assert_false(item->meta->has_osdb_hash);

	g_autoptr(GByteArray) bad = heif(TRUE);
	g_autoptr(PixItem) bad_item = parse_all_ways(bad);
	g_assert_nonnull(strstr(bad_item->error, "Exif item at offset 10000000 lies outside the file"));
	g_assert_cmpint(bad_item->meta->width_px, ==, 4032);
}

static void test_cr3(void)
{
	static const guint8 canon[16] = { 0x85, 0xc0, 0xb6, 0x87, 0x82, 0x0f, 0x11, 0xe0,
		                          0x81, 0x11, 0xf4, 0xce, 0x46, 0x2b, 0x6a, 0x48 };
	g_autoptr(GByteArray) f = cat(ftyp("crx "),
	                              box("moov", box("uuid", cat(bytes(canon, 16), box("CMT1", tiff_with_make("Canon")),
	                                                          NULL))),
	                              box("mdat", zeros(3000)), NULL);
	g_autoptr(PixItem) item = parse_all_ways(f);
	g_assert_cmpstr(item->mime, ==, "image/x-canon-cr3");
	g_assert_cmpstr(item->meta->make, ==, "Canon");
}

static void test_jxl(void)
{
	/* SizeHeader: small; height (7+1)*8; ratio 0; width (15+1)*8 */
	static const guint8 code[] = { 0xff, 0x0a, 0x0f, 0x1e, 0, 0, 0, 0 };
	g_autoptr(GByteArray) bare = bytes(code, sizeof code);
	g_autoptr(PixItem) a = parse(bare, 0);
	g_assert_cmpstr(a->mime, ==, "image/jxl");
	g_assert_cmpint(a->meta->width_px, ==, 128);
	g_assert_cmpint(a->meta->height_px, ==, 64);

	g_autoptr(GByteArray) boxed = cat(bytes("\0\0\0\x0cJXL \x0d\x0a\x87\x0a", 12), ftyp("jxl "),
	                                  box("Exif", cat(bytes("\0\0\0\0", 4), tiff_with_make("JxlCam"), NULL)),
	                                  box("jxlc", bytes(code, sizeof code)), NULL);
	g_autoptr(PixItem) b = parse_all_ways(boxed);
	g_assert_cmpstr(b->mime, ==, "image/jxl");
	g_assert_cmpstr(b->meta->make, ==, "JxlCam");
	g_assert_cmpint(b->meta->width_px, ==, 128);
}

/* --- hostile files --- */

static void test_bad_sizes(void)
{
	/* smaller than a header, past the parent, 64-bit past the file */
	g_autoptr(GByteArray) small = cat(ftyp("isom"), bytes("\0\0\0\4moov", 8), zeros(100), NULL);
	g_autoptr(PixItem) a = parse_all_ways(small);
	g_assert_nonnull(strstr(a->error, "box 'moov' at offset 20 has a bad size (4 bytes)"));

	g_autoptr(GByteArray) past = cat(ftyp("isom"), box("moov", cat(bytes("\0\0\x10\0mvhd", 8), zeros(40), NULL)), NULL);
	g_autoptr(PixItem) b = parse_all_ways(past);
	g_assert_nonnull(strstr(b->error, "box 'mvhd'"));

	g_autoptr(GByteArray) big = cat(ftyp("isom"), bytes("\0\0\0\1mdat\xff\xff\xff\xff\xff\xff\xff\xf0", 16),
	                                zeros(100), movie_moov(), NULL);
	g_autoptr(PixItem) c = parse_all_ways(big);
	g_assert_null(c->meta->date_taken);    /* the moov is inside the claimed mdat */
}

/* 'trak' in 'trak' in ...: the walk stops at its depth limit. */
static void test_deep_nesting(void)
{
	GByteArray *inner = mvhd();
	for (int i = 0; i < 200; i++)
		inner = box("trak", inner);
	g_autoptr(GByteArray) f = cat(ftyp("isom"), box("moov", inner), NULL);
	g_autoptr(PixItem) item = parse_all_ways(f);
	g_assert_nonnull(strstr(item->error, "nested too deep"));
}

/* A long fragmented movie: 'moov' first, then 150,000 'moof'/'mdat'
 * boxes.  The walk stops quietly after its box limit, metadata read, no
 * error; a 'moov' that comes after so many boxes is not reached. */
static void test_many_boxes(void)
{
	g_autoptr(GByteArray) f = cat(ftyp("iso6"), movie_moov(), NULL);
	for (int i = 0; i < 150000; i++)
		g_byte_array_append(f, (const guint8 *)(i % 2 ? "\0\0\0\x08mdat" : "\0\0\0\x08moof"), 8);
	g_autoptr(PixItem) item = parse(f, 9);
	g_assert_null(item->error);
	g_assert_cmpfloat_with_epsilon(item->meta->duration_s, 12.345, 1e-9);

	g_autoptr(GByteArray) late = ftyp("isom");
	for (int i = 0; i < 150000; i++)
		g_byte_array_append(late, (const guint8 *)"\0\0\0\x08" "free", 8);
	GByteArray *moov = movie_moov();
	g_byte_array_append(late, moov->data, moov->len);
	g_byte_array_unref(moov);
	g_autoptr(PixItem) late_item = parse(late, 0);
	g_assert_null(late_item->error);
	g_assert_true(isnan(late_item->meta->duration_s));
}

/* An 'iloc' whose extents take no bytes (all field sizes 0) but claim
 * 65,535 extents per item, for 100,000 items: the walk over it must cost
 * its size, not items times extents (6.5e9 steps before the fix). */
static void test_iloc_empty_extents(void)
{
	GByteArray *iloc = g_byte_array_new();
	put32(iloc, 2u << 24);          /* version 2 */
	g_byte_array_append(iloc, (const guint8 *)"\0\0", 2);
	put32(iloc, 100000);
	for (guint32 i = 0; i < 100000; i++) {
		put32(iloc, i + 10);    /* never the Exif item's id */
		put16(iloc, 0);         /* construction method */
		put16(iloc, 0);         /* data reference */
		put16(iloc, 0xffff);    /* extents of 0 bytes each */
	}
	GByteArray *infe = g_byte_array_new();
	put32(infe, 2u << 24);
	put16(infe, 2);
	put16(infe, 0);
	g_byte_array_append(infe, (const guint8 *)"Exif\0", 5);
	GByteArray *iinf = g_byte_array_new();
	put32(iinf, 0);
	put16(iinf, 1);
	GByteArray *e = box("infe", infe);
	g_byte_array_append(iinf, e->data, e->len);
	g_byte_array_unref(e);
	GByteArray *meta = g_byte_array_new();
	put32(meta, 0);
	GByteArray *children = cat(hdlr("pict"), box("iinf", iinf), box("iloc", iloc), NULL);
	g_byte_array_append(meta, children->data, children->len);
	g_byte_array_unref(children);
	g_autoptr(GByteArray) f = cat(ftyp("heic"), box("meta", meta), box("mdat", zeros(100)), NULL);
	gint64 t0 = g_get_monotonic_time();
	g_autoptr(PixItem) item = parse(f, 0);
	g_assert_cmpstr(item->mime, ==, "image/heic");
	g_assert_null(item->meta->make);
	/* not a timing test: a regression takes minutes, and says so */
	if (g_get_monotonic_time() - t0 > 10 * G_USEC_PER_SEC)
		g_test_message("the iloc walk took %.1f s", (g_get_monotonic_time() - t0) / 1e6);
}

/* Boxes too large for metadata are left unread, not called damage: a
 * cover picture in 'ilst', a JPEG XL codestream of which only the start
 * is read. */
static void test_large_boxes(void)
{
	GByteArray *ilst = g_byte_array_new();
	GByteArray *covr = box("covr", box("data", zeros(3 << 20)));
	g_byte_array_append(ilst, covr->data, covr->len);
	g_byte_array_unref(covr);
	g_autoptr(GByteArray) f = cat(ftyp("M4V "), box("moov", cat(mvhd(), box("udta", box("meta",
	                              cat(bytes("\0\0\0\0", 4), hdlr("mdir"), box("ilst", ilst), NULL))), NULL)), NULL);
	g_autoptr(PixItem) item = parse_all_ways(f);
	g_assert_null(item->error);
	g_assert_cmpstr(item->meta->date_taken, ==, "2020-01-02T03:04:05");

	static const guint8 code[] = { 0xff, 0x0a, 0x0f, 0x1e };
	g_autoptr(GByteArray) jxl = cat(bytes("\0\0\0\x0cJXL \x0d\x0a\x87\x0a", 12), ftyp("jxl "),
	                                box("jxlc", cat(bytes(code, sizeof code), zeros(2 << 20), NULL)), NULL);
	g_autoptr(PixItem) j = parse(jxl, 3);
	g_assert_null(j->error);
	g_assert_cmpint(j->meta->width_px, ==, 128);
}

static void test_truncation_and_mutation(void)
{
	GByteArray *files[] = { cat(ftyp("isom"), movie_moov(), box("mdat", zeros(300)), NULL), heif(FALSE) };
	g_autoptr(GRand) r = g_rand_new_with_seed(42);
	for (guint k = 0; k < G_N_ELEMENTS(files); k++) {
		g_autoptr(GByteArray) f = files[k];
		for (guint cut = 0; cut < f->len; cut++) {
			g_autoptr(GByteArray) t = bytes(f->data, cut);
			g_autoptr(PixItem) item = parse(t, cut % 4);
			g_assert_nonnull(item->mime);
		}
		for (guint i = 0; i < 3000; i++) {
			g_autoptr(GByteArray) t = bytes(f->data, f->len);
			for (int n = g_rand_int_range(r, 1, 6); n > 0; n--)
				t->data[g_rand_int_range(r, 8, (gint32)t->len)] = (guint8)g_rand_int(r);
			g_autoptr(PixItem) item = parse(t, i % 5);
			g_assert_nonnull(item->mime);
		}
	}
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/bmff/movie", test_movie);
	g_test_add_func("/bmff/osdb-hash", test_osdb_hash);
	g_test_add_func("/bmff/apple-keys", test_apple_keys);
	g_test_add_func("/bmff/heif", test_heif);
	g_test_add_func("/bmff/cr3", test_cr3);
	g_test_add_func("/bmff/jxl", test_jxl);
	g_test_add_func("/bmff/hostile/bad-sizes", test_bad_sizes);
	g_test_add_func("/bmff/hostile/deep-nesting", test_deep_nesting);
	g_test_add_func("/bmff/hostile/many-boxes", test_many_boxes);
	g_test_add_func("/bmff/large-boxes", test_large_boxes);
	g_test_add_func("/bmff/hostile/iloc-empty-extents", test_iloc_empty_extents);
	g_test_add_func("/bmff/hostile/truncation-mutation", test_truncation_and_mutation);
	return g_test_run();
}
