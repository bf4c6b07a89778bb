/*
 * meta-jpeg.c: a JPEG's marker structure, parsed as a stream (see meta.h).
 *
 * Reads the bytes it is fed; keeps the first EXIF APP1 payload and the
 * first XMP APP1 packet (each at most 65,533 bytes, a segment's limit),
 * the parts of an ExtendedXMP (APP1 segments of their own, put together
 * by meta-xmpext.c), the Photoshop resources of the APP13 segments (which
 * hold the IPTC-IIM; at most MAX_IRB bytes in all), the first SOFn's
 * dimensions, whether the stream reached its end-of-image marker, and
 * where the MPF index of the primary image's APP2 segment (CIPA DC-007)
 * places its "large thumbnails" (previews, after the primary image's EOI,
 * for the thumbnail maker).  Runs on a hash thread.
 *
 * A JPEG is a sequence of marker segments; after SOS comes entropy-coded
 * data in which 0xFF is always followed by 0x00 (stuffing) or a restart
 * marker, so the next real marker is the first 0xFF followed by anything
 * else.  skip_entropy() looks for it 16 bytes at a time, so scanning the
 * image data costs little next to hashing it.  A file that ends before EOI is truncated;
 * bytes after EOI (phone "motion photo" videos, maker trailers) are fine.
 *
 * Invariants:
 *  1. The parser never reads outside the buffer it is fed and never keeps
 *     more than MAX_CAPTURE bytes per segment it captures (the one being
 *     read, the EXIF payload, the XMP packet), MAX_IRB bytes of APP13
 *     resources, and what meta-xmpext.c bounds of ExtendedXMP, whatever
 *     segment lengths the file claims.
 *  2. Once in J_DONE or J_FAILED, further input is ignored.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"
#include "log.h"

#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define MAX_CAPTURE 65533   /* the largest segment body a 16-bit length allows */
/* what opens an APP1 segment holding the (main) XMP packet */
#define XMP_HEADER "http://ns.adobe.com/xap/1.0/"
#define XMP_HEADER_LEN sizeof(XMP_HEADER)   /* with its NUL */
/* what opens an APP1 segment holding a part of an ExtendedXMP */
#define XMP_EXT_HEADER "http://ns.adobe.com/xmp/extension/"
#define XMP_EXT_HEADER_LEN sizeof(XMP_EXT_HEADER)
/* what opens an APP13 segment of Photoshop resources (IPTC-IIM inside) */
#define IRB_HEADER "Photoshop 3.0"
#define IRB_HEADER_LEN sizeof(IRB_HEADER)
#define MAX_IRB (1u << 20)
#define MAX_EXTRANEOUS (1 << 20) /* junk bytes between segments before giving up */

typedef enum {
	J_SOI0,          /* expecting 0xFF of SOI */
	J_SOI1,          /* expecting 0xD8 of SOI */
	J_MARKER_FF,     /* expecting the 0xFF that starts a marker */
	J_MARKER_CODE,   /* expecting the marker code (0xFF fill bytes allowed) */
	J_LEN_HI,
	J_LEN_LO,
	J_BODY,          /* inside a segment body */
	J_ENTROPY,       /* inside entropy-coded data, looking for 0xFF */
	J_ENTROPY_FF,    /* entropy data: the byte after 0xFF */
	J_DONE,          /* EOI seen */
	J_FAILED,        /* structure broken, error set */
} JState;

typedef enum {
	CAPTURE_NONE,
	CAPTURE_APP1,
	CAPTURE_APP13,
	CAPTURE_SOF,
	CAPTURE_APP2,
} Capture;

struct PixJpegParser {
	JState state;
	guint8 marker;          /* the marker of the current segment */
	guint32 seg_len;        /* the current segment's length field */
	guint32 seg_left;       /* body bytes still to come */
	Capture capture;
	guint8 *buf;            /* captured body bytes (owned) */
	gsize buf_len;
	gsize buf_cap;
	gint64 offset;          /* bytes consumed so far */
	gint64 extraneous;      /* junk bytes where a marker was due */
	gboolean has_sos;
	gint64 width_px;
	gint64 height_px;
	GBytes *exif;
	GBytes *xmp;            /* the packet, without XMP_HEADER */
	PixXmpExt *xmp_ext;     /* ExtendedXMP parts, or NULL */
	GByteArray *irb;        /* APP13 resources, without IRB_HEADER, or NULL */
	char *error;
	gint64 body_off;        /* the file offset of the current segment's body */
	gboolean has_mpf;       /* an MPF segment was read */
	PixPreview previews[PIX_META_MAX_PREVIEWS];
	guint n_previews;
};

PixJpegParser *pix_jpeg_parser_new(void)
{
	PixJpegParser *p = g_new0(PixJpegParser, 1);
	p->width_px = -1;
	p->height_px = -1;
	return p;
}

void pix_jpeg_parser_free(PixJpegParser *p)
{
	if (p == NULL)
		return;
	g_free(p->buf);
	if (p->exif != NULL)
		g_bytes_unref(p->exif);
	if (p->xmp != NULL)
		g_bytes_unref(p->xmp);
	pix_xmp_ext_free(p->xmp_ext);
	if (p->irb != NULL)
		g_byte_array_unref(p->irb);
	g_free(p->error);
	g_free(p);
}

void pix_jpeg_info_clear(PixJpegInfo *info)
{
	if (info->exif != NULL)
		g_bytes_unref(info->exif);
	if (info->xmp != NULL)
		g_bytes_unref(info->xmp);
	pix_xmp_ext_free(info->xmp_ext);
	if (info->irb != NULL)
		g_bytes_unref(info->irb);
	g_free(info->error);
	memset(info, 0, sizeof *info);
}

static void fail(PixJpegParser *p, gint64 at, const char *what)
{
	p->error = g_strdup_printf("corrupt JPEG: %s at byte %" G_GINT64_FORMAT, what, at);
	p->state = J_FAILED;
}

static gboolean is_sof(guint8 m)
{
	return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* A marker code was read (its 0xFF before it). */
static void on_marker(PixJpegParser *p, guint8 m)
{
	p->marker = m;
	if (m == 0xD9) {                        /* EOI */
		p->state = J_DONE;
	} else if ((m >= 0xD0 && m <= 0xD7) || m == 0x01 || m == 0xD8) {
		p->state = J_MARKER_FF;         /* standalone markers: no length */
	} else {
		p->state = J_LEN_HI;
	}
}

static void start_body(PixJpegParser *p)
{
	p->capture = CAPTURE_NONE;
	p->buf_len = 0;
	if (p->marker == 0xE1)
		p->capture = CAPTURE_APP1;
	else if (p->marker == 0xED && (p->irb == NULL || p->irb->len < MAX_IRB))
		p->capture = CAPTURE_APP13;
	else if (is_sof(p->marker) && p->width_px < 0)
		p->capture = CAPTURE_SOF;
	else if (p->marker == 0xE2 && !p->has_mpf && !p->has_sos)
		p->capture = CAPTURE_APP2;
	if (p->capture != CAPTURE_NONE && p->buf_cap < p->seg_left) {
		p->buf_cap = MIN(p->seg_left, MAX_CAPTURE);
		p->buf = g_realloc(p->buf, p->buf_cap);
	}
	p->state = J_BODY;
}

/*
 * An APP2 "MPF" segment's body: its MP Index IFD (a TIFF structure whose
 * offsets count from the byte after "MPF\0") lists each image of the
 * file by attribute, size and offset; the large thumbnails (type codes
 * 0x010001 "VGA" .. 0x010005 "16K", JPEG data) are the previews.  Offsets
 * and sizes are checked only for wrapping: the maker judges them.
 */
static void read_mpf(PixJpegParser *p, const guint8 *b, gsize len)
{
	static const guint classes[] = { 0, 640, 1920, 3840, 7680, 15360 };
	if (len < 12 || memcmp(b, "MPF\0", 4) != 0)
		return;
	p->has_mpf = TRUE;
	const guint8 *t = b + 4;
	gsize tlen = len - 4;
	gboolean be;
	if (memcmp(t, "MM\0\x2a", 4) == 0)
		be = TRUE;
	else if (memcmp(t, "II\x2a\0", 4) == 0)
		be = FALSE;
	else
		return;
#define RD16(q) (be ? (guint32)((q)[0] << 8 | (q)[1]) : (guint32)((q)[1] << 8 | (q)[0]))
#define RD32(q) (be ? ((guint32)(q)[0] << 24 | (guint32)(q)[1] << 16 | (guint32)(q)[2] << 8 | (q)[3]) \
                    : ((guint32)(q)[3] << 24 | (guint32)(q)[2] << 16 | (guint32)(q)[1] << 8 | (q)[0]))
	guint32 ifd = RD32(t + 4);
	if (ifd < 8 || (guint64)ifd + 2 > tlen)
		return;
	guint32 n = RD16(t + ifd);
	if ((guint64)ifd + 2 + 12 * (guint64)n > tlen)
		return;
	for (guint32 i = 0; i < n; i++) {
		const guint8 *e = t + ifd + 2 + 12 * i;
		if (RD16(e) != 0xB002 || RD16(e + 2) != 7)
			continue;       /* MPEntry, UNDEFINED */
		guint32 count = RD32(e + 4), at = RD32(e + 8);
		if (count > 4 ? (guint64)at + count > tlen : FALSE)
			return;
		const guint8 *v = count > 4 ? t + at : e + 8;
		for (guint32 k = 0; k + 16 <= count && p->n_previews < PIX_META_MAX_PREVIEWS; k += 16) {
			guint32 attr = RD32(v + k), size = RD32(v + k + 4), off = RD32(v + k + 8);
			guint32 type = attr & 0xFFFFFF, format = (attr >> 24) & 7;
			if (format != 0 || type < 0x010001 || type > 0x010005 || off == 0 || size == 0)
				continue;
			PixPreview *pv = &p->previews[p->n_previews++];
			pv->off = (guint64)(p->body_off + 4) + off;
			pv->len = size;
			pv->kind = PIX_PREVIEW_MPF;
			pv->class_px = classes[type - 0x010000];
		}
		return;
	}
#undef RD16
#undef RD32
}

const PixPreview *pix_jpeg_parser_previews(const PixJpegParser *p, guint *n)
{
	*n = p->n_previews;
	return p->previews;
}

static void end_body(PixJpegParser *p)
{
	static const guint8 exif_header[6] = { 'E', 'x', 'i', 'f', 0, 0 };

	if (p->capture == CAPTURE_APP1 && p->exif == NULL && p->buf_len >= 6 && memcmp(p->buf, exif_header, 6) == 0)
		p->exif = g_bytes_new(p->buf, p->buf_len);
	if (p->capture == CAPTURE_APP1 && p->xmp == NULL && p->buf_len >= XMP_HEADER_LEN &&
	    memcmp(p->buf, XMP_HEADER, XMP_HEADER_LEN) == 0)
		p->xmp = g_bytes_new(p->buf + XMP_HEADER_LEN, p->buf_len - XMP_HEADER_LEN);
	if (p->capture == CAPTURE_APP1 && p->buf_len >= XMP_EXT_HEADER_LEN &&
	    memcmp(p->buf, XMP_EXT_HEADER, XMP_EXT_HEADER_LEN) == 0) {
		if (p->xmp_ext == NULL)
			p->xmp_ext = pix_xmp_ext_new();
		pix_xmp_ext_add(p->xmp_ext, p->buf + XMP_EXT_HEADER_LEN, p->buf_len - XMP_EXT_HEADER_LEN);
	}
	if (p->capture == CAPTURE_APP13 && p->buf_len >= IRB_HEADER_LEN && memcmp(p->buf, IRB_HEADER, IRB_HEADER_LEN) == 0) {
		if (p->irb == NULL)
			p->irb = g_byte_array_new();
		gsize take = MIN(p->buf_len - IRB_HEADER_LEN, MAX_IRB - p->irb->len);
		g_byte_array_append(p->irb, p->buf + IRB_HEADER_LEN, (guint)take);
	}
	if (p->capture == CAPTURE_SOF && p->buf_len >= 5) {
		/* precision (1), height (2), width (2), ... */
		p->height_px = (p->buf[1] << 8) | p->buf[2];
		p->width_px = (p->buf[3] << 8) | p->buf[4];
	}
	if (p->capture == CAPTURE_APP2)
		read_mpf(p, p->buf, p->buf_len);
	p->capture = CAPTURE_NONE;
	if (p->marker == 0xDA) {
		p->has_sos = TRUE;
		p->state = J_ENTROPY;
	} else {
		p->state = J_MARKER_FF;
	}
}

/*
 * The hot loop: entropy-coded data, where 0xFF is nearly always stuffing
 * (FF 00) or a restart marker (FF D0..D7).  Those are skipped here without
 * going back to the state machine.  skip_entropy() returns where the caller
 * goes on, with the state set for what follows: a marker (the byte after
 * its 0xFF), or a 0xFF that ends this piece.
 *
 * Vector code finds, a register at a time, the 0xFF bytes whose next byte
 * is not 00 or D0..D7, with two compares and a mask, so the cost is per
 * byte, whatever the density of 0xFF (every 20 bytes in noisy images,
 * every 200 in typical ones).  The widest the CPU has is chosen once:
 * AVX-512BW (64 bytes a step), AVX2 (32), SSE2 (16, every x86-64).
 */

/* The scalar rest: from i to len, one byte at a time. */
static gsize skip_entropy_tail(PixJpegParser *p, const guint8 *data, gsize i, gsize len)
{
	for (; i < len; i++) {
		if (data[i] != 0xFF)
			continue;
		if (i + 1 == len) {
			p->state = J_ENTROPY_FF;
			return len;
		}
		guint8 b = data[i + 1];
		if (b == 0x00 || (b >= 0xD0 && b <= 0xD7)) {
			i++;
			continue;
		}
		p->state = J_ENTROPY_FF;
		return i + 1;
	}
	return len;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512bw"))) static gsize skip_entropy_avx512(PixJpegParser *p, const guint8 *data,
                                                                   gsize i, gsize len)
{
	const __m512i ff = _mm512_set1_epi8((char)0xFF), zero = _mm512_setzero_si512();
	const __m512i rst_mask = _mm512_set1_epi8((char)0xF8), rst = _mm512_set1_epi8((char)0xD0);
	while (i + 65 <= len) {
		__m512i cur = _mm512_loadu_si512(data + i);
		__m512i next = _mm512_loadu_si512(data + i + 1);
		__mmask64 benign = _mm512_cmpeq_epi8_mask(next, zero) |
		                   _mm512_cmpeq_epi8_mask(_mm512_and_si512(next, rst_mask), rst);
		__mmask64 hits = _mm512_cmpeq_epi8_mask(cur, ff) & ~benign;
		if (hits != 0) {
			p->state = J_ENTROPY_FF;
			return i + (gsize)__builtin_ctzll(hits) + 1;
		}
		i += 64;
	}
	return skip_entropy_tail(p, data, i, len);
}

__attribute__((target("avx2"))) static gsize skip_entropy_avx2(PixJpegParser *p, const guint8 *data, gsize i,
                                                             gsize len)
{
	const __m256i ff = _mm256_set1_epi8((char)0xFF), zero = _mm256_setzero_si256();
	const __m256i rst_mask = _mm256_set1_epi8((char)0xF8), rst = _mm256_set1_epi8((char)0xD0);
	while (i + 33 <= len) {
		__m256i cur = _mm256_loadu_si256((const __m256i *)(data + i));
		__m256i next = _mm256_loadu_si256((const __m256i *)(data + i + 1));
		__m256i benign = _mm256_or_si256(_mm256_cmpeq_epi8(next, zero),
		                                 _mm256_cmpeq_epi8(_mm256_and_si256(next, rst_mask), rst));
		unsigned int hits = (unsigned int)_mm256_movemask_epi8(_mm256_cmpeq_epi8(cur, ff)) &
		                    ~(unsigned int)_mm256_movemask_epi8(benign);
		if (hits != 0) {
			p->state = J_ENTROPY_FF;
			return i + (gsize)__builtin_ctz(hits) + 1;
		}
		i += 32;
	}
	return skip_entropy_tail(p, data, i, len);
}
#endif

static gsize skip_entropy_sse2(PixJpegParser *p, const guint8 *data, gsize i, gsize len)
{
#ifdef __SSE2__
	const __m128i ff = _mm_set1_epi8((char)0xFF), zero = _mm_setzero_si128();
	const __m128i rst_mask = _mm_set1_epi8((char)0xF8), rst = _mm_set1_epi8((char)0xD0);
	while (i + 17 <= len) {
		__m128i cur = _mm_loadu_si128((const __m128i *)(data + i));
		__m128i next = _mm_loadu_si128((const __m128i *)(data + i + 1));
		__m128i benign = _mm_or_si128(_mm_cmpeq_epi8(next, zero),
		                              _mm_cmpeq_epi8(_mm_and_si128(next, rst_mask), rst));
		unsigned int hits = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(cur, ff)) &
		                    ~(unsigned int)_mm_movemask_epi8(benign);
		if (hits != 0) {
			p->state = J_ENTROPY_FF;
			return i + (gsize)__builtin_ctz(hits) + 1;
		}
		i += 16;
	}
#endif
	return skip_entropy_tail(p, data, i, len);
}

typedef gsize (*SkipFn)(PixJpegParser *p, const guint8 *data, gsize i, gsize len);

static SkipFn skip;       /* the chosen scan; set once, the same on every thread */

static guint cpu_scan_bits(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512bw"))
		return 512;
	if (__builtin_cpu_supports("avx2"))
		return 256;
	return 128;
#else
	return 0;
#endif
}

guint pix_jpeg_set_scan_bits(guint bits)
{
	bits = MIN(bits, cpu_scan_bits());
#if defined(__x86_64__) || defined(__i386__)
	if (bits >= 512) {
		skip = skip_entropy_avx512;
		return 512;
	}
	if (bits >= 256) {
		skip = skip_entropy_avx2;
		return 256;
	}
#endif
	if (bits >= 128) {
		skip = skip_entropy_sse2;
		return 128;
	}
	skip = skip_entropy_tail;
	return 0;
}

static gsize skip_entropy(PixJpegParser *p, const guint8 *data, gsize i, gsize len)
{
	if (G_UNLIKELY(skip == NULL))
		pix_jpeg_set_scan_bits(G_MAXUINT);
	/* counted apart: this is a damage check over all the image data, not
	 * metadata reading (PIX_NS_SCAN); by the monotonic clock, which
	 * costs no system call per piece of a file */
	if (!pix_is_meta_timing())
		return skip(p, data, i, len);
	gint64 t0 = pix_clock_ns();
	gsize next = skip(p, data, i, len);
	pix_count_add(PIX_NS_SCAN, pix_clock_ns() - t0);
	return next;
}

void pix_jpeg_parser_feed(PixJpegParser *p, const guint8 *data, gsize len)
{
	gsize i = 0;

	while (i < len) {
		guint8 b = data[i];
		gint64 at = p->offset + (gint64)i;
		switch (p->state) {
		case J_SOI0:
		case J_SOI1:
			if (b != (p->state == J_SOI0 ? 0xFF : 0xD8)) {
				fail(p, at, "no start-of-image marker");
				break;
			}
			p->state = p->state == J_SOI0 ? J_SOI1 : J_MARKER_FF;
			i++;
			break;
		case J_MARKER_FF:
			i++;
			if (b == 0xFF)
				p->state = J_MARKER_CODE;
			else if (++p->extraneous > MAX_EXTRANEOUS)
				fail(p, at, "no marker where one was due");
			break;
		case J_MARKER_CODE:
			i++;
			if (b == 0xFF)
				break;          /* fill byte */
			if (b == 0x00) {
				p->state = J_MARKER_FF;
				p->extraneous++;
				break;
			}
			on_marker(p, b);
			break;
		case J_LEN_HI:
			p->seg_len = (guint32)b << 8;
			p->state = J_LEN_LO;
			i++;
			break;
		case J_LEN_LO:
			p->seg_len |= b;
			i++;
			if (p->seg_len < 2) {
				fail(p, at, "segment length below 2");
				break;
			}
			p->seg_left = p->seg_len - 2;
			p->body_off = p->offset + (gint64)i;
			start_body(p);
			if (p->seg_left == 0)
				end_body(p);
			break;
		case J_BODY: {
			gsize n = MIN((gsize)p->seg_left, len - i);
			if (p->capture != CAPTURE_NONE && p->buf_len < p->buf_cap) {
				gsize take = MIN(n, p->buf_cap - p->buf_len);
				memcpy(p->buf + p->buf_len, data + i, take);
				p->buf_len += take;
			}
			i += n;
			p->seg_left -= (guint32)n;
			if (p->seg_left == 0)
				end_body(p);
			break;
		}
		case J_ENTROPY:
			i = skip_entropy(p, data, i, len);
			break;
		case J_ENTROPY_FF:
			i++;
			if (b == 0x00 || (b >= 0xD0 && b <= 0xD7))
				p->state = J_ENTROPY;   /* stuffing, restart marker */
			else if (b != 0xFF)
				on_marker(p, b);
			break;
		case J_DONE:
		case J_FAILED:
			i = len;
			break;
		}
	}
	p->offset += (gint64)len;
}

void pix_jpeg_parser_finish(PixJpegParser *p, PixJpegInfo *info)
{
	memset(info, 0, sizeof *info);
	if (p->state != J_DONE && p->state != J_FAILED) {
		if (p->has_sos)
			p->error = g_strdup_printf("truncated JPEG: the image data ends at byte %" G_GINT64_FORMAT
			                           " without an end-of-image marker", p->offset);
		else
			p->error = g_strdup_printf("truncated JPEG: the file ends at byte %" G_GINT64_FORMAT
			                           " before its image data", p->offset);
	}
	/* EOI without SOS is a metadata-only JPEG (test files, stripped
	 * previews): nothing is damaged, there is just no image */
	info->width_px = p->width_px;
	info->height_px = p->height_px;
	info->exif = g_steal_pointer(&p->exif);
	info->xmp = g_steal_pointer(&p->xmp);
	info->xmp_ext = g_steal_pointer(&p->xmp_ext);
	if (p->irb != NULL)
		info->irb = g_byte_array_free_to_bytes(g_steal_pointer(&p->irb));
	info->error = g_steal_pointer(&p->error);
}
