/*
 * store-sql.c: the bottom of the store: its table of statements (each
 * written once in what both backends accept, a PostgreSQL text beside it
 * only where they differ), and the helpers every store*.c file uses to
 * prepare, bind, step and report them.  It calls no other store file.
 *
 * Every value reaches SQL as a bound parameter, never in the SQL text;
 * every call's failure sets a GError through pix_store_db_error().
 *
 * Invariants:
 *  1. in_batch is TRUE exactly when a transaction is open on the writer
 *     (pix_db_get_autocommit() is 0), and a reader never opens one
 *     (pix_store_check()); a failed statement inside it rolls the whole
 *     batch back, so the catalog only ever holds whole batches.  (SQLite
 *     itself ends a transaction on some errors, PIX_DB_FULL or
 *     PIX_DB_IOERR, so the two may differ from a failed statement to the
 *     rollback that follows it, never beyond.)
 *  2. stmts[id] is NULL or statement `id` of s's backend, prepared on
 *     s->db (all of them from pix_store_open() on).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"
#include "log.h"
#include "path.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* From the generated build/schema.c */
extern const int pix_schema_count;

G_DEFINE_QUARK(pix-store-error-quark, pix_store_error)


/* A name built from files.name, of its type: SQL's || makes TEXT, and a
 * name that is not UTF-8 is stored as a BLOB, which no TEXT equals. */
#define SAME_TYPE(expr) "CASE WHEN typeof(files.name) = 'blob' THEN CAST(" expr " AS BLOB) ELSE " expr " END"

/* a metadata row: its columns and parameters */
#define META_ROW \
	" (file_id, date_taken, date_tz, date_source, make, model, lens," \
	" exposure_s, fnumber, iso, focal_mm, orientation, width, height, gps_lat, gps_lon," \
	" gps_alt_m, duration_s, osdb_hash, aperture, exposure_program, metering_mode, flash, gps_time," \
	" gps_direction, gps_direction_ref, description, rating, label, title, caption, creator, copyright," \
	" sublocation, city, province, country, country_code, keywords, people, title_key, caption_key)" \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19," \
	" ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40," \
	" ?41, ?42)"

/* PIX_STORE_SET parameters, numbered on from the last one before them */
#define SET_P4 "?, ?, ?, ?"
#define SET_P16 SET_P4 ", " SET_P4 ", " SET_P4 ", " SET_P4
#define SET_P64 SET_P16 ", " SET_P16 ", " SET_P16 ", " SET_P16
#define SET_PARAMS SET_P64 ", " SET_P64 ", " SET_P64 ", " SET_P64
G_STATIC_ASSERT(PIX_STORE_SET == 256);

/* directory d is at or below the path ?1 (as text; ?2 as a blob) and
 * present: ?3..?6 are the bounds of pix_store_bind_below() */
#define DIR_UNDER \
	"d.state <> 'missing' AND" \
	" (d.path = ?1 OR d.path = ?2 OR (d.path > ?3 AND d.path < ?4) OR (d.path > ?5 AND d.path < ?6))" \
	ONLINE_DIR
/* dirs_by_path is on the first PG_PREFIX bytes: each comparison also on
 * those, which x > y and x < y imply */
#define PG_DIR_UNDER \
	"d.state <> 'missing' AND" \
	" ((" PG_PRE("d.path") " = " PG_PRE("?1::bytea") " AND d.path = ?1)" \
	" OR (" PG_PRE("d.path") " = " PG_PRE("?2::bytea") " AND d.path = ?2)" \
	" OR (" PG_PRE("d.path") " BETWEEN " PG_PRE("?3::bytea") " AND " PG_PRE("?4::bytea") \
	" AND d.path > ?3 AND d.path < ?4)" \
	" OR (" PG_PRE("d.path") " BETWEEN " PG_PRE("?5::bytea") " AND " PG_PRE("?6::bytea") \
	" AND d.path > ?5 AND d.path < ?6))" \
	ONLINE_DIR
/* the content's files that a scan with thumbnails must read again: at or
 * below a root (DIR_UNDER's ?1..?6), an image, a RAW file or a video,
 * whose content has no thumbnail nor a note of maker version ?7 or later */
#define THUMBS_WANTED(under) \
	"UPDATE files SET recheck = 1 WHERE recheck = 0 AND state IN ('ok', 'error') AND md5 IS NOT NULL" \
	" AND media IN ('image', 'raw', 'video')" \
	" AND dir_id IN (SELECT d.id FROM dirs d WHERE " under ")" \
	" AND NOT EXISTS (SELECT 1 FROM thumbs t WHERE t.md5 = files.md5 AND t.size = files.size" \
	" AND (t.note IS NULL OR t.version >= ?7))"

/* a directory's row, by its volume and path: what a listing that failed
 * does not know, the row keeps; a directory --quick did not list keeps the
 * run that did */
#define DIR_UPSERT DIR_UPSERT_AS("rel_path")
#define DIR_UPSERT_AS(key) \
	"INSERT INTO dirs (id, parent_id, path, dev, ino, mtime_ns, ctime_ns, state, error, scanned_at, fsid," \
	" listed_scan_id, volume_id, rel_path) VALUES (?15, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13, ?14)" \
	" ON CONFLICT (volume_id, " key ") DO UPDATE SET parent_id = coalesce(?1, dirs.parent_id)," \
	/* the key's row under another id: a NULL path, which the column refuses */ \
	" path = CASE WHEN dirs.id = ?15 THEN ?2 END," \
	" dev = coalesce(?3, dirs.dev), ino = coalesce(?4, dirs.ino), mtime_ns = coalesce(?5, dirs.mtime_ns)," \
	" ctime_ns = coalesce(?6, dirs.ctime_ns), state = ?7, error = ?8, scanned_at = ?9," \
	" fsid = coalesce(?10, dirs.fsid), listed_scan_id = CASE WHEN ?12 THEN dirs.listed_scan_id ELSE ?11 END"

static const char *const statement_sql[N_STATEMENTS] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_FILE_AT] = "SELECT id, media FROM files WHERE dir_id = ?1 AND name = ?2",
	/* sidecars (see relink()): of directories ?1..., those with one, or
	 * with a file linked to one */
	[ST_SIDECAR_DIRS] =
		"SELECT d.id FROM dirs d WHERE d.id IN (" SET_PARAMS ")"
		" AND (EXISTS (SELECT 1 FROM files WHERE dir_id = d.id AND media = 'sidecar' AND state <> 'missing')"
		" OR EXISTS (SELECT 1 FROM files WHERE dir_id = d.id AND sidecar_id IS NOT NULL))",
	/* the files sidecar ?1 ("?4.xmp") is, or may be, the sidecar of: those
	 * linked to it, the one named ?4 (IMG_1.CR2.xmp), those named ?4 plus
	 * an extension (IMG_1.xmp: between ?5 = "?4." and ?6 = "?4/"); names
	 * bound as the table stores them (BLOB when not UTF-8) */
	[ST_SIDECAR_IMAGES] =
		"SELECT id FROM files WHERE sidecar_id = ?1"
		" UNION SELECT id FROM files WHERE dir_id = ?2 AND media IN ('image', 'raw', 'video')"
		" AND (name = ?4 OR (name > ?5 AND name < ?6))",
	/* IMG_1.CR2.xmp (darktable, digiKam) or IMG_1.xmp (Lightroom), .xmp
	 * or .XMP; the longer name wins; each name looked up in the index */
	[ST_SIDECAR_LINK] =
		"UPDATE files SET sidecar_id = (SELECT x.id FROM files x"
		"  WHERE x.dir_id = files.dir_id AND x.media = 'sidecar' AND x.state <> 'missing'"
		"  AND x.name IN (" SAME_TYPE("files.name || '.xmp'") ", " SAME_TYPE("files.name || '.XMP'") ","
		"   CASE WHEN instr(substr(files.name, 2), '.') > 0"
		"   THEN " SAME_TYPE("rtrim(files.name, replace(files.name, '.', '')) || 'xmp'") " END,"
		"   CASE WHEN instr(substr(files.name, 2), '.') > 0"
		"   THEN " SAME_TYPE("rtrim(files.name, replace(files.name, '.', '')) || 'XMP'") " END)"
		"  ORDER BY length(x.name) DESC, x.id LIMIT 1)"
		" WHERE id = ?1 AND media IN ('image', 'raw', 'video')",
	/* what was lent is taken back ... */
	[ST_SIDECAR_UNLEND] =
		"UPDATE meta SET date_taken = CASE WHEN lent & 1 <> 0 THEN NULL ELSE date_taken END,"
		" date_tz = CASE WHEN lent & 1 <> 0 THEN NULL ELSE date_tz END,"
		" date_source = CASE WHEN lent & 1 <> 0 THEN NULL ELSE date_source END,"
		" gps_lat = CASE WHEN lent & 2 <> 0 THEN NULL ELSE gps_lat END,"
		" gps_lon = CASE WHEN lent & 2 <> 0 THEN NULL ELSE gps_lon END,"
		" gps_alt_m = CASE WHEN lent & 2 <> 0 THEN NULL ELSE gps_alt_m END, lent = 0"
		" WHERE file_id = ?1 AND lent <> 0",
	[ST_SIDECAR_META_ROW] =
		"INSERT INTO meta (file_id) SELECT id FROM files WHERE id = ?1 AND sidecar_id IS NOT NULL"
		" ON CONFLICT DO NOTHING",
	/* ... and lent again from the sidecar now linked, where the file has
	 * no date (bit 1) or no position (bit 2) of its own */
	[ST_SIDECAR_LEND] =
		"UPDATE meta SET"
		" lent = CASE WHEN meta.date_taken IS NULL AND x.date_taken IS NOT NULL THEN 1 ELSE 0 END"
		"  | CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL AND x.gps_lat IS NOT NULL"
		"  AND x.gps_lon IS NOT NULL THEN 2 ELSE 0 END,"
		" date_taken = coalesce(meta.date_taken, x.date_taken),"
		" date_tz = CASE WHEN meta.date_taken IS NULL THEN x.date_tz ELSE meta.date_tz END,"
		" date_source = CASE WHEN meta.date_taken IS NULL AND x.date_taken IS NOT NULL"
		"  THEN 'sidecar ' || coalesce(x.date_source, '') ELSE meta.date_source END,"
		" gps_lat = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL THEN x.gps_lat ELSE meta.gps_lat END,"
		" gps_lon = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL THEN x.gps_lon ELSE meta.gps_lon END,"
		" gps_alt_m = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL AND x.gps_lat IS NOT NULL"
		"  THEN x.gps_alt_m ELSE meta.gps_alt_m END"
		" FROM files f JOIN meta x ON x.file_id = f.sidecar_id"
		" WHERE f.id = ?1 AND meta.file_id = ?1",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	/* its id known (?15: plan found it, or a new one's, put_dir()):
	 * nothing to wait for; a row gone meanwhile comes back under that id,
	 * and one under that id with another path fails the batch, never
	 * leaves its files on another row */
	[ST_DIR_UPSERT] = DIR_UPSERT,
	[ST_DIR_MISSING] = "UPDATE dirs SET state = 'missing' WHERE id = ?1",
	[ST_FILE_INSERT] =
		"INSERT INTO files (id, dir_id, name, dev, ino, mode, size, mtime_ns, ctime_ns, md5,"
		" mime, media, state, error, recheck, first_seen_at, changed_at, hashed_at)"
		" VALUES (?17, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, ?16)",
	[ST_FILE_UPDATE_CONTENT] =
		"UPDATE files SET dev = ?2, ino = ?3, mode = ?4, size = ?5, mtime_ns = ?6, ctime_ns = ?7,"
		" md5 = ?8, mime = ?9, media = ?10, state = ?11, error = ?12, recheck = ?13,"
		" changed_at = ?14, hashed_at = ?15, missing_since = NULL,"
		/* a verification that found the content it still has stays true */
		" verified_at = CASE WHEN md5 IS NOT DISTINCT FROM ?8 AND verify_state = 'ok' THEN verified_at END,"
		" verify_state = CASE WHEN md5 IS NOT DISTINCT FROM ?8 AND verify_state = 'ok' THEN verify_state END,"
		" verify_md5 = NULL, verify_error = NULL"
		" WHERE id = ?1 AND dir_id = ?16 AND name = ?17"
		/* a row only while the row is at the path that was read; with
		 * what its keywords and rating were (its own, its sidecar's),
		 * read in the same round trip as the update (schema 0009) */
		" RETURNING (SELECT m.keywords FROM meta m WHERE m.file_id = files.id),"
		" (SELECT m.rating FROM meta m WHERE m.file_id = files.id),"
		" (SELECT CASE WHEN m.people IS NULL THEN 0 ELSE 1 END FROM meta m WHERE m.file_id = files.id),"
		" (SELECT x.keywords FROM meta x WHERE x.file_id = files.sidecar_id),"
		" (SELECT x.rating FROM meta x WHERE x.file_id = files.sidecar_id)",
	[ST_FILE_UPDATE_STAT] =
		"UPDATE files SET dev = ?2, ino = ?3, mode = ?4, size = ?5, mtime_ns = ?6, ctime_ns = ?7,"
		" state = CASE WHEN state <> 'missing' THEN state WHEN error IS NULL THEN 'ok' ELSE 'error' END,"
		" missing_since = NULL"
		" WHERE id = ?1",
	/* only while the row still has the inode plan found it by: a file
	 * recognised by its MD5 may have taken the row over meanwhile */
	[ST_FILE_MOVE] = "UPDATE files SET dir_id = ?2, name = ?3 WHERE id = ?1 AND dev = ?4 AND ino = ?5",
	/* only while the row is still at the path found gone */
	[ST_FILE_MISSING] =
		"UPDATE files SET state = 'missing', missing_since = ?2"
		" WHERE id = ?1 AND dir_id = ?3 AND name = ?4 AND state <> 'missing'",
	/* a file found at a new path by its MD5: the row moves there */
	[ST_FILE_TAKE_OVER] =
		"UPDATE files SET dir_id = ?2, name = ?3, dev = ?4, ino = ?5, mode = ?6, size = ?7,"
		" mtime_ns = ?8, ctime_ns = ?9, md5 = ?10, mime = ?11, media = ?12, state = ?13,"
		" error = ?14, recheck = ?15, hashed_at = ?16, missing_since = NULL,"
		" verified_at = NULL, verify_state = NULL, verify_md5 = NULL, verify_error = NULL"
		" WHERE id = ?1",
	/* only while the row describes the file that was read */
	[ST_FILE_VERIFY] =
		"UPDATE files SET verified_at = ?2, verify_state = ?3, verify_md5 = ?4, verify_error = ?5"
		" WHERE id = ?1 AND dev = ?6 AND ino = ?7 AND size = ?8 AND mtime_ns = ?9",
	/* the rows with one of the contents ?2... (see find_moved()), from
	 * before row ?1; the last column: on a volume not mounted on this host
	 * (PostgreSQL's hosts: its path and device are another host's) */
	[ST_FILES_BY_MD5S] =
		"SELECT f.id, f.name, f.dev, f.ino, f.mode, f.size, f.mtime_ns, f.ctime_ns, f.state,"
		" f.md5, f.recheck, d.path, d.fsid,"
		" CASE WHEN d.volume_id IS NOT NULL AND d.volume_id NOT IN " ONLINE_VOLUMES " THEN 1 ELSE 0 END"
		" FROM files f JOIN dirs d ON d.id = f.dir_id"
		" WHERE f.id <= ?1 AND f.md5 IN (" SET_PARAMS ")",
	[ST_META_REPLACE] = "INSERT OR REPLACE INTO meta" META_ROW,
	/* a new file's: there is no row to replace (and on PostgreSQL a
	 * plain insert goes by COPY, db-pg.c) */
	[ST_META_INSERT] = "INSERT INTO meta" META_ROW,
	[ST_META_DELETE] = "DELETE FROM meta WHERE file_id = ?1",
	/* a file's keyword tree and people (schema 0009); the inserts plain,
	 * so kept and written many rows at once (db.h) */
	[ST_KEYWORD_INSERT] =
		"INSERT INTO keywords (file_id, ord, keyword, parent_ord, depth, path, key, is_assigned)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_KEYWORDS_DELETE] = "DELETE FROM keywords WHERE file_id = ?1",
	[ST_PERSON_INSERT] =
		"INSERT INTO people (file_id, ord, name, key, type, area_x, area_y, area_w, area_h)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_PEOPLE_DELETE] = "DELETE FROM people WHERE file_id = ?1",
	/* an image's keywords and rating as they count (its sidecar's where
	 * it gives them, as file_info), its content */
	[ST_IMAGE_TAGS] =
		"SELECT coalesce(x.keywords, m.keywords), coalesce(x.rating, m.rating), f.md5, f.size FROM files f"
		" LEFT JOIN meta m ON m.file_id = f.id LEFT JOIN meta x ON x.file_id = f.sidecar_id WHERE f.id = ?1",
	/* the images sidecar ?1 is linked to, with their own values */
	[ST_SIDECAR_TAGGED] =
		"SELECT f.id, f.md5, f.size, m.keywords, m.rating FROM files f LEFT JOIN meta m ON m.file_id = f.id"
		" WHERE f.sidecar_id = ?1",
	/* ?12 is not used: it is the seq of ST_CHANGE_INSERT_SEQ */
	[ST_CHANGE_INSERT] =
		"INSERT INTO changes (scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5,"
		" old_size, new_size, volume_id, old_keywords, new_keywords, old_rating, new_rating)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13, ?14, ?15, ?16)",
	/* directories ?2... of volume ?1 */
	[ST_FIND_DIRS] =
		"SELECT id, path, state, rel_path FROM dirs WHERE volume_id = ?1 AND rel_path IN (" SET_PARAMS ")",
	/* the files of directories ?1... (the last column: which) */
	[ST_DIRS_FILES] =
		"SELECT id, name, dev, ino, mode, size, mtime_ns, ctime_ns, state, md5, recheck, dir_id"
		" FROM files WHERE dir_id IN (" SET_PARAMS ")",
	/* inodes ?2... of device ?1 */
	[ST_FILES_BY_INODES] =
		"SELECT f.id, f.name, f.dev, f.ino, f.mode, f.size, f.mtime_ns, f.ctime_ns, f.state,"
		" f.md5, f.recheck, d.path, d.fsid FROM files f JOIN dirs d ON d.id = f.dir_id"
		" WHERE f.dev = ?1 AND f.ino IN (" SET_PARAMS ")" ONLINE_DIR,
	[ST_DIRS_UNDER] = "SELECT d.id, d.path, d.state FROM dirs d WHERE " DIR_UNDER,
	[ST_HAS_DEV] = "SELECT 1 FROM files f JOIN dirs d ON d.id = f.dir_id WHERE f.dev = ?1" ONLINE_DIR " LIMIT 1",
	/* as listed by a run that finished */
	[ST_DIR_STAT] =
		"SELECT d.id, d.dev, d.ino, d.mtime_ns, d.ctime_ns, s.started_at FROM dirs d"
		" JOIN scans s ON s.id = d.listed_scan_id"
		" WHERE d.volume_id = ?1 AND d.rel_path = ?3 AND d.state = 'ok' AND (s.state = 'done' OR s.id = ?2)",
	/* files present, and of those the ones a scan must read again:
	 * flagged for a recheck, or regular files never read */
	[ST_DIR_FILE_COUNTS] =
		"SELECT count(*), coalesce(sum(CASE WHEN recheck <> 0 OR (md5 IS NULL AND (mode & 61440) = 32768)"
		" THEN 1 ELSE 0 END), 0)"
		" FROM files WHERE dir_id = ?1 AND state <> 'missing'",
	[ST_SUBDIRS] = "SELECT path FROM dirs WHERE parent_id = ?1 AND state <> 'missing'",
	[ST_VOLUME_FIND] = "SELECT id FROM volumes WHERE kind = ?1 AND ident = ?2",
	[ST_VOLUME_INSERT] =
		"INSERT INTO volumes (kind, ident, uuid, label, fstype, source, mount_point, mount_root, dev,"
		" is_online, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10)"
		" RETURNING id",
	/* a content's thumbnail; a note gives way to a thumbnail, never the
	 * other way */
	[ST_THUMB_PUT] =
		"INSERT INTO thumbs (md5, size, version, source, note, large_width, large_height, large_jpeg,"
		" xlarge_width, xlarge_height, xlarge_jpeg, made_at, phash, phash_weak, phash_version)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
		" ON CONFLICT (md5, size) DO UPDATE SET version = excluded.version, source = excluded.source,"
		" note = excluded.note, large_width = excluded.large_width, large_height = excluded.large_height,"
		" large_jpeg = excluded.large_jpeg, xlarge_width = excluded.xlarge_width,"
		" xlarge_height = excluded.xlarge_height, xlarge_jpeg = excluded.xlarge_jpeg, made_at = excluded.made_at,"
		" phash = excluded.phash, phash_weak = excluded.phash_weak, phash_version = excluded.phash_version"
		" WHERE thumbs.note IS NOT NULL",
	/* content ?1 of size ?2, when no file has it any more */
	[ST_THUMB_DROP] =
		"DELETE FROM thumbs WHERE md5 = ?1 AND size = ?2"
		" AND NOT EXISTS (SELECT 1 FROM files f WHERE f.md5 = ?1 AND f.size = ?2)",
	[ST_THUMBS_DROP_UNUSED] =
		"DELETE FROM thumbs WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.md5 = thumbs.md5 AND f.size = thumbs.size)",
	[ST_THUMBS_WANTED] = THUMBS_WANTED(DIR_UNDER),
	/* the contents a copy of needs no decode: not those whose note is
	 * of an older maker, which ST_THUMBS_WANTED sends to be read again */
	[ST_THUMBS_ALL] = "SELECT size, md5 FROM thumbs WHERE note IS NULL OR version >= "
		G_STRINGIFY(PIX_THUMB_VERSION),
	/* the renditions of the contents ?2... (by MD5: the caller matches
	 * the size) that have a thumbnail; ?1 says which JPEGs to send (1 the
	 * 256 px, 2 the 512 px, 3 both), so an export reads what it writes */
	[ST_THUMBS_BY_MD5S] =
		"SELECT md5, size, large_width, large_height, CASE WHEN ?1 IN (1, 3) THEN large_jpeg END,"
		" xlarge_width, xlarge_height, CASE WHEN ?1 IN (2, 3) THEN xlarge_jpeg END"
		" FROM thumbs WHERE note IS NULL AND md5 IN (" SET_PARAMS ")",
	[ST_THUMBS_SIZE] =
		"SELECT count(*), coalesce(sum(CASE WHEN note IS NULL THEN 1 ELSE 0 END), 0),"
		" coalesce(sum(length(large_jpeg) + length(xlarge_jpeg)), 0) FROM thumbs",
	/* the contents whose perceptual hash is of no version or an older one
	 * than ?1 (store-phash.c), a chunk at a time: each chunk written
	 * leaves the index's range */
	[ST_PHASH_WANTED] =
		"SELECT md5, size, note, large_jpeg FROM thumbs WHERE phash_version IS NULL OR phash_version < ?1"
		" LIMIT " G_STRINGIFY(PIX_PHASH_CHUNK),
	[ST_PHASH_SET] =
		"UPDATE thumbs SET phash = ?3, phash_weak = ?4, phash_version = ?5 WHERE md5 = ?1 AND size = ?2",
};

/*
 * The statements PostgreSQL says differently (sql.h: the rest is written
 * in what both accept, and only its parameters are spelt $N).  Names and paths are bytea there, every
 * one of them: no SAME_TYPE, and no replace() (a name's stem is cut in
 * its 'escape' text, where no byte but '.' itself is a '.').  Integers
 * are no booleans there.  This host is the connection's photoidx.host
 * (PG_THIS_HOST), never a parameter.
 */
#define PG_STEM(n) "decode(regexp_replace(encode(" n ", 'escape'), '[^.]*$', ''), 'escape')"
const char *const pix_store_statements_pg[N_STATEMENTS] = {
	/* SQLite's IMMEDIATE takes the write lock at once; PostgreSQL's rows
	 * lock as they are written, and the run's lock is an advisory one */
	[ST_BEGIN] = "BEGIN",
	[ST_SIDECAR_LINK] =
		"UPDATE files SET sidecar_id = (SELECT x.id FROM files x"
		"  WHERE x.dir_id = files.dir_id AND x.media = 'sidecar' AND x.state <> 'missing'"
		"  AND x.name IN (files.name || '.xmp'::bytea, files.name || '.XMP'::bytea,"
		"   CASE WHEN position('.'::bytea IN substring(files.name FROM 2)) > 0"
		"   THEN " PG_STEM("files.name") " || 'xmp'::bytea END,"
		"   CASE WHEN position('.'::bytea IN substring(files.name FROM 2)) > 0"
		"   THEN " PG_STEM("files.name") " || 'XMP'::bytea END)"
		"  ORDER BY length(x.name) DESC, x.id LIMIT 1)"
		" WHERE id = ?1 AND media IN ('image', 'raw', 'video')",
	[ST_META_REPLACE] =
		"INSERT INTO meta" META_ROW
		" ON CONFLICT (file_id) DO UPDATE SET date_taken = EXCLUDED.date_taken, date_tz = EXCLUDED.date_tz,"
		" date_source = EXCLUDED.date_source, make = EXCLUDED.make, model = EXCLUDED.model,"
		" lens = EXCLUDED.lens, exposure_s = EXCLUDED.exposure_s, fnumber = EXCLUDED.fnumber,"
		" iso = EXCLUDED.iso, focal_mm = EXCLUDED.focal_mm, orientation = EXCLUDED.orientation,"
		" width = EXCLUDED.width, height = EXCLUDED.height, gps_lat = EXCLUDED.gps_lat,"
		" gps_lon = EXCLUDED.gps_lon, gps_alt_m = EXCLUDED.gps_alt_m, duration_s = EXCLUDED.duration_s,"
		" osdb_hash = EXCLUDED.osdb_hash, aperture = EXCLUDED.aperture,"
		" exposure_program = EXCLUDED.exposure_program, metering_mode = EXCLUDED.metering_mode,"
		" flash = EXCLUDED.flash, gps_time = EXCLUDED.gps_time, gps_direction = EXCLUDED.gps_direction,"
		" gps_direction_ref = EXCLUDED.gps_direction_ref, description = EXCLUDED.description,"
		" rating = EXCLUDED.rating, label = EXCLUDED.label, title = EXCLUDED.title, caption = EXCLUDED.caption,"
		" creator = EXCLUDED.creator, copyright = EXCLUDED.copyright, sublocation = EXCLUDED.sublocation,"
		" city = EXCLUDED.city, province = EXCLUDED.province, country = EXCLUDED.country,"
		" country_code = EXCLUDED.country_code, keywords = EXCLUDED.keywords, people = EXCLUDED.people,"
		" title_key = EXCLUDED.title_key, caption_key = EXCLUDED.caption_key, lent = 0",
	/* identities are unique on the SHA-256 of the path or ident
	 * (schema/pg/0002: a btree entry holds at most 2704 bytes, a path
	 * PATH_MAX): the upserts name that index, the lookups go by it */
	[ST_DIR_UPSERT] = DIR_UPSERT_AS(PG_KEY("rel_path")),
	[ST_FIND_DIRS] =
		"WITH v (volume_id) AS (SELECT ?1::bigint),"
		" r (rel_path) AS (SELECT DISTINCT unnest(ARRAY[" SET_PARAMS "]::bytea[]))"
		" SELECT d.id, d.path, d.state, d.rel_path FROM v, r, dirs d"
		" WHERE d.volume_id = v.volume_id AND " PG_KEY("d.rel_path") " = " PG_KEY("r.rel_path")
		" AND d.rel_path = r.rel_path",
	[ST_DIR_STAT] =
		"SELECT d.id, d.dev, d.ino, d.mtime_ns, d.ctime_ns, s.started_at FROM dirs d"
		" JOIN scans s ON s.id = d.listed_scan_id"
		" WHERE d.volume_id = ?1 AND " PG_KEY("d.rel_path") " = " PG_KEY("?3::bytea") " AND d.rel_path = ?3"
		" AND d.state = 'ok' AND (s.state = 'done' OR s.id = ?2)",
	[ST_DIRS_UNDER] = "SELECT d.id, d.path, d.state FROM dirs d WHERE " PG_DIR_UNDER,
	[ST_THUMBS_WANTED] = THUMBS_WANTED(PG_DIR_UNDER),
	[ST_VOLUME_FIND] = "SELECT id FROM volumes WHERE kind = ?1 AND " PG_KEY("ident") " = " PG_KEY("?2::bytea")
		" AND ident = ?2",
	[ST_VOLUME_INSERT] =
		"INSERT INTO volumes (kind, ident, uuid, label, fstype, source, mount_point, mount_root, dev,"
		" is_online, first_seen_at, last_seen_at, host)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10, " PG_THIS_HOST ")"
		" ON CONFLICT (kind, " PG_KEY("ident") ") DO NOTHING RETURNING id",
	/* sequence numbers are given at commit, under one lock for all
	 * writers, so they become visible in their order (issue 18): a
	 * reader that has seen N never later finds an N - 1 */
	[ST_SEQ_LOCK] = "SELECT pg_advisory_xact_lock(" G_STRINGIFY(PIX_PG_LOCK_SEQ) ")",
	[ST_SEQ_MAX] = "SELECT coalesce(max(seq), 0) FROM changes",
	/* as ST_CHANGE_INSERT, numbered (and so sent by COPY at the commit) */
	[ST_CHANGE_INSERT_SEQ] =
		"INSERT INTO changes (scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5,"
		" old_size, new_size, volume_id, seq, old_keywords, new_keywords, old_rating, new_rating)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
	/* entries written by one statement for many rows (forget) */
	[ST_SEQ_ASSIGN] =
		"UPDATE changes c SET seq = n.base + n.r FROM (SELECT id, row_number() OVER (ORDER BY id) AS r,"
		" (SELECT coalesce(max(seq), 0) FROM changes) AS base FROM changes WHERE seq IS NULL) n"
		" WHERE c.id = n.id",
	[ST_SEQ_NOTIFY] = "SELECT pg_notify('photoidx_changes', (SELECT coalesce(max(seq), 0) FROM changes)::text)",
};


static gboolean dir_id_from(gpointer key, gpointer value, gpointer first)
{
	(void)key;
	return (gint64)GPOINTER_TO_SIZE(value) >= *(const gint64 *)first;
}

void pix_store_dirty_reset(PixStore *s)
{
	if (s->dirty == NULL)
		return;
	g_array_set_size(s->dirty, 0);
	g_string_chunk_clear(s->dirty_names);
}

void pix_store_dirty_free(PixStore *s)
{
	if (s->dirty == NULL)
		return;
	g_array_free(g_steal_pointer(&s->dirty), TRUE);
	g_string_chunk_free(g_steal_pointer(&s->dirty_names));
}

void pix_store_batch_gone(PixStore *s)
{
	s->in_batch = FALSE;
	memset(s->counts, 0, sizeof s->counts);
	pix_store_dirty_reset(s);
	if (s->pg_changes != NULL)
		g_array_set_size(s->pg_changes, 0);
	/* volumes the batch inserted are gone with it, and so are its new
	 * directories (ids only grow within a session: theirs are its
	 * highest; SQLite may give them out again) */
	g_hash_table_remove_all(s->volume_ids);
	if (s->batch_dir_id > 0)
		g_hash_table_foreach_remove(s->dir_ids, dir_id_from, &s->batch_dir_id);
	s->batch_dir_id = 0;
}

PixDb *pix_store_db(PixStore *s)
{
	return s->db;
}

gboolean pix_store_check(PixStore *s)
{
	return s != NULL && s->db != NULL &&
	       (s->be->has_lock_file ? (s->mode == PIX_STORE_WRITE) == (s->lock_fd >= 0) : s->lock_fd < 0) &&
	       (!s->in_batch || s->mode == PIX_STORE_WRITE) && s->in_batch == !pix_db_get_autocommit(s->db);
}

int pix_store_schema_version(void)
{
	return pix_schema_count;
}

gint64 pix_store_now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

gboolean pix_store_is_full_errno(int err)
{
	return err == ENOSPC || err == EDQUOT;
}

/* An errno as the catalog's messages say it: a full disk as in
 * pix_store_db_error(). */
const char *pix_store_errno_text(int err)
{
	return pix_store_is_full_errno(err) ? "the disk is full" : g_strerror(err);
}

void pix_store_db_error(GError **error, PixStore *s, int rc, const char *what)
{
	int code;
	switch (rc & 0xff) {
	case PIX_DB_FULL:
		code = PIX_STORE_ERROR_FULL;
		break;
	case PIX_DB_IOERR:
		code = s->db->lite != NULL && pix_store_is_full_errno(sqlite3_system_errno(s->db->lite))
		       ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_FAILED;
		break;
	case PIX_DB_CORRUPT:
	case PIX_DB_NOTADB:
		code = PIX_STORE_ERROR_CORRUPT;
		break;
	case PIX_DB_CANTOPEN:
		code = PIX_STORE_ERROR_OPEN;
		break;
	default:
		code = PIX_STORE_ERROR_FAILED;
	}
	if (pix_db_is_lost(s->db))
		code = PIX_STORE_ERROR_LOST;
	else if (strcmp(pix_db_sqlstate(s->db), "40P01") == 0 || strcmp(pix_db_sqlstate(s->db), "40001") == 0)
		code = PIX_STORE_ERROR_RETRY;
	const char *q = s->display;
	const char *msg = code == PIX_STORE_ERROR_FULL ? "the disk is full" : pix_db_errmsg(s->db);
	/* what to do about it, in one sentence */
	const char *hint = code == PIX_STORE_ERROR_CORRUPT && s->be->corrupt_hint != NULL ? s->be->corrupt_hint : "";
	g_set_error(error, PIX_STORE_ERROR, code, "catalog '%s': %s: %s%s", q, what, msg, hint);
}

/* Runs SQL text without parameters (schema, pragmas). */
gboolean pix_store_exec(PixStore *s, const char *sql, const char *what, GError **error)
{
	int rc = pix_db_exec(s->db, sql);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_pragma_int(PixStore *s, const char *pragma, gint64 *out, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	g_autofree char *sql = g_strdup_printf("PRAGMA %s", pragma);
	int rc = pix_db_prepare(s->db, sql, &st);
	if (rc == PIX_DB_OK)
		rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot read its header");
		return FALSE;
	}
	*out = pix_db_column_int64(st, 0);
	return TRUE;
}

/* `sql` as s's connection runs it (transfer full), see
 * pix_store_prepare(); NULL: as it is. */
static char *sql_here(PixStore *s, const char *sql)
{
	if (s->be->online_volumes == NULL || strstr(sql, ONLINE_VOLUMES) == NULL)
		return NULL;
	g_auto(GStrv) parts = g_strsplit(sql, ONLINE_VOLUMES, -1);
	return g_strjoinv((char *)s->be->online_volumes, parts);
}

int pix_store_prepare(PixStore *s, const char *sql, PixStmt **out)
{
	g_autofree char *here = sql_here(s, sql);
	return pix_db_prepare(s->db, here != NULL ? here : sql, out);
}

/* The SQL of statement `id` on s's backend (NULL: the other's alone). */
static const char *statement_for(PixStore *s, StatementId id)
{
	const char *const *own = s->be->statements;
	return own != NULL && own[id] != NULL ? own[id] : statement_sql[id];
}

/* The prepared statement `id`, reset and with cleared bindings. */
PixStmt *pix_store_stmt(PixStore *s, StatementId id, GError **error)
{
	if (s->stmts[id] == NULL) {
		const char *sql = statement_for(s, id);
		int rc = s->db->lite != NULL ? pix_db_prepare_v(s->db, sql, TRUE, &s->stmts[id])
		                             : pix_store_prepare(s, sql, &s->stmts[id]);
		if (rc != PIX_DB_OK) {
			pix_store_db_error(error, s, rc, "cannot prepare a statement");
			return NULL;
		}
	}
	pix_db_reset(s->stmts[id]);
	pix_db_clear_bindings(s->stmts[id]);
	return s->stmts[id];
}

gboolean pix_store_prepare_all(PixStore *s, guint *n, GError **error)
{
	const char *sqls[N_STATEMENTS];
	g_autoptr(GPtrArray) here = g_ptr_array_new_with_free_func(g_free);  /* PostgreSQL's texts */
	int ids[N_STATEMENTS], n_sqls = 0;
	*n = 0;
	for (int id = 0; id < N_STATEMENTS; id++) {
		const char *sql = statement_for(s, (StatementId)id);
		if (sql == NULL)
			continue;       /* the other backend's alone */
		(*n)++;
		if (s->stmts[id] != NULL)
			continue;
		char *h = sql_here(s, sql);
		if (h != NULL) {
			g_ptr_array_add(here, h);
			sql = h;
		}
		ids[n_sqls] = id;
		sqls[n_sqls++] = sql;
	}
	PixStmt *outs[N_STATEMENTS];
	int failed;
	int rc = pix_db_prepare_many(s->db, sqls, n_sqls, outs, &failed);
	if (rc != PIX_DB_OK) {
		g_autofree char *what = failed >= 0 ? g_strdup_printf("cannot prepare statement %d of the table", ids[failed])
		                                    : g_strdup("cannot prepare the statements");
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	for (int i = 0; i < n_sqls; i++)
		s->stmts[ids[i]] = outs[i];
	return TRUE;
}

/* Binds path bytes: TEXT when valid UTF-8, BLOB otherwise (schema rule). */
void pix_store_bind_path(PixStmt *st, int i, const char *bytes)
{
	gsize len = strlen(bytes);
	if (g_utf8_validate(bytes, (gssize)len, NULL))
		pix_db_bind_text(st, i, bytes, (int)len, PIX_DB_TRANSIENT);
	else
		pix_db_bind_blob(st, i, bytes, (int)len, PIX_DB_TRANSIENT);
}

/* Binds a path as both types, for range queries over mixed columns. */
void pix_store_bind_path_as(PixStmt *st, int i, const char *bytes, gsize len, gboolean is_blob)
{
	if (is_blob)
		pix_db_bind_blob(st, i, bytes, (int)len, PIX_DB_TRANSIENT);
	else
		pix_db_bind_text(st, i, bytes, (int)len, PIX_DB_TRANSIENT);
}

/* Binds the four bounds of "a path below `path`" from parameter `first`:
 * after "path/" and before "path0" ('0' follows '/'), as text (?first,
 * ?first+1) and as blob (?first+2, ?first+3), for columns of both types. */
void pix_store_bind_below(PixStmt *st, int first, const char *path)
{
	g_autofree char *lo = g_strconcat(path, strcmp(path, "/") == 0 ? "" : "/", NULL);
	g_autofree char *hi = g_strdup(lo);
	gsize len = strlen(lo);

	hi[len - 1] = '/' + 1;
	pix_store_bind_path_as(st, first, lo, len, FALSE);
	pix_store_bind_path_as(st, first + 1, hi, len, FALSE);
	pix_store_bind_path_as(st, first + 2, lo, len, TRUE);
	pix_store_bind_path_as(st, first + 3, hi, len, TRUE);
}

void pix_store_bind_text_or_null(PixStmt *st, int i, const char *text)
{
	if (text != NULL)
		pix_db_bind_text(st, i, text, -1, PIX_DB_TRANSIENT);
	else
		pix_db_bind_null(st, i);
}

void pix_store_bind_double_or_null(PixStmt *st, int i, double v)
{
	if (!isnan(v))
		pix_db_bind_double(st, i, v);
	else
		pix_db_bind_null(st, i);
}

void pix_store_bind_int_or_null(PixStmt *st, int i, gint64 v)
{
	if (v >= 0)
		pix_db_bind_int64(st, i, v);
	else
		pix_db_bind_null(st, i);
}

char *pix_store_column_bytes(PixStmt *st, int i)
{
	const void *p = pix_db_column_blob(st, i);
	int n = pix_db_column_bytes(st, i);
	return g_strndup(p != NULL ? p : "", (gsize)n);
}

gboolean pix_store_run_set(PixStore *s, StatementId id, int first, gint64 fixed, guint n, PixSetBind bind,
                           PixSetRow row, gpointer data, const char *what, GError **error)
{
	g_assert(first == 1 || first == 2);
	for (guint from = 0; from < n; from += PIX_STORE_SET) {
		PixStmt *st = pix_store_stmt(s, id, error);
		if (st == NULL)
			return FALSE;
		if (first == 2)
			pix_db_bind_int64(st, 1, fixed);
		for (guint k = from; k < n && k < from + PIX_STORE_SET; k++)
			bind(st, first + (int)(k - from), k, data);
		int rc;
		while ((rc = pix_db_step(st)) == PIX_DB_ROW)
			row(st, data);
		pix_db_reset(st);
		if (rc != PIX_DB_DONE) {
			pix_store_db_error(error, s, rc, what);
			return FALSE;
		}
	}
	return TRUE;
}

/* Steps a statement that returns no rows (or whose rows are ignored). */
gboolean pix_store_step_done(PixStore *s, PixStmt *st, const char *what, GError **error)
{
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		;
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	return TRUE;
}

const char *pix_store_state_name(PixFileState state)
{
	switch (state) {
	case PIX_STATE_OK:
		return "ok";
	case PIX_STATE_ERROR:
		return "error";
	case PIX_STATE_MISSING:
		return "missing";
	case PIX_STATE_OFFLINE:
		return "offline";
	}
	g_assert_not_reached();
}

PixFileState pix_store_state_from(const unsigned char *text)
{
	if (text != NULL && strcmp((const char *)text, "error") == 0)
		return PIX_STATE_ERROR;
	if (text != NULL && strcmp((const char *)text, "missing") == 0)
		return PIX_STATE_MISSING;
	if (text != NULL && strcmp((const char *)text, "offline") == 0)
		return PIX_STATE_OFFLINE;
	return PIX_STATE_OK;
}

/* A single-value query: its integer, or -1 without a row. */
gboolean pix_store_query_int(PixStore *s, PixStmt *st, gint64 *out, const char *what, GError **error)
{
	int rc = pix_db_step(st);
	*out = rc == PIX_DB_ROW ? pix_db_column_int64(st, 0) : -1;
	if (rc != PIX_DB_ROW && rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, what);
		pix_db_reset(st);
		return FALSE;
	}
	pix_db_reset(st);
	return TRUE;
}

/* Runs `sql` with integer parameters ?1.. = args (n of them). */
gboolean pix_store_run_ints(PixStore *s, const char *sql, const char *what, GError **error, int n, ...)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s, sql, &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	va_list ap;
	va_start(ap, n);
	for (int i = 1; i <= n; i++)
		pix_db_bind_int64(st, i, va_arg(ap, gint64));
	va_end(ap);
	return pix_store_step_done(s, st, what, error);
}

/* Rows of meta pix_store_fill_text_keys() reads, then writes, at once. */
#define TEXT_KEYS_CHUNK 1000

gboolean pix_store_fill_text_keys(PixStore *s, GError **error)
{
	const char *what = "cannot fill in the keys of titles and captions";
	g_autoptr(PixStmt) rd = NULL;
	g_autoptr(PixStmt) wr = NULL;
	int rc = pix_store_prepare(s, "SELECT file_id, title, caption FROM meta WHERE file_id > ?1"
	                              " AND (title IS NOT NULL OR caption IS NOT NULL) ORDER BY file_id LIMIT ?2", &rd);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, "UPDATE meta SET title_key = ?2, caption_key = ?3 WHERE file_id = ?1", &wr);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
	gint64 last = G_MININT64;
	for (;;) {
		/* the chunk read whole before it is written: a PostgreSQL
		 * connection runs one statement at a time */
		g_array_set_size(ids, 0);
		g_ptr_array_set_size(keys, 0);
		pix_db_reset(rd);
		pix_db_bind_int64(rd, 1, last);
		pix_db_bind_int64(rd, 2, TEXT_KEYS_CHUNK);
		while ((rc = pix_db_step(rd)) == PIX_DB_ROW) {
			last = pix_db_column_int64(rd, 0);
			g_array_append_val(ids, last);
			for (int c = 1; c <= 2; c++)
				g_ptr_array_add(keys, pix_db_column_type(rd, c) == PIX_DB_NULL
				                              ? NULL : pix_tags_key((const char *)pix_db_column_text(rd, c)));
		}
		if (rc != PIX_DB_DONE) {
			pix_store_db_error(error, s, rc, what);
			return FALSE;
		}
		pix_db_reset(rd);
		for (guint i = 0; i < ids->len; i++) {
			pix_db_reset(wr);
			pix_db_bind_int64(wr, 1, g_array_index(ids, gint64, i));
			pix_store_bind_text_or_null(wr, 2, keys->pdata[2 * i]);
			pix_store_bind_text_or_null(wr, 3, keys->pdata[2 * i + 1]);
			if (!pix_store_step_done(s, wr, what, error))
				return FALSE;
		}
		if (ids->len < TEXT_KEYS_CHUNK)
			return TRUE;
	}
}
