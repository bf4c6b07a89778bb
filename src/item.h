/*
 * item.h: PixItem, the unit of work passed between the pipeline's stages,
 * and the small records it carries (PixDir, PixStat, PixMeta).
 *
 * Ownership: a PixItem has exactly one owner at a time.  A stage that is
 * done with an item pushes it to the next stage's queue with
 * g_steal_pointer() and keeps no pointer to it.  The store thread frees it.
 * A PixItem owns every field it points to, except `dir`, which is a
 * reference (PixDir is reference counted because every file of a directory
 * points to it).
 */
#ifndef PIX_ITEM_H
#define PIX_ITEM_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "tags.h"
#include "thumb.h"

/* What the store must do with an item. */
typedef enum {
	PIX_ACT_DIR,      /* insert or update the directory row `dir` */
	PIX_ACT_DIR_MISSING, /* directory row `dir` (id known): its path is gone */
	PIX_ACT_ADD,      /* new path: insert a file row */
	PIX_ACT_CHANGE,   /* existing row `row_id`, content read again */
	PIX_ACT_MOVE,     /* existing row `row_id` now at dir/name; not read */
	PIX_ACT_MISSING,  /* existing row `row_id`: its path is gone */
	PIX_ACT_VERIFY,   /* existing row `row_id`: read to compare with its
	                     MD5 (old_md5, old_st); no metadata */
} PixAction;

/* What a file holds, from its content. */
typedef enum {
	PIX_MEDIA_OTHER = 0,
	PIX_MEDIA_IMAGE,
	PIX_MEDIA_RAW,
	PIX_MEDIA_VIDEO,
	PIX_MEDIA_SIDECAR,
} PixMediaKind;
#define PIX_N_MEDIA (PIX_MEDIA_SIDECAR + 1)

/* The kind's name in the catalog ("image", "raw", "video", "sidecar",
 * "other"), and back: -1 for a name that is none of them. */
const char *pix_media_name(PixMediaKind kind);
int pix_media_from_name(const char *name);

/* The part of struct stat the catalog keeps. */
typedef struct {
	guint64 dev;
	guint64 ino;
	guint32 mode;      /* st_mode: type and permission bits */
	gint64 size_bytes;
	gint64 mtime_ns;   /* ns since the epoch */
	gint64 ctime_ns;   /* ns since the epoch */
} PixStat;

/*
 * A directory of a walked tree.  Shared (by reference) by all items of the
 * files it holds.  `id` is the catalog row id: set by plan for directories
 * the catalog knows, by the store thread when it inserts a new one; only the
 * store thread reads it for new directories (the PIX_ACT_DIR item reaches
 * the store before any file of the directory can, see pipeline.c).
 */
typedef struct PixDir {
	gint ref_count;
	char *path;         /* absolute, bytes, no trailing slash (owned) */
	gint64 id;          /* catalog row id, 0 until known */
	struct PixDir *parent; /* the directory above, NULL for a scan root (ref) */
	PixStat st;
	guint64 fsid;       /* statfs f_fsid of its file system, 0 if unknown */
	gboolean is_ino_unstable; /* its file system makes inode numbers up at
	                       mount time (FAT, exFAT, FUSE): a file there is
	                       known by name, size and times, not by inode */
	gboolean is_unlisted; /* --quick: not listed, the catalog's record kept */
	char *error;        /* why the directory could not be listed, or NULL (owned) */
} PixDir;

/*
 * Metadata of one file.  Unknown numbers are NAN (doubles) or -1 (integers);
 * unknown strings are NULL.  All strings valid UTF-8 (owned).
 */
typedef struct {
	char *date_taken;   /* "YYYY-MM-DDTHH:MM:SS[.fff]", local time of the camera */
	char *date_tz;      /* "+HH:MM" / "-HH:MM" offset of date_taken, or NULL */
	const char *date_source; /* static tag name the date came from, or NULL */
	char *make;
	char *model;
	char *lens;
	double exposure_s;
	double fnumber;
	gint64 iso;
	double focal_mm;
	int orientation;    /* EXIF 1..8, -1 unknown */
	gint64 width_px;    /* pixel size of the image itself (not EXIF's claim) */
	gint64 height_px;
	double gps_lat;     /* signed decimal degrees, NAN if unknown */
	double gps_lon;
	double gps_alt_m;
	double duration_s;  /* video (and audio) duration, NAN if unknown */
	double aperture;    /* ApertureValue, APEX */
	int exposure_program; /* EXIF ExposureProgram, -1 unknown */
	int metering_mode;  /* EXIF MeteringMode, -1 unknown */
	int flash;          /* EXIF Flash bit field, -1 unknown */
	char *gps_time;     /* UTC "YYYY-MM-DDTHH:MM:SS[.f]Z", or "HH:MM:SS[.f]"
	                       without a GPSDateStamp */
	double gps_direction; /* GPSImgDirection, degrees in [0, 360) */
	char *gps_direction_ref; /* "T" or "M", or NULL */
	char *description;  /* ImageDescription / dc:description, trimmed */
	guint64 osdb_hash;  /* videos: the OpenSubtitles hash (file size plus
	                       the 64-bit little-endian sums of the first and
	                       last 64 KiB); valid when has_osdb_hash */
	gboolean has_osdb_hash;
	PixTags *tags;      /* the photographer's metadata (XMP, IPTC): keywords,
	                       people, rating, texts; NULL when the file has none
	                       (owned; finished by pix_meta_parser_finish()) */
} PixMeta;

typedef struct PixItem PixItem;

struct PixItem {
	PixAction action;
	PixDir *dir;            /* (transfer full: one reference) */
	char *name;             /* entry name, bytes, in the item's own block
	                           (never reassigned); NULL for PIX_ACT_DIR */
	gint64 row_id;          /* catalog row for CHANGE/MOVE/MISSING, else 0 */
	PixStat st;             /* as walked, then as read (fstat of the open fd) */

	/* what the catalog had before (CHANGE, MOVE, MISSING), for the change log */
	char *old_path;         /* full old path for MOVE (owned), else NULL */
	PixStat old_st;
	guint8 old_md5[16];
	gboolean has_old_md5;

	/* results of read/hash/meta */
	guint8 md5[16];
	gboolean has_md5;
	gint64 bytes_read;
	const char *mime;       /* static string, or NULL */
	PixMediaKind media;
	PixMeta *meta;          /* (owned, nullable) */
	char *error;            /* why the file is in state 'error', or NULL (owned) */
	gboolean is_read;       /* the content was read (or reading was tried) */
	gboolean is_vanished;   /* the file was gone when the reader came for it */
	gboolean is_unstable;   /* with error: it kept changing while read, or
	                           was no longer a regular file */
	gboolean is_racy;       /* mtime too recent to trust: reread next scan */
	gboolean was_missing;   /* the row was 'missing' before this scan */
	gboolean was_error;     /* the row was 'error' before this scan */

	/* thumbnails (scan --thumbnails, thumb.h) */
	gboolean want_thumb;    /* set by plan: make one from the bytes read */
	PixThumb *thumb;        /* what the hasher made, or the note why none
	                           (owned, nullable) */
	const PixThumbIndex *thumbs_known; /* with want_thumb: the contents
	                           with a thumbnail, one of which has this
	                           file's size (a possible copy), or NULL
	                           (borrowed: the scan's, see plan.h) */
};

PixDir *pix_dir_new(const char *path);
PixDir *pix_dir_ref(PixDir *d);
void pix_dir_unref(PixDir *d);

/* A new item for `action` in `dir` (takes a new reference to `dir`). */
PixItem *pix_item_new(PixAction action, PixDir *dir, const char *name);
/* Frees the item and everything it owns; accepts NULL. */
void pix_item_free(PixItem *item);
/* Full path "dir/name" (transfer full). */
char *pix_item_path(const PixItem *item);

/* Sets item->error (printf-style), replacing any earlier one. */
void pix_item_set_error(PixItem *item, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Fills a PixStat from a struct stat. */
struct stat;
void pix_stat_from(PixStat *out, const struct stat *st);
/* What a statx(2) must ask for to fill a PixStat (STATX_TYPE, MODE, INO,
 * SIZE, MTIME and CTIME: not the access time, which a read makes stale,
 * so that a network file system answers from what it knows instead of
 * asking its server again). */
#define PIX_STATX_MASK 0x000003c3u
/* Fills a PixStat from a struct statx that has PIX_STATX_MASK. */
struct statx;
void pix_stat_from_statx(PixStat *out, const struct statx *sx);
/* Whether two stats describe the same file in the same state (device,
 * inode, size, mtime and ctime to the nanosecond). */
gboolean pix_stat_same(const PixStat *a, const PixStat *b);

PixMeta *pix_meta_new(void);
void pix_meta_free(PixMeta *m);
/* Fills the fields unknown in `dst` (NULL, NAN, -1) from `src`; GPS
 * latitude and longitude as one value; the tags (both not yet finished)
 * as pix_tags_fill() does. */
void pix_meta_fill(PixMeta *dst, const PixMeta *src);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixItem, pix_item_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixMeta, pix_meta_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixDir, pix_dir_unref)

#endif
