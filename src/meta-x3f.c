/*
 * meta-x3f.c: Sigma X3F, as a PixContainer (see meta-int.h).
 *
 * Reads the file through the stream; writes PixMeta.  Runs on a hash
 * thread.
 *
 * X3F (Sigma, Foveon): "FOVb", a version, the image's columns and rows at
 * bytes 28 and 32 (40 and 44 from version 4), as exiftool's ImageWidth
 * and ImageHeight; the file's last 4 bytes give the offset of the section
 * directory ("SECd", a version, a count, then offset, length and a 4-byte
 * type per section).  The PROP section ("SECp") holds UTF-16LE name/value
 * pairs: CAMMANUF, CAMMODEL, TIME (Unix seconds of the camera's clock,
 * shown as UTC as exiftool does) and ISO.  Read at the end from the kept
 * tail, like CRW.  The EXIF of the JPEG preview that cameras after the
 * SD10 add (IMA2) is not read: its place is known only at the end.
 *
 * Invariants:
 *  1. At most MAX_SECTIONS sections and MAX_PROPS properties are read;
 *     each name or value is read for at most MAX_PROP_CHARS characters,
 *     and lies within the PROP section.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <math.h>
#include <string.h>

/* what the walk at the end can reach */
#define KEEP_HEAD 64
#define KEEP_TAIL (1u << 20)

#define X3F_HEADER 40           /* what exiftool reads before the version */
#define X3F_HEADER4 48          /* through the size of version 4 */
#define MAX_SECTIONS 64
#define MAX_PROPS 1024
#define MAX_PROP_CHARS 256

typedef struct {
	gboolean has_prop;      /* a PROP section was read */
} X3f;

/* Whether the characters at `chars[at]` (of `n`) are the ASCII `name`,
 * ended by a NUL or the end. */
static gboolean prop_is(const guint8 *chars, guint64 n, guint64 at, const char *name)
{
	gsize len = strlen(name);
	if (at + len > n)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (pix_le16(chars + 2 * (at + i)) != (guint8)name[i])
			return FALSE;
	}
	return at + len == n || pix_le16(chars + 2 * (at + len)) == 0;
}

/* The string at `chars[at]` (of `n`), to its NUL or the end, at most
 * MAX_PROP_CHARS characters, as trimmed UTF-8; NULL when empty or not
 * UTF-16 (transfer full). */
static char *prop_text(const guint8 *chars, guint64 n, guint64 at)
{
	gunichar2 u[MAX_PROP_CHARS];
	glong len = 0;
	while (at + (guint64)len < n && len < MAX_PROP_CHARS && (u[len] = pix_le16(chars + 2 * (at + (guint64)len))) != 0)
		len++;
	g_autofree char *t = g_utf16_to_utf8(u, len, NULL, NULL, NULL);
	if (t == NULL)
		return NULL;
	g_strstrip(t);
	return t[0] != '\0' ? g_steal_pointer(&t) : NULL;
}

/* A number property (exiftool's -n value is the text), NAN when the text
 * does not start with one. */
static double prop_number(const char *text)
{
	char *end;
	double v = text != NULL ? g_ascii_strtod(text, &end) : NAN;
	return text != NULL && end != text && isfinite(v) ? v : NAN;
}

/* The PROP section of `len` bytes at `off`. */
static void read_prop(PixStream *s, guint64 off, guint64 len, PixMeta *m)
{
	const guint8 *p = pix_stream_peek(s, off, (gsize)MIN(len, G_MAXSIZE));
	if (p == NULL)
		return;   /* not kept */
	if (len < 24 || memcmp(p, "SECp", 4) != 0) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " has no 'SECp' header",
		                   off);
		return;
	}
	guint32 n = pix_le32(p + 8), format = pix_le32(p + 12), n_chars = pix_le32(p + 20);
	/* exiftool's check, which counts the characters as bytes */
	if (24 + 8 * (guint64)n + n_chars > len) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
		                   " bytes) announces %u properties and %u characters", off, len, n, n_chars);
		return;
	}
	if (format != 0) {
		pix_stream_problem(s, "X3F: the PROP section at offset %" G_GUINT64_FORMAT " has characters of format %u"
		                   " (not read)", off, format);
		return;
	}
	guint64 chars_at = 24 + 8 * (guint64)n;
	guint64 have = MIN(n_chars, (len - chars_at) / 2);
	const guint8 *chars = p + chars_at;
	if (n > MAX_PROPS) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " holds %u properties,"
		                   " more than %u (the rest not read)", off, n, MAX_PROPS);
		n = MAX_PROPS;
	}
	for (guint32 i = 0; i < n; i++) {
		guint32 name = pix_le32(p + 24 + 8 * i), value = pix_le32(p + 28 + 8 * i);
		if (name >= have || value >= have) {
			pix_stream_problem(s, "corrupt X3F: property %u of the PROP section at offset %" G_GUINT64_FORMAT
			                   " points past its %" G_GUINT64_FORMAT " characters", i, off, have);
			return;
		}
		if (prop_is(chars, have, name, "CAMMANUF")) {
			pix_meta_set_string(&m->make, prop_text(chars, have, value));
		} else if (prop_is(chars, have, name, "CAMMODEL")) {
			pix_meta_set_string(&m->model, prop_text(chars, have, value));
		} else if (prop_is(chars, have, name, "TIME") && m->date_taken == NULL) {
			g_autofree char *t = prop_text(chars, have, value);
			double secs = prop_number(t);
			/* exiftool's int($time + 1e-6), here for the years 1970-9999 */
			if (secs >= 1 && secs < 253402300800.0 && (m->date_taken = pix_meta_clock_date((gint64)(secs + 1e-6))) != NULL)
				m->date_source = "X3F TIME";
		} else if (prop_is(chars, have, name, "ISO") && m->iso < 0) {
			g_autofree char *t = prop_text(chars, have, value);
			double iso = round(prop_number(t));
			if (iso >= 1 && iso < 1e9)
				m->iso = (gint64)iso;
		}
	}
}

static void *x3f_start(PixStream *s)
{
	(void)s;
	return g_new0(X3f, 1);
}

static void x3f_finish(void *state, PixStream *s, PixMeta *m)
{
	X3f *x = state;
	guint64 size = pix_stream_pos(s);

	const guint8 *h = pix_stream_peek(s, 0, (gsize)MIN(size, X3F_HEADER4));
	if (h == NULL || size < 4 || memcmp(h, "FOVb", 4) != 0)
		return;
	if (size < X3F_HEADER) {
		pix_stream_problem(s, "truncated X3F: the file ends at byte %" G_GUINT64_FORMAT " inside the header", size);
		return;
	}
	/* version 4 (Quattro) moved the size */
	gboolean is_v4 = pix_le32(h + 4) >> 16 >= 4;
	gsize size_at = is_v4 ? 40 : 28;
	if (size_at + 8 <= size && m->width_px < 0 && m->height_px < 0 && pix_le32(h + size_at) > 0 &&
	    pix_le32(h + size_at + 4) > 0) {
		m->width_px = pix_le32(h + size_at);
		m->height_px = pix_le32(h + size_at + 4);
	}

	const guint8 *p = pix_stream_peek(s, size - 4, 4);
	if (p == NULL)
		return;
	guint64 dir = pix_le32(p), end = size - 4;
	if (dir + 12 > end) {
		pix_stream_problem(s, "corrupt X3F: the directory's offset %" G_GUINT64_FORMAT " (in the last 4 bytes) lies"
		                   " past the end of the file (%" G_GUINT64_FORMAT " bytes)", dir, size);
		return;
	}
	if ((p = pix_stream_peek(s, dir, 12)) == NULL)
		return;   /* not kept */
	if (memcmp(p, "SECd", 4) != 0) {
		pix_stream_problem(s, "corrupt X3F: no directory ('SECd') at offset %" G_GUINT64_FORMAT, dir);
		return;
	}
	guint32 n = pix_le32(p + 8);
	if (dir + 12 + 12 * (guint64)n > end) {
		pix_stream_problem(s, "corrupt X3F: the directory at offset %" G_GUINT64_FORMAT " holds %u sections, past"
		                   " the end of the file", dir, n);
		return;
	}
	if (n > MAX_SECTIONS) {
		pix_stream_problem(s, "corrupt X3F: the directory at offset %" G_GUINT64_FORMAT " holds %u sections, more"
		                   " than %u (the rest not read)", dir, n, MAX_SECTIONS);
		n = MAX_SECTIONS;
	}
	const guint8 *e = pix_stream_peek(s, dir + 12, 12 * (gsize)n);
	for (guint32 i = 0; e != NULL && i < n; i++, e += 12) {
		guint64 off = pix_le32(e), len = pix_le32(e + 4);
		char name[5];
		for (int k = 0; k < 4; k++)
			name[k] = g_ascii_isprint(e[8 + k]) ? (char)e[8 + k] : '?';
		name[4] = '\0';
		if (off + len > size) {
			pix_stream_problem(s, "corrupt X3F: section '%s' at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
			                   " bytes) runs past the end of the file (%" G_GUINT64_FORMAT " bytes)", name, off, len,
			                   size);
			continue;
		}
		if (memcmp(e + 8, "PROP", 4) == 0 && !x->has_prop) {
			x->has_prop = TRUE;
			read_prop(s, off, len, m);
		}
	}
}

static void x3f_free(void *state)
{
	g_free(state);
}

const PixContainer pix_container_x3f = {
	.name = "X3F",
	.keep_head = KEEP_HEAD,
	.keep_tail = KEEP_TAIL,
	.start = x3f_start,
	.finish = x3f_finish,
	.free = x3f_free,
};
