/*
 * meta-int.h: the metadata parsers' own interface, shared by meta.c (which
 * recognises a format and runs its parser), the meta-*.c parsers, and
 * their tests.  Nothing outside the parsers includes it: hash.c sees
 * meta.h only.
 *
 * Thread-safety: as meta.h.
 */
#ifndef PIX_META_INT_H
#define PIX_META_INT_H

#include "meta.h"
#include "meta-value.h"
#include "stream.h"
#include "tiff.h"


/*
 * A container parser (meta-*.c): it reads a file of its format through a
 * PixStream (stream.h) and fills PixMeta.  The stream keeps `keep_head` and
 * `keep_tail` bytes of the file for pix_stream_peek().
 *
 * start() allocates the parser's state and asks for the first ranges;
 * after the file ended (pix_stream_finish()), finish() fills the fields
 * of `m` that are still unknown (NULL, NAN, -1) and records what is wrong
 * with the file with pix_stream_problem() / pix_stream_fail(), which end
 * up in the item's error.  free() accepts NULL.  Every length, offset and
 * count read from the file is checked against what is there; nesting has
 * a depth limit.
 */
typedef struct {
	const char *name;           /* e.g. "PNG", for messages */
	gsize keep_head;
	gsize keep_tail;
	void *(*start)(PixStream *s);
	void (*finish)(void *state, PixStream *s, PixMeta *m);
	/* Optional, after finish(): a more precise media type than the magic
	 * number gave (and its media kind), or NULL to keep it. */
	const char *(*mime)(void *state, PixMediaKind *media);
	/* Optional, at any time: the embedded previews found so far (see
	 * pix_meta_parser_previews()). */
	const PixPreview *(*previews)(void *state, guint *n);
	void (*free)(void *state);
} PixContainer;

extern const PixContainer pix_container_tiff;    /* meta-tiff.c: TIFF, TIFF-based RAW */
extern const PixContainer pix_container_bmff;    /* meta-bmff.c: HEIF/AVIF, CR3, MP4/MOV/3GP, JPEG XL */
extern const PixContainer pix_container_png;     /* meta-png.c */
extern const PixContainer pix_container_riff;    /* meta-riff.c: WebP, AVI */
extern const PixContainer pix_container_raf;     /* meta-raf.c: Fujifilm RAF */
extern const PixContainer pix_container_mrw;     /* meta-mrw.c: Minolta MRW */
extern const PixContainer pix_container_crw;     /* meta-crw.c: Canon CRW (CIFF) */
extern const PixContainer pix_container_x3f;     /* meta-x3f.c: Sigma X3F */
extern const PixContainer pix_container_xmp;     /* meta-xmp.c: XMP sidecars */

/*
 * A TIFF block found inside a container (an EXIF payload without its
 * "Exif\0\0" header, a CR3 CMTn box, a PNG eXIf chunk): its fields into
 * `m` (unknown fields only), its damage recorded on `s` as a problem.
 * `role` (tiff.h) says which directory the block's IFD0 really is: CR3
 * stores the Exif and GPS directories as TIFF blocks of their own.
 */
void pix_meta_read_tiff(PixStream *s, const guint8 *tiff, gsize len, PixTiffRole role, PixMeta *m);
/* An XMP packet found inside a container: its fields into `m` (unknown
 * fields only). */
void pix_meta_read_xmp(const guint8 *xmp, gsize len, PixMeta *m);
/*
 * The EXIF block (a TIFF, without "Exif\0\0") and XMP packet a container
 * captured (each may be NULL), read as above after the container set the
 * image's own size: neither may set the pixel size, which is the image's
 * and not their claim; unknown stays unknown.
 */
void pix_meta_read_captured(PixStream *s, GBytes *exif, GBytes *xmp, PixMeta *m);

/* A JPEG's structure, read as a stream of marker segments. */
typedef struct PixJpegParser PixJpegParser;

typedef struct {
	gint64 width_px;        /* from the first SOFn, -1 without one */
	gint64 height_px;
	GBytes *exif;           /* the first APP1 "Exif\0\0" payload, or NULL (owned) */
	GBytes *xmp;            /* the first APP1 XMP packet, without its
	                           "http://ns.adobe.com/xap/1.0/\0" header, or NULL (owned) */
	char *error;            /* what is wrong with the structure, or NULL (owned) */
} PixJpegInfo;

PixJpegParser *pix_jpeg_parser_new(void);
void pix_jpeg_parser_free(PixJpegParser *p);
void pix_jpeg_parser_feed(PixJpegParser *p, const guint8 *data, gsize len);
/* After the last feed: fills `info` (transfer full, clear with
 * pix_jpeg_info_clear()). */
void pix_jpeg_parser_finish(PixJpegParser *p, PixJpegInfo *info);
void pix_jpeg_info_clear(PixJpegInfo *info);
/* The MPF "large thumbnails" of the primary image's MPF index (APP2),
 * once its segment was read (transfer none, as pix_meta_parser_previews()). */
const PixPreview *pix_jpeg_parser_previews(const PixJpegParser *p, guint *n);

/*
 * The vector width of the entropy-data scan, in bits: 512 (AVX-512BW), 256
 * (AVX2), 128 (SSE2) or 0 (scalar).  The widest the CPU has is used unless
 * set otherwise; setting clamps to what the CPU has and returns the width
 * set.  For tests, which run the parser at every width.
 */
guint pix_jpeg_set_scan_bits(guint bits);

#endif
