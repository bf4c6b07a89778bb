/*
 * test-path.c: path.c opens and stats absolute paths without following a
 * symbolic link anywhere, at any length (longer than PATH_MAX too).
 */
#include "path.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>

static void test_join_and_under(void)
{
	g_autofree char *a = pix_path_join("/", "x");
	g_autofree char *b = pix_path_join("/a/b", "c");
	g_assert_cmpstr(a, ==, "/x");
	g_assert_cmpstr(b, ==, "/a/b/c");
	g_assert_true(pix_path_is_under("/a/b", "/a/b"));
	g_assert_true(pix_path_is_under("/a/b/c", "/a/b"));
	g_assert_false(pix_path_is_under("/a/bc", "/a/b"));
	g_assert_false(pix_path_is_under("/a", "/a/b"));
	g_assert_true(pix_path_is_under("/anything", "/"));
}

static void test_open_plain(void)
{
	g_autofree char *dir = pix_test_dir("path");
	g_autofree char *file = g_build_filename(dir, "f.txt", NULL);
	pix_test_write(file, "hello", 5);
	int fd = pix_path_open(file, O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(fd, >=, 0);
	char buf[8];
	g_assert_cmpint(read(fd, buf, sizeof buf), ==, 5);
	close(fd);
	struct stat st;
	g_assert_cmpint(pix_path_lstat(file, &st), ==, 0);
	g_assert_cmpint(st.st_size, ==, 5);
	g_autofree char *missing = g_build_filename(dir, "nope", NULL);
	g_assert_cmpint(pix_path_open(missing, O_RDONLY), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
	g_assert_cmpint(pix_path_lstat(missing, &st), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
}

/* A directory replaced by a symlink (a scan's race, or an attack): the
 * path must not be followed out of the tree. */
static void test_symlinks_refused(void)
{
	g_autofree char *dir = pix_test_dir("path-links");
	g_autofree char *outside = pix_test_dir("outside");
	g_autofree char *secret = g_build_filename(outside, "secret", NULL);
	pix_test_write(secret, "s", 1);
	g_autofree char *swapped = g_build_filename(dir, "sub", NULL);
	g_assert_cmpint(symlink(outside, swapped), ==, 0);
	g_autofree char *via = g_build_filename(dir, "sub", "secret", NULL);
	g_assert_cmpint(pix_path_open(via, O_RDONLY), ==, -1);
	g_assert_cmpint(errno, ==, ELOOP);
	struct stat st;
	g_assert_cmpint(pix_path_lstat(via, &st), ==, -1);
	g_assert_cmpint(errno, ==, ELOOP);

	/* the last component too */
	g_autofree char *link = g_build_filename(dir, "link", NULL);
	g_assert_cmpint(symlink(secret, link), ==, 0);
	g_assert_cmpint(pix_path_open(link, O_RDONLY), ==, -1);
	g_assert_cmpint(errno, ==, ELOOP);
	/* lstat of the link itself is fine: it is there, as a link */
	g_assert_cmpint(pix_path_lstat(link, &st), ==, 0);
	g_assert_true(S_ISLNK(st.st_mode));
}

/* 30 levels of 200-byte names: a 6,000-byte path. */
static void test_longer_than_path_max(void)
{
	g_autofree char *base = pix_test_dir("path-long");
	g_autoptr(GString) path = g_string_new(base);
	char name[201];
	memset(name, 'd', 200);
	name[200] = '\0';
	int dirfd = open(base, O_RDONLY | O_DIRECTORY);
	g_assert_cmpint(dirfd, >=, 0);
	for (int i = 0; i < 30; i++) {
		name[0] = (char)('a' + i % 26);
		g_assert_cmpint(mkdirat(dirfd, name, 0755), ==, 0);
		int next = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
		g_assert_cmpint(next, >=, 0);
		close(dirfd);
		dirfd = next;
		g_string_append_printf(path, "/%s", name);
	}
	int fd = openat(dirfd, "deep.txt", O_WRONLY | O_CREAT, 0644);
	g_assert_cmpint(write(fd, "deep", 4), ==, 4);
	close(fd);
	close(dirfd);
	g_string_append(path, "/deep.txt");
	g_assert_cmpuint(path->len, >, PATH_MAX);

	fd = pix_path_open(path->str, O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(fd, >=, 0);
	char buf[8];
	g_assert_cmpint(read(fd, buf, sizeof buf), ==, 4);
	close(fd);
	struct stat st;
	g_assert_cmpint(pix_path_lstat(path->str, &st), ==, 0);
	g_assert_cmpint(st.st_size, ==, 4);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/path/join-and-under", test_join_and_under);
	g_test_add_func("/path/open-plain", test_open_plain);
	g_test_add_func("/path/symlinks-refused", test_symlinks_refused);
	g_test_add_func("/path/longer-than-path-max", test_longer_than_path_max);
	return g_test_run();
}
