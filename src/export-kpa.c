/*
 * export-kpa.c: `photoidx export --kphotoalbum DIR`: the catalog's images,
 * RAW files and videos at or below DIR merged into the KPhotoAlbum
 * database there: DIR/index.xml (here, through xml-tree.c) and
 * DIR/exif-info.db (store-kpa.c), and its thumbnail cache DIR/.thumbnails
 * from the catalog's thumbnails (export-kpa-thumbs.c).  doc/kphotoalbum.md
 * says what each attribute holds, what is kept and why.
 *
 * Reads the catalog (one snapshot, query.h), the old index.xml and
 * exif-info.db, and KPhotoAlbum's settings (kphotoalbumrc); writes the
 * two files through atomic.h, each to a temporary file in DIR that is
 * synced and renamed over the old one, then the thumbnail cache, and the
 * state file of the last export.  Refuses while a KPhotoAlbum runs on DIR
 * (kpa-running.h): it would write its own index over ours.  Main thread.
 *
 * The merge, as KPhotoAlbum's own search for new images does it
 * (NewImageFinder): an image already listed keeps every attribute and
 * child (tags, areas, label, description, dates, angle, rating, stack);
 * only its md5sum and size follow a file whose content changed.  A file
 * the index lacks is, in this order: an image whose file is gone and
 * whose MD5 it has (renamed in place: file=, and a default label); on the
 * blocklist or skipped by the settings (left out); or new (added with the
 * untagged tag, in date order).  Images whose files are gone are kept,
 * as KPhotoAlbum keeps them.
 *
 * Invariants:
 *  1. Every element and attribute of the old index.xml is in the new one,
 *     but the file=, md5sum, width, height and default label of images
 *     whose file moved or changed (checked on the written bytes before
 *     they replace the old file).
 *  2. Every new <image> has file, startDate, md5sum, width and height
 *     (without an md5sum KPhotoAlbum hashes the file, without a width it
 *     asks to rebuild every thumbnail), and is placed before the first
 *     image dated later, so an index sorted by date stays sorted.
 *  3. Every string written is valid UTF-8 made only of XML characters; a
 *     file whose relative path is not is skipped with a warning.
 *  4. A file is listed at most once, and a blocklisted one never added.
 *  5. index.xml is replaced only after the old one is linked (or copied)
 *     to a numbered backup no earlier export or KPhotoAlbum made.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "export-kpa.h"
#include "atomic.h"
#include "config.h"
#include "export-kpa-thumbs.h"
#include "hash.h"
#include "kpa-running.h"
#include "log.h"
#include "meta-value.h"
#include "path.h"
#include "store-kpa.h"
#include "xml-tree.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The index.xml format of KPhotoAlbum 5.4 to 5.9 (XMLDB::Database::
 * fileVersion()), written for a new database. */
#define KPA_FILE_VERSION 8
/* The newest format read: 11 (KPhotoAlbum 6.1) escapes category names
 * another way, which photoidx does not write. */
#define KPA_MAX_VERSION 10
/* KPhotoAlbum's "YYYY-MM-DDTHH:MM:SS" (QDateTime, Qt::ISODate), plus NUL. */
#define KPA_DATE_LEN 20
#define MAX_INDEX_BYTES (1u << 30)
#define MAX_DEPTH 16
#define STATE_FILE ".photoidx-kpa"

/* What KPhotoAlbum's settings say (kphotoalbumrc, [General]). */
typedef struct {
	char *untagged_category;   /* NULL: no untagged tag configured */
	char *untagged_tag;
	char **excludes;           /* excludeDirectories: names skipped at any depth */
	gboolean is_skip_raw;      /* skipRawIfOtherMatches */
	gboolean is_exif_comments; /* useEXIFComments */
	char **comments_to_strip;  /* stripEXIFComments: descriptions dropped, or NULL */
	int thumb_size;            /* [Thumbnails - DIR/] thumbSize: the thumbnails' size, px */
} Settings;

/* One catalog file to export (strings owned). */
typedef struct {
	char *rel;                 /* path relative to DIR, XML-safe UTF-8 */
	char *path;                /* absolute */
	char start[KPA_DATE_LEN];  /* startDate; "" when there is none */
	char end[KPA_DATE_LEN];    /* endDate of a fuzzy date, else "" */
	char md5[33];
	gint64 width, height;      /* pixel size, as stored (not rotated) */
	gint64 video_length_s;     /* videos: whole seconds, -1 unknown */
	int angle;                 /* from EXIF: 0, 90, 180 or 270 */
	gboolean is_video;
	char *description;         /* KPhotoAlbum's way from the EXIF description, or NULL */
	PixKpaExifRow exif;        /* its strings owned (make, model, lens) */
	gboolean is_done;          /* listed (kept, moved or added) */
	/* the photographer's metadata (issue 28) */
	gint64 id;                 /* files.id */
	gint64 orientation;        /* EXIF, -1 unknown */
	int rating;                /* -1..5, PIX_RATING_UNKNOWN */
	GArray *keywords;          /* Keyword, by ord, or NULL */
	GArray *people;            /* Person, or NULL */
} Rec;

/* A keyword level of a file (file_keywords), a person (file_people). */
typedef struct {
	char *name;
	gint64 parent_ord;         /* -1 at the top */
	gboolean is_assigned;
} Keyword;
typedef struct {
	char *name;
	char *type;
	gboolean has_area;
	double x, y, w, h;         /* fractions of the image as shown */
} Person;

/* The index being merged. */
typedef struct {
	char *old_bytes;           /* the file as read, NULL for a new one (owned) */
	gsize old_len;
	PixXmlNode *root;          /* (owned) */
	PixXmlNode *categories, *images;
	int version;
	gboolean is_compressed;
	GHashTable *by_file;       /* rel -> image node (borrowed) */
	GHashTable *blocked;       /* rel set */
	char *untagged_category;   /* the tag new images get, or NULL (owned) */
	char *untagged_tag;
	guint n_old_images;
} Index;

typedef struct {
	const char *dir;           /* borrowed */
	GArray *recs;              /* Rec */
	GHashTable *wanted;        /* paths to export (incremental), or NULL: all */
	PixKpaExport *out;
	GHashTable *by_id;         /* files.id -> Rec index + 1 (after the records) */
} Collect;

G_DEFINE_QUARK(pix-kpa-error-quark, pix_kpa_error)

void pix_kpa_export_clear(PixKpaExport *out)
{
	g_clear_pointer(&out->backup, g_free);
	pix_kpa_thumbs_done_clear(&out->thumbs);
}

static void rec_clear(gpointer p)
{
	Rec *r = p;
	g_free(r->rel);
	g_free(r->path);
	g_free(r->description);
	g_free((char *)r->exif.make);
	g_free((char *)r->exif.model);
	g_free((char *)r->exif.lens);
	if (r->keywords != NULL)
		g_array_unref(r->keywords);
	if (r->people != NULL)
		g_array_unref(r->people);
}

static void keyword_clear(gpointer p)
{
	g_free(((Keyword *)p)->name);
}

static void person_clear(gpointer p)
{
	g_free(((Person *)p)->name);
	g_free(((Person *)p)->type);
}

static void settings_clear(Settings *s)
{
	g_free(s->untagged_category);
	g_free(s->untagged_tag);
	g_strfreev(s->excludes);
	g_strfreev(s->comments_to_strip);
}

static void index_clear(Index *ix)
{
	g_free(ix->old_bytes);
	pix_xml_free(ix->root);
	g_clear_pointer(&ix->by_file, g_hash_table_unref);
	g_clear_pointer(&ix->blocked, g_hash_table_unref);
	g_free(ix->untagged_category);
	g_free(ix->untagged_tag);
}

/* Whether XML 1.0 can hold `s`: valid UTF-8 with no NUL, no C0 control
 * but tab, newline and carriage return, and no U+FFFE or U+FFFF. */
static gboolean is_xml_text(const char *s)
{
	if (!g_utf8_validate(s, -1, NULL))
		return FALSE;
	for (const char *p = s; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF)
			return FALSE;
	}
	return TRUE;
}

/* --- KPhotoAlbum's settings --- */

/* KConfig's list of commentsToStrip: entries ended by "-,-", ",," a
 * literal comma. */
static char **split_comments(const char *s)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new();
	g_autoptr(GString) cur = g_string_new(NULL);
	for (const char *p = s; *p != '\0'; p++) {
		if (g_str_has_prefix(p, "-,-")) {
			g_ptr_array_add(out, g_strdup(cur->str));
			g_string_truncate(cur, 0);
			p += 2;
		} else if (p[0] == ',' && p[1] == ',') {
			g_string_append_c(cur, ',');
			p++;
		} else {
			g_string_append_c(cur, *p);
		}
	}
	if (cur->len > 0)
		g_ptr_array_add(out, g_strdup(cur->str));
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

static char *rc_string(GKeyFile *kf, const char *key, const char *fallback)
{
	char *v = kf != NULL ? g_key_file_get_string(kf, "General", key, NULL) : NULL;
	return v != NULL ? v : g_strdup(fallback);
}

static gboolean rc_bool(GKeyFile *kf, const char *key, gboolean fallback)
{
	g_autofree char *v = rc_string(kf, key, NULL);
	return v == NULL ? fallback : g_ascii_strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0;
}

/* The thumbSize of the database in `dir`: KPhotoAlbum keeps it in the
 * group "Thumbnails - " and its image directory with a '/' (as it was
 * opened: the group whose directory is `dir` once resolved). */
static int rc_thumb_size(GKeyFile *kf, const char *dir)
{
	g_auto(GStrv) groups = kf != NULL ? g_key_file_get_groups(kf, NULL) : NULL;
	for (int i = 0; groups != NULL && groups[i] != NULL; i++) {
		if (!g_str_has_prefix(groups[i], "Thumbnails - /"))
			continue;
		char *real = realpath(groups[i] + strlen("Thumbnails - "), NULL);
		gboolean is_ours = real != NULL && strcmp(real, dir) == 0;
		free(real);
		g_autoptr(GError) error = NULL;
		int size = is_ours ? g_key_file_get_integer(kf, groups[i], "thumbSize", &error) : 0;
		/* its bounds (minimumThumbnailSize, maximumThumbnailSize) */
		if (is_ours && error == NULL)
			return CLAMP(size, 32, 4096);
	}
	return PIX_KPA_THUMB_DEFAULT_SIZE;
}

/* KPhotoAlbum's [General] settings, from $XDG_CONFIG_HOME/kphotoalbumrc,
 * with its defaults where a key (or the file) is absent; and the
 * thumbnail size of the database in `dir`. */
static void read_settings(Settings *s, const char *dir)
{
	g_autofree char *config = pix_xdg_dir(g_get_user_config_dir(), ".config");
	g_autofree char *path = g_build_filename(config, "kphotoalbumrc", NULL);
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error = NULL;

	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &error)) {
		if (!g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
			g_autofree char *q = pix_quote(path);
			pix_notice("cannot read '%s' (%s): KPhotoAlbum's default settings are used", q, error->message);
		}
		g_clear_pointer(&kf, g_key_file_unref);
	}
	s->untagged_category = rc_string(kf, "untaggedCategory", "Events");
	s->untagged_tag = rc_string(kf, "untaggedTag", "untagged");
	if (s->untagged_category[0] == '\0' || s->untagged_tag[0] == '\0') {
		g_clear_pointer(&s->untagged_category, g_free);
		g_clear_pointer(&s->untagged_tag, g_free);
	}
	g_autofree char *excludes = rc_string(kf, "excludeDirectories", "xml,ThumbNails,.thumbs");
	s->excludes = g_strsplit(excludes, ",", -1);
	s->is_skip_raw = rc_bool(kf, "skipRawIfOtherMatches", FALSE);
	s->is_exif_comments = rc_bool(kf, "useEXIFComments", TRUE);
	if (rc_bool(kf, "stripEXIFComments", TRUE)) {
		g_autofree char *strip = rc_string(kf, "commentsToStrip",
		                                   "Exif_JPEG_PICTURE-,-OLYMPUS DIGITAL CAMERA-,-JENOPTIK DIGITAL CAMERA-,-");
		s->comments_to_strip = split_comments(strip);
		/* compared with trimmed descriptions */
		for (char **e = s->comments_to_strip; *e != NULL; e++)
			g_strstrip(*e);
	}
	s->thumb_size = rc_thumb_size(kf, dir);
}

/* The description KPhotoAlbum gives a new image from its EXIF
 * ImageDescription (DB::FileInfo): control characters removed, a
 * camera's boilerplate dropped, trimmed; NULL for none. */
static char *kpa_description(const Settings *s, const char *text)
{
	if (text == NULL || !s->is_exif_comments || !g_utf8_validate(text, -1, NULL))
		return NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if (g_unichar_type(c) != G_UNICODE_CONTROL && c != 0xFFFE && c != 0xFFFF)
			g_string_append_unichar(out, c);
	}
	g_strstrip(out->str);
	if (s->comments_to_strip != NULL && g_strv_contains((const char *const *)s->comments_to_strip, out->str))
		return NULL;
	return out->str[0] != '\0' ? g_strdup(out->str) : NULL;
}

/* --- dates, angles --- */

/* KPhotoAlbum's angle for an EXIF orientation (DB::FileInfo::
 * orientationToAngle): the mirrored ones count as their rotation. */
static int angle_of(gint64 orientation)
{
	switch (orientation) {
	case 3: case 4: return 180;
	case 5: case 8: return 270;
	case 6: case 7: return 90;
	default: return 0;
	}
}

static void format_local(GDateTime *t, char out[KPA_DATE_LEN])
{
	g_autofree char *s = g_date_time_format(t, "%Y-%m-%dT%H:%M:%S");
	g_strlcpy(out, s, KPA_DATE_LEN);
}

/*
 * startDate and endDate from the catalog's date_taken: the camera's local
 * time as it is, KPhotoAlbum's way (it drops the zone and the fraction of
 * a second); a movie header's time, which is UTC when no zone came with
 * it, in this machine's local time (as KPhotoAlbum shows file times); a
 * date without its time of day ("YYYY", "YYYY-MM", "YYYY-MM-DD") as the
 * fuzzy date that spans it.  FALSE when `taken` is none of these.
 */
static gboolean dates_from_taken(const char *taken, const char *tz, const char *source, char start[KPA_DATE_LEN],
                                 char end[KPA_DATE_LEN])
{
	size_t len = strlen(taken);
	int year = len >= 4 ? pix_meta_digits(taken, 4) : -1;
	int month = len >= 7 && taken[4] == '-' ? pix_meta_digits(taken + 5, 2) : -1;
	int day = len >= 10 && taken[7] == '-' ? pix_meta_digits(taken + 8, 2) : -1;

	end[0] = '\0';
	if (year < 1 || (len >= 7 && (month < 1 || month > 12)) ||
	    (len >= 10 && (day < 1 || day > g_date_get_days_in_month(month, year))))
		return FALSE;
	if (len == 4 || len == 7 || len == 10) {
		int last_month = len == 4 ? 12 : month;
		g_snprintf(start, KPA_DATE_LEN, "%04d-%02d-%02dT00:00:00", year, len == 4 ? 1 : month,
		           len == 10 ? day : 1);
		g_snprintf(end, KPA_DATE_LEN, "%04d-%02d-%02dT23:59:59", year, last_month,
		           len == 10 ? day : g_date_get_days_in_month(last_month, year));
		return TRUE;
	}
	if (len < 19 || taken[10] != 'T' || taken[13] != ':' || taken[16] != ':' || pix_meta_digits(taken + 11, 2) < 0 ||
	    pix_meta_digits(taken + 14, 2) < 0 || pix_meta_digits(taken + 17, 2) < 0)
		return FALSE;
	if (tz == NULL && source != NULL && strcmp(source, "QuickTime CreateDate") == 0) {
		g_autoptr(GDateTime) utc = g_date_time_new_utc(year, month, day, pix_meta_digits(taken + 11, 2),
		                                                pix_meta_digits(taken + 14, 2), pix_meta_digits(taken + 17, 2));
		if (utc == NULL)
			return FALSE;
		g_autoptr(GDateTime) local = g_date_time_to_local(utc);
		format_local(local, start);
		return TRUE;
	}
	g_strlcpy(start, taken, KPA_DATE_LEN);
	return TRUE;
}

/* A file without a date of its own: its modification time in local time,
 * as KPhotoAlbum dates it with its default "trust time stamps: always". */
static void date_from_mtime(gint64 mtime_ns, char start[KPA_DATE_LEN])
{
	gint64 s = mtime_ns / G_GINT64_CONSTANT(1000000000);
	if (mtime_ns < 0 && mtime_ns % G_GINT64_CONSTANT(1000000000) != 0)
		s--;
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(s);
	start[0] = '\0';
	if (t != NULL)
		format_local(t, start);
}

/* GPSTimeStamp as KPhotoAlbum stores it: hours + minutes/60 + seconds/3600
 * of the catalog's gps_time ("...THH:MM:SS[.f]Z" or "HH:MM:SS[.f]"). */
static double gps_hours(const char *gps_time)
{
	if (gps_time == NULL)
		return NAN;
	const char *t = strchr(gps_time, 'T');
	t = t != NULL ? t + 1 : gps_time;
	int h = strlen(t) >= 8 ? pix_meta_digits(t, 2) : -1, m = h >= 0 ? pix_meta_digits(t + 3, 2) : -1;
	double s = m >= 0 ? g_ascii_strtod(t + 6, NULL) : -1;
	return h < 0 || m < 0 || s < 0 ? NAN : h + m / 60.0 + s / 3600.0;
}

/* --- the catalog's files --- */

/* Whether a component of `rel` is KPhotoAlbum's own CategoryImages
 * folder, which its search for new images never enters. */
static gboolean is_in_category_images(const char *rel)
{
	g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
	for (int i = 0; parts[i + 1] != NULL; i++)
		if (strcmp(parts[i], "CategoryImages") == 0)
			return TRUE;
	return FALSE;
}

/* `path` relative to `dir`, or NULL when it is not strictly below it. */
static const char *rel_of(const char *dir, const char *path)
{
	if (path == NULL || !pix_path_is_under(path, dir) || strcmp(path, dir) == 0)
		return NULL;
	return path + strlen(dir) + (strcmp(dir, "/") == 0 ? 0 : 1);
}

static void skip(Collect *c, const char *path, const char *why)
{
	g_autofree char *q = pix_quote(path);
	pix_warn("cannot export '%s' to KPhotoAlbum: %s (skipping)", q, why);
	c->out->n_skipped++;
}

static gboolean on_record(gpointer data, const PixRecord *r)
{
	Collect *c = data;
	const char *path = pix_record_text(r, PIX_COL_PATH);
	const char *md5 = pix_record_text(r, PIX_COL_MD5);
	const char *media = pix_record_text(r, PIX_COL_MEDIA);

	const char *rel = rel_of(c->dir, path);
	if (rel == NULL || (c->wanted != NULL && !g_hash_table_contains(c->wanted, path)))
		return TRUE;
	if (r->v[PIX_COL_PATH].type == PIX_VAL_BYTES || !is_xml_text(rel)) {
		skip(c, path, "its name is not UTF-8 text, which index.xml cannot hold");
		return TRUE;
	}
	if (md5 == NULL || strlen(md5) != 32 || strspn(md5, "0123456789abcdef") != 32) {
		skip(c, path, "it has no MD5 (it could not be read)");
		return TRUE;
	}
	if (is_in_category_images(rel)) {
		g_autofree char *q = pix_quote(path);
		pix_info("not exporting '%s': KPhotoAlbum keeps its own images in CategoryImages", q);
		return TRUE;
	}

	Rec e = { .rel = g_strdup(rel), .path = g_strdup(path), .is_video = g_strcmp0(media, "video") == 0,
		  .id = pix_record_int(r, PIX_COL_ID, 0) };
	gint64 rating = pix_record_int(r, PIX_COL_RATING, PIX_RATING_UNKNOWN);
	e.rating = rating >= -1 && rating <= 5 ? (int)rating : PIX_RATING_UNKNOWN;
	g_strlcpy(e.md5, md5, sizeof e.md5);
	const char *taken = pix_record_text(r, PIX_COL_DATE_TAKEN);
	if (taken == NULL ||
	    !dates_from_taken(taken, pix_record_text(r, PIX_COL_DATE_TZ), pix_record_text(r, PIX_COL_DATE_SOURCE),
	                      e.start, e.end))
		date_from_mtime(pix_record_int(r, PIX_COL_MTIME_NS, 0), e.start);
	gint64 orientation = pix_record_int(r, PIX_COL_ORIENTATION, -1);
	e.angle = angle_of(orientation);
	e.orientation = orientation;
	e.width = e.height = -1;
	e.video_length_s = -1;
	if (e.is_video) {
		/* KPhotoAlbum reads the length with ffprobe and keeps whole
		 * seconds, 0 counting as a failure; it gives videos no size. */
		double duration_s = pix_record_real(r, PIX_COL_DURATION_S);
		if (duration_s >= 1.0 && duration_s < G_MAXINT32)
			e.video_length_s = (gint64)duration_s;
	} else {
		e.width = pix_record_int(r, PIX_COL_WIDTH, -1);
		e.height = pix_record_int(r, PIX_COL_HEIGHT, -1);
	}
	e.description = g_strdup(pix_record_text(r, PIX_COL_DESCRIPTION));
	e.exif = (PixKpaExifRow){
		.path = e.path,
		.make = g_strdup(pix_record_text(r, PIX_COL_MAKE)),
		.model = g_strdup(pix_record_text(r, PIX_COL_MODEL)),
		.lens = g_strdup(pix_record_text(r, PIX_COL_LENS)),
		.exposure_s = pix_record_real(r, PIX_COL_EXPOSURE_S),
		.fnumber = pix_record_real(r, PIX_COL_FNUMBER),
		.focal_mm = pix_record_real(r, PIX_COL_FOCAL_MM),
		.iso = pix_record_int(r, PIX_COL_ISO, -1),
		.orientation = orientation,
		.gps_lat = pix_record_real(r, PIX_COL_GPS_LAT),
		.gps_lon = pix_record_real(r, PIX_COL_GPS_LON),
		.gps_alt_m = pix_record_real(r, PIX_COL_GPS_ALT_M),
		.aperture = pix_record_real(r, PIX_COL_APERTURE),
		.flash = pix_record_int(r, PIX_COL_FLASH, -1),
		.metering_mode = pix_record_int(r, PIX_COL_METERING_MODE, -1),
		.exposure_program = pix_record_int(r, PIX_COL_EXPOSURE_PROGRAM, -1),
		.gps_direction = pix_record_real(r, PIX_COL_GPS_DIRECTION),
		.gps_time_h = gps_hours(pix_record_text(r, PIX_COL_GPS_TIME)),
	};
	g_array_append_val(c->recs, e);
	return TRUE;
}

/* A keyword level or person of a file being exported (the others, of
 * files not exported, are passed over). */
static gboolean on_tag_row(gpointer data, const PixTagRow *t)
{
	Collect *c = data;
	guint at = GPOINTER_TO_UINT(g_hash_table_lookup(c->by_id, &t->file_id));
	if (at == 0 || !is_xml_text(t->name))
		return TRUE;
	Rec *r = &g_array_index(c->recs, Rec, at - 1);
	if (!t->is_person) {
		if (r->keywords == NULL) {
			r->keywords = g_array_new(FALSE, TRUE, sizeof(Keyword));
			g_array_set_clear_func(r->keywords, keyword_clear);
		}
		/* by ord: the rows come in order, each parent before its children */
		if (t->ord != (gint64)r->keywords->len)
			return TRUE;
		Keyword k = { g_strdup(t->name), t->parent_ord, t->is_assigned };
		g_array_append_val(r->keywords, k);
		return TRUE;
	}
	if (r->people == NULL) {
		r->people = g_array_new(FALSE, TRUE, sizeof(Person));
		g_array_set_clear_func(r->people, person_clear);
	}
	Person p = { g_strdup(t->name), g_strdup(t->type), t->has_area, t->x, t->y, t->w, t->h };
	g_array_append_val(r->people, p);
	return TRUE;
}

/* What to ask the catalog: `filter` at or below `paths`, present files
 * (or those in error) and offline ones, of the kinds KPhotoAlbum shows. */
static PixFilter export_filter(const PixFilter *filter, char **paths)
{
	PixFilter f = { 0 };
	guint kinds = (1u << PIX_MEDIA_IMAGE) | (1u << PIX_MEDIA_RAW) | (1u << PIX_MEDIA_VIDEO);

	if (filter != NULL)
		f = *filter;
	f.paths = paths;
	f.media_mask = f.media_mask != 0 ? f.media_mask & kinds : kinds;
	if (f.show != PIX_SHOW_ERRORS)
		f.show = PIX_SHOW_PRESENT;
	/* a disk of the library unplugged at export time keeps its images
	 * in index.xml: KPhotoAlbum shows them until it is back */
	f.is_offline = TRUE;
	return f;
}

/* --- the index --- */

static void set_file_error(GError **error, int err, const char *what, const char *path)
{
	g_autofree char *q = pix_quote(path);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s '%s': %s", what, q, g_strerror(err));
}

/* The document KPhotoAlbum starts a new database from (its default-setup:
 * People, Places, Events with the tag "untagged"), as 5.9 writes it. */
static const char new_index_xml[] =
    "<KPhotoAlbum version=\"8\" compressed=\"1\">\n"
    "<Categories>\n"
    "<Category name=\"People\" icon=\"system-users\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"1\"/>\n"
    "<Category name=\"Places\" icon=\"applications-internet\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"0\"/>\n"
    "<Category name=\"Events\" icon=\"favorites\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"0\">\n"
    "<value value=\"untagged\" id=\"1\"/>\n"
    "</Category>\n"
    "</Categories>\n"
    "<images/>\n"
    "<blocklist/>\n"
    "</KPhotoAlbum>\n";

static gboolean refuse(GError **error, const char *xml_path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean refuse(GError **error, const char *xml_path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_autofree char *q = pix_quote(xml_path);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "cannot merge into '%s': %s; nothing was written", q, why);
	return FALSE;
}

/* The structure of a parsed index (root, Categories, images, blocklist,
 * in KPhotoAlbum's order), its version and format, its files; FALSE with
 * `error` (naming `xml_path`) when it is not one KPhotoAlbum 5.x writes. */
static gboolean index_open(Index *ix, const char *xml_path, GError **error)
{
	PixXmlNode *root = ix->root;
	if (strcmp(root->name, "KPhotoAlbum") != 0)
		return refuse(error, xml_path, "its document element is <%s>, not <KPhotoAlbum>", root->name);
	const char *version = pix_xml_get(root, "version");
	ix->version = version != NULL ? atoi(version) : 1;
	if (ix->version > KPA_MAX_VERSION)
		return refuse(error, xml_path,
		              "it is in format %d (KPhotoAlbum 6.1 or later), which names categories in a way photoidx "
		              "does not write; formats up to %d are merged", ix->version, KPA_MAX_VERSION);
	const char *compressed = pix_xml_get(root, "compressed");
	ix->is_compressed = compressed != NULL && atoi(compressed) != 0;
	guint n_elements = 0;
	for (guint i = 0; i < root->children->len; i++) {
		PixXmlNode *c = root->children->pdata[i];
		if (c->kind == PIX_XML_TEXT)
			return refuse(error, xml_path, "it has text in <KPhotoAlbum>, which KPhotoAlbum refuses");
		if (c->kind != PIX_XML_ELEMENT)
			continue;
		if (n_elements == 0 && strcmp(c->name, "Categories") == 0)
			ix->categories = c;
		else if (n_elements == 1 && strcmp(c->name, "images") == 0)
			ix->images = c;
		n_elements++;
	}
	if (ix->categories == NULL || ix->images == NULL)
		return refuse(error, xml_path, "it does not begin with <Categories> and <images>, as KPhotoAlbum requires");
	ix->by_file = g_hash_table_new(g_str_hash, g_str_equal);
	ix->blocked = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < ix->images->children->len; i++) {
		PixXmlNode *e = ix->images->children->pdata[i];
		if (e->kind != PIX_XML_ELEMENT)
			continue;
		const char *file = strcmp(e->name, "image") == 0 ? pix_xml_get(e, "file") : NULL;
		if (file == NULL)
			return refuse(error, xml_path, "<images> holds a <%s> without a file", e->name);
		if (!g_hash_table_contains(ix->by_file, file))
			g_hash_table_insert(ix->by_file, (gpointer)file, e);
		ix->n_old_images++;
	}
	PixXmlNode *blocklist = pix_xml_child(root, "blocklist");
	for (guint i = 0; blocklist != NULL && i < blocklist->children->len; i++) {
		PixXmlNode *b = blocklist->children->pdata[i];
		const char *file = b->kind == PIX_XML_ELEMENT ? pix_xml_get(b, "file") : NULL;
		if (file != NULL && file[0] != '\0')
			g_hash_table_add(ix->blocked, (gpointer)file);
	}
	return TRUE;
}

/* Reads DIR/index.xml, or starts a new one when there is none or
 * `is_force`. */
static gboolean index_load(Index *ix, const char *xml_path, gboolean is_force, GError **error)
{
	g_autoptr(GError) local = NULL;
	struct stat st;
	gboolean exists = lstat(xml_path, &st) == 0;

	/* a symbolic link (or anything but a file) is not read: with --force
	 * it is replaced by the new index, as a link planted there must be */
	if (exists && !S_ISREG(st.st_mode) && !is_force)
		return refuse(error, xml_path, "it is not a regular file (a symbolic link is not followed)");
	if (exists && !S_ISREG(st.st_mode))
		exists = FALSE, errno = ENOENT;
	if (exists && st.st_size > MAX_INDEX_BYTES)
		return refuse(error, xml_path, "it is larger than %u MiB", MAX_INDEX_BYTES >> 20);
	if (exists && !g_file_get_contents(xml_path, &ix->old_bytes, &ix->old_len, &local))
		return refuse(error, xml_path, "%s", local->message);
	if (!exists && errno != ENOENT) {
		set_file_error(error, errno, "cannot read", xml_path);
		return FALSE;
	}
	if (exists && !is_force) {
		ix->root = pix_xml_parse(ix->old_bytes, ix->old_len, MAX_DEPTH, &local);
		if (ix->root == NULL)
			return refuse(error, xml_path, "it is not well-formed XML (%s)", local->message);
	} else {
		ix->root = pix_xml_parse(new_index_xml, sizeof new_index_xml - 1, MAX_DEPTH, NULL);
		g_assert(ix->root != NULL);
	}
	return index_open(ix, xml_path, error);
}

/* A category's name as an attribute name of the compressed format
 * (FileWriter::escape, up to format 10): a character outside
 * [A-Za-z0-9:_] as "_." and its Latin-1 byte in hex ("3f" beyond
 * Latin-1), lowercase up to 5.11, uppercase from format 10. */
static char *compressed_name(const char *name, int version)
{
	g_autoptr(GString) out = g_string_new(NULL);
	for (const char *p = name; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if (c < 0x80 && (g_ascii_isalnum((char)c) || c == ':' || c == '_'))
			g_string_append_c(out, (char)c);
		else
			g_string_append_printf(out, version >= 10 ? "_.%02X" : "_.%02x", c < 0x100 ? c : 0x3f);
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static PixXmlNode *find_category(const Index *ix, const char *name, gboolean is_readable_name)
{
	for (guint i = 0; i < ix->categories->children->len; i++) {
		PixXmlNode *c = ix->categories->children->pdata[i];
		const char *n = c->kind == PIX_XML_ELEMENT ? pix_xml_get(c, "name") : NULL;
		if (n == NULL)
			continue;
		/* the readable format's names are read with every '_' a space */
		g_autofree char *read = is_readable_name ? g_strdelimit(g_strdup(n), "_", ' ') : g_strdup(n);
		if (strcmp(read, name) == 0)
			return c;
	}
	return NULL;
}

/* The next free id among a category's values (ids are per category). */
static char *next_value_id(const PixXmlNode *cat)
{
	gint64 max_id = 0;
	for (guint j = 0; j < cat->children->len; j++) {
		const PixXmlNode *v = cat->children->pdata[j];
		const char *id = v->kind == PIX_XML_ELEMENT ? pix_xml_get(v, "id") : NULL;
		max_id = MAX(max_id, id != NULL ? g_ascii_strtoll(id, NULL, 10) : 0);
	}
	return g_strdup_printf("%" G_GINT64_FORMAT, max_id + 1);
}

/*
 * The tag new images get and its id, as KPhotoAlbum would give it: the
 * value marked "mark-untagged" (format 9 and later), else the settings'
 * category and tag.  The tag is declared in its category when missing
 * (KPhotoAlbum refuses to start without it), and the category made when
 * it is missing too.  Returns the id (owned), or NULL without a tag.
 */
static char *untagged_id(Index *ix, const Settings *s)
{
	const char *category = s->untagged_category, *tag = s->untagged_tag;
	PixXmlNode *cat = NULL, *value = NULL;

	for (guint i = 0; ix->version >= 9 && i < ix->categories->children->len && value == NULL; i++) {
		PixXmlNode *c = ix->categories->children->pdata[i];
		for (guint j = 0; c->kind == PIX_XML_ELEMENT && j < c->children->len; j++) {
			PixXmlNode *v = c->children->pdata[j];
			if (v->kind == PIX_XML_ELEMENT && g_strcmp0(pix_xml_get(v, "meta"), "mark-untagged") == 0) {
				cat = c, value = v;
				break;
			}
		}
	}
	if (value == NULL) {
		if (category == NULL)
			return NULL;
		cat = find_category(ix, category, !ix->is_compressed);
		if (cat == NULL) {
			cat = pix_xml_element_new("Category");
			pix_xml_set(cat, "name", category);
			pix_xml_set(cat, "icon", "favorites");
			pix_xml_set(cat, "show", "1");
			pix_xml_set(cat, "viewtype", "0");
			pix_xml_set(cat, "thumbnailsize", "32");
			pix_xml_set(cat, "positionable", "0");
			pix_xml_insert(ix->categories, cat, -1);
		}
		for (guint j = 0; j < cat->children->len && value == NULL; j++) {
			PixXmlNode *v = cat->children->pdata[j];
			if (v->kind == PIX_XML_ELEMENT && g_strcmp0(pix_xml_get(v, "value"), tag) == 0)
				value = v;
		}
		if (value == NULL) {
			value = pix_xml_element_new("value");
			pix_xml_set(value, "value", tag);
			g_autofree char *id = next_value_id(cat);
			pix_xml_set(value, "id", id);
			if (ix->version >= 9)
				pix_xml_set(value, "meta", "mark-untagged");
			pix_xml_insert(cat, value, -1);
		}
	}
	ix->untagged_category = g_strdup(pix_xml_get(cat, "name"));
	ix->untagged_tag = g_strdup(pix_xml_get(value, "value"));
	const char *id = pix_xml_get(value, "id");
	if (id == NULL || g_ascii_strtoll(id, NULL, 10) <= 0) {
		/* an id is what the compressed format refers to it by */
		g_autofree char *new_id = next_value_id(cat);
		pix_xml_set(value, "id", new_id);
		id = pix_xml_get(value, "id");
	}
	return g_strdup(id);
}

static void set_int(PixXmlNode *e, const char *name, gint64 v)
{
	char buf[24];
	g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, v);
	pix_xml_set(e, name, buf);
}

/* width and height as KPhotoAlbum stores them: the image as displayed,
 * transposed for a quarter turn. */
static void set_size(PixXmlNode *e, const Rec *r, int angle)
{
	gboolean is_turned = angle == 90 || angle == 270;
	set_int(e, "width", is_turned ? r->height : r->width);
	set_int(e, "height", is_turned ? r->width : r->height);
}

/* A new <image>, attributes in the order KPhotoAlbum writes them. */
static PixXmlNode *new_image(const Index *ix, const Rec *r, const Settings *s, const char *untagged)
{
	PixXmlNode *e = pix_xml_element_new("image");
	pix_xml_set(e, "file", r->rel);
	g_autofree char *description = kpa_description(s, r->description);
	if (description != NULL && is_xml_text(description))
		pix_xml_set(e, "description", description);
	pix_xml_set(e, "startDate", r->start);
	if (r->end[0] != '\0')
		pix_xml_set(e, "endDate", r->end);
	if (r->angle != 0)
		set_int(e, "angle", r->angle);
	pix_xml_set(e, "md5sum", r->md5);
	set_size(e, r, r->angle);
	if (r->is_video)
		set_int(e, "videoLength", r->video_length_s);
	if (untagged == NULL)
		return e;
	if (ix->is_compressed) {
		g_autofree char *name = compressed_name(ix->untagged_category, ix->version);
		pix_xml_set(e, name, untagged);
	} else {
		PixXmlNode *options = pix_xml_element_new("options");
		PixXmlNode *option = pix_xml_element_new("option");
		g_autofree char *name = g_strdelimit(g_strdup(ix->untagged_category), " ", '_');
		pix_xml_set(option, "name", name);
		PixXmlNode *value = pix_xml_element_new("value");
		pix_xml_set(value, "value", ix->untagged_tag);
		pix_xml_insert(option, value, -1);
		pix_xml_insert(options, option, -1);
		pix_xml_insert(e, options, -1);
	}
	return e;
}

/* --- the photographer's metadata, as KPhotoAlbum's tags --- */

/* The attributes of an <image> that are not a category's tags. */
static const char *const image_attrs[] = {
	"file", "label", "description", "startDate", "endDate", "yearFrom", "monthFrom", "dayFrom", "hourFrom",
	"minuteFrom", "secondFrom", "yearTo", "monthTo", "dayTo", "angle", "md5sum", "width", "height", "rating",
	"stackId", "stackOrder", "videoLength", NULL
};

/* A category (made when missing: KPhotoAlbum's settings for a new one,
 * positionable for People). */
static PixXmlNode *category(Index *ix, const char *name, const char *icon, gboolean is_positionable)
{
	PixXmlNode *cat = find_category(ix, name, !ix->is_compressed);
	if (cat != NULL)
		return cat;
	cat = pix_xml_element_new("Category");
	pix_xml_set(cat, "name", name);
	pix_xml_set(cat, "icon", icon);
	pix_xml_set(cat, "show", "1");
	pix_xml_set(cat, "viewtype", "0");
	pix_xml_set(cat, "thumbnailsize", "32");
	pix_xml_set(cat, "positionable", is_positionable ? "1" : "0");
	pix_xml_insert(ix->categories, cat, -1);
	return cat;
}

/* The id of tag `name` in category `cat`, the tag declared when missing
 * (an id given to a tag that has none: the compressed format refers to
 * tags, and member groups to members, by id). */
static char *tag_id(PixXmlNode *cat, const char *name)
{
	PixXmlNode *value = NULL;
	for (guint j = 0; j < cat->children->len && value == NULL; j++) {
		PixXmlNode *v = cat->children->pdata[j];
		if (v->kind == PIX_XML_ELEMENT && g_strcmp0(pix_xml_get(v, "value"), name) == 0)
			value = v;
	}
	if (value == NULL) {
		value = pix_xml_element_new("value");
		pix_xml_set(value, "value", name);
		pix_xml_insert(cat, value, -1);
	}
	const char *id = pix_xml_get(value, "id");
	if (id == NULL || g_ascii_strtoll(id, NULL, 10) <= 0) {
		g_autofree char *new_id = next_value_id(cat);
		pix_xml_set(value, "id", new_id);
	}
	return g_strdup(pix_xml_get(value, "id"));
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* `list` ("3,12,5") with `id` added, sorted as KPhotoAlbum sorts it (as
 * text); NULL when it was there already (transfer full). */
static char *id_list_with(const char *list, const char *id)
{
	g_auto(GStrv) ids = g_strsplit(list != NULL ? list : "", ",", -1);
	g_autoptr(GPtrArray) all = g_ptr_array_new();
	for (guint i = 0; ids[i] != NULL; i++) {
		if (ids[i][0] == '\0')
			continue;
		if (strcmp(ids[i], id) == 0)
			return NULL;
		g_ptr_array_add(all, ids[i]);
	}
	g_ptr_array_add(all, (gpointer)id);
	g_ptr_array_sort(all, compare_strings);
	g_ptr_array_add(all, NULL);
	return g_strjoinv(",", (char **)all->pdata);
}

/* The <option> of category `name` in image `e`'s <options>, made when
 * missing; its name as the format spells it. */
static PixXmlNode *option_of(const Index *ix, PixXmlNode *e, const char *name)
{
	g_autofree char *spelled = ix->is_compressed ? g_strdup(name) : g_strdelimit(g_strdup(name), " ", '_');
	PixXmlNode *options = pix_xml_child(e, "options");
	if (options == NULL) {
		options = pix_xml_element_new("options");
		pix_xml_insert(e, options, -1);
	}
	for (guint i = 0; i < options->children->len; i++) {
		PixXmlNode *o = options->children->pdata[i];
		if (o->kind == PIX_XML_ELEMENT && g_strcmp0(pix_xml_get(o, "name"), spelled) == 0)
			return o;
	}
	PixXmlNode *o = pix_xml_element_new("option");
	pix_xml_set(o, "name", spelled);
	pix_xml_insert(options, o, -1);
	return o;
}

/* Whether image `e` has tag `name` of category `cat` (by id or in its
 * options). */
static gboolean has_tag(const Index *ix, PixXmlNode *e, PixXmlNode *cat, const char *name, const char *id)
{
	const char *cat_name = pix_xml_get(cat, "name");
	if (ix->is_compressed) {
		g_autofree char *attr = compressed_name(cat_name, ix->version);
		g_auto(GStrv) ids = g_strsplit(pix_xml_get(e, attr) != NULL ? pix_xml_get(e, attr) : "", ",", -1);
		if (g_strv_contains((const char *const *)ids, id))
			return TRUE;
	}
	g_autofree char *spelled = ix->is_compressed ? g_strdup(cat_name) : g_strdelimit(g_strdup(cat_name), " ", '_');
	PixXmlNode *options = pix_xml_child(e, "options");
	for (guint i = 0; options != NULL && i < options->children->len; i++) {
		PixXmlNode *o = options->children->pdata[i];
		if (o->kind != PIX_XML_ELEMENT || g_strcmp0(pix_xml_get(o, "name"), spelled) != 0)
			continue;
		for (guint j = 0; j < o->children->len; j++) {
			PixXmlNode *v = o->children->pdata[j];
			if (v->kind == PIX_XML_ELEMENT && g_strcmp0(pix_xml_get(v, "value"), name) == 0)
				return TRUE;
		}
	}
	return FALSE;
}

/* Tags image `e` with `name` of category `cat`, with an area ("x y w h"
 * in pixels of the image as shown; NULL: none), as the format writes it:
 * the compressed format's id list (an area, which it cannot hold, in
 * <options>), the readable format's <options>.  FALSE when it had it. */
static gboolean add_tag(const Index *ix, PixXmlNode *e, PixXmlNode *cat, const char *name, const char *area)
{
	g_autofree char *id = tag_id(cat, name);
	if (has_tag(ix, e, cat, name, id))
		return FALSE;
	const char *cat_name = pix_xml_get(cat, "name");
	if (ix->is_compressed && area == NULL) {
		g_autofree char *attr = compressed_name(cat_name, ix->version);
		g_autofree char *list = id_list_with(pix_xml_get(e, attr), id);
		pix_xml_set(e, attr, list);
		return TRUE;
	}
	PixXmlNode *v = pix_xml_element_new("value");
	pix_xml_set(v, "value", name);
	if (area != NULL)
		pix_xml_set(v, "area", area);
	pix_xml_insert(option_of(ix, e, cat_name), v, -1);
	return TRUE;
}

/* The index's <member-groups>, made when missing: after <blocklist> (or
 * <images>), where KPhotoAlbum reads it. */
static PixXmlNode *member_groups(Index *ix)
{
	PixXmlNode *root = ix->images->parent;
	PixXmlNode *groups = pix_xml_child(root, "member-groups");
	if (groups != NULL)
		return groups;
	PixXmlNode *after = pix_xml_child(root, "blocklist");
	if (after == NULL)
		after = ix->images;
	gint at = 0;
	for (guint i = 0; i < root->children->len; i++)
		if (root->children->pdata[i] == after)
			at = (gint)i + 1;
	groups = pix_xml_element_new("member-groups");
	pix_xml_insert(root, groups, at);
	return groups;
}

/* Member `member` of group `group` in category `cat` (KPhotoAlbum's
 * hierarchy of tags); TRUE when it was not there. */
static gboolean add_member(Index *ix, PixXmlNode *cat, const char *group, const char *member)
{
	const char *cat_name = pix_xml_get(cat, "name");
	g_free(tag_id(cat, group));     /* a group is a tag of its category too */
	g_autofree char *member_id = tag_id(cat, member);
	PixXmlNode *groups = member_groups(ix);
	for (guint i = 0; i < groups->children->len; i++) {
		PixXmlNode *m = groups->children->pdata[i];
		if (m->kind != PIX_XML_ELEMENT || g_strcmp0(pix_xml_get(m, "category"), cat_name) != 0 ||
		    g_strcmp0(pix_xml_get(m, "group-name"), group) != 0)
			continue;
		if (g_strcmp0(pix_xml_get(m, "member"), member) == 0)
			return FALSE;
		if (ix->is_compressed && pix_xml_get(m, "member") == NULL) {
			g_autofree char *list = id_list_with(pix_xml_get(m, "members"), member_id);
			if (list == NULL)
				return FALSE;
			pix_xml_set(m, "members", list);
			return TRUE;
		}
	}
	PixXmlNode *m = pix_xml_element_new("member");
	pix_xml_set(m, "category", cat_name);
	pix_xml_set(m, "group-name", group);
	pix_xml_set(m, ix->is_compressed ? "members" : "member", ix->is_compressed ? member_id : member);
	pix_xml_insert(groups, m, -1);
	return TRUE;
}

/* Whether image `e` carries no tag but the untagged one (and no rating):
 * one KPhotoAlbum added and nobody annotated. */
static gboolean is_untagged_only(const Index *ix, const PixXmlNode *e, const char *untagged)
{
	if (pix_xml_get(e, "rating") != NULL)
		return FALSE;
	g_autofree char *untagged_attr = ix->untagged_category != NULL
	                                 ? compressed_name(ix->untagged_category, ix->version) : NULL;
	for (guint i = 0; i < e->attrs->len; i += 2) {
		const char *name = e->attrs->pdata[i], *value = e->attrs->pdata[i + 1];
		if (g_strv_contains(image_attrs, name))
			continue;
		if (!ix->is_compressed || untagged == NULL || g_strcmp0(name, untagged_attr) != 0 ||
		    g_strcmp0(value, untagged) != 0)
			return FALSE;
	}
	g_autofree char *readable = ix->untagged_category != NULL
	                            ? g_strdelimit(g_strdup(ix->untagged_category), " ", '_') : NULL;
	PixXmlNode *options = pix_xml_child(e, "options");
	for (guint i = 0; options != NULL && i < options->children->len; i++) {
		PixXmlNode *o = options->children->pdata[i];
		for (guint j = 0; o->kind == PIX_XML_ELEMENT && j < o->children->len; j++) {
			PixXmlNode *v = o->children->pdata[j];
			if (v->kind == PIX_XML_ELEMENT &&
			    (g_strcmp0(pix_xml_get(o, "name"), ix->is_compressed ? ix->untagged_category : readable) != 0 ||
			     g_strcmp0(pix_xml_get(v, "value"), ix->untagged_tag) != 0))
				return FALSE;
		}
	}
	return TRUE;
}

/* A person's area in pixels of image `e` as KPhotoAlbum shows it ("x y w
 * h"), or NULL: when the image's size is unknown, or KPhotoAlbum turns it
 * otherwise than EXIF does (a user's angle, or a mirrored orientation,
 * which KPhotoAlbum shows unmirrored). */
static char *area_of(const PixXmlNode *e, const Rec *r, const Person *p)
{
	const char *angle_attr = pix_xml_get(e, "angle");
	int angle = angle_attr != NULL ? atoi(angle_attr) : 0;
	gint64 w = pix_xml_get(e, "width") != NULL ? g_ascii_strtoll(pix_xml_get(e, "width"), NULL, 10) : -1;
	gint64 h = pix_xml_get(e, "height") != NULL ? g_ascii_strtoll(pix_xml_get(e, "height"), NULL, 10) : -1;
	gboolean is_mirrored = r->orientation == 2 || r->orientation == 4 || r->orientation == 5 || r->orientation == 7;
	if (!p->has_area || w <= 0 || h <= 0 || angle != r->angle || is_mirrored)
		return NULL;
	gint64 x = (gint64)llround(p->x * (double)w), y = (gint64)llround(p->y * (double)h);
	gint64 aw = MAX(1, (gint64)llround(p->w * (double)w)), ah = MAX(1, (gint64)llround(p->h * (double)h));
	x = CLAMP(x, 0, w - 1);
	y = CLAMP(y, 0, h - 1);
	return g_strdup_printf("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, x, y,
	                       MIN(aw, w - x), MIN(ah, h - y));
}

/* What the tagging of one image needs. */
typedef struct {
	Index *ix;
	const char *keywords_name; /* the keywords' category */
	PixKpaExport *out;
} Tagger;

/*
 * Gives image `e` the file's keywords (the levels it names itself, into
 * the keywords' category, the hierarchies as member groups), people (the
 * named faces and names, into People, with their areas where it is
 * positionable) and rating (KPhotoAlbum's 0..10, two per star; none for
 * unrated and rejected), where the image lacks them.
 */
static void tag_image(Tagger *t, PixXmlNode *e, const Rec *r)
{
	gboolean is_tagged = FALSE;
	for (guint i = 0; r->keywords != NULL && i < r->keywords->len; i++) {
		const Keyword *k = &g_array_index(r->keywords, Keyword, i);
		PixXmlNode *cat = category(t->ix, t->keywords_name, "tag", FALSE);
		if (k->is_assigned)
			is_tagged |= add_tag(t->ix, e, cat, k->name, NULL);
		if (k->parent_ord >= 0 && k->parent_ord < (gint64)i) {
			const Keyword *parent = &g_array_index(r->keywords, Keyword, k->parent_ord);
			if (strcmp(parent->name, k->name) != 0 && add_member(t->ix, cat, parent->name, k->name))
				t->out->n_groups++;
		}
	}
	for (guint i = 0; r->people != NULL && i < r->people->len; i++) {
		const Person *p = &g_array_index(r->people, Person, i);
		if (p->type != NULL && g_ascii_strcasecmp(p->type, "Face") != 0)
			continue;       /* a pet, a focus or bar code region */
		PixXmlNode *cat = category(t->ix, "People", "system-users", TRUE);
		const char *positionable = pix_xml_get(cat, "positionable");
		g_autofree char *area = positionable != NULL && atoi(positionable) != 0 ? area_of(e, r, p) : NULL;
		is_tagged |= add_tag(t->ix, e, cat, p->name, area);
	}
	if (r->rating >= 1 && r->rating <= 5 && pix_xml_get(e, "rating") == NULL) {
		char v[4];
		g_snprintf(v, sizeof v, "%d", 2 * r->rating);
		pix_xml_set(e, "rating", v);
		is_tagged = TRUE;
	}
	if (is_tagged)
		t->out->n_tagged++;
}

/* KPhotoAlbum's default label: the name without its last extension
 * (QFileInfo::completeBaseName()). */
static char *default_label(const char *rel)
{
	const char *name = strrchr(rel, '/');
	name = name != NULL ? name + 1 : rel;
	const char *dot = strrchr(name, '.');
	return dot != NULL && dot != name ? g_strndup(name, (gsize)(dot - name)) : g_strdup(name);
}

/* --- the merge --- */

static const char *const raw_extensions[] = {
	"bay", "bmq", "cr2", "crw", "cs1", "dc2", "dcr", "dng", "erf", "fff", "hdr", "k25", "kdc", "mdc", "mos",
	"mrw", "nef", "orf", "pef", "pxn", "raf", "raw", "rdc", "sr2", "srf", "x3f", "arw", "3fr", "cine", "ia",
	"kc2", "mef", "nrw", "qtk", "rw2", "sti", "rwl", "srw", "drf", "dsc", "ptx", "cap", "iiq", "rwz", NULL
};
static const char *const standard_extensions[] = { "jpg", "JPG", "jpeg", "JPEG", "tif", "TIF", "tiff", "TIFF",
	                                           "png", "PNG", NULL };

/* Whether KPhotoAlbum's search for new images, with these settings, skips
 * `r`: a name in excludeDirectories on its path, or (skipRawIfOtherMatches)
 * a RAW file beside a JPEG, TIFF or PNG of the same name. */
static gboolean is_excluded(const Settings *s, const char *dir, const Rec *r)
{
	g_auto(GStrv) parts = g_strsplit(r->rel, "/", -1);
	for (int i = 0; parts[i] != NULL; i++)
		if (s->excludes != NULL && parts[i][0] != '\0' && g_strv_contains((const char *const *)s->excludes, parts[i]))
			return TRUE;
	const char *dot = strrchr(r->rel, '.');
	if (!s->is_skip_raw || dot == NULL || strchr(dot, '/') != NULL)
		return FALSE;
	g_autofree char *ext = g_ascii_strdown(dot + 1, -1);
	if (!g_strv_contains(raw_extensions, ext))
		return FALSE;
	for (int i = 0; standard_extensions[i] != NULL; i++) {
		g_autofree char *other = g_strdup_printf("%s/%.*s.%s", dir, (int)(dot - r->rel), r->rel, standard_extensions[i]);
		if (access(other, F_OK) == 0)
			return TRUE;
	}
	return FALSE;
}

/* Whether the file of index image `rel` is on disk (KPhotoAlbum's test
 * for "moved": the file the MD5 names is gone). */
static gboolean is_on_disk(const char *dir, const char *rel)
{
	g_autofree char *path = pix_path_join(dir, rel);
	return access(path, F_OK) == 0;
}

static int rec_cmp(gconstpointer a, gconstpointer b)
{
	const Rec *x = *(Rec *const *)a, *y = *(Rec *const *)b;
	int c = strcmp(x->start, y->start);
	return c != 0 ? c : strcmp(x->rel, y->rel);
}

/*
 * Places the new images (sorted by date, then path) among the old ones:
 * each before the first old image dated later, so an index in date order
 * stays so, and the old images keep their order.
 */
static void insert_in_date_order(Index *ix, GPtrArray *news, GPtrArray *nodes)
{
	GPtrArray *kids = ix->images->children;
	guint k = 0;
	for (guint i = 0; i < news->len; i++) {
		const Rec *r = news->pdata[i];
		for (; k < kids->len; k++) {
			const PixXmlNode *old = kids->pdata[k];
			const char *start = old->kind == PIX_XML_ELEMENT ? pix_xml_get(old, "startDate") : NULL;
			if (start != NULL && start[0] != '\0' && strcmp(start, r->start) > 0)
				break;
		}
		pix_xml_insert(ix->images, nodes->pdata[i], (gint)k);
		k++;
	}
}

typedef struct {
	const char *dir;
	const Settings *settings;
	const PixKpaOptions *opts;
	Index *ix;
	GArray *recs;
	GHashTable *moves;         /* old rel -> new rel, from the change log (incremental) */
	GHashTable *drop_exif;     /* absolute paths whose exif rows go */
	GHashTable *changed;       /* rels whose md5sum this merge changed */
	GHashTable *moved;         /* new rel -> old rel of the images it moved (owned) */
	PixKpaExifDb *exif;
	PixKpaExport *out;
} Merge;

/* Renames index image `e` to the file of `r` (KPhotoAlbum's
 * ImageDB::renameImage): its label follows only when it was the default. */
static void move_image(Merge *m, PixXmlNode *e, Rec *r)
{
	const char *old = pix_xml_get(e, "file");
	g_hash_table_add(m->drop_exif, pix_path_join(m->dir, old));
	const char *label = pix_xml_get(e, "label");
	g_autofree char *old_default = default_label(old);
	if (label != NULL && strcmp(label, old_default) == 0) {
		g_autofree char *new_default = default_label(r->rel);
		pix_xml_set(e, "label", new_default);
	}
	g_hash_table_remove(m->ix->by_file, old);
	g_hash_table_insert(m->moved, g_strdup(r->rel), g_strdup(old));
	pix_xml_set(e, "file", r->rel);
	g_hash_table_insert(m->ix->by_file, (gpointer)pix_xml_get(e, "file"), e);
	m->out->n_moved++;
}

/* A listed image whose file is `r`: its md5sum and size follow a changed
 * content; everything else is the user's. */
static void update_image(Merge *m, PixXmlNode *e, const Rec *r)
{
	if (g_strcmp0(pix_xml_get(e, "md5sum"), r->md5) == 0)
		return;
	pix_xml_set(e, "md5sum", r->md5);
	g_hash_table_add(m->changed, r->rel);
	const char *angle = pix_xml_get(e, "angle");
	if (!r->is_video)
		set_size(e, r, angle != NULL ? atoi(angle) : 0);
	m->out->n_updated++;
}

/* The old image a file the index lacks was, by MD5: one whose file is
 * gone (the change log's move first, then the same name, then the first
 * listed); NULL when none. */
static PixXmlNode *moved_from(Merge *m, const Rec *r, GHashTable *gone_by_md5)
{
	GPtrArray *cands = g_hash_table_lookup(gone_by_md5, r->md5);
	if (cands == NULL || cands->len == 0)
		return NULL;
	guint best = 0;
	const char *base = strrchr(r->rel, '/');
	base = base != NULL ? base + 1 : r->rel;
	for (guint i = 0; i < cands->len; i++) {
		const char *file = pix_xml_get(cands->pdata[i], "file");
		const char *moved_to = m->moves != NULL ? g_hash_table_lookup(m->moves, file) : NULL;
		if (moved_to != NULL && strcmp(moved_to, r->rel) == 0) {
			best = i;
			break;
		}
		const char *b = strrchr(file, '/');
		if (strcmp(b != NULL ? b + 1 : file, base) == 0 && best == 0)
			best = i;
	}
	return g_ptr_array_steal_index(cands, best);
}

static gboolean merge(Merge *m, GError **error)
{
	Index *ix = m->ix;
	g_autofree char *untagged = untagged_id(ix, m->settings);
	g_autoptr(GPtrArray) news = g_ptr_array_new();
	g_autoptr(GPtrArray) pending = g_ptr_array_new();
	g_autoptr(GHashTable) gone_by_md5 = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                                                           (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GHashTable) in_catalog = g_hash_table_new(g_str_hash, g_str_equal);
	Tagger tagger = { ix, m->opts->keywords_category != NULL ? m->opts->keywords_category : "Keywords", m->out };

	/* the files the index has: updated (and tagged when no one tagged
	 * them, or when asked); the others wait */
	for (guint i = 0; i < m->recs->len; i++) {
		Rec *r = &g_array_index(m->recs, Rec, i);
		g_hash_table_add(in_catalog, r->rel);
		PixXmlNode *e = g_hash_table_lookup(ix->by_file, r->rel);
		if (e != NULL) {
			update_image(m, e, r);
			if (m->opts->is_merge_keywords || is_untagged_only(ix, e, untagged))
				tag_image(&tagger, e, r);
			r->is_done = TRUE;
		} else {
			g_ptr_array_add(pending, r);
		}
	}
	/* the images whose file is gone, by MD5, for the moves */
	for (guint i = 0; i < ix->images->children->len; i++) {
		PixXmlNode *e = ix->images->children->pdata[i];
		const char *file = e->kind == PIX_XML_ELEMENT ? pix_xml_get(e, "file") : NULL;
		const char *md5 = file != NULL ? pix_xml_get(e, "md5sum") : NULL;
		if (file == NULL || g_hash_table_contains(in_catalog, file) || is_on_disk(m->dir, file))
			continue;
		m->out->n_gone++;       /* less those found moved, below */
		if (md5 != NULL) {
			GPtrArray *a = g_hash_table_lookup(gone_by_md5, md5);
			if (a == NULL)
				g_hash_table_insert(gone_by_md5, (gpointer)md5, a = g_ptr_array_new());
			g_ptr_array_add(a, e);
		}
	}
	for (guint i = 0; i < pending->len; i++) {
		Rec *r = pending->pdata[i];
		PixXmlNode *from = moved_from(m, r, gone_by_md5);
		if (from != NULL) {
			move_image(m, from, r);
			m->out->n_gone--;
			r->is_done = TRUE;
		} else if (g_hash_table_contains(ix->blocked, r->rel)) {
			m->out->n_blocked++;
		} else if (is_excluded(m->settings, m->dir, r)) {
			m->out->n_excluded++;
			g_autofree char *q = pix_quote(r->path);
			pix_info("not exporting '%s': KPhotoAlbum's settings skip it (excludeDirectories, skipRawIfOtherMatches)", q);
		} else {
			g_ptr_array_add(news, r);
			r->is_done = TRUE;
		}
	}
	g_ptr_array_sort(news, rec_cmp);
	g_autoptr(GPtrArray) nodes = g_ptr_array_new();
	for (guint i = 0; i < news->len; i++) {
		PixXmlNode *e = new_image(ix, news->pdata[i], m->settings, untagged);
		tag_image(&tagger, e, news->pdata[i]);
		g_ptr_array_add(nodes, e);
	}
	insert_in_date_order(ix, news, nodes);
	m->out->n_added = news->len;
	m->out->n_images = pix_xml_count(ix->images, "image");

	for (guint i = 0; i < m->recs->len; i++) {
		Rec *r = &g_array_index(m->recs, Rec, i);
		if (!r->is_done)
			continue;
		r->exif.path = r->path;
		if (!pix_store_kpa_add(m->exif, &r->exif, error))
			return FALSE;
		m->out->n_exif++;
	}
	return TRUE;
}

/* --- checking and writing --- */

/* Whether `old` is a list of ids ("3,12") and `new` holds each of them. */
static gboolean is_id_superset(const char *old, const char *new)
{
	if (new == NULL || old[0] == '\0' || strspn(old, "0123456789,") != strlen(old))
		return FALSE;
	g_auto(GStrv) a = g_strsplit(old, ",", -1), b = g_strsplit(new, ",", -1);
	for (guint i = 0; a[i] != NULL; i++)
		if (a[i][0] != '\0' && !g_strv_contains((const char *const *)b, a[i]))
			return FALSE;
	return TRUE;
}

/* The attributes of `old` are in `new` with the same values, but those a
 * merge may change (and id lists it may add to); and so for their
 * children, in order (invariant 1). */
static gboolean same_except_merge(const PixXmlNode *old, const PixXmlNode *new)
{
	static const char *const mergeable[] = { "file", "md5sum", "width", "height", "label", NULL };
	if (old->kind != new->kind || g_strcmp0(old->name, new->name) != 0 || g_strcmp0(old->text, new->text) != 0)
		return FALSE;
	if (old->kind != PIX_XML_ELEMENT)
		return TRUE;
	gboolean is_image = strcmp(old->name, "image") == 0;
	gboolean has_ids = is_image || strcmp(old->name, "member") == 0;
	for (guint i = 0; i < old->attrs->len; i += 2) {
		const char *name = old->attrs->pdata[i];
		if (is_image && g_strv_contains(mergeable, name))
			continue;
		/* an image's tags (compressed), a group's members: ids that
		 * may be added to, never taken away */
		if (has_ids && is_id_superset(old->attrs->pdata[i + 1], pix_xml_get(new, name)))
			continue;
		if (g_strcmp0(pix_xml_get(new, name), old->attrs->pdata[i + 1]) != 0)
			return FALSE;
	}
	/* the new children include the old ones, in order (added ones between) */
	guint j = 0;
	for (guint i = 0; i < old->children->len; i++) {
		const PixXmlNode *o = old->children->pdata[i];
		while (j < new->children->len && !same_except_merge(o, new->children->pdata[j]))
			j++;
		if (j == new->children->len)
			return FALSE;
		j++;
	}
	return TRUE;
}

/* The written bytes, parsed again: well-formed, with every old element
 * and attribute, and the images counted. */
static gboolean check_written(const Index *ix, const GString *bytes, const PixXmlNode *old_root, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autoptr(PixXmlNode) again = pix_xml_parse(bytes->str, bytes->len, MAX_DEPTH, &local);
	const PixXmlNode *images = again != NULL ? pix_xml_child(again, "images") : NULL;
	const char *why = again == NULL ? local->message
	                  : images == NULL || pix_xml_count(images, "image") != pix_xml_count(ix->images, "image")
	                      ? "its images are not those merged"
	                  : old_root != NULL && !same_except_merge(old_root, again) ? "something of the old index is not in it"
	                  : NULL;
	if (why == NULL)
		return TRUE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
	            "the merged index.xml did not read back as it should (%s): nothing was written", why);
	return FALSE;
}

/* The next free numbered backup name, index.xml~NNNN~, after every
 * backup KPhotoAlbum (XMLDB/NumberedBackup: also ~NNNN~.zip) or an
 * earlier export made. */
static char *next_backup(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	gint64 max = 0;
	const char *name;
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		if (!g_str_has_prefix(name, "index.xml~"))
			continue;
		char *end;
		gint64 n = g_ascii_strtoll(name + strlen("index.xml~"), &end, 10);
		if (end != name + strlen("index.xml~") && (strcmp(end, "~") == 0 || strcmp(end, "~.zip") == 0))
			max = MAX(max, n);
	}
	g_autofree char *base = g_strdup_printf("index.xml~%04" G_GINT64_FORMAT "~", max + 1);
	return pix_path_join(dir, base);
}

/* Keeps the index.xml about to be replaced as `backup` (a name not in
 * use): a hard link, so index.xml never stops existing, or a copy where
 * the file system has none. */
static gboolean keep_backup(const char *path, const char *backup, GError **error)
{
	if (link(path, backup) == 0)
		return TRUE;
	if (errno == EEXIST) {
		set_file_error(error, errno, "cannot make the backup", backup);
		return FALSE;
	}
	g_autoptr(GFile) from = g_file_new_for_path(path);
	g_autoptr(GFile) to = g_file_new_for_path(backup);
	g_autoptr(GError) copy_error = NULL;
	if (!g_file_copy(from, to, G_FILE_COPY_NOFOLLOW_SYMLINKS, NULL, NULL, NULL, &copy_error)) {
		g_autofree char *q = pix_quote(backup);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot write '%s': %s", q, copy_error->message);
		return FALSE;
	}
	return TRUE;
}

/* The seq of the last export into `dir` (its state file), or -1. */
static gint64 read_state(const char *dir)
{
	g_autofree char *path = pix_path_join(dir, STATE_FILE);
	g_autofree char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return -1;
	const char *seq = g_str_has_prefix(text, "seq=") ? text + 4 : NULL;
	char *end;
	gint64 n = seq != NULL ? g_ascii_strtoll(seq, &end, 10) : -1;
	return seq != NULL && end != seq && n >= 0 ? n : -1;
}

static gboolean write_state(const char *dir, gint64 seq, GError **error)
{
	g_autofree char *path = pix_path_join(dir, STATE_FILE);
	g_autoptr(PixAtomicFile) af = pix_atomic_new(path, 0666, error);
	if (af == NULL)
		return FALSE;
	fprintf(pix_atomic_stream(af),
	        "seq=%" G_GINT64_FORMAT "\n# photoidx: the catalog's change log seq of the last export into this "
	        "directory (export --kphotoalbum --since last)\n", seq);
	return pix_atomic_commit(g_steal_pointer(&af), error);
}

/* The changes after `since` at or below `dir`: the current paths of the
 * files they touch (into `wanted`) and the moves (old rel -> new rel). */
typedef struct {
	const char *dir;
	GHashTable *wanted, *moves;
} Since;


static gboolean on_change(gpointer data, const PixChange *c)
{
	Since *s = data;
	if (c->has_file && rel_of(s->dir, c->path) != NULL)
		g_hash_table_add(s->wanted, g_strdup(c->path));
	const char *from = rel_of(s->dir, c->old_path), *to = rel_of(s->dir, c->new_path);
	if (strcmp(c->kind, "moved") == 0 && from != NULL && to != NULL)
		g_hash_table_insert(s->moves, g_strdup(from), g_strdup(to));
	return TRUE;
}

/* KPhotoAlbum's thumbnail cache for the images of the merged index (all
 * of them, not only those this export touched: a scan with thumbnails
 * changes no file, and a --since export would never see them otherwise),
 * by their md5sum and angle. */
static gboolean export_thumbs(PixStore *reader, const char *dir, const Index *ix, int size_px, GHashTable *changed,
                              GHashTable *moved, PixKpaExport *out, GError **error)
{
	g_autoptr(GArray) wants = g_array_new(FALSE, FALSE, sizeof(PixKpaThumbWant));
	for (guint i = 0; i < ix->images->children->len; i++) {
		const PixXmlNode *e = ix->images->children->pdata[i];
		const char *file = e->kind == PIX_XML_ELEMENT ? pix_xml_get(e, "file") : NULL;
		const char *md5 = file != NULL ? pix_xml_get(e, "md5sum") : NULL;
		const char *angle = md5 != NULL ? pix_xml_get(e, "angle") : NULL;
		const char *width = md5 != NULL ? pix_xml_get(e, "width") : NULL;
		const char *height = md5 != NULL ? pix_xml_get(e, "height") : NULL;
		PixKpaThumbWant w = { .rel = file, .angle = angle != NULL ? atoi(angle) : 0,
			              .width = width != NULL ? g_ascii_strtoll(width, NULL, 10) : -1,
			              .height = height != NULL ? g_ascii_strtoll(height, NULL, 10) : -1 };
		if (!pix_md5_from_hex(md5, w.md5))
			continue;
		w.is_changed = g_hash_table_contains(changed, file);
		w.moved_from = g_hash_table_lookup(moved, file);
		g_array_append_val(wants, w);
	}
	return pix_kpa_thumbs_export(reader, dir, size_px, (const PixKpaThumbWant *)(void *)wants->data, wants->len,
	                             &out->thumbs, error);
}

gboolean pix_export_kphotoalbum(PixStore *reader, const char *dir, const PixFilter *filter,
                                const PixKpaOptions *opts, PixKpaExport *out, GError **error)
{
	g_autofree char *xml_path = pix_path_join(dir, "index.xml");
	g_autofree char *exif_path = pix_path_join(dir, "exif-info.db");
	char *paths[] = { (char *)dir, NULL };
	Settings settings = { 0 };
	Index ix = { 0 };
	gboolean is_ok = FALSE;
	g_autoptr(GArray) recs = g_array_new(FALSE, FALSE, sizeof(Rec));
	g_autoptr(GHashTable) wanted = NULL, moves = NULL;
	g_autoptr(GHashTable) drop_exif = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) changed = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) moved = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(PixXmlNode) old_root = NULL;
	g_autoptr(GString) bytes = g_string_new(NULL);
	g_autoptr(PixAtomicFile) exif_file = NULL;
	g_autoptr(PixKpaExifDb) exif = NULL;
	gboolean is_exif_same = FALSE, is_tags_read;
	Collect c = { .dir = dir, .recs = recs, .out = out };
	PixFilter f;

	memset(out, 0, sizeof *out);
	g_autofree char *how = NULL;
	pid_t kpa = pix_kpa_running(dir, &how);
	if (kpa != 0) {
		g_autofree char *q = pix_quote(dir);
		g_set_error(error, PIX_KPA_ERROR, PIX_KPA_ERROR_RUNNING,
		            "cannot export to '%s': %s; close it and export again (it keeps index.xml and its "
		            "thumbnails in memory and writes them over the files when it exits): nothing was written",
		            q, how);
		return FALSE;
	}
	g_array_set_clear_func(recs, rec_clear);
	read_settings(&settings, dir);
	if (!index_load(&ix, xml_path, opts->is_force, error) || !pix_store_last_seq(reader, &out->seq, error))
		goto done;
	if (ix.old_bytes != NULL && !opts->is_force)
		old_root = pix_xml_parse(ix.old_bytes, ix.old_len, MAX_DEPTH, NULL);

	gint64 since = opts->is_since_last ? read_state(dir) : opts->since;
	if (opts->is_since_last && since < 0)
		pix_notice("no earlier export into '%s' is recorded: every file is merged", dir);
	/* incremental only onto both files: without the old exif-info.db,
	 * the rows of the files not touched would be lost */
	if (since >= 0 && ix.old_bytes != NULL && !opts->is_force && access(exif_path, F_OK) != 0)
		pix_notice("'%s' is not there: every file is merged", exif_path), since = -1;
	if (since >= 0 && ix.old_bytes != NULL && !opts->is_force) {
		Since s = { .dir = dir, .wanted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
			    .moves = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) };
		wanted = s.wanted, moves = s.moves;
		if (!pix_store_each_change(reader, since, 0, on_change, &s, error))
			goto done;
	}

	c.wanted = wanted;
	f = export_filter(filter, paths);
	if (f.media_mask != 0 && (wanted == NULL || g_hash_table_size(wanted) > 0) &&
	    !pix_store_each_record(reader, &f, PIX_SORT_PATH, 0, on_record, &c, error))
		goto done;
	/* their keywords and people (another statement: a file a scan
	 * committed meanwhile is passed over, one it changed gets what it
	 * has now) */
	c.by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (guint i = 0; i < recs->len; i++)
		g_hash_table_insert(c.by_id, &g_array_index(recs, Rec, i).id, GUINT_TO_POINTER(i + 1));
	is_tags_read = recs->len == 0 || pix_store_each_tag_row(reader, &f, on_tag_row, &c, error);
	g_hash_table_unref(c.by_id);
	if (!is_tags_read)
		goto done;

	if ((exif_file = pix_atomic_new(exif_path, 0666, error)) == NULL ||
	    (exif = pix_store_kpa_new(pix_atomic_temp_path(exif_file), exif_path, error)) == NULL)
		goto done;
	Merge m = { .dir = dir, .settings = &settings, .opts = opts, .ix = &ix, .recs = recs, .moves = moves,
		    .drop_exif = drop_exif, .changed = changed, .moved = moved, .exif = exif, .out = out };
	if (!merge(&m, error))
		goto done;
	struct stat est;
	if (lstat(exif_path, &est) == 0 && S_ISREG(est.st_mode) && !opts->is_force) {
		g_autofree char *why = NULL;
		if (!pix_store_kpa_keep(exif, exif_path, drop_exif, &out->n_exif_kept, &is_exif_same, &why, error))
			goto done;
		if (why != NULL) {
			g_autofree char *q = pix_quote(exif_path);
			pix_notice("not keeping the rows of '%s': %s", q, why);
		}
	}
	if (!pix_store_kpa_finish(g_steal_pointer(&exif), error))
		goto done;

	pix_xml_write(bytes, ix.root);
	gboolean is_xml_same;
	is_xml_same = ix.old_bytes != NULL && ix.old_len == bytes->len &&
	                       memcmp(ix.old_bytes, bytes->str, bytes->len) == 0;
	if (!check_written(&ix, bytes, old_root, error))
		goto done;
	out->is_unchanged = is_xml_same && is_exif_same;
	/* index.xml last: it is what KPhotoAlbum opens, and a crash before
	 * its rename leaves the old one whole (with a newer exif-info.db,
	 * which is only a cache of the files' metadata) */
	if (is_exif_same)
		pix_atomic_abort(g_steal_pointer(&exif_file));
	else if (!pix_atomic_commit(g_steal_pointer(&exif_file), error))
		goto done;
	if (!is_xml_same) {
		g_autoptr(PixAtomicFile) xml_file = pix_atomic_new(xml_path, 0666, error);
		if (xml_file == NULL)
			goto done;
		FILE *f_xml = pix_atomic_stream(xml_file);
		if (fwrite(bytes->str, 1, bytes->len, f_xml) != bytes->len) {
			set_file_error(error, errno, "cannot write", xml_path);
			goto done;
		}
		if (ix.old_bytes != NULL) {
			out->backup = next_backup(dir);
			if (!keep_backup(xml_path, out->backup, error))
				goto done;
		}
		if (!pix_atomic_commit(g_steal_pointer(&xml_file), error))
			goto done;
	}
	if (!export_thumbs(reader, dir, &ix, settings.thumb_size, changed, moved, out, error))
		goto done;
	out->is_unchanged = out->is_unchanged && !out->thumbs.is_written;
	is_ok = write_state(dir, out->seq, error);
done:
	settings_clear(&settings);
	index_clear(&ix);
	return is_ok;
}
