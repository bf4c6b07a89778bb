/*
 * meta-iptc.c: IPTC-IIM (the "IPTC" of agencies, Photoshop and cameras
 * before XMP) and the Photoshop image resources that carry it, read into
 * PixMeta.tags and PixMeta's date (see meta-int.h).
 *
 * Reads a block in memory: a JPEG's APP13 segments ("Photoshop 3.0\0"
 * and 8BIM resources, of which 0x0404 holds the IIM), a TIFF's IPTC tag
 * (33723, the IIM itself) or Photoshop tag (34377, resources).  Writes
 * only fields still unknown: XMP, read first, wins over IIM, as the
 * Metadata Working Group's guidance has it (the two say the same where
 * a tool keeps them in step).  Runs on a hash thread; no state.
 *
 * IIM is a sequence of datasets: 0x1C, record, dataset number, a 16-bit
 * length (with its top bit set, the number of bytes of a longer length
 * that follows: an "extended" dataset), the value.  Record 1 (envelope)
 * may say the character set of the text (1:90, ISO 2022 escape
 * sequences: ESC % G is UTF-8); record 2 holds the fields.  Text without
 * a declaration is UTF-8 where it is valid UTF-8, else Windows-1252, as
 * exiftool reads Latin text.
 *
 * Invariants:
 *  1. Every length read from a block is checked against what is left of
 *     it before a byte is read; a walk moves strictly forward and stops
 *     after MAX_DATASETS datasets or MAX_RESOURCES resources.
 *  2. Text stored is valid UTF-8 (tags.c then bounds it and drops control
 *     characters): nothing undecoded reaches a PixTags.
 *  3. What came before damage is kept; the damage is recorded on the
 *     stream (a note in the file's error), once per block.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <string.h>

#define MAX_DATASETS 10000
#define MAX_RESOURCES 10000
#define RESOURCE_IPTC 0x0404

typedef enum {
	CS_NONE,        /* not declared: UTF-8 if valid, else Windows-1252 */
	CS_UTF8,
	CS_LATIN,       /* ISO 8859-1 (and ASCII): read as Windows-1252 */
	CS_UNKNOWN,     /* declared, not one of these */
} Charset;

/* Windows-1252's 0x80..0x9f (0: undefined there, read as Latin-1's C1) */
static const gunichar cp1252_high[32] = {
	0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
	0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
};

static char *from_cp1252(const guint8 *p, gsize n)
{
	GString *s = g_string_sized_new(n + n / 4 + 1);
	for (gsize i = 0; i < n; i++) {
		gunichar c = p[i];
		if (c >= 0x80 && c < 0xa0 && cp1252_high[c - 0x80] != 0)
			c = cp1252_high[c - 0x80];
		g_string_append_unichar(s, c);
	}
	return g_string_free(s, FALSE);
}

static gboolean is_ascii(const guint8 *p, gsize n)
{
	for (gsize i = 0; i < n; i++)
		if (p[i] >= 0x80)
			return FALSE;
	return TRUE;
}

typedef struct {
	PixStream *s;
	PixMeta *m;
	Charset cs;
	char *cs_name;          /* 1:90 as shown, for a note (owned) */
	gboolean is_cs_noted;
	gboolean is_utf8_noted;
	char *date, *time;      /* 2:55, 2:60 (owned) */
} Iim;

/* The value of a dataset as text (transfer full), in the block's
 * character set; cut at a NUL (padding). */
static char *decode(Iim *b, const guint8 *p, gsize n)
{
	const guint8 *nul = memchr(p, 0, n);
	if (nul != NULL)
		n = (gsize)(nul - p);
	if (is_ascii(p, n))
		return g_strndup((const char *)p, n);
	switch (b->cs) {
	case CS_UTF8:
		if (g_utf8_validate((const char *)p, (gssize)n, NULL))
			return g_strndup((const char *)p, n);
		if (!b->is_utf8_noted && b->s != NULL)
			pix_stream_problem(b->s, "corrupt IPTC: text declared UTF-8 is not (invalid bytes replaced)");
		b->is_utf8_noted = TRUE;
		return g_utf8_make_valid((const char *)p, (gssize)n);
	case CS_NONE:
		if (g_utf8_validate((const char *)p, (gssize)n, NULL))
			return g_strndup((const char *)p, n);
		return from_cp1252(p, n);
	case CS_UNKNOWN:
		if (!b->is_cs_noted && b->s != NULL)
			pix_stream_problem(b->s, "IPTC text in a character set photoidx does not know (%s): read as Latin-1",
			                   b->cs_name);
		b->is_cs_noted = TRUE;
		return from_cp1252(p, n);
	case CS_LATIN:
		return from_cp1252(p, n);
	}
	g_assert_not_reached();
}

/* 1:90, CodedCharacterSet: ISO 2022 escape sequences. */
static void read_charset(Iim *b, const guint8 *p, gsize n)
{
	GString *shown = g_string_new(NULL);
	gboolean is_utf8 = FALSE, is_known = TRUE;
	for (gsize i = 0; i < n; i++) {
		if (p[i] == 0x1b) {
			gsize k = i + 1;
			while (k < n && k < i + 4 && p[k] >= 0x20 && p[k] <= 0x2f)
				k++;
			/* the intermediate bytes and the final one */
			const guint8 *seq = p + i + 1;
			gsize len = k < n ? k - i : n - i - 1;
			if (len >= 2 && seq[0] == '%' && (seq[len - 1] == 'G' || seq[len - 1] == 'H' || seq[len - 1] == 'I'))
				is_utf8 = TRUE;
			else if (!(len == 2 && seq[0] == '(' && seq[1] == 'B') &&
			         !(len == 2 && (seq[0] == '-' || seq[0] == '.' || seq[0] == '/' || seq[0] == ',') && seq[1] == 'A'))
				is_known = FALSE;
			g_string_append_printf(shown, "%sESC ", shown->len > 0 ? ", " : "");
			for (gsize j = 0; j < len; j++)
				if (seq[j] >= 0x20 && seq[j] < 0x7f)
					g_string_append_printf(shown, "%s%c", j > 0 ? " " : "", seq[j]);
			i += len;
		} else if (p[i] != 0 && p[i] != ' ') {
			is_known = FALSE;
		}
	}
	b->cs = is_utf8 ? CS_UTF8 : !is_known ? CS_UNKNOWN : n > 0 ? CS_LATIN : CS_NONE;
	g_free(b->cs_name);
	b->cs_name = g_string_free(shown, FALSE);
}

static PixTags *tags_of(PixMeta *m)
{
	if (m->tags == NULL)
		m->tags = pix_tags_new();
	return m->tags;
}

/* A dataset of record 2. */
static void read_field(Iim *b, guint8 number, const guint8 *p, gsize n)
{
	PixTags *t;
	g_autofree char *text = NULL;
	switch (number) {
	case 5: case 25: case 55: case 60: case 80: case 90: case 92: case 95: case 100: case 101: case 116: case 120:
		break;
	default:
		return;
	}
	text = decode(b, p, MIN(n, PIX_TAGS_MAX_TEXT));
	t = tags_of(b->m);
	switch (number) {
	case 5:
		pix_tags_set_text(&t->title, text);
		break;
	case 25:
		pix_tags_add_flat(t, PIX_TAGS_IPTC, text);
		break;
	case 55:
		if (b->date == NULL)
			b->date = g_steal_pointer(&text);
		break;
	case 60:
		if (b->time == NULL)
			b->time = g_steal_pointer(&text);
		break;
	case 80:
		pix_tags_add_creator(t, PIX_TAGS_IPTC, text);
		break;
	case 90:
		pix_tags_set_text(&t->city, text);
		break;
	case 92:
		pix_tags_set_text(&t->sublocation, text);
		break;
	case 95:
		pix_tags_set_text(&t->province, text);
		break;
	case 100:
		pix_tags_set_text(&t->country_code, text);
		break;
	case 101:
		pix_tags_set_text(&t->country, text);
		break;
	case 116:
		pix_tags_set_text(&t->copyright, text);
		break;
	case 120:
		pix_tags_set_text(&t->caption, text);
		break;
	}
}

/* 2:55 "CCYYMMDD" and 2:60 "HHMMSS±HHMM" as the date taken, when the file
 * has none from EXIF or XMP; a date without a time says nothing of the
 * time, and is not taken (as an XMP date alone is not). */
static void apply_date(Iim *b)
{
	PixMeta *m = b->m;
	if (m->date_taken != NULL || b->date == NULL || b->time == NULL)
		return;
	const char *d = g_strstrip(b->date), *t = g_strstrip(b->time);
	if (strlen(d) != 8 || pix_meta_digits(d, 8) < 0 || strlen(t) < 6 || pix_meta_digits(t, 6) < 0)
		return;
	g_autofree char *iso = g_strdup_printf("%.4s-%.2s-%.2sT%.2s:%.2s:%.2s%s", d, d + 4, d + 6, t, t + 2, t + 4, t + 6);
	char *date, *tz;
	if (!pix_meta_parse_date(iso, &date, &tz))
		return;
	m->date_taken = date;
	g_free(m->date_tz);
	m->date_tz = tz;
	m->date_source = "IPTC DateCreated";
}

/* Whether the bytes are all zero (padding after the last dataset). */
static gboolean is_padding(const guint8 *p, gsize n)
{
	for (gsize i = 0; i < n; i++)
		if (p[i] != 0)
			return FALSE;
	return TRUE;
}

/*
 * Walks the datasets of `len` bytes at `p`: records 1 and 2 in two
 * passes (the character set first, wherever it stands).  The first
 * damage ends the walk, with a note.
 */
static void walk(Iim *b, const guint8 *p, gsize len, gboolean is_fields)
{
	gsize at = 0;
	for (guint n = 0; at < len && n < MAX_DATASETS; n++) {
		if (p[at] != 0x1c) {
			if (!is_fields && !is_padding(p + at, len - at) && b->s != NULL)
				pix_stream_problem(b->s, "corrupt IPTC: no dataset where one was due (byte %" G_GSIZE_FORMAT ")", at);
			return;
		}
		if (len - at < 5) {
			if (!is_fields && b->s != NULL)
				pix_stream_problem(b->s, "corrupt IPTC: a dataset header cut short at byte %" G_GSIZE_FORMAT, at);
			return;
		}
		guint8 record = p[at + 1], number = p[at + 2];
		guint64 size = pix_be16(p + at + 3);
		gsize head = 5;
		if (size & 0x8000) {
			/* an extended dataset: the length's own length */
			guint n_len = (guint)(size & 0x7fff);
			if (n_len == 0 || n_len > 4 || len - at - 5 < n_len) {
				if (!is_fields && b->s != NULL)
					pix_stream_problem(b->s, "corrupt IPTC: dataset %u:%u at byte %" G_GSIZE_FORMAT
					                   " has a length of %u bytes", record, number, at, n_len);
				return;
			}
			size = 0;
			for (guint k = 0; k < n_len; k++)
				size = size << 8 | p[at + 5 + k];
			head += n_len;
		}
		if (size > len - at - head) {
			if (!is_fields && b->s != NULL)
				pix_stream_problem(b->s, "corrupt IPTC: dataset %u:%u at byte %" G_GSIZE_FORMAT " runs past the end of its block (%"
				                   G_GUINT64_FORMAT " bytes, %" G_GSIZE_FORMAT " left)", record, number, at, size,
				                   len - at - head);
			return;
		}
		const guint8 *value = p + at + head;
		if (!is_fields && record == 1 && number == 90)
			read_charset(b, value, (gsize)size);
		if (is_fields && record == 2)
			read_field(b, number, value, (gsize)size);
		at += head + (gsize)size;
	}
}

void pix_meta_read_iptc(PixStream *s, const guint8 *iim, gsize len, PixMeta *m)
{
	Iim b = { .s = s, .m = m, .cs = CS_NONE };
	if (iim == NULL || len == 0)
		return;
	walk(&b, iim, len, FALSE);
	walk(&b, iim, len, TRUE);
	apply_date(&b);
	g_free(b.cs_name);
	g_free(b.date);
	g_free(b.time);
}

gboolean pix_meta_read_irb(PixStream *s, const guint8 *irb, gsize len, PixMeta *m)
{
	static const char *const signatures[] = { "8BIM", "PHUT", "AgHg", "DCSR", "MeSa" };
	gsize at = 0;
	for (guint n = 0; at + 4 <= len && n < MAX_RESOURCES; n++) {
		gboolean is_known = FALSE;
		for (guint i = 0; i < G_N_ELEMENTS(signatures) && !is_known; i++)
			is_known = memcmp(irb + at, signatures[i], 4) == 0;
		if (!is_known) {
			if (!is_padding(irb + at, len - at) && s != NULL)
				pix_stream_problem(s, "corrupt Photoshop resources: no resource where one was due (byte %"
				                   G_GSIZE_FORMAT ")", at);
			return FALSE;
		}
		/* id (2), a Pascal name padded to an even length, size (4) */
		if (len - at < 7) {
			if (s != NULL)
				pix_stream_problem(s, "corrupt Photoshop resources: a resource header cut short at byte %"
				                   G_GSIZE_FORMAT, at);
			return FALSE;
		}
		guint id = pix_be16(irb + at + 4);
		gsize name = 1 + irb[at + 6];
		name += name & 1;
		if (len - at - 6 < name + 4) {
			if (s != NULL)
				pix_stream_problem(s, "corrupt Photoshop resources: a resource header cut short at byte %"
				                   G_GSIZE_FORMAT, at);
			return FALSE;
		}
		gsize head = 6 + name + 4;
		guint64 size = pix_be32(irb + at + 6 + name);
		if (size > len - at - head) {
			if (s != NULL)
				pix_stream_problem(s, "corrupt Photoshop resources: resource 0x%04x at byte %" G_GSIZE_FORMAT
				                   " runs past the end (%" G_GUINT64_FORMAT " bytes, %" G_GSIZE_FORMAT " left)", id, at,
				                   size, len - at - head);
			return FALSE;
		}
		if (id == RESOURCE_IPTC) {
			pix_meta_read_iptc(s, irb + at + head, (gsize)size, m);
			return TRUE;
		}
		at += head + (gsize)size + (size & 1);
	}
	return FALSE;
}
