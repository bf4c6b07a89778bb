/*
 * meta-value.c: values as files store them into PixMeta fields (see
 * meta-value.h).
 *
 * Reads the text and numbers it is given; writes the PixMeta it is given.
 * Runs on the hash threads; no state.
 *
 * Invariants:
 *  1. A date stored is a real date of the calendar with a real time of day
 *     (seconds up to 60, for a leap second), in one form:
 *     "YYYY-MM-DDTHH:MM:SS" with an optional fraction.
 *  2. Text stored is valid UTF-8 (Latin-1 is converted), trimmed, and
 *     never empty (NULL instead).
 *  3. Numbers stored are finite.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-value.h"

#include <math.h>
#include <string.h>

/* --- numbers --- */

gboolean pix_meta_parse_decimal(const char **s, gboolean is_signed, double *out)
{
	const char *p = *s;
	double v = 0, scale = 1;
	gboolean is_negative = FALSE;
	int n_int = 0, n_frac = 0;

	if (is_signed && (*p == '-' || *p == '+'))
		is_negative = *p++ == '-';
	for (; g_ascii_isdigit(*p) && n_int < 30; p++, n_int++)
		v = v * 10 + (*p - '0');
	if (*p == '.') {
		p++;
		for (; g_ascii_isdigit(*p) && n_frac < 30; p++, n_frac++) {
			scale /= 10;
			v += (*p - '0') * scale;
		}
	}
	if (n_int + n_frac == 0 || g_ascii_isdigit(*p))
		return FALSE;
	*s = p;
	*out = is_negative ? -v : v;
	return TRUE;
}

gboolean pix_meta_parse_rational(const char *s, double *out)
{
	double n, d = 1;
	if (!pix_meta_parse_decimal(&s, TRUE, &n))
		return FALSE;
	if (*s == '/') {
		s++;
		if (!pix_meta_parse_decimal(&s, FALSE, &d) || d == 0)
			return FALSE;
	}
	if (*s != '\0' || !isfinite(n / d))
		return FALSE;
	*out = n / d;
	return TRUE;
}

gboolean pix_meta_parse_int(const char *s, gint64 min, gint64 max, gint64 *out)
{
	char *end;
	if (!g_ascii_isdigit(s[0]) && !((s[0] == '-' || s[0] == '+') && g_ascii_isdigit(s[1])))
		return FALSE;
	gint64 v = g_ascii_strtoll(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return FALSE;
	*out = v;
	return TRUE;
}

int pix_meta_digits(const char *s, int len)
{
	int v = 0;
	for (int i = 0; i < len; i++) {
		if (!g_ascii_isdigit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Writes `v` (>= 0) as `n` decimal digits at `p`; returns the end. */
static char *put_digits(char *p, int v, int n)
{
	for (int i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

gboolean pix_meta_parse_date(const char *s, char **date, char **tz)
{
	if (strlen(s) < 16)
		return FALSE;
	char sep = s[4];
	if ((sep != '-' && sep != ':') || s[7] != sep || (s[10] != 'T' && s[10] != ' ') || s[13] != ':')
		return FALSE;
	int y = pix_meta_digits(s, 4), mo = pix_meta_digits(s + 5, 2), d = pix_meta_digits(s + 8, 2);
	int h = pix_meta_digits(s + 11, 2), mi = pix_meta_digits(s + 14, 2), sec = 0;
	const char *p = s + 16;
	const char *frac = NULL;
	int frac_len = 0;
	if (*p == ':') {
		if ((sec = pix_meta_digits(p + 1, 2)) < 0)
			return FALSE;
		p += 3;
		if (*p == '.' || *p == ',') {
			frac = ++p;
			while (g_ascii_isdigit(*p))
				p++;
			frac_len = (int)MIN(p - frac, 9);  /* nanoseconds at most */
			if (p == frac)
				return FALSE;
		}
	}
	if (y < 1800 || mo < 1 || mo > 12 || d < 1 || !g_date_valid_dmy((GDateDay)d, (GDateMonth)mo, (GDateYear)y) ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || sec > 60)
		return FALSE;
	int off_h = 0, off_m = 0;
	char off_sign = 0;
	if (*p == 'Z') {
		off_sign = '+';
		p++;
	} else if (*p == '+' || *p == '-') {
		off_sign = *p;
		if ((off_h = pix_meta_digits(p + 1, 2)) < 0)
			return FALSE;
		p += 3;
		if (*p == ':')
			p++;
		if ((off_m = pix_meta_digits(p, 2)) < 0 || off_h > 14 || off_m > 59)
			return FALSE;
		p += 2;
	}
	if (*p != '\0')
		return FALSE;
	if (date != NULL) {
		/* "YYYY-MM-DDTHH:MM:SS[.fffffffff]" without printf: a camera
		 * library's every file has dates, several tags each */
		char out[32], *o = out;
		o = put_digits(o, y, 4);
		*o++ = '-';
		o = put_digits(o, mo, 2);
		*o++ = '-';
		o = put_digits(o, d, 2);
		*o++ = 'T';
		o = put_digits(o, h, 2);
		*o++ = ':';
		o = put_digits(o, mi, 2);
		*o++ = ':';
		o = put_digits(o, sec, 2);
		if (frac != NULL) {
			*o++ = '.';
			memcpy(o, frac, (gsize)frac_len);
			o += frac_len;
		}
		*date = g_strndup(out, (gsize)(o - out));
	}
	if (tz != NULL)
		*tz = off_sign != 0 ? g_strdup_printf("%c%02d:%02d", off_sign, off_h, off_m) : NULL;
	return TRUE;
}

gboolean pix_meta_coordinate(const double *dms, guint n, const char *ref, char negative_ref, double limit,
                             double *out)
{
	double v = 0;
	if (n == 0)
		return FALSE;
	/* some writers give degrees (and minutes) only */
	for (guint i = 0; i < n && i < 3; i++)
		v += dms[i] / (i == 0 ? 1.0 : i == 1 ? 60.0 : 3600.0);
	if (ref != NULL && g_ascii_toupper(ref[0]) == negative_ref)
		v = -v;
	if (!isfinite(v) || fabs(v) > limit)
		return FALSE;
	*out = v;
	return TRUE;
}

/* `v` into `*field` when that is still unknown (< 0) and `v` is in
 * [lo, hi] or equal to `other` (-1: none). */
static void set_code(int *field, gint64 v, gint64 lo, gint64 hi, gint64 other)
{
	if (*field < 0 && ((v >= lo && v <= hi) || (other >= 0 && v == other)))
		*field = (int)v;
}

void pix_meta_set_exposure_program(PixMeta *m, gint64 v)
{
	set_code(&m->exposure_program, v, 0, 9, -1);
}

void pix_meta_set_metering_mode(PixMeta *m, gint64 v)
{
	set_code(&m->metering_mode, v, 0, 6, 255);
}

void pix_meta_set_flash(PixMeta *m, gint64 v)
{
	set_code(&m->flash, v, 0, 0x7f, -1);
}

void pix_meta_set_aperture(PixMeta *m, double apex)
{
	if (isnan(m->aperture) && isfinite(apex) && apex > -2 && apex < 64)
		m->aperture = apex;
}

void pix_meta_set_direction(PixMeta *m, double deg, const char *ref)
{
	if (!isnan(m->gps_direction) || !isfinite(deg) || deg < 0 || deg > 360)
		return;
	m->gps_direction = deg == 360 ? 0 : deg;
	if (ref != NULL && ref[0] != '\0' && ref[1] == '\0' && strchr("TtMm", ref[0]) != NULL)
		m->gps_direction_ref = g_strdup(g_ascii_toupper(ref[0]) == 'T' ? "T" : "M");
}

/* --- text --- */

char *pix_meta_text(const guint8 *data, gsize size)
{
	if (data == NULL || size == 0)
		return NULL;
	gsize len = strnlen((const char *)data, size);
	g_autofree char *raw = g_strndup((const char *)data, len);
	g_strstrip(raw);
	if (raw[0] == '\0')
		return NULL;
	if (g_utf8_validate(raw, -1, NULL))
		return g_steal_pointer(&raw);
	return g_convert(raw, -1, "UTF-8", "ISO-8859-1", NULL, NULL, NULL);
}

void pix_meta_set_string(char **field, char *value)
{
	if (*field == NULL)
		*field = value;
	else
		g_free(value);
}

/* --- dates --- */

char *pix_meta_clock_date(gint64 secs)
{
	if (secs == 0)
		return NULL;
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(secs);
	return t != NULL ? g_date_time_format(t, "%Y-%m-%dT%H:%M:%S") : NULL;
}

/* "YYYY:MM:DD HH:MM:SS" (or with '-' in the date, or without seconds) as
 * ISO 8601 "YYYY-MM-DDTHH:MM:SS"; NULL for blanks, zeros and garbage.
 * What follows the seconds (some cameras pad) is ignored. */
static char *parse_date(const char *s)
{
	char head[20];
	char *iso = NULL;
	if (s == NULL || strlen(s) < 16 || s[10] != ' ')
		return NULL;
	g_strlcpy(head, s, sizeof head);
	if (strlen(head) > 16 && head[16] != ':')
		head[16] = '\0';       /* without seconds: what follows the minutes */
	return pix_meta_parse_date(head, &iso, NULL) ? iso : NULL;
}

/* "+HH:MM" / "-HH:MM", validated; NULL otherwise. */
static char *parse_offset(const char *s)
{
	if (s == NULL || strlen(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':')
		return NULL;
	int h = pix_meta_digits(s + 1, 2), m = pix_meta_digits(s + 4, 2);
	if (h < 0 || h > 14 || m < 0 || m > 59)
		return NULL;
	return g_strdup_printf("%c%02d:%02d", s[0], h, m);
}

/* How good an EXIF date source is: 0 best; -1 for a source not of ours
 * (XMP, QuickTime), whose dates are never replaced. */
static int date_rank(const char *source)
{
	static const char *const ranked[] = { "DateTimeOriginal", "CreateDate", "ModifyDate" };
	for (int i = 0; source != NULL && i < (int)G_N_ELEMENTS(ranked); i++) {
		if (strcmp(source, ranked[i]) == 0)
			return i;
	}
	return -1;
}

gboolean pix_meta_set_exif_date(PixMeta *m, const char *date, const char *subsec, const char *offset,
                                const char *source)
{
	if (m->date_taken != NULL) {
		int old = date_rank(m->date_source), new = date_rank(source);
		if (old < 0 || new < 0 || old <= new)
			return TRUE;
	}
	g_autofree char *iso = parse_date(date);
	if (iso == NULL)
		return FALSE;
	if (m->date_taken != NULL) {
		/* a worse source's date, and the offset that went with it */
		g_clear_pointer(&m->date_taken, g_free);
		g_clear_pointer(&m->date_tz, g_free);
	}
	if (subsec != NULL && subsec[0] != '\0' && strspn(subsec, "0123456789") == strlen(subsec))
		m->date_taken = g_strdup_printf("%s.%s", iso, subsec);
	else
		m->date_taken = g_steal_pointer(&iso);
	pix_meta_set_string(&m->date_tz, parse_offset(offset));
	m->date_source = source;
	return TRUE;
}

void pix_meta_set_gps_time(PixMeta *m, const double *hms, guint n, const char *date_stamp)
{
	if (m->gps_time != NULL || n < 3)
		return;
	for (guint i = 0; i < 3; i++)
		if (!isfinite(hms[i]) || hms[i] < 0)
			return;
	/* whole hours and minutes, as receivers write them; seconds may carry
	 * a fraction (kept to the millisecond) */
	double ms = round(hms[2] * 1000);
	if (hms[0] != floor(hms[0]) || hms[1] != floor(hms[1]) || hms[0] > 23 || hms[1] > 59 || ms >= 61000)
		return;
	int h = (int)hms[0], mi = (int)hms[1], s = (int)(ms / 1000), frac = (int)fmod(ms, 1000);
	g_autofree char *time = frac != 0 ? g_strdup_printf("%02d:%02d:%02d.%03d", h, mi, s, frac)
	                                  : g_strdup_printf("%02d:%02d:%02d", h, mi, s);
	int y = -1, mo = -1, d = -1;
	if (date_stamp != NULL && strlen(date_stamp) >= 10 && date_stamp[4] == date_stamp[7] &&
	    (date_stamp[4] == ':' || date_stamp[4] == '-')) {
		y = pix_meta_digits(date_stamp, 4);
		mo = pix_meta_digits(date_stamp + 5, 2);
		d = pix_meta_digits(date_stamp + 8, 2);
	}
	if (y >= 1800 && mo >= 1 && mo <= 12 && d >= 1 && g_date_valid_dmy((GDateDay)d, (GDateMonth)mo, (GDateYear)y))
		m->gps_time = g_strdup_printf("%04d-%02d-%02dT%sZ", y, mo, d, time);
	else
		m->gps_time = g_steal_pointer(&time);
}
