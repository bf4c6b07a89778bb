/*
 * phash.h: perceptual hashes of an image's pixels, for finding the same
 * picture resized, recompressed, cropped a little or made brighter
 * (`photoidx dups --similar`).  Pure functions: no state, no allocation
 * but the caller's, integer arithmetic only, so a hash is the same on
 * every machine and compiler.
 *
 * The catalog's hash (PixPhash, PIX_PHASH_VERSION) is the DCT hash, the
 * pHash of Zauner (2010) as imagehash 4.3 computes it: the image as 32 x
 * 32 grey levels, its 2-D DCT-II, the 8 x 8 lowest frequencies, each bit
 * set where that coefficient is above their median.  dHash and the Haar
 * (wavelet) hash are here too: doc/design.md ("Similar images") compares
 * the three on variants and distinct photos (bench/phash-eval.c), and
 * that comparison chose the DCT hash.
 *
 * Bits are in imagehash's order: the coefficient of vertical frequency v
 * and horizontal frequency u is bit 63 - (8 v + u), so a hash printed as
 * 16 hex digits reads as imagehash's str() of the same grid.
 *
 * Thread-safety: every function is reentrant.
 */
#ifndef PIX_PHASH_H
#define PIX_PHASH_H

#include <glib.h>

/* The version of the catalog's hash: a hash of an older version is
 * computed again from the stored rendition (thumbs.phash_version). */
#define PIX_PHASH_VERSION 1

/* The DCT hash's grid: PIX_PHASH_GRID x PIX_PHASH_GRID grey levels. */
#define PIX_PHASH_GRID 32

/* The default distance of `dups --similar` (bits of 64), chosen by
 * measurement (doc/design.md). */
#define PIX_PHASH_DEFAULT_DISTANCE 10
/* The largest distance `dups --similar` takes: the index's bands
 * (similar.h) are searched within distance / 4, and beyond 16 of 64 bits
 * distinct photos meet anyway. */
#define PIX_PHASH_MAX_DISTANCE 16

/*
 * An image's hash.  A weak hash is one whose bits the pixels do not
 * decide: the image is tiny (under PIX_PHASH_GRID pixels on an edge) or
 * nearly uniform (fewer than PIX_PHASH_MIN_DECIDED of its 63 frequencies
 * stand clear of the median), so that its bits are the noise of its
 * encoding.  Its `value` is then not a perceptual hash but a digest of
 * the rendition's bytes (pix_phash_digest()): equal only for images whose
 * renditions are the same bytes, which is what `dups --similar` groups
 * weak hashes by.
 */
typedef struct {
	guint64 value;
	gboolean is_set;      /* FALSE: no hash (no rendition) */
	gboolean is_weak;
	guint n_decided;      /* frequencies clear of the median, 0..63 */
} PixPhash;

/* A frequency is decided when it is this far from the median: a quarter
 * of a grey level of amplitude (the quantising noise of a JPEG of quality
 * 85 at this scale is below it), in the units of pix_phash_dct(). */
#define PIX_PHASH_DECIDED_LEVEL 0.25
#define PIX_PHASH_MIN_DECIDED 32

/*
 * Grey levels of `pixels` (w x h, `channels` 1 (grey) or 3 (RGB), rows
 * packed), area-averaged into tw x th cells: each cell the mean of the
 * part of the image it covers (pixels cut by a cell's edge count in
 * proportion), an image smaller than the grid spread over it.  Luma is
 * ITU-R BT.601's (0.299 R + 0.587 G + 0.114 B, as PIL's "L").  Out: tw *
 * th values in 1/256 of a grey level (0 .. 65280), rows packed.
 */
void pix_phash_grey(const guint8 *pixels, guint w, guint h, guint channels, guint tw, guint th, guint32 *out);

/*
 * The DCT hash of a PIX_PHASH_GRID x PIX_PHASH_GRID grid of pix_phash_grey()
 * values.  *n_decided (NULL: not wanted): how many of the 63 frequencies
 * other than the mean are decided (PIX_PHASH_DECIDED_LEVEL).  coeffs
 * (NULL: not wanted): the 64 coefficients, in bit order, each a grey
 * level of amplitude ~ 2^47.
 */
guint64 pix_phash_dct(const guint32 *grid, guint *n_decided, gint64 *coeffs);

/* dHash: bit 63 - (8 y + x) set where cell x + 1 of row y of a 9 x 8 grid
 * is brighter than cell x (imagehash's dhash()). */
guint64 pix_phash_dhash(const guint32 *grid9x8);
/* The vertical dHash: of an 8 x 9 grid, cell (x, y + 1) against (x, y)
 * (imagehash's dhash_vertical()). */
guint64 pix_phash_dhash_vertical(const guint32 *grid8x9);
/* The Haar wavelet hash: the 8 x 8 low band of the Haar transform of a
 * PIX_PHASH_GRID grid (each cell the mean of a 4 x 4 block) against its
 * median (imagehash's whash(), "haar", whose removed top band does not
 * change the comparison). */
guint64 pix_phash_whash(const guint32 *grid);

/* Bits that differ. */
static inline guint pix_phash_distance(guint64 a, guint64 b)
{
	return (guint)__builtin_popcountll(a ^ b);
}

/* The weak hash's value: 64 bits of the SHA-256 of `data`. */
guint64 pix_phash_digest(const void *data, gsize len);

/*
 * The catalog's hash of a rendition: its pixels (as pix_phash_grey()
 * takes them) and the bytes it is stored as (a weak hash's digest; NULL:
 * a weak hash is left unset).  Sets *out.
 */
void pix_phash_of_rendition(PixPhash *out, const guint8 *pixels, guint w, guint h, guint channels, GBytes *stored);

/* 16 lowercase hex digits and a NUL. */
void pix_phash_format(guint64 value, char out[17]);

#endif
