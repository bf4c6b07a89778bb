/*
 * meta-png.c: PNG files as a PixContainer (see meta.h).
 *
 * Reads the file's chunks through the stream; writes PixMeta.  Runs on a
 * hash thread.
 *
 * A PNG is an 8-byte signature and a sequence of chunks: a 4-byte
 * big-endian data length, a 4-byte type, the data, a 4-byte CRC.  The walk
 * asks for each chunk header as the read reaches it and for the data of
 * the few chunks that hold metadata; image data (IDAT) and every other
 * chunk are skipped without keeping a byte of them.  Metadata comes from:
 *  - IHDR: the pixel size;
 *  - eXIf: a TIFF block (some writers put "Exif\0\0" before it);
 *  - the text chunks (tEXt, zTXt, iTXt) that ImageMagick and older tools
 *    write, keyed "Raw profile type exif" or "Raw profile type APP1": the
 *    EXIF block as hex digits, "\nexif\n  LENGTH\nHEX...", zlib-compressed
 *    in zTXt and (optionally) iTXt; "Raw profile type xmp" likewise holds
 *    XMP;
 *  - iTXt "XML:com.adobe.xmp": an XMP packet.
 * A text chunk is read in two steps: its keyword first, then the rest only
 * when the keyword names metadata, so large unrelated texts cost nothing.
 *
 * EXIF and XMP are kept (the first of each) and decoded at the end, after
 * IHDR's size is known: EXIF's own ImageWidth is a claim about some other
 * image (the camera's), never the size of this one.
 *
 * CRCs are not checked: that would cost a pass over every byte of image
 * data, and exiftool too only warns about a bad one.
 *
 * Invariants:
 *  1. Chunk headers are asked for at strictly increasing offsets (a chunk
 *     occupies at least 12 bytes), at most MAX_CHUNKS of them; after that
 *     the walk stops quietly (a PNG that large is not damaged for it, only
 *     not read to its end).
 *  2. At most MAX_BLOCK bytes of any chunk are captured, and inflated text
 *     is cut off at MAX_BLOCK bytes: a hostile file costs bounded memory.
 *  3. A truncated file (a chunk running past its end, no IEND) is recorded
 *     as a problem once; what was read before stays.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <gio/gio.h>
#include <string.h>

#define SIGNATURE_LEN 8
#define MAX_CHUNKS 60000        /* each costs one or two of the stream's wants */
#define MAX_BLOCK (4u << 20)    /* an EXIF or XMP block, compressed or not */
#define KEYWORD_WANT 80         /* a keyword (1-79 bytes) and its NUL */
#define MAX_CHUNK_LEN 0x7fffffffu

typedef enum {
	TEXT_T,   /* tEXt */
	TEXT_Z,   /* zTXt */
	TEXT_I,   /* iTXt */
} TextKind;

static const char *const text_names[] = { "tEXt", "zTXt", "iTXt" };

typedef struct {
	guint n_chunks;         /* headers asked for */
	gboolean has_ihdr;
	gint64 width_px, height_px;
	/* the chunk whose header was read last, for messages */
	char last_type[5];
	guint64 last_off;
	/* a text chunk read in two steps: the keyword part, waiting for the rest */
	guint8 prefix[KEYWORD_WANT];
	gsize prefix_len;
	guint64 prefix_off;     /* file offset of prefix[0] */
	GBytes *exif;           /* the TIFF block (owned), or NULL */
	GBytes *xmp;            /* the XMP packet (owned), or NULL */
} Png;

static void on_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

static void want_chunk(Png *p, PixStream *s, guint64 off)
{
	if (p->n_chunks >= MAX_CHUNKS)
		return;
	p->n_chunks++;
	pix_stream_want(s, off, 8, on_header, p, 0);
}

static void *png_start(PixStream *s)
{
	Png *p = g_new0(Png, 1);
	p->width_px = -1;
	p->height_px = -1;
	want_chunk(p, s, SIGNATURE_LEN);
	return p;
}

/* Keeps the first EXIF (TIFF) block found, without an "Exif\0\0" header. */
static void keep_exif(Png *p, const guint8 *data, gsize len)
{
	if (len >= 6 && memcmp(data, "Exif\0\0", 6) == 0) {
		data += 6;
		len -= 6;
	}
	if (p->exif == NULL && len > 0)
		p->exif = g_bytes_new(data, len);
}

static void keep_xmp(Png *p, const guint8 *data, gsize len)
{
	if (p->xmp == NULL && len > 0)
		p->xmp = g_bytes_new(data, len);
}

/* zlib data inflated, at most MAX_BLOCK bytes (transfer full), or NULL
 * with *error set (transfer full). */
static GBytes *inflate(const guint8 *data, gsize len, char **error)
{
	g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_ZLIB);
	g_autoptr(GByteArray) out = g_byte_array_new();
	guint8 buf[16384];
	gsize at = 0;

	for (;;) {
		gsize n_read = 0, n_written = 0;
		g_autoptr(GError) err = NULL;
		GConverterResult r = g_converter_convert(G_CONVERTER(z), data + at, len - at, buf, sizeof buf,
		                                         G_CONVERTER_INPUT_AT_END, &n_read, &n_written, &err);
		if (r == G_CONVERTER_ERROR) {
			*error = g_strdup_printf("bad compressed data (%s)", err->message);
			return NULL;
		}
		at += n_read;
		if (out->len + n_written > MAX_BLOCK) {
			*error = g_strdup_printf("inflates to more than %u MiB", MAX_BLOCK >> 20);
			return NULL;
		}
		g_byte_array_append(out, buf, (guint)n_written);
		if (r == G_CONVERTER_FINISHED)
			break;
		if (n_read == 0 && n_written == 0) {
			*error = g_strdup("compressed data that does not progress");
			return NULL;
		}
	}
	return g_byte_array_free_to_bytes(g_steal_pointer(&out));
}

static int hex_value(guint8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * An ImageMagick raw profile, "\nNAME\n   LENGTH\nHEX DIGITS...": the
 * bytes (transfer full), or NULL with *error set (transfer full).  The
 * hex digits may be broken by white space.
 */
static GBytes *raw_profile(const guint8 *t, gsize len, char **error)
{
	gsize i = 0;
	while (i < len && g_ascii_isspace(t[i]))
		i++;
	while (i < len && !g_ascii_isspace(t[i]))   /* the profile's name */
		i++;
	while (i < len && g_ascii_isspace(t[i]))
		i++;
	guint64 declared = 0;
	gsize digits = 0;
	for (; i < len && g_ascii_isdigit(t[i]) && declared <= MAX_BLOCK; i++, digits++)
		declared = declared * 10 + (guint64)(t[i] - '0');
	if (digits == 0) {
		*error = g_strdup("no length in the raw profile");
		return NULL;
	}
	if (declared > MAX_BLOCK) {
		*error = g_strdup_printf("a raw profile larger than %u MiB", MAX_BLOCK >> 20);
		return NULL;
	}
	if (i >= len || !g_ascii_isspace(t[i])) {
		*error = g_strdup("no length in the raw profile");
		return NULL;
	}
	g_autoptr(GByteArray) out = g_byte_array_sized_new((guint)declared);
	int high = -1;
	for (; i < len && out->len < declared; i++) {
		if (g_ascii_isspace(t[i]))
			continue;
		int v = hex_value(t[i]);
		if (v < 0) {
			*error = g_strdup_printf("a raw profile with a non-hex byte 0x%02x", t[i]);
			return NULL;
		}
		if (high < 0) {
			high = v;
		} else {
			guint8 b = (guint8)(high << 4 | v);
			g_byte_array_append(out, &b, 1);
			high = -1;
		}
	}
	if (out->len < declared) {
		*error = g_strdup_printf("a raw profile of %u bytes where %" G_GUINT64_FORMAT " were declared",
		                         out->len, declared);
		return NULL;
	}
	return g_byte_array_free_to_bytes(g_steal_pointer(&out));
}

typedef enum {
	KEY_OTHER,
	KEY_XMP,            /* an XMP packet as text */
	KEY_PROFILE_EXIF,   /* a raw profile holding EXIF (or an APP1 payload) */
	KEY_PROFILE_XMP,    /* a raw profile holding XMP */
} Keyword;

static Keyword classify(const char *keyword)
{
	if (strcmp(keyword, "XML:com.adobe.xmp") == 0)
		return KEY_XMP;
	if (g_ascii_strcasecmp(keyword, "Raw profile type exif") == 0 ||
	    g_ascii_strcasecmp(keyword, "Raw profile type APP1") == 0)
		return KEY_PROFILE_EXIF;
	if (g_ascii_strcasecmp(keyword, "Raw profile type xmp") == 0)
		return KEY_PROFILE_XMP;
	return KEY_OTHER;
}

/* The keyword at the start of a text chunk's data, or KEY_OTHER; sets *after
 * to the offset past its NUL. */
static Keyword keyword_of(const guint8 *data, gsize len, gsize *after)
{
	const guint8 *nul = memchr(data, '\0', MIN(len, (gsize)KEYWORD_WANT));
	if (nul == NULL || nul == data)
		return KEY_OTHER;
	*after = (gsize)(nul - data) + 1;
	return classify((const char *)data);
}

/* The length of the NUL-terminated string at data[at..len), or -1. */
static gssize field_len(const guint8 *data, gsize len, gsize at)
{
	const guint8 *nul = at < len ? memchr(data + at, '\0', len - at) : NULL;
	return nul != NULL ? nul - (data + at) : -1;
}

/* A text chunk's value (inflated first when compressed) into p, as its
 * keyword says; FALSE with *error set (transfer full) when it is bad. */
static gboolean text_value(Png *p, Keyword key, const guint8 *value, gsize len, gboolean is_compressed, char **error)
{
	g_autoptr(GBytes) inflated = NULL;
	if (is_compressed) {
		inflated = inflate(value, len, error);
		if (inflated == NULL)
			return FALSE;
		value = g_bytes_get_data(inflated, &len);
	}
	if (key == KEY_XMP) {
		keep_xmp(p, value, len);
		return TRUE;
	}
	g_autoptr(GBytes) profile = raw_profile(value, len, error);
	if (profile == NULL)
		return FALSE;
	gsize n;
	const guint8 *bytes = g_bytes_get_data(profile, &n);
	if (key == KEY_PROFILE_EXIF)
		keep_exif(p, bytes, n);
	else
		keep_xmp(p, bytes, n);
	return TRUE;
}

/* A whole text chunk whose keyword names metadata: its value into p. */
static void text_chunk(Png *p, PixStream *s, TextKind kind, guint64 off, const guint8 *data, gsize len)
{
	gsize at = 0;
	Keyword key = keyword_of(data, len, &at);
	const char *name = text_names[kind];
	gboolean is_compressed = FALSE;
	g_autofree char *error = NULL;

	if (key == KEY_OTHER)
		return;
	if (kind == TEXT_Z) {
		if (at >= len || data[at] != 0) {
			pix_stream_problem(s, "corrupt PNG: %s chunk at offset %" G_GUINT64_FORMAT " has no known compression method",
			                   name, off - 8);
			return;
		}
		at++;
		is_compressed = TRUE;
	} else if (kind == TEXT_I) {
		/* compression flag and method, language tag, translated keyword */
		if (at + 2 > len || data[at] > 1 || (data[at] == 1 && data[at + 1] != 0)) {
			pix_stream_problem(s, "corrupt PNG: iTXt chunk at offset %" G_GUINT64_FORMAT " has a bad compression flag",
			                   off - 8);
			return;
		}
		is_compressed = data[at] == 1;
		at += 2;
		for (int i = 0; i < 2; i++) {
			gssize n = field_len(data, len, at);
			if (n < 0) {
				pix_stream_problem(s, "corrupt PNG: iTXt chunk at offset %" G_GUINT64_FORMAT " is cut short",
				                   off - 8);
				return;
			}
			at += (gsize)n + 1;
		}
	}

	if (!text_value(p, key, data + at, len - at, is_compressed, &error))
		pix_stream_problem(s, "corrupt PNG: %s chunk '%s' at offset %" G_GUINT64_FORMAT ": %s", name,
		                   (const char *)data, off - 8, error);
}

/* The rest of a text chunk whose keyword part (p->prefix) named metadata. */
static void on_text_rest(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Png *p = ctx;
	TextKind kind = (TextKind)(arg >> 32);
	gsize total = (gsize)(arg & 0xffffffffu);

	if (off != p->prefix_off + p->prefix_len || p->prefix_len + len != total)
		return;   /* cut short: the walk reports the truncation */
	g_autofree guint8 *whole = g_malloc(total);
	memcpy(whole, p->prefix, p->prefix_len);
	memcpy(whole + p->prefix_len, data, len);
	text_chunk(p, s, kind, p->prefix_off, whole, total);
}

/* The first bytes of a text chunk's data: its keyword decides whether
 * the rest is wanted.  arg: the kind << 32 | the data's length. */
static void on_text_prefix(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Png *p = ctx;
	TextKind kind = (TextKind)(arg >> 32);
	gsize total = (gsize)(arg & 0xffffffffu);
	gsize after;

	if (len < MIN(total, (gsize)KEYWORD_WANT) || keyword_of(data, len, &after) == KEY_OTHER)
		return;
	if (len == total) {
		text_chunk(p, s, kind, off, data, len);
		return;
	}
	if (total > MAX_BLOCK) {
		pix_stream_problem(s, "%s chunk '%s' at offset %" G_GUINT64_FORMAT " is larger than %u MiB (not read)",
		                   text_names[kind], (const char *)data, off - 8, MAX_BLOCK >> 20);
		return;
	}
	memcpy(p->prefix, data, len);
	p->prefix_len = len;
	p->prefix_off = off;
	pix_stream_want(s, off + len, total - len, on_text_rest, p, arg);
}

static void on_ihdr(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Png *p = ctx;
	(void)arg;
	if (len < 13)
		return;   /* cut short: the walk reports the truncation */
	guint32 w = pix_be32(data), h = pix_be32(data + 4);
	if (w == 0 || h == 0 || w > MAX_CHUNK_LEN || h > MAX_CHUNK_LEN) {
		pix_stream_problem(s, "corrupt PNG: IHDR at offset %" G_GUINT64_FORMAT " gives a size of %ux%u",
		                   off - 8, w, h);
		return;
	}
	p->width_px = w;
	p->height_px = h;
}

static void on_exif(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	(void)s;
	(void)off;
	if (len == arg)
		keep_exif(ctx, data, len);
}

/* The file ends inside the chunk read last, or after it without IEND. */
static void truncated(Png *p, PixStream *s, guint64 off)
{
	guint64 size = pix_stream_pos(s);
	if (p->last_type[0] != '\0' && off > size)
		pix_stream_problem(s, "truncated PNG: chunk '%s' at offset %" G_GUINT64_FORMAT
		                   " runs past the end of the file (%" G_GUINT64_FORMAT " bytes)",
		                   p->last_type, p->last_off, size);
	else
		pix_stream_problem(s, "truncated PNG: the file ends at byte %" G_GUINT64_FORMAT " without an IEND chunk", size);
}

static gboolean is_chunk_type(const guint8 *t)
{
	for (int i = 0; i < 4; i++) {
		if (!g_ascii_isalpha(t[i]))
			return FALSE;
	}
	return TRUE;
}

static void on_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Png *p = ctx;
	(void)arg;

	if (len < 8) {
		truncated(p, s, off);
		return;
	}
	guint32 n = pix_be32(data);
	if (!is_chunk_type(data + 4)) {
		pix_stream_problem(s, "corrupt PNG: no chunk type at offset %" G_GUINT64_FORMAT, off);
		return;
	}
	char type[5];
	memcpy(type, data + 4, 4);
	type[4] = '\0';
	if (n > MAX_CHUNK_LEN) {
		pix_stream_problem(s, "corrupt PNG: chunk '%s' at offset %" G_GUINT64_FORMAT " claims %u bytes",
		                   type, off, n);
		return;
	}
	memcpy(p->last_type, type, sizeof type);
	p->last_off = off;
	guint64 at = off + 8;

	if (p->n_chunks == 1 && strcmp(type, "IHDR") != 0)
		pix_stream_problem(s, "corrupt PNG: the first chunk is '%s', not IHDR", type);
	if (strcmp(type, "IEND") == 0)
		return;   /* the end: nothing after it is read */
	if (strcmp(type, "IHDR") == 0 && !p->has_ihdr) {
		p->has_ihdr = TRUE;
		if (n == 13)
			pix_stream_want(s, at, 13, on_ihdr, p, 0);
		else
			pix_stream_problem(s, "corrupt PNG: IHDR at offset %" G_GUINT64_FORMAT " has %u bytes, not 13", off, n);
	} else if (strcmp(type, "eXIf") == 0 && p->exif == NULL && n > 0) {
		if (n <= MAX_BLOCK)
			pix_stream_want(s, at, n, on_exif, p, n);
		else
			pix_stream_problem(s, "eXIf chunk at offset %" G_GUINT64_FORMAT " is larger than %u MiB (not read)",
			                   off, MAX_BLOCK >> 20);
	} else if (n > 0) {
		for (guint k = 0; k < G_N_ELEMENTS(text_names); k++) {
			if (strcmp(type, text_names[k]) == 0)
				pix_stream_want(s, at, MIN(n, (guint32)KEYWORD_WANT), on_text_prefix, p, (guint64)k << 32 | n);
		}
	}
	want_chunk(p, s, at + n + 4);
}

static void png_finish(void *state, PixStream *s, PixMeta *m)
{
	Png *p = state;

	if (m->width_px < 0 && m->height_px < 0 && p->width_px > 0) {
		m->width_px = p->width_px;
		m->height_px = p->height_px;
	}
	pix_meta_read_captured(s, p->exif, p->xmp, m);
}

static void png_free(void *state)
{
	Png *p = state;
	if (p == NULL)
		return;
	if (p->exif != NULL)
		g_bytes_unref(p->exif);
	if (p->xmp != NULL)
		g_bytes_unref(p->xmp);
	g_free(p);
}

const PixContainer pix_container_png = {
	.name = "PNG",
	.keep_head = 0,
	.keep_tail = 0,
	.start = png_start,
	.finish = png_finish,
	.free = png_free,
};
