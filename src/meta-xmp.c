/*
 * meta-xmp.c: XMP metadata, from XMP sidecar files (as a PixContainer)
 * and from packets found inside images (pix_meta_read_xmp_in()); see
 * meta-int.h.
 *
 * Reads a packet in memory (the stream keeps a whole sidecar); writes the
 * PixMeta fields still unknown, and the photographer's metadata into
 * PixMeta.tags (tags.h).  Runs on a hash thread; no state is shared.
 *
 * XMP is RDF/XML.  An rdf:RDF element holds rdf:Description elements that
 * describe the image; a property is either an attribute of rdf:Description
 * (exif:FNumber="28/10", as Exiv2, darktable and digiKam write) or a child
 * element (<exif:FNumber>28/10</exif:FNumber>, as Adobe's tools write).
 * An array property holds an rdf:Seq, rdf:Bag or rdf:Alt of rdf:li items
 * (an Alt's items carry xml:lang: of a language alternative the
 * "x-default" item is read, else the first).  A structure is an
 * rdf:Description inside the property (or inside an rdf:li), or the
 * property element itself with rdf:parseType="Resource", or an empty
 * property element whose attributes are the fields
 * (<mwg-rs:Area stArea:x="0.5" .../>).  Prefixes are the writer's choice:
 * a property is known by its namespace URI and local name, through the
 * xmlns declarations in scope.
 *
 * What is read is a tree of known properties (`nodes` below): top-level
 * properties, and the fields of the structures known (MWG's and
 * Microsoft's face regions).  A name met anywhere else is ignored with
 * all it holds: the same names inside another structure (an IPTC
 * location's exif:GPSLatitude) describe something else, and darktable's
 * history (hundreds of items) costs no look-up.  Values are in XMP's own
 * forms (ISO 8601 dates, "n/d" rationals, "DDD,MM.mmN" coordinates), plus
 * the EXIF-style dates Exiv2 copies over.
 *
 * GLib's GMarkup parses the XML.  It expands no entities but the five
 * predefined ones and reads no DTD (a document that declares or uses
 * others is malformed to it), so hostile XML cannot make it fetch or
 * blow up anything; it checks UTF-8 and well-formedness.
 *
 * Invariants (xmp_check(), asserted at each element):
 *  1. At most MAX_XMP_BYTES of input are parsed, the element stack is at
 *     most MAX_DEPTH deep, at most MAX_BINDINGS namespace declarations are
 *     in scope, and a value longer than its node's limit (MAX_VALUE, or
 *     PIX_TAGS_MAX_TEXT for the photographer's texts) is dropped.
 *  2. Values are collected during the parse and applied to PixMeta after
 *     it, whether or not it succeeded: what came before an error counts.
 *  3. A property keeps the first of its values that is usable (parses as
 *     its type, in range); PixMeta fields are set only when unknown, and
 *     latitude and longitude only together.
 *  4. A frame's node is -1 (the top of a description) or a node of the
 *     table whose parent is the node of the nearest description-like
 *     frame below it: values are only ever matched in their place.
 *  5. At most MAX_REGIONS regions of each list are gathered.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"

#include <math.h>
#include <string.h>

#define MAX_XMP_BYTES (4u << 20)
#define MAX_DEPTH 64
#define MAX_BINDINGS 1024
#define MAX_VALUE 1024
#define MAX_REGIONS PIX_TAGS_MAX_PEOPLE

#define NS_RDF "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
#define NS_XML "http://www.w3.org/XML/1998/namespace"
#define NS_EXIF "http://ns.adobe.com/exif/1.0/"
#define NS_EXIF_EX "http://cipa.jp/exif/1.0/"        /* Exif 2.3 tags (exifEX) */
#define NS_AUX "http://ns.adobe.com/exif/1.0/aux/"
#define NS_TIFF "http://ns.adobe.com/tiff/1.0/"
#define NS_XMP "http://ns.adobe.com/xap/1.0/"
#define NS_XMP_NOTE "http://ns.adobe.com/xmp/note/"
#define NS_PHOTOSHOP "http://ns.adobe.com/photoshop/1.0/"
#define NS_DC "http://purl.org/dc/elements/1.1/"
#define NS_LR "http://ns.adobe.com/lightroom/1.0/"
#define NS_DIGIKAM "http://www.digikam.org/ns/1.0/"
#define NS_MEDIAPRO "http://ns.iview-multimedia.com/mediapro/1.0/"
#define NS_MS_PHOTO "http://ns.microsoft.com/photo/1.0/"
#define NS_MS_PHOTO_BARE "http://ns.microsoft.com/photo/1.0"  /* Windows XP and Vista */
#define NS_IPTC_CORE "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/"
#define NS_IPTC_EXT "http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
#define NS_MWG_RS "http://www.metadataworkinggroup.com/schemas/regions/"
#define NS_ST_AREA "http://ns.adobe.com/xmp/sType/Area#"
#define NS_ST_DIM "http://ns.adobe.com/xap/1.0/sType/Dimensions#"
#define NS_MP "http://ns.microsoft.com/photo/1.2/"
#define NS_MPRI "http://ns.microsoft.com/photo/1.2/t/RegionInfo#"
#define NS_MPREG "http://ns.microsoft.com/photo/1.2/t/Region#"

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

/* The camera's properties read (into PixMeta's own fields), in the order
 * of the table below. */
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
	P_HAS_EXTENDED,
	N_PROPS
} Prop;

static const struct {
	Type type;
	const char *label;      /* for date_source: the usual prefix */
} props[N_PROPS] = {
	[P_DATE_ORIGINAL] = { T_DATE, "XMP exif:DateTimeOriginal" },
	[P_DATE_CREATED] = { T_DATE, "XMP photoshop:DateCreated" },
	[P_CREATE_DATE] = { T_DATE, "XMP xmp:CreateDate" },
	[P_DATE_DIGITIZED] = { T_DATE, "XMP exif:DateTimeDigitized" },
	[P_LATITUDE] = { T_LATITUDE, NULL },
	[P_LONGITUDE] = { T_LONGITUDE, NULL },
	[P_ALTITUDE] = { T_NON_NEGATIVE, NULL },
	[P_ALTITUDE_REF] = { T_ALT_REF, NULL },
	[P_MAKE] = { T_TEXT, NULL },
	[P_MODEL] = { T_TEXT, NULL },
	[P_ORIENTATION] = { T_ORIENTATION, NULL },
	[P_LENS_MODEL] = { T_TEXT, NULL },
	[P_LENS] = { T_TEXT, NULL },
	[P_ISO] = { T_ISO, NULL },
	[P_ISO_CIPA] = { T_ISO, NULL },
	[P_EXPOSURE] = { T_POSITIVE, NULL },
	[P_FNUMBER] = { T_POSITIVE, NULL },
	[P_FOCAL] = { T_POSITIVE, NULL },
	[P_APERTURE] = { T_REAL, NULL },
	[P_EXPOSURE_PROGRAM] = { T_CODE, NULL },
	[P_METERING_MODE] = { T_CODE, NULL },
	[P_GPS_TIME] = { T_DATE, NULL },
	[P_GPS_DIRECTION] = { T_NON_NEGATIVE, NULL },
	[P_GPS_DIRECTION_REF] = { T_TEXT, NULL },
	[P_HAS_EXTENDED] = { T_TEXT, NULL },
};

/* What a value found at a node is. */
typedef enum {
	V_PROP,         /* a camera property: arg is its Prop */
	V_TEXT,         /* a text of the photographer's: arg is its Text */
	V_ALT,          /* the same, a language alternative: arg is its Alt */
	V_FLAT,         /* a flat keyword */
	V_PATH,         /* a hierarchical keyword: arg its rank, sep its separator */
	V_CREATOR,      /* a creator's name */
	V_RATING,       /* xmp:Rating */
	V_PERCENT,      /* MicrosoftPhoto:Rating */
	V_PERSON,       /* Iptc4xmpExt:PersonInImage */
	V_STRUCT,       /* a structure: its fields are the nodes below it */
	V_REGION,       /* a region's field: arg is its RegionField, list its list */
	V_DIM,          /* MWG's AppliedToDimensions' field: arg is w, h or unit */
} Value;

typedef enum { X_LABEL, X_CITY, X_STATE, X_COUNTRY, X_LOCATION, X_COUNTRY_CODE, N_TEXTS } Text;
typedef enum { A_TITLE, A_DESCRIPTION, A_RIGHTS, N_ALTS } Alt;
typedef enum { R_NAME, R_TYPE, R_X, R_Y, R_W, R_H, R_UNIT, R_RECT, N_REGION_FIELDS } RegionField;
enum { D_W, D_H, D_UNIT };
enum { LIST_MWG, LIST_MP };

/* A node of the tree of properties read: `parent` is -1 for a top-level
 * property, else the node of the structure it is a field of. */
typedef struct {
	int parent;
	const char *ns;
	const char *name;
	Value value;
	int arg;
	char sep;               /* V_PATH: the separator */
	guint8 list;            /* V_REGION: LIST_MWG or LIST_MP */
} Node;

/* The nodes whose values are structures, by index in `nodes`. */
enum {
	N_MWG_REGIONS = 0,
	N_MWG_DIMS,
	N_MWG_LIST,
	N_MWG_AREA,
	N_MP_INFO,
	N_MP_LIST,
};

#define TOP(ns, name, v, arg) { -1, ns, name, v, arg, 0, 0 }
#define PROP(ns, name, p) TOP(ns, name, V_PROP, p)
static const Node nodes[] = {
	/* the structures first: their children name them by index */
	[N_MWG_REGIONS] = TOP(NS_MWG_RS, "Regions", V_STRUCT, 0),
	[N_MWG_DIMS] = { N_MWG_REGIONS, NS_MWG_RS, "AppliedToDimensions", V_STRUCT, 0, 0, 0 },
	[N_MWG_LIST] = { N_MWG_REGIONS, NS_MWG_RS, "RegionList", V_STRUCT, 0, 0, LIST_MWG },
	[N_MWG_AREA] = { N_MWG_LIST, NS_MWG_RS, "Area", V_STRUCT, 0, 0, LIST_MWG },
	[N_MP_INFO] = TOP(NS_MP, "RegionInfo", V_STRUCT, 0),
	[N_MP_LIST] = { N_MP_INFO, NS_MPRI, "Regions", V_STRUCT, 0, 0, LIST_MP },
	{ N_MWG_DIMS, NS_ST_DIM, "w", V_DIM, D_W, 0, 0 },
	{ N_MWG_DIMS, NS_ST_DIM, "h", V_DIM, D_H, 0, 0 },
	{ N_MWG_DIMS, NS_ST_DIM, "unit", V_DIM, D_UNIT, 0, 0 },
	{ N_MWG_LIST, NS_MWG_RS, "Name", V_REGION, R_NAME, 0, LIST_MWG },
	{ N_MWG_LIST, NS_MWG_RS, "Type", V_REGION, R_TYPE, 0, LIST_MWG },
	{ N_MWG_AREA, NS_ST_AREA, "x", V_REGION, R_X, 0, LIST_MWG },
	{ N_MWG_AREA, NS_ST_AREA, "y", V_REGION, R_Y, 0, LIST_MWG },
	{ N_MWG_AREA, NS_ST_AREA, "w", V_REGION, R_W, 0, LIST_MWG },
	{ N_MWG_AREA, NS_ST_AREA, "h", V_REGION, R_H, 0, LIST_MWG },
	{ N_MWG_AREA, NS_ST_AREA, "unit", V_REGION, R_UNIT, 0, LIST_MWG },
	{ N_MP_LIST, NS_MPREG, "PersonDisplayName", V_REGION, R_NAME, 0, LIST_MP },
	{ N_MP_LIST, NS_MPREG, "Rectangle", V_REGION, R_RECT, 0, LIST_MP },
	/* the camera's */
	PROP(NS_EXIF, "DateTimeOriginal", P_DATE_ORIGINAL),
	PROP(NS_PHOTOSHOP, "DateCreated", P_DATE_CREATED),
	PROP(NS_XMP, "CreateDate", P_CREATE_DATE),
	PROP(NS_EXIF, "DateTimeDigitized", P_DATE_DIGITIZED),
	PROP(NS_EXIF, "GPSLatitude", P_LATITUDE),
	PROP(NS_EXIF, "GPSLongitude", P_LONGITUDE),
	PROP(NS_EXIF, "GPSAltitude", P_ALTITUDE),
	PROP(NS_EXIF, "GPSAltitudeRef", P_ALTITUDE_REF),
	PROP(NS_TIFF, "Make", P_MAKE),
	PROP(NS_TIFF, "Model", P_MODEL),
	PROP(NS_TIFF, "Orientation", P_ORIENTATION),
	PROP(NS_EXIF_EX, "LensModel", P_LENS_MODEL),
	PROP(NS_AUX, "Lens", P_LENS),
	PROP(NS_EXIF, "ISOSpeedRatings", P_ISO),
	PROP(NS_EXIF_EX, "PhotographicSensitivity", P_ISO_CIPA),
	PROP(NS_EXIF, "ExposureTime", P_EXPOSURE),
	PROP(NS_EXIF, "FNumber", P_FNUMBER),
	PROP(NS_EXIF, "FocalLength", P_FOCAL),
	PROP(NS_EXIF, "ApertureValue", P_APERTURE),
	PROP(NS_EXIF, "ExposureProgram", P_EXPOSURE_PROGRAM),
	PROP(NS_EXIF, "MeteringMode", P_METERING_MODE),
	PROP(NS_EXIF, "GPSTimeStamp", P_GPS_TIME),
	PROP(NS_EXIF, "GPSImgDirection", P_GPS_DIRECTION),
	PROP(NS_EXIF, "GPSImgDirectionRef", P_GPS_DIRECTION_REF),
	PROP(NS_XMP_NOTE, "HasExtendedXMP", P_HAS_EXTENDED),
	/* the photographer's */
	TOP(NS_DC, "subject", V_FLAT, 0),
	{ -1, NS_LR, "hierarchicalSubject", V_PATH, 0, '|', 0 },
	{ -1, NS_DIGIKAM, "TagsList", V_PATH, 1, '/', 0 },
	{ -1, NS_MEDIAPRO, "CatalogSets", V_PATH, 2, '|', 0 },
	{ -1, NS_MS_PHOTO, "LastKeywordXMP", V_PATH, 3, '/', 0 },
	{ -1, NS_MS_PHOTO_BARE, "LastKeywordXMP", V_PATH, 3, '/', 0 },
	TOP(NS_XMP, "Rating", V_RATING, 0),
	TOP(NS_MS_PHOTO, "Rating", V_PERCENT, 0),
	TOP(NS_MS_PHOTO_BARE, "Rating", V_PERCENT, 0),
	TOP(NS_XMP, "Label", V_TEXT, X_LABEL),
	TOP(NS_DC, "title", V_ALT, A_TITLE),
	TOP(NS_DC, "description", V_ALT, A_DESCRIPTION),
	TOP(NS_DC, "rights", V_ALT, A_RIGHTS),
	TOP(NS_DC, "creator", V_CREATOR, 0),
	TOP(NS_PHOTOSHOP, "City", V_TEXT, X_CITY),
	TOP(NS_PHOTOSHOP, "State", V_TEXT, X_STATE),
	TOP(NS_PHOTOSHOP, "Country", V_TEXT, X_COUNTRY),
	TOP(NS_IPTC_CORE, "Location", V_TEXT, X_LOCATION),
	TOP(NS_IPTC_CORE, "CountryCode", V_TEXT, X_COUNTRY_CODE),
	TOP(NS_IPTC_EXT, "PersonInImage", V_PERSON, 0),
};
#undef TOP
#undef PROP
#define N_NODES ((int)G_N_ELEMENTS(nodes))

/* The longest text a node's value may have. */
static gsize value_limit(int node)
{
	return node >= 0 && nodes[node].value != V_PROP ? PIX_TAGS_MAX_TEXT : MAX_VALUE;
}

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
	E_DESCRIPTION,  /* a description: the image's (node -1), or a
	                   structure's (the node of the structure): its
	                   children and attributes are properties or fields */
	E_PROPERTY,     /* a property or field element of a known node */
	E_ARRAY,        /* rdf:Seq, rdf:Bag or rdf:Alt of a property */
	E_ITEM,         /* rdf:li of that array */
	E_IGNORED,      /* anything else, and all it holds */
} Kind;

typedef struct {
	Kind kind;
	int node;       /* see invariant 4 */
	int item;       /* the index of the array item this is in, or -1 */
	int n_items;    /* E_ARRAY: items met so far */
	gboolean is_default; /* E_ITEM: xml:lang="x-default" */
	gboolean has_child; /* an element was met inside (its text is no value) */
	guint n_bindings; /* xmlns declarations this element made */
} Frame;

/* A region as its fields come (strings owned). */
typedef struct {
	char *fields[N_REGION_FIELDS];
} Region;

typedef struct {
	Frame stack[MAX_DEPTH];
	guint depth;
	/* namespaces in scope: prefix ("" for the default) -> GPtrArray of
	 * URIs, innermost last (all owned) */
	GHashTable *ns;
	GPtrArray *declared;    /* prefixes in scope, in declaration order, for
	                           popping (owned) */
	GString *text;          /* the text of the value being read */
	gboolean is_text_long;  /* that text went past its limit */
	gboolean has_rdf;       /* an rdf:RDF element was seen */
	gboolean is_too_deep;
	gboolean is_too_wide;
	char *values[N_PROPS];  /* first usable value of each camera property (owned) */
	PixTags *tags;          /* the photographer's values as found (owned) */
	char *texts[N_TEXTS];   /* first value of each (owned) */
	char *alts[N_ALTS];     /* x-default, else first value of each (owned) */
	gboolean is_alt_default[N_ALTS];
	GArray *regions[2];     /* Region, by item index, per list */
	char *dims[3];          /* MWG's AppliedToDimensions (owned) */
} Xmp;

/* Invariant 1, and the namespace bookkeeping: the prefixes in scope are
 * those the open elements declared. */
static gboolean xmp_check(const Xmp *x)
{
	guint n_bindings = 0;
	if (x->depth > MAX_DEPTH || x->declared->len > MAX_BINDINGS)
		return FALSE;
	for (guint i = 0; i < x->depth; i++) {
		const Frame *f = &x->stack[i];
		n_bindings += f->n_bindings;
		if (f->node < -1 || f->node >= N_NODES)
			return FALSE;
		if ((f->kind == E_PROPERTY || f->kind == E_ARRAY || f->kind == E_ITEM) && f->node < 0)
			return FALSE;
	}
	for (guint i = 0; i < 2; i++)
		if (x->regions[i]->len > MAX_REGIONS)
			return FALSE;
	if (x->depth > 0 && x->text->len > value_limit(x->stack[x->depth - 1].node))
		return FALSE;
	return n_bindings == x->declared->len;
}

static void region_clear(gpointer p)
{
	Region *r = p;
	for (guint i = 0; i < N_REGION_FIELDS; i++)
		g_free(r->fields[i]);
}

static void xmp_init(Xmp *x)
{
	memset(x, 0, sizeof *x);
	x->ns = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	x->declared = g_ptr_array_new_with_free_func(g_free);
	x->text = g_string_new(NULL);
	x->tags = pix_tags_new();
	for (guint i = 0; i < 2; i++) {
		x->regions[i] = g_array_new(FALSE, TRUE, sizeof(Region));
		g_array_set_clear_func(x->regions[i], region_clear);
	}
}

static void xmp_clear(Xmp *x)
{
	g_hash_table_destroy(x->ns);
	g_ptr_array_free(x->declared, TRUE);
	g_string_free(x->text, TRUE);
	for (guint i = 0; i < N_PROPS; i++)
		g_free(x->values[i]);
	for (guint i = 0; i < N_TEXTS; i++)
		g_free(x->texts[i]);
	for (guint i = 0; i < N_ALTS; i++)
		g_free(x->alts[i]);
	for (guint i = 0; i < 3; i++)
		g_free(x->dims[i]);
	for (guint i = 0; i < 2; i++)
		g_array_free(x->regions[i], TRUE);
	pix_tags_free(x->tags);
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
 * (attributes).  The prefix "xml" is always XML's own.
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
	if (strcmp(prefix, "xml") == 0)
		return NS_XML;
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

/* The node of property (or field) `uri`:`local` of structure `parent`
 * (-1: a top-level property), or -1. */
static int find_node(int parent, const char *uri, const char *local)
{
	if (uri == NULL)
		return -1;
	for (int i = 0; i < N_NODES; i++) {
		if (nodes[i].parent == parent && strcmp(nodes[i].name, local) == 0 && strcmp(nodes[i].ns, uri) == 0)
			return i;
	}
	return -1;
}

static gboolean is_struct(int node)
{
	return node >= 0 && nodes[node].value == V_STRUCT;
}

/* A value of a camera property: kept if it is the first usable. */
static void offer(Xmp *x, int prop, const char *text)
{
	if (x->values[prop] != NULL)
		return;
	g_autofree char *v = g_strstrip(g_strdup(text));
	if (is_usable(props[prop].type, v))
		x->values[prop] = g_steal_pointer(&v);
}

/* A region's field: into region `item` of its list. */
static void offer_region(Xmp *x, const Node *n, int item, const char *text)
{
	GArray *a = x->regions[n->list];
	if (item < 0 || item >= MAX_REGIONS)
		return;
	if ((guint)item >= a->len)
		g_array_set_size(a, (guint)item + 1);
	char **field = &g_array_index(a, Region, item).fields[n->arg];
	if (*field == NULL)
		*field = g_strdup(text);
}

/* A value was read at `node`, in array item `item` (-1: none);
 * `is_default`: that item is x-default. */
static void emit(Xmp *x, int node, int item, gboolean is_default, const char *text)
{
	const Node *n = &nodes[node];
	switch (n->value) {
	case V_PROP:
		offer(x, n->arg, text);
		break;
	case V_TEXT:
		if (x->texts[n->arg] == NULL)
			x->texts[n->arg] = g_strdup(text);
		break;
	case V_ALT:
		if (x->alts[n->arg] == NULL || (is_default && !x->is_alt_default[n->arg])) {
			g_free(x->alts[n->arg]);
			x->alts[n->arg] = g_strdup(text);
			x->is_alt_default[n->arg] = is_default;
		}
		break;
	case V_FLAT:
		pix_tags_add_flat(x->tags, PIX_TAGS_XMP, text);
		break;
	case V_PATH:
		pix_tags_add_path(x->tags, (guint)n->arg, text, n->sep);
		break;
	case V_CREATOR:
		pix_tags_add_creator(x->tags, PIX_TAGS_XMP, text);
		break;
	case V_RATING:
		pix_tags_set_rating(x->tags, text, FALSE);
		break;
	case V_PERCENT:
		pix_tags_set_rating(x->tags, text, TRUE);
		break;
	case V_PERSON: {
		PixPerson p = { .name = g_strdup(text) };
		pix_tags_add_person(x->tags, 2, &p);
		break;
	}
	case V_REGION:
		offer_region(x, n, item, text);
		break;
	case V_DIM:
		if (x->dims[n->arg] == NULL)
			x->dims[n->arg] = g_strdup(text);
		break;
	case V_STRUCT:
		break;
	}
}

/* The array item the element at the top of the stack is in, or -1. */
static int current_item(const Xmp *x)
{
	return x->depth > 0 ? x->stack[x->depth - 1].item : -1;
}

/* Attributes as properties or fields of `node` (a description's, or
 * an empty property element's structure): rdf:, xml: and xmlns ones
 * are syntax. */
static void offer_attributes(Xmp *x, int node, const char **names, const char **values)
{
	for (guint i = 0; names[i] != NULL; i++) {
		const char *local;
		const char *uri = resolve(x, names[i], FALSE, &local);
		if (uri == NULL || strcmp(uri, NS_RDF) == 0 || strcmp(uri, NS_XML) == 0)
			continue;
		int child = find_node(node, uri, local);
		if (child < 0 || is_struct(child) || strlen(values[i]) > value_limit(child))
			continue;
		emit(x, child, current_item(x), FALSE, values[i]);
	}
}

static gboolean has_parse_type_resource(Xmp *x, const char **names, const char **values)
{
	for (guint i = 0; names[i] != NULL; i++) {
		const char *local;
		const char *uri = resolve(x, names[i], FALSE, &local);
		if (is_rdf(uri, local, "parseType") && strcmp(values[i], "Resource") == 0)
			return TRUE;
	}
	return FALSE;
}

static gboolean is_default_lang(Xmp *x, const char **names, const char **values)
{
	for (guint i = 0; names[i] != NULL; i++) {
		const char *local;
		const char *uri = resolve(x, names[i], FALSE, &local);
		if (uri != NULL && strcmp(uri, NS_XML) == 0 && strcmp(local, "lang") == 0)
			return g_ascii_strcasecmp(values[i], "x-default") == 0;
	}
	return FALSE;
}

/* The frame of an element named uri:local under `parent` (see Kind). */
static Frame child_frame(Xmp *x, Frame *parent, const char *uri, const char *local, const char **names,
                         const char **values)
{
	Frame f = { .kind = E_IGNORED, .node = -1, .item = parent != NULL ? parent->item : -1 };
	switch (parent != NULL ? parent->kind : E_OUTSIDE) {
	case E_OUTSIDE:
		f.kind = is_rdf(uri, local, "RDF") ? E_RDF : E_OUTSIDE;
		break;
	case E_RDF:
		if (is_rdf(uri, local, "Description"))
			f.kind = E_DESCRIPTION;
		break;
	case E_DESCRIPTION: {
		int node = find_node(parent->node, uri, local);
		if (node < 0)
			break;
		f.node = node;
		f.kind = is_struct(node) && has_parse_type_resource(x, names, values) ? E_DESCRIPTION : E_PROPERTY;
		break;
	}
	case E_PROPERTY:
		if (is_rdf(uri, local, "Seq") || is_rdf(uri, local, "Bag") || is_rdf(uri, local, "Alt")) {
			f.kind = E_ARRAY;
			f.node = parent->node;
		} else if (is_rdf(uri, local, "Description") && is_struct(parent->node)) {
			f.kind = E_DESCRIPTION;
			f.node = parent->node;
		}
		break;
	case E_ARRAY:
		if (!is_rdf(uri, local, "li"))
			break;
		f.node = parent->node;
		f.item = parent->n_items++;
		f.is_default = is_default_lang(x, names, values);
		f.kind = is_struct(f.node) && has_parse_type_resource(x, names, values) ? E_DESCRIPTION : E_ITEM;
		break;
	case E_ITEM:
		if (is_rdf(uri, local, "Description") && is_struct(parent->node)) {
			f.kind = E_DESCRIPTION;
			f.node = parent->node;
		}
		break;
	case E_IGNORED:
		break;
	}
	return f;
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
	if (parent != NULL) {
		/* a property holding an element has no text value: what text
		 * it had is dropped (its child's limit may be smaller) */
		parent->has_child = TRUE;
		if (parent->kind == E_PROPERTY || parent->kind == E_ITEM)
			g_string_truncate(x->text, 0);
	}
	/* below an ignored element nothing is looked up */
	if (parent != NULL && parent->kind == E_IGNORED) {
		x->stack[x->depth++] = (Frame){ E_IGNORED, -1, -1, 0, FALSE, FALSE, 0 };
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
	Frame f = child_frame(x, parent, uri, local, attr_names, attr_values);
	f.n_bindings = n_bindings;
	x->stack[x->depth++] = f;
	if (f.kind == E_RDF)
		x->has_rdf = TRUE;
	if (f.kind == E_PROPERTY || f.kind == E_ITEM) {
		g_string_truncate(x->text, 0);
		x->is_text_long = FALSE;
	}
	/* properties (fields) in attribute form: of a description, and of
	 * an element that stands for a structure */
	if (f.kind == E_DESCRIPTION || ((f.kind == E_PROPERTY || f.kind == E_ITEM) && is_struct(f.node)))
		offer_attributes(x, f.node, attr_names, attr_values);
	g_assert(xmp_check(x));
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
	Xmp *x = data;
	(void)ctx;
	(void)name;
	(void)error;

	g_assert(x->depth > 0);
	Frame *f = &x->stack[x->depth - 1];
	/* a value: the text of a property or item that holds no element */
	if ((f->kind == E_PROPERTY || f->kind == E_ITEM) && !f->has_child && !x->is_text_long && !is_struct(f->node))
		emit(x, f->node, f->item, f->is_default, x->text->str);
	if (f->kind == E_PROPERTY || f->kind == E_ITEM)
		g_string_truncate(x->text, 0);
	unbind(x, f->n_bindings);
	x->depth--;
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
	if ((f->kind != E_PROPERTY && f->kind != E_ITEM) || x->is_text_long)
		return;
	if (x->text->len + len > value_limit(f->node)) {
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

/* --- what was read, into PixMeta --- */

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

/* A number of a region's or the dimensions' field, NAN when none. */
static double number(const char *text)
{
	double v;
	g_autofree char *s = text != NULL ? g_strstrip(g_strdup(text)) : NULL;
	return s != NULL && pix_meta_parse_rational(s, &v) ? v : NAN;
}

/*
 * The regions gathered, as people: MWG's area is its centre and size, in
 * fractions of the image ("normalized") or pixels of the
 * AppliedToDimensions; Microsoft's Rectangle is "x, y, w, h" of the
 * top-left corner, in fractions.  An area that is not a number, or in
 * pixels without dimensions, is dropped (the name kept).
 */
static void apply_regions(Xmp *x)
{
	double dim_w = number(x->dims[D_W]), dim_h = number(x->dims[D_H]);
	for (guint list = 0; list < 2; list++) {
		for (guint i = 0; i < x->regions[list]->len; i++) {
			Region *r = &g_array_index(x->regions[list], Region, i);
			PixPerson p = { .name = g_steal_pointer(&r->fields[R_NAME]), .type = g_steal_pointer(&r->fields[R_TYPE]) };
			if (p.name == NULL) {
				g_free(p.type);
				continue;
			}
			if (list == LIST_MWG) {
				double w = number(r->fields[R_W]), h = number(r->fields[R_H]);
				double cx = number(r->fields[R_X]), cy = number(r->fields[R_Y]);
				const char *unit = r->fields[R_UNIT] != NULL ? g_strstrip(r->fields[R_UNIT]) : "normalized";
				gboolean is_pixel = strcmp(unit, "pixel") == 0;
				if (is_pixel && dim_w > 0 && dim_h > 0) {
					w /= dim_w, cx /= dim_w;
					h /= dim_h, cy /= dim_h;
				}
				p.has_area = !isnan(w) && !isnan(h) && !isnan(cx) && !isnan(cy) &&
				             (!is_pixel || (dim_w > 0 && dim_h > 0)) && (is_pixel || strcmp(unit, "normalized") == 0);
				p.x = cx - w / 2, p.y = cy - h / 2, p.w = w, p.h = h;
			} else if (r->fields[R_RECT] != NULL) {
				g_auto(GStrv) v = g_strsplit(r->fields[R_RECT], ",", 5);
				if (g_strv_length(v) == 4) {
					p.x = number(v[0]), p.y = number(v[1]), p.w = number(v[2]), p.h = number(v[3]);
					p.has_area = !isnan(p.x) && !isnan(p.y) && !isnan(p.w) && !isnan(p.h);
				}
			}
			pix_tags_add_person(x->tags, list, &p);
		}
	}
}

/* The photographer's values into m->tags (made when there are any). */
static void apply_tags(Xmp *x, PixMeta *m)
{
	static const Text text_order[N_TEXTS] = { X_LABEL, X_CITY, X_STATE, X_COUNTRY, X_LOCATION, X_COUNTRY_CODE };
	PixTags *t = x->tags;
	apply_regions(x);
	for (guint i = 0; i < N_TEXTS; i++) {
		Text k = text_order[i];
		char **field = k == X_LABEL ? &t->label : k == X_CITY ? &t->city : k == X_STATE ? &t->province
		               : k == X_COUNTRY ? &t->country : k == X_LOCATION ? &t->sublocation : &t->country_code;
		pix_tags_set_text(field, x->texts[k]);
	}
	pix_tags_set_text(&t->title, x->alts[A_TITLE]);
	pix_tags_set_text(&t->caption, x->alts[A_DESCRIPTION]);
	pix_tags_set_text(&t->copyright, x->alts[A_RIGHTS]);
	if (m->tags == NULL)
		m->tags = pix_tags_new();
	pix_tags_fill(m->tags, t);
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
	/* dc:description is the picture's description where EXIF has none */
	if (m->description == NULL && x->alts[A_DESCRIPTION] != NULL) {
		g_autofree char *d = g_strstrip(g_strdup(x->alts[A_DESCRIPTION]));
		if (d[0] != '\0')
			m->description = g_steal_pointer(&d);
	}
	if (isnan(m->gps_alt_m) && x->values[P_ALTITUDE] != NULL) {
		apply_real(x, P_ALTITUDE, &m->gps_alt_m);
		if (x->values[P_ALTITUDE_REF] != NULL && pix_meta_parse_int(x->values[P_ALTITUDE_REF], 1, 1, &n))
			m->gps_alt_m = -m->gps_alt_m;
	}
	apply_tags(x, m);
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
	if (error->code == G_MARKUP_ERROR_PARSE && strstr(error->message, "ntity") != NULL)
		return g_strdup_printf("an entity that is not XML's own at line %d (no entity is expanded)", line);
	return g_strdup_printf("malformed XML at line %d, column %d", line, column);
}

/*
 * Parses `len` bytes at `data` into `m`.  Returns what is wrong with them
 * (transfer full), or NULL: a parse error, or no rdf:RDF in well-formed
 * XML.  When `is_cut` (the bytes are the start of a larger whole), ending
 * inside markup is no error, nor is a missing rdf:RDF.  *guid: the packet's
 * xmpNote:HasExtendedXMP (transfer full), when `guid` is not NULL.
 */
static char *read_xmp(const guint8 *data, gsize len, gboolean is_cut, PixMeta *m, char **guid)
{
	Xmp x;
	g_autoptr(GError) error = NULL;
	char *problem = NULL;

	xmp_init(&x);
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
	if (guid != NULL) {
		g_free(*guid);
		*guid = g_strdup(x.values[P_HAS_EXTENDED]);
	}
	xmp_clear(&x);
	return problem;
}

void pix_meta_read_xmp_in(PixStream *s, const guint8 *xmp, gsize len, PixMeta *m, char **guid)
{
	g_autofree char *problem = read_xmp(xmp, len, FALSE, m, guid);
	if (problem != NULL && s != NULL)
		pix_stream_problem(s, "corrupt XMP: %s", problem);
}

void pix_meta_read_xmp(const guint8 *xmp, gsize len, PixMeta *m)
{
	pix_meta_read_xmp_in(NULL, xmp, len, m, NULL);
}

char *pix_meta_finish_tags(PixMeta *m)
{
	if (m == NULL || m->tags == NULL)
		return NULL;
	gboolean has_any = pix_tags_finish(m->tags);
	char *note = g_steal_pointer(&m->tags->note);
	if (!has_any)
		g_clear_pointer(&m->tags, pix_tags_free);
	return note;
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
	g_autofree char *problem = read_xmp(data, len, size > len, m, NULL);
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
