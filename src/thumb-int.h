/*
 * thumb-int.h: the thumbnail maker's own interface, shared by thumb.c
 * (which sniffs a file's format, follows its embedded previews and makes
 * the renditions) and its decoders, one per library: thumb-jpeg.c
 * (libjpeg: JPEGs, the previews embedded in JPEGs and RAW files, and the
 * renditions' encoding), thumb-png.c (libpng), thumb-webp.c (libwebp),
 * thumb-heif.c (libheif: HEIC, HEIF, AVIF).  Nothing outside them
 * includes it: hash.c sees thumb.h only.
 *
 * Every decoder is fed the bytes of its image in order, in pieces of any
 * size, and hands over at most PIX_THUMB_MAX_EDGE pixels on the long edge
 * (ThumbPixels), or a note saying why it cannot.  Decoders run on a hash
 * thread; one decoder is used by one thread at a time.
 */
#ifndef PIX_THUMB_INT_H
#define PIX_THUMB_INT_H

#include "thumb.h"

/* Pixels, 8 bits a sample: c = 1 (gray) or 3 (RGB), rows packed. */
typedef struct {
	guint w, h, c;
	guint8 *data;           /* w * h * c bytes (owned), NULL when empty */
} ThumbPixels;

void thumb_pixels_clear(ThumbPixels *p);

/*
 * A box filter: rows of sw x sh pixels (c samples) averaged into tw x th
 * (the largest that fits `edge` on the long edge, never larger than the
 * source), fed one source row at a time, top to bottom; each source pixel
 * falls into exactly one target pixel.  Holds one row of sums and the
 * target, never the source.
 */
typedef struct {
	guint sw, sh, tw, th, c;
	guint *xcount;        /* source pixels per target column, which take
	                         the source columns in order (owned) */
	guint32 *acc;         /* one target row's sums (owned) */
	guint y;              /* source rows fed */
	guint ty;             /* target row being summed */
	guint rows;           /* source rows in it so far */
	guint8 *out;          /* tw * th * c (owned) */
} ThumbShrink;

/* The size of `sw` x `sh` fitted within `edge` on its long edge. */
void thumb_fit(guint sw, guint sh, guint edge, guint *tw, guint *th);
void thumb_shrink_init(ThumbShrink *s, guint sw, guint sh, guint c, guint edge);
/* The same to a size of its own: `tw` x `th` (each at most the source's). */
void thumb_shrink_init_to(ThumbShrink *s, guint sw, guint sh, guint c, guint tw, guint th);
void thumb_shrink_clear(ThumbShrink *s);
void thumb_shrink_row(ThumbShrink *s, const guint8 *row);
gboolean thumb_shrink_is_done(const ThumbShrink *s);
/* Moves the target's pixels to `out` (the shrink is cleared). */
void thumb_shrink_take(ThumbShrink *s, ThumbPixels *out);

/* The largest width or height a decoder accepts, whatever the pixel
 * count: a row of it is at most 8 MiB at 16-bit RGBA. */
#define THUMB_MAX_SIDE (1u << 20)

/* Whether `w` x `h` is within the bounds (PIX_THUMB_MAX_PIXELS,
 * THUMB_MAX_SIDE); if not, `*note` says so (transfer full). */
gboolean thumb_check_size(guint64 w, guint64 h, char **note);

/* A decoder's state. */
typedef enum {
	THUMB_RUNNING,        /* wants more bytes */
	THUMB_DONE,           /* has its pixels: further bytes are ignored */
	THUMB_FAILED,         /* has its note: further bytes are ignored */
	THUMB_STOPPED,        /* told to stop by its header callback */
} ThumbState;

/* --- thumb-jpeg.c ----------------------------------------------------------- */

/*
 * A JPEG decoded as it streams, at the smallest DCT scale that keeps
 * PIX_THUMB_MAX_EDGE pixels, into a ThumbShrink.  Holds libjpeg's state
 * and at most one marker segment's or MCU's bytes (bounded at 4 MiB).
 * Reused from file to file (reset, not made anew).
 */
typedef struct ThumbJpeg ThumbJpeg;

/* Called once the header is read, with the image's size; returns FALSE
 * to stop there (the decoder goes to THUMB_STOPPED, decoding nothing). */
typedef gboolean (*ThumbJpegHeaderFn)(void *ctx, guint width_px, guint height_px);

ThumbJpeg *thumb_jpeg_new(void);
void thumb_jpeg_free(ThumbJpeg *j);
/* Starts a stream (its first byte is SOI's); `fn` may be NULL. */
void thumb_jpeg_start(ThumbJpeg *j, ThumbJpegHeaderFn fn, void *ctx);
void thumb_jpeg_feed(ThumbJpeg *j, const guint8 *data, gsize len);
ThumbState thumb_jpeg_state(const ThumbJpeg *j);
/*
 * Ends the stream: TRUE with the pixels (into `out`) and the image's own
 * size; else FALSE with the reason (`*note`, transfer full; NULL when it
 * was stopped).  The decoder is then as after thumb_jpeg_reset().
 */
gboolean thumb_jpeg_finish(ThumbJpeg *j, ThumbPixels *out, guint *width_px, guint *height_px, char **note);
/* Drops what it holds of a stream (large buffers too). */
void thumb_jpeg_reset(ThumbJpeg *j);
/* Scanlines libjpeg decoded over the decoder's life (for the tests). */
guint64 thumb_jpeg_rows(const ThumbJpeg *j);

/* Encodes pixels as a baseline JPEG (transfer full), or NULL with
 * `*note` set. */
GBytes *thumb_jpeg_encode(const ThumbPixels *p, char **note);

/* --- thumb-png.c, thumb-webp.c: decoders that stream ------------------------- */

typedef struct ThumbPng ThumbPng;
ThumbPng *thumb_png_new(void);
void thumb_png_free(ThumbPng *d);
void thumb_png_feed(ThumbPng *d, const guint8 *data, gsize len);
ThumbState thumb_png_state(const ThumbPng *d);
/* As thumb_jpeg_finish(); the decoder is freed (NULL accepted). */
gboolean thumb_png_finish(ThumbPng *d, ThumbPixels *out, guint *width_px, guint *height_px, char **note);

typedef struct ThumbWebp ThumbWebp;
ThumbWebp *thumb_webp_new(void);
void thumb_webp_free(ThumbWebp *d);
void thumb_webp_feed(ThumbWebp *d, const guint8 *data, gsize len);
ThumbState thumb_webp_state(const ThumbWebp *d);
gboolean thumb_webp_finish(ThumbWebp *d, ThumbPixels *out, guint *width_px, guint *height_px, char **note);

/* --- thumb-heif.c: a decoder of the whole file --------------------------------- */

/*
 * HEIF, HEIC and AVIF through libheif, which reads a file from memory:
 * the file's bytes are kept (at most THUMB_HEIF_MAX_FILE, and all the
 * makers together at most THUMB_HEIF_BUDGET) and decoded at the end:
 * a thumbnail item of at least PIX_THUMB_MAX_EDGE pixels when the file
 * has one, else the primary image (one such decode at a time in the
 * process, at most THUMB_HEIF_MAX_DECODE bytes of pixels), else the
 * largest thumbnail item of at least 256 px.
 */
#define THUMB_HEIF_MAX_FILE ((gsize)64 << 20)
#define THUMB_HEIF_BUDGET ((gsize)96 << 20)
#define THUMB_HEIF_MAX_DECODE ((gsize)96 << 20)

typedef struct ThumbHeif ThumbHeif;
/* A decoder for a file of `size_bytes` (-1 when unknown). */
ThumbHeif *thumb_heif_new(gint64 size_bytes);
void thumb_heif_free(ThumbHeif *d);
void thumb_heif_feed(ThumbHeif *d, const guint8 *data, gsize len);
ThumbState thumb_heif_state(const ThumbHeif *d);
/* Whether the budget was in use by other files: no note, the file is
 * tried again by the next scan with thumbnails. */
gboolean thumb_heif_is_deferred(const ThumbHeif *d);
/* As thumb_jpeg_finish(), and `*source` ("heif" or "heif-thumbnail"). */
gboolean thumb_heif_finish(ThumbHeif *d, ThumbPixels *out, guint *width_px, guint *height_px,
                           const char **source, char **note);

#endif
