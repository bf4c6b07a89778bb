/*
 * test-plan.c: unit tests of plan (src/plan.h), which compares walked
 * directories with the catalog and decides what to read.
 *
 * Each test builds a real tree under the test's temporary directory and a
 * real catalog beside it (outside the tree).  A scan runs the stages as
 * the pipeline wires them, one after the other on the test thread: the
 * walker (walk.h) lists the tree into a queue, pix_plan_run() takes the
 * listings with a reader PixStore of its own, and the test collects what
 * plan handed to the readers and to the store.  To record a scan in the
 * catalog, the test plays the readers (each file to read gets the MD5 of
 * its content, or the error a failed read would give it) and hands every
 * item to pix_store_consume(), the real store stage.  Where a test needs
 * what a walk cannot be made to produce as root (a directory that could
 * not be listed), it alters the walker's listings by hand.
 *
 * Covered: a new file is read; an unchanged file (same device, inode,
 * size, mtime and ctime, with an MD5) is not; a change of size, of mtime,
 * or of ctime alone is read again; a row without an MD5 or flagged for a
 * recheck is read again; a rename within the tree (same inode) is a move,
 * not read (unless its row never had a good read), and no miss; a
 * deleted file or directory is marked missing when the walk finished, not
 * after a stop request (in a child process: the flag cannot be reset)
 * and not in a directory that could not be listed; the PIX_ACT_DIR item
 * of a directory comes before every item of its files, on an SSD and on a
 * rotational disk (whose reads wait for a window across directories);
 * files still being written (busy_files) are left alone.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "plan.h"
#include "walk.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

/* Queues large enough that no stage of these small trees ever waits. */
#define QUEUE_ITEMS 4096

/* --- a tree and its catalog --- */

typedef struct {
	char *root;         /* the tree, a scan root (canonical) */
	char *db;           /* the catalog file, beside the tree */
	PixStore *writer;
} Catalog;

static Catalog *catalog_new(const char *name)
{
	Catalog *c = g_new0(Catalog, 1);
	g_autofree char *base = pix_test_dir(name);
	g_autofree char *tree = g_build_filename(base, "tree", NULL);
	GError *error = NULL;
	char real[PATH_MAX];

	g_assert_cmpint(g_mkdir(tree, 0755), ==, 0);
	g_assert_nonnull(realpath(tree, real));
	c->root = g_strdup(real);
	c->db = g_build_filename(base, "catalog.db", NULL);
	c->writer = pix_store_open(c->db, PIX_STORE_WRITE, TRUE, &error);
	g_assert_no_error(error);
	char *roots[] = { c->root, NULL };
	g_assert_true(pix_store_begin_scan(c->writer, "scan", roots, &error));
	g_assert_no_error(error);
	return c;
}

static void catalog_free(Catalog *c)
{
	pix_store_free(c->writer);
	g_free(c->root);
	g_free(c->db);
	g_free(c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Catalog, catalog_free)

/* `rel` (relative to the root) as a full path (transfer full). */
static char *path_of(Catalog *c, const char *rel)
{
	return g_build_filename(c->root, rel, NULL);
}

static void make_file(Catalog *c, const char *rel, const char *content)
{
	g_autofree char *path = path_of(c, rel);
	pix_test_write(path, content, strlen(content));
}

static void make_dir(Catalog *c, const char *rel)
{
	g_autofree char *path = path_of(c, rel);
	g_assert_cmpint(g_mkdir(path, 0755), ==, 0);
}

static void remove_file(Catalog *c, const char *rel)
{
	g_autofree char *path = path_of(c, rel);
	g_assert_cmpint(unlink(path), ==, 0);
}

static void rename_file(Catalog *c, const char *from, const char *to)
{
	g_autofree char *a = path_of(c, from), *b = path_of(c, to);
	g_assert_cmpint(rename(a, b), ==, 0);
}

static struct stat stat_of(Catalog *c, const char *rel)
{
	g_autofree char *path = path_of(c, rel);
	struct stat st;
	g_assert_cmpint(lstat(path, &st), ==, 0);
	return st;
}

static gint64 ctime_ns_of(Catalog *c, const char *rel)
{
	struct stat st = stat_of(c, rel);
	return (gint64)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

/* --- a scan --- */

/* What one run of plan decided. */
typedef struct {
	GPtrArray *reads;   /* PixItem* handed to the readers, in order */
	GPtrArray *stored;  /* PixItem* pushed to the store, in order (with
	                       one queue, everything plan pushed, in order) */
} Decisions;

static void decisions_free(Decisions *d)
{
	g_ptr_array_unref(d->reads);
	g_ptr_array_unref(d->stored);
	g_free(d);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Decisions, decisions_free)

/* The walker's listings of the tree (PixListing*, in the order it pushed
 * them). */
static GPtrArray *walk(Catalog *c)
{
	PixWalkConfig cfg = { .excludes = (char **)pix_walk_default_excludes() };
	char *roots[] = { c->root, NULL };
	PixQueue *q = pix_queue_new(QUEUE_ITEMS, 1);
	GPtrArray *listings = g_ptr_array_new_with_free_func((GDestroyNotify)pix_listing_free);
	PixListing *l;

	pix_walk_run(&cfg, roots, q);
	while ((l = pix_queue_pop(q)) != NULL)
		g_ptr_array_add(listings, l);
	pix_queue_free(q);
	return listings;
}

static void drain(PixQueue *q, GPtrArray *into)
{
	PixItem *item;
	while ((item = pix_queue_pop(q)) != NULL)
		g_ptr_array_add(into, item);
}

typedef struct {
	GHashTable *busy_files;     /* or NULL */
	PixDeviceClass device_class;
	gboolean is_one_queue;      /* readers' and store's items in one queue,
	                               so their order shows */
} PlanOptions;

/* Runs plan over `listings` (taken over) against the catalog, with a new
 * reader as the pipeline does. */
static Decisions *plan_with(Catalog *c, GPtrArray *listings, const PlanOptions *o)
{
	Decisions *d = g_new0(Decisions, 1);
	GError *error = NULL;
	char *roots[] = { c->root, NULL };
	g_autoptr(PixStore) reader = pix_store_open(c->db, PIX_STORE_READ, FALSE, &error);
	g_assert_no_error(error);
	PixQueue *in = pix_queue_new(listings->len + 1, 1);
	PixQueue *to_store = pix_queue_new(QUEUE_ITEMS, o->is_one_queue ? 2 : 1);
	PixQueue *to_read = o->is_one_queue ? to_store : pix_queue_new(QUEUE_ITEMS, 1);

	g_ptr_array_set_free_func(listings, NULL);
	for (guint i = 0; i < listings->len; i++)
		pix_queue_push(in, g_ptr_array_index(listings, i));
	g_ptr_array_unref(listings);
	pix_queue_close(in);
	PixPlanConfig cfg = { .catalog = reader, .roots = roots, .in = in, .to_read = to_read,
	                      .to_store = to_store, .device_class = o->device_class,
	                      .busy_files = o->busy_files };
	g_assert_true(pix_plan_run(&cfg, &error));
	g_assert_no_error(error);
	d->reads = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
	d->stored = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
	if (to_read != to_store) {
		drain(to_read, d->reads);
		pix_queue_free(to_read);
	}
	drain(to_store, d->stored);
	pix_queue_free(to_store);
	pix_queue_free(in);
	return d;
}

static Decisions *plan(Catalog *c, GPtrArray *listings)
{
	PlanOptions o = { .device_class = PIX_DEVICE_SSD };
	return plan_with(c, listings, &o);
}

/* Walks the tree and plans it. */
static Decisions *scan(Catalog *c)
{
	return plan(c, walk(c));
}

/*
 * Records decisions `d` (taken over) in the catalog: the test reads each
 * file to read as a reader would (a file whose item already has an error
 * stays unread), then the store stage writes every item and commits.
 */
static void record(Catalog *c, Decisions *d)
{
	PixQueue *q = pix_queue_new(d->stored->len + d->reads->len + 1, 1);
	GError *error = NULL;

	for (guint i = 0; i < d->stored->len; i++)
		pix_queue_push(q, g_steal_pointer(&g_ptr_array_index(d->stored, i)));
	for (guint i = 0; i < d->reads->len; i++) {
		PixItem *item = g_steal_pointer(&g_ptr_array_index(d->reads, i));
		if (item->error == NULL) {
			g_autofree char *path = pix_item_path(item);
			g_autofree char *data = NULL;
			gsize len = 0, md5_len = sizeof item->md5;
			g_assert_true(g_file_get_contents(path, &data, &len, NULL));
			g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_MD5);
			g_checksum_update(sum, (const guchar *)data, (gssize)len);
			g_checksum_get_digest(sum, item->md5, &md5_len);
			item->has_md5 = TRUE;
			item->bytes_read = (gint64)len;
		}
		pix_queue_push(q, item);
	}
	pix_queue_close(q);
	g_assert_true(pix_store_consume(c->writer, q, 1000, 60 * G_USEC_PER_SEC, &error));
	g_assert_no_error(error);
	pix_queue_free(q);
	decisions_free(d);
}

/* A first scan of the tree, recorded. */
static void seed(Catalog *c)
{
	record(c, scan(c));
}

/* --- looking at decisions --- */

/* The item of file `name` (the names in a test are unique across its
 * directories), or NULL. */
static PixItem *item_named(GPtrArray *items, const char *name)
{
	for (guint i = 0; i < items->len; i++) {
		PixItem *item = g_ptr_array_index(items, i);
		if (item->name != NULL && strcmp(item->name, name) == 0)
			return item;
	}
	return NULL;
}

static PixItem *get_item(GPtrArray *items, const char *name)
{
	PixItem *item = item_named(items, name);
	if (item == NULL)
		g_error("no item for '%s' among %u", name, items->len);
	return item;
}

static guint count_action(GPtrArray *items, PixAction action)
{
	guint n = 0;
	for (guint i = 0; i < items->len; i++)
		n += ((PixItem *)g_ptr_array_index(items, i))->action == action;
	return n;
}

/* The catalog row id of file `rel` (0: none), through a reader as plan
 * sees the catalog. */
static gint64 row_id_of(Catalog *c, const char *rel)
{
	GError *error = NULL;
	g_autoptr(PixStore) reader = pix_store_open(c->db, PIX_STORE_READ, FALSE, &error);
	g_autofree char *path = path_of(c, rel);
	g_autofree char *dir_path = g_path_get_dirname(path), *name = g_path_get_basename(path);
	g_autoptr(PixDir) dir = pix_dir_new(dir_path);
	struct stat st;
	PixDirRow *drow = NULL;
	gint64 id = 0;

	g_assert_no_error(error);
	g_assert_cmpint(lstat(dir_path, &st), ==, 0);
	pix_stat_from(&dir->st, &st);
	g_assert_true(pix_store_find_dir(reader, dir, &drow, &error));
	g_assert_no_error(error);
	if (drow == NULL)
		return 0;
	GPtrArray *rows = pix_store_dir_files(reader, drow->id, &error);
	g_assert_no_error(error);
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		if (strcmp(row->name, name) == 0)
			id = row->id;
	}
	g_ptr_array_unref(rows);
	pix_dir_row_free(drow);
	return id;
}

/* Asserts that plan left the tree alone: no file read, nothing stored but
 * the `n_dirs` directory rows. */
static void assert_only_dirs(Decisions *d, guint n_dirs)
{
	g_assert_cmpuint(d->reads->len, ==, 0);
	g_assert_cmpuint(d->stored->len, ==, n_dirs);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_DIR), ==, n_dirs);
}

/* Asserts that `name` is read again as a change of row `row_id`. */
static void assert_reread(Decisions *d, const char *name, gint64 row_id)
{
	PixItem *item = get_item(d->reads, name);
	g_assert_cmpint(item->action, ==, PIX_ACT_CHANGE);
	g_assert_true(item->is_read);
	g_assert_cmpint(item->row_id, ==, row_id);
	g_assert_null(item_named(d->stored, name));
}

/* --- running a test in a child process --- */

/* Runs the current test again in a child process and asserts that it
 * passed; TRUE in the child, which does the work.  For the stop request,
 * which cannot be taken back. */
static gboolean in_child_process(void)
{
	if (g_test_subprocess())
		return TRUE;
	g_test_trap_subprocess(NULL, 300 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
	g_test_trap_assert_passed();
	return FALSE;
}

/* --- tests --- */

static void test_new_files(void)
{
	g_autoptr(Catalog) c = catalog_new("new");
	make_file(c, "a.jpg", "aaaa");
	make_dir(c, "sub");
	make_file(c, "sub/b.jpg", "bb");

	g_autoptr(Decisions) d = scan(c);
	/* every file is read, as new; only directory rows go to the store */
	g_assert_cmpuint(d->reads->len, ==, 2);
	const char *rels[] = { "a.jpg", "sub/b.jpg" }, *names[] = { "a.jpg", "b.jpg" };
	for (guint i = 0; i < G_N_ELEMENTS(rels); i++) {
		PixItem *item = get_item(d->reads, names[i]);
		struct stat st = stat_of(c, rels[i]);
		g_assert_cmpint(item->action, ==, PIX_ACT_ADD);
		g_assert_true(item->is_read);
		g_assert_cmpint(item->row_id, ==, 0);
		g_assert_cmpuint(item->st.ino, ==, (guint64)st.st_ino);
		g_assert_cmpuint(item->st.dev, ==, (guint64)st.st_dev);
		g_assert_cmpint(item->st.size_bytes, ==, st.st_size);
	}
	g_autofree char *sub = path_of(c, "sub");
	g_assert_cmpstr(get_item(d->reads, "b.jpg")->dir->path, ==, sub);
	g_assert_cmpuint(d->stored->len, ==, 2);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_DIR), ==, 2);
}

static void test_unchanged(void)
{
	g_autoptr(Catalog) c = catalog_new("unchanged");
	make_file(c, "a.jpg", "aaaa");
	make_file(c, "b.jpg", "");
	make_dir(c, "sub");
	make_file(c, "sub/c.jpg", "cc");
	seed(c);
	g_assert_cmpint(row_id_of(c, "sub/c.jpg"), >, 0);

	gint64 unchanged_before = pix_count_get(PIX_N_UNCHANGED);
	g_autoptr(Decisions) d = scan(c);
	assert_only_dirs(d, 2);
	g_assert_cmpint(pix_count_get(PIX_N_UNCHANGED), ==, unchanged_before + 3);
}

/* A new size, a new mtime, a new ctime (chmod): each is read again. */
static void test_changed(void)
{
	g_autoptr(Catalog) c = catalog_new("changed");
	make_file(c, "size.jpg", "1234");
	make_file(c, "mtime.jpg", "1234");
	make_file(c, "ctime.jpg", "1234");
	make_file(c, "same.jpg", "1234");
	seed(c);
	gint64 id_size = row_id_of(c, "size.jpg"), id_mtime = row_id_of(c, "mtime.jpg");
	gint64 id_ctime = row_id_of(c, "ctime.jpg");

	make_file(c, "size.jpg", "123456");
	struct stat before = stat_of(c, "mtime.jpg");
	struct timespec times[2] = { before.st_atim, before.st_mtim };
	times[1].tv_sec += 10;
	g_autofree char *mtime_path = path_of(c, "mtime.jpg");
	g_assert_cmpint(utimensat(AT_FDCWD, mtime_path, times, AT_SYMLINK_NOFOLLOW), ==, 0);
	g_assert_cmpint(stat_of(c, "mtime.jpg").st_size, ==, before.st_size);
	/* the ctime clock may tick coarsely: chmod until it shows */
	g_autofree char *ctime_path = path_of(c, "ctime.jpg");
	gint64 ctime_before = ctime_ns_of(c, "ctime.jpg");
	for (guint i = 0; ctime_ns_of(c, "ctime.jpg") == ctime_before; i++) {
		g_assert_cmpuint(i, <, 1000);
		g_usleep(2000);
		g_assert_cmpint(chmod(ctime_path, i % 2 ? 0644 : 0600), ==, 0);
	}

	g_autoptr(Decisions) d = scan(c);
	g_assert_cmpuint(d->reads->len, ==, 3);
	assert_reread(d, "size.jpg", id_size);
	assert_reread(d, "mtime.jpg", id_mtime);
	assert_reread(d, "ctime.jpg", id_ctime);
	PixItem *m = get_item(d->reads, "mtime.jpg");
	g_assert_cmpint(m->st.mtime_ns, ==, m->old_st.mtime_ns + 10 * G_GINT64_CONSTANT(1000000000));
	g_assert_cmpint(get_item(d->reads, "size.jpg")->old_st.size_bytes, ==, 4);
	g_assert_cmpint(get_item(d->reads, "size.jpg")->st.size_bytes, ==, 6);
	g_assert_null(item_named(d->reads, "same.jpg"));
	g_assert_cmpuint(d->stored->len, ==, 1);
	g_assert_cmpint(((PixItem *)g_ptr_array_index(d->stored, 0))->action, ==, PIX_ACT_DIR);
}

/* A row without an MD5 (its read failed) and a row flagged for a recheck
 * (its mtime was too recent to trust) are read again, unchanged on disk. */
static void test_no_md5_or_recheck(void)
{
	g_autoptr(Catalog) c = catalog_new("recheck");
	make_file(c, "racy.jpg", "r");
	make_file(c, "failed.jpg", "f");
	make_file(c, "good.jpg", "g");
	g_autoptr(Decisions) first = scan(c);
	get_item(first->reads, "racy.jpg")->is_racy = TRUE;
	pix_item_set_error(get_item(first->reads, "failed.jpg"), "cannot read: Input/output error");
	record(c, g_steal_pointer(&first));

	g_autoptr(Decisions) d = scan(c);
	g_assert_cmpuint(d->reads->len, ==, 2);
	assert_reread(d, "racy.jpg", row_id_of(c, "racy.jpg"));
	assert_reread(d, "failed.jpg", row_id_of(c, "failed.jpg"));
	g_assert_false(get_item(d->reads, "failed.jpg")->has_old_md5);
	g_assert_true(get_item(d->reads, "racy.jpg")->has_old_md5);
	g_assert_null(item_named(d->reads, "good.jpg"));
	g_assert_cmpuint(d->stored->len, ==, 1);

	/* read well this time: left alone from now on */
	record(c, g_steal_pointer(&d));
	g_autoptr(Decisions) again = scan(c);
	assert_only_dirs(again, 1);
}

/* A rename within the tree keeps the inode: a move, recorded without
 * reading; a move of a row that never had a good read is read. */
static void test_renamed(void)
{
	g_autoptr(Catalog) c = catalog_new("renamed");
	make_dir(c, "sub");
	make_file(c, "a.jpg", "aaaa");
	make_file(c, "b.jpg", "bbbb");
	make_file(c, "unread.jpg", "uuuu");
	make_file(c, "stays.jpg", "ssss");
	g_autoptr(Decisions) first = scan(c);
	pix_item_set_error(get_item(first->reads, "unread.jpg"), "cannot read: Input/output error");
	record(c, g_steal_pointer(&first));
	gint64 id_a = row_id_of(c, "a.jpg"), id_b = row_id_of(c, "b.jpg"), id_u = row_id_of(c, "unread.jpg");
	guint64 ino_a = stat_of(c, "a.jpg").st_ino;

	rename_file(c, "a.jpg", "sub/a2.jpg");   /* to another directory */
	rename_file(c, "b.jpg", "b2.jpg");       /* within its own */
	rename_file(c, "unread.jpg", "sub/unread2.jpg");
	g_assert_cmpuint(stat_of(c, "sub/a2.jpg").st_ino, ==, ino_a);

	g_autoptr(Decisions) d = scan(c);
	g_autofree char *old_a = path_of(c, "a.jpg"), *old_b = path_of(c, "b.jpg");
	PixItem *a = get_item(d->stored, "a2.jpg"), *b = get_item(d->stored, "b2.jpg");
	g_assert_cmpint(a->action, ==, PIX_ACT_MOVE);
	g_assert_false(a->is_read);
	g_assert_cmpint(a->row_id, ==, id_a);
	g_assert_cmpstr(a->old_path, ==, old_a);
	g_assert_cmpint(b->action, ==, PIX_ACT_MOVE);
	g_assert_false(b->is_read);
	g_assert_cmpint(b->row_id, ==, id_b);
	g_assert_cmpstr(b->old_path, ==, old_b);
	PixItem *u = get_item(d->reads, "unread2.jpg");
	g_assert_cmpint(u->action, ==, PIX_ACT_MOVE);
	g_assert_true(u->is_read);
	g_assert_cmpint(u->row_id, ==, id_u);
	/* only the unread one is read; nothing is new, nothing missing */
	g_assert_cmpuint(d->reads->len, ==, 1);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_ADD), ==, 0);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_MISSING), ==, 0);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_MOVE), ==, 2);
	g_assert_cmpuint(d->stored->len, ==, 4);

	/* recorded: the rows are at their new paths, unchanged there */
	record(c, g_steal_pointer(&d));
	g_assert_cmpint(row_id_of(c, "sub/a2.jpg"), ==, id_a);
	g_assert_cmpint(row_id_of(c, "b2.jpg"), ==, id_b);
	g_autoptr(Decisions) again = scan(c);
	assert_only_dirs(again, 2);
}

/* Deleted files and directories, after a walk that finished: missing. */
static void test_deleted(void)
{
	g_autoptr(Catalog) c = catalog_new("deleted");
	make_file(c, "a.jpg", "aaaa");
	make_file(c, "b.jpg", "bbbb");
	make_dir(c, "sub");
	make_file(c, "sub/c.jpg", "cccc");
	seed(c);
	gint64 id_a = row_id_of(c, "a.jpg"), id_c = row_id_of(c, "sub/c.jpg");

	remove_file(c, "a.jpg");
	remove_file(c, "sub/c.jpg");
	g_autofree char *sub = path_of(c, "sub");
	g_assert_cmpint(rmdir(sub), ==, 0);

	g_autoptr(Decisions) d = scan(c);
	g_assert_cmpuint(d->reads->len, ==, 0);
	PixItem *a = get_item(d->stored, "a.jpg"), *cc = get_item(d->stored, "c.jpg");
	g_assert_cmpint(a->action, ==, PIX_ACT_MISSING);
	g_assert_cmpint(a->row_id, ==, id_a);
	g_assert_cmpint(cc->action, ==, PIX_ACT_MISSING);
	g_assert_cmpint(cc->row_id, ==, id_c);
	g_assert_cmpstr(cc->dir->path, ==, sub);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_MISSING), ==, 2);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_DIR_MISSING), ==, 1);
	g_assert_null(item_named(d->stored, "b.jpg"));
	/* the root's row, and the gone directory's */
	g_assert_cmpuint(d->stored->len, ==, 4);
}

typedef struct {
	PixPlanConfig cfg;
	gboolean is_ok;
} PlanJob;

static gpointer plan_thread(gpointer data)
{
	PlanJob *job = data;
	job->is_ok = pix_plan_run(&job->cfg, NULL);
	return NULL;
}

/* A stop requested while plan runs: the walk did not finish, so nothing
 * is marked missing, neither a file its directory's listing lacks nor a
 * directory the walk would not have met. */
static void test_deleted_after_stop(void)
{
	if (!in_child_process())
		return;
	g_autoptr(Catalog) c = catalog_new("stop");
	make_file(c, "a.jpg", "aaaa");
	make_file(c, "b.jpg", "bbbb");
	make_dir(c, "sub");
	make_file(c, "sub/c.jpg", "cccc");
	seed(c);
	remove_file(c, "a.jpg");
	remove_file(c, "sub/c.jpg");
	g_autofree char *sub = path_of(c, "sub");
	g_assert_cmpint(rmdir(sub), ==, 0);

	GError *error = NULL;
	g_autoptr(PixStore) reader = pix_store_open(c->db, PIX_STORE_READ, FALSE, &error);
	g_assert_no_error(error);
	char *roots[] = { c->root, NULL };
	g_autoptr(GPtrArray) listings = walk(c);
	g_assert_cmpuint(listings->len, ==, 1);
	PlanJob job = { .cfg = { .catalog = reader, .roots = roots, .in = pix_queue_new(4, 1),
	                         .to_read = pix_queue_new(QUEUE_ITEMS, 1), .to_store = pix_queue_new(QUEUE_ITEMS, 1),
	                         .device_class = PIX_DEVICE_SSD } };
	GThread *t = g_thread_new("plan", plan_thread, &job);
	/* the root is planned (a.jpg found gone, deferred); then the stop */
	pix_queue_push(job.cfg.in, g_ptr_array_steal_index(listings, 0));
	PixItem *root_item = pix_queue_pop(job.cfg.to_store);
	g_assert_nonnull(root_item);
	g_assert_cmpint(root_item->action, ==, PIX_ACT_DIR);
	g_assert_cmpstr(root_item->dir->path, ==, c->root);
	pix_item_free(root_item);
	pix_request_stop();
	pix_queue_close(job.cfg.in);
	g_thread_join(t);
	g_assert_true(job.is_ok);

	g_autoptr(GPtrArray) stored = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
	g_autoptr(GPtrArray) reads = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
	drain(job.cfg.to_store, stored);
	drain(job.cfg.to_read, reads);
	g_assert_cmpuint(stored->len, ==, 0);
	g_assert_cmpuint(reads->len, ==, 0);
	pix_queue_free(job.cfg.in);
	pix_queue_free(job.cfg.to_read);
	pix_queue_free(job.cfg.to_store);
}

/* A directory that could not be listed (the walker's incomplete listing,
 * made by hand: root ignores permissions): its rows stay as they are,
 * even for a file really gone, and so do those of the subdirectory the
 * walk could not enter. */
static void test_unlistable_dir(void)
{
	g_autoptr(Catalog) c = catalog_new("unlistable");
	make_file(c, "a.jpg", "aaaa");
	make_dir(c, "locked");
	make_file(c, "locked/x.jpg", "xxxx");
	make_file(c, "locked/y.jpg", "yyyy");
	make_dir(c, "locked/sub");
	make_file(c, "locked/sub/z.jpg", "zzzz");
	seed(c);
	remove_file(c, "locked/x.jpg");
	g_autofree char *locked = path_of(c, "locked");

	/* the premise: a listing of it would have x.jpg marked missing */
	g_autoptr(Decisions) listed = scan(c);
	g_assert_cmpint(get_item(listed->stored, "x.jpg")->action, ==, PIX_ACT_MISSING);

	GPtrArray *listings = walk(c);
	g_assert_cmpuint(listings->len, ==, 3);
	for (guint i = 0; i < listings->len;) {
		PixListing *l = g_ptr_array_index(listings, i);
		if (l->dir->parent != NULL && strcmp(l->dir->parent->path, locked) == 0) {
			g_ptr_array_remove_index(listings, i);     /* never entered */
			continue;
		}
		if (strcmp(l->dir->path, locked) == 0) {
			for (guint j = 0; j < l->entries->len; j++)
				g_free(g_array_index(l->entries, PixEntry, j).name);
			g_array_set_size(l->entries, 0);
			l->is_complete = FALSE;
			l->n_subdirs = 0;
			l->dir->error = g_strdup_printf("cannot list directory: %s", g_strerror(EACCES));
		}
		i++;
	}
	g_assert_cmpuint(listings->len, ==, 2);

	g_autoptr(Decisions) d = plan(c, listings);
	g_assert_cmpuint(d->reads->len, ==, 0);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_MISSING), ==, 0);
	g_assert_cmpuint(count_action(d->stored, PIX_ACT_DIR_MISSING), ==, 0);
	/* its directory row is written (with the reason), nothing else */
	assert_only_dirs(d, 2);
	gboolean is_locked_seen = FALSE;
	for (guint i = 0; i < d->stored->len; i++) {
		PixItem *item = g_ptr_array_index(d->stored, i);
		if (strcmp(item->dir->path, locked) == 0) {
			g_assert_nonnull(item->dir->error);
			is_locked_seen = TRUE;
		}
	}
	g_assert_true(is_locked_seen);
}

/* Asserts invariant 4 of plan.c on everything plan pushed, in order: each
 * item of a file comes after the one PIX_ACT_DIR item of its directory. */
static void assert_dirs_first(GPtrArray *pushed, guint n_dirs)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
	guint n_files = 0;
	for (guint i = 0; i < pushed->len; i++) {
		PixItem *item = g_ptr_array_index(pushed, i);
		if (item->action == PIX_ACT_DIR) {
			g_assert_true(g_hash_table_add(seen, item->dir));
			continue;
		}
		if (!g_hash_table_contains(seen, item->dir))
			g_error("item %u ('%s') came before its directory's", i, item->name);
		n_files++;
	}
	g_assert_cmpuint(g_hash_table_size(seen), ==, n_dirs);
	g_assert_cmpuint(n_files, >, 0);
}

static void check_dirs_first(PixDeviceClass device_class)
{
	g_autoptr(Catalog) c = catalog_new("dirs-first");
	PlanOptions o = { .device_class = device_class, .is_one_queue = TRUE };
	const char *dirs[] = { "d1", "d1/d2", "d3" };
	make_file(c, "top.jpg", "t");
	for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
		make_dir(c, dirs[i]);
		for (guint j = 0; j < 5; j++) {
			g_autofree char *rel = g_strdup_printf("%s/f%u-%u.jpg", dirs[i], i, j);
			make_file(c, rel, rel);
		}
	}

	/* new: every file read */
	Decisions *first = plan_with(c, walk(c), &o);
	assert_dirs_first(first->stored, 4);
	g_assert_cmpuint(count_action(first->stored, PIX_ACT_ADD), ==, 16);
	/* one queue: the reads are among the items; record them as reads */
	for (guint i = first->stored->len; i-- > 0;)
		if (((PixItem *)g_ptr_array_index(first->stored, i))->is_read)
			g_ptr_array_add(first->reads, g_ptr_array_steal_index(first->stored, i));
	record(c, first);

	/* changed, moved, new and gone, in several directories */
	make_file(c, "d1/d2/f1-0.jpg", "changed");
	rename_file(c, "d1/f0-1.jpg", "d3/moved.jpg");
	make_file(c, "d3/new.jpg", "n");
	remove_file(c, "d1/d2/f1-2.jpg");
	g_autoptr(Decisions) d = plan_with(c, walk(c), &o);
	assert_dirs_first(d->stored, 4);
	g_assert_cmpint(get_item(d->stored, "f1-0.jpg")->action, ==, PIX_ACT_CHANGE);
	g_assert_cmpint(get_item(d->stored, "moved.jpg")->action, ==, PIX_ACT_MOVE);
	g_assert_cmpint(get_item(d->stored, "new.jpg")->action, ==, PIX_ACT_ADD);
	g_assert_cmpint(get_item(d->stored, "f1-2.jpg")->action, ==, PIX_ACT_MISSING);
}

static void test_dirs_first_ssd(void)
{
	check_dirs_first(PIX_DEVICE_SSD);
}

static void test_dirs_first_rotational(void)
{
	check_dirs_first(PIX_DEVICE_ROTATIONAL);
}

/* Files still being written: neither read nor recorded, new or known. */
static void test_busy_files(void)
{
	g_autoptr(Catalog) c = catalog_new("busy");
	make_file(c, "known.jpg", "k");
	make_file(c, "other.jpg", "o");
	seed(c);
	make_file(c, "known.jpg", "known, being written");
	make_file(c, "new.jpg", "n");
	make_file(c, "free.jpg", "f");
	remove_file(c, "other.jpg");

	g_autoptr(GHashTable) busy = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_hash_table_add(busy, path_of(c, "known.jpg"));
	g_hash_table_add(busy, path_of(c, "new.jpg"));
	PlanOptions o = { .device_class = PIX_DEVICE_SSD, .busy_files = busy };
	g_autoptr(Decisions) d = plan_with(c, walk(c), &o);
	g_assert_null(item_named(d->reads, "known.jpg"));
	g_assert_null(item_named(d->stored, "known.jpg"));
	g_assert_null(item_named(d->reads, "new.jpg"));
	g_assert_null(item_named(d->stored, "new.jpg"));
	/* the rest of the directory is planned as ever */
	g_assert_cmpint(get_item(d->reads, "free.jpg")->action, ==, PIX_ACT_ADD);
	g_assert_cmpint(get_item(d->stored, "other.jpg")->action, ==, PIX_ACT_MISSING);
	g_assert_cmpuint(d->reads->len, ==, 1);
	g_assert_cmpuint(d->stored->len, ==, 2);

	/* the premise: once closed, both are planned */
	o.busy_files = NULL;
	g_autoptr(Decisions) after = plan_with(c, walk(c), &o);
	g_assert_cmpint(get_item(after->reads, "known.jpg")->action, ==, PIX_ACT_CHANGE);
	g_assert_cmpint(get_item(after->reads, "new.jpg")->action, ==, PIX_ACT_ADD);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/plan/new-files", test_new_files);
	g_test_add_func("/plan/unchanged", test_unchanged);
	g_test_add_func("/plan/changed", test_changed);
	g_test_add_func("/plan/no-md5-or-recheck", test_no_md5_or_recheck);
	g_test_add_func("/plan/renamed", test_renamed);
	g_test_add_func("/plan/deleted", test_deleted);
	g_test_add_func("/plan/deleted-after-stop", test_deleted_after_stop);
	g_test_add_func("/plan/unlistable-dir", test_unlistable_dir);
	g_test_add_func("/plan/dirs-first/ssd", test_dirs_first_ssd);
	g_test_add_func("/plan/dirs-first/rotational", test_dirs_first_rotational);
	g_test_add_func("/plan/busy-files", test_busy_files);
	return g_test_run();
}
