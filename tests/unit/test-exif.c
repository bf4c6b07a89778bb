/*
 * test-exif.c: unit tests of src/exif.h, the EXIF block decoder (our TIFF
 * reader since issue 24; libexif before, whose behaviour these tests
 * pinned down, so they hold the reader to it).
 *
 * The EXIF blocks come from fixture JPEGs (tests/tools/mkfixture through
 * pix_test_mkfixture(); the tests skip without it): the APP1 payload,
 * "Exif\0\0" and the TIFF structure, is cut out of the file by a small
 * marker walker here.  mkfixture writes exactly the values it is given, so
 * every field can be checked for the value that went in, in little- and
 * big-endian blocks alike.
 *
 * Covered: every PixMeta field pix_exif_read() fills; GPS signs for the
 * four hemispheres and below sea level; the date, with sub-seconds and
 * offset, and its fallbacks; fields absent from the block stay unknown
 * (the reader must not invent tags); fields already set are not overwritten;
 * Latin-1 strings become UTF-8; blocks without a TIFF header fail with a
 * problem text; truncated and mutated blocks never crash and never leave
 * invalid values.  With the shared samples present, a few real files are
 * checked against exiftool's reading of them (exiftool-oracle.json).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "exif.h"
#include "meta-value.h"
#include "item.h"
#include "testlib.h"

#include <math.h>

/* --- fixtures --- */


/* The payload of the first APP1 "Exif\0\0" segment of a JPEG, or NULL. */
static GBytes *exif_segment(const guint8 *d, gsize len)
{
	gsize i = 2;

	if (len < 4 || d[0] != 0xff || d[1] != 0xd8)
		return NULL;
	while (i + 4 <= len && d[i] == 0xff) {
		guint8 m = d[i + 1];
		if (m == 0xff) {
			i++;        /* fill byte */
			continue;
		}
		gsize seg = (gsize)d[i + 2] << 8 | d[i + 3];
		if (m == 0xda || m == 0xd9 || seg < 2 || i + 2 + seg > len)
			break;
		if (m == 0xe1 && seg >= 8 && memcmp(d + i + 4, "Exif\0\0", 6) == 0)
			return g_bytes_new(d + i + 4, seg - 2);
		i += 2 + seg;
	}
	return NULL;
}

/* The EXIF block of a fixture JPEG made with the NULL-terminated options
 * (NULL: skipped). */
static GBytes *exif_block_v(const char *const *opts)
{
	g_autoptr(GBytes) jpeg = pix_test_fixture_bytes("jpeg", opts);
	if (jpeg == NULL)
		return NULL;
	gsize len;
	const guint8 *d = g_bytes_get_data(jpeg, &len);
	GBytes *exif = exif_segment(d, len);
	g_assert_nonnull(exif);
	return exif;
}
#define EXIF_BLOCK(...) exif_block_v((const char *const[]){ __VA_ARGS__, NULL })

/* Decodes `block` into a new PixMeta, asserting success (transfer full). */
static PixMeta *read_ok(GBytes *block)
{
	PixMeta *m = pix_meta_new();
	g_autofree char *problem = NULL;
	gsize len;
	/* an exact-size copy, so ASan sees any read past the block */
	g_autofree guint8 *copy = g_memdup2(g_bytes_get_data(block, NULL), g_bytes_get_size(block));
	len = g_bytes_get_size(block);
	if (!pix_exif_read(copy, len, m, &problem))
		g_error("pix_exif_read failed: %s", problem);
	g_assert_null(problem);
	return m;
}

/* The invariants of a PixMeta whatever the input: strings valid UTF-8,
 * numbers unknown or in range. */
static void check_meta_sane(const PixMeta *m)
{
	const char *strings[] = { m->make, m->model, m->lens, m->date_taken, m->date_tz };
	for (guint i = 0; i < G_N_ELEMENTS(strings); i++)
		g_assert_true(strings[i] == NULL || g_utf8_validate(strings[i], -1, NULL));
	if (m->date_taken != NULL) {
		g_assert_true(g_regex_match_simple("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?$",
		                                   m->date_taken, 0, 0));
		g_assert_nonnull(m->date_source);
	}
	if (m->date_tz != NULL)
		g_assert_true(g_regex_match_simple("^[+-][0-9]{2}:[0-9]{2}$", m->date_tz, 0, 0));
	g_assert_true(m->orientation == -1 || (m->orientation >= 1 && m->orientation <= 8));
	g_assert_true(isnan(m->gps_lat) || fabs(m->gps_lat) <= 90);
	g_assert_true(isnan(m->gps_lon) || fabs(m->gps_lon) <= 180);
	g_assert_true(isnan(m->exposure_s) || m->exposure_s > 0);
	g_assert_true(isnan(m->fnumber) || m->fnumber > 0);
	g_assert_true(isnan(m->focal_mm) || m->focal_mm > 0);
	g_assert_true(m->iso == -1 || m->iso > 0);
}

/* --- values --- */

static void check_all_values(gboolean is_big_endian)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "Canon", "--model", "Canon EOS 5D Mark IV",
	                                     "--lens", "EF24-70mm f/2.8L II USM", "--date", "2021:07:04 13:45:56",
	                                     "--exposure", "1/250", "--fnumber", "28/10", "--focal", "50",
	                                     "--iso", "400", "--orientation", "6",
	                                     "--gps", "48.8584,2.2945,35.25",
	                                     is_big_endian ? "--big-endian" : "--seed", is_big_endian ? NULL : "1");
	if (block == NULL)
		return;
	const guint8 *d = g_bytes_get_data(block, NULL);
	g_assert_cmpint(d[6], ==, is_big_endian ? 'M' : 'I');

	g_autoptr(PixMeta) m = read_ok(block);
	check_meta_sane(m);
	g_assert_cmpstr(m->make, ==, "Canon");
	g_assert_cmpstr(m->model, ==, "Canon EOS 5D Mark IV");
	g_assert_cmpstr(m->lens, ==, "EF24-70mm f/2.8L II USM");
	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56");
	g_assert_null(m->date_tz);
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	g_assert_cmpfloat_with_epsilon(m->exposure_s, 0.004, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->fnumber, 2.8, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->focal_mm, 50, 1e-12);
	g_assert_cmpint(m->iso, ==, 400);
	g_assert_cmpint(m->orientation, ==, 6);
	g_assert_cmpfloat_with_epsilon(m->gps_lat, 48.8584, 1e-7);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, 2.2945, 1e-7);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, 35.25, 1e-9);
	/* EXIF's pixel size claims are not the image's size */
	g_assert_cmpint(m->width_px, ==, -1);
	g_assert_cmpint(m->height_px, ==, -1);
}

static void test_values_little_endian(void)
{
	check_all_values(FALSE);
}

static void test_values_big_endian(void)
{
	check_all_values(TRUE);
}

static void test_gps_hemispheres(void)
{
	static const struct {
		const char *arg;
		double lat, lon, alt;
	} cases[] = {
		{ "40.6892,-74.0445,93", 40.6892, -74.0445, 93 },           /* N, W */
		{ "-33.8568,151.2153,-12.5", -33.8568, 151.2153, -12.5 },   /* S, E, below the sea */
		{ "-22.9519,-43.2105,-0.001", -22.9519, -43.2105, -0.001 }, /* S, W */
		{ "0.0000001,179.9999999,0", 0.0000001, 179.9999999, 0 },
		{ "-89.999,-0.5,-430.5", -89.999, -0.5, -430.5 },           /* the Dead Sea shore is -430 */
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		for (guint big = 0; big < 2; big++) {
			g_autoptr(GBytes) block = EXIF_BLOCK("--gps", cases[i].arg, big ? "--big-endian" : NULL);
			if (block == NULL)
				return;
			g_autoptr(PixMeta) m = read_ok(block);
			check_meta_sane(m);
			if (fabs(m->gps_lat - cases[i].lat) > 1e-7 || fabs(m->gps_lon - cases[i].lon) > 1e-7 ||
			    fabs(m->gps_alt_m - cases[i].alt) > 1e-9)
				g_error("--gps %s (%s): read %.9f,%.9f,%.4f", cases[i].arg, big ? "MM" : "II",
				        m->gps_lat, m->gps_lon, m->gps_alt_m);
		}
	}
}

static void test_date_subsec_and_offset(void)
{
	for (guint big = 0; big < 2; big++) {
		g_autoptr(GBytes) block = EXIF_BLOCK("--date", "2019:12:31 23:59:59", "--subsec", "042",
		                                     "--offset", "-05:30", big ? "--big-endian" : NULL);
		if (block == NULL)
			return;
		g_autoptr(PixMeta) m = read_ok(block);
		check_meta_sane(m);
		/* the digits as written: "042" is 42 ms, not 0.42 s */
		g_assert_cmpstr(m->date_taken, ==, "2019-12-31T23:59:59.042");
		g_assert_cmpstr(m->date_tz, ==, "-05:30");
		g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	}
}

/* A camera without a clock writes zeros; that is no date.  The next
 * source (ModifyDate in IFD0) is used when there is one. */
static void test_date_fallbacks(void)
{
	g_autoptr(GBytes) zero = EXIF_BLOCK("--date", "0000:00:00 00:00:00", "--make", "Cheap");
	if (zero == NULL)
		return;
	g_autoptr(PixMeta) m = read_ok(zero);
	g_assert_null(m->date_taken);
	g_assert_null(m->date_source);
	g_assert_cmpstr(m->make, ==, "Cheap");

	g_autoptr(GBytes) blank = EXIF_BLOCK("--date", "    :  :     :  :  ");
	g_autoptr(PixMeta) b = read_ok(blank);
	g_assert_null(b->date_taken);

	g_autoptr(GBytes) modify = EXIF_BLOCK("--date", "0000:00:00 00:00:00", "--modify-date", "2015:06:07 08:09:10");
	g_autoptr(PixMeta) f = read_ok(modify);
	g_assert_cmpstr(f->date_taken, ==, "2015-06-07T08:09:10");
	g_assert_cmpstr(f->date_source, ==, "ModifyDate");

	/* the original date wins over the modification date */
	g_autoptr(GBytes) both = EXIF_BLOCK("--date", "2001:02:03 04:05:06", "--modify-date", "2015:06:07 08:09:10");
	g_autoptr(PixMeta) o = read_ok(both);
	g_assert_cmpstr(o->date_taken, ==, "2001-02-03T04:05:06");
	g_assert_cmpstr(o->date_source, ==, "DateTimeOriginal");

	/* a month 13 is garbage, not a date */
	g_autoptr(GBytes) bad = EXIF_BLOCK("--date", "2001:13:03 04:05:06");
	g_autoptr(PixMeta) x = read_ok(bad);
	g_assert_null(x->date_taken);
}

/* With FOLLOW_SPECIFICATION libexif would add ExifVersion, ColorSpace and
 * the like, and with them defaults; what the file lacks stays unknown. */
static void test_absent_fields_stay_unknown(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "OnlyMake");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = read_ok(block);
	g_assert_cmpstr(m->make, ==, "OnlyMake");
	g_assert_null(m->model);
	g_assert_null(m->lens);
	g_assert_null(m->date_taken);
	g_assert_null(m->date_tz);
	g_assert_true(isnan(m->exposure_s));
	g_assert_true(isnan(m->fnumber));
	g_assert_true(isnan(m->focal_mm));
	g_assert_cmpint(m->iso, ==, -1);
	g_assert_cmpint(m->orientation, ==, -1);
	g_assert_true(isnan(m->gps_lat));
	g_assert_true(isnan(m->gps_lon));
	g_assert_true(isnan(m->gps_alt_m));
}

/* Values no camera means: a zero denominator, zero ISO and focal
 * length, orientation 9, a malformed offset.  Unknown, not a number made
 * from them (no inf, no NaN stored as a value, no 0 ISO). */
static void test_invalid_values_unknown(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--exposure", "1/0", "--fnumber", "0/0", "--focal", "0", "--iso", "0",
	                                     "--orientation", "9", "--date", "2020:01:01 10:00:00",
	                                     "--offset", "+2:00");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = read_ok(block);
	check_meta_sane(m);
	g_assert_true(isnan(m->exposure_s));
	g_assert_true(isnan(m->fnumber));
	g_assert_true(isnan(m->focal_mm));
	g_assert_cmpint(m->iso, ==, -1);
	g_assert_cmpint(m->orientation, ==, -1);
	g_assert_cmpstr(m->date_taken, ==, "2020-01-01T10:00:00");
	g_assert_null(m->date_tz);

	g_autoptr(GBytes) far = EXIF_BLOCK("--date", "2020:01:01 10:00:00", "--offset", "+15:00");
	g_autoptr(PixMeta) f = read_ok(far);
	g_assert_null(f->date_tz);
	g_autoptr(GBytes) east = EXIF_BLOCK("--date", "2020:01:01 10:00:00", "--offset", "+14:00");
	g_autoptr(PixMeta) e = read_ok(east);
	g_assert_cmpstr(e->date_tz, ==, "+14:00");
}

static void test_no_tiff_header(void)
{
	static const struct {
		const char *data;
		gsize len;
	} cases[] = {
		{ "Exif\0\0XX\x2a\0\x08\0\0\0\0\0\0\0", 18 },   /* bad byte order mark */
		{ "Exif\0\0", 6 },                            /* nothing after the header */
		{ "Exif\0\0II", 8 },                          /* too short for a TIFF header */
		{ "JFIF\0\0II\x2a\0\x08\0\0\0\0\0\0\0", 18 },   /* not an Exif header */
		{ "", 0 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(PixMeta) m = pix_meta_new();
		g_autofree char *problem = NULL;
		g_autofree guint8 *copy = g_memdup2(cases[i].data, cases[i].len);
		m->make = g_strdup("Before");
		g_assert_false(pix_exif_read(copy, cases[i].len, m, &problem));
		g_assert_nonnull(problem);
		g_assert_cmpuint(strlen(problem), >, 0);
		g_assert_cmpstr(m->make, ==, "Before");
		g_assert_null(m->date_taken);
	}
}

/* pix_exif_read fills in; it does not replace what an earlier source
 * (another EXIF block of the same file, a container's own fields) set,
 * a date from an equally good tag included (see test_date_rank for a
 * worse one). */
static void test_keeps_set_fields(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "Canon", "--model", "EOS", "--lens", "L",
	                                     "--date", "2021:07:04 13:45:56", "--offset", "+02:00",
	                                     "--exposure", "1/250", "--fnumber", "28/10", "--focal", "50",
	                                     "--iso", "400", "--orientation", "6", "--gps", "48.8584,2.2945,35");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = pix_meta_new();
	m->make = g_strdup("Mine");
	m->model = g_strdup("My model");
	m->lens = g_strdup("My lens");
	m->date_taken = g_strdup("1999-01-01T00:00:00");
	m->date_tz = g_strdup("+09:00");
	m->date_source = "DateTimeOriginal";
	m->exposure_s = 2;
	m->fnumber = 16;
	m->focal_mm = 300;
	m->iso = 100;
	m->orientation = 1;
	m->gps_lat = 1;
	m->gps_lon = 2;
	m->gps_alt_m = 3;
	m->width_px = 10;
	m->height_px = 20;
	g_autofree char *problem = NULL;
	g_assert_true(pix_exif_read(g_bytes_get_data(block, NULL), g_bytes_get_size(block), m, &problem));

	g_assert_cmpstr(m->make, ==, "Mine");
	g_assert_cmpstr(m->model, ==, "My model");
	g_assert_cmpstr(m->lens, ==, "My lens");
	g_assert_cmpstr(m->date_taken, ==, "1999-01-01T00:00:00");
	g_assert_cmpstr(m->date_tz, ==, "+09:00");
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	g_assert_cmpfloat(m->exposure_s, ==, 2);
	g_assert_cmpfloat(m->fnumber, ==, 16);
	g_assert_cmpfloat(m->focal_mm, ==, 300);
	g_assert_cmpint(m->iso, ==, 100);
	g_assert_cmpint(m->orientation, ==, 1);
	g_assert_cmpfloat(m->gps_lat, ==, 1);
	g_assert_cmpfloat(m->gps_lon, ==, 2);
	g_assert_cmpfloat(m->gps_alt_m, ==, 3);
	g_assert_cmpint(m->width_px, ==, 10);
	g_assert_cmpint(m->height_px, ==, 20);
}

/*
 * A date from a worse EXIF tag gives way to a better one read later (our
 * TIFF reader finds a DateTimeOriginal beyond libexif's reach after libexif
 * took IFD0's ModifyDate; a CR3's CMT2 after CMT1), its offset with it;
 * dates from other sources, and from better or equal tags, stay.
 */
static void test_date_rank(void)
{
	static const struct {
		const char *old_source;     /* NULL: no date yet */
		const char *new_source;
		gboolean is_replaced;
	} cases[] = {
		{ NULL, "ModifyDate", TRUE },
		{ "ModifyDate", "DateTimeOriginal", TRUE },
		{ "ModifyDate", "CreateDate", TRUE },
		{ "CreateDate", "DateTimeOriginal", TRUE },
		{ "CreateDate", "ModifyDate", FALSE },
		{ "DateTimeOriginal", "DateTimeOriginal", FALSE },
		{ "DateTimeOriginal", "CreateDate", FALSE },
		{ "XMP CreateDate", "DateTimeOriginal", FALSE },
		{ "QuickTime", "DateTimeOriginal", FALSE },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(PixMeta) m = pix_meta_new();
		if (cases[i].old_source != NULL) {
			m->date_taken = g_strdup("1999-01-01T00:00:00");
			m->date_tz = g_strdup("+09:00");
			m->date_source = cases[i].old_source;
		}
		g_assert_true(pix_meta_set_exif_date(m, "2021:07:04 13:45:56", "5", NULL, cases[i].new_source));
		if (cases[i].is_replaced) {
			g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56.5");
			/* the old offset went with the old date */
			g_assert_null(m->date_tz);
			g_assert_cmpstr(m->date_source, ==, cases[i].new_source);
		} else {
			g_assert_cmpstr(m->date_taken, ==, "1999-01-01T00:00:00");
			g_assert_cmpstr(m->date_tz, ==, "+09:00");
			g_assert_cmpstr(m->date_source, ==, cases[i].old_source);
		}
	}

	/* garbage does not replace a worse date, and says to try the next tag */
	g_autoptr(PixMeta) m = pix_meta_new();
	m->date_taken = g_strdup("1999-01-01T00:00:00");
	m->date_source = "ModifyDate";
	g_assert_false(pix_meta_set_exif_date(m, "0000:00:00 00:00:00", NULL, "+01:00", "DateTimeOriginal"));
	g_assert_cmpstr(m->date_taken, ==, "1999-01-01T00:00:00");
	g_assert_cmpstr(m->date_source, ==, "ModifyDate");
	g_assert_null(m->date_tz);
	/* a better date brings its own offset */
	g_assert_true(pix_meta_set_exif_date(m, "2021:07:04 13:45:56", "x1", "+01:00", "DateTimeOriginal"));
	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56");
	g_assert_cmpstr(m->date_tz, ==, "+01:00");
}

/*
 * Fields set beforehand are kept, one at a time: with the altitude, the
 * longitude and the offset set, the block fills the date, and neither
 * coordinate (a position is one value: both or neither), nor the altitude,
 * nor the offset.
 */
static void test_keeps_set_gps_and_offset(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--date", "2021:07:04 13:45:56", "--offset", "+02:00",
	                                     "--gps", "48.8584,2.2945,35");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = pix_meta_new();
	m->gps_alt_m = 3;
	m->gps_lon = 2;
	m->date_tz = g_strdup("+09:00");
	g_autofree char *problem = NULL;
	g_assert_true(pix_exif_read(g_bytes_get_data(block, NULL), g_bytes_get_size(block), m, &problem));

	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56");
	g_assert_true(isnan(m->gps_lat));
	g_assert_cmpfloat(m->gps_lon, ==, 2);
	g_assert_cmpfloat(m->gps_alt_m, ==, 3);
	g_assert_cmpstr(m->date_tz, ==, "+09:00");

	/* and with nothing set, all of them come from the block */
	g_autoptr(PixMeta) fresh = pix_meta_new();
	g_clear_pointer(&problem, g_free);
	g_assert_true(pix_exif_read(g_bytes_get_data(block, NULL), g_bytes_get_size(block), fresh, &problem));
	g_assert_cmpfloat_with_epsilon(fresh->gps_lat, 48.8584, 1e-7);
	g_assert_cmpfloat_with_epsilon(fresh->gps_lon, 2.2945, 1e-7);
	g_assert_cmpfloat_with_epsilon(fresh->gps_alt_m, 35, 1e-9);
	g_assert_cmpstr(fresh->date_tz, ==, "+02:00");
}

/* Latin-1 bytes in ASCII tags (old cameras, European software) become
 * UTF-8; the meta strings are always valid UTF-8. */
static void test_latin1_strings(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "Caf\xe9 Cam\xe9ra", "--model", "Gro\xdf");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = read_ok(block);
	g_assert_cmpstr(m->make, ==, "Caf\xc3\xa9 Cam\xc3\xa9ra");
	g_assert_cmpstr(m->model, ==, "Gro\xc3\x9f");

	/* UTF-8 stays as it is, and surrounding blanks go */
	g_autoptr(GBytes) utf8 = EXIF_BLOCK("--make", "  \xe6\x9d\xb1\xe4\xba\xac  ");
	g_autoptr(PixMeta) u = read_ok(utf8);
	g_assert_cmpstr(u->make, ==, "\xe6\x9d\xb1\xe4\xba\xac");
}

/* The thumbnail's IFD1 is there too; it must not disturb IFD0's fields. */
static void test_with_thumbnail(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--thumbnail", "--make", "Nikon", "--orientation", "3", "--big-endian");
	if (block == NULL)
		return;
	g_autoptr(PixMeta) m = read_ok(block);
	g_assert_cmpstr(m->make, ==, "Nikon");
	g_assert_cmpint(m->orientation, ==, 3);
}

static void read_hostile(const guint8 *data, gsize len)
{
	g_autoptr(PixMeta) m = pix_meta_new();
	g_autofree char *problem = NULL;
	g_autofree guint8 *copy = g_memdup2(data, len);
	gboolean ok = pix_exif_read(copy, len, m, &problem);
	g_assert_true(ok == (problem == NULL));
	if (problem != NULL)
		g_assert_true(g_utf8_validate(problem, -1, NULL));
	check_meta_sane(m);
}

/* Every prefix of a block: a cut EXIF segment never crashes the decoder
 * or leaves an invalid value. */
static void test_truncated_blocks(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "Canon", "--date", "2021:07:04 13:45:56", "--iso", "400",
	                                     "--gps", "-33.8568,151.2153,-12.5", "--thumbnail", "--lens", "L");
	if (block == NULL)
		return;
	gsize len;
	const guint8 *d = g_bytes_get_data(block, &len);
	for (gsize n = 0; n <= len; n++)
		read_hostile(d, n);
}

static void test_mutated_blocks(void)
{
	g_autoptr(GBytes) block = EXIF_BLOCK("--make", "Canon", "--model", "EOS", "--date", "2021:07:04 13:45:56",
	                                     "--subsec", "5", "--offset", "+01:00", "--exposure", "1/60",
	                                     "--iso", "400", "--orientation", "6", "--gps", "-33.8568,151.2153,-12.5",
	                                     "--thumbnail");
	if (block == NULL)
		return;
	gsize len;
	const guint8 *d = g_bytes_get_data(block, &len);
	g_autofree guint8 *copy = g_malloc(len);

	for (guint iter = 0; iter < 3000; iter++) {
		memcpy(copy, d, len);
		guint n = (guint)g_test_rand_int_range(1, 10);
		for (guint i = 0; i < n; i++) {
			/* the structure (header, IFD entries) is in the first few hundred bytes */
			gsize span = g_test_rand_bit() ? MIN(len - 6, 400) : len - 6;
			gsize at = 6 + (gsize)g_test_rand_int_range(0, (gint32)span);
			copy[at] = (guint8)g_test_rand_int_range(0, 256);
		}
		read_hostile(copy, len);
	}
}

/* --- real files --- */

/* Reads a sample JPEG's EXIF block, or NULL when it has none. */
static GBytes *sample_exif(const char *samples, const char *rel)
{
	g_autofree char *path = g_build_filename(samples, rel, NULL);
	g_autofree char *data = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	return exif_segment((const guint8 *)data, len);
}

/* The text of the oracle's object for `rel` (transfer full). */
static char *oracle_object(const char *oracle, const char *rel)
{
	g_autofree char *key = g_strdup_printf("\"SourceFile\": \"./%s\"", rel);
	const char *start = strstr(oracle, key);
	g_assert_nonnull(start);
	const char *end = strchr(start, '}');
	g_assert_nonnull(end);
	return g_strndup(start, (gsize)(end - start));
}

/* The oracle's value text for `tag` in `object` ("" when absent). */
static char *oracle_value(const char *object, const char *tag)
{
	g_autofree char *key = g_strdup_printf("\"%s\": ", tag);
	const char *p = strstr(object, key);
	if (p == NULL)
		return g_strdup("");
	p += strlen(key);
	if (*p == '"') {
		const char *q = strchr(p + 1, '"');
		return g_strndup(p + 1, (gsize)(q - p - 1));
	}
	gsize n = strcspn(p, ",}");
	return g_strndup(p, n);
}

static void assert_oracle_number(const char *object, const char *tag, double got, double tolerance)
{
	g_autofree char *want = oracle_value(object, tag);
	g_assert_cmpstr(want, !=, "");
	g_assert_cmpfloat_with_epsilon(got, g_ascii_strtod(want, NULL), tolerance);
}

static void test_samples_against_exiftool(void)
{
	const char *samples = pix_test_samples();
	if (samples == NULL)
		return;
	static const char *const files[] = {
		"Exiv2__exiv2/test/data/FurnaceCreekInn.jpg",
		"exiftool__exiftool/t/images/Google.jpg",
		"exiftool__exiftool/t/images/GoPro.jpg",
		"ianare__exif-samples/jpg/Kodak_CX7530.jpg",
		"drewnoakes__metadata-extractor-images/jpg/Sony DSC-HX5V (2).jpg",
	};
	g_autofree char *oracle_path = g_build_filename(samples, "exiftool-oracle.json", NULL);
	g_autofree char *oracle = NULL;
	g_assert_true(g_file_get_contents(oracle_path, &oracle, NULL, NULL));

	for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autoptr(GBytes) block = sample_exif(samples, files[i]);
		g_assert_nonnull(block);
		g_autoptr(PixMeta) m = read_ok(block);
		g_autofree char *object = oracle_object(oracle, files[i]);
		g_autofree char *make = oracle_value(object, "Make");
		g_autofree char *model = oracle_value(object, "Model");
		g_autofree char *date = oracle_value(object, "DateTimeOriginal");
		g_autofree char *offset = oracle_value(object, "OffsetTimeOriginal");
		g_autofree char *lens = oracle_value(object, "LensModel");

		check_meta_sane(m);
		g_assert_cmpstr(m->make, ==, make);
		g_assert_cmpstr(m->model, ==, model);
		/* "YYYY:MM:DD HH:MM:SS" in ISO form; sub-seconds may follow */
		g_autofree char *iso_date = g_strdup(date);
		iso_date[4] = iso_date[7] = '-';
		iso_date[10] = 'T';
		g_assert_nonnull(m->date_taken);
		g_assert_true(g_str_has_prefix(m->date_taken, iso_date));
		if (*offset != '\0')
			g_assert_cmpstr(m->date_tz, ==, offset);
		if (*lens != '\0')
			g_assert_cmpstr(m->lens, ==, lens);
		assert_oracle_number(object, "GPSLatitude", m->gps_lat, 1e-7);
		assert_oracle_number(object, "GPSLongitude", m->gps_lon, 1e-7);
		g_autofree char *alt = oracle_value(object, "GPSAltitude");
		if (*alt != '\0')
			assert_oracle_number(object, "GPSAltitude", m->gps_alt_m, 1e-6);
		g_autofree char *iso = oracle_value(object, "ISO");
		if (*iso != '\0')
			g_assert_cmpint(m->iso, ==, atoi(iso));
		g_autofree char *exposure = oracle_value(object, "ExposureTime");
		if (*exposure != '\0')
			assert_oracle_number(object, "ExposureTime", m->exposure_s, 1e-9);
		g_autofree char *fnumber = oracle_value(object, "FNumber");
		if (*fnumber != '\0')
			assert_oracle_number(object, "FNumber", m->fnumber, 1e-6);
	}
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/exif/values/little-endian", test_values_little_endian);
	g_test_add_func("/exif/values/big-endian", test_values_big_endian);
	g_test_add_func("/exif/gps-hemispheres", test_gps_hemispheres);
	g_test_add_func("/exif/date/subsec-and-offset", test_date_subsec_and_offset);
	g_test_add_func("/exif/date/fallbacks", test_date_fallbacks);
	g_test_add_func("/exif/absent-fields-stay-unknown", test_absent_fields_stay_unknown);
	g_test_add_func("/exif/invalid-values-unknown", test_invalid_values_unknown);
	g_test_add_func("/exif/no-tiff-header", test_no_tiff_header);
	g_test_add_func("/exif/keeps-set-fields", test_keeps_set_fields);
	g_test_add_func("/exif/keeps-set-gps-and-offset", test_keeps_set_gps_and_offset);
	g_test_add_func("/exif/date/rank", test_date_rank);
	g_test_add_func("/exif/latin1-strings", test_latin1_strings);
	g_test_add_func("/exif/with-thumbnail", test_with_thumbnail);
	g_test_add_func("/exif/truncated-blocks", test_truncated_blocks);
	g_test_add_func("/exif/mutated-blocks", test_mutated_blocks);
	g_test_add_func("/exif/samples-against-exiftool", test_samples_against_exiftool);
	return g_test_run();
}
