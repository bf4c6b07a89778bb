/*
 * log.c: stderr diagnostics, the status line, warning counts (see log.h).
 *
 * Writes only to stderr.  Called from every thread; one mutex serialises
 * output so that a status line and a warning never mix on the terminal.
 *
 * Invariants:
 *  1. is_status_shown is TRUE exactly when the last thing written to stderr
 *     is an unterminated status line, which the next message erases first.
 *  2. n_warnings counts every pix_warn() call, so the exit status says
 *     whether any file had a problem.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static GMutex log_lock;
static gboolean is_quiet_mode;
static gboolean is_verbose_mode;
static gboolean is_status_shown;
static guint n_warnings;
static gint64 counters[PIX_N_COUNTERS];
static volatile sig_atomic_t is_stop;

void pix_log_init(gboolean is_quiet, gboolean is_verbose)
{
	is_quiet_mode = is_quiet;
	is_verbose_mode = is_verbose;
}

/* Caller holds log_lock. */
static void erase_status(void)
{
	if (is_status_shown) {
		fputs("\r\033[K", stderr);
		is_status_shown = FALSE;
	}
}

static void emit(const char *prefix, const char *fmt, va_list ap)
{
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	g_mutex_lock(&log_lock);
	erase_status();
	fprintf(stderr, "photoidx: %s%s\n", prefix, msg);
	fflush(stderr);
	g_mutex_unlock(&log_lock);
}

void pix_warn(const char *fmt, ...)
{
	g_atomic_int_inc(&n_warnings);
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void pix_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void pix_notice(const char *fmt, ...)
{
	if (is_quiet_mode)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void pix_info(const char *fmt, ...)
{
	if (!is_verbose_mode)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

guint pix_log_warnings(void)
{
	return (guint)g_atomic_int_get(&n_warnings);
}

void pix_log_status(const char *line)
{
	g_mutex_lock(&log_lock);
	erase_status();
	if (line != NULL) {
		fputs(line, stderr);
		is_status_shown = TRUE;
	}
	fflush(stderr);
	g_mutex_unlock(&log_lock);
}

char *pix_quote(const char *bytes)
{
	gsize total = strlen(bytes);
	const char *end_all = bytes + total;
	GString *out = g_string_sized_new(total + 8);
	const char *p = bytes;

	while (*p != '\0') {
		unsigned char c = (unsigned char)*p;
		if (c >= 0x80) {
			const char *end;
			/* keep one valid UTF-8 character, escape a bad byte */
			gsize avail = (gsize)(end_all - p);
			gsize len = (gsize)g_utf8_skip[c];
			if (len <= avail && g_utf8_validate(p, (gssize)len, &end)) {
				gunichar u = g_utf8_get_char(p);
				if (u >= 0x80 && u <= 0x9f) {
					/* C1 controls (CSI, OSC...) drive terminals too */
					for (gsize k = 0; k < len; k++)
						g_string_append_printf(out, "\\x%02x", (unsigned char)p[k]);
				} else {
					g_string_append_len(out, p, (gssize)len);
				}
				p += len;
				continue;
			}
			g_string_append_printf(out, "\\x%02x", c);
		} else if (c == '\\') {
			g_string_append(out, "\\\\");
		} else if (c == '\n') {
			g_string_append(out, "\\n");
		} else if (c == '\t') {
			g_string_append(out, "\\t");
		} else if (c == '\r') {
			g_string_append(out, "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			g_string_append_printf(out, "\\x%02x", c);
		} else {
			g_string_append_c(out, (char)c);
		}
		p++;
	}
	return g_string_free(out, FALSE);
}

char *pix_format_bytes(gint64 bytes)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	double v = (double)bytes;
	guint u = 0;

	/* 999.5 and up would print as "1000": that is the next unit */
	while ((u == 0 ? v >= 1000.0 : v >= 999.5) && u + 1 < G_N_ELEMENTS(units)) {
		v /= 1000.0;
		u++;
	}
	if (u == 0)
		return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
	return g_strdup_printf(v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

const char *pix_ellipsis(void)
{
	const char *charset = NULL;
	return g_get_charset(&charset) ? "\u2026" : "...";
}

char *pix_fit_text(const char *text, glong max_chars, glong pad_chars)
{
	g_autofree char *q = pix_quote(text);
	GString *out = g_string_new(NULL);
	glong n = g_utf8_strlen(q, -1);     /* pix_quote() gives valid UTF-8 */

	if (n > max_chars) {
		const char *dots = pix_ellipsis();
		glong n_dots = g_utf8_strlen(dots, -1);
		glong keep = max_chars > n_dots ? max_chars - n_dots : 0;
		g_string_append_len(out, q, g_utf8_offset_to_pointer(q, keep) - q);
		g_string_append(out, dots);
		n = keep + n_dots;
	} else {
		g_string_append(out, q);
	}
	for (; n < pad_chars; n++)
		g_string_append_c(out, ' ');
	return g_string_free(out, FALSE);
}

void pix_count_add(PixCounter c, gint64 n)
{
	g_assert(c < PIX_N_COUNTERS);
	__atomic_add_fetch(&counters[c], n, __ATOMIC_RELAXED);
}

gint64 pix_count_get(PixCounter c)
{
	g_assert(c < PIX_N_COUNTERS);
	return __atomic_load_n(&counters[c], __ATOMIC_RELAXED);
}

gint64 pix_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (gint64)ts.tv_sec * G_GINT64_CONSTANT(1000000000) + ts.tv_nsec;
}

gint64 pix_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64)ts.tv_sec * G_GINT64_CONSTANT(1000000000) + ts.tv_nsec;
}

static gint is_meta_timing;

void pix_set_meta_timing(gboolean is_on)
{
	g_atomic_int_set(&is_meta_timing, is_on ? 1 : 0);
}

gboolean pix_is_meta_timing(void)
{
	return g_atomic_int_get(&is_meta_timing) != 0;
}

void pix_request_stop(void)
{
	is_stop = 1;
}

void pix_clear_stop(void)
{
	is_stop = 0;
}

gboolean pix_stop_requested(void)
{
	return is_stop != 0;
}
