/*
 * similar.h: groups of visually similar images from their perceptual
 * hashes (phash.h), for `photoidx dups --similar`.  Pure: arrays in,
 * arrays out, no catalog.
 *
 * The centre rule: the images are taken best copy first (see
 * pix_similar_compare()); each one not yet in a group becomes a centre
 * and takes every image not yet in a group within `distance` bits of its
 * own hash.  So every member of a group is within the distance of its
 * centre, which is its best copy, and one image between two photos (a
 * "bridge", close to both) cannot chain them: a member is never taken for
 * being close to another member.  A weak hash (phash.h) is grouped only
 * with weak hashes of the same value (the same rendition), never by
 * distance.
 *
 * The search: multi-index hashing over the hash's four 16-bit bands
 * (Norouzi, Punjani and Fleet, 2012).  Two hashes within d bits agree
 * within d / 4 bits on at least one band (else they would differ by at
 * least 4 (d / 4 + 1) > d), so the candidates of a centre are the
 * entries of the buckets within d / 4 bits of its four bands, and no pair
 * is compared that no band brings together.  For 500,000 images and the
 * default distance (d / 4 = 2) that is 4 x 137 buckets a centre, of about
 * 8 entries each for evenly spread hashes, in place of 500,000.
 *
 * Memory: 4 bytes per hash and band (its index; the hashes are read
 * from the caller's array), one byte of flags per hash, and 512 KiB of
 * buckets per band.
 *
 * Thread-safety: reentrant (no shared state).
 */
#ifndef PIX_SIMILAR_H
#define PIX_SIMILAR_H

#include <glib.h>

/* What makes one copy of an image better than another (the best copy of
 * a group, and its centre): more pixels, else a camera's format (RAW,
 * JPEG, HEIF) before an export's (PNG, WebP, TIFF, GIF...), else the
 * older mtime, else the lower file id. */
typedef struct {
	guint64 pixels;       /* width x height; 0: unknown */
	guint format_rank;    /* pix_similar_format_rank() */
	gint64 mtime_ns;
	gint64 id;            /* the file's files.id */
} PixSimilarKey;

/* 0 for the formats cameras write (media 'raw', image/jpeg, image/heic,
 * image/heif, image/avif), 1 for any other; `mime` and `media` may be
 * NULL. */
guint pix_similar_format_rank(const char *mime, const char *media);
/* < 0 when a is the better copy, > 0 when b is, 0 only for equal keys. */
int pix_similar_compare(const PixSimilarKey *a, const PixSimilarKey *b);

/* Groups: the members of group k are members[starts[k] .. starts[k + 1]
 * - 1], indices into the input, ascending (so its centre, the best copy,
 * first); groups in the order of their centres. */
typedef struct {
	guint32 *members;     /* (owned) */
	guint32 *starts;      /* n_groups + 1 (owned) */
	guint n_groups;
} PixSimilarGroups;

/*
 * Groups hashes[0 .. n - 1], given best copy first (the order of
 * pix_similar_compare()), by the centre rule within `distance` bits
 * (0 .. 64).  is_weak: n flags, or NULL (none is weak).  Only groups of
 * two or more.  (transfer full)
 */
PixSimilarGroups *pix_similar_group(const guint64 *hashes, const guint8 *is_weak, guint n, guint distance);
/* The same on `n_threads` threads (>= 1; the calling thread is one of
 * them): the same groups whatever the number.  pix_similar_group() uses
 * one a core (at most 8) from 20,000 hashes up, else one. */
PixSimilarGroups *pix_similar_group_threads(const guint64 *hashes, const guint8 *is_weak, guint n, guint distance,
                                            guint n_threads);
void pix_similar_groups_free(PixSimilarGroups *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixSimilarGroups, pix_similar_groups_free)

/* A debug check (g_assert(pix_similar_check(...))): every member of
 * every group is within `distance` of the group's first (centre) or, weak,
 * equal to it; no index is in two groups; members ascend. */
gboolean pix_similar_check(const PixSimilarGroups *g, const guint64 *hashes, const guint8 *is_weak, guint n,
                           guint distance);

#endif
