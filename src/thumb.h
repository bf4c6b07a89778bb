/*
 * thumb.h: a thumbnail of an image, made from the same bytes as its MD5
 * and metadata (the file is never opened or read again for it).
 *
 * A PixThumbMaker is fed the file's bytes in order, in pieces of any size,
 * like a PixMetaParser (meta.h), and decodes as they arrive: a JPEG is
 * decoded by libjpeg at the smallest DCT scale (1/8 .. 8/8) that still
 * gives PIX_THUMB_MAX_EDGE pixels on the long edge, and its scanlines are
 * averaged down into the renditions as they come, so what it holds is
 * libjpeg's state and the renditions' pixels, not the image.  At the end
 * it hands over the renditions (PIX_THUMB_LARGE, 256 px on the long edge,
 * and PIX_THUMB_XLARGE, 512 px), each a baseline JPEG, in the file's own
 * pixel order: orientation is the consumer's business (the EXIF
 * orientation is in the item's metadata).
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
#define PIX_THUMB_VERSION 1

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
	const char *source;   /* static: "jpeg" (a DCT-scaled decode of the image) */
	char *note;           /* why there is no thumbnail (owned), or NULL */
} PixThumb;

/* A thumbnail that is only a note (transfer full). */
PixThumb *pix_thumb_new_note(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
void pix_thumb_free(PixThumb *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixThumb, pix_thumb_free)

typedef struct PixThumbMaker PixThumbMaker;

PixThumbMaker *pix_thumb_maker_new(void);
/* Accepts NULL. */
void pix_thumb_maker_free(PixThumbMaker *m);
/* Makes the maker as new, for the next file (its buffers kept). */
void pix_thumb_maker_reset(PixThumbMaker *m);
/* The next `len` bytes of the file. */
void pix_thumb_maker_feed(PixThumbMaker *m, const guint8 *data, gsize len);
/*
 * The file ended.  Returns the thumbnail (transfer full), one with a note
 * when the content is an image none could be made of, or NULL when the
 * content is no format the maker reads.  The maker is then as reset.
 */
PixThumb *pix_thumb_maker_finish(PixThumbMaker *m);

/* Decodes (transfer full) or NULL. */
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
