/*
 * test-store.c: unit tests of the catalog (src/store.h).
 *
 * Each test opens catalogs in a fresh temporary directory, writes
 * PixItems built by hand (no walk or read stage involved) and reads them
 * back both through the PixStore reader API and through a connection of
 * its own (the schema is a public interface: `file_info`, `changes`,
 * typeof() of path columns, pragmas).
 *
 * Covered: creating a catalog (schema version, WAL, application id, lock
 * file); the writer lock; refusing newer, foreign and non-database files
 * without touching them; a location that cannot be created; READ on a
 * missing file; the file and directory rows, metadata and change log
 * ('added', 'moved', 'missing', 'changed', 'restored', nothing for a
 * recheck that found nothing new) of written items; paths as TEXT or
 * BLOB, byte-exact; pix_store_dirs_under()'s prefix ranges (no sibling
 * with a longer name, no LIKE wildcards); batches invisible until
 * committed, rolled back when the writer is freed or a put fails;
 * pix_store_consume()'s batching by count and by time; scan runs.  Every
 * test that writes ends with PRAGMA integrity_check and foreign_key_check.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "store.h"
#include "store-int.h"
#include "testlib.h"

#include <math.h>
#include <sqlite3.h>
#include <sys/stat.h>

/* A device number no real file in the test has. */
#define DEV 0x7e57
#define OTHER_DEV 0x7e58
#define APPLICATION_ID 0x50495843

static const guint8 MD5_EMPTY[16] = { 0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
                                      0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e };
static const char MD5_EMPTY_HEX[] = "d41d8cd98f00b204e9800998ecf8427e";
static const guint8 MD5_A[16] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                                  0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf };

/* --- catalogs --- */

/* A catalog path in a directory that does not exist yet (the writer
 * creates it). */
static char *new_catalog_path(void)
{
	g_autofree char *dir = pix_test_dir("store");
	return g_build_filename(dir, "sub", "dir", "catalog.db", NULL);
}

static PixStore *open_ok(const char *path, PixStoreMode mode)
{
	GError *error = NULL;
	PixStore *s = pix_store_open(path, mode, TRUE, &error);
	g_assert_no_error(error);
	g_assert_nonnull(s);
	return s;
}

/* --- our own SQL connection --- */

static sqlite3 *sql_open(const char *path)
{
	sqlite3 *db = NULL;
	g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
	sqlite3_busy_timeout(db, 10000);
	return db;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3, sqlite3_close)

static void sql_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		g_error("%s: %s", sql, msg);
}

static sqlite3_stmt *sql_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		g_error("%s: %s", sql, sqlite3_errmsg(db));
	return st;
}

/* The integer in the first column of the first row of `sql`. */
static gint64 sql_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = sql_prepare(db, sql);
	if (sqlite3_step(st) != SQLITE_ROW)
		g_error("%s: no row", sql);
	gint64 v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The text of the first column of the first row, NULL for SQL NULL or no
 * row (transfer full). */
static char *sql_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = sql_prepare(db, sql);
	char *v = NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = g_strndup(sqlite3_column_blob(st, 0), (gsize)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
	return v;
}

static void assert_integrity(const char *path)
{
	g_autoptr(sqlite3) db = sql_open(path);
	g_autofree char *ok = sql_text(db, "PRAGMA integrity_check");
	g_assert_cmpstr(ok, ==, "ok");
	sqlite3_stmt *st = sql_prepare(db, "PRAGMA foreign_key_check");
	g_assert_cmpint(sqlite3_step(st), ==, SQLITE_DONE);
	sqlite3_finalize(st);
}

/* --- items --- */

static PixDir *fake_dir(const char *path, PixDir *parent, guint64 ino)
{
	PixDir *d = pix_dir_new(path);
	if (parent != NULL)
		d->parent = pix_dir_ref(parent);
	d->st = (PixStat){ .dev = DEV, .ino = ino, .mode = S_IFDIR | 0755, .size_bytes = 4096,
	                   .mtime_ns = G_GINT64_CONSTANT(1600000000123456789), .ctime_ns = G_GINT64_CONSTANT(1600000001000000001) };
	return d;
}

static PixStat file_stat(guint64 ino, gint64 size)
{
	return (PixStat){ .dev = DEV, .ino = ino, .mode = S_IFREG | 0644, .size_bytes = size,
	                  .mtime_ns = G_GINT64_CONSTANT(1500000000000000000) + (gint64)ino,
	                  .ctime_ns = G_GINT64_CONSTANT(1500000000500000000) + (gint64)ino };
}

static void put_ok(PixStore *s, PixItem *item)
{
	GError *error = NULL;
	g_assert_true(pix_store_put(s, item, &error));
	g_assert_no_error(error);
	pix_item_free(item);
}

static void commit_ok(PixStore *s)
{
	GError *error = NULL;
	g_assert_true(pix_store_commit(s, &error));
	g_assert_no_error(error);
}

/* Writes the directory row of `d` (which gets its id). */
static void put_dir(PixStore *s, PixDir *d)
{
	put_ok(s, pix_item_new(PIX_ACT_DIR, d, NULL));
	g_assert_cmpint(d->id, >, 0);
}

static PixItem *new_file(PixDir *d, const char *name, guint64 ino, gint64 size, const guint8 *md5)
{
	PixItem *item = pix_item_new(PIX_ACT_ADD, d, name);
	item->st = file_stat(ino, size);
	if (md5 != NULL) {
		memcpy(item->md5, md5, 16);
		item->has_md5 = TRUE;
	}
	item->is_read = TRUE;
	item->bytes_read = size;
	item->mime = "image/jpeg";
	item->media = PIX_MEDIA_IMAGE;
	return item;
}

static void free_rows(GPtrArray *rows)
{
	if (rows != NULL)
		g_ptr_array_unref(rows);
}

static PixFileRow *row_named(GPtrArray *rows, const char *name)
{
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *r = g_ptr_array_index(rows, i);
		if (strcmp(r->name, name) == 0)
			return r;
	}
	return NULL;
}

static GPtrArray *dir_files(PixStore *s, gint64 dir_id)
{
	GError *error = NULL;
	GPtrArray *rows = pix_store_dir_files(s, dir_id, &error);
	g_assert_no_error(error);
	g_assert_nonnull(rows);
	return rows;
}

static PixDirRow *find_dir(PixStore *s, const char *path)
{
	GError *error = NULL;
	PixDirRow *row = NULL;
	/* a directory on the test's device: its volume is that device's */
	g_autoptr(PixDir) d = fake_dir(path, NULL, 1);
	g_assert_true(pix_store_find_dir(s, d, &row, &error));
	g_assert_no_error(error);
	return row;
}

/* --- opening --- */

static void test_create_new_catalog(void)
{
	g_autofree char *path = new_catalog_path();
	g_autofree char *lock = g_strconcat(path, ".lock", NULL);

	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
	g_assert_true(g_file_test(lock, G_FILE_TEST_IS_REGULAR));

	g_autoptr(sqlite3) db = sql_open(path);
	g_assert_cmpint(pix_store_schema_version(), >=, 1);
	g_assert_cmpint(sql_int(db, "PRAGMA user_version"), ==, pix_store_schema_version());
	g_assert_cmpint(sql_int(db, "PRAGMA application_id"), ==, APPLICATION_ID);
	g_autofree char *mode = sql_text(db, "PRAGMA journal_mode");
	g_assert_cmpstr(mode, ==, "wal");
	/* the public interface exists */
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM sqlite_schema WHERE name IN "
	                            "('roots', 'dirs', 'files', 'meta', 'scans', 'changes', 'file_info')"), ==, 7);

	/* reopening an existing catalog migrates nothing and keeps it */
	pix_store_free(w);
	w = open_ok(path, PIX_STORE_WRITE);
	g_assert_cmpint(sql_int(db, "PRAGMA user_version"), ==, pix_store_schema_version());
	PixStore *r = open_ok(path, PIX_STORE_READ);
	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

/* Every statement of the table prepares on the catalog's backend: on
 * SQLite here; on PostgreSQL when PIX_TEST_PG_URI names an empty
 * database (t4103 runs this test so). */
static void prepare_all_on(const char *path)
{
	g_autoptr(GError) error = NULL;
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	guint n = 0;
	gboolean ok = pix_store_prepare_all(w, &n, &error);
	g_assert_no_error(error);
	g_assert_true(ok);
	g_assert_cmpuint(n, >, 30);
	if (g_test_verbose())
		g_printerr("%u statements prepared on %s\n", n, path);
	/* a reader's connection takes them too (those it may run) */
	pix_store_free(w);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	ok = pix_store_prepare_all(r, &n, &error);
	g_assert_no_error(error);
	g_assert_true(ok);
	pix_store_free(r);
}

static void test_every_statement_prepares(void)
{
	g_autofree char *path = new_catalog_path();
	prepare_all_on(path);
}

static void test_every_statement_prepares_pg(void)
{
	const char *uri = g_getenv("PIX_TEST_PG_URI");
	if (uri == NULL || *uri == '\0') {
		g_test_skip("PIX_TEST_PG_URI is not set (t4103-pg-statements.sh sets it)");
		return;
	}
	prepare_all_on(uri);
}

/* A statement of the table that the catalog refuses (here a column a
 * hand-edited catalog lacks) fails the open, for writers and readers,
 * naming the statement: not the first rescan that would reach it. */
static void test_refused_statement_fails_open(void)
{
	g_autofree char *path = new_catalog_path();
	pix_store_free(open_ok(path, PIX_STORE_WRITE));
	{
		g_autoptr(sqlite3) db = sql_open(path);
		sql_exec(db, "ALTER TABLE files RENAME COLUMN recheck TO recheck_old");
	}
	const PixStoreMode modes[] = { PIX_STORE_WRITE, PIX_STORE_READ };
	for (guint i = 0; i < G_N_ELEMENTS(modes); i++) {
		g_autoptr(GError) error = NULL;
		PixStore *s = pix_store_open(path, modes[i], TRUE, &error);
		g_assert_null(s);
		g_assert_nonnull(error);
		g_assert_nonnull(strstr(error->message, "cannot prepare statement"));
		g_assert_nonnull(strstr(error->message, "recheck"));
	}
}

static void test_companion_paths(void)
{
	g_auto(GStrv) paths = pix_store_companion_paths("/x/catalog.db");
	g_assert_cmpuint(g_strv_length(paths), ==, 5);
	static const char *const want[] = { "/x/catalog.db", "/x/catalog.db-wal", "/x/catalog.db-shm",
	                                    "/x/catalog.db-journal", "/x/catalog.db.lock" };
	for (guint i = 0; i < G_N_ELEMENTS(want); i++)
		g_assert_true(g_strv_contains((const char *const *)paths, want[i]));
}

/* flock locks belong to the open file description, so a second open in
 * this same process meets the first one's lock as another process would. */
static void test_second_writer_locked(void)
{
	g_autofree char *path = new_catalog_path();
	GError *error = NULL;

	PixStore *first = open_ok(path, PIX_STORE_WRITE);
	PixStore *second = pix_store_open(path, PIX_STORE_WRITE, TRUE, &error);
	g_assert_null(second);
	g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOCKED);
	g_clear_error(&error);

	/* readers are not locked out */
	PixStore *reader = open_ok(path, PIX_STORE_READ);
	pix_store_free(reader);

	/* the lock goes with the writer */
	pix_store_free(first);
	second = open_ok(path, PIX_STORE_WRITE);
	pix_store_free(second);
	assert_integrity(path);
}

/* Whether `text` holds the number `n` as a token of its own. */
static gboolean has_number(const char *text, gint64 n)
{
	g_autofree char *pattern = g_strdup_printf("(^|[^0-9])%" G_GINT64_FORMAT "([^0-9]|$)", n);
	return g_regex_match_simple(pattern, text, 0, 0);
}

static void test_newer_schema_refused(void)
{
	g_autofree char *path = new_catalog_path();
	const gint64 newer = 4242;
	GError *error = NULL;

	pix_store_free(open_ok(path, PIX_STORE_WRITE));
	{
		g_autoptr(sqlite3) db = sql_open(path);
		sql_exec(db, "PRAGMA user_version = 4242");
	}

	static const PixStoreMode modes[] = { PIX_STORE_WRITE, PIX_STORE_READ };
	for (guint i = 0; i < G_N_ELEMENTS(modes); i++) {
		PixStore *s = pix_store_open(path, modes[i], TRUE, &error);
		g_assert_null(s);
		g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_NEWER);
		/* both versions, read outside the path (which has digits too) */
		g_autofree char *quoted = pix_quote(path);
		g_auto(GStrv) parts = g_strsplit(error->message, quoted, -1);
		g_autofree char *without_path = g_strjoinv("", parts);
		if (!has_number(without_path, newer) || !has_number(without_path, pix_store_schema_version()))
			g_error("message does not name versions %" G_GINT64_FORMAT " and %d: %s", newer,
			        pix_store_schema_version(), error->message);
		g_clear_error(&error);
	}
	g_autoptr(sqlite3) db = sql_open(path);
	g_assert_cmpint(sql_int(db, "PRAGMA user_version"), ==, newer);
	assert_integrity(path);
}

static void test_foreign_database_refused(void)
{
	g_autofree char *dir = pix_test_dir("foreign");
	g_autofree char *path = g_build_filename(dir, "other.db", NULL);
	g_autofree char *other_app = g_build_filename(dir, "other-app.db", NULL);
	GError *error = NULL;

	{
		g_autoptr(sqlite3) db = NULL;
		g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
		sql_exec(db, "CREATE TABLE photos (path TEXT); INSERT INTO photos VALUES ('x.jpg')");
		g_autoptr(sqlite3) db2 = NULL;
		g_assert_cmpint(sqlite3_open(other_app, &db2), ==, SQLITE_OK);
		sql_exec(db2, "PRAGMA application_id = 305419896; CREATE TABLE t (x)");
	}
	const char *const files[] = { path, other_app };
	for (guint f = 0; f < G_N_ELEMENTS(files); f++) {
		for (PixStoreMode mode = PIX_STORE_READ; mode <= PIX_STORE_WRITE; mode++) {
			PixStore *s = pix_store_open(files[f], mode, TRUE, &error);
			g_assert_null(s);
			g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FOREIGN);
			g_clear_error(&error);
		}
	}
	/* untouched: no tables added, not switched to WAL */
	g_autoptr(sqlite3) db = sql_open(path);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM sqlite_schema"), ==, 1);
	g_autofree char *mode = sql_text(db, "PRAGMA journal_mode");
	g_assert_cmpstr(mode, ==, "delete");
	g_assert_cmpint(sql_int(db, "PRAGMA user_version"), ==, 0);
}

static void test_not_a_database(void)
{
	g_autofree char *dir = pix_test_dir("notadb");
	g_autofree char *path = g_build_filename(dir, "catalog.db", NULL);
	GString *junk = g_string_new(NULL);
	GError *error = NULL;

	for (guint i = 0; i < 400; i++)
		g_string_append(junk, "this is a text file, not SQLite\n");
	pix_test_write(path, junk->str, junk->len);
	PixStore *s = pix_store_open(path, PIX_STORE_WRITE, TRUE, &error);
	g_assert_null(s);
	g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_CORRUPT);
	g_clear_error(&error);

	g_autofree char *after = NULL;
	gsize len = 0;
	g_assert_true(g_file_get_contents(path, &after, &len, NULL));
	g_assert_cmpmem(after, len, junk->str, junk->len);
	g_string_free(junk, TRUE);
}

/* A catalog whose directory cannot be made: an OPEN error naming it, and
 * nothing left behind. */
static void test_unwritable_location(void)
{
	g_autofree char *dir = pix_test_dir("unwritable");
	g_autofree char *file = g_build_filename(dir, "a-file", NULL);
	g_autofree char *path = g_build_filename(file, "sub", "catalog.db", NULL);
	GError *error = NULL;

	pix_test_write(file, "x", 1);
	PixStore *s = pix_store_open(path, PIX_STORE_WRITE, TRUE, &error);
	g_assert_null(s);
	g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN);
	g_assert_nonnull(strstr(error->message, "a-file"));
	g_clear_error(&error);
}

static void test_read_missing_catalog(void)
{
	g_autofree char *path = new_catalog_path();
	GError *error = NULL;

	PixStore *s = pix_store_open(path, PIX_STORE_READ, TRUE, &error);
	g_assert_null(s);
	g_assert_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN);
	g_clear_error(&error);
	/* a reader creates nothing */
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));

	/* nor does it accept an empty file (a catalog never migrated) */
	g_autofree char *dir = g_path_get_dirname(path);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	pix_test_write(path, "", 0);
	s = pix_store_open(path, PIX_STORE_READ, TRUE, &error);
	g_assert_null(s);
	g_assert_nonnull(error);
	g_clear_error(&error);
}

/* --- writing and reading back --- */

static void test_put_and_read_back(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) root = fake_dir("/pix/a", NULL, 100);
	g_autoptr(PixDir) sub = fake_dir("/pix/a/sub", root, 101);
	gint64 new_before = pix_count_get(PIX_N_NEW);
	gint64 errors_before = pix_count_get(PIX_N_ERRORS);

	put_dir(w, root);
	put_dir(w, sub);

	PixItem *a = new_file(root, "a.jpg", 1001, 12345, MD5_EMPTY);
	a->meta = pix_meta_new();
	a->meta->make = g_strdup("Canon");
	a->meta->model = g_strdup("Canon EOS 5D");
	a->meta->date_taken = g_strdup("2021-07-04T13:45:56.123");
	a->meta->date_tz = g_strdup("+02:00");
	a->meta->date_source = "DateTimeOriginal";
	a->meta->iso = 400;
	a->meta->exposure_s = 0.004;
	a->meta->orientation = 6;
	a->meta->width_px = 640;
	a->meta->height_px = 480;
	a->meta->gps_lat = -33.8568;
	a->meta->gps_lon = 151.2153;
	a->meta->gps_alt_m = -12.5;
	put_ok(w, a);

	PixItem *broken = new_file(root, "broken.jpg", 1002, 10, NULL);
	pix_item_set_error(broken, "cannot read: Input/output error");
	put_ok(w, broken);

	PixItem *c = new_file(sub, "c.png", 1003, 7, MD5_A);
	c->mime = "image/png";
	put_ok(w, c);
	commit_ok(w);
	g_assert_cmpint(pix_count_get(PIX_N_NEW), ==, new_before + 3);
	g_assert_cmpint(pix_count_get(PIX_N_ERRORS), ==, errors_before + 1);

	PixStore *r = open_ok(path, PIX_STORE_READ);
	PixDirRow *dr = find_dir(r, "/pix/a");
	g_assert_nonnull(dr);
	g_assert_cmpint(dr->id, ==, root->id);
	g_assert_cmpstr(dr->path, ==, "/pix/a");
	g_assert_cmpint(dr->state, ==, PIX_STATE_OK);
	pix_dir_row_free(dr);
	g_assert_null(find_dir(r, "/pix"));
	g_assert_null(find_dir(r, "/pix/a/"));

	GPtrArray *rows = dir_files(r, root->id);
	g_assert_cmpuint(rows->len, ==, 2);
	PixFileRow *ra = row_named(rows, "a.jpg");
	g_assert_nonnull(ra);
	PixStat want = file_stat(1001, 12345);
	g_assert_cmpuint(ra->st.dev, ==, want.dev);
	g_assert_cmpuint(ra->st.ino, ==, want.ino);
	g_assert_cmpuint(ra->st.mode, ==, want.mode);
	g_assert_cmpint(ra->st.size_bytes, ==, want.size_bytes);
	g_assert_cmpint(ra->st.mtime_ns, ==, want.mtime_ns);
	g_assert_cmpint(ra->st.ctime_ns, ==, want.ctime_ns);
	g_assert_true(ra->has_md5);
	g_assert_cmpmem(ra->md5, 16, MD5_EMPTY, 16);
	g_assert_cmpint(ra->state, ==, PIX_STATE_OK);
	g_assert_false(ra->is_recheck);
	g_assert_null(ra->dir_path);
	PixFileRow *rb = row_named(rows, "broken.jpg");
	g_assert_nonnull(rb);
	g_assert_false(rb->has_md5);
	g_assert_cmpint(rb->state, ==, PIX_STATE_ERROR);
	free_rows(rows);
	rows = dir_files(r, sub->id);
	g_assert_cmpuint(rows->len, ==, 1);
	free_rows(rows);

	/* by inode, with the directory's path */
	GError *error = NULL;
	rows = pix_store_files_by_inode(r, DEV, 1003, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(rows->len, ==, 1);
	g_assert_cmpstr(((PixFileRow *)g_ptr_array_index(rows, 0))->name, ==, "c.png");
	g_assert_cmpstr(((PixFileRow *)g_ptr_array_index(rows, 0))->dir_path, ==, "/pix/a/sub");
	free_rows(rows);
	rows = pix_store_files_by_inode(r, OTHER_DEV, 1003, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(rows->len, ==, 0);
	free_rows(rows);

	gboolean has = FALSE;
	g_assert_true(pix_store_has_dev(r, DEV, &has, &error));
	g_assert_true(has);
	g_assert_true(pix_store_has_dev(r, OTHER_DEV, &has, &error));
	g_assert_false(has);
	g_assert_no_error(error);

	/* the front ends' view */
	g_autoptr(sqlite3) db = sql_open(path);
	sqlite3_stmt *st = sql_prepare(db,
		"SELECT path, md5, state, error, mime, media, make, model, date_taken, date_tz, date_source,"
		" iso, exposure_s, orientation, width, height, gps_lat, gps_lon, gps_alt_m, size, dev, ino"
		" FROM file_info WHERE name = 'a.jpg'");
	g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 0), ==, "/pix/a/a.jpg");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 1), ==, MD5_EMPTY_HEX);
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 2), ==, "ok");
	g_assert_cmpint(sqlite3_column_type(st, 3), ==, SQLITE_NULL);
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 4), ==, "image/jpeg");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 5), ==, "image");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 6), ==, "Canon");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 7), ==, "Canon EOS 5D");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 8), ==, "2021-07-04T13:45:56.123");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 9), ==, "+02:00");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 10), ==, "DateTimeOriginal");
	g_assert_cmpint(sqlite3_column_int64(st, 11), ==, 400);
	g_assert_cmpfloat_with_epsilon(sqlite3_column_double(st, 12), 0.004, 1e-12);
	g_assert_cmpint(sqlite3_column_int64(st, 13), ==, 6);
	g_assert_cmpint(sqlite3_column_int64(st, 14), ==, 640);
	g_assert_cmpint(sqlite3_column_int64(st, 15), ==, 480);
	g_assert_cmpfloat_with_epsilon(sqlite3_column_double(st, 16), -33.8568, 1e-12);
	g_assert_cmpfloat_with_epsilon(sqlite3_column_double(st, 17), 151.2153, 1e-12);
	g_assert_cmpfloat_with_epsilon(sqlite3_column_double(st, 18), -12.5, 1e-12);
	g_assert_cmpint(sqlite3_column_int64(st, 19), ==, 12345);
	g_assert_cmpint(sqlite3_column_int64(st, 20), ==, DEV);
	g_assert_cmpint(sqlite3_column_int64(st, 21), ==, 1001);
	sqlite3_finalize(st);

	st = sql_prepare(db, "SELECT md5, state, error, make, iso FROM file_info WHERE name = 'broken.jpg'");
	g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
	g_assert_cmpint(sqlite3_column_type(st, 0), ==, SQLITE_NULL);
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 1), ==, "error");
	g_assert_cmpstr((const char *)sqlite3_column_text(st, 2), ==, "cannot read: Input/output error");
	/* no metadata: NULL, never a made-up value */
	g_assert_cmpint(sqlite3_column_type(st, 3), ==, SQLITE_NULL);
	g_assert_cmpint(sqlite3_column_type(st, 4), ==, SQLITE_NULL);
	sqlite3_finalize(st);
	g_autofree char *c_md5 = sql_text(db, "SELECT md5 FROM file_info WHERE path = '/pix/a/sub/c.png'");
	g_assert_cmpstr(c_md5, ==, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");

	/* unknown metadata numbers are NULL, not -1 or NaN */
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM meta WHERE fnumber IS NULL AND focal_mm IS NULL"
	                            " AND lens IS NULL"), ==, 1);
	/* each file added has its 'added' entry, with the new MD5 */
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM changes WHERE kind = 'added'"), ==, 3);
	g_autofree char *added_md5 = sql_text(db, "SELECT lower(hex(c.new_md5)) FROM changes c"
	                                          " JOIN files f ON f.id = c.file_id WHERE f.name = 'a.jpg'");
	g_assert_cmpstr(added_md5, ==, MD5_EMPTY_HEX);
	/* the directory tree */
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM dirs d JOIN dirs p ON p.id = d.parent_id"
	                            " WHERE d.path = '/pix/a/sub' AND p.path = '/pix/a'"), ==, 1);

	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

/* Many directories and inodes asked for at once: more than two sets
 * (PIX_STORE_SET each) of them, one with no row, one asked for twice, and
 * a name that is not UTF-8. */
static void test_find_dirs_in_sets(void)
{
	enum { N_DIRS = 600 };
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) root = fake_dir("/sets", NULL, 50);
	PixDir *dirs[N_DIRS];
	put_dir(w, root);
	for (guint i = 0; i < N_DIRS; i++) {
		g_autofree char *p = i == 7 ? g_strdup("/sets/\377latin") : g_strdup_printf("/sets/d%03u", i);
		dirs[i] = fake_dir(p, root, 100 + i);
		put_dir(w, dirs[i]);
		for (guint j = 0; j < i % 3; j++) {
			g_autofree char *name = g_strdup_printf("f%u.jpg", j);
			put_ok(w, new_file(dirs[i], name, 10000 + 10 * i + j, 100 + j, NULL));
		}
	}
	commit_ok(w);

	PixStore *r = open_ok(path, PIX_STORE_READ);
	g_autoptr(PixDir) absent = fake_dir("/sets/absent", root, 99);
	PixDirQuery q[N_DIRS + 2];
	for (guint i = 0; i < N_DIRS; i++)
		q[i] = (PixDirQuery){ .dir = dirs[i], .want_files = i != 5 };
	q[N_DIRS] = (PixDirQuery){ .dir = absent, .want_files = TRUE };
	q[N_DIRS + 1] = (PixDirQuery){ .dir = dirs[4], .want_files = TRUE };
	GError *error = NULL;
	g_assert_true(pix_store_find_dirs(r, q, N_DIRS + 2, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < N_DIRS; i++) {
		g_assert_nonnull(q[i].row);
		g_assert_cmpint(q[i].row->id, ==, dirs[i]->id);
		g_assert_cmpstr(q[i].row->path, ==, dirs[i]->path);
		if (i == 5) {
			g_assert_null(q[i].files);
			continue;
		}
		g_assert_nonnull(q[i].files);
		g_assert_cmpuint(q[i].files->len, ==, i % 3);
		for (guint j = 0; j < q[i].files->len; j++) {
			const PixFileRow *f = g_ptr_array_index(q[i].files, j);
			g_assert_cmpuint(f->st.ino / 10, ==, 1000 + i);
		}
	}
	g_assert_null(q[N_DIRS].row);
	g_assert_null(q[N_DIRS].files);
	g_assert_nonnull(q[N_DIRS + 1].row);
	g_assert_cmpint(q[N_DIRS + 1].row->id, ==, dirs[4]->id);
	g_assert_cmpuint(q[N_DIRS + 1].files->len, ==, 4 % 3);
	g_assert_true(q[N_DIRS + 1].files != q[4].files);
	pix_dir_queries_clear(q, N_DIRS + 2);

	/* inodes: every file's, one no row has, one twice, one of another device */
	GArray *inodes = g_array_new(FALSE, FALSE, sizeof(PixInode));
	for (guint i = 0; i < N_DIRS; i++)
		for (guint j = 0; j < i % 3; j++) {
			PixInode k = { DEV, 10000 + 10 * i + j };
			g_array_append_val(inodes, k);
		}
	guint n_files = inodes->len;
	PixInode extra[] = { { DEV, 9 }, { DEV, 10021 }, { OTHER_DEV, 10021 } };
	g_array_append_vals(inodes, extra, G_N_ELEMENTS(extra));
	GHashTable *table = pix_store_files_by_inodes(r, (const PixInode *)(void *)inodes->data, inodes->len, &error);
	g_assert_no_error(error);
	g_assert_nonnull(table);
	g_assert_cmpuint(g_hash_table_size(table), ==, n_files + 2);
	for (guint k = 0; k < inodes->len; k++) {
		const PixInode *key = &g_array_index(inodes, PixInode, k);
		GPtrArray *rows = g_hash_table_lookup(table, key);
		g_assert_nonnull(rows);
		gboolean has_row = k < n_files || (key->dev == DEV && key->ino == 10021);
		g_assert_cmpuint(rows->len, ==, has_row ? 1 : 0);
		if (has_row) {
			const PixFileRow *f = g_ptr_array_index(rows, 0);
			g_assert_cmpuint(f->st.ino, ==, key->ino);
			g_assert_nonnull(f->dir_path);
			g_assert_true(g_str_has_prefix(f->dir_path, "/sets/"));
		}
	}
	g_hash_table_destroy(table);
	g_array_free(inodes, TRUE);
	for (guint i = 0; i < N_DIRS; i++)
		pix_dir_unref(dirs[i]);
	pix_store_free(r);
	pix_store_free(w);
}

/* Paths are bytes: valid UTF-8 is stored as TEXT, anything else as BLOB,
 * and both come back byte-exact. */
static void test_names_text_or_blob(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	static const char *const names[] = { "plain.jpg", "caf\xc3\xa9.jpg", "bad\xff\xfe.jpg",
	                                     "latin1 caf\xe9.jpg", "new\nline.jpg" };
	static const gboolean is_blob[] = { FALSE, FALSE, TRUE, TRUE, FALSE };
	g_autoptr(PixDir) d = fake_dir("/pix/odd\xff", NULL, 300);

	put_dir(w, d);
	for (guint i = 0; i < G_N_ELEMENTS(names); i++)
		put_ok(w, new_file(d, names[i], 3000 + i, 1, MD5_A));
	commit_ok(w);

	PixStore *r = open_ok(path, PIX_STORE_READ);
	PixDirRow *dr = find_dir(r, "/pix/odd\xff");
	g_assert_nonnull(dr);
	g_assert_cmpstr(dr->path, ==, "/pix/odd\xff");
	pix_dir_row_free(dr);
	g_assert_null(find_dir(r, "/pix/odd"));
	g_assert_null(find_dir(r, "/pix/odd\xef\xbf\xbd"));   /* no U+FFFD stand-in */

	GPtrArray *rows = dir_files(r, d->id);
	g_assert_cmpuint(rows->len, ==, G_N_ELEMENTS(names));
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		PixFileRow *row = row_named(rows, names[i]);
		g_assert_nonnull(row);
		g_assert_cmpuint(row->st.ino, ==, 3000 + i);
	}
	free_rows(rows);

	g_autoptr(sqlite3) db = sql_open(path);
	sqlite3_stmt *st = sql_prepare(db, "SELECT typeof(name), typeof(path) FROM file_info WHERE ino = ?1");
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, 3000 + i);
		g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
		g_assert_cmpstr((const char *)sqlite3_column_text(st, 0), ==, is_blob[i] ? "blob" : "text");
		/* the directory is not UTF-8, so no full path is */
		g_assert_cmpstr((const char *)sqlite3_column_text(st, 1), ==, "blob");
	}
	sqlite3_finalize(st);
	g_autofree char *dir_type = sql_text(db, "SELECT typeof(path) FROM dirs");
	g_assert_cmpstr(dir_type, ==, "blob");

	/* the full path in file_info is the bytes of dir + '/' + name */
	st = sql_prepare(db, "SELECT path FROM file_info WHERE ino = 3002");
	g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
	g_assert_cmpmem(sqlite3_column_blob(st, 0), sqlite3_column_bytes(st, 0),
	                "/pix/odd\xff/bad\xff\xfe.jpg", strlen("/pix/odd\xff/bad\xff\xfe.jpg"));
	sqlite3_finalize(st);
	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

static int compare_str_ptrs(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* pix_store_dirs_under() as its paths, sorted, joined with '|'. */
static char *dirs_under(PixStore *r, const char *root)
{
	GError *error = NULL;
	GPtrArray *rows = pix_store_dirs_under(r, root, &error);
	g_assert_no_error(error);
	g_assert_nonnull(rows);
	g_autoptr(GPtrArray) paths = g_ptr_array_new();
	for (guint i = 0; i < rows->len; i++)
		g_ptr_array_add(paths, ((PixDirRow *)g_ptr_array_index(rows, i))->path);
	g_ptr_array_sort(paths, compare_str_ptrs);
	g_ptr_array_add(paths, NULL);
	char *joined = g_strjoinv("|", (char **)paths->pdata);
	g_ptr_array_unref(rows);
	return joined;
}

static void test_dirs_under(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	static const char *const paths[] = {
		"/a", "/a/b", "/a/b/c", "/a/b/c/d", "/a/b/\xff", "/a/b/\xff/e",
		"/a/b2", "/a/b-x", "/a/b.x", "/a/b0", "/a/b\xff", "/a/b\xff/f", "/a/bb",
		"/x_y%", "/x_y%/in", "/xzyz/out", "/x_y%z/out", "/a/gone",
	};
	GPtrArray *dirs = g_ptr_array_new_with_free_func((GDestroyNotify)pix_dir_unref);

	for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
		PixDir *d = fake_dir(paths[i], NULL, 500 + i);
		put_dir(w, d);
		g_ptr_array_add(dirs, d);
	}
	/* a missing directory is not "under" anything any more */
	PixDir *gone = g_ptr_array_index(dirs, G_N_ELEMENTS(paths) - 1);
	put_ok(w, pix_item_new(PIX_ACT_DIR_MISSING, gone, NULL));
	commit_ok(w);

	PixStore *r = open_ok(path, PIX_STORE_READ);
	g_autofree char *b = dirs_under(r, "/a/b");
	g_assert_cmpstr(b, ==, "/a/b|/a/b/c|/a/b/c/d|/a/b/\xff|/a/b/\xff/e");
	g_autofree char *bad = dirs_under(r, "/a/b\xff");
	g_assert_cmpstr(bad, ==, "/a/b\xff|/a/b\xff/f");
	/* LIKE wildcards in a root are plain bytes */
	g_autofree char *wild = dirs_under(r, "/x_y%");
	g_assert_cmpstr(wild, ==, "/x_y%|/x_y%/in");
	g_autofree char *leaf = dirs_under(r, "/a/b/c/d");
	g_assert_cmpstr(leaf, ==, "/a/b/c/d");
	g_autofree char *none = dirs_under(r, "/nowhere");
	g_assert_cmpstr(none, ==, "");
	g_autofree char *all = dirs_under(r, "/");
	g_auto(GStrv) all_parts = g_strsplit(all, "|", -1);
	g_assert_cmpuint(g_strv_length(all_parts), ==, G_N_ELEMENTS(paths) - 1);
	g_autofree char *a = dirs_under(r, "/a");
	g_assert_false(strstr(a, "/a/gone") != NULL);

	PixDirRow *gone_row = find_dir(r, "/a/gone");
	g_assert_nonnull(gone_row);
	g_assert_cmpint(gone_row->state, ==, PIX_STATE_MISSING);
	pix_dir_row_free(gone_row);

	g_ptr_array_unref(dirs);
	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

/* A directory that could not be listed is recorded in state 'error'
 * with its reason; listed again, it is 'ok'. */
static void test_dir_error_state(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) d = fake_dir("/pix/locked", NULL, 600);
	g_autoptr(sqlite3) db = sql_open(path);

	d->error = g_strdup("cannot open directory: Permission denied");
	put_dir(w, d);
	commit_ok(w);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	PixDirRow *row = find_dir(r, "/pix/locked");
	g_assert_nonnull(row);
	g_assert_cmpint(row->state, ==, PIX_STATE_ERROR);
	pix_dir_row_free(row);
	g_autofree char *error = sql_text(db, "SELECT error FROM dirs");
	g_assert_cmpstr(error, ==, "cannot open directory: Permission denied");

	/* the same path again: one row, updated */
	g_autoptr(PixDir) again = fake_dir("/pix/locked", NULL, 600);
	put_dir(w, again);
	commit_ok(w);
	g_assert_cmpint(again->id, ==, d->id);
	row = find_dir(r, "/pix/locked");
	g_assert_cmpint(row->state, ==, PIX_STATE_OK);
	pix_dir_row_free(row);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM dirs WHERE error IS NULL"), ==, 1);
	pix_store_free(r);
	pix_store_free(w);

	/* a writer that was not told the row's id (plan always is): the
	 * upsert fails rather than write the key under another id */
	w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) blind = fake_dir("/pix/locked", NULL, 600);
	GError *error2 = NULL;
	PixItem *item = pix_item_new(PIX_ACT_DIR, blind, NULL);
	gboolean is_put = pix_store_put(w, item, &error2);
	pix_item_free(item);
	if (is_put)
		g_assert_false(pix_store_commit(w, &error2));
	g_assert_nonnull(error2);
	g_assert_nonnull(strstr(error2->message, "NOT NULL"));
	g_clear_error(&error2);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM dirs"), ==, 1);
	g_assert_cmpint(sql_int(db, "SELECT id FROM dirs"), ==, d->id);
	pix_store_free(w);
	assert_integrity(path);
}

/* A new directory's id, given by the writer, is remembered for the
 * session, but not past a batch rolled back (SQLite gives it out again). */
static void test_dir_ids_rolled_back(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(sqlite3) db = sql_open(path);
	g_autoptr(PixDir) a = fake_dir("/pix/a", NULL, 100);
	put_dir(w, a);
	put_ok(w, new_file(a, "one.jpg", 1, 1, MD5_A));
	commit_ok(w);

	g_autoptr(PixDir) b = fake_dir("/pix/b", NULL, 200);
	put_dir(w, b);
	gint64 lost_id = b->id;
	PixItem *dup = new_file(a, "one.jpg", 2, 1, MD5_A);
	GError *error = NULL;
	gboolean is_put = pix_store_put(w, dup, &error);
	pix_item_free(dup);
	if (is_put)
		g_assert_false(pix_store_commit(w, &error));
	g_clear_error(&error);

	g_autoptr(PixDir) c = fake_dir("/pix/c", NULL, 300);
	put_dir(w, c);
	g_autoptr(PixDir) b2 = fake_dir("/pix/b", NULL, 200);
	put_dir(w, b2);
	/* planned before the commit: the writer knows the id it gave */
	g_autoptr(PixDir) c2 = fake_dir("/pix/c", NULL, 300);
	put_dir(w, c2);
	commit_ok(w);
	g_assert_cmpint(c2->id, ==, c->id);
	g_assert_cmpint(b2->id, !=, c->id);
	/* SQLite counted on from the rows kept: c got the id b lost */
	g_assert_cmpint(c->id, ==, lost_id);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM dirs"), ==, 3);
	pix_store_free(w);
	assert_integrity(path);
}

/* --- the change log --- */

static gint64 row_id(PixStore *r, PixDir *d, const char *name)
{
	GPtrArray *rows = dir_files(r, d->id);
	PixFileRow *row = row_named(rows, name);
	g_assert_nonnull(row);
	gint64 id = row->id;
	free_rows(rows);
	return id;
}

static void test_change_log(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) a = fake_dir("/pix/a", NULL, 100);
	g_autoptr(PixDir) b = fake_dir("/pix/b", NULL, 200);
	gint64 moved_before = pix_count_get(PIX_N_MOVED);
	gint64 missing_before = pix_count_get(PIX_N_MISSING);
	gint64 changed_before = pix_count_get(PIX_N_CHANGED);

	put_dir(w, a);
	put_dir(w, b);
	put_ok(w, new_file(a, "one.jpg", 1, 100, MD5_EMPTY));
	put_ok(w, new_file(a, "two.jpg", 2, 200, MD5_A));
	commit_ok(w);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	gint64 one = row_id(r, a, "one.jpg"), two = row_id(r, a, "two.jpg");

	/* a rename across directories, recorded without reading */
	PixItem *move = pix_item_new(PIX_ACT_MOVE, b, "moved.jpg");
	move->row_id = one;
	move->old_path = g_strdup("/pix/a/one.jpg");
	move->st = file_stat(1, 100);
	move->old_st = move->st;
	memcpy(move->old_md5, MD5_EMPTY, 16);
	move->has_old_md5 = TRUE;
	put_ok(w, move);

	/* gone, twice: one change */
	for (guint i = 0; i < 2; i++) {
		PixItem *missing = pix_item_new(PIX_ACT_MISSING, a, "two.jpg");
		missing->row_id = two;
		missing->old_st = file_stat(2, 200);
		memcpy(missing->old_md5, MD5_A, 16);
		missing->has_old_md5 = TRUE;
		put_ok(w, missing);
	}

	/* new content at the moved path */
	PixItem *change = pix_item_new(PIX_ACT_CHANGE, b, "moved.jpg");
	change->row_id = one;
	change->st = file_stat(1, 150);
	change->old_st = file_stat(1, 100);
	memcpy(change->md5, MD5_A, 16);
	change->has_md5 = TRUE;
	memcpy(change->old_md5, MD5_EMPTY, 16);
	change->has_old_md5 = TRUE;
	change->is_read = TRUE;
	put_ok(w, change);
	commit_ok(w);

	g_assert_cmpint(pix_count_get(PIX_N_MOVED), ==, moved_before + 1);
	g_assert_cmpint(pix_count_get(PIX_N_MISSING), ==, missing_before + 1);
	g_assert_cmpint(pix_count_get(PIX_N_CHANGED), ==, changed_before + 1);

	g_autoptr(sqlite3) db = sql_open(path);
	sqlite3_stmt *st = sql_prepare(db,
		"SELECT kind, file_id, old_path, new_path, lower(hex(old_md5)), lower(hex(new_md5)),"
		" old_size, new_size FROM changes ORDER BY seq");
	static const struct {
		const char *kind;
		gboolean is_one;
		const char *old_path, *new_path, *old_md5, *new_md5;  /* hex, NULL, or "*": either */
		gint64 old_size, new_size;   /* -1: NULL */
	} want[] = {
		{ "added", TRUE, NULL, NULL, NULL, MD5_EMPTY_HEX, -1, 100 },
		{ "added", FALSE, NULL, NULL, NULL, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", -1, 200 },
		{ "moved", TRUE, "/pix/a/one.jpg", "/pix/b/moved.jpg", "*", "*", 100, 100 },
		{ "missing", FALSE, NULL, NULL, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", NULL, 200, -1 },
		{ "changed", TRUE, NULL, NULL, MD5_EMPTY_HEX, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", 100, 150 },
	};
	for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
		g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
		g_assert_cmpstr((const char *)sqlite3_column_text(st, 0), ==, want[i].kind);
		g_assert_cmpint(sqlite3_column_int64(st, 1), ==, want[i].is_one ? one : two);
		g_assert_cmpstr((const char *)sqlite3_column_text(st, 2), ==, want[i].old_path);
		g_assert_cmpstr((const char *)sqlite3_column_text(st, 3), ==, want[i].new_path);
		const char *old_md5 = (const char *)sqlite3_column_text(st, 4);
		const char *new_md5 = (const char *)sqlite3_column_text(st, 5);
		/* "*": the log may or may not carry it */
		if (g_strcmp0(want[i].old_md5, "*") != 0)
			g_assert_cmpstr(old_md5 != NULL && *old_md5 ? old_md5 : NULL, ==, want[i].old_md5);
		if (g_strcmp0(want[i].new_md5, "*") != 0)
			g_assert_cmpstr(new_md5 != NULL && *new_md5 ? new_md5 : NULL, ==, want[i].new_md5);
		if (want[i].old_size < 0)
			g_assert_cmpint(sqlite3_column_type(st, 6), ==, SQLITE_NULL);
		else
			g_assert_cmpint(sqlite3_column_int64(st, 6), ==, want[i].old_size);
		if (want[i].new_size < 0)
			g_assert_cmpint(sqlite3_column_type(st, 7), ==, SQLITE_NULL);
		else
			g_assert_cmpint(sqlite3_column_int64(st, 7), ==, want[i].new_size);
	}
	g_assert_cmpint(sqlite3_step(st), ==, SQLITE_DONE);
	sqlite3_finalize(st);

	/* the rows themselves */
	g_autofree char *moved_path = sql_text(db, "SELECT path FROM file_info WHERE ino = 1");
	g_assert_cmpstr(moved_path, ==, "/pix/b/moved.jpg");
	g_autofree char *moved_md5 = sql_text(db, "SELECT md5 FROM file_info WHERE ino = 1");
	g_assert_cmpstr(moved_md5, ==, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
	g_autofree char *two_state = sql_text(db, "SELECT state FROM file_info WHERE ino = 2");
	g_assert_cmpstr(two_state, ==, "missing");
	g_assert_cmpint(sql_int(db, "SELECT missing_since IS NOT NULL AND last_seen_at IS NULL"
	                            " FROM file_info WHERE ino = 2"), ==, 1);
	/* a missing row keeps what it knew */
	g_autofree char *two_md5 = sql_text(db, "SELECT md5 FROM file_info WHERE ino = 2");
	g_assert_cmpstr(two_md5, ==, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 2);

	GPtrArray *rows = dir_files(r, a->id);
	g_assert_cmpuint(rows->len, ==, 1);
	g_assert_cmpint(((PixFileRow *)g_ptr_array_index(rows, 0))->state, ==, PIX_STATE_MISSING);
	free_rows(rows);

	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

/* A file read again with the same content (a recheck of a recent mtime)
 * changes nothing in the log; a missing file found again with its old
 * content is 'restored', and 'ok' again. */
static void test_recheck_and_restore(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) d = fake_dir("/pix/r", NULL, 100);
	g_autoptr(sqlite3) db = sql_open(path);

	put_dir(w, d);
	PixItem *racy = new_file(d, "racy.jpg", 1, 100, MD5_A);
	racy->is_racy = TRUE;
	put_ok(w, racy);
	put_ok(w, new_file(d, "back.jpg", 2, 200, MD5_EMPTY));
	commit_ok(w);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	GPtrArray *rows = dir_files(r, d->id);
	g_assert_true(row_named(rows, "racy.jpg")->is_recheck);
	g_assert_false(row_named(rows, "back.jpg")->is_recheck);
	gint64 racy_id = row_named(rows, "racy.jpg")->id, back_id = row_named(rows, "back.jpg")->id;
	free_rows(rows);
	gint64 unchanged_before = pix_count_get(PIX_N_UNCHANGED);

	PixItem *recheck = pix_item_new(PIX_ACT_CHANGE, d, "racy.jpg");
	recheck->row_id = racy_id;
	recheck->st = recheck->old_st = file_stat(1, 100);
	memcpy(recheck->md5, MD5_A, 16);
	memcpy(recheck->old_md5, MD5_A, 16);
	recheck->has_md5 = recheck->has_old_md5 = TRUE;
	recheck->is_read = TRUE;
	put_ok(w, recheck);

	PixItem *missing = pix_item_new(PIX_ACT_MISSING, d, "back.jpg");
	missing->row_id = back_id;
	missing->old_st = file_stat(2, 200);
	put_ok(w, missing);
	PixItem *restored = pix_item_new(PIX_ACT_CHANGE, d, "back.jpg");
	restored->row_id = back_id;
	restored->st = restored->old_st = file_stat(2, 200);
	memcpy(restored->md5, MD5_EMPTY, 16);
	memcpy(restored->old_md5, MD5_EMPTY, 16);
	restored->has_md5 = restored->has_old_md5 = TRUE;
	restored->was_missing = TRUE;
	restored->is_read = TRUE;
	put_ok(w, restored);
	commit_ok(w);

	g_assert_cmpint(pix_count_get(PIX_N_UNCHANGED), ==, unchanged_before + 1);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM changes WHERE file_id = (SELECT id FROM files"
	                            " WHERE name = 'racy.jpg')"), ==, 1);
	g_autofree char *kinds = sql_text(db, "SELECT group_concat(kind, ',') FROM (SELECT kind FROM changes"
	                                      " WHERE file_id = (SELECT id FROM files WHERE name = 'back.jpg')"
	                                      " ORDER BY seq)");
	g_assert_cmpstr(kinds, ==, "added,missing,restored");
	g_autofree char *state = sql_text(db, "SELECT state FROM files WHERE name = 'back.jpg'");
	g_assert_cmpstr(state, ==, "ok");
	g_assert_cmpint(sql_int(db, "SELECT missing_since IS NULL FROM files WHERE name = 'back.jpg'"), ==, 1);
	/* the recheck cleared the flag */
	g_assert_cmpint(sql_int(db, "SELECT recheck FROM files WHERE name = 'racy.jpg'"), ==, 0);
	pix_store_free(r);
	pix_store_free(w);
	assert_integrity(path);
}

/* --- transactions --- */

static void test_uncommitted_batch_invisible(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	g_autoptr(PixDir) d = fake_dir("/pix/batch", NULL, 700);
	g_autoptr(sqlite3) db = sql_open(path);

	put_dir(w, d);
	put_ok(w, new_file(d, "a.jpg", 1, 1, MD5_A));
	put_ok(w, new_file(d, "b.jpg", 2, 1, MD5_A));
	g_assert_null(find_dir(r, "/pix/batch"));
	GPtrArray *rows = dir_files(r, d->id);
	g_assert_cmpuint(rows->len, ==, 0);
	free_rows(rows);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 0);

	commit_ok(w);
	/* the same reader sees the commit on its next question */
	PixDirRow *dr = find_dir(r, "/pix/batch");
	g_assert_nonnull(dr);
	pix_dir_row_free(dr);
	rows = dir_files(r, d->id);
	g_assert_cmpuint(rows->len, ==, 2);
	free_rows(rows);

	/* a second batch, abandoned: freeing the writer rolls it back */
	put_ok(w, new_file(d, "c.jpg", 3, 1, MD5_A));
	rows = dir_files(r, d->id);
	g_assert_cmpuint(rows->len, ==, 2);
	free_rows(rows);
	pix_store_free(w);
	rows = dir_files(r, d->id);
	g_assert_cmpuint(rows->len, ==, 2);
	g_assert_null(row_named(rows, "c.jpg"));
	free_rows(rows);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 2);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM changes"), ==, 2);

	/* and the lock went with it */
	w = open_ok(path, PIX_STORE_WRITE);
	pix_store_free(w);
	pix_store_free(r);
	assert_integrity(path);
}

/* A failed write rolls back its whole batch, so the catalog only ever
 * holds whole batches; the writer goes on with the next one.  A new
 * file's row is kept and written with others (db.h), so its failure shows
 * at a later put or, at the latest, at the batch's commit. */
static void test_failed_put_rolls_back_batch(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	g_autoptr(PixDir) d = fake_dir("/pix/fail", NULL, 800);
	g_autoptr(sqlite3) db = sql_open(path);
	GError *error = NULL;

	put_dir(w, d);
	put_ok(w, new_file(d, "kept.jpg", 1, 1, MD5_A));
	commit_ok(w);

	put_ok(w, new_file(d, "lost.jpg", 2, 1, MD5_A));
	/* one row per path: a second insert of kept.jpg is refused */
	PixItem *dup = new_file(d, "kept.jpg", 3, 1, MD5_A);
	gboolean is_put = pix_store_put(w, dup, &error);
	pix_item_free(dup);
	if (is_put)
		g_assert_false(pix_store_commit(w, &error));
	g_assert_nonnull(error);
	g_assert_true(error->domain == PIX_STORE_ERROR);
	g_assert_nonnull(strstr(error->message, "UNIQUE"));
	g_clear_error(&error);
	commit_ok(w);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 1);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files WHERE name = 'lost.jpg'"), ==, 0);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM changes"), ==, 1);

	put_ok(w, new_file(d, "next.jpg", 4, 1, MD5_A));
	commit_ok(w);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 2);
	pix_store_free(w);
	assert_integrity(path);
}

/* --- the store stage --- */

typedef struct {
	PixStore *s;
	PixQueue *in;
	guint batch_items;
	gint64 batch_us;
	gboolean ok;
	GError *error;
} ConsumeJob;

static gpointer consume_thread(gpointer data)
{
	ConsumeJob *job = data;
	job->ok = pix_store_consume(job->s, job->in, job->batch_items, job->batch_us, &job->error);
	return NULL;
}

/* Starts the store stage on `job`, and gives it the directory `d`. */
static GThread *consume_start(ConsumeJob *job, PixDir *d)
{
	GThread *t = g_thread_new("store", consume_thread, job);
	pix_queue_push(job->in, pix_item_new(PIX_ACT_DIR, d, NULL));
	return t;
}

/* Waits (20 s at most) until the catalog shows at least `n` files: what
 * the store stage committed while its input is still open. */
static gint64 wait_for_files(sqlite3 *db, gint64 n)
{
	gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
	while (sql_int(db, "SELECT count(*) FROM files") < n && g_get_monotonic_time() < deadline)
		g_usleep(10 * 1000);
	return sql_int(db, "SELECT count(*) FROM files");
}

/* Ends the input, joins the store stage and checks it went well. */
static void consume_end(ConsumeJob *job, GThread *t, const char *path)
{
	pix_queue_close(job->in);
	g_thread_join(t);
	g_assert_no_error(job->error);
	g_assert_true(job->ok);
	pix_queue_free(job->in);
	pix_store_free(job->s);
	assert_integrity(path);
}

static void test_consume_all_items(void)
{
	g_autofree char *path = new_catalog_path();
	ConsumeJob job = { .s = open_ok(path, PIX_STORE_WRITE), .in = pix_queue_new(8, 1),
	                   .batch_items = 7, .batch_us = 60 * G_USEC_PER_SEC };
	g_autoptr(PixDir) d = fake_dir("/pix/consume", NULL, 900);
	gint64 new_before = pix_count_get(PIX_N_NEW);

	GThread *t = consume_start(&job, d);
	for (guint i = 0; i < 100; i++) {
		g_autofree char *name = g_strdup_printf("IMG_%03u.JPG", i);
		pix_queue_push(job.in, new_file(d, name, 10 + i, i, MD5_A));
	}
	consume_end(&job, t, path);
	g_assert_cmpint(pix_count_get(PIX_N_NEW), ==, new_before + 100);

	g_autoptr(sqlite3) db = sql_open(path);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 100);
	g_assert_cmpint(sql_int(db, "SELECT sum(size) FROM files"), ==, 99 * 100 / 2);
}

/* A slow trickle of items is committed after batch_us, not held until
 * batch_items arrive or the input ends. */
static void test_consume_commits_by_time(void)
{
	g_autofree char *path = new_catalog_path();
	ConsumeJob job = { .s = open_ok(path, PIX_STORE_WRITE), .in = pix_queue_new(64, 1),
	                   .batch_items = 1000000, .batch_us = 50 * 1000 };
	g_autoptr(PixDir) d = fake_dir("/pix/slow", NULL, 950);
	g_autoptr(sqlite3) db = sql_open(path);

	GThread *t = consume_start(&job, d);
	for (guint i = 0; i < 5; i++) {
		g_autofree char *name = g_strdup_printf("f%u.jpg", i);
		pix_queue_push(job.in, new_file(d, name, 20 + i, 1, MD5_A));
	}
	g_assert_cmpint(wait_for_files(db, 5), ==, 5);
	consume_end(&job, t, path);
}

/* Items are kept until their batch commits (to write them again on
 * PostgreSQL): a batch also commits once its thumbnails weigh 8 MiB, not
 * only at batch_items or batch_us (2,000 small JPEGs with thumbnails of
 * 49 KB held 100 MB in a batch of a second). */
static void test_consume_commits_by_thumbnail_bytes(void)
{
	g_autofree char *path = new_catalog_path();
	ConsumeJob job = { .s = open_ok(path, PIX_STORE_WRITE), .in = pix_queue_new(64, 1),
	                   .batch_items = 1000000, .batch_us = 600 * G_USEC_PER_SEC };
	g_autoptr(PixDir) d = fake_dir("/pix/thumbs", NULL, 960);
	g_autoptr(sqlite3) db = sql_open(path);

	GThread *t = consume_start(&job, d);
	/* 3 MiB of thumbnails each: the third brings the batch past 8 MiB */
	for (guint i = 0; i < 4; i++) {
		g_autofree char *name = g_strdup_printf("big%u.jpg", i);
		guint8 md5[16] = { 0 };
		md5[0] = (guint8)(0x40 + i);
		PixItem *item = new_file(d, name, 30 + i, 5000000, md5);
		item->thumb = g_new0(PixThumb, 1);
		item->thumb->source = "jpeg";
		for (guint k = 0; k < PIX_THUMB_N_SIZES; k++) {
			item->thumb->jpeg[k] = g_bytes_new_take(g_malloc0(1536 * 1024), 1536 * 1024);
			item->thumb->width_px[k] = item->thumb->height_px[k] = 256u << k;
		}
		pix_queue_push(job.in, item);
	}
	g_assert_cmpint(wait_for_files(db, 3), >=, 3);
	consume_end(&job, t, path);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM files"), ==, 4);
}

/* --- scan runs --- */

static void test_scan_runs(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	GError *error = NULL;
	g_autoptr(sqlite3) db = sql_open(path);
	/* roots are recorded on the volume they are on: real directories */
	g_autofree char *top = g_dir_make_tmp("pix-roots-XXXXXX", &error);
	g_assert_no_error(error);
	g_autofree char *ra = g_build_filename(top, "a", NULL), *rb = g_build_filename(top, "b\xff", NULL);
	g_assert_cmpint(g_mkdir(ra, 0700), ==, 0);
	g_assert_cmpint(g_mkdir(rb, 0700), ==, 0);
	char *roots[] = { ra, rb, NULL };

	g_assert_true(pix_store_begin_scan(w, "scan", roots, &error));
	g_assert_no_error(error);
	/* committed at once */
	g_autofree char *state = sql_text(db, "SELECT state FROM scans");
	g_assert_cmpstr(state, ==, "running");
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM roots WHERE last_scan_at IS NULL"), ==, 2);
	g_assert_true(pix_store_end_scan(w, "done", 0, &error));
	g_assert_no_error(error);
	g_free(state);
	state = sql_text(db, "SELECT state FROM scans");
	g_assert_cmpstr(state, ==, "done");
	g_assert_cmpint(sql_int(db, "SELECT finished_at IS NOT NULL AND exit_status = 0 FROM scans"), ==, 1);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM roots WHERE last_scan_at IS NOT NULL"), ==, 2);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM roots WHERE typeof(path) = 'blob'"), ==, 1);

	/* a run whose process died stays 'running' until the next one */
	g_assert_true(pix_store_begin_scan(w, "scan", roots, &error));
	pix_store_free(w);
	w = open_ok(path, PIX_STORE_WRITE);
	g_assert_true(pix_store_begin_scan(w, "scan", roots, &error));
	g_assert_no_error(error);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM scans WHERE state = 'killed'"), ==, 1);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM scans WHERE state = 'running'"), ==, 1);
	g_assert_true(pix_store_end_scan(w, "interrupted", 130, &error));
	g_assert_cmpint(sql_int(db, "SELECT exit_status FROM scans ORDER BY id DESC LIMIT 1"), ==, 130);
	/* roots each recorded once */
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM roots"), ==, 2);
	g_assert_cmpint(sql_int(db, "SELECT count(*) FROM roots WHERE volume_id IS NULL OR rel_path IS NULL"), ==, 0);
	pix_store_free(w);
	assert_integrity(path);
	g_rmdir(ra);
	g_rmdir(rb);
	g_rmdir(top);
}

/* --quick: a directory is known when its stat is as listed, its mtime
 * older than the listing by two seconds, and no file in it wants a read. */
static void test_dir_is_known(void)
{
	g_autofree char *path = new_catalog_path();
	PixStore *w = open_ok(path, PIX_STORE_WRITE);
	PixStore *r = open_ok(path, PIX_STORE_READ);
	g_autoptr(PixDir) top = fake_dir("/pix/quick", NULL, 900);
	g_autoptr(PixDir) sub = fake_dir("/pix/quick/sub", top, 901);
	g_autoptr(PixDir) fresh = fake_dir("/pix/quick/fresh", top, 902);
	GError *error = NULL;
	GPtrArray *names = NULL;
	gint64 n_files = -1;
	gboolean is_known = FALSE;

	char *roots[] = { "/pix/quick", NULL };
	fresh->st.mtime_ns = g_get_real_time() * 1000;
	g_assert_true(pix_store_begin_scan(w, "scan", roots, &error));
	put_dir(w, top);
	put_dir(w, sub);
	put_dir(w, fresh);
	put_ok(w, new_file(top, "a.jpg", 1, 1, MD5_A));
	put_ok(w, new_file(top, "b.jpg", 2, 1, MD5_A));
	put_ok(w, new_file(sub, "c.jpg", 3, 1, MD5_A));
	PixItem *racy = new_file(sub, "racy.jpg", 4, 1, MD5_A);
	racy->is_racy = TRUE;
	put_ok(w, racy);
	commit_ok(w);

	/* not while the run that listed it has not finished, unless that run
	 * is the one asking (a watch session) */
	g_assert_true(pix_store_dir_is_known(r, top, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	g_assert_true(pix_store_dir_is_known(r, top, pix_store_run_id(w), &is_known, &names, &n_files, &error));
	g_assert_true(is_known);
	g_ptr_array_unref(names);
	g_assert_true(pix_store_end_scan(w, "done", 0, &error));
	g_assert_no_error(error);

	g_assert_true(pix_store_dir_is_known(r, top, 0, &is_known, &names, &n_files, &error));
	g_assert_no_error(error);
	g_assert_true(is_known);
	g_assert_cmpint(n_files, ==, 2);
	g_assert_cmpuint(names->len, ==, 2);
	g_ptr_array_sort(names, compare_str_ptrs);
	g_assert_cmpstr(g_ptr_array_index(names, 0), ==, "fresh");
	g_assert_cmpstr(g_ptr_array_index(names, 1), ==, "sub");
	g_ptr_array_unref(names);

	/* a file flagged for a recheck makes its directory be listed */
	g_assert_true(pix_store_dir_is_known(r, sub, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	g_assert_null(names);
	/* so does an mtime within two seconds of the listing */
	g_assert_true(pix_store_dir_is_known(r, fresh, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	/* and any difference in mtime, ctime, inode */
	top->st.ctime_ns++;
	g_assert_true(pix_store_dir_is_known(r, top, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	top->st.ctime_ns--;
	top->st.ino++;
	g_assert_true(pix_store_dir_is_known(r, top, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	top->st.ino--;
	/* a directory the catalog does not know */
	g_autoptr(PixDir) other = fake_dir("/pix/elsewhere", NULL, 903);
	g_assert_true(pix_store_dir_is_known(r, other, 0, &is_known, &names, &n_files, &error));
	g_assert_false(is_known);
	g_assert_no_error(error);
	pix_store_free(w);
	pix_store_free(r);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/store/create-new-catalog", test_create_new_catalog);
	g_test_add_func("/store/companion-paths", test_companion_paths);
	g_test_add_func("/store/every-statement-prepares", test_every_statement_prepares);
	g_test_add_func("/store/every-statement-prepares-pg", test_every_statement_prepares_pg);
	g_test_add_func("/store/refused-statement-fails-open", test_refused_statement_fails_open);
	g_test_add_func("/store/second-writer-locked", test_second_writer_locked);
	g_test_add_func("/store/newer-schema-refused", test_newer_schema_refused);
	g_test_add_func("/store/foreign-database-refused", test_foreign_database_refused);
	g_test_add_func("/store/not-a-database", test_not_a_database);
	g_test_add_func("/store/unwritable-location", test_unwritable_location);
	g_test_add_func("/store/read-missing-catalog", test_read_missing_catalog);
	g_test_add_func("/store/put-and-read-back", test_put_and_read_back);
	g_test_add_func("/store/names-text-or-blob", test_names_text_or_blob);
	g_test_add_func("/store/find-dirs-in-sets", test_find_dirs_in_sets);
	g_test_add_func("/store/dirs-under", test_dirs_under);
	g_test_add_func("/store/dir-error-state", test_dir_error_state);
	g_test_add_func("/store/dir-ids-rolled-back", test_dir_ids_rolled_back);
	g_test_add_func("/store/change-log", test_change_log);
	g_test_add_func("/store/recheck-and-restore", test_recheck_and_restore);
	g_test_add_func("/store/uncommitted-batch-invisible", test_uncommitted_batch_invisible);
	g_test_add_func("/store/dir-is-known", test_dir_is_known);
	g_test_add_func("/store/failed-put-rolls-back-batch", test_failed_put_rolls_back_batch);
	g_test_add_func("/store/consume-all-items", test_consume_all_items);
	g_test_add_func("/store/consume-commits-by-time", test_consume_commits_by_time);
	g_test_add_func("/store/consume-commits-by-thumbnail-bytes", test_consume_commits_by_thumbnail_bytes);
	g_test_add_func("/store/scan-runs", test_scan_runs);
	return g_test_run();
}
