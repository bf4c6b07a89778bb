/*
 * test-tiff.c: unit tests of src/tiff.h, the TIFF structure checker and
 * our own field reader, and of meta-tiff.c, which feeds the reader from a
 * file read once, front to back.
 *
 * Most tests start from a small TIFF structure built here field by field
 * (build_block()), sound in both byte orders, and change exactly one
 * thing in it, so each test shows that one kind of damage is reported and
 * that the same structure without it passes.  The layout is fixed (see
 * the offsets below) so that the damage is easy to place:
 *
 *   header  IFD0 (Make, Orientation, Exif ptr, GPS ptr, XResolution)
 *   Exif IFD (ExposureTime, Interop ptr)   GPS IFD   Interop IFD
 *   IFD1 (Compression)   values: "Canon", 72/1, 1/250
 *
 * Real structures come from the fixture generator (a TIFF file in each
 * byte order, a JPEG's EXIF block with GPS and a thumbnail IFD1); these
 * must pass whole and cut at every length (the part beyond `len` cannot be
 * checked).  Random mutations of both must never crash; run the SANITIZE=1
 * build to catch reads out of bounds (every buffer is an exact-size copy).
 *
 * The reader's tests (/tiff/read/...) build TIFFs from lists of entries
 * (write_dir()) in both byte orders, with their directories near the
 * start, past 64 KiB or past 256 KiB, and check every field; hostile ones
 * (loops, counts and offsets past the end, fan-outs of SubIFDs) must end
 * quickly and keep the fields that lie before the damage.  The container
 * tests (/tiff/container/...) feed such files in pieces of many sizes and
 * expect what the reader finds in the whole buffer.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"
#include "tiff.h"
#include "testlib.h"

#include <math.h>

/* --- a TIFF structure built by hand --- */

enum {
	IFD0 = 8,                       /* 5 entries, next = IFD1 */
	IFD0_MAKE = IFD0 + 2,           /* the entries, 12 bytes each */
	IFD0_ORIENTATION = IFD0_MAKE + 12,
	IFD0_EXIF_PTR = IFD0_MAKE + 24,
	IFD0_GPS_PTR = IFD0_MAKE + 36,
	IFD0_XRES = IFD0_MAKE + 48,
	IFD0_NEXT = IFD0_MAKE + 60,
	EXIF_IFD = IFD0_NEXT + 4,       /* 2 entries */
	EXIF_EXPOSURE = EXIF_IFD + 2,
	EXIF_INTEROP_PTR = EXIF_EXPOSURE + 12,
	GPS_IFD = EXIF_INTEROP_PTR + 12 + 4,  /* 1 entry */
	INTEROP_IFD = GPS_IFD + 18,     /* 1 entry */
	IFD1 = INTEROP_IFD + 18,        /* 1 entry */
	IFD1_NEXT = IFD1 + 2 + 12,
	DATA_MAKE = IFD1 + 18,          /* "Canon\0" */
	DATA_XRES = DATA_MAKE + 6,      /* 72/1 */
	DATA_EXPOSURE = DATA_XRES + 8,  /* 1/250 */
	BLOCK_LEN = DATA_EXPOSURE + 8,
};

enum { T_BYTE = 1, T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_RATIONAL = 5, T_DOUBLE = 12, T_IFD = 13 };

typedef struct {
	guint8 *data;
	gsize len;
	gboolean is_big_endian;
} Block;

static void put16(Block *b, gsize off, guint16 v)
{
	g_assert_cmpuint(off + 2, <=, b->len);
	if (b->is_big_endian) {
		b->data[off] = (guint8)(v >> 8);
		b->data[off + 1] = (guint8)v;
	} else {
		b->data[off] = (guint8)v;
		b->data[off + 1] = (guint8)(v >> 8);
	}
}

static void put32(Block *b, gsize off, guint32 v)
{
	g_assert_cmpuint(off + 4, <=, b->len);
	if (b->is_big_endian) {
		put16(b, off, (guint16)(v >> 16));
		put16(b, off + 2, (guint16)v);
	} else {
		put16(b, off, (guint16)v);
		put16(b, off + 2, (guint16)(v >> 16));
	}
}

/* An IFD entry at `off`: tag, type, count, value or offset. */
static void put_entry(Block *b, gsize off, guint16 tag, guint16 type, guint32 count, guint32 value)
{
	put16(b, off, tag);
	put16(b, off + 2, type);
	put32(b, off + 4, count);
	if (type == T_SHORT && count == 1)
		put16(b, off + 8, (guint16)value);  /* left-justified in the field */
	else
		put32(b, off + 8, value);
}

static Block build_block(gboolean is_big_endian)
{
	Block b = { .data = g_malloc0(BLOCK_LEN), .len = BLOCK_LEN, .is_big_endian = is_big_endian };

	memcpy(b.data, is_big_endian ? "MM" : "II", 2);
	put16(&b, 2, 42);
	put32(&b, 4, IFD0);

	put16(&b, IFD0, 5);
	put_entry(&b, IFD0_MAKE, 0x010f, T_ASCII, 6, DATA_MAKE);
	put_entry(&b, IFD0_ORIENTATION, 0x0112, T_SHORT, 1, 1);
	put_entry(&b, IFD0_EXIF_PTR, 0x8769, T_LONG, 1, EXIF_IFD);
	put_entry(&b, IFD0_GPS_PTR, 0x8825, T_LONG, 1, GPS_IFD);
	put_entry(&b, IFD0_XRES, 0x011a, T_RATIONAL, 1, DATA_XRES);
	put32(&b, IFD0_NEXT, IFD1);

	put16(&b, EXIF_IFD, 2);
	put_entry(&b, EXIF_EXPOSURE, 0x829a, T_RATIONAL, 1, DATA_EXPOSURE);
	put_entry(&b, EXIF_INTEROP_PTR, 0xa005, T_LONG, 1, INTEROP_IFD);
	put32(&b, EXIF_INTEROP_PTR + 12, 0);

	put16(&b, GPS_IFD, 1);
	put_entry(&b, GPS_IFD + 2, 0x0000, T_BYTE, 4, 0);
	memcpy(b.data + GPS_IFD + 2 + 8, "\x02\x03\x00\x00", 4);
	put32(&b, GPS_IFD + 14, 0);

	put16(&b, INTEROP_IFD, 1);
	put_entry(&b, INTEROP_IFD + 2, 0x0001, T_ASCII, 4, 0);
	memcpy(b.data + INTEROP_IFD + 2 + 8, "R98", 4);
	put32(&b, INTEROP_IFD + 14, 0);

	put16(&b, IFD1, 1);
	put_entry(&b, IFD1 + 2, 0x0103, T_SHORT, 1, 6);
	put32(&b, IFD1_NEXT, 0);

	memcpy(b.data + DATA_MAKE, "Canon", 6);
	put32(&b, DATA_XRES, 72);
	put32(&b, DATA_XRES + 4, 1);
	put32(&b, DATA_EXPOSURE, 1);
	put32(&b, DATA_EXPOSURE + 4, 250);
	return b;
}

/* pix_tiff_check() on an exact-size copy of the first `len` bytes. */
static char *check_prefix(const guint8 *data, gsize len, guint64 total_len)
{
	g_autofree guint8 *copy = g_memdup2(data, len);
	return pix_tiff_check(copy, len, total_len);
}

static char *check(const Block *b)
{
	return check_prefix(b->data, b->len, b->len);
}

static void assert_sound(const guint8 *data, gsize len, guint64 total_len, const char *what)
{
	g_autofree char *problem = check_prefix(data, len, total_len);
	if (problem != NULL)
		g_error("%s (%" G_GSIZE_FORMAT " of %" G_GUINT64_FORMAT " bytes): '%s'", what, len, total_len, problem);
}

/* Asserts that the block is reported, with a non-empty text that contains
 * `mention` when that is not NULL; returns the problem (transfer full). */
static char *assert_damaged(const Block *b, const char *mention, const char *what)
{
	char *problem = check(b);
	if (problem == NULL || *problem == '\0')
		g_error("%s (%s): not reported", what, b->is_big_endian ? "MM" : "II");
	if (mention != NULL && strstr(problem, mention) == NULL)
		g_error("%s: '%s' does not mention %s", what, problem, mention);
	return problem;
}

/* Runs `damage` on a fresh block in each byte order and asserts that the
 * result is reported. */
static void for_both_orders(void (*damage)(Block *b), const char *mention, const char *what)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		g_autofree char *sound = check(&b);
		g_assert_null(sound);
		damage(&b);
		g_free(assert_damaged(&b, mention, what));
		g_free(b.data);
	}
}

/* --- fixtures --- */


/* The TIFF structure inside a JPEG's first APP1 "Exif\0\0" segment. */
static GBytes *jpeg_tiff_block(GBytes *jpeg)
{
	gsize len;
	const guint8 *d = g_bytes_get_data(jpeg, &len);
	gsize i = 2;

	while (i + 4 <= len && d[i] == 0xff) {
		guint8 m = d[i + 1];
		gsize seg = (gsize)d[i + 2] << 8 | d[i + 3];
		if (m == 0xda || m == 0xd9)
			break;
		if (m == 0xe1 && seg >= 16 && memcmp(d + i + 4, "Exif\0\0", 6) == 0)
			return g_bytes_new(d + i + 10, seg - 8);
		i += 2 + seg;
	}
	g_error("no EXIF segment in the fixture");
}

#define RICH_OPTS "--make", "Canon", "--model", "EOS", "--date", "2021:07:04 13:45:56", "--offset", "+02:00", \
	"--exposure", "1/250", "--iso", "400", "--orientation", "6", "--gps", "-33.8568,151.2153,-12.5", \
	"--lens", "L", "--exif-size", "64,48"

/* --- sound structures --- */

static void test_sound_built_block(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		assert_sound(b.data, b.len, b.len, "the built block");
		/* a total length beyond the block changes nothing */
		assert_sound(b.data, b.len, b.len + 100000, "the built block in a larger file");
		g_free(b.data);
	}
}

static void test_sound_fixture_tiff(void)
{
	for (guint big = 0; big < 2; big++) {
		g_autoptr(GBytes) tiff = big ? FIXTURE("tiff", RICH_OPTS, "--big-endian")
		                             : FIXTURE("tiff", RICH_OPTS, "--width", "40", "--height", "30");
		if (tiff == NULL)
			return;
		gsize len;
		const guint8 *d = g_bytes_get_data(tiff, &len);
		g_assert_cmpint(d[0], ==, big ? 'M' : 'I');
		/* whole, and cut anywhere: what is not at hand cannot be judged */
		for (gsize n = 8; n <= len; n++)
			assert_sound(d, n, len, "a fixture TIFF");
	}
	/* IFD0 far from the header */
	g_autoptr(GBytes) padded = FIXTURE("tiff", RICH_OPTS, "--pad-before-ifd", "70000");
	assert_sound(g_bytes_get_data(padded, NULL), g_bytes_get_size(padded), g_bytes_get_size(padded),
	             "a TIFF with padding before IFD0");
	assert_sound(g_bytes_get_data(padded, NULL), 4096, g_bytes_get_size(padded),
	             "the head of a TIFF with padding before IFD0");
}

static void test_sound_fixture_jpeg_exif(void)
{
	for (guint big = 0; big < 2; big++) {
		g_autoptr(GBytes) jpeg = big ? FIXTURE("jpeg", RICH_OPTS, "--thumbnail", "--big-endian")
		                             : FIXTURE("jpeg", RICH_OPTS, "--thumbnail");
		if (jpeg == NULL)
			return;
		g_autoptr(GBytes) block = jpeg_tiff_block(jpeg);
		gsize len;
		const guint8 *d = g_bytes_get_data(block, &len);
		for (gsize n = 8; n <= len; n++)
			assert_sound(d, n, len, "a fixture JPEG's EXIF block");
	}
}

/* Every prefix of the built block, with the total length known, passes:
 * no false alarm from structures that are merely not at hand. */
static void test_beyond_len_passes(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		for (gsize n = 8; n <= b.len; n++)
			assert_sound(b.data, n, b.len, "a prefix of the built block");
		g_free(b.data);
	}
}

/* ...but what lies beyond the total length is damage, even when the
 * pointer to it is all that is at hand. */
static void damage_ifd1_beyond_total(Block *b)
{
	put32(b, IFD0_NEXT, BLOCK_LEN + 1000);
}

static void test_beyond_total_len_reported(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		damage_ifd1_beyond_total(&b);
		/* only IFD0 at hand */
		g_autofree char *problem = check_prefix(b.data, IFD0_NEXT + 4, b.len);
		g_assert_nonnull(problem);
		g_assert_nonnull(strstr(problem, "IFD1"));
		/* the same pointer in a file long enough for it is fine */
		g_autofree char *fine = check_prefix(b.data, IFD0_NEXT + 4, BLOCK_LEN + 100000);
		g_assert_null(fine);
		g_free(b.data);
	}
}

/* --- damage --- */

static void damage_ifd0_offset_past_end(Block *b)
{
	put32(b, 4, BLOCK_LEN + 100);
}

static void damage_ifd0_offset_in_header(Block *b)
{
	put32(b, 4, 4);
}

static void damage_ifd0_offset_huge(Block *b)
{
	put32(b, 4, 0xffffffff);
}

static void test_ifd0_offset_out_of_range(void)
{
	for_both_orders(damage_ifd0_offset_past_end, "IFD0", "IFD0 past the end");
	for_both_orders(damage_ifd0_offset_in_header, "IFD0", "IFD0 inside the header");
	for_both_orders(damage_ifd0_offset_huge, "IFD0", "IFD0 at 0xffffffff");
}

static void damage_ifd0_count(Block *b)
{
	put16(b, IFD0, 0xffff);
}

static void damage_exif_count(Block *b)
{
	/* (BLOCK_LEN - EXIF_IFD) / 12 entries would just fit */
	put16(b, EXIF_IFD, (BLOCK_LEN - EXIF_IFD) / 12 + 1);
}

static void test_entry_count_past_end(void)
{
	for_both_orders(damage_ifd0_count, "IFD0", "65535 entries in IFD0");
	for_both_orders(damage_exif_count, NULL, "too many entries in the Exif IFD");
}

static void damage_type_14(Block *b)
{
	put16(b, IFD0_ORIENTATION + 2, 14);
}

static void damage_type_300(Block *b)
{
	put16(b, IFD0_XRES + 2, 300);
}

static void damage_type_in_gps(Block *b)
{
	put16(b, GPS_IFD + 2 + 2, 0xffff);
}

static void test_bad_entry_type(void)
{
	for_both_orders(damage_type_14, NULL, "an entry of type 14");
	for_both_orders(damage_type_300, NULL, "an entry of type 300");
	for_both_orders(damage_type_in_gps, NULL, "a GPS entry of type 65535");

	/* type 0 is the zero padding some writers leave at the end of an IFD */
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		memset(b.data + IFD0_XRES, 0, 12);
		assert_sound(b.data, b.len, b.len, "a zeroed entry");
		g_free(b.data);
	}
}

static void damage_make_count(Block *b)
{
	put32(b, IFD0_MAKE + 4, 1000);
}

/* 0x20000000 RATIONALs are 2^32 bytes: 0 in 32-bit arithmetic */
static void damage_rational_count_wraps(Block *b)
{
	put32(b, IFD0_XRES + 4, 0x20000000);
}

static void damage_double_count_max(Block *b)
{
	put16(b, EXIF_EXPOSURE + 2, T_DOUBLE);
	put32(b, EXIF_EXPOSURE + 4, 0xffffffff);
}

/* offset + size wraps past 2^32 to a small number */
static void damage_offset_wraps(Block *b)
{
	put32(b, IFD0_MAKE + 8, 0xfffffffe);
}

static void damage_value_one_past_end(Block *b)
{
	/* the exposure's 8 bytes end exactly at the end; 9 do not fit */
	put16(b, EXIF_EXPOSURE + 2, T_BYTE);
	put32(b, EXIF_EXPOSURE + 4, 9);
}

static void test_value_past_end(void)
{
	for_both_orders(damage_make_count, NULL, "a Make of 1000 bytes");
	for_both_orders(damage_rational_count_wraps, NULL, "2^29 rationals");
	for_both_orders(damage_double_count_max, NULL, "2^32-1 doubles");
	for_both_orders(damage_offset_wraps, NULL, "a value at offset 0xfffffffe");
	for_both_orders(damage_value_one_past_end, NULL, "a value one byte past the end");

	/* the boundary itself: a value that ends exactly at the end fits */
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		put16(&b, EXIF_EXPOSURE + 2, T_BYTE);
		put32(&b, EXIF_EXPOSURE + 4, 8);
		assert_sound(b.data, b.len, b.len, "a value ending at the end");
		g_free(b.data);
	}
}

static void damage_exif_ptr_ascii(Block *b)
{
	put16(b, IFD0_EXIF_PTR + 2, T_ASCII);
}

static void damage_exif_ptr_count(Block *b)
{
	put32(b, IFD0_EXIF_PTR + 4, 2);
	put32(b, IFD0_EXIF_PTR + 8, DATA_XRES);
}

static void damage_gps_ptr_rational(Block *b)
{
	put16(b, IFD0_GPS_PTR + 2, T_RATIONAL);
	put32(b, IFD0_GPS_PTR + 8, DATA_XRES);
}

static void damage_exif_ptr_past_end(Block *b)
{
	put32(b, IFD0_EXIF_PTR + 8, BLOCK_LEN + 8);
}

static void damage_interop_ptr_past_end(Block *b)
{
	put32(b, EXIF_INTEROP_PTR + 8, 0x7fffffff);
}

/*
 * The shape of a crash found in review: a pointer of two values, whose
 * offset lies past the bytes at hand but inside the file (a TIFF whose
 * head only is kept).  The check must report the wrong format without
 * reading at that offset (the sanitizer build would see it).
 */
static void test_pointer_past_head(void)
{
	for (int big = 0; big <= 1; big++) {
		Block b = build_block(big);
		put32(&b, IFD0_EXIF_PTR + 4, 2);
		put32(&b, IFD0_EXIF_PTR + 8, 0x7fff0000);
		g_autofree char *problem = check_prefix(b.data, b.len, G_GUINT64_CONSTANT(0x80000000));
		g_assert_nonnull(problem);
		g_assert_nonnull(strstr(problem, "wrong format"));
		g_free(b.data);
	}
}

static void test_sub_ifd_pointers(void)
{
	for_both_orders(damage_exif_ptr_ascii, NULL, "an Exif IFD pointer of type ASCII");
	for_both_orders(damage_exif_ptr_count, NULL, "an Exif IFD pointer with two values");
	for_both_orders(damage_gps_ptr_rational, NULL, "a GPS IFD pointer of type RATIONAL");
	for_both_orders(damage_exif_ptr_past_end, NULL, "an Exif IFD past the end");
	for_both_orders(damage_interop_ptr_past_end, NULL, "an Interoperability IFD past the end");

	/* type IFD (13) is as good as LONG for a pointer */
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		put16(&b, IFD0_EXIF_PTR + 2, T_IFD);
		assert_sound(b.data, b.len, b.len, "an Exif IFD pointer of type IFD");
		g_free(b.data);
	}
}

/* A pointer of the wrong type is damage, but its value field still says
 * where the directory is: libexif and exiftool follow it (the sample
 * ianare/30-type_error.jpg has an Exif pointer of type ASCII, count 154,
 * and exiftool reads its DateTimeOriginal), and so does our reader. */
static void test_read_wrong_type_pointers(void)
{
	static const struct {
		guint16 type;
		guint32 count;
	} kinds[] = { { T_ASCII, 154 }, { T_ASCII, 4 }, { T_RATIONAL, 1 }, { T_BYTE, 2 } };

	for (guint big = 0; big < 2; big++) {
		for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
			Block b = build_block(big);
			put_entry(&b, IFD0_EXIF_PTR, 0x8769, kinds[k].type, kinds[k].count, EXIF_IFD);
			g_autofree char *problem = check(&b);
			g_assert_nonnull(problem);
			g_autoptr(PixMeta) m = pix_meta_new();
			pix_tiff_read_mem(b.data, b.len, PIX_TIFF_ROLE_MAIN, m);
			g_assert_cmpfloat_with_epsilon(m->exposure_s, 1.0 / 250, 1e-12);
			g_assert_cmpstr(m->make, ==, "Canon");
			g_free(b.data);
		}
		/* of an offset's type, a value of 0 still means none */
		Block b = build_block(big);
		put_entry(&b, IFD0_EXIF_PTR, 0x8769, T_LONG, 1, 0);
		g_autoptr(PixMeta) m = pix_meta_new();
		pix_tiff_read_mem(b.data, b.len, PIX_TIFF_ROLE_MAIN, m);
		g_assert_true(isnan(m->exposure_s));
		g_free(b.data);
	}
}

static void damage_exif_ptr_to_ifd0(Block *b)
{
	put32(b, IFD0_EXIF_PTR + 8, IFD0);
}

static void damage_gps_ptr_to_ifd0(Block *b)
{
	put32(b, IFD0_GPS_PTR + 8, IFD0);
}

static void damage_interop_ptr_to_exif(Block *b)
{
	put32(b, EXIF_INTEROP_PTR + 8, EXIF_IFD);
}

static void damage_ifd1_next_to_ifd0(Block *b)
{
	put32(b, IFD1_NEXT, IFD0);
}

static void damage_ifd1_next_to_itself(Block *b)
{
	put32(b, IFD1_NEXT, IFD1);
}

static void damage_ifd0_next_to_itself(Block *b)
{
	put32(b, IFD0_NEXT, IFD0);
}

static void test_loops(void)
{
	for_both_orders(damage_exif_ptr_to_ifd0, NULL, "an Exif IFD pointer back to IFD0");
	for_both_orders(damage_gps_ptr_to_ifd0, NULL, "a GPS IFD pointer back to IFD0");
	for_both_orders(damage_interop_ptr_to_exif, NULL, "an Interoperability pointer back to the Exif IFD");
	for_both_orders(damage_ifd1_next_to_ifd0, NULL, "IFD1's next pointer back to IFD0");
	for_both_orders(damage_ifd1_next_to_itself, NULL, "IFD1's next pointer to itself");
	for_both_orders(damage_ifd0_next_to_itself, NULL, "IFD0's next pointer to itself");
}

static void test_headers(void)
{
	static const struct {
		const char *data;
		gsize len;
		gboolean is_sound;
	} cases[] = {
		{ "II\x2b\0\x08\0\0\0", 8, TRUE },              /* BigTIFF: only the header is checked */
		{ "MM\0\x2b\0\x08\0\0", 8, TRUE },
		{ "II\x2b\0\x04\0\0\0", 8, FALSE },             /* BigTIFF offsets are 8 bytes */
		{ "II\x2b\0\x08\0\x01\0", 8, FALSE },           /* reserved must be 0 */
		{ "MM\0\x2b\0\x08\xff\xff", 8, FALSE },
		{ "II\x2a\0\x00\0\0\0", 8, TRUE },              /* no IFD0 at all */
		{ "II\x29\0\x08\0\0\0", 8, FALSE },             /* unknown version */
		{ "MM\x2a\0\0\0\0\x08", 8, FALSE },             /* version in the wrong order */
		{ "XX\x2a\0\x08\0\0\0", 8, FALSE },
		{ "II\x2a\0\x08\0\0", 7, FALSE },               /* shorter than a header */
		{ "", 0, FALSE },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *problem = check_prefix((const guint8 *)cases[i].data, cases[i].len, cases[i].len);
		if ((problem == NULL) != cases[i].is_sound)
			g_error("header case %u: got '%s'", i, problem ? problem : "(sound)");
	}

	/* RAW formats with TIFF structure and their own version numbers */
	static const char *const raw_magic[] = { "IIU\0", "IIRO", "IIRS", "MMOR" };
	for (guint i = 0; i < G_N_ELEMENTS(raw_magic); i++) {
		for (guint big = 0; big < 2; big++) {
			Block b = build_block(big);
			if ((raw_magic[i][0] == 'M') != big) {
				g_free(b.data);
				continue;
			}
			memcpy(b.data, raw_magic[i], 4);
			assert_sound(b.data, b.len, b.len, raw_magic[i]);
			g_free(b.data);
		}
	}
}

/* Random damage to real structures: any answer but a crash or a read out
 * of bounds.  The answer is a sentence when there is one. */
static void mutate_and_check(const guint8 *data, gsize len, guint iterations)
{
	g_autofree guint8 *copy = g_malloc(len);

	for (guint iter = 0; iter < iterations; iter++) {
		memcpy(copy, data, len);
		guint n = (guint)g_test_rand_int_range(1, 12);
		for (guint i = 0; i < n; i++) {
			gsize at = (gsize)g_test_rand_int_range(0, (gint32)len);
			switch (g_test_rand_int_range(0, 4)) {
			case 0:
				copy[at] = (guint8)g_test_rand_int_range(0, 256);
				break;
			case 1:
				copy[at] = 0xff;
				break;
			case 2:
				copy[at] = 0;
				break;
			default:
				copy[at] ^= (guint8)(1u << g_test_rand_int_range(0, 8));
			}
		}
		gsize cut = g_test_rand_bit() ? len : (gsize)g_test_rand_int_range(0, (gint32)len + 1);
		guint64 total = cut + (g_test_rand_bit() ? 0 : (guint64)g_test_rand_int_range(0, 100000));
		g_autofree char *problem = check_prefix(copy, cut, total);
		if (problem != NULL) {
			g_assert_cmpuint(strlen(problem), >, 0);
			g_assert_true(g_utf8_validate(problem, -1, NULL));
		}
	}
}

static void test_random_mutations(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_block(big);
		mutate_and_check(b.data, b.len, 3000);
		g_free(b.data);
	}
	g_autoptr(GBytes) jpeg = FIXTURE("jpeg", RICH_OPTS, "--thumbnail");
	if (jpeg == NULL)
		return;
	g_autoptr(GBytes) block = jpeg_tiff_block(jpeg);
	mutate_and_check(g_bytes_get_data(block, NULL), g_bytes_get_size(block), 3000);
	g_autoptr(GBytes) tiff = FIXTURE("tiff", RICH_OPTS, "--big-endian");
	mutate_and_check(g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff), 2000);
}

/* --- the field reader: TIFFs built from lists of entries --- */

enum { T_SRATIONAL = 10, T_UNDEF = 7 };

/* One entry: its values in v (RATIONALs as numerator, denominator pairs),
 * text, or bytes; `is_raw` writes count and v[0] as they are (for counts
 * and offsets no value could back). */
typedef struct {
	guint16 tag;
	guint16 type;
	guint32 count;          /* values; 0 for text: strlen + 1 */
	const char *text;
	guint32 v[6];
	const guint8 *bytes;    /* UNDEFINED values, `count` of them */
	gboolean is_raw;
} Ent;

#define TXT(tag, s) { (tag), T_ASCII, 0, (s), { 0 }, NULL, FALSE }
#define SHORTS(tag, n, ...) { (tag), T_SHORT, (n), NULL, { __VA_ARGS__ }, NULL, FALSE }
#define LONGS(tag, n, ...) { (tag), T_LONG, (n), NULL, { __VA_ARGS__ }, NULL, FALSE }
#define RATS(tag, n, ...) { (tag), T_RATIONAL, (n), NULL, { __VA_ARGS__ }, NULL, FALSE }
#define BYTES(tag, n, ...) { (tag), T_BYTE, (n), NULL, { __VA_ARGS__ }, NULL, FALSE }
#define RAW(tag, type, n, value) { (tag), (type), (n), NULL, { (value) }, NULL, TRUE }

static guint value_size(guint16 type)
{
	switch (type) {
	case T_BYTE: case T_ASCII: case T_UNDEF:
		return 1;
	case T_SHORT:
		return 2;
	case T_LONG: case T_IFD:
		return 4;
	case T_RATIONAL: case T_SRATIONAL: case T_DOUBLE:
		return 8;
	default:
		g_assert_not_reached();
	}
}

static void write_value(Block *b, gsize at, const Ent *e, guint32 count)
{
	if (e->text != NULL) {
		memcpy(b->data + at, e->text, MIN(count, strlen(e->text) + 1));
		return;
	}
	if (e->bytes != NULL) {
		memcpy(b->data + at, e->bytes, count);
		return;
	}
	for (guint32 i = 0; i < count; i++) {
		switch (e->type) {
		case T_BYTE:
			b->data[at + i] = (guint8)e->v[i];
			break;
		case T_SHORT:
			put16(b, at + 2 * i, (guint16)e->v[i]);
			break;
		case T_LONG: case T_IFD:
			put32(b, at + 4 * i, e->v[i]);
			break;
		case T_RATIONAL: case T_SRATIONAL:
			put32(b, at + 8 * i, e->v[2 * i]);
			put32(b, at + 8 * i + 4, e->v[2 * i + 1]);
			break;
		default:
			g_assert_not_reached();
		}
	}
}

/* A directory of `n` entries at `off`, next pointer `next`; values of more
 * than 4 bytes go at *data_at onwards (moved past them). */
static void write_dir(Block *b, guint32 off, const Ent *e, guint n, guint32 next, guint32 *data_at)
{
	put16(b, off, (guint16)n);
	for (guint i = 0; i < n; i++) {
		gsize en = off + 2 + 12 * i;
		guint32 count = e[i].count != 0 || e[i].text == NULL ? e[i].count : (guint32)strlen(e[i].text) + 1;
		put16(b, en, e[i].tag);
		put16(b, en + 2, e[i].type);
		put32(b, en + 4, count);
		if (e[i].is_raw) {
			put32(b, en + 8, e[i].v[0]);
			continue;
		}
		guint32 bytes = count * value_size(e[i].type);
		gsize at = en + 8;
		if (bytes > 4) {
			*data_at = (*data_at + 1) & ~1u;
			put32(b, en + 8, *data_at);
			at = *data_at;
			*data_at += bytes;
		}
		write_value(b, at, &e[i], count);
	}
	put32(b, off + 2 + 12 * n, next);
}

/* A zeroed TIFF of `len` bytes with its header: version 42 (or another),
 * IFD0 at `ifd0`. */
static Block new_tiff(gsize len, gboolean is_big_endian, guint16 version, guint32 ifd0)
{
	Block b = { .data = g_malloc0(len), .len = len, .is_big_endian = is_big_endian };
	memcpy(b.data, is_big_endian ? "MM" : "II", 2);
	put16(&b, 2, version);
	put32(&b, 4, ifd0);
	return b;
}

#define N(a) G_N_ELEMENTS(a)

/* The rich TIFF: IFD0 at `ifd0_at`, the Exif IFD at `exif_at` and the
 * GPS IFD 1000 bytes after it, each followed by its values. */
static Block build_rich(gboolean big, guint32 ifd0_at, guint32 exif_at, gsize len)
{
	Block b = new_tiff(len, big, 42, ifd0_at);
	guint32 gps_at = exif_at + 1000, at;
	const Ent ifd0[] = {
		TXT(0x010f, "Canon"), TXT(0x0110, "EOS R5"), SHORTS(0x0112, 1, 6),
		TXT(0x0132, "2020:01:01 00:00:00"), LONGS(0x8769, 1, exif_at), LONGS(0x8825, 1, gps_at),
	};
	const Ent exif[] = {
		RATS(0x829a, 1, 1, 250), RATS(0x829d, 1, 28, 10), SHORTS(0x8827, 2, 0, 400),
		TXT(0x9003, "2021:07:04 13:45:56"), TXT(0x9011, "+02:00"), RATS(0x920a, 1, 50, 1),
		TXT(0x9291, "25"), TXT(0xa434, "RF24-105mm F4 L IS USM"),
	};
	const Ent gps[] = {
		TXT(1, "S"), RATS(2, 3, 33, 1, 51, 1, 2448, 100), TXT(3, "E"),
		RATS(4, 3, 151, 1, 12, 1, 5508, 100), BYTES(5, 1, 1), RATS(6, 1, 125, 10),
	};
	at = ifd0_at + 2 + 12 * N(ifd0) + 4;
	write_dir(&b, ifd0_at, ifd0, N(ifd0), 0, &at);
	at = exif_at + 2 + 12 * N(exif) + 4;
	write_dir(&b, exif_at, exif, N(exif), 0, &at);
	g_assert_cmpuint(at, <, gps_at);
	at = gps_at + 2 + 12 * N(gps) + 4;
	write_dir(&b, gps_at, gps, N(gps), 0, &at);
	g_assert_cmpuint(at, <=, len);
	return b;
}

static const double RICH_LAT = -(33 + 51 / 60.0 + 24.48 / 3600);
static const double RICH_LON = 151 + 12 / 60.0 + 55.08 / 3600;

static void assert_rich_exif(const PixMeta *m)
{
	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56.25");
	g_assert_cmpstr(m->date_tz, ==, "+02:00");
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	g_assert_cmpfloat_with_epsilon(m->exposure_s, 0.004, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->fnumber, 2.8, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->focal_mm, 50, 1e-12);
	g_assert_cmpint(m->iso, ==, 400);
	g_assert_cmpstr(m->lens, ==, "RF24-105mm F4 L IS USM");
}

static void assert_rich_gps(const PixMeta *m)
{
	g_assert_cmpfloat_with_epsilon(m->gps_lat, RICH_LAT, 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, RICH_LON, 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -12.5, 1e-12);
}

static void assert_rich(const PixMeta *m)
{
	g_assert_cmpstr(m->make, ==, "Canon");
	g_assert_cmpstr(m->model, ==, "EOS R5");
	g_assert_cmpint(m->orientation, ==, 6);
	assert_rich_exif(m);
	assert_rich_gps(m);
	/* the rich TIFF has no ImageWidth */
	g_assert_cmpint(m->width_px, ==, -1);
	g_assert_cmpint(m->height_px, ==, -1);
}

/* pix_tiff_read_mem() on an exact-size copy of the first `len` bytes. */
static PixMeta *read_prefix(const guint8 *data, gsize len, PixTiffRole role)
{
	g_autofree guint8 *copy = g_memdup2(data, len);
	PixMeta *m = pix_meta_new();
	pix_tiff_read_mem(copy, len, role, m);
	return m;
}

static PixMeta *read_block(const Block *b)
{
	return read_prefix(b->data, b->len, PIX_TIFF_ROLE_MAIN);
}

static void test_read_fields(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_rich(big, 8, 200, 4000);
		g_autoptr(PixMeta) m = read_block(&b);
		assert_rich(m);
		g_free(b.data);
	}
}

/* Directories and values past 64 KiB (where libexif, once read first, could not go). */
static void test_read_past_64k(void)
{
	static const struct {
		guint32 ifd0_at, exif_at;
		gsize len;
	} layouts[] = {
		{ 8, 70000, 80000 },
		{ 70000, 300000, 310000 },
		{ 400000, 200, 400200 },        /* the Exif IFD before IFD0 */
	};
	for (guint i = 0; i < N(layouts); i++) {
		for (guint big = 0; big < 2; big++) {
			Block b = build_rich(big, layouts[i].ifd0_at, layouts[i].exif_at, layouts[i].len);
			g_autoptr(PixMeta) m = read_block(&b);
			assert_rich(m);
			g_free(b.data);
		}
	}
}

/* Fields already known stay; a worse date gives way to a better one. */
static void test_read_only_unknown(void)
{
	Block b = build_rich(FALSE, 8, 200, 4000);
	g_autofree guint8 *copy = g_memdup2(b.data, b.len);
	g_autoptr(PixMeta) m = pix_meta_new();
	m->make = g_strdup("Mine");
	m->lens = g_strdup("My lens");
	m->exposure_s = 2;
	m->iso = 100;
	m->orientation = 1;
	m->gps_lat = 1;
	m->gps_lon = 2;
	m->width_px = 10;
	m->height_px = 20;
	m->date_taken = g_strdup("1999-01-01T00:00:00");
	m->date_source = "ModifyDate";
	pix_tiff_read_mem(copy, b.len, PIX_TIFF_ROLE_MAIN, m);
	g_assert_cmpstr(m->make, ==, "Mine");
	g_assert_cmpstr(m->model, ==, "EOS R5");
	g_assert_cmpstr(m->lens, ==, "My lens");
	g_assert_cmpfloat(m->exposure_s, ==, 2);
	g_assert_cmpint(m->iso, ==, 100);
	g_assert_cmpint(m->orientation, ==, 1);
	g_assert_cmpfloat(m->gps_lat, ==, 1);
	g_assert_cmpfloat(m->gps_lon, ==, 2);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -12.5, 1e-12);
	g_assert_cmpint(m->width_px, ==, 10);
	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56.25");
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");

	/* ...but a date from DateTimeOriginal stays */
	g_autoptr(PixMeta) kept = pix_meta_new();
	kept->date_taken = g_strdup("1999-01-01T00:00:00");
	kept->date_source = "DateTimeOriginal";
	pix_tiff_read_mem(copy, b.len, PIX_TIFF_ROLE_MAIN, kept);
	g_assert_cmpstr(kept->date_taken, ==, "1999-01-01T00:00:00");
	g_assert_null(kept->date_tz);
	g_free(b.data);
}

/* CR3 keeps its Exif and GPS directories as TIFFs of their own: their
 * IFD0 is the Exif or GPS directory. */
static void test_read_roles(void)
{
	for (guint big = 0; big < 2; big++) {
		Block rich = build_rich(big, 8, 200, 4000);
		/* the Exif IFD moved to IFD0's place: the header points to it */
		put32(&rich, 4, 200);
		g_autoptr(PixMeta) exif = read_prefix(rich.data, rich.len, PIX_TIFF_ROLE_EXIF);
		assert_rich_exif(exif);
		g_assert_null(exif->make);
		g_assert_true(isnan(exif->gps_lat));
		/* read as a GPS directory, the Exif tags mean nothing */
		g_autoptr(PixMeta) wrong = read_prefix(rich.data, rich.len, PIX_TIFF_ROLE_GPS);
		g_assert_true(isnan(wrong->gps_lat) && isnan(wrong->gps_lon));
		g_assert_null(wrong->date_taken);

		put32(&rich, 4, 1200);
		g_autoptr(PixMeta) gps = read_prefix(rich.data, rich.len, PIX_TIFF_ROLE_GPS);
		assert_rich_gps(gps);
		g_assert_null(gps->make);
		g_assert_null(gps->date_taken);
		g_assert_cmpint(gps->iso, ==, -1);
		g_free(rich.data);
	}
}

/* BigTIFF: 8-byte offsets and counts, 20-byte entries. */
static void test_read_bigtiff(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = { .data = g_malloc0(400), .len = 400, .is_big_endian = big };
		memcpy(b.data, big ? "MM" : "II", 2);
		put16(&b, 2, 43);
		put16(&b, 4, 8);
		/* 64-bit offsets: the high word first in MM order */
		put32(&b, big ? 12 : 8, 16);
		/* IFD0 at 16: 8-byte count, 2 entries of 20 bytes, 8-byte next */
		put32(&b, big ? 20 : 16, 2);
		gsize e = 24;
		put16(&b, e, 0x010f);
		put16(&b, e + 2, T_ASCII);
		/* 10 bytes: more than the 8 an entry holds */
		put32(&b, e + (big ? 8 : 4), 10);
		put32(&b, e + (big ? 16 : 12), 200);
		memcpy(b.data + 200, "Canon EOS", 10);
		e += 20;
		put16(&b, e, 0x0112);
		put16(&b, e + 2, T_SHORT);
		put32(&b, e + (big ? 8 : 4), 1);
		put16(&b, e + 12, 8);
		g_autoptr(PixMeta) m = read_block(&b);
		g_assert_cmpstr(m->make, ==, "Canon EOS");
		g_assert_cmpint(m->orientation, ==, 8);

		/* IFD0 at an offset past 4 GiB: nothing, no crash */
		put32(&b, big ? 8 : 12, 1);
		g_autoptr(PixMeta) none = read_block(&b);
		g_assert_null(none->make);
		g_free(b.data);
	}
}

/* The fixture generator's TIFFs: its real size, not the Exif claim. */
static void test_read_fixture(void)
{
	for (guint i = 0; i < 3; i++) {
		g_autoptr(GBytes) tiff = i == 0 ? FIXTURE("tiff", RICH_OPTS, "--width", "40", "--height", "30")
		                       : i == 1 ? FIXTURE("tiff", RICH_OPTS, "--width", "40", "--height", "30",
		                                          "--big-endian")
		                                : FIXTURE("tiff", RICH_OPTS, "--width", "40", "--height", "30",
		                                          "--pad-before-ifd", "70000");
		if (tiff == NULL)
			return;
		gsize len;
		const guint8 *d = g_bytes_get_data(tiff, &len);
		g_autoptr(PixMeta) m = read_prefix(d, len, PIX_TIFF_ROLE_MAIN);
		g_assert_cmpstr(m->make, ==, "Canon");
		g_assert_cmpstr(m->model, ==, "EOS");
		g_assert_cmpstr(m->lens, ==, "L");
		g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56");
		g_assert_cmpstr(m->date_tz, ==, "+02:00");
		g_assert_cmpfloat_with_epsilon(m->exposure_s, 0.004, 1e-12);
		g_assert_cmpint(m->iso, ==, 400);
		g_assert_cmpint(m->orientation, ==, 6);
		g_assert_cmpfloat_with_epsilon(m->gps_lat, -33.8568, 1e-6);
		g_assert_cmpfloat_with_epsilon(m->gps_lon, 151.2153, 1e-6);
		g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -12.5, 1e-6);
		g_assert_cmpint(m->width_px, ==, 40);
		g_assert_cmpint(m->height_px, ==, 30);
	}
}

/* --- RAW or picture: what the directories hold (PixTiffKind) --- */

static const guint8 *get_block(void *src, guint64 off, gsize len)
{
	const Block *b = src;
	return off <= b->len && len <= b->len - off ? b->data + off : NULL;
}

/* IFD0 (Make, optionally DNGVersion) with one SubIFD whose photometric
 * interpretation and compression are given (0: tag absent). */
static PixTiffKind read_kind(gboolean big, const char *make, gboolean has_dng_version, guint32 photometric,
                             guint32 compression)
{
	Block b = new_tiff(2000, big, 42, 8);
	Ent e0[4], e1[3];
	guint n0 = 0, n1 = 0;
	e0[n0++] = (Ent)TXT(0x010f, make);
	e0[n0++] = (Ent)LONGS(0x014a, 1, 600);
	if (has_dng_version)
		e0[n0++] = (Ent)LONGS(0xc612, 1, 0x01040000);
	e1[n1++] = (Ent)LONGS(0x0100, 1, 4000);
	if (photometric != 0)
		e1[n1++] = (Ent)SHORTS(0x0106, 1, photometric);
	if (compression != 0)
		e1[n1++] = (Ent)SHORTS(0x0103, 1, compression);
	guint32 data = 300;
	write_dir(&b, 8, e0, n0, 0, &data);
	data = 800;
	write_dir(&b, 600, e1, n1, 0, &data);
	PixTiffKind kind = { .is_dng = TRUE, .has_raw_data = TRUE };
	g_autoptr(PixMeta) m = pix_meta_new();
	pix_tiff_read(get_block, &b, b.len, PIX_TIFF_ROLE_MAIN, m, &kind);
	g_assert_cmpstr(m->make, ==, make);
	g_free(b.data);
	return kind;
}

static void test_kind(void)
{
	for (guint big = 0; big < 2; big++) {
		PixTiffKind k;
		k = read_kind(big, "NIKON CORPORATION", FALSE, 32803, 34713);       /* NEF: CFA */
		g_assert_true(k.has_raw_data && !k.is_dng);
		k = read_kind(big, "SONY", FALSE, 0, 32767);                        /* ARW: Sony's compression */
		g_assert_true(k.has_raw_data);
		k = read_kind(big, "Canon", TRUE, 34892, 7);                        /* DNG: LinearRaw */
		g_assert_true(k.has_raw_data && k.is_dng);
		k = read_kind(big, "NIKON CORPORATION", FALSE, 2, 5);               /* a scan: RGB, LZW */
		g_assert_false(k.has_raw_data || k.is_dng);
		k = read_kind(big, "Adobe", FALSE, 0, 0);
		g_assert_false(k.has_raw_data || k.is_dng);
	}
}

/* --- where the image data ends --- */

/*
 * IFD0 with two strips (StripOffsets/StripByteCounts: 100 bytes at 1000,
 * 50 at 1100) and a SubIFD with one tile of `tile_len` bytes at `tile_off`.
 */
static PixTiffKind read_data_end(gboolean big, guint32 tile_off, guint32 tile_len)
{
	Block b = new_tiff(2000, big, 42, 8);
	Ent e0[3] = { LONGS(0x0111, 2, 1000, 1100), LONGS(0x0117, 2, 100, 50), LONGS(0x014a, 1, 600) };
	Ent e1[2] = { LONGS(0x0144, 1, tile_off), LONGS(0x0145, 1, tile_len) };
	guint32 data = 300;
	write_dir(&b, 8, e0, G_N_ELEMENTS(e0), 0, &data);
	data = 800;
	write_dir(&b, 600, e1, G_N_ELEMENTS(e1), 0, &data);
	PixTiffKind kind = { 0 };
	g_autoptr(PixMeta) m = pix_meta_new();
	pix_tiff_read(get_block, &b, b.len, PIX_TIFF_ROLE_MAIN, m, &kind);
	g_free(b.data);
	return kind;
}

static void test_data_end(void)
{
	for (guint big = 0; big < 2; big++) {
		/* the SubIFD's tile ends furthest */
		PixTiffKind k = read_data_end(big, 1200, 700);
		g_assert_cmpuint(k.data.end, ==, 1900);
		g_assert_cmpuint(k.data.off, ==, 1200);
		g_assert_cmpstr(k.data.what, ==, "tile");
		/* the second strip does (1100 + 50) */
		k = read_data_end(big, 1000, 20);
		g_assert_cmpuint(k.data.end, ==, 1150);
		g_assert_cmpuint(k.data.off, ==, 1100);
		g_assert_cmpstr(k.data.what, ==, "strip");
		/* a tile past the TIFF's end: meta-tiff.c calls the file truncated */
		k = read_data_end(big, 1200, 4998800);
		g_assert_cmpuint(k.data.end, ==, 5000000);
	}
}

/* --- the main image's pixel size --- */

/* IFD0 (SubfileType `t0`, none when > 2) with two SubIFDs (SubfileTypes
 * t1, t2) and IFD1 (t3); directory i is 10 * (i + 1) x 10 * (i + 1) + 1. */
static Block build_sizes(gboolean big, guint32 t0, guint32 t1, guint32 t2, guint32 t3)
{
	Block b = new_tiff(2000, big, 42, 8);
	static const guint32 at[] = { 8, 300, 600, 900 };
	const guint32 types[] = { t0, t1, t2, t3 };
	for (guint i = 0; i < 4; i++) {
		Ent e[5];
		guint n = 0;
		if (types[i] <= 2)
			e[n++] = (Ent)LONGS(0x00fe, 1, types[i]);
		e[n++] = (Ent)LONGS(0x0100, 1, 10 * (i + 1));
		e[n++] = (Ent)SHORTS(0x0101, 1, 10 * (i + 1) + 1);
		if (i == 0)
			e[n++] = (Ent)LONGS(0x014a, 2, at[1], at[2]);
		guint32 data = at[i] + 200;
		write_dir(&b, at[i], e, n, i == 0 ? at[3] : 0, &data);
	}
	return b;
}

static void test_size_subifds(void)
{
	static const struct {
		guint32 t0, t1, t2, t3;
		gint64 w;
	} cases[] = {
		{ 1, 1, 0, 1, 30 },     /* NEF: a preview in IFD0, the image in SubIFD1 */
		{ 1, 0, 1, 1, 20 },     /* DNG: the raw image in SubIFD0 */
		{ 9, 1, 1, 9, 10 },     /* no full-resolution directory: the first */
		{ 9, 9, 9, 0, 40 },     /* the full-resolution image in IFD1 */
		{ 0, 0, 0, 0, 10 },     /* several: the first of them */
		{ 1, 2, 1, 1, 10 },     /* a page (2) is not the full image */
	};
	for (guint big = 0; big < 2; big++) {
		for (guint i = 0; i < N(cases); i++) {
			Block b = build_sizes(big, cases[i].t0, cases[i].t1, cases[i].t2, cases[i].t3);
			g_autoptr(PixMeta) m = read_block(&b);
			if (m->width_px != cases[i].w || m->height_px != cases[i].w + 1)
				g_error("size case %u (%s): %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
				        i, big ? "MM" : "II", m->width_px, m->height_px);
			g_free(b.data);
		}
	}

	/* a size already known (a JPEG's SOF) stays */
	Block nef = build_sizes(FALSE, 1, 1, 0, 1);
	g_autofree guint8 *copy = g_memdup2(nef.data, nef.len);
	g_autoptr(PixMeta) known = pix_meta_new();
	known->width_px = 7;
	known->height_px = 9;
	pix_tiff_read_mem(copy, nef.len, PIX_TIFF_ROLE_MAIN, known);
	g_assert_cmpint(known->width_px, ==, 7);
	g_assert_cmpint(known->height_px, ==, 9);
	/* ...and none is read from a block whose IFD0 is not IFD0 */
	for (guint role = PIX_TIFF_ROLE_EXIF; role <= PIX_TIFF_ROLE_GPS; role++) {
		g_autoptr(PixMeta) block = read_prefix(nef.data, nef.len, role);
		g_assert_cmpint(block->width_px, ==, -1);
		g_assert_cmpint(block->height_px, ==, -1);
	}
	g_free(nef.data);

	/* a width without a height is no size */
	Block b = new_tiff(200, FALSE, 42, 8);
	const Ent e[] = { LONGS(0x0100, 1, 100) };
	guint32 data = 100;
	write_dir(&b, 8, e, N(e), 0, &data);
	g_autoptr(PixMeta) m = read_block(&b);
	g_assert_cmpint(m->width_px, ==, -1);
	g_assert_cmpint(m->height_px, ==, -1);
	g_free(b.data);
}

/* RW2: version 0x55; IFD0 holds the sensor's borders and the ISO. */
static void test_size_rw2(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = new_tiff(400, big, 0x55, 8);
		const Ent e[] = {
			SHORTS(0x0002, 1, 3724), SHORTS(0x0003, 1, 2754), SHORTS(0x0004, 1, 6),
			SHORTS(0x0005, 1, 8), SHORTS(0x0006, 1, 2742), SHORTS(0x0007, 1, 3656),
			SHORTS(0x0017, 1, 80), TXT(0x010f, "Panasonic"),
		};
		guint32 data = 200;
		write_dir(&b, 8, e, N(e), 0, &data);
		g_autoptr(PixMeta) m = read_block(&b);
		g_assert_cmpint(m->width_px, ==, 3648);
		g_assert_cmpint(m->height_px, ==, 2736);
		g_assert_cmpint(m->iso, ==, 80);
		g_assert_cmpstr(m->make, ==, "Panasonic");

		/* the same tags in a plain TIFF are other tags */
		put16(&b, 2, 42);
		g_autoptr(PixMeta) plain = read_block(&b);
		g_assert_cmpint(plain->width_px, ==, -1);
		g_assert_cmpint(plain->iso, ==, -1);
		g_free(b.data);
	}
}

static void le32(guint8 *p, guint32 v, gboolean big)
{
	for (guint i = 0; i < 4; i++)
		p[big ? 3 - i : i] = (guint8)(v >> (8 * i));
}

/* IIQ: Phase One's maker note has its own directory with the image's size
 * and the lens; IFD0 holds a 1x1 placeholder. */
static void test_size_phase_one(void)
{
	for (guint variant = 0; variant < 3; variant++) {
		/* the note's own byte order: "IIII" or "MMMM" whatever the TIFF's */
		gboolean note_big = variant == 1;
		guint8 note[160] = { 0 };
		memcpy(note, note_big ? "MMMMRaw\x01" : "IIIICwaR", 8);
		le32(note + 8, 16, note_big);
		le32(note + 16, 3, note_big);
		static const guint32 entries[3][4] = {
			{ 0x010c, 4, 4, 7320 }, { 0x010d, 4, 4, 5484 }, { 0x0412, 1, 23, 100 },
		};
		for (guint i = 0; i < 3; i++) {
			for (guint k = 0; k < 4; k++)
				le32(note + 24 + 16 * i + 4 * k, entries[i][k], note_big);
		}
		memcpy(note + 100, "Mamiya LS 80mm f/2.8 D", 23);
		if (variant == 2)
			memcpy(note, "IIIIXXXX", 8);    /* not Phase One's */

		Block b = new_tiff(1000, variant == 1, 42, 8);
		const Ent ifd0[] = {
			LONGS(0x00fe, 1, 0), LONGS(0x0100, 1, 1), LONGS(0x0101, 1, 1), LONGS(0x8769, 1, 300),
		};
		Ent exif[] = { { 0x927c, T_UNDEF, sizeof note, NULL, { 0 }, note, FALSE } };
		guint32 data = 100;
		write_dir(&b, 8, ifd0, N(ifd0), 0, &data);
		data = 400;
		write_dir(&b, 300, exif, N(exif), 0, &data);
		g_autoptr(PixMeta) m = read_block(&b);
		if (variant == 2) {
			g_assert_cmpint(m->width_px, ==, 1);
			g_assert_null(m->lens);
		} else {
			g_assert_cmpint(m->width_px, ==, 7320);
			g_assert_cmpint(m->height_px, ==, 5484);
			g_assert_cmpstr(m->lens, ==, "Mamiya LS 80mm f/2.8 D");
		}
		g_free(b.data);
	}
}

/* --- hostile structures --- */

/* A small TIFF: IFD0 at 8 (Make, Model, Exif pointer to 200, SubIFDs to
 * 400), the Exif IFD (ExposureTime) at 200, a SubIFD at 400. */
static Block build_small(gboolean big)
{
	Block b = new_tiff(1200, big, 42, 8);
	const Ent ifd0[] = {
		TXT(0x010f, "Canon"), TXT(0x0110, "EOS 5D"), LONGS(0x014a, 1, 400), LONGS(0x8769, 1, 200),
	};
	const Ent exif[] = { RATS(0x829a, 1, 1, 250) };
	const Ent sub[] = { LONGS(0x0100, 1, 64), LONGS(0x0101, 1, 48) };
	guint32 data = 100;
	write_dir(&b, 8, ifd0, N(ifd0), 0, &data);
	data = 300;
	write_dir(&b, 200, exif, N(exif), 0, &data);
	data = 500;
	write_dir(&b, 400, sub, N(sub), 0, &data);
	return b;
}

enum { SMALL_IFD0_NEXT = 8 + 2 + 12 * 4, SMALL_SUBIFDS = 8 + 2 + 24, SMALL_EXIF_PTR = 8 + 2 + 36 };

static void test_read_loops(void)
{
	static const struct {
		gsize at;               /* where the pointer is */
		guint32 to;
		gboolean has_exif;      /* the Exif IFD is still read */
	} cases[] = {
		{ SMALL_IFD0_NEXT, 8, TRUE },           /* IFD0's next: itself */
		{ SMALL_EXIF_PTR + 8, 8, FALSE },       /* the Exif IFD: IFD0 */
		{ SMALL_SUBIFDS + 8, 8, TRUE },         /* a SubIFD: IFD0 */
		{ 400 + 2 + 24, 400, TRUE },            /* the SubIFD's next: itself (not followed) */
		{ 200 + 2 + 12, 8, TRUE },              /* the Exif IFD's next: IFD0 (not followed) */
	};
	for (guint big = 0; big < 2; big++) {
		for (guint i = 0; i < N(cases); i++) {
			Block b = build_small(big);
			put32(&b, cases[i].at, cases[i].to);
			g_autoptr(PixMeta) m = read_block(&b);
			g_assert_cmpstr(m->make, ==, "Canon");
			g_assert_cmpstr(m->model, ==, "EOS 5D");
			g_assert_cmpint(isnan(m->exposure_s), ==, !cases[i].has_exif);
			g_free(b.data);
		}
		/* SubIFDs that point at each other, and IFD1 <-> IFD2 */
		Block b = build_small(big);
		put32(&b, SMALL_IFD0_NEXT, 600);
		const Ent to_sub[] = { LONGS(0x014a, 2, 400, 600) };
		guint32 data = 700;
		write_dir(&b, 600, to_sub, 1, 800, &data);
		write_dir(&b, 800, to_sub, 1, 600, &data);
		const Ent sub[] = { LONGS(0x0100, 1, 64), LONGS(0x0101, 1, 48), LONGS(0x014a, 2, 400, 600) };
		write_dir(&b, 400, sub, N(sub), 400, &data);
		g_autoptr(PixMeta) m = read_block(&b);
		g_assert_cmpstr(m->make, ==, "Canon");
		g_assert_cmpint(m->width_px, ==, 64);
		g_free(b.data);
	}
}

static void test_read_past_end(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_small(big);
		/* the Exif IFD far away: IFD0 still read */
		put32(&b, SMALL_EXIF_PTR + 8, 0xfffffff0);
		g_autoptr(PixMeta) m = read_block(&b);
		g_assert_cmpstr(m->make, ==, "Canon");
		g_assert_true(isnan(m->exposure_s));
		g_free(b.data);

		/* the Exif IFD's entries run past the end: it is skipped, the
		 * rest read */
		b = build_small(big);
		put16(&b, 200, 0xffff);
		g_autoptr(PixMeta) count = read_block(&b);
		g_assert_cmpstr(count->make, ==, "Canon");
		g_assert_true(isnan(count->exposure_s));
		g_assert_cmpint(count->width_px, ==, 64);
		g_free(b.data);

		/* ...IFD0's: nothing is read (as exiftool has it) */
		b = build_small(big);
		put16(&b, 8, 0xffff);
		g_autoptr(PixMeta) ifd0 = read_block(&b);
		g_assert_null(ifd0->make);
		g_assert_cmpint(ifd0->width_px, ==, -1);
		g_free(b.data);

		/* a value past the end, or too large: that field unknown */
		static const struct {
			gsize at;
			guint32 value;
		} values[] = {
			{ 8 + 2 + 12 + 8, 0xfffffffe },         /* Model's offset wraps */
			{ 8 + 2 + 12 + 8, 1196 },               /* Model's 7 bytes end 3 past the end */
			{ 8 + 2 + 12 + 4, 0xffffffff },         /* Model's count */
			{ 8 + 2 + 12 + 4, 0x20000000 },
		};
		for (guint i = 0; i < N(values); i++) {
			b = build_small(big);
			put32(&b, values[i].at, values[i].value);
			g_autoptr(PixMeta) v = read_block(&b);
			g_assert_cmpstr(v->make, ==, "Canon");
			g_assert_null(v->model);
			g_assert_cmpfloat_with_epsilon(v->exposure_s, 0.004, 1e-12);
			g_free(b.data);
		}
		/* an exposure of 2^29 RATIONALs (2^32 bytes: 0 in 32 bits) */
		b = build_small(big);
		put32(&b, 200 + 2 + 4, 0x20000000);
		g_autoptr(PixMeta) wrap = read_block(&b);
		g_assert_true(isnan(wrap->exposure_s));
		g_free(b.data);
		/* 2^32 - 1 SubIFD pointers */
		b = build_small(big);
		put32(&b, SMALL_SUBIFDS + 4, 0xffffffff);
		g_autoptr(PixMeta) subs = read_block(&b);
		g_assert_cmpstr(subs->make, ==, "Canon");
		g_assert_cmpint(subs->width_px, ==, -1);
		g_free(b.data);
	}

	/* headers that lead nowhere */
	static const char *const headers[] = {
		"II\x2a\0\0\0\0\0", "II\x2a\0\x04\0\0\0", "II\x2a\0\xff\xff\xff\xff", "MM\0\x2a\xff\xff\xff\xf0",
		"II\x2b\0\x08\0\0\0", "II\x2b\0\x04\0\0\0", "XX\x2a\0\x08\0\0\0", "II\x2a\0\x08\0\0",
	};
	for (guint i = 0; i < N(headers); i++) {
		g_autoptr(PixMeta) m = read_prefix((const guint8 *)headers[i], 8, PIX_TIFF_ROLE_MAIN);
		g_assert_null(m->make);
		g_autoptr(PixMeta) short_one = read_prefix((const guint8 *)headers[i], 5, PIX_TIFF_ROLE_MAIN);
		g_assert_null(short_one->make);
	}
}

/* 60 directories, each with 16 SubIFD pointers to all the others and a
 * next pointer: without bounds, 16^depth walks. */
static void test_read_fan_out(void)
{
	enum { DIRS = 60, DIR_AT = 1000, DIR_SIZE = 2 + 12 * 4 + 4 + 64 };
	Block b = new_tiff(DIR_AT + DIRS * DIR_SIZE, FALSE, 42, DIR_AT);
	for (guint i = 0; i < DIRS; i++) {
		guint32 at = DIR_AT + i * DIR_SIZE, data = at + DIR_SIZE - 64;
		Ent e[] = {
			LONGS(0x0100, 1, 100 + i), LONGS(0x0101, 1, 100 + i), TXT(0x010f, "Fan"),
			RAW(0x014a, T_LONG, 16, 0),
		};
		write_dir(&b, at, e, N(e), DIR_AT + ((i + 1) % DIRS) * DIR_SIZE, &data);
		/* 16 pointers at data, to directories i+1 .. i+16 */
		guint32 ptrs = at + DIR_SIZE - 64;
		put32(&b, at + 2 + 36 + 8, ptrs);
		for (guint k = 0; k < 16; k++)
			put32(&b, ptrs + 4 * k, DIR_AT + ((i + 1 + k) % DIRS) * DIR_SIZE);
	}
	gint64 start = g_get_monotonic_time();
	g_autoptr(PixMeta) m = read_block(&b);
	g_assert_cmpint(g_get_monotonic_time() - start, <, 2 * G_USEC_PER_SEC);
	g_assert_cmpstr(m->make, ==, "Fan");
	g_assert_cmpint(m->width_px, ==, 100);
	g_free(b.data);
}

/* A getter that refuses one range (bytes not at hand). */
typedef struct {
	const guint8 *data;
	gsize len;
	guint64 hole_start, hole_end;
	guint n_calls;
} Holey;

static const guint8 *get_holey(void *src, guint64 off, gsize len)
{
	Holey *h = src;
	h->n_calls++;
	if (off > h->len || len > h->len - off)
		g_error("the reader asked for %" G_GSIZE_FORMAT " bytes at %" G_GUINT64_FORMAT " of %" G_GSIZE_FORMAT,
		        len, off, h->len);
	if (off < h->hole_end && off + len > h->hole_start)
		return NULL;
	return h->data + off;
}

static void test_read_gaps(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = build_rich(big, 8, 70000, 80000);
		/* the GPS IFD is not at hand */
		Holey gps = { b.data, b.len, 71000, 71002, 0 };
		g_autoptr(PixMeta) m = pix_meta_new();
		pix_tiff_read(get_holey, &gps, b.len, PIX_TIFF_ROLE_MAIN, m, NULL);
		assert_rich_exif(m);
		g_assert_cmpstr(m->make, ==, "Canon");
		g_assert_true(isnan(m->gps_lat) && isnan(m->gps_lon) && isnan(m->gps_alt_m));

		/* only the first 64 KiB at hand: IFD0 but not the Exif IFD */
		Holey head = { b.data, b.len, 65536, b.len, 0 };
		g_autoptr(PixMeta) h = pix_meta_new();
		pix_tiff_read(get_holey, &head, b.len, PIX_TIFF_ROLE_MAIN, h, NULL);
		g_assert_cmpstr(h->make, ==, "Canon");
		g_assert_cmpint(h->orientation, ==, 6);
		g_assert_cmpstr(h->date_taken, ==, "2020-01-01T00:00:00");
		g_assert_cmpstr(h->date_source, ==, "ModifyDate");
		g_assert_true(isnan(h->exposure_s));

		/* the second half of IFD0's entries not at hand: the first half read */
		Holey half = { b.data, b.len, 8 + 2 + 12 * 3, 8 + 2 + 12 * 3 + 1, 0 };
		g_autoptr(PixMeta) p = pix_meta_new();
		pix_tiff_read(get_holey, &half, b.len, PIX_TIFF_ROLE_MAIN, p, NULL);
		g_assert_cmpstr(p->make, ==, "Canon");
		g_assert_cmpint(p->orientation, ==, 6);
		g_assert_null(p->date_taken);
		g_free(b.data);
	}
}

/* What any PixMeta must be, whatever the input. */
static void assert_meta_sane(const PixMeta *m)
{
	const char *const strings[] = { m->make, m->model, m->lens, m->date_taken, m->date_tz };
	for (guint i = 0; i < N(strings); i++)
		g_assert_true(strings[i] == NULL || (g_utf8_validate(strings[i], -1, NULL) && strings[i][0] != '\0'));
	g_assert_true(m->orientation == -1 || (m->orientation >= 1 && m->orientation <= 8));
	g_assert_cmpint(isnan(m->gps_lat), ==, isnan(m->gps_lon));
	g_assert_true(isnan(m->gps_lat) || fabs(m->gps_lat) <= 90);
	g_assert_true(isnan(m->gps_lon) || fabs(m->gps_lon) <= 180);
	g_assert_cmpint(m->width_px < 0, ==, m->height_px < 0);
	g_assert_true((m->date_taken == NULL) == (m->date_source == NULL));
}

static void mutate_and_read(const guint8 *data, gsize len, guint iterations)
{
	g_autofree guint8 *copy = g_malloc(len);
	for (guint iter = 0; iter < iterations; iter++) {
		memcpy(copy, data, len);
		guint n = (guint)g_test_rand_int_range(1, 12);
		for (guint i = 0; i < n; i++) {
			gsize at = (gsize)g_test_rand_int_range(0, (gint32)len);
			copy[at] = g_test_rand_bit() ? (guint8)g_test_rand_int_range(0, 256) : copy[at] ^ 0x80;
		}
		gsize cut = g_test_rand_bit() ? len : (gsize)g_test_rand_int_range(0, (gint32)len + 1);
		for (guint role = 0; role <= PIX_TIFF_ROLE_GPS; role++) {
			g_autoptr(PixMeta) m = read_prefix(copy, cut, role);
			assert_meta_sane(m);
		}
	}
}

static void test_read_mutations(void)
{
	for (guint big = 0; big < 2; big++) {
		Block rich = build_rich(big, 8, 200, 2400);
		mutate_and_read(rich.data, rich.len, 3000);
		/* every prefix: the fields before the cut */
		for (gsize n = 0; n <= rich.len; n += 7) {
			g_autoptr(PixMeta) m = read_prefix(rich.data, n, PIX_TIFF_ROLE_MAIN);
			assert_meta_sane(m);
		}
		g_free(rich.data);
		Block small = build_small(big);
		mutate_and_read(small.data, small.len, 3000);
		g_free(small.data);
	}
	g_autoptr(GBytes) tiff = FIXTURE("tiff", RICH_OPTS, "--big-endian");
	if (tiff == NULL)
		return;
	mutate_and_read(g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff), 2000);
}

/* --- meta-tiff.c: the reader fed from a file read once --- */

/* The TIFF container over `len` bytes fed in pieces of `chunk` bytes;
 * *problems gets what it recorded (transfer full). */
static PixMeta *run_container(const guint8 *data, gsize len, gsize chunk, char **problems)
{
	const PixContainer *c = &pix_container_tiff;
	g_autoptr(PixStream) s = pix_stream_new(c->keep_head, c->keep_tail);
	PixMeta *m = pix_meta_new();
	void *state = c->start(s);
	for (gsize i = 0; i < len; i += chunk) {
		/* an exact-size copy of each piece: the sanitizer sees overreads */
		gsize n = MIN(chunk, len - i);
		g_autofree guint8 *piece = g_memdup2(data + i, n);
		pix_stream_feed(s, piece, n);
	}
	pix_stream_finish(s);
	c->finish(state, s, m);
	c->free(state);
	*problems = pix_stream_problems(s);
	return m;
}

/* Directories near either end, in the middle (beyond what the stream
 * keeps of each end), before and after each other. */
static void test_container_streamed(void)
{
	static const struct {
		guint32 ifd0_at, exif_at;
		gsize len;
	} layouts[] = {
		{ 8, 200, 4000 },
		{ 8, 70000, 100000 },
		{ 8, 300000, 900000 },          /* the Exif IFD in the middle */
		{ 400000, 300000, 900000 },     /* IFD0 in the middle, the Exif IFD behind it */
		{ 600000, 100000, 1200000 },    /* the Exif IFD in the head */
		{ 300000, 700000, 1200000 },
		{ 1100000, 500000, 1200000 },   /* IFD0 in the tail, the Exif IFD long gone */
	};
	static const gsize chunks[] = { 1 << 30, 65536, 4093, 777 };
	for (guint i = 0; i < N(layouts); i++) {
		Block b = build_rich(i % 2, layouts[i].ifd0_at, layouts[i].exif_at, layouts[i].len);
		g_autoptr(PixMeta) whole = read_block(&b);
		assert_rich(whole);
		for (guint c = 0; c < N(chunks); c++) {
			g_autofree char *problems = NULL;
			g_autoptr(PixMeta) m = run_container(b.data, b.len, chunks[c], &problems);
			g_assert_null(problems);
			g_assert_cmpstr(m->make, ==, "Canon");
			g_assert_cmpint(m->orientation, ==, 6);
			/* IFD0 found only at the end: its Exif IFD may have gone by */
			if (layouts[i].ifd0_at > 1000000)
				continue;
			assert_rich(m);
		}
		g_free(b.data);
	}
	/* one byte at a time (a small file: the stream moves its tail along
	 * with every piece) */
	Block b = build_rich(FALSE, 8, 2000, 4000);
	g_autofree char *problems = NULL;
	g_autoptr(PixMeta) m = run_container(b.data, b.len, 1, &problems);
	assert_rich(m);
	g_free(b.data);
}

/* Values written before their directory (as libtiff does): those the
 * stream still keeps are read, the rest is lost without harm. */
static void test_container_values_behind(void)
{
	for (guint big = 0; big < 2; big++) {
		Block b = new_tiff(1000000, big, 42, 8);
		const Ent ifd0[] = { TXT(0x010f, "Canon"), LONGS(0x8769, 1, 700000), LONGS(0x8825, 1, 700500) };
		const Ent exif[] = { RATS(0x829a, 1, 1, 250), SHORTS(0x8827, 2, 0, 400) };
		const Ent gps[] = {
			TXT(1, "S"), RATS(2, 3, 33, 1, 51, 1, 2448, 100), TXT(3, "E"),
			RATS(4, 3, 151, 1, 12, 1, 5508, 100),
		};
		guint32 data = 100;
		write_dir(&b, 8, ifd0, N(ifd0), 0, &data);
		data = 300000;          /* 400 KB behind its directory */
		write_dir(&b, 700000, exif, N(exif), 0, &data);
		data = 699000;          /* just behind */
		write_dir(&b, 700500, gps, N(gps), 0, &data);
		for (gsize chunk = 4096; chunk <= 65536; chunk *= 16) {
			g_autofree char *problems = NULL;
			g_autoptr(PixMeta) m = run_container(b.data, b.len, chunk, &problems);
			g_assert_cmpstr(m->make, ==, "Canon");
			g_assert_cmpint(m->iso, ==, 400);      /* in the entry itself */
			g_assert_cmpfloat_with_epsilon(m->gps_lat, RICH_LAT, 1e-9);
			g_assert_cmpfloat_with_epsilon(m->gps_lon, RICH_LON, 1e-9);
		}
		g_free(b.data);
	}
}

/* The oracle's value text for `tag` in the object of `rel` ("" when
 * absent; transfer full). */
static char *oracle_get(const char *oracle, const char *rel, const char *tag)
{
	g_autofree char *key = g_strdup_printf("\"SourceFile\": \"./%s\"", rel);
	const char *start = strstr(oracle, key);
	g_assert_nonnull(start);
	const char *end = strchr(start, '}');
	g_autofree char *object = g_strndup(start, (gsize)(end - start));
	g_autofree char *tag_key = g_strdup_printf("\"%s\": ", tag);
	const char *p = strstr(object, tag_key);
	if (p == NULL)
		return g_strdup("");
	p += strlen(tag_key);
	if (*p == '"')
		return g_strndup(p + 1, (gsize)(strchr(p + 1, '"') - p - 1));
	return g_strndup(p, strcspn(p, ",}\n"));
}

static void assert_oracle_int(const char *oracle, const char *rel, const char *tag, gint64 got)
{
	g_autofree char *want = oracle_get(oracle, rel, tag);
	gint64 expected = *want == '\0' ? -1 : g_ascii_strtoll(want, NULL, 10);
	if (got != expected)
		g_error("%s: %s %" G_GINT64_FORMAT ", exiftool '%s'", rel, tag, got, want);
}

static void assert_oracle_text(const char *oracle, const char *rel, const char *tag, const char *got)
{
	g_autofree char *want = oracle_get(oracle, rel, tag);
	if (g_strcmp0(got != NULL ? got : "", want) != 0)
		g_error("%s: %s '%s', exiftool '%s'", rel, tag, got, want);
}

/* The TIFF and TIFF-based RAW samples through the container, against what
 * exiftool reads from them. */
static void test_container_samples(void)
{
	const char *samples = pix_test_samples();
	if (samples == NULL)
		return;
	static const char *const files[] = {
		"Exiv2__exiv2/test/data/2018-01-09-exiv2-crash-001.tiff",
		"Exiv2__exiv2/test/data/IMG_1361.dng",
		"Exiv2__exiv2/test/data/Reagan.tiff",
		"Exiv2__exiv2/test/data/ReaganLargeTiff.tiff",
		"Exiv2__exiv2/test/data/issue_1920_poc.tiff",
		"exiftool__exiftool/t/images/CanonRaw.cr2",
		"exiftool__exiftool/t/images/DNG.dng",
		"exiftool__exiftool/t/images/ExifTool.tif",
		"exiftool__exiftool/t/images/Nikon.nef",
		"exiftool__exiftool/t/images/Panasonic.rw2",
		"exiftool__exiftool/t/images/PhaseOne.iiq",
		"ianare__exif-samples/tiff/DudleyLeavittUtah.tiff",
	};
	g_autofree char *oracle_path = g_build_filename(samples, "exiftool-oracle.json", NULL);
	g_autofree char *oracle = NULL;
	g_assert_true(g_file_get_contents(oracle_path, &oracle, NULL, NULL));

	for (guint i = 0; i < N(files); i++) {
		g_autofree char *path = g_build_filename(samples, files[i], NULL);
		g_autofree char *data = NULL;
		gsize len;
		g_assert_true(g_file_get_contents(path, &data, &len, NULL));
		for (gsize chunk = 4093; chunk < (1 << 20); chunk *= 16) {
			g_autofree char *problems = NULL;
			g_autoptr(PixMeta) m = run_container((const guint8 *)data, len, chunk, &problems);
			assert_meta_sane(m);
			assert_oracle_text(oracle, files[i], "Make", m->make);
			assert_oracle_text(oracle, files[i], "Model", m->model);
			assert_oracle_int(oracle, files[i], "ImageWidth", m->width_px);
			assert_oracle_int(oracle, files[i], "ImageHeight", m->height_px);
			assert_oracle_int(oracle, files[i], "ISO", m->iso);
			assert_oracle_int(oracle, files[i], "Orientation", m->orientation);
			g_autofree char *date = oracle_get(oracle, files[i], "DateTimeOriginal");
			if (*date != '\0') {
				date[4] = date[7] = '-';
				date[10] = 'T';
				g_assert_true(g_str_has_prefix(m->date_taken, date));
			}
			g_autofree char *lat = oracle_get(oracle, files[i], "GPSLatitude");
			if (*lat != '\0')
				g_assert_cmpfloat_with_epsilon(m->gps_lat, g_ascii_strtod(lat, NULL), 1e-7);
			else
				g_assert_true(isnan(m->gps_lat));
		}
	}
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/tiff/sound/built-block", test_sound_built_block);
	g_test_add_func("/tiff/sound/fixture-tiff", test_sound_fixture_tiff);
	g_test_add_func("/tiff/sound/fixture-jpeg-exif", test_sound_fixture_jpeg_exif);
	g_test_add_func("/tiff/sound/beyond-len", test_beyond_len_passes);
	g_test_add_func("/tiff/damage/beyond-total-len", test_beyond_total_len_reported);
	g_test_add_func("/tiff/damage/ifd0-offset-out-of-range", test_ifd0_offset_out_of_range);
	g_test_add_func("/tiff/damage/entry-count-past-end", test_entry_count_past_end);
	g_test_add_func("/tiff/damage/bad-entry-type", test_bad_entry_type);
	g_test_add_func("/tiff/damage/value-past-end", test_value_past_end);
	g_test_add_func("/tiff/damage/sub-ifd-pointers", test_sub_ifd_pointers);
	g_test_add_func("/tiff/damage/pointer-past-head", test_pointer_past_head);
	g_test_add_func("/tiff/damage/loops", test_loops);
	g_test_add_func("/tiff/headers", test_headers);
	g_test_add_func("/tiff/random-mutations", test_random_mutations);
	g_test_add_func("/tiff/read/fields", test_read_fields);
	g_test_add_func("/tiff/read/wrong-type-pointers", test_read_wrong_type_pointers);
	g_test_add_func("/tiff/read/past-64k", test_read_past_64k);
	g_test_add_func("/tiff/read/only-unknown", test_read_only_unknown);
	g_test_add_func("/tiff/read/roles", test_read_roles);
	g_test_add_func("/tiff/read/bigtiff", test_read_bigtiff);
	g_test_add_func("/tiff/read/fixture", test_read_fixture);
	g_test_add_func("/tiff/read/kind", test_kind);
	g_test_add_func("/tiff/read/data-end", test_data_end);
	g_test_add_func("/tiff/read/size/subifds", test_size_subifds);
	g_test_add_func("/tiff/read/size/rw2", test_size_rw2);
	g_test_add_func("/tiff/read/size/phase-one", test_size_phase_one);
	g_test_add_func("/tiff/read/hostile/loops", test_read_loops);
	g_test_add_func("/tiff/read/hostile/past-end", test_read_past_end);
	g_test_add_func("/tiff/read/hostile/fan-out", test_read_fan_out);
	g_test_add_func("/tiff/read/hostile/gaps", test_read_gaps);
	g_test_add_func("/tiff/read/hostile/mutations", test_read_mutations);
	g_test_add_func("/tiff/container/streamed", test_container_streamed);
	g_test_add_func("/tiff/container/values-behind", test_container_values_behind);
	g_test_add_func("/tiff/container/samples", test_container_samples);
	return g_test_run();
}
