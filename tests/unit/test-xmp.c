/*
 * test-xmp.c: unit tests of src/meta-xmp.c (pix_meta_read_xmp() and the
 * XMP sidecar container) and of the XMP capture in src/meta-jpeg.c.
 *
 * The packets are written here in the shapes real tools write: darktable
 * (properties as attributes, a long history array), Lightroom / Adobe
 * Camera Raw (elements, one rdf:Description per namespace, rdf:Seq),
 * digiKam / Exiv2 (an xpacket wrapper, attributes, GPS).  Each field is
 * checked against the value worked out by hand; precedence (known fields
 * kept, the order of the date properties) and namespace resolution (any
 * prefix, shadowing, default namespaces) have their own tests.  Hostile
 * packets (unclosed, truncated at every length, mutated at random, deep,
 * huge, not UTF-8) must never crash and must keep what came before the
 * damage; the SANITIZE=1 build checks the memory side.  With the shared
 * samples present, the XMP of the sample JPEGs is read and compared with
 * exiftool's reading (exiftool-oracle.json).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "item.h"
#include "meta-int.h"
#include "testlib.h"

#include <math.h>

/* --- helpers --- */

static PixMeta *read_str(const char *xmp)
{
	PixMeta *m = pix_meta_new();
	/* a copy of exactly the bytes, so ASan sees any read past them */
	g_autofree guint8 *copy = g_memdup2(xmp, strlen(xmp));
	pix_meta_read_xmp(copy, strlen(xmp), m);
	return m;
}

/* A packet with one rdf:Description holding `body` (elements), its
 * rdf:Description carrying `attrs`, the usual namespaces declared. */
static char *packet(const char *attrs, const char *body)
{
	return g_strdup_printf(
	        "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
	        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n"
	        " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
	        "  <rdf:Description rdf:about=\"\"\n"
	        "    xmlns:exif=\"http://ns.adobe.com/exif/1.0/\"\n"
	        "    xmlns:exifEX=\"http://cipa.jp/exif/1.0/\"\n"
	        "    xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\"\n"
	        "    xmlns:aux=\"http://ns.adobe.com/exif/1.0/aux/\"\n"
	        "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
	        "    xmlns:photoshop=\"http://ns.adobe.com/photoshop/1.0/\"\n"
	        "    %s>\n"
	        "%s\n"
	        "  </rdf:Description>\n"
	        " </rdf:RDF>\n"
	        "</x:xmpmeta>\n"
	        "<?xpacket end=\"w\"?>",
	        attrs, body);
}

static PixMeta *read_packet(const char *attrs, const char *body)
{
	g_autofree char *p = packet(attrs, body);
	return read_str(p);
}

/* Every field of `m` unknown. */
static void assert_empty(const PixMeta *m)
{
	g_assert_null(m->date_taken);
	g_assert_null(m->date_tz);
	g_assert_null(m->date_source);
	g_assert_null(m->make);
	g_assert_null(m->model);
	g_assert_null(m->lens);
	g_assert_true(isnan(m->exposure_s));
	g_assert_true(isnan(m->fnumber));
	g_assert_true(isnan(m->focal_mm));
	g_assert_cmpint(m->iso, ==, -1);
	g_assert_cmpint(m->orientation, ==, -1);
	g_assert_true(isnan(m->gps_lat));
	g_assert_true(isnan(m->gps_lon));
	g_assert_true(isnan(m->gps_alt_m));
}

/* Whatever was read is well-formed: valid UTF-8, values in range. */
static void assert_sane(const PixMeta *m)
{
	const char *const strings[] = { m->date_taken, m->date_tz, m->make, m->model, m->lens };
	for (guint i = 0; i < G_N_ELEMENTS(strings); i++)
		g_assert_true(strings[i] == NULL || g_utf8_validate(strings[i], -1, NULL));
	g_assert_true(m->date_taken == NULL || strlen(m->date_taken) >= 19);
	g_assert_true((m->date_taken == NULL) == (m->date_source == NULL));
	g_assert_true(m->orientation == -1 || (m->orientation >= 1 && m->orientation <= 8));
	g_assert_true(isnan(m->gps_lat) == isnan(m->gps_lon));
	g_assert_true(isnan(m->gps_lat) || fabs(m->gps_lat) <= 90);
	g_assert_true(isnan(m->gps_lon) || fabs(m->gps_lon) <= 180);
	g_assert_true(isnan(m->exposure_s) || m->exposure_s > 0);
	g_assert_true(isnan(m->fnumber) || m->fnumber > 0);
	g_assert_true(isnan(m->focal_mm) || m->focal_mm > 0);
	g_assert_true(m->iso == -1 || m->iso > 0);
}

/* --- real-world shapes --- */

/* As darktable writes `IMG_1234.CR2.xmp`: an XML declaration, properties
 * as attributes (its EXIF-style date with milliseconds), a long history
 * of rdf:li elements full of attributes, GPS from its map view. */
static const char darktable_sidecar[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"XMP Core 4.4.0-Exiv2\">\n"
        " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:exif=\"http://ns.adobe.com/exif/1.0/\"\n"
        "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
        "    xmlns:xmpMM=\"http://ns.adobe.com/xap/1.0/mm/\"\n"
        "    xmlns:darktable=\"http://darktable.sf.net/\"\n"
        "    xmlns:dc=\"http://purl.org/dc/elements/1.1/\"\n"
        "   exif:DateTimeOriginal=\"2021:07:04 13:45:56.000\"\n"
        "   exif:GPSLatitude=\"51,30.4506N\"\n"
        "   exif:GPSLongitude=\"0,7.5102W\"\n"
        "   exif:GPSAltitude=\"2150/100\"\n"
        "   exif:GPSAltitudeRef=\"0\"\n"
        "   xmp:Rating=\"2\"\n"
        "   xmpMM:DerivedFrom=\"IMG_1234.CR2\"\n"
        "   darktable:xmp_version=\"5\"\n"
        "   darktable:history_end=\"2\">\n"
        "   <darktable:masks_history>\n"
        "    <rdf:Seq/>\n"
        "   </darktable:masks_history>\n"
        "   <darktable:history>\n"
        "    <rdf:Seq>\n"
        "     <rdf:li\n"
        "      darktable:num=\"0\"\n"
        "      darktable:operation=\"rawprepare\"\n"
        "      darktable:enabled=\"1\"\n"
        "      darktable:params=\"000000000000000014000000\"/>\n"
        "     <rdf:li\n"
        "      darktable:num=\"1\"\n"
        "      darktable:operation=\"exposure\"\n"
        "      darktable:enabled=\"1\"\n"
        "      darktable:params=\"00000000000080b93333333f\"/>\n"
        "    </rdf:Seq>\n"
        "   </darktable:history>\n"
        "   <dc:subject>\n"
        "    <rdf:Bag>\n"
        "     <rdf:li>holiday</rdf:li>\n"
        "    </rdf:Bag>\n"
        "   </dc:subject>\n"
        "  </rdf:Description>\n"
        " </rdf:RDF>\n"
        "</x:xmpmeta>\n";

static void test_darktable(void)
{
	g_autoptr(PixMeta) m = read_str(darktable_sidecar);

	g_assert_cmpstr(m->date_taken, ==, "2021-07-04T13:45:56.000");
	g_assert_null(m->date_tz);
	g_assert_cmpstr(m->date_source, ==, "XMP exif:DateTimeOriginal");
	g_assert_cmpfloat_with_epsilon(m->gps_lat, 51 + 30.4506 / 60, 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, -(7.5102 / 60), 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, 21.5, 1e-9);
	g_assert_null(m->make);
	g_assert_cmpint(m->orientation, ==, -1);
	assert_sane(m);
}

/* As Lightroom and Adobe Camera Raw write: no XML declaration, one
 * rdf:Description per namespace, every property an element, ISO in an
 * rdf:Seq, rationals, a date with hundredths and an offset. */
static const char lightroom_sidecar[] =
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"Adobe XMP Core 7.0-c000 1.000000, 0000/00/00-00:00:00\">\n"
        " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\">\n"
        "   <tiff:Make>NIKON CORPORATION</tiff:Make>\n"
        "   <tiff:Model>NIKON D750</tiff:Model>\n"
        "   <tiff:Orientation>8</tiff:Orientation>\n"
        "  </rdf:Description>\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:exif=\"http://ns.adobe.com/exif/1.0/\">\n"
        "   <exif:ExposureTime>1/250</exif:ExposureTime>\n"
        "   <exif:FNumber>56/10</exif:FNumber>\n"
        "   <exif:FocalLength>850/10</exif:FocalLength>\n"
        "   <exif:ISOSpeedRatings>\n"
        "    <rdf:Seq>\n"
        "     <rdf:li>400</rdf:li>\n"
        "    </rdf:Seq>\n"
        "   </exif:ISOSpeedRatings>\n"
        "   <exif:DateTimeOriginal>2019-05-04T14:23:11.52+02:00</exif:DateTimeOriginal>\n"
        "   <exif:Flash rdf:parseType=\"Resource\">\n"
        "    <exif:Fired>False</exif:Fired>\n"
        "    <exif:Mode>2</exif:Mode>\n"
        "   </exif:Flash>\n"
        "  </rdf:Description>\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:aux=\"http://ns.adobe.com/exif/1.0/aux/\"\n"
        "    xmlns:exifEX=\"http://cipa.jp/exif/1.0/\">\n"
        "   <aux:Lens>85.0 mm f/1.8</aux:Lens>\n"
        "   <exifEX:LensModel>AF-S NIKKOR 85mm f/1.8G</exifEX:LensModel>\n"
        "  </rdf:Description>\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:crs=\"http://ns.adobe.com/camera-raw-settings/1.0/\">\n"
        "   <crs:ToneCurvePV2012>\n"
        "    <rdf:Seq>\n"
        "     <rdf:li>0, 0</rdf:li>\n"
        "     <rdf:li>255, 255</rdf:li>\n"
        "    </rdf:Seq>\n"
        "   </crs:ToneCurvePV2012>\n"
        "  </rdf:Description>\n"
        " </rdf:RDF>\n"
        "</x:xmpmeta>\n";

static void test_lightroom(void)
{
	g_autoptr(PixMeta) m = read_str(lightroom_sidecar);

	g_assert_cmpstr(m->make, ==, "NIKON CORPORATION");
	g_assert_cmpstr(m->model, ==, "NIKON D750");
	g_assert_cmpint(m->orientation, ==, 8);
	g_assert_cmpfloat_with_epsilon(m->exposure_s, 1.0 / 250, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->fnumber, 5.6, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->focal_mm, 85, 1e-12);
	g_assert_cmpint(m->iso, ==, 400);
	g_assert_cmpstr(m->date_taken, ==, "2019-05-04T14:23:11.52");
	g_assert_cmpstr(m->date_tz, ==, "+02:00");
	g_assert_cmpstr(m->date_source, ==, "XMP exif:DateTimeOriginal");
	/* exifEX:LensModel is EXIF's LensModel; aux:Lens only a fallback */
	g_assert_cmpstr(m->lens, ==, "AF-S NIKKOR 85mm f/1.8G");
	g_assert_true(isnan(m->gps_lat));
	assert_sane(m);
}

/* As digiKam writes through Exiv2: an xpacket wrapper, attributes, a
 * date-only photoshop:DateCreated (no time: not a date taken), GPS with
 * seconds, below sea level. */
static const char digikam_sidecar[] =
        "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"XMP Core 4.4.0-Exiv2\">\n"
        " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
        "    xmlns:exif=\"http://ns.adobe.com/exif/1.0/\"\n"
        "    xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\"\n"
        "    xmlns:photoshop=\"http://ns.adobe.com/photoshop/1.0/\"\n"
        "    xmlns:digiKam=\"http://www.digikam.org/ns/1.0/\"\n"
        "   photoshop:DateCreated=\"2015-08-01\"\n"
        "   xmp:CreateDate=\"2015-08-01T09:05Z\"\n"
        "   tiff:Make=\"Canon\"\n"
        "   tiff:Model=\"Canon EOS 80D\"\n"
        "   tiff:Orientation=\"6\"\n"
        "   exif:GPSVersionID=\"2.0.0.0\"\n"
        "   exif:GPSLatitude=\"31,33,12.5S\"\n"
        "   exif:GPSLongitude=\"35,28,30E\"\n"
        "   exif:GPSAltitude=\"430/1\"\n"
        "   exif:GPSAltitudeRef=\"1\">\n"
        "   <digiKam:TagsList>\n"
        "    <rdf:Seq>\n"
        "     <rdf:li>Places/Dead Sea</rdf:li>\n"
        "    </rdf:Seq>\n"
        "   </digiKam:TagsList>\n"
        "  </rdf:Description>\n"
        " </rdf:RDF>\n"
        "</x:xmpmeta>\n"
        "<?xpacket end=\"w\"?>";

static void test_digikam(void)
{
	g_autoptr(PixMeta) m = read_str(digikam_sidecar);

	g_assert_cmpstr(m->date_taken, ==, "2015-08-01T09:05:00");
	g_assert_cmpstr(m->date_tz, ==, "+00:00");
	g_assert_cmpstr(m->date_source, ==, "XMP xmp:CreateDate");
	g_assert_cmpstr(m->make, ==, "Canon");
	g_assert_cmpstr(m->model, ==, "Canon EOS 80D");
	g_assert_cmpint(m->orientation, ==, 6);
	g_assert_cmpfloat_with_epsilon(m->gps_lat, -(31 + 33.0 / 60 + 12.5 / 3600), 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_lon, 35 + 28.0 / 60 + 30.0 / 3600, 1e-9);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -430, 1e-9);
	assert_sane(m);
}

/* --- each field --- */

static void test_fields(void)
{
	g_autoptr(PixMeta) m = read_packet("exif:FocalLength=\"24\" exif:ExposureTime=\"0.004\"",
	                                   "<exif:FNumber>4/1</exif:FNumber>\n"
	                                   "<aux:Lens>  EF24-105mm f/4L IS USM </aux:Lens>\n"
	                                   "<exifEX:PhotographicSensitivity>3200</exifEX:PhotographicSensitivity>\n"
	                                   "<tiff:Orientation>3</tiff:Orientation>\n"
	                                   "<exif:DateTimeDigitized>2020-02-29T23:59:60-0330</exif:DateTimeDigitized>");

	g_assert_cmpfloat_with_epsilon(m->focal_mm, 24, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->exposure_s, 0.004, 1e-12);
	g_assert_cmpfloat_with_epsilon(m->fnumber, 4, 1e-12);
	g_assert_cmpstr(m->lens, ==, "EF24-105mm f/4L IS USM");
	g_assert_cmpint(m->iso, ==, 3200);
	g_assert_cmpint(m->orientation, ==, 3);
	g_assert_cmpstr(m->date_taken, ==, "2020-02-29T23:59:60");
	g_assert_cmpstr(m->date_tz, ==, "-03:30");
	g_assert_cmpstr(m->date_source, ==, "XMP exif:DateTimeDigitized");
	assert_sane(m);
}

/* One property alone, in element form: its value read, or refused. */
typedef struct {
	const char *prop;
	const char *value;
	const char *want;       /* as text: date_taken+" "+date_tz, or %.9g, or NULL when refused */
} ValueCase;

static char *field_text(const PixMeta *m, const char *prop)
{
	if (g_str_has_suffix(prop, "Date") || g_str_has_prefix(prop, "exif:DateTime") ||
	    g_str_has_suffix(prop, "DateCreated"))
		return m->date_taken == NULL ? NULL : g_strdup_printf("%s %s", m->date_taken, m->date_tz ? m->date_tz : "-");
	if (strcmp(prop, "exif:GPSLatitude") == 0)
		return isnan(m->gps_lat) ? NULL : g_strdup_printf("%.9g", m->gps_lat);
	if (strcmp(prop, "exif:GPSLongitude") == 0)
		return isnan(m->gps_lon) ? NULL : g_strdup_printf("%.9g", m->gps_lon);
	if (strcmp(prop, "exif:ExposureTime") == 0)
		return isnan(m->exposure_s) ? NULL : g_strdup_printf("%.9g", m->exposure_s);
	if (strcmp(prop, "exif:FNumber") == 0)
		return isnan(m->fnumber) ? NULL : g_strdup_printf("%.9g", m->fnumber);
	if (strcmp(prop, "exif:GPSAltitude") == 0)
		return isnan(m->gps_alt_m) ? NULL : g_strdup_printf("%.9g", m->gps_alt_m);
	if (strcmp(prop, "tiff:Orientation") == 0)
		return m->orientation < 0 ? NULL : g_strdup_printf("%d", m->orientation);
	if (strcmp(prop, "exif:ISOSpeedRatings") == 0)
		return m->iso < 0 ? NULL : g_strdup_printf("%" G_GINT64_FORMAT, m->iso);
	if (strcmp(prop, "tiff:Make") == 0)
		return g_strdup(m->make);
	g_assert_not_reached();
}

static void test_values(void)
{
	static const ValueCase cases[] = {
		/* dates */
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55", "2004-08-27T13:52:55 -" },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55Z", "2004-08-27T13:52:55 +00:00" },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55.123456789123-07:00", "2004-08-27T13:52:55.123456789 -07:00" },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52+05:45", "2004-08-27T13:52:00 +05:45" },
		{ "exif:DateTimeOriginal", "2004:08:27 13:52:55", "2004-08-27T13:52:55 -" },
		{ "exif:DateTimeOriginal", " 2004-08-27T13:52:55 ", "2004-08-27T13:52:55 -" },
		{ "exif:DateTimeOriginal", "2004-08-27", NULL },
		{ "exif:DateTimeOriginal", "2004-08", NULL },
		{ "exif:DateTimeOriginal", "0000:00:00 00:00:00", NULL },
		{ "exif:DateTimeOriginal", "2004-13-27T13:52:55", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T24:52:55", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55+", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55+2", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55+15:00", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55.", NULL },
		{ "exif:DateTimeOriginal", "2004-08-27T13:52:55 junk", NULL },
		{ "exif:DateTimeOriginal", "2004-08:27T13:52:55", NULL },
		{ "xmp:CreateDate", "2011-09-23T12:43:03Z", "2011-09-23T12:43:03 +00:00" },
		{ "photoshop:DateCreated", "2011-09-23T12:43:03+01:00", "2011-09-23T12:43:03 +01:00" },
		/* coordinates */
		{ "exif:GPSLatitude", "48,51.5N", "48.8583333" },
		{ "exif:GPSLatitude", "48,51,30S", "-48.8583333" },
		{ "exif:GPSLatitude", "48,51,30s", "-48.8583333" },
		{ "exif:GPSLatitude", "48.8583N", "48.8583" },
		{ "exif:GPSLatitude", "-48.8583", "-48.8583" },
		{ "exif:GPSLatitude", "48,51.5E", NULL },
		{ "exif:GPSLatitude", "91,0N", NULL },
		{ "exif:GPSLatitude", "48,60N", NULL },
		{ "exif:GPSLatitude", "48,51,60N", NULL },
		{ "exif:GPSLatitude", "-48,51.5N", NULL },
		{ "exif:GPSLatitude", "48,51.5NN", NULL },
		{ "exif:GPSLatitude", "N", NULL },
		{ "exif:GPSLatitude", "nan", NULL },
		{ "exif:GPSLatitude", "1e2N", NULL },
		{ "exif:GPSLongitude", "179,59.99W", "-179.999833" },
		{ "exif:GPSLongitude", "181,0E", NULL },
		{ "exif:GPSLongitude", "2,17.7N", NULL },
		/* rationals */
		{ "exif:ExposureTime", "1/200", "0.005" },
		{ "exif:ExposureTime", "1/500 sec.", NULL },
		{ "exif:ExposureTime", "1/0", NULL },
		{ "exif:ExposureTime", "0/1", NULL },
		{ "exif:ExposureTime", "-1/2", NULL },
		{ "exif:ExposureTime", "30", "30" },
		{ "exif:ExposureTime", "inf", NULL },
		{ "exif:ExposureTime", "0x10", NULL },
		{ "exif:FNumber", "f/5,6", NULL },
		{ "exif:FNumber", "28/10", "2.8" },
		{ "exif:FNumber", "1/-10", NULL },
		{ "exif:FNumber", "100000000000000000000000000000000000000000/1", NULL },
		{ "exif:GPSAltitude", "0/1", "0" },
		{ "exif:GPSAltitude", "12.5", "12.5" },
		/* integers */
		{ "tiff:Orientation", "6", "6" },
		{ "tiff:Orientation", "0", NULL },
		{ "tiff:Orientation", "9", NULL },
		{ "tiff:Orientation", "Top-left", NULL },
		{ "tiff:Orientation", "6.0", NULL },
		{ "exif:ISOSpeedRatings", "<rdf:Seq><rdf:li>0</rdf:li><rdf:li>200</rdf:li></rdf:Seq>", "200" },
		{ "exif:ISOSpeedRatings", "<rdf:Seq><rdf:li>x</rdf:li></rdf:Seq>", NULL },
		{ "exif:ISOSpeedRatings", "99999999999999999999", NULL },
		/* text */
		{ "tiff:Make", "  Canon\n", "Canon" },
		{ "tiff:Make", "Fuji &amp; Co &#x263A;", "Fuji & Co \xe2\x98\xba" },
		{ "tiff:Make", "<![CDATA[Ri<c>oh]]>", "Ri<c>oh" },
		{ "tiff:Make", "   ", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		const ValueCase *c = &cases[i];
		/* a coordinate needs its partner to be taken */
		const char *partner = strcmp(c->prop, "exif:GPSLatitude") == 0    ? "<exif:GPSLongitude>1,0E</exif:GPSLongitude>"
		                      : strcmp(c->prop, "exif:GPSLongitude") == 0 ? "<exif:GPSLatitude>1,0N</exif:GPSLatitude>"
		                                                                   : "";
		g_autofree char *body = g_strdup_printf("<%s>%s</%s>%s", c->prop, c->value, c->prop, partner);
		g_autoptr(PixMeta) m = read_packet("", body);
		g_autofree char *got = field_text(m, c->prop);
		if (g_strcmp0(got, c->want) != 0)
			g_error("%s '%s': got '%s', want '%s'", c->prop, c->value, got ? got : "(none)",
			        c->want ? c->want : "(none)");
		assert_sane(m);
	}
}

/* Latitude and longitude are one value: one alone is not taken. */
static void test_gps_pair(void)
{
	g_autoptr(PixMeta) a = read_packet("exif:GPSLatitude=\"10,30N\"", "");
	g_assert_true(isnan(a->gps_lat) && isnan(a->gps_lon));
	g_autoptr(PixMeta) b = read_packet("exif:GPSLatitude=\"10,30N\" exif:GPSLongitude=\"20,30X\"", "");
	g_assert_true(isnan(b->gps_lat) && isnan(b->gps_lon));
	/* the altitude stands on its own, as in EXIF */
	g_autoptr(PixMeta) c = read_packet("exif:GPSAltitude=\"7/2\" exif:GPSAltitudeRef=\"2\"", "");
	g_assert_cmpfloat_with_epsilon(c->gps_alt_m, 3.5, 1e-12);
}

/* --- precedence --- */

static void test_date_precedence(void)
{
	static const struct {
		const char *attrs;
		const char *want_source;
		const char *want_date;
	} cases[] = {
		{ "exif:DateTimeDigitized=\"2001-01-01T00:00:04\" xmp:CreateDate=\"2001-01-01T00:00:03\" "
		  "photoshop:DateCreated=\"2001-01-01T00:00:02\" exif:DateTimeOriginal=\"2001-01-01T00:00:01\"",
		  "XMP exif:DateTimeOriginal", "2001-01-01T00:00:01" },
		{ "exif:DateTimeDigitized=\"2001-01-01T00:00:04\" xmp:CreateDate=\"2001-01-01T00:00:03\" "
		  "photoshop:DateCreated=\"2001-01-01T00:00:02\"",
		  "XMP photoshop:DateCreated", "2001-01-01T00:00:02" },
		{ "exif:DateTimeDigitized=\"2001-01-01T00:00:04\" xmp:CreateDate=\"2001-01-01T00:00:03\"",
		  "XMP xmp:CreateDate", "2001-01-01T00:00:03" },
		/* a source without a usable date gives way to the next */
		{ "exif:DateTimeOriginal=\"garbage\" photoshop:DateCreated=\"2001-01-01\" "
		  "exif:DateTimeDigitized=\"2001-01-01T00:00:04\"",
		  "XMP exif:DateTimeDigitized", "2001-01-01T00:00:04" },
		/* xmp:ModifyDate is not when the photo was taken */
		{ "xmp:ModifyDate=\"2001-01-01T00:00:05\"", NULL, NULL },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(PixMeta) m = read_packet(cases[i].attrs, "");
		g_assert_cmpstr(m->date_source, ==, cases[i].want_source);
		g_assert_cmpstr(m->date_taken, ==, cases[i].want_date);
	}
}

/* Fields already known (from EXIF, read first) are kept; the rest are
 * filled. */
static void test_known_fields_kept(void)
{
	g_autoptr(PixMeta) m = pix_meta_new();
	m->date_taken = g_strdup("1999-12-31T23:59:59");
	m->date_source = "DateTimeOriginal";
	m->make = g_strdup("EXIF make");
	m->lens = g_strdup("EXIF lens");
	m->fnumber = 8;
	m->iso = 100;
	m->orientation = 1;
	m->gps_lat = 1;
	m->gps_lon = 2;

	pix_meta_read_xmp((const guint8 *)lightroom_sidecar, strlen(lightroom_sidecar), m);
	g_assert_cmpstr(m->date_taken, ==, "1999-12-31T23:59:59");
	g_assert_null(m->date_tz);      /* an offset belongs with its date */
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	g_assert_cmpstr(m->make, ==, "EXIF make");
	g_assert_cmpstr(m->lens, ==, "EXIF lens");
	g_assert_cmpfloat(m->fnumber, ==, 8);
	g_assert_cmpint(m->iso, ==, 100);
	g_assert_cmpint(m->orientation, ==, 1);
	/* unknown ones filled */
	g_assert_cmpstr(m->model, ==, "NIKON D750");
	g_assert_cmpfloat_with_epsilon(m->exposure_s, 1.0 / 250, 1e-12);

	/* a known position is one value: the XMP's is not mixed in */
	pix_meta_read_xmp((const guint8 *)digikam_sidecar, strlen(digikam_sidecar), m);
	g_assert_cmpfloat(m->gps_lat, ==, 1);
	g_assert_cmpfloat(m->gps_lon, ==, 2);
	g_assert_cmpfloat_with_epsilon(m->gps_alt_m, -430, 1e-9);
}

/* The first usable value of a property wins, in document order. */
static void test_first_value_wins(void)
{
	g_autoptr(PixMeta) m = read_packet("tiff:Make=\"First\" tiff:Orientation=\"0\"",
	                                   "<tiff:Make>Second</tiff:Make>\n"
	                                   "<tiff:Orientation>5</tiff:Orientation>\n"
	                                   "<tiff:Orientation>7</tiff:Orientation>");
	g_assert_cmpstr(m->make, ==, "First");
	g_assert_cmpint(m->orientation, ==, 5);
}

/* --- namespaces and structure --- */

static void test_namespaces(void)
{
	/* any prefix, bound to the right URI */
	g_autoptr(PixMeta) a = read_str(
	        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><r:RDF xmlns:r='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	        "<r:Description xmlns:e='http://ns.adobe.com/exif/1.0/' xmlns:t='http://ns.adobe.com/tiff/1.0/'"
	        " e:FNumber='2/1'><t:Model>Odd</t:Model></r:Description></r:RDF></x:xmpmeta>");
	g_assert_cmpfloat(a->fnumber, ==, 2);
	g_assert_cmpstr(a->model, ==, "Odd");

	/* the usual prefix bound to another URI is not the property */
	g_autoptr(PixMeta) b = read_str(
	        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	        "<rdf:Description xmlns:exif='http://example.com/not-exif/' xmlns:tiff='http://ns.adobe.com/tiff/1.0'"
	        " exif:FNumber='2/1'><tiff:Model>No slash</tiff:Model></rdf:Description></rdf:RDF></x:xmpmeta>");
	assert_empty(b);

	/* a default namespace for elements (not for attributes); inner
	 * declarations shadow outer ones and end with their element */
	g_autoptr(PixMeta) c = read_str(
	        "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' xmlns:p='http://ns.adobe.com/tiff/1.0/'>"
	        "<rdf:Description xmlns='http://ns.adobe.com/exif/1.0/' FNumber='2/1'>"
	        "<ExposureTime>1/8</ExposureTime>"
	        "<p:Make xmlns:p='http://example.com/'>Shadowed</p:Make>"
	        "<p:Model>Outer</p:Model>"
	        "</rdf:Description></rdf:RDF>");
	g_assert_true(isnan(c->fnumber));
	g_assert_cmpfloat(c->exposure_s, ==, 0.125);
	g_assert_null(c->make);
	g_assert_cmpstr(c->model, ==, "Outer");

	/* an undeclared prefix, and xmlns="" undeclaring the default */
	g_autoptr(PixMeta) d = read_str(
	        "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	        "<rdf:Description xmlns='http://ns.adobe.com/tiff/1.0/'>"
	        "<tiff:Make>Undeclared</tiff:Make><Model xmlns=''>None</Model><Orientation>2</Orientation>"
	        "</rdf:Description></rdf:RDF>");
	g_assert_null(d->make);
	g_assert_null(d->model);
	g_assert_cmpint(d->orientation, ==, 2);
}

/* Only top-level properties: the same names inside a structure, outside
 * rdf:RDF or in an rdf:Description nested somewhere describe something
 * else. */
static void test_structures_ignored(void)
{
	g_autoptr(PixMeta) m = read_packet(
	        "xmlns:Iptc4xmpExt=\"http://iptc.org/std/Iptc4xmpExt/2008-02-29/\"",
	        "<Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li rdf:parseType=\"Resource\">\n"
	        " <exif:GPSLatitude>10,0N</exif:GPSLatitude><exif:GPSLongitude>20,0E</exif:GPSLongitude>\n"
	        "</rdf:li></rdf:Bag></Iptc4xmpExt:LocationShown>\n"
	        "<Iptc4xmpExt:LocationCreated rdf:parseType=\"Resource\">\n"
	        " <tiff:Make>Nested</tiff:Make>\n"
	        "</Iptc4xmpExt:LocationCreated>\n"
	        "<exif:Flash><rdf:Description exif:FNumber=\"2/1\"><tiff:Model>Deep</tiff:Model></rdf:Description></exif:Flash>\n"
	        "<exif:ISOSpeedRatings><rdf:Seq><rdf:li><rdf:Description><exif:X>1</exif:X></rdf:Description>"
	        "</rdf:li></rdf:Seq></exif:ISOSpeedRatings>");
	assert_empty(m);

	g_autoptr(PixMeta) outside = read_str(
	        "<x:xmpmeta xmlns:x='adobe:ns:meta/' xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Outside'>"
	        "<tiff:Model>Outside</tiff:Model>"
	        "<rdf:Description xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' tiff:Make='No RDF'/>"
	        "</x:xmpmeta>");
	assert_empty(outside);
}

/* --- hostile input --- */

static void test_hostile_unclosed(void)
{
	/* the parse stops at the damage; what was read before it counts */
	g_autofree char *good = packet("tiff:Make=\"Canon\"", "<tiff:Model>Canon EOS</tiff:Model>");
	gsize cut = (gsize)(strstr(good, "</rdf:Description>") - good);
	g_autofree char *truncated = g_strndup(good, cut);
	g_autoptr(PixMeta) a = read_str(truncated);
	g_assert_cmpstr(a->make, ==, "Canon");
	g_assert_cmpstr(a->model, ==, "Canon EOS");

	/* a mismatched end tag after the values */
	g_autoptr(PixMeta) b = read_packet("tiff:Make=\"Canon\"", "<tiff:Model>EOS</tiff:Model></oops>");
	g_assert_cmpstr(b->make, ==, "Canon");
	g_assert_cmpstr(b->model, ==, "EOS");

	/* a value cut before its end tag is not taken */
	g_autoptr(PixMeta) c = read_str("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	                                "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/'>"
	                                "<tiff:Model>Canon EO");
	g_assert_null(c->model);
}

static void test_hostile_bytes(void)
{
	/* invalid UTF-8 after a value, and inside one */
	g_autoptr(PixMeta) a = read_packet("tiff:Make=\"Canon\"", "<tiff:Model>\xff\xfe</tiff:Model>");
	g_assert_cmpstr(a->make, ==, "Canon");
	g_assert_null(a->model);
	g_autoptr(PixMeta) b = read_packet("tiff:Make=\"Can\xc3\x28on\"", "");
	g_assert_null(b->make);

	/* a NUL inside: the parse stops there */
	static const char with_nul[] = "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	                               "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='A'/>"
	                               "\0<rdf:Description tiff:Model='B'/></rdf:RDF>";
	g_autoptr(PixMeta) c = pix_meta_new();
	pix_meta_read_xmp((const guint8 *)with_nul, sizeof with_nul - 1, c);
	g_assert_cmpstr(c->make, ==, "A");
	g_assert_null(c->model);

	/* padded with NULs, as some writers leave a packet: fine */
	g_autofree char *good = packet("tiff:Make=\"Canon\"", "");
	gsize len = strlen(good);
	g_autofree guint8 *padded = g_malloc0(len + 100);
	memcpy(padded, good, len);
	g_autoptr(PixMeta) d = pix_meta_new();
	pix_meta_read_xmp(padded, len + 100, d);
	g_assert_cmpstr(d->make, ==, "Canon");

	/* nothing, and not XML */
	g_autoptr(PixMeta) e = pix_meta_new();
	pix_meta_read_xmp(NULL, 0, e);
	pix_meta_read_xmp((const guint8 *)"\xef\xbb\xbf", 3, e);
	pix_meta_read_xmp((const guint8 *)"GIF89a\x01\x02", 8, e);
	pix_meta_read_xmp((const guint8 *)"<", 1, e);
	static const char entities[] = "<!DOCTYPE x [<!ENTITY a 'aaaa'>]><x>&a;&a;</x>";
	pix_meta_read_xmp((const guint8 *)entities, strlen(entities), e);
	assert_empty(e);

	/* random bytes */
	for (guint i = 0; i < 500; i++) {
		gsize n = (gsize)g_test_rand_int_range(0, 400);
		g_autofree guint8 *junk = g_malloc(n + 1);
		for (gsize j = 0; j < n; j++)
			junk[j] = (guint8)g_test_rand_int_range(0, 256);
		g_autoptr(PixMeta) m = pix_meta_new();
		pix_meta_read_xmp(junk, n, m);
		assert_sane(m);
	}
}

static void test_hostile_deep(void)
{
	/* 100,000 nested elements: refused at the depth limit, no recursion */
	GString *s = g_string_new("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	                          "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Before'>");
	for (guint i = 0; i < 100000; i++)
		g_string_append(s, "<tiff:Model>");
	g_autoptr(PixMeta) a = read_str(s->str);
	g_assert_cmpstr(a->make, ==, "Before");
	g_assert_null(a->model);
	g_string_free(s, TRUE);

	/* deep arrays inside a property read: nothing taken from below */
	s = g_string_new("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	                 "<rdf:Description xmlns:exif='http://ns.adobe.com/exif/1.0/'><exif:ISOSpeedRatings>");
	for (guint i = 0; i < 40; i++)
		g_string_append(s, "<rdf:Seq><rdf:li>");
	g_string_append(s, "100");
	for (guint i = 0; i < 40; i++)
		g_string_append(s, "</rdf:li></rdf:Seq>");
	g_string_append(s, "</exif:ISOSpeedRatings></rdf:Description></rdf:RDF>");
	g_autoptr(PixMeta) b = read_str(s->str);
	g_assert_cmpint(b->iso, ==, -1);
	g_string_free(s, TRUE);
}

static void test_hostile_huge(void)
{
	/* a 3 MiB attribute value and a 3 MiB element value: dropped, the
	 * properties around them read */
	gsize big = 3u << 20;
	g_autofree char *filler = g_malloc(big + 1);
	memset(filler, 'A', big);
	filler[big] = '\0';
	g_autofree char *attrs = g_strdup_printf("tiff:Make=\"%s\" tiff:Model=\"M\"", filler);
	g_autoptr(PixMeta) a = read_packet(attrs, "<tiff:Orientation>2</tiff:Orientation>");
	g_assert_null(a->make);
	g_assert_cmpstr(a->model, ==, "M");
	g_assert_cmpint(a->orientation, ==, 2);
	g_autofree char *body = g_strdup_printf("<tiff:Make>%s</tiff:Make><tiff:Orientation>4</tiff:Orientation>", filler);
	g_autoptr(PixMeta) b = read_packet("tiff:Model=\"M\"", body);
	g_assert_null(b->make);
	g_assert_cmpint(b->orientation, ==, 4);

	/* a value just at the limit is taken, one byte more is not */
	g_autofree char *at_limit = g_strnfill(1024, 'x');
	g_autofree char *over_limit = g_strnfill(1025, 'x');
	g_autofree char *b1 = g_strdup_printf("<tiff:Make>%s</tiff:Make>", at_limit);
	g_autofree char *b2 = g_strdup_printf("<tiff:Make>%s</tiff:Make>", over_limit);
	g_autoptr(PixMeta) c = read_packet("", b1);
	g_autoptr(PixMeta) d = read_packet("", b2);
	g_assert_cmpstr(c->make, ==, at_limit);
	g_assert_null(d->make);

	/* over 4 MiB: only the first 4 MiB are read */
	g_autofree char *head = packet("tiff:Make=\"Early\"", "<!-- padding");
	g_autofree char *tail = packet("", "--><tiff:Model>Late</tiff:Model>");
	gsize total = (5u << 20);
	g_autofree char *doc = g_malloc(total + 1);
	memset(doc, ' ', total);
	memcpy(doc, head, strlen(head));
	strcpy(doc + total - strlen(tail), tail);
	g_autoptr(PixMeta) e = read_str(doc);
	g_assert_cmpstr(e->make, ==, "Early");
	g_assert_null(e->model);

	/* more namespace declarations in scope than the limit */
	GString *s = g_string_new("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	                          "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Before'>");
	g_string_append(s, "<tiff:Orientation");
	for (guint i = 0; i < 3000; i++)
		g_string_append_printf(s, " xmlns:n%u='urn:%u'", i, i);
	g_string_append(s, ">3</tiff:Orientation><tiff:Model>After</tiff:Model>");
	g_autoptr(PixMeta) f = read_str(s->str);
	g_assert_cmpstr(f->make, ==, "Before");
	g_assert_cmpint(f->orientation, ==, -1);
	g_assert_null(f->model);
	g_string_free(s, TRUE);
}

/* Every prefix of the packets, and random mutations of them: no crash,
 * and sane values. */
static void test_hostile_mutations(void)
{
	const char *const samples[] = { darktable_sidecar, lightroom_sidecar, digikam_sidecar };
	for (guint k = 0; k < G_N_ELEMENTS(samples); k++) {
		gsize len = strlen(samples[k]);
		for (gsize n = 0; n <= len; n++) {
			g_autofree guint8 *copy = g_memdup2(samples[k], n);
			g_autoptr(PixMeta) m = pix_meta_new();
			pix_meta_read_xmp(copy, n, m);
			assert_sane(m);
		}
		for (guint i = 0; i < 300; i++) {
			g_autofree guint8 *copy = g_memdup2(samples[k], len);
			guint flips = (guint)g_test_rand_int_range(1, 10);
			for (guint f = 0; f < flips; f++) {
				gsize at = (gsize)g_test_rand_int_range(0, (gint32)len);
				static const char interesting[] = "<>/:=\"'&;!?[] \xff\xc3";
				copy[at] = g_test_rand_bit() ? (guint8)g_test_rand_int_range(0, 256)
				                             : (guint8)interesting[g_test_rand_int_range(0, sizeof interesting - 1)];
			}
			g_autoptr(PixMeta) m = pix_meta_new();
			pix_meta_read_xmp(copy, len, m);
			assert_sane(m);
		}
	}
}

/* --- the sidecar container, through PixMetaParser --- */

static PixItem *parse_file(const guint8 *data, gsize len, gsize chunk)
{
	g_autoptr(PixDir) dir = pix_dir_new("/t");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "IMG_0001.CR2.xmp");
	PixMetaParser *mp = pix_meta_parser_new();

	for (gsize at = 0; at < len; at += chunk) {
		gsize n = MIN(chunk, len - at);
		g_autofree guint8 *piece = g_memdup2(data + at, n);
		pix_meta_parser_feed(mp, piece, n);
	}
	pix_meta_parser_finish(mp, item);
	pix_meta_parser_free(mp);
	return item;
}

static void test_sidecar(void)
{
	const char *const files[] = { darktable_sidecar, lightroom_sidecar, digikam_sidecar };
	const char *const makes[] = { NULL, "NIKON CORPORATION", "Canon" };
	for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
		static const gsize chunks[] = { 1, 7, 64, 100000 };
		for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
			g_autoptr(PixItem) item = parse_file((const guint8 *)files[i], strlen(files[i]), chunks[c]);
			g_assert_cmpstr(item->mime, ==, "application/rdf+xml");
			g_assert_cmpint(item->media, ==, PIX_MEDIA_SIDECAR);
			g_assert_null(item->error);
			g_assert_nonnull(item->meta);
			g_assert_nonnull(item->meta->date_taken);
			g_assert_cmpstr(item->meta->make, ==, makes[i]);
		}
	}
}

/* The openings tools write are all recognised as XMP. */
static void test_sidecar_openings(void)
{
	static const char *const openings[] = {
		"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>\n",
		"\xef\xbb\xbf<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n",
		"\xef\xbb\xbf",
		"",
	};
	static const char body[] =
	        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	        "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Pentax'/></rdf:RDF>"
	        "</x:xmpmeta>\n";
	for (guint i = 0; i < G_N_ELEMENTS(openings); i++) {
		g_autofree char *doc = g_strconcat(openings[i], body, NULL);
		g_autoptr(PixItem) item = parse_file((const guint8 *)doc, strlen(doc), 4096);
		g_assert_cmpstr(item->mime, ==, "application/rdf+xml");
		g_assert_null(item->error);
		g_assert_cmpstr(item->meta->make, ==, "Pentax");
	}
	/* XMP before 2002 (x:xapmeta), and a bare rdf:RDF */
	static const char *const others[] = {
		"<x:xapmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description xmlns:xap='http://ns.adobe.com/xap/1.0/' xap:CreateDate='2001-02-03T04:05:06'/>"
		"</rdf:RDF></x:xapmeta>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description xmlns:xap='http://ns.adobe.com/xap/1.0/' xap:CreateDate='2001-02-03T04:05:06'/>"
		"</rdf:RDF>",
	};
	for (guint i = 0; i < G_N_ELEMENTS(others); i++) {
		g_autoptr(PixItem) item = parse_file((const guint8 *)others[i], strlen(others[i]), 4096);
		g_assert_cmpstr(item->mime, ==, "application/rdf+xml");
		g_assert_null(item->error);
		g_assert_cmpstr(item->meta->date_taken, ==, "2001-02-03T04:05:06");
		g_assert_cmpstr(item->meta->date_source, ==, "XMP xmp:CreateDate");
	}
	/* other XML is not a sidecar */
	static const char svg[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns='http://www.w3.org/2000/svg'/>";
	g_autoptr(PixItem) item = parse_file((const guint8 *)svg, strlen(svg), 4096);
	g_assert_cmpstr(item->mime, !=, "application/rdf+xml");
	g_assert_null(item->error);
}

/* A sidecar that is not XMP: the item says so, and keeps what was read. */
static void test_sidecar_corrupt(void)
{
	static const struct {
		const char *doc;
		const char *want;       /* the start of item->error */
	} cases[] = {
		{ "<?xpacket begin=''?>\n<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF "
		  "xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description "
		  "xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Kept'/>\n<<<garbage>",
		  "corrupt XMP: malformed XML at line 3" },
		{ "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		  "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Kept'>",
		  "corrupt XMP: truncated XML (3 elements left open)" },
		{ "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		  "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Kept'/></rdf:RDF></x:xmpmeta><!-- ",
		  "corrupt XMP: truncated XML (it ends inside markup)" },
		{ "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		  "<rdf:Description xmlns:tiff='http://ns.adobe.com/tiff/1.0/' tiff:Make='Kept'/>\xff</rdf:RDF></x:xmpmeta>",
		  "corrupt XMP: invalid UTF-8 at line 1" },
		{ "<x:xmpmeta xmlns:x='adobe:ns:meta/'><x:other tiff:Make='Lost'/></x:xmpmeta>",
		  "corrupt XMP: no rdf:RDF element" },
		{ "<?xpacket begin=''?>                      ",
		  "corrupt XMP: no rdf:RDF element" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(PixItem) item = parse_file((const guint8 *)cases[i].doc, strlen(cases[i].doc), 5);
		g_assert_cmpstr(item->mime, ==, "application/rdf+xml");
		g_assert_nonnull(item->error);
		if (!g_str_has_prefix(item->error, cases[i].want))
			g_error("case %u: error '%s', want '%s...'", i, item->error, cases[i].want);
		g_assert_nonnull(item->meta);
		g_assert_cmpstr(item->meta->make, ==, i < 4 ? "Kept" : NULL);
	}

	/* deeper than the limit */
	GString *s = g_string_new("<x:xmpmeta xmlns:x='adobe:ns:meta/'>");
	for (guint i = 0; i < 200; i++)
		g_string_append(s, "<a>");
	g_autoptr(PixItem) item = parse_file((const guint8 *)s->str, s->len, 4096);
	g_assert_cmpstr(item->error, ==, "corrupt XMP: elements nested deeper than 64 at line 1");
	g_string_free(s, TRUE);
}

/* A sidecar over 4 MiB: its first 4 MiB read, the item says so. */
static void test_sidecar_too_large(void)
{
	g_autofree char *head = packet("tiff:Make=\"Early\"", "<!-- padding");
	gsize total = (4u << 20) + 10;
	g_autofree char *doc = g_malloc(total);
	memset(doc, ' ', total);
	memcpy(doc, head, strlen(head));
	/* a multi-byte character across the 4 MiB mark */
	memcpy(doc + (4u << 20) - 1, "\xe2\x98\xba", 3);
	g_autoptr(PixItem) item = parse_file((const guint8 *)doc, total, 65536);
	g_assert_cmpstr(item->error, ==, "XMP sidecar of 4194314 bytes: only its first 4194304 read");
	g_assert_cmpstr(item->meta->make, ==, "Early");
}

/* --- JPEG: the XMP APP1 segment captured --- */

static void put_segment(GByteArray *b, guint8 marker, const void *body, gsize len)
{
	guint8 head[4] = { 0xFF, marker, (guint8)((len + 2) >> 8), (guint8)(len + 2) };
	g_assert_cmpuint(len + 2, <=, 0xFFFF);
	g_byte_array_append(b, head, 4);
	g_byte_array_append(b, body, (guint)len);
}

static void put_app1(GByteArray *b, const char *header, gsize header_len, const char *payload)
{
	g_autoptr(GByteArray) body = g_byte_array_new();
	g_byte_array_append(body, (const guint8 *)header, (guint)header_len);
	g_byte_array_append(body, (const guint8 *)payload, (guint)strlen(payload));
	put_segment(b, 0xE1, body->data, body->len);
}

#define XMP_NS "http://ns.adobe.com/xap/1.0/"

/* A JPEG with the APP1 segments `app1` (header and payload pairs,
 * NULL-terminated) and a tiny image (transfer full). */
static GByteArray *jpeg_with(const char *const *app1, const gsize *header_lens)
{
	static const guint8 sof[] = { 8, 0, 16, 0, 32, 1, 1, 0x11, 0 };
	static const guint8 sos[] = { 1, 1, 0, 0, 63, 0 };
	static const guint8 scan[] = { 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56 };
	GByteArray *b = g_byte_array_new();
	g_byte_array_append(b, (const guint8 *)"\xFF\xD8", 2);
	for (guint i = 0; app1[i] != NULL; i += 2)
		put_app1(b, app1[i], header_lens[i / 2], app1[i + 1]);
	put_segment(b, 0xC0, sof, sizeof sof);
	put_segment(b, 0xDA, sos, sizeof sos);
	g_byte_array_append(b, scan, sizeof scan);
	g_byte_array_append(b, (const guint8 *)"\xFF\xD9", 2);
	return b;
}

static void parse_jpeg(const GByteArray *b, gsize chunk, PixJpegInfo *info)
{
	PixJpegParser *p = pix_jpeg_parser_new();
	for (gsize at = 0; at < b->len; at += chunk) {
		gsize n = MIN(chunk, b->len - at);
		g_autofree guint8 *piece = g_memdup2(b->data + at, n);
		pix_jpeg_parser_feed(p, piece, n);
	}
	pix_jpeg_parser_finish(p, info);
	pix_jpeg_parser_free(p);
}

static void assert_bytes(GBytes *got, const char *want)
{
	g_assert_nonnull(got);
	gsize len;
	const char *data = g_bytes_get_data(got, &len);
	g_assert_cmpuint(len, ==, strlen(want));
	g_assert_true(memcmp(data, want, len) == 0);
}

static void test_jpeg_xmp_captured(void)
{
	g_autofree char *xmp1 = packet("tiff:Make=\"Canon\"", "");
	const char *xmp2 = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>second</x:xmpmeta>";
	static const char ext[] = "http://ns.adobe.com/xmp/extension/";

	/* Exif, then XMP, then a second XMP segment (ignored) */
	{
		const char *const app1[] = { "Exif\0\0", "", XMP_NS, xmp1, XMP_NS, xmp2, NULL };
		const gsize lens[] = { 6, sizeof XMP_NS, sizeof XMP_NS };
		g_autoptr(GByteArray) b = jpeg_with(app1, lens);
		static const gsize chunks[] = { 1, 3, 29, 30, 4096 };
		for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
			PixJpegInfo info;
			parse_jpeg(b, chunks[c], &info);
			g_assert_null(info.error);
			g_assert_cmpint(info.width_px, ==, 32);
			g_assert_nonnull(info.exif);
			assert_bytes(info.xmp, xmp1);
			pix_jpeg_info_clear(&info);
			g_assert_null(info.xmp);
		}
	}
	/* XMP before Exif: both captured; extended XMP and a header without
	 * its NUL are not the main packet */
	{
		const char *const app1[] = { ext, "<extension/>", XMP_NS, "<no-nul/>", XMP_NS, xmp2,
		                             "Exif\0\0", "MM", NULL };
		const gsize lens[] = { sizeof ext, sizeof XMP_NS - 1, sizeof XMP_NS, 6 };
		g_autoptr(GByteArray) b = jpeg_with(app1, lens);
		PixJpegInfo info;
		parse_jpeg(b, 1, &info);
		g_assert_null(info.error);
		assert_bytes(info.xmp, xmp2);
		g_assert_nonnull(info.exif);
		g_assert_cmpuint(g_bytes_get_size(info.exif), ==, 8);
		pix_jpeg_info_clear(&info);
	}
	/* no XMP */
	{
		const char *const app1[] = { "Exif\0\0", "MM", NULL };
		const gsize lens[] = { 6 };
		g_autoptr(GByteArray) b = jpeg_with(app1, lens);
		PixJpegInfo info;
		parse_jpeg(b, 4096, &info);
		g_assert_null(info.xmp);
		g_assert_nonnull(info.exif);
		pix_jpeg_info_clear(&info);
	}
	/* an XMP segment cut by the end of the file is not captured */
	{
		const char *const app1[] = { XMP_NS, xmp1, NULL };
		const gsize lens[] = { sizeof XMP_NS };
		g_autoptr(GByteArray) b = jpeg_with(app1, lens);
		g_byte_array_set_size(b, 4 + sizeof XMP_NS + 20);
		PixJpegInfo info;
		parse_jpeg(b, 7, &info);
		g_assert_null(info.xmp);
		g_assert_nonnull(info.error);
		pix_jpeg_info_clear(&info);
	}
}

/* --- the shared samples --- */

static GBytes *sample_xmp(const char *samples, const char *rel)
{
	g_autofree char *path = g_build_filename(samples, rel, NULL);
	g_autofree char *data = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	g_autoptr(GByteArray) b = g_byte_array_new_take((guint8 *)g_steal_pointer(&data), len);
	PixJpegInfo info;
	parse_jpeg(b, 65536, &info);
	GBytes *xmp = info.xmp != NULL ? g_bytes_ref(info.xmp) : NULL;
	pix_jpeg_info_clear(&info);
	return xmp;
}

/* The oracle's value text for `tag` of sample `rel` ("" when absent). */
static char *oracle_value(const char *oracle, const char *rel, const char *tag)
{
	g_autofree char *key = g_strdup_printf("\"SourceFile\": \"./%s\"", rel);
	const char *start = strstr(oracle, key);
	g_assert_nonnull(start);
	g_autofree char *object = g_strndup(start, (gsize)(strchr(start, '}') - start));
	g_autofree char *tag_key = g_strdup_printf("\"%s\": ", tag);
	const char *p = strstr(object, tag_key);
	if (p == NULL)
		return g_strdup("");
	p += strlen(tag_key);
	if (*p == '"')
		return g_strndup(p + 1, (gsize)(strchr(p + 1, '"') - p - 1));
	return g_strndup(p, strcspn(p, ",}"));
}

/* exiftool's "YYYY:MM:DD HH:MM:SS[Z|+HH:MM]" for our date and offset. */
static char *as_exiftool_date(const PixMeta *m)
{
	g_autofree char *d = g_strdup(m->date_taken);
	d[4] = d[7] = ':';
	d[10] = ' ';
	if (m->date_tz == NULL)
		return g_steal_pointer(&d);
	return g_strconcat(d, strcmp(m->date_tz, "+00:00") == 0 ? "Z" : m->date_tz, NULL);
}

static void test_samples(void)
{
	const char *samples = pix_test_samples();
	if (samples == NULL)
		return;
	g_autofree char *oracle_path = g_build_filename(samples, "exiftool-oracle.json", NULL);
	g_autofree char *oracle = NULL;
	g_assert_true(g_file_get_contents(oracle_path, &oracle, NULL, NULL));

	/* its date is in the XMP only */
	const char *rel = "ianare__exif-samples/jpg/invalid/image01551.jpg";
	g_autoptr(GBytes) xmp = sample_xmp(samples, rel);
	g_assert_nonnull(xmp);
	g_autoptr(PixMeta) m = pix_meta_new();
	pix_meta_read_xmp(g_bytes_get_data(xmp, NULL), g_bytes_get_size(xmp), m);
	g_autofree char *want = oracle_value(oracle, rel, "CreateDate");
	g_autofree char *got = as_exiftool_date(m);
	g_assert_cmpstr(got, ==, want);
	g_assert_cmpstr(m->date_source, ==, "XMP xmp:CreateDate");

	/* its XMP repeats the EXIF, in element form with one description
	 * per namespace */
	rel = "ianare__exif-samples/jpg/Canon_DIGITAL_IXUS_400.jpg";
	g_autoptr(GBytes) xmp2 = sample_xmp(samples, rel);
	g_assert_nonnull(xmp2);
	g_autoptr(PixMeta) m2 = pix_meta_new();
	pix_meta_read_xmp(g_bytes_get_data(xmp2, NULL), g_bytes_get_size(xmp2), m2);
	g_autofree char *make = oracle_value(oracle, rel, "Make");
	g_autofree char *model = oracle_value(oracle, rel, "Model");
	g_autofree char *orientation = oracle_value(oracle, rel, "Orientation");
	g_autofree char *date = oracle_value(oracle, rel, "DateTimeOriginal");
	g_autofree char *exposure = oracle_value(oracle, rel, "ExposureTime");
	g_autofree char *fnumber = oracle_value(oracle, rel, "FNumber");
	g_assert_cmpstr(m2->make, ==, make);
	g_assert_cmpstr(m2->model, ==, model);
	g_assert_cmpint(m2->orientation, ==, atoi(orientation));
	g_autofree char *date2 = as_exiftool_date(m2);
	g_assert_true(g_str_has_prefix(date2, date));
	g_assert_cmpfloat_with_epsilon(m2->exposure_s, g_ascii_strtod(exposure, NULL), 1e-9);
	g_assert_cmpfloat_with_epsilon(m2->fnumber, g_ascii_strtod(fnumber, NULL), 1e-9);

	/* its position is in the XMP only (its EXIF GPS latitude and
	 * longitude are empty, which is what the oracle, EXIF first, shows):
	 * the values are exiftool's reading of the XMP, `exiftool -XMP:all -n` */
	rel = "drewnoakes__metadata-extractor-images/jpg/Nikon D5000.jpg";
	g_autoptr(GBytes) xmp3 = sample_xmp(samples, rel);
	g_assert_nonnull(xmp3);
	g_autoptr(PixMeta) m3 = pix_meta_new();
	pix_meta_read_xmp(g_bytes_get_data(xmp3, NULL), g_bytes_get_size(xmp3), m3);
	g_autofree char *lat = oracle_value(oracle, rel, "GPSLatitude");
	g_autofree char *alt = oracle_value(oracle, rel, "GPSAltitude");
	g_assert_cmpstr(lat, ==, "");
	g_assert_cmpfloat_with_epsilon(m3->gps_lat, 48.8887263666667, 1e-9);
	g_assert_cmpfloat_with_epsilon(m3->gps_lon, 21.0432511666667, 1e-9);
	g_assert_cmpfloat_with_epsilon(m3->gps_alt_m, g_ascii_strtod(alt, NULL), 1e-9);

	/* every sample JPEG with XMP: read without trouble, sanely */
	static const char *const with_xmp[] = {
		"Exiv2__exiv2/test/data/FurnaceCreekInn.jpg",
		"drewnoakes__metadata-extractor-images/jpg/FujiFilm FinePixS1Pro (1).jpg",
		"ianare__exif-samples/jpg/Nikon_D70.jpg",
		"ianare__exif-samples/jpg/Pentax_K10D.jpg",
		"ianare__exif-samples/jpg/gps/DSCN0042.jpg",
		"ianare__exif-samples/jpg/gps/DSCN0010.jpg",
		"ianare__exif-samples/jpg/tests/30-type_error.jpg",
		"ianare__exif-samples/jpg/tests/67-0_length_string.jpg",
		"ianare__exif-samples/jpg/tests/32-lens_data.jpeg",
		"ianare__exif-samples/jpg/orientation/portrait_1.jpg",
		"ianare__exif-samples/jpg/orientation/landscape_1.jpg",
		"exiftool__exiftool/t/images/Google.jpg",
	};
	for (guint i = 0; i < G_N_ELEMENTS(with_xmp); i++) {
		g_autoptr(GBytes) x = sample_xmp(samples, with_xmp[i]);
		g_assert_nonnull(x);
		g_autoptr(PixMeta) mx = pix_meta_new();
		pix_meta_read_xmp(g_bytes_get_data(x, NULL), g_bytes_get_size(x), mx);
		assert_sane(mx);
		/* where the XMP has the original date, it is exiftool's */
		g_autofree char *want_date = oracle_value(oracle, with_xmp[i], "DateTimeOriginal");
		if (mx->date_source != NULL && strcmp(mx->date_source, "XMP exif:DateTimeOriginal") == 0) {
			g_autofree char *got_date = as_exiftool_date(mx);
			g_assert_true(g_str_has_prefix(got_date, want_date));
		}
	}
}


/* --- the photographer's metadata (issue 28) --- */

/* A packet with the usual namespaces and those of the photographer's
 * tools, `body` in one rdf:Description with attributes `attrs`. */
static char *tag_packet(const char *attrs, const char *body)
{
	return g_strdup_printf(
	        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	        "<rdf:Description rdf:about=''"
	        " xmlns:dc='http://purl.org/dc/elements/1.1/' xmlns:xmp='http://ns.adobe.com/xap/1.0/'"
	        " xmlns:lr='http://ns.adobe.com/lightroom/1.0/' xmlns:digiKam='http://www.digikam.org/ns/1.0/'"
	        " xmlns:MicrosoftPhoto='http://ns.microsoft.com/photo/1.0/'"
	        " xmlns:photoshop='http://ns.adobe.com/photoshop/1.0/' xmlns:tiff='http://ns.adobe.com/tiff/1.0/'"
	        " xmlns:Iptc4xmpCore='http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/'"
	        " xmlns:Iptc4xmpExt='http://iptc.org/std/Iptc4xmpExt/2008-02-29/'"
	        " xmlns:mwg-rs='http://www.metadataworkinggroup.com/schemas/regions/'"
	        " xmlns:stArea='http://ns.adobe.com/xmp/sType/Area#' xmlns:stDim='http://ns.adobe.com/xap/1.0/sType/Dimensions#'"
	        " xmlns:MP='http://ns.microsoft.com/photo/1.2/' xmlns:MPRI='http://ns.microsoft.com/photo/1.2/t/RegionInfo#'"
	        " xmlns:MPReg='http://ns.microsoft.com/photo/1.2/t/Region#' xmlns:xmpNote='http://ns.adobe.com/xmp/note/'"
	        " %s>%s</rdf:Description></rdf:RDF></x:xmpmeta>", attrs, body);
}

/* The packet read and its tags finished; the note in *note. */
static PixMeta *read_tags(const char *attrs, const char *body, char **note)
{
	g_autofree char *p = tag_packet(attrs, body);
	PixMeta *m = read_str(p);
	*note = pix_meta_finish_tags(m);
	g_assert_true(m->tags == NULL || pix_tags_check(m->tags));
	return m;
}

static void test_tags_lightroom(void)
{
	/* Lightroom Classic: elements, every level in dc:subject, lang-alt
	 * texts with another language before x-default */
	g_autofree char *note = NULL;
	g_autoptr(PixMeta) m = read_tags("xmp:Rating='4' xmp:Label='Red' photoshop:City='Aarhus'",
		"<dc:subject><rdf:Bag><rdf:li>Places</rdf:li><rdf:li>Denmark</rdf:li><rdf:li>Aarhus</rdf:li>"
		"<rdf:li>sunset</rdf:li></rdf:Bag></dc:subject>"
		"<lr:hierarchicalSubject><rdf:Bag><rdf:li>Places|Denmark|Aarhus</rdf:li></rdf:Bag></lr:hierarchicalSubject>"
		"<dc:title><rdf:Alt><rdf:li xml:lang='da-DK'>Havnen</rdf:li><rdf:li xml:lang='x-default'>The harbour</rdf:li>"
		"</rdf:Alt></dc:title>"
		"<dc:description><rdf:Alt><rdf:li xml:lang='x-default'>Evening light</rdf:li></rdf:Alt></dc:description>"
		"<dc:rights><rdf:Alt><rdf:li xml:lang='en'>(c) Ann</rdf:li></rdf:Alt></dc:rights>"
		"<dc:creator><rdf:Seq><rdf:li>Ann</rdf:li><rdf:li>Ben</rdf:li></rdf:Seq></dc:creator>"
		"<photoshop:State>Midtjylland</photoshop:State><photoshop:Country>Denmark</photoshop:Country>"
		"<Iptc4xmpCore:Location>Harbour</Iptc4xmpCore:Location><Iptc4xmpCore:CountryCode>DK</Iptc4xmpCore:CountryCode>",
		&note);
	g_assert_null(note);
	PixTags *t = m->tags;
	g_assert_nonnull(t);
	g_autofree char *lines = pix_tags_keyword_lines(t);
	g_assert_cmpstr(lines, ==, "Places/Denmark/Aarhus\nsunset");
	g_assert_cmpuint(t->keywords->len, ==, 4);
	g_assert_cmpint(t->rating, ==, 4);
	g_assert_cmpstr(t->label, ==, "Red");
	g_assert_cmpstr(t->title, ==, "The harbour");
	g_assert_cmpstr(t->caption, ==, "Evening light");
	g_assert_cmpstr(m->description, ==, "Evening light");
	g_assert_cmpstr(t->copyright, ==, "(c) Ann");
	g_assert_cmpstr(t->creator, ==, "Ann; Ben");
	g_assert_cmpstr(t->city, ==, "Aarhus");
	g_assert_cmpstr(t->province, ==, "Midtjylland");
	g_assert_cmpstr(t->country, ==, "Denmark");
	g_assert_cmpstr(t->sublocation, ==, "Harbour");
	g_assert_cmpstr(t->country_code, ==, "DK");
}

static void test_tags_regions(void)
{
	/* digiKam and Picasa: MWG regions, as a nested rdf:Description, with
	 * parseType='Resource', with the area's fields as attributes or
	 * elements; pixel units through the applied-to dimensions */
	g_autofree char *note = NULL;
	g_autoptr(PixMeta) m = read_tags("",
		"<mwg-rs:Regions rdf:parseType='Resource'>"
		" <mwg-rs:AppliedToDimensions stDim:w='400' stDim:h='200' stDim:unit='pixel'/>"
		" <mwg-rs:RegionList><rdf:Bag>"
		"  <rdf:li><rdf:Description mwg-rs:Name='Ada' mwg-rs:Type='Face'>"
		"   <mwg-rs:Area stArea:x='0.5' stArea:y='0.5' stArea:w='0.2' stArea:h='0.4' stArea:unit='normalized'/>"
		"  </rdf:Description></rdf:li>"
		"  <rdf:li rdf:parseType='Resource'><mwg-rs:Name>Bob</mwg-rs:Name><mwg-rs:Type>Face</mwg-rs:Type>"
		"   <mwg-rs:Area rdf:parseType='Resource'><stArea:x>100</stArea:x><stArea:y>50</stArea:y>"
		"    <stArea:w>40</stArea:w><stArea:h>20</stArea:h><stArea:unit>pixel</stArea:unit></mwg-rs:Area></rdf:li>"
		"  <rdf:li><rdf:Description mwg-rs:Type='Focus'><mwg-rs:Area stArea:x='0.5' stArea:y='0.5' stArea:w='0.1'"
		"   stArea:h='0.1' stArea:unit='normalized'/></rdf:Description></rdf:li>"
		"  <rdf:li><rdf:Description mwg-rs:Name='Rex' mwg-rs:Type='Pet'/></rdf:li>"
		" </rdf:Bag></mwg-rs:RegionList>"
		"</mwg-rs:Regions>"
		"<MP:RegionInfo rdf:parseType='Resource'><MPRI:Regions><rdf:Bag><rdf:li MPReg:PersonDisplayName='Ms only'"
		" MPReg:Rectangle='0.1, 0.1, 0.2, 0.2'/></rdf:Bag></MPRI:Regions></MP:RegionInfo>"
		"<Iptc4xmpExt:PersonInImage><rdf:Bag><rdf:li>ada</rdf:li><rdf:li>Cleo</rdf:li></rdf:Bag>"
		"</Iptc4xmpExt:PersonInImage>",
		&note);
	g_assert_null(note);
	PixTags *t = m->tags;
	g_assert_cmpuint(t->people->len, ==, 4);
	const PixPerson *ada = &g_array_index(t->people, PixPerson, 0), *bob = &g_array_index(t->people, PixPerson, 1);
	g_assert_cmpstr(ada->name, ==, "Ada");
	g_assert_cmpstr(ada->type, ==, "Face");
	g_assert_true(ada->has_area);
	g_assert_cmpfloat_with_epsilon(ada->x, 0.4, 1e-12);
	g_assert_cmpfloat_with_epsilon(ada->y, 0.3, 1e-12);
	g_assert_cmpfloat_with_epsilon(ada->w, 0.2, 1e-12);
	g_assert_cmpfloat_with_epsilon(ada->h, 0.4, 1e-12);
	g_assert_cmpstr(bob->name, ==, "Bob");
	g_assert_true(bob->has_area);
	g_assert_cmpfloat_with_epsilon(bob->x, (100 - 20) / 400.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(bob->y, (50 - 10) / 200.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(bob->w, 0.1, 1e-12);
	g_assert_cmpstr(g_array_index(t->people, PixPerson, 2).name, ==, "Rex");
	g_assert_cmpstr(g_array_index(t->people, PixPerson, 2).type, ==, "Pet");
	g_assert_false(g_array_index(t->people, PixPerson, 2).has_area);
	g_assert_cmpstr(g_array_index(t->people, PixPerson, 3).name, ==, "Cleo");

	/* Microsoft's alone */
	g_autofree char *note2 = NULL;
	g_autoptr(PixMeta) w = read_tags("",
		"<MP:RegionInfo><rdf:Description><MPRI:Regions><rdf:Bag><rdf:li><rdf:Description"
		" MPReg:PersonDisplayName='Win' MPReg:Rectangle='0.25, 0.5, 0.25, 0.125'/></rdf:li></rdf:Bag></MPRI:Regions>"
		"</rdf:Description></MP:RegionInfo>", &note2);
	g_assert_cmpuint(w->tags->people->len, ==, 1);
	const PixPerson *win = &g_array_index(w->tags->people, PixPerson, 0);
	g_assert_cmpstr(win->name, ==, "Win");
	g_assert_cmpfloat(win->x, ==, 0.25);
	g_assert_cmpfloat(win->y, ==, 0.5);
	g_assert_cmpfloat(win->h, ==, 0.125);

	/* a region outside the image, pixels without dimensions: the names
	 * kept, the areas dropped, and said */
	g_autofree char *note3 = NULL;
	g_autoptr(PixMeta) h = read_tags("",
		"<mwg-rs:Regions rdf:parseType='Resource'><mwg-rs:RegionList><rdf:Bag>"
		"<rdf:li><rdf:Description mwg-rs:Name='Far'><mwg-rs:Area stArea:x='-3' stArea:y='0.5' stArea:w='0.1'"
		" stArea:h='0.1' stArea:unit='normalized'/></rdf:Description></rdf:li>"
		"<rdf:li><rdf:Description mwg-rs:Name='Huge'><mwg-rs:Area stArea:x='0.5' stArea:y='0.5' stArea:w='1e308'"
		" stArea:h='0.1'/></rdf:Description></rdf:li>"
		"<rdf:li><rdf:Description mwg-rs:Name='Pixels'><mwg-rs:Area stArea:x='10' stArea:y='10' stArea:w='2'"
		" stArea:h='2' stArea:unit='pixel'/></rdf:Description></rdf:li>"
		"</rdf:Bag></mwg-rs:RegionList></mwg-rs:Regions>", &note3);
	g_assert_cmpuint(h->tags->people->len, ==, 3);
	for (guint i = 0; i < 3; i++)
		g_assert_false(g_array_index(h->tags->people, PixPerson, i).has_area);
	g_assert_nonnull(note3);
	g_assert_nonnull(strstr(note3, "'Far'"));
}

static void test_tags_other_writers(void)
{
	/* digiKam: TagsList and the others it writes; Windows: a percentage */
	g_autofree char *note = NULL;
	g_autoptr(PixMeta) d = read_tags("MicrosoftPhoto:Rating='75'",
		"<digiKam:TagsList><rdf:Seq><rdf:li>People/Family/Ada</rdf:li></rdf:Seq></digiKam:TagsList>"
		"<MicrosoftPhoto:LastKeywordXMP><rdf:Bag><rdf:li>People/Family/Ada</rdf:li></rdf:Bag></MicrosoftPhoto:LastKeywordXMP>"
		"<dc:subject><rdf:Bag><rdf:li>Ada</rdf:li></rdf:Bag></dc:subject>", &note);
	g_autofree char *lines = pix_tags_keyword_lines(d->tags);
	g_assert_cmpstr(lines, ==, "People/Family/Ada");
	g_assert_cmpint(d->tags->rating, ==, 4);

	/* darktable: attributes and a one-item subject bag; Shotwell: a
	 * hierarchy written with a leading separator */
	g_autofree char *note2 = NULL;
	g_autoptr(PixMeta) k = read_tags("xmp:Rating='1'",
		"<dc:subject><rdf:Seq><rdf:li>darktable|tag</rdf:li></rdf:Seq></dc:subject>"
		"<lr:hierarchicalSubject><rdf:Seq><rdf:li>/Trips/Iceland</rdf:li></rdf:Seq></lr:hierarchicalSubject>", &note2);
	g_autofree char *lines2 = pix_tags_keyword_lines(k->tags);
	g_assert_cmpstr(lines2, ==, "/Trips/Iceland\ndarktable|tag");

	/* a plain value where an array is due; a struct where a value is due */
	g_autofree char *note3 = NULL;
	g_autoptr(PixMeta) p = read_tags("dc:subject='lone'",
		"<dc:title>Plain title</dc:title><xmp:Label><rdf:Description xmp:Rating='5'/></xmp:Label>", &note3);
	g_autofree char *lines3 = pix_tags_keyword_lines(p->tags);
	g_assert_cmpstr(lines3, ==, "lone");
	g_assert_cmpstr(p->tags->title, ==, "Plain title");
	g_assert_null(p->tags->label);
	g_assert_cmpint(p->tags->rating, ==, PIX_RATING_UNKNOWN);

	/* Windows XP and Vista: the namespace without its final slash (the
	 * samples' DSCN0010.jpg) */
	g_autoptr(PixMeta) w = read_str(
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:MicrosoftPhoto='http://ns.microsoft.com/photo/1.0'>"
		"<MicrosoftPhoto:Rating>99</MicrosoftPhoto:Rating><MicrosoftPhoto:LastKeywordXMP><rdf:Bag>"
		"<rdf:li>Trips/Iceland</rdf:li></rdf:Bag></MicrosoftPhoto:LastKeywordXMP>"
		"</rdf:Description></rdf:RDF></x:xmpmeta>");
	g_autofree char *note5 = pix_meta_finish_tags(w);
	g_assert_null(note5);
	g_assert_nonnull(w->tags);
	g_autofree char *lines5 = pix_tags_keyword_lines(w->tags);
	g_assert_cmpstr(lines5, ==, "Trips/Iceland");
	g_assert_cmpint(w->tags->rating, ==, 5);

	/* nothing of the photographer's: no tags at all */
	g_autofree char *note4 = NULL;
	g_autoptr(PixMeta) none = read_tags("tiff:Make='Canon'", "", &note4);
	g_assert_null(none->tags);
}

static void test_tags_hostile(void)
{
	/* an entity the document declares (a "billion laughs"): not
	 * expanded, the packet refused, said */
	const char *laughs =
		"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>]>"
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>&b;</dc:title>"
		"</rdf:Description></rdf:RDF></x:xmpmeta>";
	g_autoptr(PixMeta) m = pix_meta_new();
	PixStream *s = pix_stream_new(0, 0);
	pix_meta_read_xmp_in(s, (const guint8 *)laughs, strlen(laughs), m, NULL);
	g_autofree char *problems = pix_stream_problems(s);
	pix_stream_free(s);
	g_assert_nonnull(problems);
	g_assert_true(g_str_has_prefix(problems, "corrupt XMP"));
	g_autofree char *note = pix_meta_finish_tags(m);
	g_assert_true(m->tags == NULL || m->tags->title == NULL);

	/* invalid UTF-8 in a keyword: refused, what came before kept */
	g_autofree char *bad = tag_packet("xmp:Rating='2'", "<dc:subject><rdf:Bag><rdf:li>ok</rdf:li><rdf:li>b\xff"
	                                                    "d</rdf:li></rdf:Bag></dc:subject>");
	g_autoptr(PixMeta) u = pix_meta_new();
	PixStream *t = pix_stream_new(0, 0);
	pix_meta_read_xmp_in(t, (const guint8 *)bad, strlen(bad), u, NULL);
	g_autofree char *p2 = pix_stream_problems(t);
	pix_stream_free(t);
	g_assert_nonnull(strstr(p2, "UTF-8"));
	g_autofree char *n2 = pix_meta_finish_tags(u);
	g_assert_cmpint(u->tags->rating, ==, 2);
	g_autofree char *l2 = pix_tags_keyword_lines(u->tags);
	g_assert_cmpstr(l2, ==, "ok");

	/* 100,000 keywords and regions: bounded */
	GString *many = g_string_new("<dc:subject><rdf:Bag>");
	for (guint i = 0; i < 100000; i++)
		g_string_append_printf(many, "<rdf:li>k%u</rdf:li>", i);
	g_string_append(many, "</rdf:Bag></dc:subject><mwg-rs:Regions rdf:parseType='Resource'><mwg-rs:RegionList><rdf:Bag>");
	for (guint i = 0; i < 10000; i++)
		g_string_append_printf(many, "<rdf:li><rdf:Description mwg-rs:Name='p%u'/></rdf:li>", i);
	g_string_append(many, "</rdf:Bag></mwg-rs:RegionList></mwg-rs:Regions>");
	g_autofree char *n3 = NULL;
	g_autoptr(PixMeta) v = read_tags("", many->str, &n3);
	g_string_free(many, TRUE);
	g_assert_cmpuint(v->tags->keywords->len, ==, PIX_TAGS_MAX_KEYWORDS);
	g_assert_cmpuint(v->tags->people->len, ==, PIX_TAGS_MAX_PEOPLE);
	g_assert_nonnull(n3);
}

/* An APP1 segment of an ExtendedXMP part: the header, GUID, full length,
 * offset, then the bytes. */
static void put_ext_part(GByteArray *b, const char *guid, guint32 full, guint32 off, const char *data, gsize len)
{
	GByteArray *body = g_byte_array_new();
	g_byte_array_append(body, (const guint8 *)"http://ns.adobe.com/xmp/extension/", 35);
	g_byte_array_append(body, (const guint8 *)guid, 32);
	guint8 n[8] = { full >> 24, full >> 16, full >> 8, full, off >> 24, off >> 16, off >> 8, off };
	g_byte_array_append(body, n, 8);
	g_byte_array_append(body, (const guint8 *)data, (guint)len);
	put_segment(b, 0xE1, body->data, body->len);
	g_byte_array_unref(body);
}

/* A JPEG of `segments` (already marker segments) around a tiny image,
 * read by the whole PixMetaParser in pieces of `chunk`. */
static PixItem *read_jpeg_file(const GByteArray *segments, gsize chunk)
{
	static const guint8 sof[] = { 8, 0, 16, 0, 32, 1, 1, 0x11, 0 };
	static const guint8 sos[] = { 1, 1, 0, 0, 63, 0 };
	g_autoptr(GByteArray) b = g_byte_array_new();
	g_byte_array_append(b, (const guint8 *)"\xFF\xD8", 2);
	g_byte_array_append(b, segments->data, segments->len);
	put_segment(b, 0xC0, sof, sizeof sof);
	put_segment(b, 0xDA, sos, sizeof sos);
	g_byte_array_append(b, (const guint8 *)"\x12\x34\xFF\xD9", 4);
	PixDir *dir = pix_dir_new("/t");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "x.jpg");
	pix_dir_unref(dir);
	PixMetaParser *mp = pix_meta_parser_new();
	for (gsize at = 0; at < b->len; at += chunk)
		pix_meta_parser_feed(mp, b->data + at, MIN(chunk, b->len - at));
	pix_meta_parser_finish(mp, item);
	pix_meta_parser_free(mp);
	return item;
}

static void test_jpeg_extended_xmp(void)
{
	static const char guid[] = "0123456789ABCDEF0123456789ABCDEF";
	g_autofree char *main_packet = tag_packet("xmpNote:HasExtendedXMP='0123456789ABCDEF0123456789ABCDEF' xmp:Rating='3'", "");
	g_autofree char *ext = tag_packet("", "<dc:subject><rdf:Bag><rdf:li>from the extension</rdf:li></rdf:Bag></dc:subject>"
	                                      "<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>Extended</rdf:li></rdf:Alt>"
	                                      "</dc:title>");
	gsize n = strlen(ext), half = n / 2;
	/* the parts out of order, a part of another GUID between */
	g_autoptr(GByteArray) seg = g_byte_array_new();
	g_autoptr(GByteArray) body = g_byte_array_new();
	g_byte_array_append(body, (const guint8 *)XMP_NS, sizeof XMP_NS);
	g_byte_array_append(body, (const guint8 *)main_packet, (guint)strlen(main_packet));
	put_segment(seg, 0xE1, body->data, body->len);
	put_ext_part(seg, guid, (guint32)n, (guint32)half, ext + half, n - half);
	put_ext_part(seg, "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", 10, 0, "0123456789", 10);
	put_ext_part(seg, guid, (guint32)n, 0, ext, half);
	static const gsize chunks[] = { 1, 7, 4096 };
	for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
		PixItem *item = read_jpeg_file(seg, chunks[c]);
		g_assert_null(item->error);
		g_assert_nonnull(item->meta->tags);
		g_assert_cmpint(item->meta->tags->rating, ==, 3);
		g_assert_cmpstr(item->meta->tags->title, ==, "Extended");
		g_autofree char *lines = pix_tags_keyword_lines(item->meta->tags);
		g_assert_cmpstr(lines, ==, "from the extension");
		pix_item_free(item);
	}

	/* a part missing, lengths that disagree, a huge declared length:
	 * the main packet read, the extension not, said */
	struct { guint32 full; guint32 off; gsize len; } cases[] = {
		{ (guint32)n, 0, half },                /* the second half never comes */
		{ (guint32)n + 1, (guint32)half, n - half }, /* disagrees with the first part's */
		{ 100u << 20, 0, half },                /* 100 MiB declared */
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GByteArray) s2 = g_byte_array_new();
		put_segment(s2, 0xE1, body->data, body->len);
		put_ext_part(s2, guid, i == 1 ? (guint32)n : cases[i].full, 0, ext, half);
		if (i == 1)
			put_ext_part(s2, guid, cases[i].full, cases[i].off, ext + half, cases[i].len);
		PixItem *item = read_jpeg_file(s2, 4096);
		g_assert_nonnull(item->error);
		g_assert_nonnull(strstr(item->error, "extended XMP"));
		g_assert_cmpint(item->meta->tags->rating, ==, 3);
		g_assert_null(item->meta->tags->title);
		pix_item_free(item);
	}
}

static void test_jpeg_iptc(void)
{
	/* APP13: Photoshop's resources with the IIM, split over two
	 * segments; XMP's keywords win, IIM's city fills in */
	static const guint8 iim[] = {
		0x1c, 2, 25, 0, 4, 'i', 'p', 't', 'c', 0x1c, 2, 90, 0, 4, 'L', 'y', 'o', 'n',
	};
	g_autoptr(GByteArray) irb = g_byte_array_new();
	g_byte_array_append(irb, (const guint8 *)"8BIM\x04\x04\0\0\0\0\0\x12", 12);
	g_byte_array_append(irb, iim, sizeof iim);
	g_autoptr(GByteArray) seg = g_byte_array_new();
	for (guint part = 0; part < 2; part++) {
		g_autoptr(GByteArray) body = g_byte_array_new();
		g_byte_array_append(body, (const guint8 *)"Photoshop 3.0", 14);
		gsize from = part == 0 ? 0 : 10, to = part == 0 ? 10 : irb->len;
		g_byte_array_append(body, irb->data + from, (guint)(to - from));
		put_segment(seg, 0xED, body->data, body->len);
	}
	PixItem *a = read_jpeg_file(seg, 3);
	g_assert_null(a->error);
	g_assert_cmpstr(a->meta->tags->city, ==, "Lyon");
	g_autofree char *la = pix_tags_keyword_lines(a->meta->tags);
	g_assert_cmpstr(la, ==, "iptc");
	pix_item_free(a);

	g_autofree char *packet_ = tag_packet("photoshop:City='Paris'", "<dc:subject><rdf:Bag><rdf:li>xmp</rdf:li></rdf:Bag></dc:subject>");
	g_autoptr(GByteArray) body = g_byte_array_new();
	g_byte_array_append(body, (const guint8 *)XMP_NS, sizeof XMP_NS);
	g_byte_array_append(body, (const guint8 *)packet_, (guint)strlen(packet_));
	put_segment(seg, 0xE1, body->data, body->len);
	PixItem *b = read_jpeg_file(seg, 4096);
	g_assert_cmpstr(b->meta->tags->city, ==, "Paris");
	g_autofree char *lb = pix_tags_keyword_lines(b->meta->tags);
	g_assert_cmpstr(lb, ==, "xmp");
	pix_item_free(b);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/xmp/darktable", test_darktable);
	g_test_add_func("/xmp/lightroom", test_lightroom);
	g_test_add_func("/xmp/digikam", test_digikam);
	g_test_add_func("/xmp/fields", test_fields);
	g_test_add_func("/xmp/values", test_values);
	g_test_add_func("/xmp/gps-pair", test_gps_pair);
	g_test_add_func("/xmp/date-precedence", test_date_precedence);
	g_test_add_func("/xmp/known-fields-kept", test_known_fields_kept);
	g_test_add_func("/xmp/first-value-wins", test_first_value_wins);
	g_test_add_func("/xmp/namespaces", test_namespaces);
	g_test_add_func("/xmp/structures-ignored", test_structures_ignored);
	g_test_add_func("/xmp/hostile/unclosed", test_hostile_unclosed);
	g_test_add_func("/xmp/hostile/bytes", test_hostile_bytes);
	g_test_add_func("/xmp/hostile/deep", test_hostile_deep);
	g_test_add_func("/xmp/hostile/huge", test_hostile_huge);
	g_test_add_func("/xmp/hostile/mutations", test_hostile_mutations);
	g_test_add_func("/xmp/sidecar", test_sidecar);
	g_test_add_func("/xmp/sidecar/openings", test_sidecar_openings);
	g_test_add_func("/xmp/sidecar/corrupt", test_sidecar_corrupt);
	g_test_add_func("/xmp/sidecar/too-large", test_sidecar_too_large);
	g_test_add_func("/xmp/jpeg/app1-captured", test_jpeg_xmp_captured);
	g_test_add_func("/xmp/samples", test_samples);
	g_test_add_func("/xmp/tags/lightroom", test_tags_lightroom);
	g_test_add_func("/xmp/tags/regions", test_tags_regions);
	g_test_add_func("/xmp/tags/other-writers", test_tags_other_writers);
	g_test_add_func("/xmp/tags/hostile", test_tags_hostile);
	g_test_add_func("/xmp/jpeg/extended", test_jpeg_extended_xmp);
	g_test_add_func("/xmp/jpeg/iptc", test_jpeg_iptc);
	return g_test_run();
}
