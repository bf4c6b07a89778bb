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
 * The parsers' own interface (containers, the JPEG parser) is meta-int.h.
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
/* Makes the parser as new, for the next file (or a file read again from
 * its start): a hasher keeps one per file it holds, not one per file. */
void pix_meta_parser_reset(PixMetaParser *mp);
/* The file's size as listed (0: not known), after a reset and before the
 * first byte: spares copies of bytes its structures at the end will not
 * need (pix_stream_expect_size()). */
void pix_meta_parser_expect_size(PixMetaParser *mp, guint64 size);
/* The next `len` bytes of the file. */
void pix_meta_parser_feed(PixMetaParser *mp, const guint8 *data, gsize len);
/*
 * An image a file embeds for quick display, as the file's structure
 * places it: a JPEG of `len` bytes at `off`, for the thumbnail maker
 * (thumb.h), which cuts it out of the bytes as they go by.
 */
typedef enum {
	PIX_PREVIEW_MPF,        /* a JPEG's MPF "large thumbnail" (after its image) */
	PIX_PREVIEW_RAW,        /* a RAW file's JpgFromRaw or PreviewImage */
} PixPreviewKind;

typedef struct {
	guint64 off;            /* its first byte (SOI) in the file */
	guint64 len;            /* > 0 */
	PixPreviewKind kind;
	guint class_px;         /* the long edge its container promises (MPF's
	                           class: 640 for "VGA", 1920 for "full HD"...),
	                           0 when it says nothing */
} PixPreview;

/*
 * The previews found so far (transfer none: valid until the next feed or
 * reset; still valid after pix_meta_parser_finish()), in the order
 * found, at most PIX_META_MAX_PREVIEWS; *n is 0 for a format that has
 * none.  A preview's offset and length are checked only against each
 * other (no wrap), not against the file.
 */
#define PIX_META_MAX_PREVIEWS 8
const PixPreview *pix_meta_parser_previews(const PixMetaParser *mp, guint *n);

/*
 * The file ended.  Sets item->mime and item->media, item->meta (or leaves
 * it NULL when the content has none), and item->error when the content is
 * damaged (a truncated image, corrupt EXIF); what could be read is kept.
 */
void pix_meta_parser_finish(PixMetaParser *mp, PixItem *item);

#endif
