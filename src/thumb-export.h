/*
 * thumb-export.h: the catalog's stored renditions (thumb.h, the thumbs
 * table) made into what a front end's cache wants: decoded from their
 * small JPEG (never from the image file, which is not opened), turned,
 * scaled and encoded again.  Used by the exports (export-kpa-thumbs.c,
 * export-xdg.c), which decode only when the stored bytes will not do as
 * they are.
 *
 * Pixels are 8-bit, 1 channel (grey) or 3 (RGB), rows top to bottom with
 * no padding.
 *
 * Thread-safety: no state is shared; each call works on its own pixels,
 * so distinct threads may work on distinct PixPixels at once.
 */
#ifndef PIX_THUMB_EXPORT_H
#define PIX_THUMB_EXPORT_H

#include <glib.h>

/* The largest rendition decoded, per edge: the maker's are at most
 * PIX_THUMB_MAX_EDGE (512); a stored JPEG claiming more is refused as
 * damaged before any pixel is decoded. */
#define PIX_THUMB_EXPORT_MAX_EDGE 1024

typedef struct {
	guint width, height;    /* pixels */
	guint channels;         /* 1 (grey) or 3 (RGB) */
	guint8 *data;           /* width * height * channels bytes (owned), NULL when empty */
} PixPixels;

/* Frees what `p` holds and makes it empty.  Accepts an empty one. */
void pix_pixels_clear(PixPixels *p);

/*
 * Decodes a stored rendition (a baseline or progressive JPEG, grey, RGB
 * or YCbCr) into `out` (cleared first), at the smallest DCT scale n/8 at
 * which the long edge is still at least `min_edge` (0: full size), so a
 * 512 px rendition wanted at 256 decodes at 1/2, computing a quarter of
 * the pixels.  FALSE with `error` (G_IO_ERROR_INVALID_DATA) when the bytes
 * are not such a JPEG, are cut, or claim more than
 * PIX_THUMB_EXPORT_MAX_EDGE per edge; `out` is then empty.
 */
gboolean pix_pixels_from_jpeg(const guint8 *jpeg, gsize len, guint min_edge, PixPixels *out, GError **error);

/*
 * Turns `p` as EXIF orientation `orientation` says (1-8; anything else
 * is 1, nothing done), so that it shows upright: 3 is half a turn, 6 a
 * quarter turn clockwise, 8 counter-clockwise, 2, 4, 5 and 7 their mirror
 * images.  Width and height are swapped for 5 to 8.
 */
void pix_pixels_orient(PixPixels *p, int orientation);

/* The EXIF orientation that turns an image clockwise by `angle` degrees
 * (0, 90, 180, 270; KPhotoAlbum's angle), 1 for any other angle. */
int pix_orientation_of_angle(int angle);

/*
 * Scales `p` to `width` x `height` (each at least 1): an area average
 * (every source pixel counted by the share of it a target pixel covers)
 * along an edge that shrinks, a linear interpolation along one that
 * grows.  Nothing is done when the size is already that.
 */
void pix_pixels_scale(PixPixels *p, guint width, guint height);

/*
 * The size `width` x `height` fitted into a `box` x `box` square with its
 * aspect kept, as Qt's QSize::scaled(Qt::KeepAspectRatio) computes it
 * (the long edge becomes `box`, the short one is truncated, never below
 * 1): KPhotoAlbum's thumbnails, larger or smaller than the image.
 */
void pix_fit_box(guint width, guint height, guint box, guint *out_width, guint *out_height);

/* The same, rounded, and never larger than the image: the freedesktop.org
 * cache's sizes (an image smaller than the box keeps its size). */
void pix_fit_within(guint width, guint height, guint box, guint *out_width, guint *out_height);

/*
 * Whether a rendition of `rend_width` x `rend_height` is the image of
 * `width` x `height` scaled (its aspect within a pixel's rounding): then
 * the image's own size gives the short edge a front end would compute
 * from the image itself, and it is used for the fits above.
 */
gboolean pix_fit_agrees(guint width, guint height, guint rend_width, guint rend_height);

/* Encodes `p` as the maker encodes its renditions (thumb_jpeg_encode():
 * baseline, quality 85, Huffman tables optimised; transfer full).  NULL
 * with `error` on a libjpeg failure. */
GBytes *pix_pixels_to_jpeg(const PixPixels *p, GError **error);

#endif
