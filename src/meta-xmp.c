/*
 * meta-xmp.c: XMP metadata, from XMP sidecar files (as a PixContainer)
 * and from packets found inside images (pix_meta_read_xmp()); see meta.h.
 *
 * Reads a packet in memory (the stream keeps a whole sidecar); writes the
 * PixMeta fields still unknown.  Runs on a hash thread; no state is shared.
 *
 * XMP is RDF/XML.  An rdf:RDF element holds rdf:Description elements that
 * describe the image; a property is either an attribute of rdf:Description
 * (exif:FNumber="28/10", as Exiv2, darktable and digiKam write) or a child
 * element (<exif:FNumber>28/10</exif:FNumber>, as Adobe's tools write), and
 * an array property holds an rdf:Seq, rdf:Bag or rdf:Alt of rdf:li items.
 * Prefixes are the writer's choice: a property is known by its namespace
 * URI and local name, through the xmlns declarations in scope.  Only the
 * top-level properties of a description are read: the same names inside
 * a structure (an IPTC location's exif:GPSLatitude) describe something
 * else.  Values are in XMP's own forms (ISO 8601 dates, "n/d" rationals,
 * "DDD,MM.mmN" coordinates), plus the EXIF-style dates Exiv2 copies over.
 *
 * GLib's GMarkup parses the XML.  It expands no entities but the five
 * predefined ones and reads no DTD, so hostile XML cannot make it fetch
 * or blow up anything; it checks UTF-8 and well-formedness.
 *
 * Invariants:
 *  1. At most MAX_XMP_BYTES of input are parsed, the element stack is at
 *     most MAX_DEPTH deep, at most MAX_BINDINGS namespace declarations are
 *     in scope, and a value longer than MAX_VALUE bytes is dropped.
 *  2. Values are collected during the parse and applied to PixMeta after
 *     it, whether or not it succeeded: what came before an error counts.
 *  3. A property keeps the first of its values that is usable (parses as
 *     its type, in range); PixMeta fields are set only when unknown, and
 *     latitude and longitude only together.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"

#include <math.h>
#include <string.h>

#define MAX_XMP_BYTES (4u << 20)
#define MAX_DEPTH 64
#define MAX_BINDINGS 1024
#define MAX_VALUE 1024

#define NS_RDF "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
#define NS_EXIF "http://ns.adobe.com/exif/1.0/"
#define NS_EXIF_EX "http://cipa.jp/exif/1.0/"        /* Exif 2.3 tags (exifEX) */
#define NS_AUX "http://ns.adobe.com/exif/1.0/aux/"
#define NS_TIFF "http://ns.adobe.com/tiff/1.0/"
#define NS_XMP "http://ns.adobe.com/xap/1.0/"
#define NS_PHOTOSHOP "http://ns.adobe.com/photoshop/1.0/"
#define NS_DC "http://purl.org/dc/elements/1.1/"

/* How a property's text is read. */
typedef enum {
	T_DATE,         /* ISO 8601 with a time, or EXIF "YYYY:MM:DD hh:mm:ss" */
	T_LATITUDE,     /* "DDD,MM,SSN", "DDD,MM.mmN" (N or S) */
	T_LONGITUDE,    /* the same with E or W */
	T_POSITIVE,     /* a rational "n/d" or a decimal, > 0 */
	T_NON_NEGATIVE, /* the same, >= 0 */
	T_REAL,         /* the same, any finite value */
	T_CODE,         /* an integer 0..255 (an EXIF code) */
	T_ISO,          /* an integer > 0 */
	T_ORIENTATION,  /* an integer 1..8 */
	T_ALT_REF,      /* 0 (above sea level) or 1 (below) */
	T_TEXT,         /* any text, trimmed, not empty */
} Type;

/* The properties read, in the order of the table below. */
typedef enum {
	P_DATE_ORIGINAL,
	P_DATE_CREATED,
	P_CREATE_DATE,
	P_DATE_DIGITIZED,
	P_LATITUDE,
	P_LONGITUDE,
	P_ALTITUDE,
	P_ALTITUDE_REF,
	P_MAKE,
	P_MODEL,
	P_ORIENTATION,
	P_LENS_MODEL,
	P_LENS,
	P_ISO,
	P_ISO_CIPA,
	P_EXPOSURE,
	P_FNUMBER,
	P_FOCAL,
	P_APERTURE,
	P_EXPOSURE_PROGRAM,
	P_METERING_MODE,
	P_GPS_TIME,
	P_GPS_DIRECTION,
	P_GPS_DIRECTION_REF,
	P_DESCRIPTION,
	N_PROPS
} Prop;

static const struct {
	const char *ns;
	const char *name;
	Type type;
	const char *label;      /* for date_source: the usual prefix */
} props[N_PROPS] = {
	[P_DATE_ORIGINAL] = { NS_EXIF, "DateTimeOriginal", T_DATE, "XMP exif:DateTimeOriginal" },
	[P_DATE_CREATED] = { NS_PHOTOSHOP, "DateCreated", T_DATE, "XMP photoshop:DateCreated" },
	[P_CREATE_DATE] = { NS_XMP, "CreateDate", T_DATE, "XMP xmp:CreateDate" },
	[P_DATE_DIGITIZED] = { NS_EXIF, "DateTimeDigitized", T_DATE, "XMP exif:DateTimeDigitized" },
	[P_LATITUDE] = { NS_EXIF, "GPSLatitude", T_LATITUDE, NULL },
	[P_LONGITUDE] = { NS_EXIF, "GPSLongitude", T_LONGITUDE, NULL },
	[P_ALTITUDE] = { NS_EXIF, "GPSAltitude", T_NON_NEGATIVE, NULL },
	[P_ALTITUDE_REF] = { NS_EXIF, "GPSAltitudeRef", T_ALT_REF, NULL },
	[P_MAKE] = { NS_TIFF, "Make", T_TEXT, NULL },
	[P_MODEL] = { NS_TIFF, "Model", T_TEXT, NULL },
	[P_ORIENTATION] = { NS_TIFF, "Orientation", T_ORIENTATION, NULL },
	[P_LENS_MODEL] = { NS_EXIF_EX, "LensModel", T_TEXT, NULL },
	[P_LENS] = { NS_AUX, "Lens", T_TEXT, NULL },
	[P_ISO] = { NS_EXIF, "ISOSpeedRatings", T_ISO, NULL },
	[P_ISO_CIPA] = { NS_EXIF_EX, "PhotographicSensitivity", T_ISO, NULL },
	[P_EXPOSURE] = { NS_EXIF, "ExposureTime", T_POSITIVE, NULL },
	[P_FNUMBER] = { NS_EXIF, "FNumber", T_POSITIVE, NULL },
	[P_FOCAL] = { NS_EXIF, "FocalLength", T_POSITIVE, NULL },
	[P_APERTURE] = { NS_EXIF, "ApertureValue", T_REAL, NULL },
	[P_EXPOSURE_PROGRAM] = { NS_EXIF, "ExposureProgram", T_CODE, NULL },
	[P_METERING_MODE] = { NS_EXIF, "MeteringMode", T_CODE, NULL },
	[P_GPS_TIME] = { NS_EXIF, "GPSTimeStamp", T_DATE, NULL },
	[P_GPS_DIRECTION] = { NS_EXIF, "GPSImgDirection", T_NON_NEGATIVE, NULL },
	[P_GPS_DIRECTION_REF] = { NS_EXIF, "GPSImgDirectionRef", T_TEXT, NULL },
	[P_DESCRIPTION] = { NS_DC, "description", T_TEXT, NULL },
};

/* --- values --- */

/*
 * An XMP GPSCoordinate: "DDD,MM,SSk" or "DDD,MM.mmk" with k one of N, S
 * (latitude) or E, W (longitude), as signed degrees.  Lenient as readers
 * are: degrees alone ("48.8583N") and a signed decimal without a
 * direction ("-33.86") are taken too.
 */
static gboolean parse_coordinate(const char *s, gboolean is_latitude, double *out)
{
	double deg, min = 0, sec = 0;
	if (!pix_meta_parse_decimal(&s, TRUE, &deg))
		return FALSE;
	if (*s == ',') {
		s++;
		if (!pix_meta_parse_decimal(&s, FALSE, &min) || min >= 60)
			return FALSE;
		if (*s == ',') {
			s++;
			if (!pix_meta_parse_decimal(&s, FALSE, &sec) || sec >= 60)
				return FALSE;
		}
	}
	double v = deg < 0 ? deg - min / 60 - sec / 3600 : deg + min / 60 + sec / 3600;
	char k = g_ascii_toupper(*s);
	if (k != '\0') {
		if (deg < 0 || s[1] != '\0')
			return FALSE;
		if (is_latitude ? k != 'N' && k != 'S' : k != 'E' && k != 'W')
			return FALSE;
		if (k == 'S' || k == 'W')
			v = -v;
	}
	if (!isfinite(v) || fabs(v) > (is_latitude ? 90.0 : 180.0))
		return FALSE;
	*out = v;
	return TRUE;
}

/* Whether `s` (trimmed) is a usable value of type `t`. */
static gboolean is_usable(Type t, const char *s)
{
	double v;
	gint64 n;

	switch (t) {
	case T_DATE:
		return pix_meta_parse_date(s, NULL, NULL);
	case T_LATITUDE:
	case T_LONGITUDE:
		return parse_coordinate(s, t == T_LATITUDE, &v);
	case T_POSITIVE:
		return pix_meta_parse_rational(s, &v) && v > 0;
	case T_NON_NEGATIVE:
		return pix_meta_parse_rational(s, &v) && v >= 0;
	case T_REAL:
		return pix_meta_parse_rational(s, &v);
	case T_CODE:
		return pix_meta_parse_int(s, 0, 255, &n);
	case T_ISO:
		return pix_meta_parse_int(s, 1, G_MAXINT32, &n);
	case T_ORIENTATION:
		return pix_meta_parse_int(s, 1, 8, &n);
	case T_ALT_REF:
		return pix_meta_parse_int(s, 0, 1, &n);
	case T_TEXT:
		return s[0] != '\0';
	}
	g_assert_not_reached();
}

/* --- the parse --- */

/* What an open element is, from where it stands. */
typedef enum {
	E_OUTSIDE,      /* not within rdf:RDF (x:xmpmeta, or any wrapper) */
	E_RDF,          /* rdf:RDF */
	E_DESCRIPTION,  /* rdf:Description within rdf:RDF: the image */
	E_PROPERTY,     /* a child of that: a top-level property */
	E_ARRAY,        /* rdf:Seq, rdf:Bag or rdf:Alt of a property */
	E_ITEM,         /* rdf:li of that array */
	E_IGNORED,      /* anything else, and all it holds */
} Kind;

typedef struct {
	Kind kind;
	int prop;       /* E_PROPERTY, E_ARRAY, E_ITEM: a Prop, or -1 for others */
	guint n_bindings; /* xmlns declarations this element made */
} Frame;

typedef struct {
	Frame stack[MAX_DEPTH];
	guint depth;
	/* namespaces in scope: prefix ("" for the default) -> GPtrArray of
	 * URIs, innermost last (all owned) */
	GHashTable *ns;
	GPtrArray *declared;    /* prefixes in scope, in declaration order, for
	                           popping (owned) */
	GString *text;          /* the text of the value being read */
	gboolean is_text_long;  /* that text went past MAX_VALUE */
	gboolean has_rdf;       /* an rdf:RDF element was seen */
	gboolean is_too_deep;
	gboolean is_too_wide;
	char *values[N_PROPS];  /* first usable value of each property (owned) */
} Xmp;

/* Invariant 1, and the namespace bookkeeping: the prefixes in scope are
 * those the open elements declared. */
static gboolean xmp_check(const Xmp *x)
{
	guint n_bindings = 0;
	if (x->depth > MAX_DEPTH || x->declared->len > MAX_BINDINGS || x->text->len > MAX_VALUE)
		return FALSE;
	for (guint i = 0; i < x->depth; i++)
		n_bindings += x->stack[i].n_bindings;
	return n_bindings == x->declared->len;
}

static void xmp_clear(Xmp *x)
{
	g_hash_table_destroy(x->ns);
	g_ptr_array_free(x->declared, TRUE);
	g_string_free(x->text, TRUE);
	for (guint i = 0; i < N_PROPS; i++)
		g_free(x->values[i]);
}

static void bind(Xmp *x, const char *prefix, const char *uri)
{
	GPtrArray *uris = g_hash_table_lookup(x->ns, prefix);
	if (uris == NULL) {
		uris = g_ptr_array_new_with_free_func(g_free);
		g_hash_table_insert(x->ns, g_strdup(prefix), uris);
	}
	g_ptr_array_add(uris, g_strdup(uri));
	g_ptr_array_add(x->declared, g_strdup(prefix));
}

static void unbind(Xmp *x, guint n)
{
	for (; n > 0; n--) {
		const char *prefix = g_ptr_array_index(x->declared, x->declared->len - 1);
		GPtrArray *uris = g_hash_table_lookup(x->ns, prefix);
		g_ptr_array_remove_index(uris, uris->len - 1);
		g_ptr_array_remove_index(x->declared, x->declared->len - 1);
	}
}

/*
 * The namespace URI of the qualified name `qname` and, in *local, its
 * local part; NULL for an undeclared prefix.  An unprefixed name is in the
 * default namespace when `use_default` (elements), else in none
 * (attributes).
 */
static const char *resolve(Xmp *x, const char *qname, gboolean use_default, const char **local)
{
	const char *colon = strchr(qname, ':');
	gsize n = colon != NULL ? (gsize)(colon - qname) : 0;
	char prefix[64];

	*local = colon != NULL ? colon + 1 : qname;
	if ((colon == NULL && !use_default) || n >= sizeof prefix)
		return NULL;    /* no namespace, or a prefix longer than any declared in XMP */
	memcpy(prefix, qname, n);
	prefix[n] = '\0';
	GPtrArray *uris = g_hash_table_lookup(x->ns, prefix);
	if (uris == NULL || uris->len == 0)
		return NULL;
	const char *uri = g_ptr_array_index(uris, uris->len - 1);
	return uri[0] != '\0' ? uri : NULL;     /* xmlns="" undeclares */
}

static gboolean is_rdf(const char *uri, const char *local, const char *name)
{
	return uri != NULL && strcmp(uri, NS_RDF) == 0 && strcmp(local, name) == 0;
}

static int find_prop(const char *uri, const char *local)
{
	if (uri == NULL)
		return -1;
	for (int i = 0; i < N_PROPS; i++) {
		if (strcmp(props[i].name, local) == 0 && strcmp(props[i].ns, uri) == 0)
			return i;
	}
	return -1;
}

/* A value of property `prop` was read: kept if it is the first usable. */
static void offer(Xmp *x, int prop, const char *text)
{
	if (prop < 0 || x->values[prop] != NULL)
		return;
	g_autofree char *v = g_strstrip(g_strdup(text));
	if (is_usable(props[prop].type, v))
		x->values[prop] = g_steal_pointer(&v);
}

static Kind child_kind(const Frame *parent, const char *uri, const char *local, int *prop)
{
	*prop = -1;
	switch (parent != NULL ? parent->kind : E_OUTSIDE) {
	case E_OUTSIDE:
		return is_rdf(uri, local, "RDF") ? E_RDF : E_OUTSIDE;
	case E_RDF:
		return is_rdf(uri, local, "Description") ? E_DESCRIPTION : E_IGNORED;
	case E_DESCRIPTION:
		*prop = find_prop(uri, local);
		return E_PROPERTY;
	case E_PROPERTY:
		if (!is_rdf(uri, local, "Seq") && !is_rdf(uri, local, "Bag") && !is_rdf(uri, local, "Alt"))
			return E_IGNORED;   /* a structure's fields, or a value we do not read */
		*prop = parent->prop;
		return E_ARRAY;
	case E_ARRAY:
		if (!is_rdf(uri, local, "li"))
			return E_IGNORED;
		*prop = parent->prop;
		return E_ITEM;
	case E_ITEM:
	case E_IGNORED:
		return E_IGNORED;
	}
	g_assert_not_reached();
}

static void on_start(GMarkupParseContext *ctx, const char *name, const char **attr_names,
                     const char **attr_values, gpointer data, GError **error)
{
	Xmp *x = data;
	Frame *parent = x->depth > 0 ? &x->stack[x->depth - 1] : NULL;
	(void)ctx;

	if (x->depth == MAX_DEPTH) {
		x->is_too_deep = TRUE;
		g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "too deep");
		return;
	}
	/* below an ignored element, or a property not read (darktable's
	 * history, hundreds of items), nothing is looked up */
	if (parent != NULL && (parent->kind == E_IGNORED || (parent->kind == E_PROPERTY && parent->prop < 0))) {
		x->stack[x->depth++] = (Frame){ E_IGNORED, -1, 0 };
		return;
	}
	guint n_bindings = 0;
	for (guint i = 0; attr_names[i] != NULL; i++) {
		const char *prefix = NULL;
		if (strcmp(attr_names[i], "xmlns") == 0)
			prefix = "";
		else if (g_str_has_prefix(attr_names[i], "xmlns:"))
			prefix = attr_names[i] + 6;
		if (prefix == NULL)
			continue;
		if (x->declared->len == MAX_BINDINGS) {
			unbind(x, n_bindings);
			x->is_too_wide = TRUE;
			g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "too wide");
			return;
		}
		bind(x, prefix, attr_values[i]);
		n_bindings++;
	}
	const char *local;
	const char *uri = resolve(x, name, TRUE, &local);
	int prop;
	Kind kind = child_kind(parent, uri, local, &prop);
	x->stack[x->depth++] = (Frame){ kind, prop, n_bindings };
	g_assert(xmp_check(x));
	if (kind == E_RDF)
		x->has_rdf = TRUE;
	if (kind == E_PROPERTY || kind == E_ITEM) {
		g_string_truncate(x->text, 0);
		x->is_text_long = FALSE;
	}
	if (kind != E_DESCRIPTION)
		return;
	/* properties in attribute form */
	for (guint i = 0; attr_names[i] != NULL; i++) {
		const char *attr_uri = resolve(x, attr_names[i], FALSE, &local);
		int p = find_prop(attr_uri, local);
		if (p >= 0 && strlen(attr_values[i]) <= MAX_VALUE)
			offer(x, p, attr_values[i]);
	}
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
	Xmp *x = data;
	(void)ctx;
	(void)name;
	(void)error;

	g_assert(x->depth > 0);
	Frame *f = &x->stack[--x->depth];
	if ((f->kind == E_PROPERTY || f->kind == E_ITEM) && f->prop >= 0 && !x->is_text_long)
		offer(x, f->prop, x->text->str);
	if (f->kind == E_PROPERTY || f->kind == E_ITEM)
		g_string_truncate(x->text, 0);
	unbind(x, f->n_bindings);
	g_assert(xmp_check(x));
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data, GError **error)
{
	Xmp *x = data;
	(void)ctx;
	(void)error;

	if (x->depth == 0)
		return;
	const Frame *f = &x->stack[x->depth - 1];
	if ((f->kind != E_PROPERTY && f->kind != E_ITEM) || f->prop < 0 || x->is_text_long)
		return;
	if (x->text->len + len > MAX_VALUE) {
		x->is_text_long = TRUE;
		return;
	}
	g_string_append_len(x->text, text, (gssize)len);
}

static const GMarkupParser parser = {
	.start_element = on_start,
	.end_element = on_end,
	.text = on_text,
};

/* A date property's value into `m`; FALSE when it has none. */
static gboolean apply_date(Xmp *x, Prop p, PixMeta *m)
{
	char *date, *tz;
	if (x->values[p] == NULL || !pix_meta_parse_date(x->values[p], &date, &tz))
		return FALSE;
	m->date_taken = date;
	if (m->date_tz == NULL)
		m->date_tz = tz;
	else
		g_free(tz);
	m->date_source = props[p].label;
	return TRUE;
}

static void apply_text(Xmp *x, Prop p, char **field)
{
	if (*field == NULL && x->values[p] != NULL)
		*field = g_strdup(x->values[p]);
}

static void apply_real(Xmp *x, Prop p, double *field)
{
	if (isnan(*field) && x->values[p] != NULL)
		pix_meta_parse_rational(x->values[p], field);
}

/* exif:GPSTimeStamp, an XMP date (UTC unless it says otherwise), as the
 * EXIF reader's gps_time. */
static void apply_gps_time(Xmp *x, PixMeta *m)
{
	g_autofree char *date = NULL, *tz = NULL;
	if (m->gps_time != NULL || x->values[P_GPS_TIME] == NULL || !pix_meta_parse_date(x->values[P_GPS_TIME], &date, &tz))
		return;
	g_autoptr(GTimeZone) zone = tz != NULL ? g_time_zone_new_identifier(tz) : g_time_zone_new_utc();
	g_autoptr(GDateTime) t = zone != NULL ? g_date_time_new_from_iso8601(date, zone) : NULL;
	g_autoptr(GDateTime) utc = t != NULL ? g_date_time_to_utc(t) : NULL;
	if (utc == NULL)
		return;
	double hms[3] = { g_date_time_get_hour(utc), g_date_time_get_minute(utc), g_date_time_get_seconds(utc) };
	g_autofree char *day = g_date_time_format(utc, "%Y:%m:%d");
	pix_meta_set_gps_time(m, hms, 3, day);
}

/* The values collected into the fields of `m` still unknown. */
static void apply(Xmp *x, PixMeta *m)
{
	static const Prop dates[] = { P_DATE_ORIGINAL, P_DATE_CREATED, P_CREATE_DATE, P_DATE_DIGITIZED };
	gint64 n;
	double lat, lon;

	for (guint i = 0; m->date_taken == NULL && i < G_N_ELEMENTS(dates); i++)
		apply_date(x, dates[i], m);
	apply_text(x, P_MAKE, &m->make);
	apply_text(x, P_MODEL, &m->model);
	apply_text(x, P_LENS_MODEL, &m->lens);
	apply_text(x, P_LENS, &m->lens);
	apply_real(x, P_EXPOSURE, &m->exposure_s);
	apply_real(x, P_FNUMBER, &m->fnumber);
	apply_real(x, P_FOCAL, &m->focal_mm);
	for (Prop p = P_ISO; m->iso < 0 && p <= P_ISO_CIPA; p++) {
		if (x->values[p] != NULL && pix_meta_parse_int(x->values[p], 1, G_MAXINT32, &n))
			m->iso = n;
	}
	if (m->orientation < 0 && x->values[P_ORIENTATION] != NULL &&
	    pix_meta_parse_int(x->values[P_ORIENTATION], 1, 8, &n))
		m->orientation = (int)n;
	if (isnan(m->gps_lat) && isnan(m->gps_lon) && x->values[P_LATITUDE] != NULL &&
	    x->values[P_LONGITUDE] != NULL && parse_coordinate(x->values[P_LATITUDE], TRUE, &lat) &&
	    parse_coordinate(x->values[P_LONGITUDE], FALSE, &lon)) {
		m->gps_lat = lat;
		m->gps_lon = lon;
	}
	double v;
	if (x->values[P_APERTURE] != NULL && pix_meta_parse_rational(x->values[P_APERTURE], &v))
		pix_meta_set_aperture(m, v);
	if (x->values[P_EXPOSURE_PROGRAM] != NULL && pix_meta_parse_int(x->values[P_EXPOSURE_PROGRAM], 0, 255, &n))
		pix_meta_set_exposure_program(m, n);
	if (x->values[P_METERING_MODE] != NULL && pix_meta_parse_int(x->values[P_METERING_MODE], 0, 255, &n))
		pix_meta_set_metering_mode(m, n);
	if (x->values[P_GPS_DIRECTION] != NULL && pix_meta_parse_rational(x->values[P_GPS_DIRECTION], &v))
		pix_meta_set_direction(m, v, x->values[P_GPS_DIRECTION_REF]);
	apply_gps_time(x, m);
	apply_text(x, P_DESCRIPTION, &m->description);
	if (isnan(m->gps_alt_m) && x->values[P_ALTITUDE] != NULL) {
		apply_real(x, P_ALTITUDE, &m->gps_alt_m);
		if (x->values[P_ALTITUDE_REF] != NULL && pix_meta_parse_int(x->values[P_ALTITUDE_REF], 1, 1, &n))
			m->gps_alt_m = -m->gps_alt_m;
	}
}

/* What went wrong in the parse, for a message (transfer full). */
static char *describe(const Xmp *x, GMarkupParseContext *ctx, const GError *error, gboolean at_end)
{
	int line = 0, column = 0;
	g_markup_parse_context_get_position(ctx, &line, &column);
	if (x->is_too_deep)
		return g_strdup_printf("elements nested deeper than %d at line %d", MAX_DEPTH, line);
	if (x->is_too_wide)
		return g_strdup_printf("more than %d namespace declarations at line %d", MAX_BINDINGS, line);
	if (error->code == G_MARKUP_ERROR_EMPTY)
		return g_strdup("no XML in it");
	if (at_end && x->depth > 0)
		return g_strdup_printf("truncated XML (%u element%s left open)", x->depth, x->depth == 1 ? "" : "s");
	if (at_end)
		return g_strdup("truncated XML (it ends inside markup)");
	if (error->code == G_MARKUP_ERROR_BAD_UTF8)
		return g_strdup_printf("invalid UTF-8 at line %d", line);
	return g_strdup_printf("malformed XML at line %d, column %d", line, column);
}

/*
 * Parses `len` bytes at `data` into `m`.  Returns what is wrong with them
 * (transfer full), or NULL: a parse error, or no rdf:RDF in well-formed
 * XML.  When `is_cut` (the bytes are the start of a larger whole), ending
 * inside markup is no error, nor is a missing rdf:RDF.
 */
static char *read_xmp(const guint8 *data, gsize len, gboolean is_cut, PixMeta *m)
{
	Xmp x = {
		.ns = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref),
		.declared = g_ptr_array_new_with_free_func(g_free),
		.text = g_string_new(NULL),
	};
	g_autoptr(GError) error = NULL;
	char *problem = NULL;

	if (len > MAX_XMP_BYTES) {
		len = MAX_XMP_BYTES;
		is_cut = TRUE;
	}
	if (is_cut) {
		/* not in the middle of a character */
		while (len > 0 && (data[len - 1] & 0xC0) == 0x80)
			len--;
		if (len > 0 && data[len - 1] >= 0xC0)
			len--;
	}
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	/* packets in images may be padded with NULs */
	while (len > 0 && data[len - 1] == '\0')
		len--;
	GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, G_MARKUP_TREAT_CDATA_AS_TEXT, &x, NULL);
	if (!g_markup_parse_context_parse(ctx, len > 0 ? (const char *)data : "", (gssize)len, &error))
		problem = describe(&x, ctx, error, FALSE);
	else if (!g_markup_parse_context_end_parse(ctx, &error) && !is_cut)
		problem = describe(&x, ctx, error, TRUE);
	else if (!x.has_rdf && !is_cut)
		problem = g_strdup("no rdf:RDF element");
	g_markup_parse_context_free(ctx);
	apply(&x, m);
	xmp_clear(&x);
	return problem;
}

void pix_meta_read_xmp(const guint8 *xmp, gsize len, PixMeta *m)
{
	g_free(read_xmp(xmp, len, FALSE, m));
}

/* --- the sidecar container --- */

static void *sidecar_start(PixStream *s)
{
	(void)s;
	return NULL;
}

static void sidecar_finish(void *state, PixStream *s, PixMeta *m)
{
	guint64 size = pix_stream_pos(s);
	gsize len = (gsize)MIN(size, MAX_XMP_BYTES);
	const guint8 *data = pix_stream_peek(s, 0, len);
	(void)state;

	if (data == NULL)
		return;
	g_autofree char *problem = read_xmp(data, len, size > len, m);
	if (problem != NULL)
		pix_stream_problem(s, "corrupt XMP: %s", problem);
	if (size > len)
		pix_stream_problem(s, "XMP sidecar of %" G_GUINT64_FORMAT " bytes: only its first %u read", size,
		                   MAX_XMP_BYTES);
}

static void sidecar_free(void *state)
{
	(void)state;
}

const PixContainer pix_container_xmp = {
	.name = "XMP",
	.keep_head = MAX_XMP_BYTES,
	.keep_tail = 0,
	.start = sidecar_start,
	.finish = sidecar_finish,
	.free = sidecar_free,
};
