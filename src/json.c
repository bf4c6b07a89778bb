/*
 * json.c: JSON string escaping for --json output (see json.h).
 *
 * Writes into the caller's GString only.
 *
 * Invariants:
 *  1. Output is always valid JSON text in UTF-8, whatever bytes come in.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "json.h"
#include "log.h"

void pix_json_string(GString *out, const char *text)
{
	g_autofree char *shown = NULL;

	if (text == NULL) {
		g_string_append(out, "null");
		return;
	}
	if (!g_utf8_validate(text, -1, NULL))
		text = shown = pix_quote(text);
	g_string_append_c(out, '"');
	for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		default:
			if (*p < 0x20)
				g_string_append_printf(out, "\\u%04x", *p);
			else
				g_string_append_c(out, (char)*p);
		}
	}
	g_string_append_c(out, '"');
}

void pix_json_key(GString *out, const char *key, gboolean *is_first)
{
	if (!*is_first)
		g_string_append_c(out, ',');
	*is_first = FALSE;
	pix_json_string(out, key);
	g_string_append_c(out, ':');
}

void pix_json_int(GString *out, const char *key, gint64 v, gboolean *is_first)
{
	pix_json_key(out, key, is_first);
	g_string_append_printf(out, "%" G_GINT64_FORMAT, v);
}

void pix_json_int_or_null(GString *out, const char *key, gint64 v, gboolean has, gboolean *is_first)
{
	if (has) {
		pix_json_int(out, key, v, is_first);
		return;
	}
	pix_json_key(out, key, is_first);
	g_string_append(out, "null");
}

void pix_json_str(GString *out, const char *key, const char *text, gboolean *is_first)
{
	pix_json_key(out, key, is_first);
	pix_json_string(out, text);
}

void pix_json_bool(GString *out, const char *key, gboolean v, gboolean *is_first)
{
	pix_json_key(out, key, is_first);
	g_string_append(out, v ? "true" : "false");
}

void pix_json_real(GString *out, double d)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	for (int digits = 15; digits <= 17; digits++) {
		char fmt[8];
		g_snprintf(fmt, sizeof fmt, "%%.%dg", digits);
		g_ascii_formatd(buf, sizeof buf, fmt, d);
		if (digits == 17 || g_ascii_strtod(buf, NULL) == d)
			break;
	}
	g_string_append(out, buf);
}
