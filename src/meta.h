/*
 * meta.h: metadata from a file's content, read from the same buffers as
 * the hash (the file is never opened again for it).
 *
 * A PixMetaParser is fed the file's bytes in order, in pieces of any size,
 * and at the end fills the item's media type and metadata.  It recognises
 * the format from the content (magic bytes), not the name, and keeps only
 * what it needs (the first bytes, an EXIF segment, a few header fields), so
 * its memory is bounded whatever the file's size.  Parsers treat their
 * input as hostile: every length is checked against what is there.
 *
 * Thread-safety: a parser is used by one thread at a time; distinct
 * parsers may run on distinct threads.
 */
#ifndef PIX_META_H
#define PIX_META_H

#include "item.h"

typedef struct PixMetaParser PixMetaParser;

PixMetaParser *pix_meta_parser_new(void);
/* Accepts NULL. */
void pix_meta_parser_free(PixMetaParser *mp);
/* The next `len` bytes of the file. */
void pix_meta_parser_feed(PixMetaParser *mp, const guint8 *data, gsize len);
/*
 * The file ended.  Sets item->mime and item->media, item->meta (or leaves
 * it NULL when the content has none), and item->error when the content is
 * damaged (a truncated image, corrupt EXIF); what could be read is kept.
 */
void pix_meta_parser_finish(PixMetaParser *mp, PixItem *item);

/* --- for meta-*.c and the tests --- */

/* A JPEG's structure, read as a stream of marker segments. */
typedef struct PixJpegParser PixJpegParser;

typedef struct {
	gint64 width_px;        /* from the first SOFn, -1 without one */
	gint64 height_px;
	GBytes *exif;           /* the first APP1 "Exif\0\0" payload, or NULL (owned) */
	char *error;            /* what is wrong with the structure, or NULL (owned) */
} PixJpegInfo;

PixJpegParser *pix_jpeg_parser_new(void);
void pix_jpeg_parser_free(PixJpegParser *p);
void pix_jpeg_parser_feed(PixJpegParser *p, const guint8 *data, gsize len);
/* After the last feed: fills `info` (transfer full, clear with
 * pix_jpeg_info_clear()). */
void pix_jpeg_parser_finish(PixJpegParser *p, PixJpegInfo *info);
void pix_jpeg_info_clear(PixJpegInfo *info);

/*
 * The vector width of the entropy-data scan, in bits: 512 (AVX-512BW), 256
 * (AVX2), 128 (SSE2) or 0 (scalar).  The widest the CPU has is used unless
 * set otherwise; setting clamps to what the CPU has and returns the width
 * set.  For tests, which run the parser at every width.
 */
guint pix_jpeg_set_scan_bits(guint bits);

#endif
