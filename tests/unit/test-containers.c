/*
 * test-containers.c: unit tests of the container parsers of meta-png.c
 * (PNG), meta-riff.c (WebP, AVI) and meta-raw.c (Fujifilm RAF, Minolta
 * MRW, Canon CRW, Sigma X3F), run through a PixStream as meta.c runs them,
 * and through the whole PixMetaParser for the format's recognition.
 *
 * Every input is built here, in memory, with an EXIF block built here too
 * (make, model, orientation, date, ISO, and an ImageWidth claim that must
 * never become the file's size).  Each well-formed file is parsed whole,
 * byte by byte and in random pieces: the results (every PixMeta field and
 * the problems recorded) must be identical.  Hostile inputs: every
 * truncation of each file, lengths past the end, zero and huge lengths,
 * lists and heaps nested too deep, heaps that hold themselves, more
 * chunks, records or properties than the walk follows, a zlib bomb, and
 * random mutations (which the SANITIZE=1 build checks for reads out of
 * bounds).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "item.h"
#include "meta-int.h"
#include "testlib.h"

#include <gio/gio.h>
#include <math.h>

/* --- building inputs --- */

typedef struct {
	GByteArray *b;
	gboolean is_big;        /* byte order of the numbers put */
} Buf;

static void put(Buf *w, const void *data, gsize len)
{
	g_byte_array_append(w->b, data, (guint)len);
}

static void put8(Buf *w, guint v)
{
	guint8 b = (guint8)v;
	put(w, &b, 1);
}

static void put16(Buf *w, guint v)
{
	guint8 b[2] = { (guint8)(v >> 8), (guint8)v };
	if (!w->is_big) {
		b[0] = (guint8)v;
		b[1] = (guint8)(v >> 8);
	}
	put(w, b, 2);
}

static void set32(Buf *w, gsize at, guint32 v)
{
	guint8 *p = w->b->data + at;
	for (int i = 0; i < 4; i++)
		p[i] = (guint8)(w->is_big ? v >> (24 - 8 * i) : v >> (8 * i));
}

static void put32(Buf *w, guint32 v)
{
	guint8 b[4] = { 0 };
	put(w, b, 4);
	set32(w, w->b->len - 4, v);
}

static void puts_(Buf *w, const char *s)
{
	put(w, s, strlen(s));
}

static GBytes *buf_free_to_bytes(Buf *w)
{
	return g_byte_array_free_to_bytes(w->b);
}

/* A TIFF directory entry: a number, or a string (ASCII, count with NUL). */
typedef struct {
	guint16 tag, type;
	guint32 value;
	const char *text;
} Ent;

#define T_ASCII 2
#define T_SHORT 3
#define T_LONG 4

/* Writes an IFD of `n` entries (ascending tags) at the end of `w`, its
 * strings after it; returns the IFD's offset within the TIFF at `base`. */
static gsize put_ifd(Buf *w, gsize base, const Ent *e, guint n)
{
	gsize at = w->b->len;
	gsize data = at + 2 + 12 * n + 4;
	put16(w, n);
	for (guint i = 0; i < n; i++) {
		put16(w, e[i].tag);
		put16(w, e[i].type);
		if (e[i].text != NULL) {
			guint32 count = (guint32)strlen(e[i].text) + 1;
			put32(w, count);
			if (count <= 4) {
				guint8 v[4] = { 0 };
				memcpy(v, e[i].text, count);
				put(w, v, 4);
			} else {
				put32(w, (guint32)(data - base));
				data += count + (count & 1);
			}
		} else {
			put32(w, 1);
			if (e[i].type == T_SHORT) {
				put16(w, e[i].value);
				put16(w, 0);
			} else {
				put32(w, e[i].value);
			}
		}
	}
	put32(w, 0);
	for (guint i = 0; i < n; i++) {
		guint32 count = e[i].text != NULL ? (guint32)strlen(e[i].text) + 1 : 0;
		if (count > 4) {
			put(w, e[i].text, count);
			if (count & 1)
				put8(w, 0);
		}
	}
	return at - base;
}

/* An EXIF TIFF block: IFD0 with an ImageWidth/ImageHeight claim of
 * 4000x3000, make, model and orientation; the Exif IFD with ISO and the
 * date taken. */
static GBytes *make_tiff(gboolean is_big, const char *make, const char *model, guint orientation, const char *date,
                         guint iso)
{
	Buf w = { g_byte_array_new(), is_big };
	puts_(&w, is_big ? "MM" : "II");
	put16(&w, 42);
	put32(&w, 8);
	const Ent ifd0[] = {
		{ 0x0100, T_LONG, 4000, NULL }, { 0x0101, T_LONG, 3000, NULL }, { 0x010f, T_ASCII, 0, make },
		{ 0x0110, T_ASCII, 0, model }, { 0x0112, T_SHORT, orientation, NULL }, { 0x8769, T_LONG, 0, NULL },
	};
	gsize ifd0_at = put_ifd(&w, 0, ifd0, G_N_ELEMENTS(ifd0));
	const Ent exif[] = { { 0x8827, T_SHORT, iso, NULL }, { 0x9003, T_ASCII, 0, date } };
	gsize exif_at = put_ifd(&w, 0, exif, G_N_ELEMENTS(exif));
	set32(&w, ifd0_at + 2 + 5 * 12 + 8, (guint32)exif_at);
	return buf_free_to_bytes(&w);
}

static GBytes *default_tiff(gboolean is_big)
{
	return make_tiff(is_big, "Testmaker", "Model T", 6, "2021:04:05 06:07:08", 400);
}

static const char xmp_packet[] =
	"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>"
	"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	"<rdf:Description rdf:about='' xmlns:tiff='http://ns.adobe.com/tiff/1.0/'"
	" xmlns:aux='http://ns.adobe.com/exif/1.0/aux/' tiff:Make='XmpMaker' aux:Lens='XmpLens 50mm'/>"
	"</rdf:RDF></x:xmpmeta><?xpacket end='r'?>";

static GBytes *deflate(const void *data, gsize len)
{
	g_autoptr(GZlibCompressor) z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_ZLIB, 9);
	g_autoptr(GByteArray) out = g_byte_array_new();
	guint8 buf[4096];
	gsize at = 0;
	for (;;) {
		gsize r = 0, n = 0;
		GConverterResult res = g_converter_convert(G_CONVERTER(z), (const guint8 *)data + at, len - at, buf,
		                                           sizeof buf, G_CONVERTER_INPUT_AT_END, &r, &n, NULL);
		g_assert_cmpint(res, !=, G_CONVERTER_ERROR);
		at += r;
		g_byte_array_append(out, buf, (guint)n);
		if (res == G_CONVERTER_FINISHED)
			break;
	}
	return g_byte_array_free_to_bytes(g_steal_pointer(&out));
}

/* ImageMagick's raw profile text: "\nNAME\n  LENGTH\nHEX" in lines of 72
 * digits (transfer full). */
static char *raw_profile(const char *name, GBytes *bytes)
{
	gsize len;
	const guint8 *d = g_bytes_get_data(bytes, &len);
	GString *t = g_string_new(NULL);
	g_string_append_printf(t, "\n%s\n%8" G_GSIZE_FORMAT, name, len);
	for (gsize i = 0; i < len; i++) {
		if (i % 36 == 0)
			g_string_append_c(t, '\n');
		g_string_append_printf(t, "%02x", d[i]);
	}
	g_string_append_c(t, '\n');
	return g_string_free(t, FALSE);
}

/* --- PNG --- */

static guint32 crc32_of(guint32 crc, const guint8 *p, gsize len)
{
	crc = ~crc;
	for (gsize i = 0; i < len; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	return ~crc;
}

static void png_chunk(Buf *w, const char *type, const void *data, gsize len)
{
	put32(w, (guint32)len);
	gsize at = w->b->len;
	puts_(w, type);
	put(w, data, len);
	put32(w, crc32_of(0, w->b->data + at, len + 4));
}

static void png_ihdr(Buf *w, guint32 width, guint32 height)
{
	Buf d = { g_byte_array_new(), TRUE };
	put32(&d, width);
	put32(&d, height);
	put(&d, "\x08\x02\x00\x00\x00", 5);
	png_chunk(w, "IHDR", d.b->data, d.b->len);
	g_byte_array_unref(d.b);
}

/* A text chunk: keyword, then (zTXt) method 0, (iTXt) flag, method,
 * language and translated keyword, then the text, compressed if asked. */
static void png_text(Buf *w, const char *type, const char *keyword, const void *text, gsize len, gboolean is_compressed)
{
	Buf d = { g_byte_array_new(), TRUE };
	put(&d, keyword, strlen(keyword) + 1);
	if (strcmp(type, "zTXt") == 0)
		put8(&d, 0);
	if (strcmp(type, "iTXt") == 0) {
		put8(&d, is_compressed);
		put8(&d, 0);
		put(&d, "en\0\0", 4);
	}
	if (is_compressed) {
		g_autoptr(GBytes) z = deflate(text, len);
		put(&d, g_bytes_get_data(z, NULL), g_bytes_get_size(z));
	} else {
		put(&d, text, len);
	}
	png_chunk(w, type, d.b->data, d.b->len);
	g_byte_array_unref(d.b);
}

typedef enum {
	PNG_EXIF,           /* an eXIf chunk */
	PNG_EXIF_HEADER,    /* an eXIf chunk with "Exif\0\0" first */
	PNG_TEXT_PROFILE,   /* tEXt "Raw profile type exif" */
	PNG_ZTXT_PROFILE,   /* zTXt "Raw profile type APP1" (with "Exif\0\0") */
	PNG_ITXT_PROFILE,   /* compressed iTXt "Raw profile type exif" */
	PNG_NO_EXIF,
} PngKind;

/* A 640x480 PNG with EXIF as `kind` says, an XMP iTXt, unrelated text, and
 * IDAT chunks before and after the metadata; *iend_at gets IEND's offset. */
static GBytes *make_png(PngKind kind, gsize *iend_at)
{
	Buf w = { g_byte_array_new(), TRUE };
	g_autoptr(GBytes) tiff = default_tiff(kind != PNG_ZTXT_PROFILE);
	gsize tlen;
	const guint8 *t = g_bytes_get_data(tiff, &tlen);

	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_ihdr(&w, 640, 480);
	static const char comment[] = "a long comment that is not metadata at all, longer than eighty bytes, "
	                              "so that its keyword is read alone";
	png_text(&w, "tEXt", "Comment", comment, strlen(comment), FALSE);
	png_chunk(&w, "IDAT", "\x78\x9c\x63\x00\x00\x00\x01\x00\x01", 9);
	if (kind == PNG_EXIF) {
		png_chunk(&w, "eXIf", t, tlen);
	} else if (kind == PNG_EXIF_HEADER) {
		g_autofree guint8 *d = g_malloc(tlen + 6);
		memcpy(d, "Exif\0\0", 6);
		memcpy(d + 6, t, tlen);
		png_chunk(&w, "eXIf", d, tlen + 6);
	} else if (kind == PNG_TEXT_PROFILE || kind == PNG_ITXT_PROFILE) {
		g_autofree char *text = raw_profile("exif", tiff);
		png_text(&w, kind == PNG_TEXT_PROFILE ? "tEXt" : "iTXt", "Raw profile type exif", text, strlen(text),
		         kind == PNG_ITXT_PROFILE);
	} else if (kind == PNG_ZTXT_PROFILE) {
		g_autoptr(GByteArray) app1 = g_byte_array_new();
		g_byte_array_append(app1, (const guint8 *)"Exif\0\0", 6);
		g_byte_array_append(app1, t, (guint)tlen);
		g_autoptr(GBytes) app1_bytes = g_bytes_new(app1->data, app1->len);
		g_autofree char *text = raw_profile("APP1", app1_bytes);
		png_text(&w, "zTXt", "Raw profile type APP1", text, strlen(text), TRUE);
	}
	png_text(&w, "iTXt", "XML:com.adobe.xmp", xmp_packet, strlen(xmp_packet), FALSE);
	png_chunk(&w, "IDAT", "\x00\x00\x00", 3);
	*iend_at = w.b->len;
	png_chunk(&w, "IEND", NULL, 0);
	return buf_free_to_bytes(&w);
}

/* --- RIFF --- */

/* A RIFF chunk: id, little-endian size, data, a pad byte if odd. */
static void riff_chunk(Buf *w, const char *id, const void *data, gsize len)
{
	put(w, id, 4);
	put32(w, (guint32)len);
	put(w, data, len);
	if (len & 1)
		put8(w, 0);
}

/* Opens a chunk whose size is set by riff_close() (a RIFF or LIST with its
 * type); returns where its size is. */
static gsize riff_open(Buf *w, const char *id, const char *type)
{
	put(w, id, 4);
	gsize at = w->b->len;
	put32(w, 0);
	put(w, type, 4);
	return at;
}

static void riff_close(Buf *w, gsize size_at)
{
	set32(w, size_at, (guint32)(w->b->len - size_at - 4));
}

typedef enum {
	WEBP_EXTENDED,   /* VP8X (canvas 1000x700), VP8 (a 320x240 frame), EXIF with "Exif\0\0", XMP */
	WEBP_LOSSY,      /* VP8 only: 320x240 */
	WEBP_LOSSLESS,   /* VP8L, 123x45, an odd-sized chunk, and EXIF without a header */
} WebpKind;

static GBytes *make_webp(WebpKind kind)
{
	Buf w = { g_byte_array_new(), FALSE };
	gsize riff = riff_open(&w, "RIFF", "WEBP");
	if (kind == WEBP_EXTENDED) {
		const guint8 vp8x[10] = { 0x0c, 0, 0, 0, 0xe7, 0x03, 0, 0xbb, 0x02, 0 };  /* 999+1, 699+1 */
		riff_chunk(&w, "VP8X", vp8x, sizeof vp8x);
	}
	if (kind != WEBP_LOSSLESS) {
		const guint8 vp8[14] = { 0x50, 0x05, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 1, 2, 3, 4 };
		riff_chunk(&w, "VP8 ", vp8, sizeof vp8);
	} else {
		guint32 bits = (123 - 1) | (45 - 1) << 14;
		const guint8 vp8l[7] = { 0x2f, (guint8)bits, (guint8)(bits >> 8), (guint8)(bits >> 16), (guint8)(bits >> 24), 9, 9 };
		riff_chunk(&w, "VP8L", vp8l, sizeof vp8l);
	}
	if (kind != WEBP_LOSSY) {
		g_autoptr(GBytes) tiff = default_tiff(kind == WEBP_EXTENDED);
		g_autoptr(GByteArray) exif = g_byte_array_new();
		if (kind == WEBP_EXTENDED)
			g_byte_array_append(exif, (const guint8 *)"Exif\0\0", 6);
		g_byte_array_append(exif, g_bytes_get_data(tiff, NULL), (guint)g_bytes_get_size(tiff));
		riff_chunk(&w, "EXIF", exif->data, exif->len);
	}
	if (kind == WEBP_EXTENDED)
		riff_chunk(&w, "XMP ", xmp_packet, strlen(xmp_packet));
	riff_close(&w, riff);
	return buf_free_to_bytes(&w);
}

/* An AVI: hdrl (avih: 40,000 us per frame, `frames` frames, 640x480;
 * a video stream of `video_frames` frames at 25/s, 720x576 (stored
 * bottom up, or top down when `is_top_down`); an audio stream; the IDIT
 * date), a movi list of frames, idx1, and an AVIX extension. */
static GBytes *make_avi(guint32 frames, guint32 video_frames, const char *idit, gboolean is_top_down, gsize *avix_at)
{
	Buf w = { g_byte_array_new(), FALSE };
	gsize riff = riff_open(&w, "RIFF", "AVI ");
	gsize hdrl = riff_open(&w, "LIST", "hdrl");
	{
		Buf a = { g_byte_array_new(), FALSE };
		const guint32 avih[14] = { 40000, 0, 0, 0x10, frames, 0, 2, 0, 640, 480, 0, 0, 0, 0 };
		for (guint i = 0; i < G_N_ELEMENTS(avih); i++)
			put32(&a, avih[i]);
		riff_chunk(&w, "avih", a.b->data, a.b->len);
		g_byte_array_unref(a.b);
	}
	const char *types[2] = { "auds", "vids" };
	for (guint k = 0; k < 2; k++) {
		/* the audio stream first, so "the first video stream" is not
		 * simply the first stream */
		gsize strl = riff_open(&w, "LIST", "strl");
		Buf h = { g_byte_array_new(), FALSE };
		puts_(&h, types[k]);
		puts_(&h, k == 1 ? "MJPG" : "\0\0\0\0");
		const guint32 rest[12] = { 0, 0, 0, k == 1 ? 1 : 1, k == 1 ? 25 : 44100, 0,
		                           k == 1 ? video_frames : 441000, 0, 0, 0, 0, 0 };
		for (guint i = 0; i < G_N_ELEMENTS(rest); i++)
			put32(&h, rest[i]);
		riff_chunk(&w, "strh", h.b->data, h.b->len);
		g_byte_array_unref(h.b);
		Buf f = { g_byte_array_new(), FALSE };
		if (k == 1) {
			put32(&f, 40);
			put32(&f, 720);
			put32(&f, is_top_down ? (guint32)-576 : 576);
			put16(&f, 1);
			put16(&f, 24);
			puts_(&f, "MJPG");
			for (int i = 0; i < 5; i++)
				put32(&f, 0);
		} else {
			/* WAVEFORMATEX: a width here would be nonsense */
			put16(&f, 1);
			put16(&f, 2);
			put32(&f, 44100);
			put32(&f, 176400);
			put16(&f, 4);
			put16(&f, 16);
			put16(&f, 0);
		}
		riff_chunk(&w, "strf", f.b->data, f.b->len);
		g_byte_array_unref(f.b);
		riff_chunk(&w, "strn", "odd", 3);   /* padded to 4 */
		riff_close(&w, strl);
	}
	if (idit != NULL)
		riff_chunk(&w, "IDIT", idit, strlen(idit) + 1);
	riff_close(&w, hdrl);
	riff_chunk(&w, "JUNK", "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
	gsize movi = riff_open(&w, "LIST", "movi");
	for (int i = 0; i < 5; i++)
		riff_chunk(&w, "00dc", "\xff\xd8\xff\xd9x", 5);
	riff_close(&w, movi);
	riff_chunk(&w, "idx1", "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	riff_close(&w, riff);
	*avix_at = w.b->len;
	gsize avix = riff_open(&w, "RIFF", "AVIX");
	gsize movi2 = riff_open(&w, "LIST", "movi");
	riff_chunk(&w, "00dc", "\xff\xd8\xff\xd9", 4);
	riff_close(&w, movi2);
	riff_close(&w, avix);
	return buf_free_to_bytes(&w);
}

/* --- RAF and MRW --- */

/* A baseline JPEG of `width` x `height` with the EXIF block as APP1. */
static GBytes *make_jpeg(GBytes *tiff, guint width, guint height)
{
	Buf w = { g_byte_array_new(), TRUE };
	put(&w, "\xff\xd8", 2);
	put(&w, "\xff\xe1", 2);
	put16(&w, (guint)(2 + 6 + g_bytes_get_size(tiff)));
	put(&w, "Exif\0\0", 6);
	put(&w, g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff));
	put(&w, "\xff\xc0\x00\x0b\x08", 5);
	put16(&w, height);
	put16(&w, width);
	put(&w, "\x01\x01\x11\x00", 4);
	put(&w, "\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", 10);
	put(&w, "\x12\x34\xff\x00\x56\x78", 6);
	put(&w, "\xff\xd9", 2);
	return buf_free_to_bytes(&w);
}

/* A RAF: the header, a 160x120 preview with EXIF, a RAF directory and
 * raw data (the file's last bytes). */
static GBytes *make_raf(void)
{
	Buf w = { g_byte_array_new(), TRUE };
	g_autoptr(GBytes) tiff = default_tiff(FALSE);
	g_autoptr(GBytes) jpeg = make_jpeg(tiff, 160, 120);

	puts_(&w, "FUJIFILMCCD-RAW 0201FF129502");
	put(&w, "FinePix Test\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32);
	puts_(&w, "0100");
	while (w.b->len < 84)
		put8(&w, 0);
	gsize offsets = w.b->len;
	for (int i = 0; i < 6; i++)
		put32(&w, 0);
	while (w.b->len < 148)
		put8(&w, 0);
	gsize jpeg_at = w.b->len;
	put(&w, g_bytes_get_data(jpeg, NULL), g_bytes_get_size(jpeg));
	gsize dir_at = w.b->len;
	put32(&w, 1);
	put16(&w, 0x100);
	put16(&w, 4);
	put16(&w, 1444);
	put16(&w, 4352);
	gsize cfa_at = w.b->len;
	for (int i = 0; i < 300; i++)
		put8(&w, i);
	set32(&w, offsets, (guint32)jpeg_at);
	set32(&w, offsets + 4, (guint32)g_bytes_get_size(jpeg));
	set32(&w, offsets + 8, (guint32)dir_at);
	set32(&w, offsets + 12, (guint32)(cfa_at - dir_at));
	set32(&w, offsets + 16, (guint32)cfa_at);
	set32(&w, offsets + 20, 300);
	return buf_free_to_bytes(&w);
}

/* An MRW: PRD (3264x2448 of a 3272x2456 sensor), TTW (the EXIF block),
 * WBG, PAD, then raw data; *data_at gets where the raw data starts. */
static GBytes *make_mrw(gsize *data_at)
{
	Buf w = { g_byte_array_new(), TRUE };
	g_autoptr(GBytes) tiff = default_tiff(TRUE);

	put(&w, "\0MRM", 4);
	put32(&w, 0);
	put(&w, "\0PRD", 4);
	put32(&w, 24);
	puts_(&w, "27200001");
	put16(&w, 2456);
	put16(&w, 3272);
	put16(&w, 2448);
	put16(&w, 3264);
	put(&w, "\x0c\x0c\x59\0\0\0\0\x01", 8);
	put(&w, "\0TTW", 4);
	put32(&w, (guint32)g_bytes_get_size(tiff));
	put(&w, g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff));
	put(&w, "\0WBG", 4);
	put32(&w, 12);
	put(&w, "\0\0\x01\x00\x01\x00\x01\x00\x01\x00\0\0", 12);
	put(&w, "\0PAD", 4);
	put32(&w, 5);
	put(&w, "\0\0\0\0\0", 5);
	set32(&w, 4, w.b->len - 8);
	*data_at = w.b->len;
	for (int i = 0; i < 200; i++)
		put8(&w, i * 7);
	return buf_free_to_bytes(&w);
}

/* --- CRW and X3F --- */

/* A CIFF record: data placed in the heap, or (tag & 0x4000) its 8 bytes
 * in the record itself; a heap's data is the heap (crw_heap()). */
typedef struct {
	guint16 tag;
	GBytes *data;           /* (transfer none) */
} Rec;

/* A CIFF heap: the records' data, the directory, its offset (transfer
 * full). */
static GBytes *crw_heap(gboolean is_big, const Rec *r, guint n)
{
	Buf w = { g_byte_array_new(), is_big };
	g_autofree guint32 *offs = g_new0(guint32, n);
	for (guint i = 0; i < n; i++) {
		if (r[i].tag & 0x4000)
			continue;
		offs[i] = w.b->len;
		put(&w, g_bytes_get_data(r[i].data, NULL), g_bytes_get_size(r[i].data));
	}
	gsize dir = w.b->len;
	put16(&w, n);
	for (guint i = 0; i < n; i++) {
		put16(&w, r[i].tag);
		if (r[i].tag & 0x4000) {
			g_assert_cmpuint(g_bytes_get_size(r[i].data), ==, 8);
			put(&w, g_bytes_get_data(r[i].data, NULL), 8);
		} else {
			put32(&w, (guint32)g_bytes_get_size(r[i].data));
			put32(&w, offs[i]);
		}
	}
	put32(&w, (guint32)dir);
	return buf_free_to_bytes(&w);
}

/* `n` 32-bit words (`is_big` order) as bytes. */
static GBytes *words32(gboolean is_big, const guint32 *v, guint n)
{
	Buf w = { g_byte_array_new(), is_big };
	for (guint i = 0; i < n; i++)
		put32(&w, v[i]);
	return buf_free_to_bytes(&w);
}

/* `n` 16-bit words, the rest of `len` bytes zero. */
static GBytes *words16(gboolean is_big, const guint16 *v, guint n, gsize len)
{
	Buf w = { g_byte_array_new(), is_big };
	for (guint i = 0; i < n; i++)
		put16(&w, v[i]);
	while (w.b->len < len)
		put8(&w, 0);
	return buf_free_to_bytes(&w);
}

static GBytes *pattern(gsize len)
{
	g_autofree guint8 *d = g_malloc(len);
	for (gsize i = 0; i < len; i++)
		d[i] = (guint8)(i * 13 + 7);
	return g_bytes_new_take(g_steal_pointer(&d), len);
}

/* The header and a root heap of `n` records (transfer full). */
static GBytes *crw_file(gboolean is_big, const Rec *r, guint n)
{
	Buf w = { g_byte_array_new(), is_big };
	puts_(&w, is_big ? "MM" : "II");
	put32(&w, 26);
	puts_(&w, "HEAPCCDR");
	put32(&w, 0x00010002);
	put32(&w, 0);
	put32(&w, 0);
	g_autoptr(GBytes) root = crw_heap(is_big, r, n);
	put(&w, g_bytes_get_data(root, NULL), g_bytes_get_size(root));
	return buf_free_to_bytes(&w);
}

/* A CRW as a Canon EOS 300D writes one: raw data and a JPEG (`pad_len`
 * bytes each), then ImageProps (ImageInfo 3072x2048, TimeStamp
 * 2003-11-10 17:39:26, a FileNumber in its record, CameraObject with
 * make and model, ExifInformation with ShotInfo (AutoISO 16, BaseISO 160:
 * ISO 141) and CameraSettings (CameraISO `camera_iso`)). */
static GBytes *make_crw(gboolean is_big, guint16 camera_iso, gsize pad_len)
{
	const guint32 info[7] = { 3072, 2048, 0x3f800000, 0, 8, 24, 0x101 };
	const guint32 stamp[3] = { 1068485966, 0, 0 };
	const guint16 shot[3] = { 66, 16, 160 };
	guint16 settings[17] = { 92 };
	settings[16] = camera_iso;
	g_autoptr(GBytes) pad = pattern(pad_len);
	g_autoptr(GBytes) b_info = words32(is_big, info, 7);
	g_autoptr(GBytes) b_stamp = words32(is_big, stamp, 3);
	g_autoptr(GBytes) b_number = words32(is_big, (const guint32[]){ 1161602, 0 }, 2);
	g_autoptr(GBytes) b_shot = words16(is_big, shot, 3, 66);
	g_autoptr(GBytes) b_settings = words16(is_big, settings, 17, 92);
	g_autoptr(GBytes) b_make = g_bytes_new("Canon\0Canon EOS Test\0\0\0\0\0\0\0\0\0\0\0", 32);
	g_autoptr(GBytes) b_owner = g_bytes_new("Someone\0", 8);
	const Rec camera[] = { { 0x0810, b_owner }, { 0x080a, b_make } };
	g_autoptr(GBytes) b_camera = crw_heap(is_big, camera, G_N_ELEMENTS(camera));
	const Rec exif[] = { { 0x102a, b_shot }, { 0x102d, b_settings } };
	g_autoptr(GBytes) b_exif = crw_heap(is_big, exif, G_N_ELEMENTS(exif));
	const Rec props[] = {
		{ 0x1810, b_info }, { 0x5817, b_number }, { 0x180e, b_stamp }, { 0x2807, b_camera }, { 0x300b, b_exif },
	};
	g_autoptr(GBytes) b_props = crw_heap(is_big, props, G_N_ELEMENTS(props));
	const Rec root[] = { { 0x2005, pad }, { 0x2007, pad }, { 0x300a, b_props } };
	return crw_file(is_big, root, G_N_ELEMENTS(root));
}

/* A UTF-16LE string with its NUL. */
static void put_utf16(Buf *w, const char *text)
{
	glong n;
	g_autofree gunichar2 *u = g_utf8_to_utf16(text, -1, NULL, &n, NULL);
	for (glong i = 0; i <= n; i++) {
		put8(w, u[i] & 0xff);
		put8(w, u[i] >> 8);
	}
}

/* A PROP section of `n` name/value pairs (transfer full). */
static GBytes *x3f_prop(const char *const *pairs, guint n)
{
	Buf w = { g_byte_array_new(), FALSE };
	Buf chars = { g_byte_array_new(), FALSE };
	puts_(&w, "SECp");
	put32(&w, 0x00020000);
	put32(&w, n);
	put32(&w, 0);
	put32(&w, 0);
	gsize n_chars_at = w.b->len;
	put32(&w, 0);
	for (guint i = 0; i < 2 * n; i++) {
		put32(&w, chars.b->len / 2);
		put_utf16(&chars, pairs[i]);
	}
	set32(&w, n_chars_at, chars.b->len / 2);
	put(&w, chars.b->data, chars.b->len);
	g_byte_array_unref(chars.b);
	return buf_free_to_bytes(&w);
}

/* An X3F: a version 2.2 header (2268x1512, or at the offsets of version
 * 4), IMAG and IMA2 sections (`pad_len` bytes each), the PROP section
 * `prop` (`prop_first`: before them, else after), the directory and its
 * offset. */
static GBytes *make_x3f_with(gboolean is_v4, GBytes *prop, gboolean is_prop_first, gsize pad_len)
{
	Buf w = { g_byte_array_new(), FALSE };
	puts_(&w, "FOVb");
	put32(&w, is_v4 ? 0x00040000 : 0x00020002);
	puts_(&w, "0200123412345678");
	put32(&w, 0);
	put32(&w, is_v4 ? 0 : 2268);
	put32(&w, is_v4 ? 0 : 1512);
	put32(&w, is_v4 ? 0 : 90);
	put32(&w, is_v4 ? 5424 : 0);
	put32(&w, is_v4 ? 3616 : 0);
	while (w.b->len < 72 + 160)
		put8(&w, 0);
	g_autoptr(GBytes) pad = pattern(pad_len);
	guint32 offs[3], lens[3];
	const char *types[3] = { "IMAG", "PROP", "IMA2" };
	for (guint k = 0; k < 3; k++) {
		guint i = is_prop_first ? (k == 0 ? 1 : k == 1 ? 0 : 2) : (k == 0 ? 0 : k == 1 ? 2 : 1);
		GBytes *b = i == 1 ? prop : pad;
		offs[i] = w.b->len;
		lens[i] = (guint32)g_bytes_get_size(b) + (i == 1 ? 0 : 28);
		if (i != 1) {
			puts_(&w, "SECi");
			while (w.b->len < offs[i] + 28)
				put8(&w, 0);
		}
		put(&w, g_bytes_get_data(b, NULL), g_bytes_get_size(b));
	}
	gsize dir = w.b->len;
	puts_(&w, "SECd");
	put32(&w, 0x00020000);
	put32(&w, 3);
	for (guint i = 0; i < 3; i++) {
		put32(&w, offs[i]);
		put32(&w, lens[i]);
		puts_(&w, types[i]);
	}
	put32(&w, (guint32)dir);
	return buf_free_to_bytes(&w);
}

static const char *const x3f_props[] = {
	"ISO", "200", "RESOLUTION", "HI", "CAMMANUF", "Testmaker", "CAMMODEL", "SD T\xc3\xa9st",
	"TIME", "978309395", "WB_DESC", "Sunlight",
};

static GBytes *make_x3f(gboolean is_v4, gsize pad_len)
{
	g_autoptr(GBytes) prop = x3f_prop(x3f_props, G_N_ELEMENTS(x3f_props) / 2);
	return make_x3f_with(is_v4, prop, FALSE, pad_len);
}

/* --- running a container --- */

typedef struct {
	PixMeta *m;
	char *problems;         /* NULL when none */
	char *summary;          /* every field and the problems */
} Run;

static void run_clear(Run *r)
{
	pix_meta_free(r->m);
	g_free(r->problems);
	g_free(r->summary);
}

static char *summary(const PixMeta *m, const char *problems)
{
	return g_strdup_printf("date=%s tz=%s src=%s make=%s model=%s lens=%s exp=%.17g f=%.17g iso=%" G_GINT64_FORMAT
	                       " focal=%.17g orient=%d size=%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
	                       " gps=%.17g,%.17g,%.17g dur=%.17g problems=%s",
	                       m->date_taken, m->date_tz, m->date_source, m->make, m->model, m->lens, m->exposure_s,
	                       m->fnumber, m->iso, m->focal_mm, m->orientation, m->width_px, m->height_px, m->gps_lat,
	                       m->gps_lon, m->gps_alt_m, m->duration_s, problems);
}

/* Runs `c` over `len` bytes fed in pieces ending at the ascending `cuts`
 * (each piece a copy of exactly its bytes, for ASan), then the rest. */
static void run_cuts(const PixContainer *c, const guint8 *data, gsize len, const gsize *cuts, guint n_cuts, Run *out)
{
	PixStream *s = pix_stream_new(c->keep_head, c->keep_tail);
	void *state = c->start(s);
	gsize at = 0;
	for (guint i = 0; i <= n_cuts; i++) {
		gsize end = i < n_cuts ? cuts[i] : len;
		g_autofree guint8 *piece = g_memdup2(data + at, end - at);
		pix_stream_feed(s, piece, end - at);
		at = end;
	}
	pix_stream_finish(s);
	out->m = pix_meta_new();
	c->finish(state, s, out->m);
	out->problems = pix_stream_problems(s);
	out->summary = summary(out->m, out->problems);
	c->free(state);
	pix_stream_free(s);
}

static void run_whole(const PixContainer *c, GBytes *b, Run *out)
{
	run_cuts(c, g_bytes_get_data(b, NULL), g_bytes_get_size(b), NULL, 0, out);
}

static void run_random(const PixContainer *c, const guint8 *data, gsize len, guint max_cuts, Run *out)
{
	guint n = (guint)g_test_rand_int_range(0, (gint32)max_cuts + 1);
	g_autofree gsize *cuts = g_new(gsize, n + 1);
	for (guint i = 0; i < n; i++)
		cuts[i] = (gsize)g_test_rand_int_range(0, (gint32)len + 1);
	for (guint i = 1; i < n; i++) {
		for (guint j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
			gsize t = cuts[j];
			cuts[j] = cuts[j - 1];
			cuts[j - 1] = t;
		}
	}
	run_cuts(c, data, len, cuts, n, out);
}

/* Parses `b` whole, byte by byte and in random pieces: the same results
 * every time; `whole` gets the first (the caller clears it). */
static void run_all_ways(const PixContainer *c, GBytes *b, Run *whole)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(b, &len);
	run_whole(c, b, whole);

	g_autofree gsize *every = g_new(gsize, len + 1);
	for (gsize i = 0; i < len; i++)
		every[i] = i;
	Run bytewise;
	run_cuts(c, data, len, every, (guint)len, &bytewise);
	g_assert_cmpstr(bytewise.summary, ==, whole->summary);
	run_clear(&bytewise);
	for (int i = 0; i < 20; i++) {
		Run r;
		run_random(c, data, len, 12, &r);
		g_assert_cmpstr(r.summary, ==, whole->summary);
		run_clear(&r);
	}
}

/* `problems` (may be NULL) contains `what`. */
static void assert_has(const char *problems, const char *what)
{
	if (problems == NULL || strstr(problems, what) == NULL)
		g_error("problems '%s', want '%s'", problems, what);
}

/* The fields of default_tiff(). */
static void assert_default_exif(const PixMeta *m)
{
	g_assert_cmpstr(m->make, ==, "Testmaker");
	g_assert_cmpstr(m->model, ==, "Model T");
	g_assert_cmpint(m->orientation, ==, 6);
	g_assert_cmpint(m->iso, ==, 400);
	g_assert_cmpstr(m->date_taken, ==, "2021-04-05T06:07:08");
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
}

/* Parses every proper prefix of `b` (a file cut at each byte): never a
 * crash; a problem containing `what` for each cut in [from, to). */
static void assert_truncations(const PixContainer *c, GBytes *b, gsize from, gsize to, const char *what)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(b, &len);
	for (gsize k = 0; k < len; k++) {
		Run r;
		run_cuts(c, data, k, NULL, 0, &r);
		if (k >= from && k < to && (r.problems == NULL || strstr(r.problems, what) == NULL))
			g_error("%s cut at %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ": problems '%s', want '%s'", c->name, k,
			        len, r.problems, what);
		run_clear(&r);
	}
}

/* Random byte mutations of `b`: any verdict, no crash, and the same
 * verdict whole and in pieces. */
static void assert_mutations_harmless(const PixContainer *c, GBytes *b, guint iterations)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(b, &len);
	g_autofree guint8 *copy = g_malloc(len);
	for (guint iter = 0; iter < iterations; iter++) {
		memcpy(copy, data, len);
		guint n = (guint)g_test_rand_int_range(1, 6);
		for (guint i = 0; i < n; i++) {
			gsize at = (gsize)g_test_rand_int_range(0, (gint32)len);
			copy[at] = g_test_rand_bit() ? (guint8)g_test_rand_int_range(0, 256) : 0xff;
		}
		Run whole, pieces;
		run_cuts(c, copy, len, NULL, 0, &whole);
		run_random(c, copy, len, 20, &pieces);
		if (strcmp(whole.summary, pieces.summary) != 0)
			g_error("mutation %u of %s: whole '%s', in pieces '%s'", iter, c->name, whole.summary, pieces.summary);
		run_clear(&whole);
		run_clear(&pieces);
	}
}

/* Through the whole PixMetaParser, in pieces of `chunk` bytes. */
static PixItem *sniff(GBytes *b, gsize chunk)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(b, &len);
	g_autoptr(PixDir) dir = pix_dir_new("/t");
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, "x");
	PixMetaParser *mp = pix_meta_parser_new();
	for (gsize at = 0; at < len; at += chunk) {
		gsize n = MIN(chunk, len - at);
		g_autofree guint8 *piece = g_memdup2(data + at, n);
		pix_meta_parser_feed(mp, piece, n);
	}
	pix_meta_parser_finish(mp, item);
	pix_meta_parser_free(mp);
	return item;
}

/* Recognised by content, read by this container, whatever the pieces. */
static void assert_sniffed(GBytes *b, const char *mime, gint64 width, gint64 height)
{
	static const gsize chunks[] = { 1, 7, 64, 65, 4096 };
	for (guint i = 0; i < G_N_ELEMENTS(chunks); i++) {
		g_autoptr(PixItem) item = sniff(b, chunks[i]);
		g_assert_cmpstr(item->mime, ==, mime);
		g_assert_null(item->error);
		g_assert_nonnull(item->meta);
		g_assert_cmpint(item->meta->width_px, ==, width);
		g_assert_cmpint(item->meta->height_px, ==, height);
		g_assert_cmpstr(item->meta->make, ==, "Testmaker");
	}
}

/* --- PNG tests --- */

static void test_png_exif_forms(void)
{
	static const PngKind kinds[] = { PNG_EXIF, PNG_EXIF_HEADER, PNG_TEXT_PROFILE, PNG_ZTXT_PROFILE, PNG_ITXT_PROFILE };
	for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
		gsize iend;
		g_autoptr(GBytes) png = make_png(kinds[k], &iend);
		Run r;
		run_all_ways(&pix_container_png, png, &r);
		g_test_message("PNG kind %u: %s", kinds[k], r.summary);
		g_assert_null(r.problems);
		/* IHDR's size, not the EXIF's 4000x3000 claim */
		g_assert_cmpint(r.m->width_px, ==, 640);
		g_assert_cmpint(r.m->height_px, ==, 480);
		assert_default_exif(r.m);
		/* EXIF first; XMP fills what it lacks */
		g_assert_cmpstr(r.m->lens, ==, "XmpLens 50mm");
		run_clear(&r);
	}
}

static void test_png_without_exif(void)
{
	gsize iend;
	g_autoptr(GBytes) png = make_png(PNG_NO_EXIF, &iend);
	Run r;
	run_all_ways(&pix_container_png, png, &r);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, 640);
	g_assert_cmpstr(r.m->make, ==, "XmpMaker");
	g_assert_null(r.m->date_taken);
	run_clear(&r);

	/* a bare IHDR and IEND */
	Buf w = { g_byte_array_new(), TRUE };
	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_ihdr(&w, 1, 70000);
	png_chunk(&w, "IEND", NULL, 0);
	g_autoptr(GBytes) tiny = buf_free_to_bytes(&w);
	run_all_ways(&pix_container_png, tiny, &r);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, 1);
	g_assert_cmpint(r.m->height_px, ==, 70000);
	g_assert_null(r.m->make);
	run_clear(&r);
}

static void test_png_sniffed(void)
{
	gsize iend;
	g_autoptr(GBytes) png = make_png(PNG_ZTXT_PROFILE, &iend);
	assert_sniffed(png, "image/png", 640, 480);
}

static void test_png_truncated(void)
{
	gsize iend;
	g_autoptr(GBytes) png = make_png(PNG_EXIF, &iend);
	/* IEND's header is the end of what is read */
	assert_truncations(&pix_container_png, png, 0, iend + 8, "truncated PNG");

	/* a chunk running past the end is named */
	gsize len;
	const guint8 *d = g_bytes_get_data(png, &len);
	Run r;
	run_cuts(&pix_container_png, d, 100, NULL, 0, &r);
	assert_has(r.problems, "chunk 'tEXt' at offset 33 runs past the end of the file (100 bytes)");
	g_assert_cmpint(r.m->width_px, ==, 640);
	run_clear(&r);
}

/* A PNG of the signature, IHDR and then `rest` (raw bytes). */
static GBytes *png_with(const void *rest, gsize len)
{
	Buf w = { g_byte_array_new(), TRUE };
	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_ihdr(&w, 8, 8);
	put(&w, rest, len);
	return buf_free_to_bytes(&w);
}

static void assert_png_problem(GBytes *png, const char *what)
{
	Run r;
	run_all_ways(&pix_container_png, png, &r);
	assert_has(r.problems, what);
	run_clear(&r);
}

static void test_png_hostile(void)
{
	/* a length beyond PNG's limit, a type that is not letters */
	g_autoptr(GBytes) huge = png_with("\xff\xff\xff\xf0IDATxxxx", 12);
	assert_png_problem(huge, "corrupt PNG: chunk 'IDAT' at offset 33 claims 4294967280 bytes");
	g_autoptr(GBytes) type = png_with("\0\0\0\0ID\x01T\0\0\0\0", 12);
	assert_png_problem(type, "corrupt PNG: no chunk type at offset 33");
	/* a length past the end */
	g_autoptr(GBytes) past = png_with("\0\x10\0\0eXIfMM\0\x2a", 12);
	assert_png_problem(past, "truncated PNG: chunk 'eXIf' at offset 33 runs past the end");
	/* no IHDR first, IHDR of the wrong length, of size 0 */
	Buf w = { g_byte_array_new(), TRUE };
	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_chunk(&w, "tEXt", "a\0b", 3);
	png_chunk(&w, "IHDR", "\0\0\0\x01\0\0\0\x01\x08\0\0\0", 12);
	png_chunk(&w, "IEND", NULL, 0);
	g_autoptr(GBytes) order = buf_free_to_bytes(&w);
	assert_png_problem(order, "the first chunk is 'tEXt', not IHDR");
	w = (Buf){ g_byte_array_new(), TRUE };
	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_chunk(&w, "IHDR", "\0\0\0\x01\0\0\0\x01\x08\0\0\0", 12);
	png_chunk(&w, "IEND", NULL, 0);
	g_autoptr(GBytes) short_ihdr = buf_free_to_bytes(&w);
	assert_png_problem(short_ihdr, "IHDR at offset 8 has 12 bytes, not 13");
	w = (Buf){ g_byte_array_new(), TRUE };
	puts_(&w, "\x89PNG\r\n\x1a\n");
	png_ihdr(&w, 0, 5);
	png_chunk(&w, "IEND", NULL, 0);
	g_autoptr(GBytes) zero = buf_free_to_bytes(&w);
	assert_png_problem(zero, "gives a size of 0x5");

	/* a raw profile whose length is more than its digits, with a non-hex
	 * byte, without a length; a zTXt that is not zlib */
	static const struct {
		const char *type, *text, *what;
	} bad_text[] = {
		{ "tEXt", "\nexif\n  100\n4d4d002a", "a raw profile of 4 bytes where 100 were declared" },
		{ "tEXt", "\nexif\n  4\n4d4dz02a", "non-hex byte 0x7a" },
		{ "tEXt", "\nexif\n\n4d4d002a", "no length in the raw profile" },
		{ "tEXt", "\nexif\n  99999999999999\n4d4d", "a raw profile larger than 4 MiB" },
		{ "zTXt", "not zlib at all", "bad compressed data" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(bad_text); i++) {
		Buf t = { g_byte_array_new(), TRUE };
		put(&t, "Raw profile type exif", 22);
		if (strcmp(bad_text[i].type, "zTXt") == 0)
			put8(&t, 0);
		puts_(&t, bad_text[i].text);
		Buf c = { g_byte_array_new(), TRUE };
		png_chunk(&c, bad_text[i].type, t.b->data, t.b->len);
		png_chunk(&c, "IEND", NULL, 0);
		g_autoptr(GBytes) png = png_with(c.b->data, c.b->len);
		assert_png_problem(png, bad_text[i].what);
		g_byte_array_unref(t.b);
		g_byte_array_unref(c.b);
	}

	/* a zlib bomb: 5 MiB of hex digits that deflate to a few KiB */
	gsize bomb_len = 5u << 20;
	g_autofree char *digits = g_malloc(bomb_len);
	memcpy(digits, "\nexif\n  100\n", 12);
	memset(digits + 12, '0', bomb_len - 12);
	Buf c = { g_byte_array_new(), TRUE };
	png_text(&c, "zTXt", "Raw profile type exif", digits, bomb_len, TRUE);
	g_assert_cmpuint(c.b->len, <, 64 * 1024);
	png_chunk(&c, "IEND", NULL, 0);
	g_autoptr(GBytes) bomb = png_with(c.b->data, c.b->len);
	g_byte_array_unref(c.b);
	Run r;
	run_whole(&pix_container_png, bomb, &r);
	assert_has(r.problems, "inflates to more than 4 MiB");
	run_clear(&r);
}

/* More chunks than the walk follows: it stops quietly, the stream's own
 * limits untouched, and what lies beyond is not read. */
static void test_png_many_chunks(void)
{
	Buf c = { g_byte_array_new(), TRUE };
	for (guint i = 0; i < 70000; i++)
		png_chunk(&c, "IDAT", NULL, 0);
	g_autoptr(GBytes) tiff = default_tiff(TRUE);
	png_chunk(&c, "eXIf", g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff));
	png_chunk(&c, "IEND", NULL, 0);
	g_autoptr(GBytes) png = png_with(c.b->data, c.b->len);
	g_byte_array_unref(c.b);
	gsize len;
	const guint8 *d = g_bytes_get_data(png, &len);
	Run whole, pieces;
	run_whole(&pix_container_png, png, &whole);
	run_random(&pix_container_png, d, len, 200, &pieces);
	g_assert_cmpstr(whole.summary, ==, pieces.summary);
	g_assert_null(whole.problems);
	g_assert_cmpint(whole.m->width_px, ==, 8);
	g_assert_null(whole.m->make);
	run_clear(&whole);
	run_clear(&pieces);

	/* fewer: the EXIF after them is read */
	c = (Buf){ g_byte_array_new(), TRUE };
	for (guint i = 0; i < 5000; i++)
		png_chunk(&c, "IDAT", NULL, 0);
	png_chunk(&c, "eXIf", g_bytes_get_data(tiff, NULL), g_bytes_get_size(tiff));
	png_chunk(&c, "IEND", NULL, 0);
	g_autoptr(GBytes) fewer = png_with(c.b->data, c.b->len);
	g_byte_array_unref(c.b);
	run_whole(&pix_container_png, fewer, &whole);
	g_assert_null(whole.problems);
	assert_default_exif(whole.m);
	run_clear(&whole);
}

static void test_png_mutations(void)
{
	gsize iend;
	g_autoptr(GBytes) a = make_png(PNG_EXIF, &iend);
	g_autoptr(GBytes) b = make_png(PNG_ITXT_PROFILE, &iend);
	assert_mutations_harmless(&pix_container_png, a, 400);
	assert_mutations_harmless(&pix_container_png, b, 400);
}

/* --- WebP tests --- */

static void test_webp_forms(void)
{
	static const struct {
		WebpKind kind;
		gint64 w, h;
		gboolean has_exif, has_xmp;
	} cases[] = {
		{ WEBP_EXTENDED, 1000, 700, TRUE, TRUE },
		{ WEBP_LOSSY, 320, 240, FALSE, FALSE },
		{ WEBP_LOSSLESS, 123, 45, TRUE, FALSE },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GBytes) webp = make_webp(cases[i].kind);
		Run r;
		run_all_ways(&pix_container_riff, webp, &r);
		g_test_message("WebP %u: %s", i, r.summary);
		g_assert_null(r.problems);
		g_assert_cmpint(r.m->width_px, ==, cases[i].w);
		g_assert_cmpint(r.m->height_px, ==, cases[i].h);
		if (cases[i].has_exif)
			assert_default_exif(r.m);
		else
			g_assert_null(r.m->make);
		g_assert_cmpstr(r.m->lens, ==, cases[i].has_xmp ? "XmpLens 50mm" : NULL);
		g_assert_true(isnan(r.m->duration_s));
		run_clear(&r);
	}
	g_autoptr(GBytes) webp = make_webp(WEBP_EXTENDED);
	assert_sniffed(webp, "image/webp", 1000, 700);
}

static void test_webp_hostile(void)
{
	g_autoptr(GBytes) webp = make_webp(WEBP_EXTENDED);
	gsize len;
	const guint8 *d = g_bytes_get_data(webp, &len);
	assert_truncations(&pix_container_riff, webp, 12, len, "truncated WebP");

	/* a chunk that runs past the RIFF chunk (the file being longer) */
	g_autofree guint8 *copy = g_malloc(len + 100);
	memcpy(copy, d, len);
	memset(copy + len, 0, 100);
	copy[36] = 0x01;    /* the VP8 chunk's size, at 30 + 4: 65,550 */
	Run r;
	run_cuts(&pix_container_riff, copy, len + 100, NULL, 0, &r);
	assert_has(r.problems, "corrupt WebP: 'VP8 ' chunk at offset 30 runs");
	assert_has(r.problems, "past the end of RIFF 'WEBP'");
	run_clear(&r);

	/* a RIFF size of 0, of 0xffffffff; a VP8 frame that is no key frame */
	memcpy(copy, d, len);
	memset(copy + 4, 0, 4);
	run_cuts(&pix_container_riff, copy, len, NULL, 0, &r);
	assert_has(r.problems, "corrupt WebP: RIFF chunk at offset 0 has a size of 0");
	run_clear(&r);
	memset(copy + 4, 0xff, 4);
	run_cuts(&pix_container_riff, copy, len, NULL, 0, &r);
	assert_has(r.problems, "truncated WebP");
	g_assert_cmpint(r.m->width_px, ==, 1000);
	run_clear(&r);
	memcpy(copy, d, len);
	copy[38] |= 1;
	run_cuts(&pix_container_riff, copy, len, NULL, 0, &r);
	assert_has(r.problems, "does not start with a key frame");
	run_clear(&r);

	assert_mutations_harmless(&pix_container_riff, webp, 400);
	g_autoptr(GBytes) lossless = make_webp(WEBP_LOSSLESS);
	assert_mutations_harmless(&pix_container_riff, lossless, 300);
}

/* --- AVI tests --- */

static void test_avi(void)
{
	static const struct {
		guint32 frames, video_frames;
		const char *idit, *date;
		double duration_s;
	} cases[] = {
		/* avih and the stream agree: 250 x 40 ms */
		{ 250, 250, "Mon Mar 10 15:04:43 2003\n", "2003-03-10T15:04:43", 10.0 },
		/* avih counts 2.5 times the stream's frames: the stream's */
		{ 250, 100, "THU OCT 26 16:46:04 2006", "2006-10-26T16:46:04", 4.0 },
		/* a ratio outside 1.9-3.1: avih's */
		{ 250, 50, "2001/ 1/27  1:42PM", "2001-01-27T13:42:00", 10.0 },
		{ 0, 25, "2002-12-16  15:35:01", "2002-12-16T15:35:01", 0.0 },
		{ 25, 25, "2005/11/28/ 09:19", "2005-11-28T09:19:00", 1.0 },
		{ 25, 25, "Mon Foo 10 15:04:43 2003", NULL, 1.0 },
		{ 25, 25, NULL, NULL, 1.0 },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		gsize avix;
		g_autoptr(GBytes) avi = make_avi(cases[i].frames, cases[i].video_frames, cases[i].idit, i == 1, &avix);
		Run r;
		run_all_ways(&pix_container_riff, avi, &r);
		g_test_message("AVI %u: %s", i, r.summary);
		g_assert_null(r.problems);
		/* the video stream's frame size, not avih's 640x480 */
		g_assert_cmpint(r.m->width_px, ==, 720);
		g_assert_cmpint(r.m->height_px, ==, 576);
		g_assert_cmpfloat_with_epsilon(r.m->duration_s, cases[i].duration_s, 1e-9);
		g_assert_cmpstr(r.m->date_taken, ==, cases[i].date);
		g_assert_cmpstr(r.m->date_source, ==, cases[i].date != NULL ? "IDIT" : NULL);
		run_clear(&r);
	}
	gsize avix;
	g_autoptr(GBytes) avi = make_avi(250, 250, "Mon Mar 10 15:04:43 2003", FALSE, &avix);
	g_autoptr(PixItem) item = sniff(avi, 100);
	g_assert_cmpstr(item->mime, ==, "video/x-msvideo");
	g_assert_null(item->error);
	g_assert_cmpfloat_with_epsilon(item->meta->duration_s, 10.0, 1e-9);
	g_assert_cmpstr(item->meta->date_taken, ==, "2003-03-10T15:04:43");
}

/* An AVI whose hdrl holds `depth` nested hdrl lists, the innermost with
 * avih. */
static GBytes *make_nested_avi(guint depth)
{
	Buf w = { g_byte_array_new(), FALSE };
	gsize riff = riff_open(&w, "RIFF", "AVI ");
	gsize lists[32];
	for (guint i = 0; i < depth; i++)
		lists[i] = riff_open(&w, "LIST", "hdrl");
	Buf a = { g_byte_array_new(), FALSE };
	const guint32 avih[10] = { 40000, 0, 0, 0, 50, 0, 1, 0, 320, 200 };
	for (guint i = 0; i < G_N_ELEMENTS(avih); i++)
		put32(&a, avih[i]);
	riff_chunk(&w, "avih", a.b->data, a.b->len);
	g_byte_array_unref(a.b);
	for (guint i = depth; i > 0; i--)
		riff_close(&w, lists[i - 1]);
	riff_close(&w, riff);
	return buf_free_to_bytes(&w);
}

static void test_avi_hostile(void)
{
	gsize avix;
	g_autoptr(GBytes) avi = make_avi(250, 250, "Mon Mar 10 15:04:43 2003", FALSE, &avix);
	gsize len = g_bytes_get_size(avi);
	/* a cut at the first RIFF's end leaves a whole AVI; one leaving under 8
	 * bytes of the AVIX header may be trailing junk */
	assert_truncations(&pix_container_riff, avi, 12, avix, "truncated AVI");
	assert_truncations(&pix_container_riff, avi, avix + 8, len, "truncated AVI");

	/* lists nested 7 deep are read, 8 deep are not */
	g_autoptr(GBytes) ok = make_nested_avi(7);
	Run r;
	run_all_ways(&pix_container_riff, ok, &r);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, 320);
	g_assert_cmpfloat_with_epsilon(r.m->duration_s, 2.0, 1e-9);
	run_clear(&r);
	g_autoptr(GBytes) deep = make_nested_avi(20);
	run_all_ways(&pix_container_riff, deep, &r);
	assert_has(r.problems, "corrupt AVI: lists nested deeper than 8");
	g_assert_cmpint(r.m->width_px, ==, -1);
	run_clear(&r);

	/* avih running past its list; a LIST of size 2; avih too short */
	g_autoptr(GBytes) nested = make_nested_avi(1);
	gsize nlen;
	const guint8 *nd = g_bytes_get_data(nested, &nlen);
	g_autofree guint8 *copy = g_malloc(nlen);
	memcpy(copy, nd, nlen);
	copy[28] = 0x30;    /* avih's size, at 24 + 4: 48, past hdrl's end */
	run_cuts(&pix_container_riff, copy, nlen, NULL, 0, &r);
	assert_has(r.problems, "corrupt AVI: 'avih' chunk at offset 24 runs 8 bytes past the end of LIST 'hdrl'");
	run_clear(&r);
	memcpy(copy, nd, nlen);
	copy[16] = 2;       /* hdrl's size */
	copy[17] = 0;
	run_cuts(&pix_container_riff, copy, nlen, NULL, 0, &r);
	assert_has(r.problems, "corrupt AVI: LIST chunk at offset 12 has a size of 2");
	run_clear(&r);
	memcpy(copy, nd, nlen);
	copy[28] = 8;       /* avih of 8 bytes */
	run_cuts(&pix_container_riff, copy, nlen, NULL, 0, &r);
	assert_has(r.problems, "'avih' chunk at offset 24 has 8 bytes, fewer than 40");
	run_clear(&r);

	assert_mutations_harmless(&pix_container_riff, avi, 400);
}

/* An AVI whose hdrl holds `n` empty JUNK chunks and then avih (320x200). */
static GBytes *make_junk_avi(guint n)
{
	Buf w = { g_byte_array_new(), FALSE };
	gsize riff = riff_open(&w, "RIFF", "AVI ");
	gsize hdrl = riff_open(&w, "LIST", "hdrl");
	for (guint i = 0; i < n; i++)
		riff_chunk(&w, "JUNK", NULL, 0);
	Buf a = { g_byte_array_new(), FALSE };
	const guint32 avih[10] = { 40000, 0, 0, 0, 50, 0, 1, 0, 320, 200 };
	for (guint i = 0; i < G_N_ELEMENTS(avih); i++)
		put32(&a, avih[i]);
	riff_chunk(&w, "avih", a.b->data, a.b->len);
	g_byte_array_unref(a.b);
	riff_close(&w, hdrl);
	riff_close(&w, riff);
	return buf_free_to_bytes(&w);
}

/* A walk through more chunks than it follows ends quietly, within the
 * stream's limits, without reading what lies beyond; fewer are walked
 * through. */
static void test_riff_many_chunks(void)
{
	g_autoptr(GBytes) many = make_junk_avi(150000);
	Run r;
	run_whole(&pix_container_riff, many, &r);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, -1);
	run_clear(&r);
	g_autoptr(GBytes) fewer = make_junk_avi(10000);
	run_whole(&pix_container_riff, fewer, &r);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, 320);
	run_clear(&r);
}

/* --- RAF and MRW tests --- */

static void test_raf(void)
{
	g_autoptr(GBytes) raf = make_raf();
	Run r;
	run_all_ways(&pix_container_raf, raf, &r);
	g_test_message("RAF: %s", r.summary);
	g_assert_null(r.problems);
	/* the preview's size, as exiftool's ImageWidth */
	g_assert_cmpint(r.m->width_px, ==, 160);
	g_assert_cmpint(r.m->height_px, ==, 120);
	assert_default_exif(r.m);
	run_clear(&r);
	assert_sniffed(raf, "image/x-fujifilm-raf", 160, 120);

	/* a cut anywhere before the raw data's end is a truncation */
	gsize len;
	const guint8 *d = g_bytes_get_data(raf, &len);
	assert_truncations(&pix_container_raf, raf, 0, len, "truncated RAF");
	run_cuts(&pix_container_raf, d, 200, NULL, 0, &r);
	assert_has(r.problems, "truncated RAF: the preview at offset 148");
	g_assert_null(strstr(r.problems, "corrupt"));   /* the cut preview is said once */
	run_clear(&r);
	run_cuts(&pix_container_raf, d, len - 1, NULL, 0, &r);
	assert_has(r.problems, "truncated RAF: the raw data at offset");
	g_assert_cmpint(r.m->width_px, ==, 160);
	run_clear(&r);

	/* the preview's offset inside the header; its length huge; a broken
	 * preview */
	g_autofree guint8 *copy = g_memdup2(d, len);
	memset(copy + 84, 0, 4);
	copy[87] = 20;
	run_cuts(&pix_container_raf, copy, len, NULL, 0, &r);
	assert_has(r.problems, "corrupt RAF: the preview's offset 20 lies inside the header");
	run_clear(&r);
	memcpy(copy, d, len);
	memset(copy + 88, 0xff, 4);
	run_cuts(&pix_container_raf, copy, len, NULL, 0, &r);
	assert_has(r.problems, "truncated RAF: the preview at offset 148 (4294967295 bytes)");
	g_assert_cmpstr(r.m->make, ==, "Testmaker");
	run_clear(&r);
	memcpy(copy, d, len);
	copy[149] = 0x00;   /* SOI's 0xd8 */
	run_cuts(&pix_container_raf, copy, len, NULL, 0, &r);
	assert_has(r.problems, "corrupt RAF: the preview at offset 148: corrupt JPEG");
	run_clear(&r);

	assert_mutations_harmless(&pix_container_raf, raf, 500);
}

static void test_mrw(void)
{
	gsize data_at;
	g_autoptr(GBytes) mrw = make_mrw(&data_at);
	Run r;
	run_all_ways(&pix_container_mrw, mrw, &r);
	g_test_message("MRW: %s", r.summary);
	g_assert_null(r.problems);
	g_assert_cmpint(r.m->width_px, ==, 3264);
	g_assert_cmpint(r.m->height_px, ==, 2448);
	assert_default_exif(r.m);
	run_clear(&r);
	assert_sniffed(mrw, "image/x-minolta-mrw", 3264, 2448);

	/* cut before the raw data: truncated; within it, nothing says so */
	assert_truncations(&pix_container_mrw, mrw, 8, data_at, "truncated MRW");
	gsize len;
	const guint8 *d = g_bytes_get_data(mrw, &len);
	run_cuts(&pix_container_mrw, d, data_at + 10, NULL, 0, &r);
	g_assert_null(r.problems);
	run_clear(&r);

	/* a block past the raw data's start; PRD too short, of size 0 */
	g_autofree guint8 *copy = g_memdup2(d, len);
	copy[14] = 0x40;    /* PRD's length */
	run_cuts(&pix_container_mrw, copy, len, NULL, 0, &r);
	assert_has(r.problems, "corrupt MRW: block 'PRD' at offset 8 runs past the raw data's start");
	run_clear(&r);
	memcpy(copy, d, len);
	copy[15] = 8;
	run_cuts(&pix_container_mrw, copy, len, NULL, 0, &r);
	assert_has(r.problems, "corrupt MRW: PRD block at offset 8 has 8 bytes");
	run_clear(&r);
	memcpy(copy, d, len);
	memset(copy + 28, 0, 4);
	run_cuts(&pix_container_mrw, copy, len, NULL, 0, &r);
	assert_has(r.problems, "PRD block gives a size of 0x0");
	run_clear(&r);

	/* many empty blocks: the walk stops after MAX_BLOCKS, quietly */
	Buf w = { g_byte_array_new(), TRUE };
	put(&w, "\0MRM", 4);
	put32(&w, 0);
	for (int i = 0; i < 1000; i++) {
		put(&w, "\0PAD", 4);
		put32(&w, 0);
	}
	set32(&w, 4, w.b->len - 8);
	g_autoptr(GBytes) pads = buf_free_to_bytes(&w);
	run_whole(&pix_container_mrw, pads, &r);
	g_assert_null(r.problems);
	run_clear(&r);

	assert_mutations_harmless(&pix_container_mrw, mrw, 500);
}

/* --- CRW and X3F tests --- */

static guint32 get32le(const guint8 *p)
{
	return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

/* A copy of `b` with the 32-bit word at `at` set (`is_big` order). */
static GBytes *patched32(GBytes *b, gsize at, gboolean is_big, guint32 v)
{
	Buf w = { g_byte_array_new(), is_big };
	put(&w, g_bytes_get_data(b, NULL), g_bytes_get_size(b));
	set32(&w, at, v);
	return buf_free_to_bytes(&w);
}

static void assert_problem(const PixContainer *c, GBytes *b, const char *what)
{
	Run r;
	run_whole(c, b, &r);
	g_test_message("%s: %s", c->name, r.summary);
	assert_has(r.problems, what);
	run_clear(&r);
}

static void assert_crw_fields(const PixMeta *m, gint64 iso)
{
	g_assert_cmpstr(m->make, ==, "Canon");
	g_assert_cmpstr(m->model, ==, "Canon EOS Test");
	g_assert_cmpstr(m->date_taken, ==, "2003-11-10T17:39:26");
	g_assert_cmpstr(m->date_source, ==, "CRW TimeStamp");
	g_assert_null(m->date_tz);
	g_assert_cmpint(m->width_px, ==, 3072);
	g_assert_cmpint(m->height_px, ==, 2048);
	g_assert_cmpint(m->iso, ==, iso);
}

static void test_crw(void)
{
	/* CameraISO when it is a number (a code, or 0x4000 and the value),
	 * else BaseISO x AutoISO: 100 x 1.414 */
	static const struct {
		guint16 camera_iso;
		gint64 iso;
	} isos[] = { { 0, 141 }, { 18, 200 }, { 0x4000 | 250, 250 }, { 0x7fff, 141 }, { 15, 141 }, { 0x4000, 141 } };
	for (guint i = 0; i < G_N_ELEMENTS(isos); i++) {
		for (int is_big = 0; is_big < 2; is_big++) {
			g_autoptr(GBytes) crw = make_crw(is_big, isos[i].camera_iso, 40);
			Run r;
			run_all_ways(&pix_container_crw, crw, &r);
			g_test_message("CRW %u/%d: %s", i, is_big, r.summary);
			g_assert_null(r.problems);
			assert_crw_fields(r.m, isos[i].iso);
			run_clear(&r);
		}
	}

	/* recognised by content */
	g_autoptr(GBytes) crw = make_crw(FALSE, 0, 40);
	static const gsize chunks[] = { 1, 7, 64, 65, 4096 };
	for (guint i = 0; i < G_N_ELEMENTS(chunks); i++) {
		g_autoptr(PixItem) item = sniff(crw, chunks[i]);
		g_assert_cmpstr(item->mime, ==, "image/x-canon-crw");
		g_assert_null(item->error);
		assert_crw_fields(item->meta, 141);
	}

	/* a file of 4 MiB: its end is kept, its middle is not */
	g_autoptr(GBytes) big = make_crw(FALSE, 0, 2u << 20);
	Run r;
	run_whole(&pix_container_crw, big, &r);
	g_assert_null(r.problems);
	assert_crw_fields(r.m, 141);
	run_clear(&r);
	for (int i = 0; i < 3; i++) {
		gsize len;
		const guint8 *d = g_bytes_get_data(big, &len);
		run_random(&pix_container_crw, d, len, 12, &r);
		g_assert_null(r.problems);
		assert_crw_fields(r.m, 141);
		run_clear(&r);
	}
	g_autoptr(GBytes) pad = pattern(2u << 20);
	g_autoptr(GBytes) b_make = g_bytes_new("Canon\0Canon EOS Test", 20);
	const Rec camera[] = { { 0x080a, b_make } };
	g_autoptr(GBytes) b_camera = crw_heap(FALSE, camera, 1);
	const Rec middle[] = { { 0x2005, pad }, { 0x2807, b_camera }, { 0x2007, pad } };
	g_autoptr(GBytes) unkept = crw_file(FALSE, middle, G_N_ELEMENTS(middle));
	run_whole(&pix_container_crw, unkept, &r);
	g_assert_null(r.problems);
	g_assert_null(r.m->make);
	run_clear(&r);
}

static void test_crw_hostile(void)
{
	g_autoptr(GBytes) crw = make_crw(FALSE, 0, 40);
	gsize len;
	const guint8 *d = g_bytes_get_data(crw, &len);

	/* a cut in the header is a truncation; elsewhere the root's directory
	 * pointer is what the cut left: damage is seen but for the rare cut
	 * that leaves a plausible one (a CRW does not say its length) */
	assert_truncations(&pix_container_crw, crw, 2, 14, "truncated CRW");
	guint silent = 0;
	for (gsize k = 14; k < len; k++) {
		Run r;
		run_cuts(&pix_container_crw, d, k, NULL, 0, &r);
		if (r.problems == NULL) {
			g_test_message("CRW cut at %" G_GSIZE_FORMAT ": %s", k, r.summary);
			silent++;
		} else {
			assert_has(r.problems, "CRW");
		}
		run_clear(&r);
	}
	g_assert_cmpuint(silent, <=, (len - 14) / 100);

	/* the root's directory past its end (26 + its offset past 4 GiB too);
	 * a header length past the end, inside the header */
	g_autoptr(GBytes) past = patched32(crw, len - 4, FALSE, 0x7ffffff0);
	assert_problem(&pix_container_crw, past, "corrupt CRW: the heap at offset 26 (");
	g_autoptr(GBytes) wrap = patched32(crw, len - 4, FALSE, 0xfffffffe);
	assert_problem(&pix_container_crw, wrap, "has its directory outside it, at offset 4294967320");
	g_autoptr(GBytes) header = patched32(crw, 2, FALSE, 1u << 30);
	assert_problem(&pix_container_crw, header, "truncated CRW: the file ends at byte");
	g_autoptr(GBytes) header2 = patched32(crw, 2, FALSE, 6);
	assert_problem(&pix_container_crw, header2, "corrupt CRW: a header length of 6");

	/* a record's data past its heap's end; a record count past it */
	guint32 root_dir = get32le(d + len - 4) + 26;
	g_autoptr(GBytes) data_past = patched32(crw, root_dir + 2 + 20 + 6, FALSE, 0x10000000);
	assert_problem(&pix_container_crw, data_past, "corrupt CRW: record 0x300a at offset");
	g_autoptr(GBytes) count = patched32(crw, root_dir, FALSE, 0xffff);
	assert_problem(&pix_container_crw, count, "holds 65535 records, more than its heap has room for");
	/* a bad tag stops its directory */
	g_autoptr(GBytes) bad = patched32(crw, root_dir + 2 + 20, FALSE, 0x800a | (6u << 16));
	assert_problem(&pix_container_crw, bad, "has a bad tag 0x800a");
	/* ImageInfo without its height */
	g_autoptr(GBytes) four = words32(FALSE, (const guint32[]){ 640 }, 1);
	const Rec shorty[] = { { 0x1810, four } };
	g_autoptr(GBytes) short_info = crw_file(FALSE, shorty, 1);
	assert_problem(&pix_container_crw, short_info, "corrupt CRW: record 0x1810 has 4 bytes at offset 26, fewer than 8");

	/* a heap that is its own record (the parent of its records), the root
	 * too; two heaps sharing a directory */
	g_autoptr(GBytes) info = words32(FALSE, (const guint32[]){ 640, 480 }, 2);
	const Rec self[] = { { 0x1810, info }, { 0x300a, info } };
	g_autoptr(GBytes) heap = crw_heap(FALSE, self, 2);
	gsize hlen;
	const guint8 *hd = g_bytes_get_data(heap, &hlen);
	gsize second = get32le(hd + hlen - 4) + 2 + 10;     /* its second record */
	g_autoptr(GBytes) looped = patched32(heap, second + 2, FALSE, (guint32)hlen);
	g_autoptr(GBytes) looped2 = patched32(looped, second + 6, FALSE, 0);
	const Rec root[] = { { 0x300a, looped2 } };
	g_autoptr(GBytes) loop = crw_file(FALSE, root, 1);
	Run r;
	run_all_ways(&pix_container_crw, loop, &r);
	assert_has(r.problems,
	           "corrupt CRW: record 0x300a at offset 54 points outside its heap's data (42 bytes at 0 of 16)");
	g_assert_cmpint(r.m->width_px, ==, 640);
	run_clear(&r);
	g_autoptr(GBytes) selfroot = crw_file(FALSE, self, 2);
	gsize slen;
	const guint8 *sd = g_bytes_get_data(selfroot, &slen);
	second = 26 + get32le(sd + slen - 4) + 2 + 10;
	g_autoptr(GBytes) s1 = patched32(selfroot, second + 2, FALSE, (guint32)(slen - 26));
	g_autoptr(GBytes) s2 = patched32(s1, second + 6, FALSE, 0);
	assert_problem(&pix_container_crw, s2, "points outside its heap's data");
	const Rec twins[] = { { 0x300a, looped2 }, { 0x300b, looped2 } };
	g_autoptr(GBytes) shared = crw_file(FALSE, twins, 2);
	const guint8 *td = g_bytes_get_data(shared, &slen);
	g_autoptr(GBytes) s3 = patched32(shared, 26 + get32le(td + slen - 4) + 2 + 10 + 6, FALSE, 0);
	assert_problem(&pix_container_crw, s3, "corrupt CRW: the heap at offset 26 has the directory at offset 42 that"
	               " another heap has");

	/* heaps nested 8 deep (the root's, 0x300a's and 6 between them and
	 * the innermost) are read, deeper not */
	for (guint depth = 6; depth <= 7; depth++) {
		g_autoptr(GBytes) make = g_bytes_new("Canon\0Deep", 10);
		const Rec inner[] = { { 0x080a, make } };
		GBytes *h = crw_heap(FALSE, inner, 1);
		for (guint i = 0; i < depth; i++) {
			const Rec outer[] = { { 0x2807, h } };
			GBytes *next = crw_heap(FALSE, outer, 1);
			g_bytes_unref(h);
			h = next;
		}
		const Rec top[] = { { 0x300a, h } };
		g_autoptr(GBytes) nested = crw_file(FALSE, top, 1);
		g_bytes_unref(h);
		run_all_ways(&pix_container_crw, nested, &r);
		if (depth == 6) {
			g_assert_null(r.problems);
			g_assert_cmpstr(r.m->model, ==, "Deep");
		} else {
			assert_has(r.problems, "corrupt CRW: heaps nested deeper than 8");
			g_assert_null(r.m->make);
		}
		run_clear(&r);
	}

	/* many records, many heaps: the walk stops at its limits */
	g_autoptr(GBytes) eight = g_bytes_new("\0\0\0\0\0\0\0\0", 8);
	g_autofree Rec *many = g_new(Rec, 5000);
	for (guint i = 0; i < 5000; i++)
		many[i] = (Rec){ 0x5817, eight };
	g_autoptr(GBytes) flood = crw_file(FALSE, many, 5000);
	assert_problem(&pix_container_crw, flood, "corrupt CRW: more than 4096 records");
	/* (each record has a copy of the empty heap of its own) */
	g_autoptr(GBytes) empty = crw_heap(FALSE, NULL, 0);
	for (guint i = 0; i < 300; i++)
		many[i] = (Rec){ 0x300a, empty };
	g_autoptr(GBytes) heaps = crw_file(FALSE, many, 300);
	assert_problem(&pix_container_crw, heaps, "corrupt CRW: more than 256 heaps");

	assert_mutations_harmless(&pix_container_crw, crw, 500);
}

static void assert_x3f_fields(const PixMeta *m)
{
	g_assert_cmpstr(m->make, ==, "Testmaker");
	g_assert_cmpstr(m->model, ==, "SD T\xc3\xa9st");
	g_assert_cmpstr(m->date_taken, ==, "2001-01-01T00:36:35");
	g_assert_cmpstr(m->date_source, ==, "X3F TIME");
	g_assert_cmpint(m->iso, ==, 200);
}

static void test_x3f(void)
{
	for (int is_v4 = 0; is_v4 < 2; is_v4++) {
		g_autoptr(GBytes) x3f = make_x3f(is_v4, 100);
		Run r;
		run_all_ways(&pix_container_x3f, x3f, &r);
		g_test_message("X3F %d: %s", is_v4, r.summary);
		g_assert_null(r.problems);
		assert_x3f_fields(r.m);
		g_assert_cmpint(r.m->width_px, ==, is_v4 ? 5424 : 2268);
		g_assert_cmpint(r.m->height_px, ==, is_v4 ? 3616 : 1512);
		run_clear(&r);
		assert_sniffed(x3f, "image/x-sigma-x3f", is_v4 ? 5424 : 2268, is_v4 ? 3616 : 1512);
	}

	/* 4 MiB: the PROP section after the raw data is kept, before it not */
	g_autoptr(GBytes) big = make_x3f(FALSE, 2u << 20);
	Run r;
	run_whole(&pix_container_x3f, big, &r);
	g_assert_null(r.problems);
	assert_x3f_fields(r.m);
	run_clear(&r);
	g_autoptr(GBytes) prop = x3f_prop(x3f_props, G_N_ELEMENTS(x3f_props) / 2);
	g_autoptr(GBytes) first = make_x3f_with(FALSE, prop, TRUE, 2u << 20);
	run_whole(&pix_container_x3f, first, &r);
	g_assert_null(r.problems);
	g_assert_null(r.m->make);
	g_assert_cmpint(r.m->width_px, ==, 2268);
	run_clear(&r);
	/* in a small file it is */
	g_autoptr(GBytes) small_first = make_x3f_with(FALSE, prop, TRUE, 100);
	run_all_ways(&pix_container_x3f, small_first, &r);
	g_assert_null(r.problems);
	assert_x3f_fields(r.m);
	run_clear(&r);

	/* TIME 0, not a number; ISO "Auto": no date, no ISO */
	static const char *const odd[] = { "TIME", "0", "ISO", "Auto", "CAMMANUF", "", "CAMMODEL", "  M  " };
	g_autoptr(GBytes) odd_prop = x3f_prop(odd, G_N_ELEMENTS(odd) / 2);
	g_autoptr(GBytes) odd_x3f = make_x3f_with(FALSE, odd_prop, FALSE, 10);
	run_whole(&pix_container_x3f, odd_x3f, &r);
	g_assert_null(r.problems);
	g_assert_null(r.m->date_taken);
	g_assert_cmpint(r.m->iso, ==, -1);
	g_assert_null(r.m->make);
	g_assert_cmpstr(r.m->model, ==, "M");
	run_clear(&r);
}

static void test_x3f_hostile(void)
{
	g_autoptr(GBytes) x3f = make_x3f(FALSE, 100);
	gsize len;
	const guint8 *d = g_bytes_get_data(x3f, &len);
	guint32 dir = get32le(d + len - 4);

	assert_truncations(&pix_container_x3f, x3f, 4, 40, "truncated X3F");
	assert_truncations(&pix_container_x3f, x3f, 40, len, "X3F");

	/* the directory past the end, not a directory; a section past the end;
	 * a huge section count */
	g_autoptr(GBytes) past = patched32(x3f, len - 4, FALSE, 0xfffffff0);
	assert_problem(&pix_container_x3f, past, "corrupt X3F: the directory's offset 4294967280");
	g_autoptr(GBytes) notdir = patched32(x3f, len - 4, FALSE, 8);
	assert_problem(&pix_container_x3f, notdir, "corrupt X3F: no directory ('SECd') at offset 8");
	g_autoptr(GBytes) sec = patched32(x3f, dir + 12 + 12 + 4, FALSE, 0x7fffffff);
	assert_problem(&pix_container_x3f, sec, "corrupt X3F: section 'PROP' at offset");
	g_autoptr(GBytes) count = patched32(x3f, dir + 8, FALSE, 0xffffffff);
	assert_problem(&pix_container_x3f, count, "holds 4294967295 sections, past the end");

	/* PROP: a huge count, characters not of format 0, a pointer past
	 * them, no header */
	guint32 prop_at = get32le(d + dir + 12 + 12);
	g_autoptr(GBytes) n = patched32(x3f, prop_at + 8, FALSE, 0x20000000);
	assert_problem(&pix_container_x3f, n, "announces 536870912 properties");
	g_autoptr(GBytes) format = patched32(x3f, prop_at + 12, FALSE, 1);
	assert_problem(&pix_container_x3f, format, "has characters of format 1 (not read)");
	g_autoptr(GBytes) ptr = patched32(x3f, prop_at + 24 + 8 * 2 + 4, FALSE, 100000);
	assert_problem(&pix_container_x3f, ptr, "corrupt X3F: property 2 of the PROP section at offset");
	g_autoptr(GBytes) secp = patched32(x3f, prop_at, FALSE, 0);
	assert_problem(&pix_container_x3f, secp, "has no 'SECp' header");

	/* more properties and sections than are read */
	const char **pairs = g_new(const char *, 2 * 2000);
	for (guint i = 0; i < 2000; i++) {
		pairs[2 * i] = "X";
		pairs[2 * i + 1] = "Y";
	}
	g_autoptr(GBytes) many = x3f_prop(pairs, 2000);
	g_free(pairs);
	g_autoptr(GBytes) flood = make_x3f_with(FALSE, many, FALSE, 10);
	assert_problem(&pix_container_x3f, flood, "holds 2000 properties, more than 1024");
	Buf w = { g_byte_array_new(), FALSE };
	put(&w, d, dir);
	puts_(&w, "SECd");
	put32(&w, 0);
	put32(&w, 100);
	for (guint i = 0; i < 100; i++) {
		put32(&w, prop_at);
		put32(&w, get32le(d + dir + 12 + 12 + 4));
		puts_(&w, "PROP");
	}
	put32(&w, dir);
	g_autoptr(GBytes) sections = buf_free_to_bytes(&w);
	Run r;
	run_whole(&pix_container_x3f, sections, &r);
	assert_has(r.problems, "holds 100 sections, more than 64");
	assert_x3f_fields(r.m);
	run_clear(&r);

	assert_mutations_harmless(&pix_container_x3f, x3f, 500);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/containers/png/exif-forms", test_png_exif_forms);
	g_test_add_func("/containers/png/without-exif", test_png_without_exif);
	g_test_add_func("/containers/png/sniffed", test_png_sniffed);
	g_test_add_func("/containers/png/truncated", test_png_truncated);
	g_test_add_func("/containers/png/hostile", test_png_hostile);
	g_test_add_func("/containers/png/many-chunks", test_png_many_chunks);
	g_test_add_func("/containers/png/mutations", test_png_mutations);
	g_test_add_func("/containers/webp/forms", test_webp_forms);
	g_test_add_func("/containers/webp/hostile", test_webp_hostile);
	g_test_add_func("/containers/avi/read", test_avi);
	g_test_add_func("/containers/avi/hostile", test_avi_hostile);
	g_test_add_func("/containers/riff/many-chunks", test_riff_many_chunks);
	g_test_add_func("/containers/raf", test_raf);
	g_test_add_func("/containers/mrw", test_mrw);
	g_test_add_func("/containers/crw", test_crw);
	g_test_add_func("/containers/crw/hostile", test_crw_hostile);
	g_test_add_func("/containers/x3f", test_x3f);
	g_test_add_func("/containers/x3f/hostile", test_x3f_hostile);
	return g_test_run();
}
