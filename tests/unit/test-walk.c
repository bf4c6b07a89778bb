/*
 * test-walk.c: unit tests of the directory walker (src/walk.h).
 *
 * Each test builds a real tree under the test's temporary directory, runs
 * pix_walk_run() on a thread of its own (as the pipeline does) and collects
 * the listings from its output queue in the test thread.  The queue is
 * small, so the walker also meets back-pressure.  Every walk's listings
 * are checked against the invariants of walk.h (check_listings()): entries
 * in ascending inode order, no directories or symlinks among them,
 * parents' listings before their children's, one listing per directory.
 *
 * Covered: inode order, also past one getdents64 buffer; parent before
 * child; symlinks never followed; names of the same hash;
 * FIFOs and sockets listed without being opened; default, glob and path
 * excludes; unreadable and unsearchable directories (as user nobody in a
 * child process when the tests run as root, since root ignores modes);
 * names with control characters and invalid UTF-8; a 300-level tree; a
 * path longer than PATH_MAX; a missing root; other mounts and bind-mount
 * loops (in a private mount namespace, skipped where that is not allowed);
 * and the stop request (in a child process: the flag cannot be reset).
 *
 * Each of those runs twice, as /walk/... with the one-thread walk and as
 * /walk/parallel/... with a pool of threads.  The parallel walk is also
 * compared, listing for listing, with the one-thread walk of a tree with
 * all of the above in it, many times over (races); its --quick callback
 * is checked to run on the walker's thread only; and its open file
 * descriptors are counted.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "walk.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#define NOBODY 65534
/* a walk of these small trees that takes longer has hung */
#define WALK_TIMEOUT_US (60 * G_USEC_PER_SEC)

/* --- running a walk --- */

/* The walker threads of the test being run: every test runs once with the
 * one-thread walk (0) and once as /walk/parallel/... with a pool; walks
 * whose configuration names no count get this one. */
static guint test_threads;
/* The thread running pix_walk_run() now (for --quick's callback). */
static GThread *walker_thread;

typedef struct {
	const PixWalkConfig *cfg;
	char **roots;
	PixQueue *out;
} WalkJob;

static gpointer walk_thread(gpointer data)
{
	WalkJob *job = data;
	PixWalkConfig cfg = *job->cfg;
	if (cfg.n_threads == 0)
		cfg.n_threads = test_threads;
	g_atomic_pointer_set(&walker_thread, g_thread_self());
	pix_walk_run(&cfg, job->roots, job->out);
	g_atomic_pointer_set(&walker_thread, NULL);
	return NULL;
}

/* The listings of one walk, in the order they came out (PixListing*,
 * freed with the array). */
typedef GPtrArray Listings;

/* Walks `roots` with `cfg` into a queue of `capacity` and returns its
 * listings.  Fails the test if the walk stalls. */
static Listings *walk_roots_queue(const PixWalkConfig *cfg, char **roots, guint capacity)
{
	Listings *listings = g_ptr_array_new_with_free_func((GDestroyNotify)pix_listing_free);
	WalkJob job = { .cfg = cfg, .roots = roots, .out = pix_queue_new(capacity, 1) };
	GThread *t = g_thread_new("walker", walk_thread, &job);

	for (;;) {
		gboolean is_timeout = FALSE;
		PixListing *l = pix_queue_pop_timeout(job.out, WALK_TIMEOUT_US, &is_timeout);
		if (is_timeout)
			g_error("the walk did not finish within %d s", (int)(WALK_TIMEOUT_US / G_USEC_PER_SEC));
		if (l == NULL)
			break;
		g_ptr_array_add(listings, l);
	}
	g_thread_join(t);
	pix_queue_free(job.out);
	return listings;
}

static Listings *walk_roots(const PixWalkConfig *cfg, char **roots)
{
	return walk_roots_queue(cfg, roots, 2);
}

static Listings *walk_one(const PixWalkConfig *cfg, const char *root)
{
	char *roots[] = { (char *)root, NULL };
	return walk_roots(cfg, roots);
}

static PixWalkConfig default_config(void)
{
	return (PixWalkConfig){ .excludes = (char **)pix_walk_default_excludes() };
}

static PixListing *find_listing(Listings *listings, const char *path)
{
	for (guint i = 0; i < listings->len; i++) {
		PixListing *l = g_ptr_array_index(listings, i);
		if (strcmp(l->dir->path, path) == 0)
			return l;
	}
	return NULL;
}

static PixListing *get_listing(Listings *listings, const char *path)
{
	PixListing *l = find_listing(listings, path);
	if (l == NULL) {
		g_autofree char *esc = g_strescape(path, NULL);
		g_error("no listing for '%s' among %u", esc, listings->len);
	}
	return l;
}

static PixEntry *find_entry(PixListing *l, const char *name)
{
	for (guint i = 0; i < l->entries->len; i++) {
		PixEntry *e = &g_array_index(l->entries, PixEntry, i);
		if (strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Asserts that `l`'s entry names are exactly the NULL-terminated list. */
static void assert_entries(PixListing *l, ...)
{
	g_autoptr(GPtrArray) want = g_ptr_array_new();
	g_autoptr(GPtrArray) got = g_ptr_array_new();
	va_list ap;

	va_start(ap, l);
	for (const char *n = va_arg(ap, const char *); n != NULL; n = va_arg(ap, const char *))
		g_ptr_array_add(want, (char *)n);
	va_end(ap);
	for (guint i = 0; i < l->entries->len; i++)
		g_ptr_array_add(got, g_array_index(l->entries, PixEntry, i).name);
	g_ptr_array_sort(want, compare_strings);
	g_ptr_array_sort(got, compare_strings);
	gboolean is_same = want->len == got->len;
	for (guint i = 0; is_same && i < want->len; i++)
		is_same = strcmp(g_ptr_array_index(want, i), g_ptr_array_index(got, i)) == 0;
	if (!is_same) {
		g_autoptr(GString) text = g_string_new(NULL);
		for (guint i = 0; i < got->len; i++) {
			g_autofree char *esc = g_strescape(g_ptr_array_index(got, i), NULL);
			g_string_append_printf(text, " '%s'", esc);
		}
		g_autofree char *dir = g_strescape(l->dir->path, NULL);
		g_error("entries of '%s' are%s; want %u others", dir, text->str, want->len);
	}
}

/*
 * The invariants every walk keeps (walk.h): entries in ascending inode
 * order, none of them a directory or symlink, their stat that of the
 * inode getdents named; one listing per directory, a parent's before its
 * children's, the child's PixDir pointing at the parent's; n_subdirs
 * matching the listings that name the directory as parent (at least, for
 * --quick's unlisted ones).
 */
static void check_listings(Listings *listings)
{
	for (guint i = 0; i < listings->len; i++) {
		PixListing *l = g_ptr_array_index(listings, i);
		g_autofree char *esc = g_strescape(l->dir->path, NULL);

		g_assert_nonnull(l->entries);
		g_assert_true(l->is_complete == (l->dir->error == NULL && !l->is_unlisted));
		for (guint j = 0; j < l->entries->len; j++) {
			PixEntry *e = &g_array_index(l->entries, PixEntry, j);
			if (j > 0 && g_array_index(l->entries, PixEntry, j - 1).ino >= e->ino)
				g_error("entries of '%s' are not in ascending inode order at %u", esc, j);
			if (e->stat_errno == 0) {
				g_assert_cmpuint(e->st.ino, ==, e->ino);
				g_assert_false(S_ISDIR(e->st.mode));
				g_assert_false(S_ISLNK(e->st.mode));
			}
		}
		guint n_children = 0;
		for (guint j = 0; j < listings->len; j++) {
			PixListing *other = g_ptr_array_index(listings, j);
			if (j != i)
				g_assert_cmpstr(other->dir->path, !=, l->dir->path);
			if (other->dir->parent == l->dir) {
				if (j < i)
					g_error("the listing of a subdirectory of '%s' came before it", esc);
				n_children++;
			}
		}
		/* --quick's subdirectories from the catalog may be gone */
		if (l->is_unlisted)
			g_assert_cmpuint(l->n_subdirs, >=, n_children);
		else
			g_assert_cmpuint(l->n_subdirs, ==, n_children);
		if (l->dir->parent != NULL) {
			/* the path is the parent's plus one name */
			g_autofree char *dirname = g_path_get_dirname(l->dir->path);
			g_assert_cmpstr(dirname, ==, l->dir->parent->path);
		}
	}
}

/* --- building trees --- */

static char *path_join(const char *dir, const char *name)
{
	return g_strconcat(dir, "/", name, NULL);
}

static void make_file(const char *dir, const char *name, gsize size)
{
	g_autofree char *path = path_join(dir, name);
	g_autofree char *data = g_malloc0(size + 1);
	memset(data, 'x', size);
	pix_test_write(path, data, size);
}

static char *make_dir(const char *dir, const char *name)
{
	char *path = path_join(dir, name);
	g_assert_cmpint(mkdir(path, 0755), ==, 0);
	return path;
}

static void make_symlink(const char *dir, const char *name, const char *target)
{
	g_autofree char *path = path_join(dir, name);
	g_assert_cmpint(symlink(target, path), ==, 0);
}

/* --- child processes --- */

/*
 * Runs the current test again in a child process and asserts that it
 * passed.  Returns TRUE in the child, which then does the work, FALSE in
 * the parent.  For tests that change process-wide state: the user, the
 * mount namespace, the stop flag.
 */
static gboolean in_child_process(void)
{
	if (g_test_subprocess())
		return TRUE;
	g_test_trap_subprocess(NULL, 300 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
	g_test_trap_assert_passed();
	return FALSE;
}

/* Whether a forked child can do `what` (0 from the function: yes). */
static gboolean child_can(int (*what)(void))
{
	pid_t pid = fork();
	int status = 0;

	g_assert_cmpint(pid, >=, 0);
	if (pid == 0)
		_exit(what() == 0 ? 0 : 1);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
		return -1;
	return geteuid() == NOBODY ? 0 : -1;
}

/* Acts as user nobody until back_to_root(), keeping root as the saved
 * user id (the files made as root stay removable by the test's cleanup). */
static int nobody_for_now(void)
{
	if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, 0) != 0 || setresuid(NOBODY, NOBODY, 0) != 0)
		return -1;
	return geteuid() == NOBODY ? 0 : -1;
}

static void back_to_root(void)
{
	g_assert_cmpint(setresuid(0, 0, 0), ==, 0);
	g_assert_cmpint(setresgid(0, 0, 0), ==, 0);
}

static int private_mount_namespace(void)
{
	if (unshare(CLONE_NEWNS) != 0)
		return -1;
	return mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL);
}

/*
 * For tests of permission bits: root bypasses them, so a root parent
 * checks it can become nobody (else the test is skipped); the child then
 * gives its temporary directory to nobody and becomes nobody.  Returns
 * TRUE in the child.
 */
static gboolean in_child_without_root(void)
{
	if (!g_test_subprocess()) {
		if (geteuid() == 0 && !child_can(become_nobody)) {
			g_test_skip("running as root, and cannot become user nobody (65534) to test permissions");
			return FALSE;
		}
		return in_child_process();
	}
	if (geteuid() == 0) {
		g_assert_cmpint(chown(pix_test_root, NOBODY, NOBODY), ==, 0);
		g_assert_cmpint(become_nobody(), ==, 0);
	}
	return TRUE;
}

/* For tests that mount: a child in a mount namespace of its own, so no
 * mount outlives it.  Skipped where namespaces or mounts are not allowed. */
static gboolean in_child_with_mounts(void)
{
	if (!g_test_subprocess()) {
		if (!child_can(private_mount_namespace)) {
			g_test_skip("cannot create a private mount namespace (needs CAP_SYS_ADMIN)");
			return FALSE;
		}
		return in_child_process();
	}
	g_assert_cmpint(private_mount_namespace(), ==, 0);
	return TRUE;
}

/* --- tests --- */

static void test_inode_order(void)
{
	g_autofree char *root = pix_test_dir("order");
	PixWalkConfig cfg = default_config();
	gint64 dirs_before = pix_count_get(PIX_N_DIRS);

	/* ext4 returns names in hash order, so sorting shows */
	for (guint i = 0; i < 300; i++) {
		g_autofree char *name = g_strdup_printf("IMG_%04u.JPG", i);
		make_file(root, name, i);
	}
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 1);
	PixListing *l = get_listing(listings, root);
	g_assert_true(l->is_complete);
	g_assert_null(l->dir->error);
	g_assert_null(l->dir->parent);
	g_assert_cmpuint(l->entries->len, ==, 300);
	g_assert_cmpuint(l->n_skipped, ==, 0);
	g_assert_cmpuint(l->n_subdirs, ==, 0);

	struct stat dst;
	g_assert_cmpint(stat(root, &dst), ==, 0);
	g_assert_cmpuint(l->dir->st.ino, ==, (guint64)dst.st_ino);
	g_assert_cmpuint(l->dir->st.dev, ==, (guint64)dst.st_dev);
	for (guint i = 0; i < l->entries->len; i++) {
		PixEntry *e = &g_array_index(l->entries, PixEntry, i);
		g_autofree char *path = path_join(root, e->name);
		struct stat st;
		g_assert_cmpint(e->stat_errno, ==, 0);
		g_assert_cmpint(lstat(path, &st), ==, 0);
		g_assert_cmpuint(e->st.ino, ==, (guint64)st.st_ino);
		g_assert_cmpuint(e->st.dev, ==, (guint64)st.st_dev);
		g_assert_cmpuint(e->st.mode, ==, (guint32)st.st_mode);
		g_assert_cmpint(e->st.size_bytes, ==, atoi(e->name + 4));
		g_assert_cmpint(e->st.mtime_ns, ==, (gint64)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
		g_assert_cmpint(e->st.ctime_ns, ==, (gint64)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec);
	}
	g_assert_cmpint(pix_count_get(PIX_N_DIRS), ==, dirs_before + 1);
}

/* More names than one getdents64 call returns (its buffer is 256 KiB):
 * the listing holds all of them, still in one inode order. */
static void test_large_directory(void)
{
	g_autofree char *root = pix_test_dir("large");
	PixWalkConfig cfg = default_config();
	char pad[201];

	memset(pad, 'p', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	for (guint i = 0; i < 5000; i++) {
		g_autofree char *name = g_strdup_printf("%05u-%s", i, pad);
		g_autofree char *path = path_join(root, name);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		g_assert_cmpint(fd, >=, 0);
		close(fd);
	}
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	PixListing *l = get_listing(listings, root);
	g_assert_cmpuint(l->entries->len, ==, 5000);
	g_autofree gboolean *seen = g_new0(gboolean, 5000);
	for (guint i = 0; i < l->entries->len; i++) {
		const char *name = g_array_index(l->entries, PixEntry, i).name;
		guint n = (guint)atoi(name);
		g_assert_cmpuint(n, <, 5000);
		g_assert_false(seen[n]);
		seen[n] = TRUE;
		g_assert_cmpstr(name + 6, ==, pad);
	}
}

static void test_parents_before_children(void)
{
	g_autofree char *root = pix_test_dir("tree");
	PixWalkConfig cfg = default_config();

	/* many siblings, so the parent-first order cannot come from luck */
	for (guint i = 0; i < 12; i++) {
		g_autofree char *name = g_strdup_printf("dir%02u", i);
		g_autofree char *d = make_dir(root, name);
		make_file(d, "a.jpg", 10);
		for (guint j = 0; j < 3; j++) {
			g_autofree char *sub = g_strdup_printf("sub%u", j);
			g_autofree char *s = make_dir(d, sub);
			make_file(s, "b.jpg", 20);
			g_autofree char *leaf = make_dir(s, "leaf");
		}
	}
	make_file(root, "top.jpg", 1);
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	/* root + 12 + 36 + 36 */
	g_assert_cmpuint(listings->len, ==, 85);
	PixListing *top = g_ptr_array_index(listings, 0);
	g_assert_cmpstr(top->dir->path, ==, root);
	g_assert_cmpuint(top->n_subdirs, ==, 12);
	assert_entries(top, "top.jpg", NULL);
	g_autofree char *dir3 = path_join(root, "dir03");
	g_autofree char *sub1 = path_join(dir3, "sub1");
	g_autofree char *leaf = path_join(sub1, "leaf");
	assert_entries(get_listing(listings, dir3), "a.jpg", NULL);
	assert_entries(get_listing(listings, sub1), "b.jpg", NULL);
	PixListing *ll = get_listing(listings, leaf);
	assert_entries(ll, NULL);
	g_assert_true(ll->is_complete);
	g_assert_true(ll->dir->parent == get_listing(listings, sub1)->dir);
}

static void test_two_roots(void)
{
	g_autofree char *a = pix_test_dir("root-a");
	g_autofree char *b = pix_test_dir("root-b");
	PixWalkConfig cfg = default_config();
	char *roots[] = { a, b, NULL };

	make_file(a, "a.jpg", 1);
	g_autofree char *asub = make_dir(a, "sub");
	make_file(b, "b.jpg", 1);
	g_autoptr(GPtrArray) listings = walk_roots(&cfg, roots);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 3);
	/* roots in the order given, each with its whole tree */
	g_assert_cmpstr(((PixListing *)g_ptr_array_index(listings, 0))->dir->path, ==, a);
	g_assert_cmpstr(((PixListing *)g_ptr_array_index(listings, 1))->dir->path, ==, asub);
	g_assert_cmpstr(((PixListing *)g_ptr_array_index(listings, 2))->dir->path, ==, b);
	assert_entries(get_listing(listings, b), "b.jpg", NULL);
	g_assert_null(get_listing(listings, b)->dir->parent);
}

static void test_symlinks_not_followed(void)
{
	g_autofree char *root = pix_test_dir("symlinks");
	PixWalkConfig cfg = default_config();
	gint64 skipped_before = pix_count_get(PIX_N_SKIPPED);

	make_file(root, "f.jpg", 5);
	g_autofree char *d = make_dir(root, "d");
	make_file(d, "inner.jpg", 5);
	g_autofree char *outside = pix_test_dir("symlink-target");
	make_file(outside, "elsewhere.jpg", 5);

	make_symlink(root, "to-file", "f.jpg");
	make_symlink(root, "to-dir", "d");
	make_symlink(root, "to-outside", outside);
	make_symlink(root, "dangling", "does-not-exist");
	make_symlink(root, "loop", "loop");
	make_symlink(d, "up", "..");
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);

	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *top = get_listing(listings, root);
	assert_entries(top, "f.jpg", NULL);
	g_assert_cmpuint(top->n_skipped, ==, 5);
	g_assert_cmpuint(top->n_subdirs, ==, 1);
	PixListing *dl = get_listing(listings, d);
	assert_entries(dl, "inner.jpg", NULL);
	g_assert_cmpuint(dl->n_skipped, ==, 1);
	g_assert_cmpint(pix_count_get(PIX_N_SKIPPED), ==, skipped_before + 6);
}

/* Names whose g_str_hash() is the same ("aB" and "b!": 97 * 33 + 66 =
 * 98 * 33 + 33), the first of them left out (a symbolic link, excluded):
 * the check for names read twice compares the second with the first,
 * which must still be there to compare with (AddressSanitizer). */
static void test_hash_collision_names(void)
{
	g_autofree char *root = pix_test_dir("collide");
	char *excludes[] = { "xaB", NULL };
	PixWalkConfig cfg = { .excludes = excludes };

	g_assert_cmpuint(g_str_hash("aB"), ==, g_str_hash("b!"));
	g_assert_cmpuint(g_str_hash("xaB"), ==, g_str_hash("xb!"));
	/* made first, so usually lower inode numbers: listed first */
	make_symlink(root, "aB", "nowhere");
	make_file(root, "xaB", 1);
	make_file(root, "b!", 1);
	make_file(root, "xb!", 1);
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	PixListing *l = get_listing(listings, root);
	assert_entries(l, "b!", "xb!", NULL);
	g_assert_cmpuint(l->n_skipped, ==, 2);
}

/* A FIFO with no writer blocks whoever opens it for reading: the walker
 * must only stat it (walk_roots() fails the test if the walk hangs). */
static void test_fifo_and_socket(void)
{
	g_autofree char *root = pix_test_dir("special");
	PixWalkConfig cfg = default_config();
	g_autofree char *fifo = path_join(root, "pipe");
	g_autofree char *sock_path = path_join(root, "sock");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	make_file(root, "plain.jpg", 3);
	g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
	/* bound by a relative name: sun_path is short, $TMPDIR may not be */
	g_autofree char *cwd = g_get_current_dir();
	g_assert_cmpint(chdir(root), ==, 0);
	strcpy(addr.sun_path, "sock");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&addr, sizeof addr), ==, 0);
	g_assert_cmpint(chdir(cwd), ==, 0);
	g_assert_true(g_file_test(sock_path, G_FILE_TEST_EXISTS));

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	close(fd);
	check_listings(listings);
	PixListing *l = get_listing(listings, root);
	assert_entries(l, "plain.jpg", "pipe", "sock", NULL);
	g_assert_true(S_ISFIFO(find_entry(l, "pipe")->st.mode));
	g_assert_true(S_ISSOCK(find_entry(l, "sock")->st.mode));
	g_assert_true(S_ISREG(find_entry(l, "plain.jpg")->st.mode));
	g_assert_cmpuint(l->n_skipped, ==, 0);
}

static void test_default_excludes(void)
{
	g_autofree char *root = pix_test_dir("default-excludes");
	PixWalkConfig cfg = default_config();
	const char *const *defaults = pix_walk_default_excludes();

	static const char *const must_have[] = { ".thumbnails", "@eaDir", ".git" };
	for (guint i = 0; i < G_N_ELEMENTS(must_have); i++)
		g_assert_true(g_strv_contains(defaults, must_have[i]));

	static const char *const dirs[] = { ".thumbnails", "@eaDir", ".git", ".Trash-1000", "lost+found" };
	for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *d = make_dir(root, dirs[i]);
		make_file(d, "hidden.jpg", 1);
	}
	static const char *const files[] = { "Thumbs.db", ".DS_Store", "._IMG_0001.JPG", "x.photoidx-tmp" };
	for (guint i = 0; i < G_N_ELEMENTS(files); i++)
		make_file(root, files[i], 1);
	make_file(root, "keep.jpg", 1);
	/* excluded by name at any depth */
	g_autofree char *keep = make_dir(root, "keep");
	g_autofree char *nested = make_dir(keep, ".thumbnails");
	make_file(keep, "Thumbs.db", 1);
	make_file(keep, "also-kept.jpg", 1);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *top = get_listing(listings, root);
	assert_entries(top, "keep.jpg", NULL);
	g_assert_cmpuint(top->n_skipped, ==, G_N_ELEMENTS(dirs) + G_N_ELEMENTS(files));
	PixListing *kl = get_listing(listings, keep);
	assert_entries(kl, "also-kept.jpg", NULL);
	g_assert_cmpuint(kl->n_skipped, ==, 2);
}

/* A pattern without '/' matches names; one with '/' whole paths; the
 * configuration's list replaces the defaults. */
static void test_user_excludes(void)
{
	g_autofree char *root = pix_test_dir("user-excludes");
	g_autofree char *path_pattern = g_strconcat(root, "/sub/skip*", NULL);
	char *excludes[] = { "*.tmp", path_pattern, NULL };
	PixWalkConfig cfg = { .excludes = excludes };

	make_file(root, "a.tmp", 1);
	make_file(root, "a.jpg", 1);
	make_file(root, "skipme.jpg", 1);       /* same name as below, other path */
	g_autofree char *sub = make_dir(root, "sub");
	make_file(sub, "skipme.jpg", 1);
	make_file(sub, "keep.jpg", 1);
	make_file(sub, "b.tmp", 1);
	g_autofree char *skipdir = make_dir(sub, "skipdir");
	make_file(skipdir, "c.jpg", 1);
	g_autofree char *git = make_dir(root, ".git");

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	assert_entries(get_listing(listings, root), "a.jpg", "skipme.jpg", NULL);
	g_assert_cmpuint(get_listing(listings, root)->n_skipped, ==, 1);
	PixListing *sl = get_listing(listings, sub);
	assert_entries(sl, "keep.jpg", NULL);
	g_assert_cmpuint(sl->n_skipped, ==, 3);
	g_assert_null(find_listing(listings, skipdir));
	/* not in this configuration's list */
	g_assert_nonnull(find_listing(listings, git));
	g_assert_cmpuint(listings->len, ==, 3);
}

static void test_exclude_paths(void)
{
	g_autofree char *root = pix_test_dir("exclude-paths");
	g_autofree char *db = path_join(root, "catalog.db");
	g_autofree char *wal = path_join(root, "catalog.db-wal");
	g_autofree char *sub = path_join(root, "sub");
	char *paths[] = { db, wal, sub, NULL };
	PixWalkConfig cfg = { .excludes = (char **)pix_walk_default_excludes(), .exclude_paths = paths };

	make_file(root, "catalog.db", 1);
	make_file(root, "catalog.db-wal", 1);
	make_file(root, "catalog.db.bak", 1);
	g_assert_cmpint(mkdir(sub, 0755), ==, 0);
	make_file(sub, "f.jpg", 1);
	g_autofree char *subway = make_dir(root, "subway");
	make_file(subway, "catalog.db", 1);    /* the same name elsewhere */

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *top = get_listing(listings, root);
	assert_entries(top, "catalog.db.bak", NULL);
	g_assert_cmpuint(top->n_skipped, ==, 3);
	assert_entries(get_listing(listings, subway), "catalog.db", NULL);
}

static void test_is_excluded(void)
{
	char *excludes[] = { "*.tmp", "/x/y/*", NULL };
	char *paths[] = { "/a/b/c", "/top", NULL };
	PixWalkConfig cfg = { .excludes = excludes, .exclude_paths = paths };
	PixWalkConfig defaults = default_config();
	PixWalkConfig none = { 0 };

	g_assert_true(pix_walk_is_excluded(&cfg, "/a/b", "c"));
	g_assert_false(pix_walk_is_excluded(&cfg, "/a/b", "cc"));
	g_assert_false(pix_walk_is_excluded(&cfg, "/a", "c"));
	g_assert_true(pix_walk_is_excluded(&cfg, "/", "top"));  /* "/" + name, no "//" */
	g_assert_true(pix_walk_is_excluded(&cfg, "/a", "b.tmp"));
	g_assert_false(pix_walk_is_excluded(&cfg, "/a", "b.tmpx"));
	g_assert_true(pix_walk_is_excluded(&cfg, "/x/y", "z"));
	g_assert_false(pix_walk_is_excluded(&cfg, "/x", "y"));
	g_assert_false(pix_walk_is_excluded(&cfg, "/x/yy", "z"));

	g_assert_true(pix_walk_is_excluded(&defaults, "/p", ".thumbnails"));
	g_assert_true(pix_walk_is_excluded(&defaults, "/p", "@eaDir"));
	g_assert_true(pix_walk_is_excluded(&defaults, "/p", ".Trash-1000"));
	g_assert_true(pix_walk_is_excluded(&defaults, "/p", "._IMG_1.JPG"));
	g_assert_false(pix_walk_is_excluded(&defaults, "/p", "IMG_1.JPG"));
	g_assert_false(pix_walk_is_excluded(&defaults, "/p", "my.git"));
	g_assert_false(pix_walk_is_excluded(&none, "/p", ".git"));
}

static void test_names_byte_exact(void)
{
	g_autofree char *root = pix_test_dir("odd-names");
	PixWalkConfig cfg = default_config();
	static const char *const names[] = {
		"new\nline.jpg", "tab\there.jpg", "cr\r.jpg", "esc\x1b[31m.jpg", "bad\xff\xfe.jpg",
		"\xc3\x28.jpg", "latin1 caf\xe9.jpg", " leading space", "trailing space ", "back\\slash",
		"glob*?[x].jpg", "\xe6\x9d\xb1\xe4\xba\xac.jpg",
	};

	for (guint i = 0; i < G_N_ELEMENTS(names); i++)
		make_file(root, names[i], i);
	g_autofree char *odd_dir = make_dir(root, "dir\xff\nname");
	make_file(odd_dir, "inner\t\x80.jpg", 7);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *top = get_listing(listings, root);
	g_assert_cmpuint(top->entries->len, ==, G_N_ELEMENTS(names));
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		PixEntry *e = find_entry(top, names[i]);
		if (e == NULL) {
			g_autofree char *esc = g_strescape(names[i], NULL);
			g_error("name '%s' did not come through byte-exact", esc);
		}
		g_assert_cmpint(e->stat_errno, ==, 0);
		g_assert_cmpint(e->st.size_bytes, ==, i);
	}
	PixListing *dl = get_listing(listings, odd_dir);
	assert_entries(dl, "inner\t\x80.jpg", NULL);
	g_assert_cmpint(find_entry(dl, "inner\t\x80.jpg")->st.size_bytes, ==, 7);
}

/* Creates `depth` nested directories called `name` below `root` (by
 * descriptor, so paths beyond PATH_MAX work), each holding a file named
 * after its level; returns the deepest path. */
static char *make_chain(const char *root, const char *name, guint depth)
{
	GString *path = g_string_new(root);
	int fd = open(root, O_RDONLY | O_DIRECTORY);

	g_assert_cmpint(fd, >=, 0);
	for (guint i = 1; i <= depth; i++) {
		g_assert_cmpint(mkdirat(fd, name, 0755), ==, 0);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY);
		g_assert_cmpint(next, >=, 0);
		close(fd);
		fd = next;
		g_string_append_c(path, '/');
		g_string_append(path, name);
		g_autofree char *file = g_strdup_printf("level%u.jpg", i);
		int f = openat(fd, file, O_WRONLY | O_CREAT | O_EXCL, 0644);
		g_assert_cmpint(f, >=, 0);
		g_assert_cmpint(write(f, "abc", 3), ==, 3);
		close(f);
	}
	close(fd);
	return g_string_free(path, FALSE);
}

static void test_deep_tree(void)
{
	g_autofree char *root = pix_test_dir("deep");
	PixWalkConfig cfg = default_config();
	g_autofree char *deepest = make_chain(root, "d", 300);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 301);
	/* depth first: level i is the i-th listing */
	GString *path = g_string_new(root);
	for (guint i = 1; i <= 300; i++) {
		g_string_append(path, "/d");
		PixListing *l = g_ptr_array_index(listings, i);
		g_assert_cmpstr(l->dir->path, ==, path->str);
		g_assert_true(l->is_complete);
		g_autofree char *file = g_strdup_printf("level%u.jpg", i);
		assert_entries(l, file, NULL);
	}
	g_assert_cmpstr(path->str, ==, deepest);
	g_string_free(path, TRUE);
}

static void test_path_longer_than_path_max(void)
{
	g_autofree char *root = pix_test_dir("long-path");
	PixWalkConfig cfg = default_config();
	char name[251];

	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	g_autofree char *deepest = make_chain(root, name, 20);
	g_assert_cmpuint(strlen(deepest), >, PATH_MAX);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 21);
	PixListing *l = get_listing(listings, deepest);
	g_assert_true(l->is_complete);
	g_assert_null(l->dir->error);
	assert_entries(l, "level20.jpg", NULL);
	g_assert_cmpint(find_entry(l, "level20.jpg")->st.size_bytes, ==, 3);
	g_assert_cmpuint(l->dir->st.ino, !=, 0);
}

static void test_missing_root(void)
{
	g_autofree char *base = pix_test_dir("missing-root");
	g_autofree char *missing = path_join(base, "not-there");
	g_autofree char *good = make_dir(base, "good");
	char *roots[] = { missing, good, NULL };
	PixWalkConfig cfg = default_config();
	guint warnings_before = pix_log_warnings();

	make_file(good, "g.jpg", 1);
	g_autoptr(GPtrArray) listings = walk_roots(&cfg, roots);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *ml = get_listing(listings, missing);
	g_assert_false(ml->is_complete);
	g_assert_nonnull(ml->dir->error);
	g_assert_cmpuint(ml->entries->len, ==, 0);
	/* the walk goes on with the next root */
	assert_entries(get_listing(listings, good), "g.jpg", NULL);
	g_assert_cmpuint(pix_log_warnings(), ==, warnings_before + 1);
}

/* A directory that cannot be opened: an incomplete listing saying why,
 * and the rest of the tree is walked. */
static void test_unreadable_dir(void)
{
	if (!in_child_without_root())
		return;
	g_autofree char *root = pix_test_dir("unreadable");
	PixWalkConfig cfg = default_config();
	g_autofree char *locked = make_dir(root, "locked");
	g_autofree char *locked_sub = make_dir(locked, "sub");
	g_autofree char *open_dir = make_dir(root, "open");
	guint warnings_before = pix_log_warnings();

	make_file(locked, "secret.jpg", 1);
	make_file(open_dir, "b.jpg", 1);
	make_file(root, "a.jpg", 1);
	g_assert_cmpint(chmod(locked, 0), ==, 0);
	/* the premise: this user is refused */
	g_assert_cmpint(access(locked, R_OK), !=, 0);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	g_assert_cmpint(chmod(locked, 0755), ==, 0);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 3);
	PixListing *ll = get_listing(listings, locked);
	g_assert_false(ll->is_complete);
	g_assert_nonnull(ll->dir->error);
	g_assert_nonnull(strstr(ll->dir->error, g_strerror(EACCES)));
	g_assert_cmpuint(ll->entries->len, ==, 0);
	g_assert_null(find_listing(listings, locked_sub));
	assert_entries(get_listing(listings, root), "a.jpg", NULL);
	assert_entries(get_listing(listings, open_dir), "b.jpg", NULL);
	g_assert_cmpuint(pix_log_warnings(), ==, warnings_before + 1);
}

/* A directory that can be read but not searched (r--): its names are
 * known, their inodes are not; every entry carries the stat errno. */
static void test_unsearchable_dir(void)
{
	if (!in_child_without_root())
		return;
	g_autofree char *root = pix_test_dir("unsearchable");
	PixWalkConfig cfg = default_config();
	g_autofree char *dir = make_dir(root, "noexec");

	make_file(dir, "x.jpg", 1);
	make_file(dir, "y.jpg", 1);
	g_autofree char *sub = make_dir(dir, "sub");
	g_assert_cmpint(chmod(dir, 0444), ==, 0);

	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	g_assert_cmpint(chmod(dir, 0755), ==, 0);
	check_listings(listings);
	PixListing *l = get_listing(listings, dir);
	assert_entries(l, "x.jpg", "y.jpg", NULL);
	for (guint i = 0; i < l->entries->len; i++)
		g_assert_cmpint(g_array_index(l->entries, PixEntry, i).stat_errno, ==, EACCES);
	/* the subdirectory, which cannot be stat'ed either, is known for one
	 * by its getdents64 type: not a file entry, but a directory that
	 * cannot be entered */
	PixListing *s = get_listing(listings, sub);
	g_assert_false(s->is_complete);
	g_assert_cmpstr(s->dir->error, ==, "cannot open directory: Permission denied");
}

static void test_other_mount_not_crossed(void)
{
	if (!in_child_with_mounts())
		return;
	g_autofree char *root = pix_test_dir("mounts");
	g_autofree char *mnt = make_dir(root, "mnt");
	make_file(root, "here.jpg", 1);
	g_assert_cmpint(mount("pix-test", mnt, "tmpfs", 0, "size=1m"), ==, 0);
	make_file(mnt, "there.jpg", 1);

	PixWalkConfig cfg = default_config();
	g_autoptr(GPtrArray) same = walk_one(&cfg, root);
	check_listings(same);
	g_assert_cmpuint(same->len, ==, 1);
	assert_entries(get_listing(same, root), "here.jpg", NULL);
	g_assert_cmpuint(get_listing(same, root)->n_skipped, ==, 1);

	cfg.is_cross_mounts = TRUE;
	g_autoptr(GPtrArray) crossed = walk_one(&cfg, root);
	check_listings(crossed);
	g_assert_cmpuint(crossed->len, ==, 2);
	PixListing *ml = get_listing(crossed, mnt);
	assert_entries(ml, "there.jpg", NULL);
	g_assert_cmpuint(ml->dir->st.dev, !=, get_listing(crossed, root)->dir->st.dev);

	g_assert_cmpint(umount(mnt), ==, 0);
}

/* A bind mount of a directory inside itself would be an endless tree:
 * the walker enters no directory that is one of its own ancestors. */
static void test_bind_mount_loop(void)
{
	if (!in_child_with_mounts())
		return;
	g_autofree char *root = pix_test_dir("bind-loop");
	g_autofree char *a = make_dir(root, "a");
	g_autofree char *back = make_dir(a, "back");
	make_file(a, "a.jpg", 1);
	g_assert_cmpint(mount(root, back, "none", MS_BIND, NULL), ==, 0);
	guint warnings_before = pix_log_warnings();

	PixWalkConfig cfg = default_config();
	cfg.is_cross_mounts = TRUE;
	g_autoptr(GPtrArray) listings = walk_one(&cfg, root);
	g_assert_cmpint(umount(back), ==, 0);
	check_listings(listings);
	g_assert_cmpuint(listings->len, ==, 2);
	PixListing *al = get_listing(listings, a);
	assert_entries(al, "a.jpg", NULL);
	g_assert_cmpuint(al->n_skipped, ==, 1);
	g_assert_cmpuint(al->n_subdirs, ==, 0);
	g_assert_cmpuint(pix_log_warnings(), ==, warnings_before + 1);
}

/* The stop flag cannot be reset, so this runs in a child process. */
static void test_stop_requested(void)
{
	if (!in_child_process())
		return;
	g_autofree char *root = pix_test_dir("stop");
	PixWalkConfig cfg = default_config();
	char *roots[] = { root, NULL };

	for (guint i = 0; i < 50; i++) {
		g_autofree char *name = g_strdup_printf("d%02u", i);
		g_autofree char *d = make_dir(root, name);
		make_file(d, "f.jpg", 1);
	}
	/* stop after the first listing: with a queue of one the walker is at
	 * most a listing or two ahead, so most of the 51 are never listed */
	PixQueue *q = pix_queue_new(1, 1);
	WalkJob job = { .cfg = &cfg, .roots = roots, .out = q };
	GThread *t = g_thread_new("walker", walk_thread, &job);
	PixListing *first = pix_queue_pop(q);
	g_assert_nonnull(first);
	g_assert_cmpstr(first->dir->path, ==, root);
	pix_listing_free(first);
	pix_request_stop();
	guint n = 1;
	PixListing *l;
	gboolean is_timeout = FALSE;
	while ((l = pix_queue_pop_timeout(q, WALK_TIMEOUT_US, &is_timeout)) != NULL) {
		pix_listing_free(l);
		n++;
	}
	g_assert_false(is_timeout);   /* the walker closed its queue */
	g_thread_join(t);
	pix_queue_free(q);
	g_assert_cmpuint(n, <, 10);

	/* already stopped: nothing is listed, and the queue still ends */
	g_autoptr(GPtrArray) none = walk_one(&cfg, root);
	g_assert_cmpuint(none->len, ==, 0);
}

/* --- the parallel walk against the one-thread walk --- */

static gboolean is_same_stat(const PixStat *a, const PixStat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->mode == b->mode && a->size_bytes == b->size_bytes &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* Fails the test, naming listing `i` and what differs. */
static void listing_differs(guint i, const PixListing *want, const char *what)
{
	g_autofree char *esc = g_strescape(want->dir->path, NULL);
	g_error("listing %u ('%s') differs from the one-thread walk's: %s", i, esc, what);
}

/* Asserts that `got` is `want` listing for listing: the same directories in
 * the same order, each with the same stat, parent, error and flags, and the
 * same entries in the same order with the same stat. */
static void assert_same_listings(Listings *want, Listings *got)
{
	if (got->len != want->len)
		g_error("%u listings, the one-thread walk had %u", got->len, want->len);
	for (guint i = 0; i < want->len; i++) {
		const PixListing *w = g_ptr_array_index(want, i), *g = g_ptr_array_index(got, i);
		const PixDir *wd = w->dir, *gd = g->dir;

		if (strcmp(wd->path, gd->path) != 0)
			listing_differs(i, w, "another directory");
		if ((wd->parent == NULL) != (gd->parent == NULL) ||
		    (wd->parent != NULL && strcmp(wd->parent->path, gd->parent->path) != 0))
			listing_differs(i, w, "parent");
		if (!is_same_stat(&wd->st, &gd->st) || wd->fsid != gd->fsid || wd->is_ino_unstable != gd->is_ino_unstable)
			listing_differs(i, w, "directory stat");
		if (g_strcmp0(wd->error, gd->error) != 0 || wd->is_unlisted != gd->is_unlisted)
			listing_differs(i, w, "directory error or unlisted flag");
		if (w->is_complete != g->is_complete || w->n_skipped != g->n_skipped || w->n_subdirs != g->n_subdirs ||
		    w->is_unlisted != g->is_unlisted || w->n_known_files != g->n_known_files)
			listing_differs(i, w, "flags or counts");
		if (w->entries->len != g->entries->len)
			listing_differs(i, w, "number of entries");
		for (guint j = 0; j < w->entries->len; j++) {
			const PixEntry *we = &g_array_index(w->entries, PixEntry, j);
			const PixEntry *ge = &g_array_index(g->entries, PixEntry, j);
			if (strcmp(we->name, ge->name) != 0 || we->ino != ge->ino || we->d_type != ge->d_type ||
			    we->stat_errno != ge->stat_errno || !is_same_stat(&we->st, &ge->st))
				listing_differs(i, w, "an entry");
		}
	}
}

/* What a walk leaves besides its listings: warnings and counters. */
typedef struct {
	guint n_warnings;
	gint64 n_dirs, n_skipped;
} WalkTotals;

static WalkTotals walk_totals(void)
{
	return (WalkTotals){ pix_log_warnings(), pix_count_get(PIX_N_DIRS), pix_count_get(PIX_N_SKIPPED) };
}

/* Walks `roots` with `cfg` and `n_threads` into a queue of `capacity`;
 * *totals gets what it added to the warnings and counters. */
static Listings *walk_counted(const PixWalkConfig *cfg, guint n_threads, char **roots, guint capacity,
                              WalkTotals *totals)
{
	PixWalkConfig c = *cfg;
	c.n_threads = n_threads;
	WalkTotals before = walk_totals();
	Listings *listings = walk_roots_queue(&c, roots, capacity);
	WalkTotals after = walk_totals();
	*totals = (WalkTotals){ after.n_warnings - before.n_warnings, after.n_dirs - before.n_dirs,
	                        after.n_skipped - before.n_skipped };
	return listings;
}

/*
 * A tree with a bit of everything the walker decides on: nested
 * directories (year/month/day/raw), directories of 300 and 1,500 files
 * (stat'ed in many chunks), one of 150 subdirectories (more than are
 * started ahead at once), a 30-level chain, a path longer than PATH_MAX,
 * default-excluded names and directories, symbolic links to files and
 * directories and dangling ones, a FIFO, names with control characters
 * and invalid UTF-8, empty directories, a directory that cannot be opened
 * (0) and one that cannot be searched (r--) (both only refuse a user who
 * is not root).
 */
static void make_varied_tree(const char *root)
{
	char name[251];

	for (guint y = 0; y < 3; y++) {
		g_autofree char *yname = g_strdup_printf("%u", 2019 + y);
		g_autofree char *year = make_dir(root, yname);
		for (guint m = 0; m < 4; m++) {
			g_autofree char *mname = g_strdup_printf("%02u", m + 1);
			g_autofree char *month = make_dir(year, mname);
			for (guint d = 0; d < 3; d++) {
				g_autofree char *dname = g_strdup_printf("%02u-event", d * 9 + 1);
				g_autofree char *day = make_dir(month, dname);
				for (guint i = 0; i < 20; i++) {
					g_autofree char *f = g_strdup_printf("IMG_%04u.JPG", i);
					make_file(day, f, i);
				}
				g_autofree char *raw = make_dir(day, "raw");
				for (guint i = 0; i < 5; i++) {
					g_autofree char *f = g_strdup_printf("IMG_%04u.CR2", i);
					make_file(raw, f, 100 + i);
				}
				make_file(day, "Thumbs.db", 1);
				g_autofree char *thumbs = make_dir(day, "@eaDir");
				make_file(thumbs, "t.jpg", 1);
			}
		}
		g_autofree char *empty = make_dir(year, "empty");
	}
	for (guint i = 0; i < 300; i++) {
		g_autofree char *f = g_strdup_printf("top-%03u.jpg", i);
		make_file(root, f, i % 7);
	}
	g_autofree char *big = make_dir(root, "big");
	for (guint i = 0; i < 1500; i++) {
		g_autofree char *f = g_strdup_printf("%s/f%04u", big, i);
		int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0644);
		g_assert_cmpint(fd, >=, 0);
		close(fd);
	}
	g_autofree char *wide = make_dir(root, "wide");
	for (guint i = 0; i < 150; i++) {
		g_autofree char *dname = g_strdup_printf("w%03u", i);
		g_autofree char *d = make_dir(wide, dname);
		if (i % 3 == 0)
			make_file(d, "one.jpg", i);
	}
	g_autofree char *deep = make_dir(root, "deep");
	g_autofree char *deepest = make_chain(deep, "d", 30);
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	g_autofree char *longdir = make_dir(root, "long");
	g_autofree char *longest = make_chain(longdir, name, 20);

	g_autofree char *git = make_dir(root, ".git");
	make_file(git, "HEAD", 1);
	make_file(root, ".DS_Store", 1);
	make_file(root, "._IMG_0001.JPG", 1);
	make_symlink(root, "to-file", "top-001.jpg");
	make_symlink(root, "to-dir", "2019");
	make_symlink(root, "dangling", "does-not-exist");
	g_autofree char *fifo = path_join(root, "pipe");
	g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
	g_autofree char *odd = make_dir(root, "odd\xff\nname");
	make_file(odd, "tab\there.jpg", 3);
	make_file(odd, "bad\xfe.jpg", 4);

	g_autofree char *locked = make_dir(root, "locked");
	make_file(locked, "secret.jpg", 1);
	g_autofree char *locked_sub = make_dir(locked, "sub");
	g_assert_cmpint(chmod(locked, 0), ==, 0);
	g_autofree char *noexec = make_dir(root, "noexec");
	make_file(noexec, "x.jpg", 1);
	make_file(noexec, "y.jpg", 1);
	g_autofree char *noexec_sub = make_dir(noexec, "sub");
	g_assert_cmpint(chmod(noexec, 0444), ==, 0);
}

/* Compares `rounds` parallel walks of `roots` with `cfg` (thread counts and
 * queue sizes varying) with the one-thread walk. */
static void compare_walks(const PixWalkConfig *cfg, char **roots, guint rounds)
{
	static const guint threads[] = { 2, 16, 3, 64, 4, 8 };
	WalkTotals want_totals, got_totals;
	g_autoptr(GPtrArray) want = walk_counted(cfg, 1, roots, 2, &want_totals);

	check_listings(want);
	for (guint r = 0; r < rounds; r++) {
		guint n = threads[r % G_N_ELEMENTS(threads)];
		g_autoptr(GPtrArray) got = walk_counted(cfg, n, roots, r % 2 == 0 ? 1 : 64, &got_totals);
		check_listings(got);
		assert_same_listings(want, got);
		g_assert_cmpuint(got_totals.n_warnings, ==, want_totals.n_warnings);
		g_assert_cmpint(got_totals.n_dirs, ==, want_totals.n_dirs);
		g_assert_cmpint(got_totals.n_skipped, ==, want_totals.n_skipped);
	}
}

static guint test_rounds(void)
{
	const char *env = g_getenv("PIX_TEST_WALK_ROUNDS");
	return env != NULL ? (guint)g_ascii_strtoull(env, NULL, 10) : 30;
}

/*
 * The parallel walk yields the one-thread walk's listings, in its order,
 * over and over (races): in a child process with a mount namespace of its
 * own where it may (a tmpfs not crossed, then crossed, and a bind-mount
 * loop), as user nobody where it can (so the locked directories refuse),
 * and with a missing root between two others.
 */
static void test_parallel_same_as_serial(void)
{
	if (!in_child_process())
		return;
	gboolean has_mounts = private_mount_namespace() == 0;
	g_autofree char *root = pix_test_dir("same");
	g_autofree char *second = pix_test_dir("same-second");
	g_autofree char *missing = path_join(second, "not-there");
	char *roots[] = { root, missing, second, NULL };

	g_autofree char *mnt = path_join(root, "mnt");
	g_autofree char *a = path_join(root, "a");
	g_autofree char *back = path_join(a, "back");

	make_varied_tree(root);
	make_file(second, "s.jpg", 1);
	if (has_mounts) {
		g_assert_cmpint(mkdir(mnt, 0755), ==, 0);
		g_assert_cmpint(mount("pix-test", mnt, "tmpfs", 0, "size=1m"), ==, 0);
		make_file(mnt, "there.jpg", 1);
		g_autofree char *inner = make_dir(mnt, "inner");
		make_file(inner, "deeper.jpg", 2);
		g_assert_cmpint(mkdir(a, 0755), ==, 0);
		g_assert_cmpint(mkdir(back, 0755), ==, 0);
		make_file(a, "a.jpg", 1);
		g_assert_cmpint(mount(root, back, "none", MS_BIND, NULL), ==, 0);
	} else {
		g_test_message("no mount namespace: other mounts and bind-mount loops not covered");
	}
	gboolean is_nobody = geteuid() == 0 && chmod(pix_test_root, 0755) == 0 && nobody_for_now() == 0;
	if (!is_nobody)
		g_test_message("not user nobody: the locked directories do not refuse root");
	else
		g_assert_cmpint(access(root, R_OK), ==, 0);

	guint rounds = test_rounds();
	PixWalkConfig cfg = default_config();
	compare_walks(&cfg, roots, rounds);
	cfg.is_cross_mounts = TRUE;
	compare_walks(&cfg, roots, rounds);

	g_autofree char *path_pattern = g_strconcat(root, "/20*/0[13]", NULL);
	char *excludes[] = { "*.CR2", "w1*", path_pattern, NULL };
	g_autofree char *db = path_join(root, "top-005.jpg");
	g_autofree char *sub = path_join(root, "big");
	char *paths[] = { db, sub, NULL };
	PixWalkConfig user = { .excludes = excludes, .exclude_paths = paths };
	compare_walks(&user, roots, rounds / 3 + 1);
	if (is_nobody)
		back_to_root();
	/* before the cleanup, which would follow the loop */
	if (has_mounts) {
		g_assert_cmpint(umount(back), ==, 0);
		g_assert_cmpint(umount(mnt), ==, 0);
	}
}

/* --quick's callback for the tests: directories whose name begins with
 * 'k' are known, with their subdirectories on disk plus one that is gone
 * and one excluded.  Asserts it runs on the walker's thread, one call at a
 * time; records the paths asked about. */
typedef struct {
	GPtrArray *asked;       /* char* (owned) */
	gint n_in_call;         /* atomic */
} Known;

static gboolean fake_is_known(gpointer data, const PixDir *dir, GPtrArray **subdir_names, gint64 *n_files)
{
	Known *k = data;

	g_assert_true(g_thread_self() == g_atomic_pointer_get(&walker_thread));
	g_assert_cmpint(g_atomic_int_add(&k->n_in_call, 1), ==, 0);
	g_assert_cmpuint(dir->st.ino, !=, 0);   /* opened and stat'ed first */
	g_ptr_array_add(k->asked, g_strdup(dir->path));
	g_autofree char *base = g_path_get_basename(dir->path);
	gboolean is_known = base[0] == 'k';
	if (is_known) {
		*subdir_names = g_ptr_array_new_with_free_func(g_free);
		GDir *d = g_dir_open(dir->path, 0, NULL);
		g_assert_nonnull(d);
		for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
			g_autofree char *p = path_join(dir->path, n);
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				g_ptr_array_add(*subdir_names, g_strdup(n));
		}
		g_dir_close(d);
		g_ptr_array_sort(*subdir_names, compare_strings);
		g_ptr_array_add(*subdir_names, g_strdup("gone"));
		g_ptr_array_add(*subdir_names, g_strdup(".git"));
		*n_files = 7;
	}
	g_atomic_int_add(&k->n_in_call, -1);
	return is_known;
}

/* --quick: the same listings, and the catalog asked about the same
 * directories, only ever from the walker's thread. */
static void test_parallel_quick(void)
{
	g_autofree char *root = pix_test_dir("quick");
	char *roots[] = { root, NULL };

	for (guint i = 0; i < 40; i++) {
		g_autofree char *name = g_strdup_printf("%s%02u", i % 3 == 0 ? "k" : "d", i);
		g_autofree char *d = make_dir(root, name);
		make_file(d, "f.jpg", i);
		for (guint j = 0; j < 3; j++) {
			g_autofree char *sname = g_strdup_printf("%s%u", j == 1 ? "k" : "s", j);
			g_autofree char *s = make_dir(d, sname);
			make_file(s, "g.jpg", j);
			g_autofree char *leaf = make_dir(s, "leaf");
			make_file(leaf, "h.jpg", j);
		}
	}
	g_autofree char *git = make_dir(root, "k-git");
	g_autofree char *gitdir = make_dir(git, ".git");

	Known want_k = { .asked = g_ptr_array_new_with_free_func(g_free) };
	PixWalkConfig cfg = default_config();
	cfg.is_known = fake_is_known;
	cfg.is_known_data = &want_k;
	WalkTotals want_totals, got_totals;
	g_autoptr(GPtrArray) want = walk_counted(&cfg, 1, roots, 2, &want_totals);
	check_listings(want);
	g_ptr_array_sort(want_k.asked, compare_strings);
	g_assert_nonnull(find_listing(want, git));
	g_assert_true(get_listing(want, git)->is_unlisted);

	for (guint r = 0; r < test_rounds(); r++) {
		Known got_k = { .asked = g_ptr_array_new_with_free_func(g_free) };
		cfg.is_known_data = &got_k;
		g_autoptr(GPtrArray) got = walk_counted(&cfg, r % 2 == 0 ? 16 : 3, roots, r % 2 == 0 ? 1 : 64, &got_totals);
		check_listings(got);
		assert_same_listings(want, got);
		g_assert_cmpuint(got_totals.n_warnings, ==, want_totals.n_warnings);
		g_assert_cmpint(got_totals.n_dirs, ==, want_totals.n_dirs);
		g_ptr_array_sort(got_k.asked, compare_strings);
		g_assert_cmpuint(got_k.asked->len, ==, want_k.asked->len);
		for (guint i = 0; i < want_k.asked->len; i++)
			g_assert_cmpstr(g_ptr_array_index(got_k.asked, i), ==, g_ptr_array_index(want_k.asked, i));
		g_ptr_array_free(got_k.asked, TRUE);
	}
	g_ptr_array_free(want_k.asked, TRUE);
}

static guint count_open_fds(void)
{
	GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
	guint n = 0;

	g_assert_nonnull(d);
	while (g_dir_read_name(d) != NULL)
		n++;
	g_dir_close(d);
	return n;
}

/* However wide the tree, the parallel walk holds at most 64 directories
 * ahead of the walk open (walk.c's AHEAD_DIRS, and one more it waits for),
 * besides one per level of the directory being walked. */
static void test_parallel_bounded_fds(void)
{
	g_autofree char *root = pix_test_dir("fds");
	PixWalkConfig cfg = default_config();
	char *roots[] = { root, NULL };

	for (guint i = 0; i < 1000; i++) {
		g_autofree char *name = g_strdup_printf("d%04u", i);
		g_autofree char *d = make_dir(root, name);
		if (i % 10 == 0) {
			g_autofree char *s = make_dir(d, "s");
			make_file(s, "f.jpg", 1);
		}
	}
	g_autofree char *chain = make_dir(root, "chain");
	g_autofree char *deepest = make_chain(chain, "c", 100);

	cfg.n_threads = 16;
	guint base = count_open_fds();
	guint max = base;
	WalkJob job = { .cfg = &cfg, .roots = roots, .out = pix_queue_new(1, 1) };
	GThread *t = g_thread_new("walker", walk_thread, &job);
	guint n = 0;
	for (PixListing *l; (l = pix_queue_pop(job.out)) != NULL; n++) {
		max = MAX(max, count_open_fds());
		pix_listing_free(l);
	}
	g_thread_join(t);
	pix_queue_free(job.out);
	g_assert_cmpuint(n, ==, 1 + 1000 + 100 + 1 + 100);
	/* 65 ahead, 102 levels (root, chain, 100 c), the count's own, slack */
	g_test_message("at most %u fds open during the walk, %u before", max, base);
	g_assert_cmpuint(max, <=, base + 65 + 102 + 1 + 4);
	g_assert_cmpuint(max, >, base + 32);   /* it did walk ahead */
	g_assert_cmpuint(count_open_fds(), ==, base);
}

/* The tests run twice: with the one-thread walk, and as /walk/parallel/...
 * with a pool of PARALLEL_THREADS, each asserting the same. */
#define PARALLEL_THREADS 4

static const struct {
	const char *name;
	void (*fn)(void);
} both_walks[] = {
	{ "inode-order", test_inode_order },
	{ "large-directory", test_large_directory },
	{ "parents-before-children", test_parents_before_children },
	{ "two-roots", test_two_roots },
	{ "symlinks-not-followed", test_symlinks_not_followed },
	{ "hash-collision-names", test_hash_collision_names },
	{ "fifo-and-socket", test_fifo_and_socket },
	{ "default-excludes", test_default_excludes },
	{ "user-excludes", test_user_excludes },
	{ "exclude-paths", test_exclude_paths },
	{ "names-byte-exact", test_names_byte_exact },
	{ "deep-tree", test_deep_tree },
	{ "path-longer-than-path-max", test_path_longer_than_path_max },
	{ "missing-root", test_missing_root },
	{ "unreadable-dir", test_unreadable_dir },
	{ "unsearchable-dir", test_unsearchable_dir },
	{ "other-mount-not-crossed", test_other_mount_not_crossed },
	{ "bind-mount-loop", test_bind_mount_loop },
	{ "stop-requested", test_stop_requested },
};

static void run_serial(gconstpointer data)
{
	test_threads = 0;
	both_walks[GPOINTER_TO_UINT(data)].fn();
}

static void run_parallel(gconstpointer data)
{
	test_threads = PARALLEL_THREADS;
	both_walks[GPOINTER_TO_UINT(data)].fn();
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	for (guint i = 0; i < G_N_ELEMENTS(both_walks); i++) {
		g_autofree char *path = g_strconcat("/walk/", both_walks[i].name, NULL);
		g_test_add_data_func(path, GUINT_TO_POINTER(i), run_serial);
	}
	g_test_add_func("/walk/is-excluded", test_is_excluded);
	for (guint i = 0; i < G_N_ELEMENTS(both_walks); i++) {
		g_autofree char *path = g_strconcat("/walk/parallel/", both_walks[i].name, NULL);
		g_test_add_data_func(path, GUINT_TO_POINTER(i), run_parallel);
	}
	g_test_add_func("/walk/parallel/same-as-serial", test_parallel_same_as_serial);
	g_test_add_func("/walk/parallel/quick", test_parallel_quick);
	g_test_add_func("/walk/parallel/bounded-fds", test_parallel_bounded_fds);
	return g_test_run();
}
