/*
 * thumb.h: a thumbnail of an image, made from the same bytes as its MD5
 * and metadata (the file is never opened or read again for it).
 *
 * A PixThumbMaker is fed the file's bytes in order, in pieces of any size,
 * each after the file's PixMetaParser (meta.h) has seen it, and decodes as
 * they arrive, from the cheapest source that gives PIX_THUMB_MAX_EDGE
 * pixels on the long edge:
 *  - an embedded preview the metadata parser found (an MPF "large
 *    thumbnail" after a camera JPEG's image, a RAW file's JpgFromRaw or
 *    PreviewImage), cut out of the bytes as they go by and decoded as a
 *    JPEG; HEIF's thumbnail item;
 *  - else the image: a JPEG by libjpeg at the smallest DCT scale (1/8 ..
 *    8/8) that keeps PIX_THUMB_MAX_EDGE pixels, PNG (libpng) and WebP
 *    (libwebp) as they stream, HEIF/HEIC/AVIF (libheif) from the file
 *    kept in memory within a budget.
 * Pixels are averaged down into the renditions as they come, so what it
 * holds is the decoders' state and the renditions' pixels, not the image
 * (HEIF aside).  At the end it hands over the renditions (PIX_THUMB_LARGE,
 * 256 px on the long edge, and PIX_THUMB_XLARGE, 512 px), each a baseline
 * JPEG, in the image's stored pixel order: orientation is the consumer's
 * business (the EXIF orientation is in the item's metadata).  A preview
 * a camera stored turned upright is turned back (see
 * pix_thumb_maker_set_image()); HEIF's own transformations (irot, imir)
 * are applied, as its stored size in the metadata has them.
 *
 * Bounded: an image of more than PIX_THUMB_MAX_PIXELS pixels, or one whose
 * decoder would need more than PIX_THUMB_MAX_MEMORY bytes (a large
 * progressive JPEG keeps its coefficients), gets no thumbnail and a note
 * saying why; so does a truncated or corrupt image.  Time is bounded by the
 * pixels and the bytes.
 *
 * Thread-safety: a maker is used by one thread at a time; distinct makers
 * may run on distinct threads.
 */
#ifndef PIX_THUMB_H
#define PIX_THUMB_H

#include <glib.h>

#include "phash.h"

/* The renditions, by the freedesktop.org names of their sizes. */
typedef enum {
	PIX_THUMB_LARGE = 0,   /* 256 px on the long edge */
	PIX_THUMB_XLARGE,      /* 512 px on the long edge */
} PixThumbSize;
#define PIX_THUMB_N_SIZES 2
#define PIX_THUMB_MAX_EDGE 512

/* The maker's version, kept with each note: a note of an older maker is
 * tried again by a scan with thumbnails (it may read that format now). */
#define PIX_THUMB_VERSION 2

#define PIX_THUMB_MAX_PIXELS ((gint64)1 << 28)   /* 268 megapixels */
#define PIX_THUMB_MAX_MEMORY ((gsize)48 << 20)

/* The long edge of a rendition, in pixels. */
guint pix_thumb_edge(PixThumbSize size);

/*
 * A thumbnail, or the reason there is none (`note` set, no rendition).
 * A rendition is never larger than its source: a 300 px image has a
 * 300 px PIX_THUMB_XLARGE and a 256 px PIX_THUMB_LARGE.
 */
typedef struct {
	PixPhash phash;       /* of PIX_THUMB_LARGE's pixels (phash.h); unset with a note */
	GBytes *jpeg[PIX_THUMB_N_SIZES]; /* (owned, NULL with a note) */
	guint width_px[PIX_THUMB_N_SIZES];
	guint height_px[PIX_THUMB_N_SIZES];
	/* static, NULL with a note: "jpeg" (a DCT-scaled decode of the
	 * image), "mpf-preview", "raw-preview", "heif-thumbnail" (an embedded
	 * preview), "png", "webp", "heif" (a full decode of the image) */
	const char *source;
	char *note;           /* why there is no thumbnail (owned), or NULL */
	gboolean is_deferred; /* the note is of this scan only (a budget was
	                         in use): keep no row, so that the next scan
	                         with thumbnails tries again */
} PixThumb;

/* A thumbnail that is only a note (transfer full). */
PixThumb *pix_thumb_new_note(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
void pix_thumb_free(PixThumb *t);
/* The bytes of its renditions (0 for NULL or a note): what it holds in
 * memory while it waits to be written. */
gsize pix_thumb_bytes(const PixThumb *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixThumb, pix_thumb_free)

typedef struct PixThumbMaker PixThumbMaker;
typedef struct PixMetaParser PixMetaParser;   /* meta.h */

/* A new maker is as started with no metadata parser and no size. */
PixThumbMaker *pix_thumb_maker_new(void);
/* Accepts NULL. */
void pix_thumb_maker_free(PixThumbMaker *m);
/* Makes the maker as new, and drops what it holds of a file (its reusable
 * buffers kept). */
void pix_thumb_maker_reset(PixThumbMaker *m);
/*
 * Starts a file of `size_bytes` (-1 unknown; a preview said to run past it
 * is not tried).  `meta` (transfer none, nullable, must outlive the file)
 * is the metadata parser fed every piece before the maker: where the
 * file's previews lie.  Without it only the image itself is decoded.
 */
void pix_thumb_maker_start(PixThumbMaker *m, const PixMetaParser *meta, gint64 size_bytes);
/*
 * The image's stored size and EXIF orientation (-1 unknown), from its
 * metadata, before pix_thumb_maker_finish(): a preview whose long side
 * lies across the image's short one while the orientation turns it by 90
 * degrees (5..8) was stored upright by the camera, and is turned back.
 */
void pix_thumb_maker_set_image(PixThumbMaker *m, gint64 width_px, gint64 height_px, int orientation);

/* What a maker decoded over its life, for tests (decodes are counted,
 * never timed). */
typedef struct {
	guint64 n_decodes;    /* decoders started: an image's or a preview's */
	guint64 n_jpeg_rows;  /* scanlines libjpeg decoded */
} PixThumbStats;
void pix_thumb_maker_stats(const PixThumbMaker *m, PixThumbStats *out);
/* The next `len` bytes of the file. */
void pix_thumb_maker_feed(PixThumbMaker *m, const guint8 *data, gsize len);
/*
 * The file ended.  Returns the thumbnail (transfer full), one with a note
 * when the content is an image none could be made of, or NULL when the
 * content is no format the maker reads.  The maker is then as reset.
 */
PixThumb *pix_thumb_maker_finish(PixThumbMaker *m);

/* Decodes (transfer full) or NULL: the image itself, no preview. */
PixThumb *pix_thumb_from_buffer(const guint8 *data, gsize len);

/*
 * The contents (MD5 and size) the catalog has a thumbnail row of, loaded
 * once per scan: a file of one of those sizes may be a copy, whose bytes
 * the hasher keeps (within a budget) instead of decoding them, until its
 * MD5 says whether it is.  Sorted by size, then MD5: 24 bytes a content.
 * Read-only once sealed, so any thread may ask it.
 */
typedef struct PixThumbIndex PixThumbIndex;
PixThumbIndex *pix_thumb_index_new(void);
void pix_thumb_index_free(PixThumbIndex *x);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixThumbIndex, pix_thumb_index_free)
void pix_thumb_index_add(PixThumbIndex *x, gint64 size_bytes, const guint8 md5[16]);
/* Sorts it: no add after. */
void pix_thumb_index_seal(PixThumbIndex *x);
guint pix_thumb_index_len(const PixThumbIndex *x);
gboolean pix_thumb_index_has_size(const PixThumbIndex *x, gint64 size_bytes);
gboolean pix_thumb_index_has(const PixThumbIndex *x, gint64 size_bytes, const guint8 md5[16]);

#endif
