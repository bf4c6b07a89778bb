/*
 * test-fuzz-regressions.c: every input the fuzzers found crashing or
 * hanging a parser, kept in tests/data/fuzz-regressions/ (see
 * fuzz/README.md), must now go through without a crash and finish.
 *
 * A file is named TARGET-WHAT (e.g. "png-ztxt-bad-zlib"); TARGET is the
 * fuzz target that found it.  Each file goes through the whole
 * PixMetaParser in one piece, in 1-byte pieces and in the pieces the
 * fuzzer cut it into, then through its target exactly as the fuzzer ran
 * it (the target functions of fuzz/fuzz.h, with their checks of the
 * results).  Each file runs in a subprocess of its own, so one crash
 * does not hide the others; a run longer than TIMEOUT_S fails.  The
 * SANITIZE=1 build catches what the fuzzer's sanitizers caught.
 *
 * A file named TARGET-WHAT.todo is a known bug whose fix is pending: its
 * failure is reported as TODO (not a failure of `make check`); once it
 * passes, the fix should drop the suffix.
 *
 * With no files (or no directory) the test is skipped.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "../../fuzz/fuzz.h"

#define REGRESSIONS "tests/data/fuzz-regressions"
/* seconds for one input through every parser, sanitizers and valgrind
 * included; the fuzzers call a run of 10 s a hang */
#define TIMEOUT_S 300

static void run_input(const char *path)
{
	g_autofree char *name = g_path_get_basename(path);
	g_autofree char *target = g_strndup(name, strcspn(name, "-"));
	g_autofree char *data = NULL;
	gsize len = 0;
	GError *error = NULL;

	g_assert_true(g_file_get_contents(path, &data, &len, &error));
	g_assert_no_error(error);
	const guint8 *bytes = (const guint8 *)data;
	fuzz_meta_pieces(bytes, len, MAX(len, 1));
	fuzz_meta_pieces(bytes, len, 1);
	fuzz_meta_pieces(bytes, len, 0);
	const FuzzTarget *t = NULL;
	for (guint i = 0; i < G_N_ELEMENTS(fuzz_targets); i++)
		if (strcmp(fuzz_targets[i].name, target) == 0)
			t = &fuzz_targets[i];
	if (t == NULL) {
		g_test_message("'%s' names no fuzz target (want TARGET-WHAT)", name);
		g_test_fail();
	} else {
		t->run(bytes, len);
	}
}

static void test_input(gconstpointer p)
{
	const char *path = p;
	if (g_test_subprocess()) {
		run_input(path);
		return;
	}
	g_test_trap_subprocess(NULL, (guint64)TIMEOUT_S * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
	gboolean is_todo = g_str_has_suffix(path, ".todo");
	if (g_test_trap_has_passed()) {
		if (is_todo)
			g_test_message("'%s' passes in this build: once it passes with SANITIZE=1 too, "
			               "drop its .todo suffix", path);
		return;
	}
	if (is_todo) {
		g_test_incomplete("known bug, fix pending");
		return;
	}
	g_test_trap_assert_passed();
}

static void test_none(void)
{
	g_test_skip("no inputs in " REGRESSIONS " (the fuzzers found nothing to keep)");
}

/* For g_ptr_array_sort(), which passes pointers to the elements. */
static int by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);

	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	GDir *dir = g_dir_open(REGRESSIONS, 0, NULL);
	for (const char *n; dir != NULL && (n = g_dir_read_name(dir)) != NULL;)
		if (n[0] != '.')
			g_ptr_array_add(paths, g_build_filename(REGRESSIONS, n, NULL));
	if (dir != NULL)
		g_dir_close(dir);
	g_ptr_array_sort(paths, by_name);
	for (guint i = 0; i < paths->len; i++) {
		const char *path = g_ptr_array_index(paths, i);
		g_autofree char *name = g_path_get_basename(path);
		g_autofree char *test = g_strdup_printf("/fuzz-regressions/%s", name);
		g_test_add_data_func(test, path, test_input);
	}
	if (paths->len == 0)
		g_test_add_func("/fuzz-regressions/none", test_none);
	return g_test_run();
}
