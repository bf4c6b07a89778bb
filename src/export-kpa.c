/*
 * export-kpa.c: `photoidx export --kphotoalbum DIR`: the catalog's images,
 * RAW files and videos at or below DIR as a KPhotoAlbum 5.9 database:
 * DIR/index.xml (written here) and DIR/exif-info.db (store-kpa.c), with
 * the MD5, date, size and rotation KPhotoAlbum would have found by
 * reading every file.  doc/kphotoalbum.md says what each attribute holds
 * and why.
 *
 * Reads the catalog (one snapshot, query.h); writes the two files through
 * atomic.h, each to a temporary file in DIR that is synced and renamed
 * over the old one.  Main thread.
 *
 * Invariants:
 *  1. Every <image> has file, startDate, md5sum, width and height: without
 *     an md5sum KPhotoAlbum would hash the file, and without a width it
 *     asks the user to rebuild every thumbnail.
 *  2. Images are listed in order of startDate (then path), the order
 *     KPhotoAlbum keeps and checks on loading.
 *  3. Every string written to index.xml is valid UTF-8 made only of XML
 *     characters, escaped; a file whose relative path is not is skipped
 *     with a warning, never written.
 *  4. An existing index.xml is replaced only with is_force, and only after
 *     it is linked (or copied) to index.xml~.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "export-kpa.h"
#include "atomic.h"
#include "log.h"
#include "meta-value.h"
#include "path.h"
#include "store-kpa.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* The index.xml format KPhotoAlbum 5.9 writes (XMLDB::Database::fileVersion()). */
#define KPA_FILE_VERSION 8
/* KPhotoAlbum's "YYYY-MM-DDTHH:MM:SS" (QDateTime, Qt::ISODate), plus NUL. */
#define KPA_DATE_LEN 20

/* One <image> element, kept until all are known and sorted. */
typedef struct {
	char *rel;                 /* path relative to DIR, XML-safe UTF-8 (owned) */
	char start[KPA_DATE_LEN];  /* startDate; "" when there is none */
	char end[KPA_DATE_LEN];    /* endDate of a fuzzy date, else "" */
	char md5[33];              /* 32 lowercase hex digits */
	gint64 width, height;      /* as displayed (rotated by angle), -1 unknown */
	gint64 video_length_s;     /* videos: whole seconds, -1 unknown */
	int angle;                 /* 0, 90, 180 or 270 */
	gboolean is_video;
} Entry;

typedef struct {
	const char *dir;           /* borrowed */
	GArray *entries;           /* Entry */
	PixKpaExifDb *exif;        /* borrowed */
	PixKpaExport *out;
	GError *error;             /* the first environment failure (owned) */
} Export;

static void entry_clear(gpointer p)
{
	g_free(((Entry *)p)->rel);
}

/* Whether XML 1.0 can hold `s` in an attribute: valid UTF-8 with no NUL,
 * no C0 control but tab, newline and carriage return, and no U+FFFE or
 * U+FFFF. */
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

/* Writes `s` as an attribute value, escaped as Qt's QXmlStreamWriter
 * escapes it (whitespace other than a space as character references, so
 * a reader's attribute normalisation keeps it). */
static void put_attr(FILE *f, const char *name, const char *s)
{
	fprintf(f, " %s=\"", name);
	for (const char *p = s; *p != '\0'; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\r': fputs("&#13;", f); break;
		case '\t': fputs("&#9;", f); break;
		default: fputc(*p, f);
		}
	}
	fputc('"', f);
}

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

static void skip(Export *ex, const char *path, const char *why)
{
	g_autofree char *q = pix_quote(path);
	pix_warn("cannot export '%s' to KPhotoAlbum: %s (skipping)", q, why);
	ex->out->n_skipped++;
}

static gboolean on_record(gpointer data, const PixRecord *r)
{
	Export *ex = data;
	const char *path = pix_record_text(r, PIX_COL_PATH);
	const char *md5 = pix_record_text(r, PIX_COL_MD5);
	const char *media = pix_record_text(r, PIX_COL_MEDIA);

	if (path == NULL || !pix_path_is_under(path, ex->dir) || strcmp(path, ex->dir) == 0)
		return TRUE;
	const char *rel = path + strlen(ex->dir) + (strcmp(ex->dir, "/") == 0 ? 0 : 1);
	if (r->v[PIX_COL_PATH].type == PIX_VAL_BYTES || !is_xml_text(rel)) {
		skip(ex, path, "its name is not UTF-8 text, which index.xml cannot hold");
		return TRUE;
	}
	if (md5 == NULL || strlen(md5) != 32 || strspn(md5, "0123456789abcdef") != 32) {
		skip(ex, path, "it has no MD5 (it could not be read)");
		return TRUE;
	}
	if (is_in_category_images(rel)) {
		g_autofree char *q = pix_quote(path);
		pix_info("not exporting '%s': KPhotoAlbum keeps its own images in CategoryImages", q);
		return TRUE;
	}

	Entry e = { .rel = g_strdup(rel), .is_video = g_strcmp0(media, "video") == 0 };
	g_strlcpy(e.md5, md5, sizeof e.md5);
	const char *taken = pix_record_text(r, PIX_COL_DATE_TAKEN);
	if (taken == NULL ||
	    !dates_from_taken(taken, pix_record_text(r, PIX_COL_DATE_TZ), pix_record_text(r, PIX_COL_DATE_SOURCE),
	                      e.start, e.end))
		date_from_mtime(pix_record_int(r, PIX_COL_MTIME_NS, 0), e.start);

	gint64 orientation = pix_record_int(r, PIX_COL_ORIENTATION, -1);
	e.angle = angle_of(orientation);
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
		if (e.angle == 90 || e.angle == 270) {
			gint64 w = e.width;
			e.width = e.height;
			e.height = w;
		}
	}
	g_array_append_val(ex->entries, e);

	PixKpaExifRow row = {
		.path = path,
		.make = pix_record_text(r, PIX_COL_MAKE),
		.model = pix_record_text(r, PIX_COL_MODEL),
		.lens = pix_record_text(r, PIX_COL_LENS),
		.exposure_s = pix_record_real(r, PIX_COL_EXPOSURE_S),
		.fnumber = pix_record_real(r, PIX_COL_FNUMBER),
		.focal_mm = pix_record_real(r, PIX_COL_FOCAL_MM),
		.iso = pix_record_int(r, PIX_COL_ISO, -1),
		.orientation = orientation,
		.gps_lat = pix_record_real(r, PIX_COL_GPS_LAT),
		.gps_lon = pix_record_real(r, PIX_COL_GPS_LON),
		.gps_alt_m = pix_record_real(r, PIX_COL_GPS_ALT_M),
	};
	if (!pix_store_kpa_add(ex->exif, &row, &ex->error))
		return FALSE;
	ex->out->n_exif++;
	return TRUE;
}

static int entry_cmp(gconstpointer a, gconstpointer b)
{
	const Entry *x = a, *y = b;
	int c = strcmp(x->start, y->start);
	return c != 0 ? c : strcmp(x->rel, y->rel);
}

/* The invariants 1 to 3 over the sorted elements (debug checker). */
static gboolean index_check(GArray *entries)
{
	for (guint i = 0; i < entries->len; i++) {
		const Entry *e = &g_array_index(entries, Entry, i);
		if (strlen(e->md5) != 32 || strspn(e->md5, "0123456789abcdef") != 32 || !is_xml_text(e->rel) ||
		    (i > 0 && entry_cmp(e - 1, e) > 0))
			return FALSE;
	}
	return TRUE;
}

/* The categories of KPhotoAlbum's default-setup (People, Places, Events
 * with its "untagged" tag), written as 5.9 writes categories; KPhotoAlbum
 * adds Tokens, Folder and Media Type itself on loading. */
static const char categories_xml[] =
    "    <Categories>\n"
    "        <Category name=\"People\" icon=\"system-users\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"1\"/>\n"
    "        <Category name=\"Places\" icon=\"applications-internet\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"0\"/>\n"
    "        <Category name=\"Events\" icon=\"favorites\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"0\">\n"
    "            <value value=\"untagged\" id=\"1\"/>\n"
    "        </Category>\n"
    "    </Categories>\n";

/* index.xml in KPhotoAlbum 5.9's compressed format, the one it writes by
 * default: each image carries Events="1", the "untagged" tag KPhotoAlbum
 * gives every new image. */
static void write_index(FILE *f, GArray *entries)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<KPhotoAlbum version=\"%d\" compressed=\"1\">\n", KPA_FILE_VERSION);
	fputs(categories_xml, f);
	fputs(entries->len == 0 ? "    <images/>\n" : "    <images>\n", f);
	for (guint i = 0; i < entries->len; i++) {
		const Entry *e = &g_array_index(entries, Entry, i);
		fputs("        <image", f);
		put_attr(f, "file", e->rel);
		put_attr(f, "startDate", e->start);
		if (e->end[0] != '\0')
			put_attr(f, "endDate", e->end);
		if (e->angle != 0)
			fprintf(f, " angle=\"%d\"", e->angle);
		put_attr(f, "md5sum", e->md5);
		fprintf(f, " width=\"%" G_GINT64_FORMAT "\" height=\"%" G_GINT64_FORMAT "\"", e->width, e->height);
		if (e->is_video)
			fprintf(f, " videoLength=\"%" G_GINT64_FORMAT "\"", e->video_length_s);
		fputs(" Events=\"1\"/>\n", f);
	}
	if (entries->len != 0)
		fputs("    </images>\n", f);
	fputs("    <blocklist/>\n</KPhotoAlbum>\n", f);
}

static void set_file_error(GError **error, int err, const char *what, const char *path)
{
	g_autofree char *q = pix_quote(path);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s '%s': %s", what, q, g_strerror(err));
}

/* Keeps the index.xml about to be replaced as index.xml~ (replacing an
 * older one): a hard link, so index.xml never stops existing, or a copy
 * where the file system has none. */
static gboolean keep_backup(const char *path, const char *backup, GError **error)
{
	if (unlink(backup) != 0 && errno != ENOENT) {
		set_file_error(error, errno, "cannot replace", backup);
		return FALSE;
	}
	if (link(path, backup) == 0)
		return TRUE;
	if (errno == ENOENT)
		return TRUE;
	g_autoptr(GFile) from = g_file_new_for_path(path);
	g_autoptr(GFile) to = g_file_new_for_path(backup);
	g_autoptr(GError) copy_error = NULL;
	if (!g_file_copy(from, to, G_FILE_COPY_OVERWRITE | G_FILE_COPY_NOFOLLOW_SYMLINKS, NULL, NULL, NULL,
	                 &copy_error)) {
		g_autofree char *q = pix_quote(backup);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot write '%s': %s", q, copy_error->message);
		return FALSE;
	}
	return TRUE;
}

static gboolean refuse_existing(const char *xml_path, GError **error)
{
	if (access(xml_path, F_OK) != 0)
		return TRUE;
	g_autofree char *q = pix_quote(xml_path);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
	            "'%s' exists and may hold KPhotoAlbum tags: not replacing it (--force replaces it, keeping it as index.xml~)",
	            q);
	return FALSE;
}

/* What to ask the catalog: `filter` at or below `dir`, present files
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

gboolean pix_export_kphotoalbum(PixStore *reader, const char *dir, const PixFilter *filter, gboolean is_force,
                                PixKpaExport *out, GError **error)
{
	g_autofree char *xml_path = pix_path_join(dir, "index.xml");
	g_autofree char *exif_path = pix_path_join(dir, "exif-info.db");
	g_autofree char *backup_path = g_strconcat(xml_path, "~", NULL);
	char *paths[] = { (char *)dir, NULL };

	memset(out, 0, sizeof *out);
	if (!is_force && !refuse_existing(xml_path, error))
		return FALSE;

	g_autoptr(PixAtomicFile) exif_file = pix_atomic_new(exif_path, 0666, error);
	if (exif_file == NULL)
		return FALSE;
	g_autoptr(PixKpaExifDb) exif = pix_store_kpa_new(pix_atomic_temp_path(exif_file), exif_path, error);
	if (exif == NULL)
		return FALSE;

	g_autoptr(GArray) entries = g_array_new(FALSE, FALSE, sizeof(Entry));
	g_array_set_clear_func(entries, entry_clear);
	Export ex = { .dir = dir, .entries = entries, .exif = exif, .out = out };
	PixFilter f = export_filter(filter, paths);
	if (f.media_mask != 0 && !pix_store_each_record(reader, &f, PIX_SORT_NONE, 0, on_record, &ex, error))
		return FALSE;
	if (ex.error != NULL) {
		g_propagate_error(error, ex.error);
		return FALSE;
	}
	g_array_sort(entries, entry_cmp);
	g_assert(index_check(entries));
	out->n_images = entries->len;

	if (!pix_store_kpa_finish(g_steal_pointer(&exif), error))
		return FALSE;
	g_autoptr(PixAtomicFile) xml_file = pix_atomic_new(xml_path, 0666, error);
	if (xml_file == NULL)
		return FALSE;
	FILE *f_xml = pix_atomic_stream(xml_file);
	if (f_xml == NULL) {
		set_file_error(error, errno, "cannot write", xml_path);
		return FALSE;
	}
	write_index(f_xml, entries);

	/* index.xml last: it is what KPhotoAlbum opens, and a crash before
	 * its rename leaves the old one whole (with a newer exif-info.db,
	 * which is only a cache of the files' metadata). */
	if (!pix_atomic_commit(g_steal_pointer(&exif_file), error))
		return FALSE;
	if (!is_force && !refuse_existing(xml_path, error))
		return FALSE;
	if (is_force && !keep_backup(xml_path, backup_path, error))
		return FALSE;
	return pix_atomic_commit(g_steal_pointer(&xml_file), error);
}
