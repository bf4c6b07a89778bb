/*
 * test-tiff.c: unit tests of src/tiff.h, the TIFF structure checker.
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
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tiff.h"
#include "testlib.h"

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
	return g_test_run();
}
