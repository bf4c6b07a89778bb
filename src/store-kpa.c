/*
 * store-kpa.c: KPhotoAlbum's Exif search database, exif-info.db, written
 * as KPhotoAlbum 5.9 writes it (kpaexif/Database.cpp and
 * DatabaseElement.cpp), so that KPhotoAlbum neither rebuilds it nor reads
 * the image files to fill it in.
 *
 * Writes one new SQLite file (the temporary file of the export; the
 * caller syncs and renames it); reads the old exif-info.db, for the rows
 * to keep.  Main thread.
 *
 * Invariants:
 *  1. The schema text is KPhotoAlbum's own, character for character, and
 *     the settings table says DBVersion 3 and GuaranteedDataVersion 3, so
 *     KPhotoAlbum finds nothing to migrate or re-read.
 *  2. No column of a row written from the catalog is NULL except
 *     Exif_Photo_LensModel (rows kept from an old exif-info.db are
 *     KPhotoAlbum's, as it wrote them): an unknown
 *     value is what KPhotoAlbum stores for a file without the tag (-1.0,
 *     0 or an empty string).  A NULL GPS version makes KPhotoAlbum read the
 *     file again (DB::ImageInfo::coordinates()).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-kpa.h"
#include "log.h"
#include "store.h"

#include <math.h>
#include <sqlite3.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3_stmt, sqlite3_finalize)

/* What KPhotoAlbum 5.9 sends to SQLite, kept as it is (the trailing
 * space included): its element list joined by ", ". */
static const char create_settings_sql[] =
    "create table if not exists settings (keyword TEXT PRIMARY KEY, value TEXT) without rowid";
static const char create_exif_sql[] =
    "create table if not exists exif (filename string PRIMARY KEY, "
    "Exif_Photo_FocalLength float, Exif_Photo_ExposureTime float, Exif_Photo_ApertureValue float, "
    "Exif_Photo_FNumber float, Exif_Photo_Flash int, Exif_Photo_Contrast int, Exif_Photo_Sharpness int, "
    "Exif_Photo_Saturation int, Exif_Image_Orientation int, Exif_Photo_MeteringMode int, "
    "Exif_Photo_ISOSpeedRatings int, Exif_Photo_ExposureProgram int, Exif_Image_Make string, "
    "Exif_Image_Model string, Exif_GPSInfo_GPSVersionID int, Exif_GPSInfo_GPSAltitude float, "
    "Exif_GPSInfo_GPSAltitudeRef int, Exif_GPSInfo_GPSMeasureMode string, Exif_GPSInfo_GPSDOP float, "
    "Exif_GPSInfo_GPSImgDirection float, Exif_GPSInfo_GPSLatitude float, Exif_GPSInfo_GPSLatitudeRef string, "
    "Exif_GPSInfo_GPSLongitude float, Exif_GPSInfo_GPSLongitudeRef string, Exif_GPSInfo_GPSTimeStamp float, "
    "Exif_Photo_LensModel string )";
/* The schema version KPhotoAlbum 5.9 writes (DB_VERSION), as its text. */
#define KPA_EXIF_DB_VERSION "3"

/* The columns in table order (the statement binds them by position). */
enum {
	COL_FILENAME = 1, COL_FOCAL, COL_EXPOSURE, COL_APERTURE, COL_FNUMBER, COL_FLASH, COL_CONTRAST,
	COL_SHARPNESS, COL_SATURATION, COL_ORIENTATION, COL_METERING, COL_ISO, COL_PROGRAM, COL_MAKE,
	COL_MODEL, COL_GPS_VERSION, COL_GPS_ALT, COL_GPS_ALT_REF, COL_GPS_MEASURE_MODE, COL_GPS_DOP,
	COL_GPS_DIRECTION, COL_GPS_LAT, COL_GPS_LAT_REF, COL_GPS_LON, COL_GPS_LON_REF, COL_GPS_TIME,
	COL_LENS, N_COLS = COL_LENS
};

/* The value GPSVersionID 2.x.y.z reads as (Exiv2's toLong() of its
 * first byte), which tells KPhotoAlbum the file has a position. */
#define KPA_GPS_VERSION 2

struct PixKpaExifDb {
	sqlite3 *db;
	sqlite3_stmt *insert;
	char *display_path;   /* owned */
	gboolean has_kept;    /* rows of an old exif-info.db were copied */
};

static void set_error(GError **error, PixKpaExifDb *x, int rc)
{
	g_autofree char *q = pix_quote(x->display_path);
	/* an output file, not the catalog: G_FILE_ERROR (the export's exit 73) */
	int code = (rc & 0xff) == SQLITE_FULL ? G_FILE_ERROR_NOSPC : G_FILE_ERROR_FAILED;
	const char *msg = x->db != NULL ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc);
	g_set_error(error, G_FILE_ERROR, code, "cannot write '%s': %s", q, msg);
}

static gboolean exec(PixKpaExifDb *x, const char *sql, GError **error)
{
	int rc = sqlite3_exec(x->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		set_error(error, x, rc);
		return FALSE;
	}
	return TRUE;
}

/* `head` (an INSERT into the exif table) with a placeholder per column. */
static char *insert_sql(const char *head)
{
	GString *sql = g_string_new(head);
	g_string_append(sql, " values (?");
	for (int i = 2; i <= N_COLS; i++)
		g_string_append(sql, ", ?");
	g_string_append(sql, ")");
	return g_string_free(sql, FALSE);
}

PixKpaExifDb *pix_store_kpa_new(const char *path, const char *display_path, GError **error)
{
	g_autoptr(PixKpaExifDb) x = g_new0(PixKpaExifDb, 1);
	x->display_path = g_strdup(display_path);

	int rc = sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		set_error(error, x, rc);
		return NULL;
	}
	/* The file is a temporary one that the caller syncs and renames:
	 * no journal file beside it, no sync of SQLite's own. */
	if (!exec(x, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF", error) ||
	    !exec(x, "BEGIN", error) || !exec(x, create_settings_sql, error) ||
	    !exec(x,
	          "insert or replace into settings (keyword, value) values('DBVersion','" KPA_EXIF_DB_VERSION "');"
	          "insert or replace into settings (keyword, value) values('GuaranteedDataVersion','" KPA_EXIF_DB_VERSION "')",
	          error) ||
	    !exec(x, create_exif_sql, error))
		return NULL;

	g_autofree char *sql = insert_sql("INSERT OR REPLACE into exif");
	rc = sqlite3_prepare_v2(x->db, sql, -1, &x->insert, NULL);
	if (rc != SQLITE_OK) {
		set_error(error, x, rc);
		return NULL;
	}
	return g_steal_pointer(&x);
}

/* A text column: the string, or what KPhotoAlbum stores without the tag
 * (`absent`; NULL binds NULL). */
static void bind_text(sqlite3_stmt *st, int col, const char *s, const char *absent)
{
	if (s == NULL)
		s = absent;
	if (s == NULL)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
}

/* A rational column: KPhotoAlbum's -1.0 without the tag. */
static void bind_real(sqlite3_stmt *st, int col, double d)
{
	sqlite3_bind_double(st, col, isnan(d) ? -1.0 : d);
}

/* An integer column: KPhotoAlbum's 0 without the tag. */
static void bind_int(sqlite3_stmt *st, int col, gint64 i)
{
	sqlite3_bind_int64(st, col, i < 0 ? 0 : i);
}

gboolean pix_store_kpa_add(PixKpaExifDb *x, const PixKpaExifRow *row, GError **error)
{
	sqlite3_stmt *st = x->insert;
	gboolean has_position = !isnan(row->gps_lat) && !isnan(row->gps_lon);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	bind_text(st, COL_FILENAME, row->path, NULL);
	bind_real(st, COL_FOCAL, row->focal_mm);
	bind_real(st, COL_EXPOSURE, row->exposure_s);
	bind_real(st, COL_APERTURE, row->aperture);
	bind_real(st, COL_FNUMBER, row->fnumber);
	bind_int(st, COL_FLASH, row->flash);
	bind_int(st, COL_CONTRAST, -1);
	bind_int(st, COL_SHARPNESS, -1);
	bind_int(st, COL_SATURATION, -1);
	bind_int(st, COL_ORIENTATION, row->orientation);
	bind_int(st, COL_METERING, row->metering_mode);
	bind_int(st, COL_ISO, row->iso);
	bind_int(st, COL_PROGRAM, row->exposure_program);
	bind_text(st, COL_MAKE, row->make, "");
	bind_text(st, COL_MODEL, row->model, "");
	/* EXIF keeps a position as unsigned degrees and metres plus a
	 * reference letter (or byte) for the sign, and so does KPhotoAlbum. */
	bind_int(st, COL_GPS_VERSION, has_position ? KPA_GPS_VERSION : 0);
	bind_real(st, COL_GPS_ALT, has_position ? fabs(row->gps_alt_m) : NAN);
	bind_int(st, COL_GPS_ALT_REF, has_position && row->gps_alt_m < 0 ? 1 : 0);
	bind_text(st, COL_GPS_MEASURE_MODE, NULL, "");
	bind_real(st, COL_GPS_DOP, NAN);
	bind_real(st, COL_GPS_DIRECTION, row->gps_direction);
	bind_real(st, COL_GPS_LAT, has_position ? fabs(row->gps_lat) : NAN);
	bind_text(st, COL_GPS_LAT_REF, has_position ? (row->gps_lat < 0 ? "S" : "N") : NULL, "");
	bind_real(st, COL_GPS_LON, has_position ? fabs(row->gps_lon) : NAN);
	bind_text(st, COL_GPS_LON_REF, has_position ? (row->gps_lon < 0 ? "W" : "E") : NULL, "");
	bind_real(st, COL_GPS_TIME, row->gps_time_h);
	bind_text(st, COL_LENS, row->lens, NULL);

	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		set_error(error, x, rc);
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_kpa_keep(PixKpaExifDb *x, const char *old_path, GHashTable *drop, gint64 *n_kept,
                            gboolean *is_same, char **why, GError **error)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	*n_kept = 0;
	*is_same = FALSE;
	*why = NULL;
	/* read-only, through a URI so no journal or lock file is made */
	g_autofree char *uri = g_filename_to_uri(old_path, NULL, NULL);
	g_autofree char *ro = uri != NULL ? g_strconcat(uri, "?mode=ro", NULL) : NULL;
	if (ro == NULL) {
		*why = g_strdup("its path cannot be opened");
		return TRUE;
	}
	/* SQLite attaches only outside a transaction: the rows so far are
	 * committed (to the temporary file), and a new one begun after */
	if (!exec(x, "COMMIT", error))
		return FALSE;
	if (sqlite3_prepare_v2(x->db, "ATTACH ?1 AS old", -1, &st, NULL) != SQLITE_OK) {
		set_error(error, x, sqlite3_errcode(x->db));
		return FALSE;
	}
	sqlite3_bind_text(st, 1, ro, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		*why = g_strdup_printf("it cannot be read (%s)", sqlite3_errmsg(x->db));
		return exec(x, "BEGIN", error);
	}
	g_clear_pointer(&st, sqlite3_finalize);
	if (!exec(x, "BEGIN", error))
		return FALSE;
	/* KPhotoAlbum's version 3, with the columns of ours in their order */
	gboolean is_v3 = sqlite3_prepare_v2(x->db,
	                                    "SELECT (SELECT value FROM old.settings WHERE keyword = 'DBVersion'),"
	                                    " (SELECT group_concat(name, ',') FROM pragma_table_info('exif', 'old')),"
	                                    " (SELECT group_concat(name, ',') FROM pragma_table_info('exif', 'main'))",
	                                    -1, &st, NULL) == SQLITE_OK &&
	                 sqlite3_step(st) == SQLITE_ROW &&
	                 g_strcmp0((const char *)sqlite3_column_text(st, 0), KPA_EXIF_DB_VERSION) == 0 &&
	                 g_strcmp0((const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2)) == 0;
	g_clear_pointer(&st, sqlite3_finalize);
	gboolean is_ok = TRUE;
	if (!is_v3) {
		*why = g_strdup("it is not KPhotoAlbum's Exif database of version " KPA_EXIF_DB_VERSION);
	} else if (sqlite3_prepare_v2(x->db, "SELECT * FROM old.exif", -1, &st, NULL) != SQLITE_OK) {
		*why = g_strdup_printf("it cannot be read (%s)", sqlite3_errmsg(x->db));
	} else {
		g_autoptr(sqlite3_stmt) ins = NULL;
		g_autofree char *sql = insert_sql("INSERT OR IGNORE INTO main.exif");
		is_ok = sqlite3_prepare_v2(x->db, sql, -1, &ins, NULL) == SQLITE_OK;
		int rc;
		while (is_ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			if (name == NULL || (drop != NULL && g_hash_table_contains(drop, name)))
				continue;
			for (int c = 0; c < N_COLS; c++)
				sqlite3_bind_value(ins, c + 1, sqlite3_column_value(st, c));
			is_ok = sqlite3_step(ins) == SQLITE_DONE;
			*n_kept += sqlite3_changes(x->db);
			sqlite3_reset(ins);
		}
		x->has_kept = *n_kept > 0;
		if (is_ok && rc != SQLITE_DONE)
			*why = g_strdup_printf("it could not be read to its end (%s)", sqlite3_errmsg(x->db));
		if (!is_ok)
			set_error(error, x, sqlite3_errcode(x->db));
		g_clear_pointer(&st, sqlite3_finalize);
		/* the same rows, value for value and type for type */
		if (is_ok && *why == NULL &&
		    sqlite3_prepare_v2(x->db,
		                       "SELECT (SELECT count(*) FROM (SELECT * FROM main.exif EXCEPT SELECT * FROM old.exif))"
		                       " + (SELECT count(*) FROM (SELECT * FROM old.exif EXCEPT SELECT * FROM main.exif))",
		                       -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			*is_same = sqlite3_column_int64(st, 0) == 0;
	}
	g_clear_pointer(&st, sqlite3_finalize);
	if (is_ok)
		is_ok = exec(x, "COMMIT", error);
	else
		sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_exec(x->db, "DETACH old", NULL, NULL, NULL);
	return is_ok && exec(x, "BEGIN", error);
}

/* The invariants 1 and 2 over what is written so far (debug checker). */
static gboolean kpa_check(PixKpaExifDb *x)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GString) sql = g_string_new("SELECT (SELECT count(*) FROM exif WHERE 0");
	static const char *const nullable[] = { "Exif_Photo_LensModel", NULL };

	if (sqlite3_prepare_v2(x->db, "SELECT name FROM pragma_table_info('exif')", -1, &st, NULL) != SQLITE_OK)
		return FALSE;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (!g_strv_contains(nullable, name))
			g_string_append_printf(sql, " OR %s IS NULL", name);
	}
	g_string_append(sql, "), (SELECT group_concat(keyword || '=' || value) FROM settings)");
	g_clear_pointer(&st, sqlite3_finalize);
	if (sqlite3_prepare_v2(x->db, sql->str, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		return FALSE;
	return (x->has_kept || sqlite3_column_int64(st, 0) == 0) &&
	       g_strcmp0((const char *)sqlite3_column_text(st, 1),
	                 "DBVersion=" KPA_EXIF_DB_VERSION ",GuaranteedDataVersion=" KPA_EXIF_DB_VERSION) == 0;
}

gboolean pix_store_kpa_finish(PixKpaExifDb *x, GError **error)
{
	g_assert(kpa_check(x));
	gboolean is_ok = exec(x, "COMMIT", error);
	g_clear_pointer(&x->insert, sqlite3_finalize);
	if (is_ok) {
		int rc = sqlite3_close(x->db);
		if (rc != SQLITE_OK) {
			set_error(error, x, rc);
			is_ok = FALSE;
		} else {
			x->db = NULL;
		}
	}
	pix_store_kpa_free(x);
	return is_ok;
}

void pix_store_kpa_free(PixKpaExifDb *x)
{
	if (x == NULL)
		return;
	sqlite3_finalize(x->insert);
	sqlite3_close(x->db);
	g_free(x->display_path);
	g_free(x);
}
