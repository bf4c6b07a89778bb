/*
 * testlib.h: helpers shared by the GTest unit tests (tests/unit/test-*.c).
 *
 * Each unit test is one .c file with main() that calls pix_test_init(),
 * adds GTest cases with paths like "/walk/unreadable-dir", and returns
 * g_test_run().  The runner passes --tap.
 */
#ifndef PIX_TESTLIB_H
#define PIX_TESTLIB_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *pix_test_root;

static void pix_test_cleanup(void)
{
	if (pix_test_root != NULL && g_getenv("PIX_TEST_KEEP") == NULL) {
		g_autofree char *cmd = g_strdup_printf("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'",
		                                       pix_test_root, pix_test_root);
		if (system(cmd) != 0)
			g_printerr("cannot remove %s\n", pix_test_root);
	}
}

static inline void pix_test_init(int *argc, char ***argv)
{
	g_test_init(argc, argv, NULL);
	pix_test_root = g_dir_make_tmp("photoidx-unit-XXXXXX", NULL);
	g_assert_nonnull(pix_test_root);
	atexit(pix_test_cleanup);
}

/* A new empty directory under the test's temporary root (transfer full). */
static inline char *pix_test_dir(const char *name)
{
	static int n;
	char *dir = g_strdup_printf("%s/%s-%d", pix_test_root, name, ++n);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	return dir;
}

static inline void pix_test_write(const char *path, const void *data, gsize len)
{
	GError *error = NULL;
	g_file_set_contents(path, data, (gssize)len, &error);
	g_assert_no_error(error);
}

/*
 * Runs the fixture generator ($MKFIXTURE, set by `make check`) with the
 * NULL-terminated argument vector.  Returns FALSE (and marks the test
 * skipped) when MKFIXTURE is not set.
 */
static inline gboolean pix_test_mkfixturev(const char *const *argv)
{
	const char *tool = g_getenv("MKFIXTURE");
	if (tool == NULL) {
		g_test_skip("MKFIXTURE is not set (run through make check)");
		return FALSE;
	}
	GPtrArray *args = g_ptr_array_new();
	g_ptr_array_add(args, (char *)tool);
	for (const char *const *a = argv; *a != NULL; a++)
		g_ptr_array_add(args, (char *)*a);
	g_ptr_array_add(args, NULL);
	int status = 0;
	GError *error = NULL;
	g_spawn_sync(NULL, (char **)args->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &error);
	g_assert_no_error(error);
	g_assert_true(g_spawn_check_wait_status(status, NULL));
	g_ptr_array_free(args, TRUE);
	return TRUE;
}

/* As pix_test_mkfixturev(), with the arguments listed (NULL-terminated). */
static inline gboolean pix_test_mkfixture(const char *first, ...)
{
	GPtrArray *args = g_ptr_array_new();
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
		g_ptr_array_add(args, (char *)a);
	va_end(ap);
	g_ptr_array_add(args, NULL);
	gboolean ok = pix_test_mkfixturev((const char *const *)args->pdata);
	g_ptr_array_free(args, TRUE);
	return ok;
}

/*
 * The bytes of a fixture made by `mkfixture KIND OUT OPTS...` (OPTS
 * NULL-terminated), or NULL when the generator is not available (the test
 * is then marked skipped and must return).  FIXTURE(kind, opts...) lists
 * the options in place.
 */
static inline GBytes *pix_test_fixture_bytes(const char *kind, const char *const *opts)
{
	g_autofree char *dir = pix_test_dir("fixture");
	g_autofree char *out = g_build_filename(dir, "out", NULL);
	GPtrArray *args = g_ptr_array_new();
	g_ptr_array_add(args, (char *)kind);
	g_ptr_array_add(args, out);
	for (const char *const *o = opts; *o != NULL; o++)
		g_ptr_array_add(args, (char *)*o);
	g_ptr_array_add(args, NULL);
	gboolean ok = pix_test_mkfixturev((const char *const *)args->pdata);
	g_ptr_array_free(args, TRUE);
	if (!ok)
		return NULL;
	char *data = NULL;
	gsize len = 0;
	g_assert_true(g_file_get_contents(out, &data, &len, NULL));
	return g_bytes_new_take(data, len);
}
#define FIXTURE(kind, ...) pix_test_fixture_bytes(kind, (const char *const[]){ __VA_ARGS__, NULL })

/* The directory of the shared samples, or NULL (test skipped) when absent. */
static inline const char *pix_test_samples(void)
{
	const char *dir = g_getenv("PIX_SAMPLES");
	if (dir == NULL)
		dir = "../shared/samples";
	if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		g_test_skip("../shared/samples is absent (it is not part of the repository)");
		return NULL;
	}
	return dir;
}

#ifdef PIX_MD5_LANES_H
/* Selects `width` MD5 lanes for the test (0: none, OpenSSL's EVP; 8: AVX2;
 * 16: AVX-512), or skips it on a CPU without them (for the tests that
 * include md5-lanes.h before this file). */
static inline gboolean pix_test_need_lanes(gconstpointer width)
{
	guint want = GPOINTER_TO_UINT(width);
	pix_md5_set_lane_count(want);
	if (pix_md5_lane_count() != want) {
		g_test_skip(want == 16 ? "this CPU has no AVX-512" : "this CPU has no AVX2");
		return FALSE;
	}
	return TRUE;
}
#endif

#endif
