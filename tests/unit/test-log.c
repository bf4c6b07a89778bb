/*
 * test-log.c: unit tests of src/log.h.
 *
 * Covers pix_quote() (plain ASCII and valid UTF-8 kept, control bytes and
 * backslashes escaped, every invalid UTF-8 byte as \xNN, and a round trip
 * over random byte strings), pix_format_bytes() (decimal units), the
 * warning count (counted even when quiet, which is what keeps the exit
 * status independent of --quiet), what reaches stderr, the per-run
 * counters under concurrent updates, and the stop request.
 *
 * The stop request is a process-wide flag with no reset, so its test is
 * registered last, in a suite of its own.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>

/* --- helpers --- */

static void assert_quote(const char *in, const char *want)
{
	g_autofree char *got = pix_quote(in);
	if (g_strcmp0(got, want) != 0) {
		g_autofree char *in_esc = g_strescape(in, NULL);
		g_autofree char *got_esc = g_strescape(got, NULL);
		g_autofree char *want_esc = g_strescape(want, NULL);
		g_error("pix_quote(\"%s\") gave \"%s\", want \"%s\"", in_esc, got_esc, want_esc);
	}
}

/* The inverse of pix_quote() as log.h documents it: \\, \n, \t, \r and
 * \xNN escapes, everything else literal.  Returns NULL on an escape
 * pix_quote() never writes. */
static char *unquote(const char *s)
{
	GString *out = g_string_new(NULL);
	for (const char *p = s; *p != '\0'; p++) {
		if (*p != '\\') {
			g_string_append_c(out, *p);
			continue;
		}
		p++;
		if (*p == '\\')
			g_string_append_c(out, '\\');
		else if (*p == 'n')
			g_string_append_c(out, '\n');
		else if (*p == 't')
			g_string_append_c(out, '\t');
		else if (*p == 'r')
			g_string_append_c(out, '\r');
		else if (*p == 'x' && g_ascii_isxdigit(p[1]) && g_ascii_isxdigit(p[2])) {
			g_string_append_c(out, (char)(g_ascii_xdigit_value(p[1]) * 16 + g_ascii_xdigit_value(p[2])));
			p += 2;
		} else {
			g_string_free(out, TRUE);
			return NULL;
		}
	}
	return g_string_free(out, FALSE);
}

/* Whether `s` is safe to print: valid UTF-8 without C0 controls or DEL. */
static gboolean is_display_safe(const char *s)
{
	if (!g_utf8_validate(s, -1, NULL))
		return FALSE;
	for (const guchar *p = (const guchar *)s; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return FALSE;
	}
	return TRUE;
}

/* Runs `fn` with stderr going to a file and returns what it wrote. */
static char *capture_stderr(void (*fn)(gpointer), gpointer data)
{
	g_autofree char *dir = pix_test_dir("stderr");
	g_autofree char *path = g_build_filename(dir, "stderr.txt", NULL);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	g_assert_cmpint(fd, >=, 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	g_assert_cmpint(saved, >=, 0);
	g_assert_cmpint(dup2(fd, STDERR_FILENO), ==, STDERR_FILENO);
	close(fd);
	fn(data);
	fflush(stderr);
	g_assert_cmpint(dup2(saved, STDERR_FILENO), ==, STDERR_FILENO);
	close(saved);
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* --- pix_quote --- */

static void test_quote_plain_ascii(void)
{
	assert_quote("", "");
	assert_quote("IMG_0001.JPG", "IMG_0001.JPG");
	assert_quote("/photos/2021 summer/it's \"fine\" (1).jpg", "/photos/2021 summer/it's \"fine\" (1).jpg");
	/* every printable ASCII character but the backslash stands for itself */
	GString *all = g_string_new(NULL);
	for (int c = 0x20; c < 0x7f; c++) {
		if (c != '\\')
			g_string_append_c(all, (char)c);
	}
	assert_quote(all->str, all->str);
	g_string_free(all, TRUE);
}

static void test_quote_valid_utf8_kept(void)
{
	assert_quote("Müller", "Müller");
	assert_quote("東京/夏.jpg", "東京/夏.jpg");
	assert_quote("emoji \xf0\x9f\x98\x80 end", "emoji \xf0\x9f\x98\x80 end");
	/* the largest code point and U+FFFD itself */
	assert_quote("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
	assert_quote("\xef\xbf\xbd", "\xef\xbf\xbd");
}

static void test_quote_control_bytes(void)
{
	assert_quote("a\nb", "a\\nb");
	assert_quote("a\tb", "a\\tb");
	assert_quote("a\rb", "a\\rb");
	assert_quote("\x01", "\\x01");
	assert_quote("\x1b[31mred", "\\x1b[31mred");
	assert_quote("\x7f", "\\x7f");
	assert_quote("\x1f\x7f\n", "\\x1f\\x7f\\n");
}

static void test_quote_backslash_doubled(void)
{
	assert_quote("a\\b", "a\\\\b");
	assert_quote("\\\\", "\\\\\\\\");
	/* a name that looks like an escape must not read as one */
	assert_quote("\\n", "\\\\n");
	assert_quote("\\xff", "\\\\xff");
}

static void test_quote_invalid_utf8(void)
{
	assert_quote("\xff", "\\xff");
	assert_quote("a\xff" "b", "a\\xffb");
	assert_quote("\x80", "\\x80");                       /* lone continuation byte */
	assert_quote("\xe2\x82", "\\xe2\\x82");               /* truncated at the end */
	assert_quote("\xe2\x82x", "\\xe2\\x82x");             /* truncated, then ASCII */
	assert_quote("\xe2\x82\xe2\x82\xac", "\\xe2\\x82\xe2\x82\xac"); /* then a valid € */
	assert_quote("\xc0\xaf", "\\xc0\\xaf");               /* overlong '/' */
	assert_quote("\xe0\x80\xaf", "\\xe0\\x80\\xaf");      /* overlong, 3 bytes */
	assert_quote("\xed\xa0\x80", "\\xed\\xa0\\x80");      /* UTF-16 surrogate */
	assert_quote("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
	assert_quote("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80"); /* 5-byte form */
	assert_quote("\xfe\xff", "\\xfe\\xff");
	assert_quote("caf\xe9.jpg", "caf\\xe9.jpg");          /* Latin-1 name */
}

/* Property: for any byte string, the quote is display-safe and unquotes
 * back to exactly the input. */
static void test_quote_round_trip_random(void)
{
	for (guint iter = 0; iter < 5000; iter++) {
		guint len = (guint)g_test_rand_int_range(0, 40);
		g_autofree char *in = g_malloc(len + 1);
		for (guint i = 0; i < len; i++) {
			/* favour the interesting bytes: controls, backslash, high */
			static const guchar picks[] = { '\\', '\n', '\t', '\r', 0x01, 0x7f, 0x80, 0xbf,
			                                0xc2, 0xe2, 0xf0, 0xff, 'a', '/' };
			if (g_test_rand_bit())
				in[i] = (char)picks[g_test_rand_int_range(0, G_N_ELEMENTS(picks))];
			else
				in[i] = (char)g_test_rand_int_range(1, 256);
		}
		in[len] = '\0';
		g_autofree char *q = pix_quote(in);
		g_autofree char *back = unquote(q);
		if (!is_display_safe(q) || g_strcmp0(back, in) != 0) {
			g_autofree char *esc = g_strescape(in, NULL);
			g_error("pix_quote(\"%s\") is not display-safe or does not round-trip", esc);
		}
	}
}

/*
 * C1 control characters (U+0080..U+009F) are valid UTF-8, but they are
 * control characters: a terminal that honours 8-bit C1 takes U+009B as
 * CSI, the start of an escape sequence, exactly like "\x1b[".  log.h says
 * control characters are escaped.
 */
static void test_quote_c1_controls(void)
{
	static const char *const names[] = {
		"evil\xc2\x9b" "31mred",   /* U+009B CSI */
		"next\xc2\x85line",        /* U+0085 NEL */
		"osc\xc2\x9d" "0;title\xc2\x9c", /* U+009D OSC ... U+009C ST */
	};

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *q = pix_quote(names[i]);
		g_autofree char *back = unquote(q);
		g_assert_cmpstr(back, ==, names[i]);
		/* a C1 control (CSI, NEL, OSC) reaching a terminal drives it */
		g_assert_null(strstr(q, "\xc2\x9b"));
		g_assert_null(strstr(q, "\xc2\x85"));
		g_assert_null(strstr(q, "\xc2\x9d"));
	}
}

/* --- pix_format_bytes --- */

static void assert_bytes(gint64 n, const char *want)
{
	g_autofree char *got = pix_format_bytes(n);
	if (g_strcmp0(got, want) != 0)
		g_error("pix_format_bytes(%" G_GINT64_FORMAT ") gave \"%s\", want \"%s\"", n, got, want);
}

static void test_format_bytes_units(void)
{
	assert_bytes(0, "0 B");
	assert_bytes(1, "1 B");
	assert_bytes(999, "999 B");
	/* decimal units: 1000, not 1024 */
	assert_bytes(1000, "1.00 kB");
	assert_bytes(1024, "1.02 kB");
	assert_bytes(1500, "1.50 kB");
	assert_bytes(12345, "12.3 kB");
	assert_bytes(123456, "123 kB");
	assert_bytes(1000000, "1.00 MB");
	assert_bytes(12345678, "12.3 MB");
	assert_bytes(G_GINT64_CONSTANT(95000000000), "95.0 GB");
	assert_bytes(G_GINT64_CONSTANT(5000000000), "5.00 GB");
	assert_bytes(G_GINT64_CONSTANT(1000000000000), "1.00 TB");
	assert_bytes(G_GINT64_CONSTANT(2500000000000000), "2.50 PB");
}

/*
 * Values just under a unit boundary round up in printf: 999,999 bytes is
 * 999.999 kB, which "%.0f" prints as "1000 kB", and 9,999 bytes gives
 * "10.00 kB" (four digits).  The "12.3 MB" style of log.h has three
 * significant digits and moves to the next unit at 1000.
 */
static void test_format_bytes_rounding_boundaries(void)
{
	static const struct {
		gint64 n;
		const char *want;
	} cases[] = {
		{ 9999, "10.0 kB" },
		{ 99999, "100 kB" },
		{ 999999, "1.00 MB" },
		{ G_GINT64_CONSTANT(999999999), "1.00 GB" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pix_format_bytes(cases[i].n);
		g_assert_cmpstr(got, ==, cases[i].want);
	}
}

/* --- warnings and stderr --- */

static void warn_three(gpointer data)
{
	(void)data;
	pix_warn("cannot read '%s': %s (skipping)", "a.jpg", "Permission denied");
	pix_warn("second");
	pix_warn("third");
}

/* Quiet silences notices, not problems with files: a warning is printed
 * and counted either way (log.h), so the exit status and the list of
 * skipped files never depend on --quiet. */
static void test_warn_counts_when_quiet(void)
{
	pix_log_init(TRUE, FALSE);
	guint before = pix_log_warnings();
	g_autofree char *out = capture_stderr(warn_three, NULL);
	g_assert_cmpuint(pix_log_warnings(), ==, before + 3);
	g_assert_cmpstr(out, ==,
	                "photoidx: cannot read 'a.jpg': Permission denied (skipping)\n"
	                "photoidx: second\nphotoidx: third\n");
	pix_log_init(FALSE, FALSE);
}

static void test_warn_counts_and_prints(void)
{
	pix_log_init(FALSE, FALSE);
	guint before = pix_log_warnings();
	g_autofree char *out = capture_stderr(warn_three, NULL);
	g_assert_cmpuint(pix_log_warnings(), ==, before + 3);
	g_assert_cmpstr(out, ==,
	                "photoidx: cannot read 'a.jpg': Permission denied (skipping)\n"
	                "photoidx: second\nphotoidx: third\n");
}

static void other_messages(gpointer data)
{
	(void)data;
	pix_notice("waiting for the lock");
	pix_info("verbose detail");
	pix_error("catalog is gone");
}

/* Notices and errors are not warnings; quiet silences notices, never
 * errors; info prints only when verbose. */
static void test_other_messages(void)
{
	guint before = pix_log_warnings();

	pix_log_init(TRUE, FALSE);
	g_autofree char *quiet = capture_stderr(other_messages, NULL);
	g_assert_cmpstr(quiet, ==, "photoidx: error: catalog is gone\n");

	pix_log_init(FALSE, TRUE);
	g_autofree char *verbose = capture_stderr(other_messages, NULL);
	g_assert_cmpstr(verbose, ==,
	                "photoidx: waiting for the lock\nphotoidx: verbose detail\n"
	                "photoidx: error: catalog is gone\n");

	pix_log_init(FALSE, FALSE);
	g_autofree char *normal = capture_stderr(other_messages, NULL);
	g_assert_cmpstr(normal, ==, "photoidx: waiting for the lock\nphotoidx: error: catalog is gone\n");
	g_assert_cmpuint(pix_log_warnings(), ==, before);
}

static void status_then_warn(gpointer data)
{
	(void)data;
	pix_log_status("12 files, 3.4 MB");
	pix_warn("cannot read 'x'");
	pix_log_status("13 files");
	pix_log_status(NULL);
	pix_warn("after");
}

/* A warning while the status line shows erases it first, so the two never
 * share a line; after pix_log_status(NULL) nothing is erased any more. */
static void test_warn_clears_status_line(void)
{
	pix_log_init(FALSE, FALSE);
	g_autofree char *out = capture_stderr(status_then_warn, NULL);
	g_assert_cmpstr(out, ==,
	                "12 files, 3.4 MB\r\033[Kphotoidx: cannot read 'x'\n"
	                "13 files\r\033[Kphotoidx: after\n");
}

/* --- counters --- */

#define N_THREADS 8
#define N_ADDS 50000

static gpointer count_thread(gpointer data)
{
	(void)data;
	for (guint i = 0; i < N_ADDS; i++) {
		pix_count_add(PIX_N_READ, 1);
		pix_count_add(PIX_BYTES_READ, 4096);
	}
	return NULL;
}

static gpointer warn_thread(gpointer data)
{
	(void)data;
	for (guint i = 0; i < 1000; i++)
		pix_warn("warning %u from one thread", i);
	return NULL;
}

static void warn_from_threads(gpointer data)
{
	GThread *threads[N_THREADS];
	(void)data;
	for (guint i = 0; i < N_THREADS; i++)
		threads[i] = g_thread_new("warn", warn_thread, NULL);
	for (guint i = 0; i < N_THREADS; i++)
		g_thread_join(threads[i]);
}

static void test_counters_add_up_across_threads(void)
{
	GThread *threads[N_THREADS];
	gint64 n_before = pix_count_get(PIX_N_READ);
	gint64 bytes_before = pix_count_get(PIX_BYTES_READ);
	gint64 other_before = pix_count_get(PIX_N_NEW);

	for (guint i = 0; i < N_THREADS; i++)
		threads[i] = g_thread_new("count", count_thread, NULL);
	for (guint i = 0; i < N_THREADS; i++)
		g_thread_join(threads[i]);
	g_assert_cmpint(pix_count_get(PIX_N_READ), ==, n_before + N_THREADS * N_ADDS);
	g_assert_cmpint(pix_count_get(PIX_BYTES_READ), ==, bytes_before + (gint64)N_THREADS * N_ADDS * 4096);
	/* counters are distinct */
	g_assert_cmpint(pix_count_get(PIX_N_NEW), ==, other_before);

	/* large values do not wrap at 32 bits */
	pix_count_add(PIX_BYTES_TO_READ, G_GINT64_CONSTANT(5000000000));
	pix_count_add(PIX_BYTES_TO_READ, G_GINT64_CONSTANT(5000000000));
	g_assert_cmpint(pix_count_get(PIX_BYTES_TO_READ), >=, G_GINT64_CONSTANT(10000000000));
}

/* Counted exactly, and printed as whole lines: lines from different
 * threads never interleave (log.h). */
static void test_warnings_add_up_across_threads(void)
{
	pix_log_init(TRUE, FALSE);
	guint before = pix_log_warnings();
	g_autofree char *out = capture_stderr(warn_from_threads, NULL);
	g_assert_cmpuint(pix_log_warnings(), ==, before + N_THREADS * 1000);
	g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, N_THREADS * 1000 + 1);
	for (guint i = 0; i < N_THREADS * 1000; i++) {
		if (!g_str_has_prefix(lines[i], "photoidx: warning ") || !g_str_has_suffix(lines[i], " from one thread"))
			g_error("interleaved line %u: '%s'", i, lines[i]);
	}
	pix_log_init(FALSE, FALSE);
}

/* Last: the flag cannot be reset. */
static void test_stop_request(void)
{
	g_assert_false(pix_stop_requested());
	pix_request_stop();
	g_assert_true(pix_stop_requested());
	pix_request_stop();
	g_assert_true(pix_stop_requested());
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/log/quote/plain-ascii", test_quote_plain_ascii);
	g_test_add_func("/log/quote/valid-utf8-kept", test_quote_valid_utf8_kept);
	g_test_add_func("/log/quote/control-bytes", test_quote_control_bytes);
	g_test_add_func("/log/quote/backslash-doubled", test_quote_backslash_doubled);
	g_test_add_func("/log/quote/invalid-utf8", test_quote_invalid_utf8);
	g_test_add_func("/log/quote/round-trip-random", test_quote_round_trip_random);
	g_test_add_func("/log/quote/c1-controls", test_quote_c1_controls);
	g_test_add_func("/log/format-bytes/units", test_format_bytes_units);
	g_test_add_func("/log/format-bytes/rounding-boundaries", test_format_bytes_rounding_boundaries);
	g_test_add_func("/log/warn/counts-when-quiet", test_warn_counts_when_quiet);
	g_test_add_func("/log/warn/counts-and-prints", test_warn_counts_and_prints);
	g_test_add_func("/log/warn/other-messages", test_other_messages);
	g_test_add_func("/log/warn/clears-status-line", test_warn_clears_status_line);
	g_test_add_func("/log/counters/add-up-across-threads", test_counters_add_up_across_threads);
	g_test_add_func("/log/warn/add-up-across-threads", test_warnings_add_up_across_threads);
	/* a suite of its own, added last, runs last (GTest runs a suite's own
	 * cases before its sub-suites) */
	g_test_add_func("/log/stop/request", test_stop_request);
	return g_test_run();
}
