/*
 * query.h: what the commands for front ends and scripts (ls, dups, stats,
 * export) ask of the catalog: the files that pass a filter, one record per
 * file with every column of the public `file_info` view, in one snapshot.
 *
 * Records are read from a PIX_STORE_READ store: a reader never waits for a
 * scan and never sees half of a batch, and one call reads one snapshot
 * (one statement), however long the callback takes.
 *
 * Thread-safety: as PixStore (one thread at a time).
 */
#ifndef PIX_QUERY_H
#define PIX_QUERY_H

#include "item.h"
#include "store.h"

/* Which states of file a filter lets through. */
typedef enum {
	PIX_SHOW_PRESENT = 0, /* ok and error (the default: what is on disk), and
	                         offline with is_offline */
	PIX_SHOW_MISSING,     /* only missing files */
	PIX_SHOW_ERRORS,      /* only files in state error */
	PIX_SHOW_ALL,         /* every row, missing and offline ones too */
} PixShow;

/* A filter: every condition set must hold.  Strings are borrowed. */
typedef struct {
	char **paths;         /* absolute paths: the file is one of them or below one (NULL: anywhere) */
	const char *date_from; /* date_taken >= this (a prefix of YYYY-MM-DDTHH:MM:SS), or NULL */
	const char *date_to;   /* date_taken < this, or NULL */
	gboolean is_no_date;  /* only files without a date_taken */
	const char *make;     /* make contains this, ignoring ASCII case, or NULL */
	const char *model;    /* model contains this, ignoring ASCII case, or NULL */
	guint media_mask;     /* bits 1 << PixMediaKind; 0: any */
	gboolean has_near;    /* within radius_m metres of (near_lat, near_lon) */
	double near_lat, near_lon, radius_m;
	PixShow show;
	gboolean is_offline;  /* the files of volumes not mounted pass too */
	/* the photographer's metadata (file_keywords, file_people, file_info:
	 * the sidecar's where it gives them) */
	const char *keyword;  /* a keyword, any case: the keyword itself (a level
	                         of any hierarchy named so), or a path of levels
	                         joined by '/' and all below it; or NULL */
	gboolean has_rating;  /* rating at least min_rating */
	gint64 min_rating;
	const char *person;   /* a person named so, any case, or NULL */
	const char *text;     /* a word in the title, the caption or a keyword,
	                         any case, or NULL */
} PixFilter;

/* Order of records. */
typedef enum {
	PIX_SORT_DATE = 0,    /* date taken (files without one last), then path */
	PIX_SORT_PATH,        /* path, bytewise */
	PIX_SORT_SIZE,        /* size, largest first, then path */
	PIX_SORT_NONE,        /* catalog order (id): the fastest */
} PixSort;

/* The columns of a record: those of the `file_info` view, in its order
 * (doc/schema.md documents each). */
typedef enum {
	PIX_COL_ID, PIX_COL_PATH, PIX_COL_NAME, PIX_COL_DIR, PIX_COL_SIZE, PIX_COL_MTIME_NS,
	PIX_COL_MD5, PIX_COL_MIME, PIX_COL_MEDIA, PIX_COL_STATE, PIX_COL_ERROR, PIX_COL_DEV, PIX_COL_INO,
	PIX_COL_FIRST_SEEN_AT, PIX_COL_CHANGED_AT, PIX_COL_LAST_SEEN_AT, PIX_COL_HASHED_AT,
	PIX_COL_MISSING_SINCE, PIX_COL_VERIFIED_AT, PIX_COL_VERIFY_STATE,
	PIX_COL_DATE_TAKEN, PIX_COL_DATE_TZ, PIX_COL_DATE_SOURCE, PIX_COL_MAKE, PIX_COL_MODEL,
	PIX_COL_LENS, PIX_COL_EXPOSURE_S, PIX_COL_FNUMBER, PIX_COL_ISO, PIX_COL_FOCAL_MM,
	PIX_COL_ORIENTATION, PIX_COL_WIDTH, PIX_COL_HEIGHT, PIX_COL_GPS_LAT, PIX_COL_GPS_LON,
	PIX_COL_GPS_ALT_M, PIX_COL_DURATION_S, PIX_COL_OSDB_HASH, PIX_COL_SIDECAR_ID,
	PIX_COL_VOLUME, PIX_COL_VOLUME_LABEL, PIX_COL_REL_PATH,
	PIX_COL_APERTURE, PIX_COL_EXPOSURE_PROGRAM, PIX_COL_METERING_MODE, PIX_COL_FLASH,
	PIX_COL_GPS_TIME, PIX_COL_GPS_DIRECTION, PIX_COL_GPS_DIRECTION_REF, PIX_COL_DESCRIPTION,
	PIX_COL_RATING, PIX_COL_LABEL, PIX_COL_TITLE, PIX_COL_CAPTION, PIX_COL_CREATOR, PIX_COL_COPYRIGHT,
	PIX_COL_SUBLOCATION, PIX_COL_CITY, PIX_COL_PROVINCE, PIX_COL_COUNTRY, PIX_COL_COUNTRY_CODE,
	PIX_COL_KEYWORDS, PIX_COL_PEOPLE,
	PIX_N_COLS
} PixColumn;

/* The column names, as in file_info. */
extern const char *const pix_column_names[PIX_N_COLS];
/* Whether column `c` holds lines, each a value (keywords, people): JSON
 * gives them as an array. */
gboolean pix_column_is_list(PixColumn c);

typedef enum {
	PIX_VAL_NULL,
	PIX_VAL_INT,
	PIX_VAL_REAL,
	PIX_VAL_TEXT,   /* valid UTF-8 */
	PIX_VAL_BYTES,  /* a path or name that is not UTF-8: the exact bytes */
} PixValType;

/* One value; `s` is borrowed for the duration of the callback, NUL-terminated,
 * `len` bytes. */
typedef struct {
	PixValType type;
	gint64 i;
	double d;
	const char *s;
	gsize len;
} PixValue;

typedef struct {
	PixValue v[PIX_N_COLS];
	double distance_m;    /* with a `near` filter: metres from that point, else NAN */
} PixRecord;

/* Accessors: the text or bytes (NULL when NULL), the integer (`def` when
 * NULL), the real (NAN when NULL; integers converted). */
const char *pix_record_text(const PixRecord *r, PixColumn c);
gint64 pix_record_int(const PixRecord *r, PixColumn c, gint64 def);
double pix_record_real(const PixRecord *r, PixColumn c);

typedef gboolean (*PixRecordFn)(gpointer data, const PixRecord *r);
/* Calls fn for each file that passes `filter`, in `sort` order, at most
 * `limit` (0: all); returning FALSE stops (then the call returns TRUE). */
gboolean pix_store_each_record(PixStore *s, const PixFilter *filter, PixSort sort, gint64 limit, PixRecordFn fn,
                               gpointer data, GError **error);
/* A keyword level or a person of a file that passes a filter, as they
 * count for it (file_keywords, file_people: its sidecar's where it gives
 * them).  Strings borrowed for the duration of the callback. */
typedef struct {
	gint64 file_id;
	gboolean is_person;
	gint64 ord;             /* its place among the file's keywords (people) */
	const char *name;       /* the keyword level's or the person's name */
	gint64 parent_ord;      /* a keyword: its parent's ord, -1 at the top */
	gboolean is_assigned;   /* a keyword the file gives itself (see schema) */
	const char *type;       /* a person: the region's type, or NULL */
	gboolean has_area;      /* a person: the region, in fractions of the
	                           image as shown (EXIF orientation applied) */
	double x, y, w, h;
} PixTagRow;
typedef gboolean (*PixTagRowFn)(gpointer data, const PixTagRow *row);
/* Calls fn for each keyword level and person of the files that pass
 * `filter`, by file id, the keywords (by ord) before the people (by ord);
 * one statement. */
gboolean pix_store_each_tag_row(PixStore *s, const PixFilter *filter, PixTagRowFn fn, gpointer data,
                                GError **error);

/* The seq of the change log's last entry (0 when it is empty), in the
 * reader's snapshot. */
gboolean pix_store_last_seq(PixStore *s, gint64 *seq, GError **error);

/* One group of files with the same content, for `dups`, or of similar
 * images, for `dups --similar` (`distance` set). */
typedef struct {
	const char *md5;      /* 32 hex digits; NULL for similar images */
	gint64 size;          /* of each copy; of the best copy for similar images */
	guint n_files;        /* paths in the group (>= 2) */
	guint n_distinct;     /* distinct files among them: hard links to one inode count once */
	const PixRecord *const *files; /* n_files records, by path; similar
	                         images: the best copy first, then by distance
	                         to it, then by path (borrowed) */
	/* similar images only (NULL, FALSE for exact duplicates): */
	const guint *distance; /* each file's distance to the best copy, bits */
	const guint64 *phash; /* each file's perceptual hash (phash.h) */
	gboolean is_weak;     /* weak hashes: the same rendition (phash.h) */
} PixDupGroup;
typedef gboolean (*PixDupFn)(gpointer data, const PixDupGroup *g);
/* Calls fn for each group of two or more files that pass `filter`, are not
 * missing, are not empty, and have the same MD5, the group that frees the
 * most bytes first (size * (n_distinct - 1)). */
gboolean pix_store_each_dup(PixStore *s, const PixFilter *filter, PixDupFn fn, gpointer data, GError **error);
/*
 * Calls fn for each group of two or more similar images (similar.h: the
 * centre rule within `distance` bits) among the files that pass `filter`,
 * are not missing and have a perceptual hash (file_phash); most images
 * first, then by the best copy.  Two statements: the hashes of all, then
 * the records of the grouped files by id, a few hundred at a time; a file
 * whose hash is not the same in the second (its content changed between
 * them) leaves its group, and a group whose best copy left is dropped,
 * so every group holds what its hashes said.  Memory: about 40 bytes per
 * hashed file, a few hundred records at a time.
 */
gboolean pix_store_each_similar(PixStore *s, const PixFilter *filter, guint distance, PixDupFn fn, gpointer data,
                                GError **error);

/* Counts and bytes of the files that pass a filter, by one key. */
typedef struct {
	char *key;            /* (owned) NULL: no value (no camera, no date) */
	gint64 n;
	gint64 bytes;
} PixTally;
typedef struct {
	gint64 n, bytes;      /* all files that passed */
	GArray *by_media;     /* PixTally, key a media kind name, most files first */
	GArray *by_camera;    /* PixTally, key "make\tmodel", most files first */
	GArray *by_month;     /* PixTally, key "YYYY-MM" of date_taken, in order; NULL key (no date) last */
	GArray *by_year;      /* PixTally, key "YYYY" of date_taken, in order; NULL key (no date) last */
	GArray *by_lens;      /* PixTally, key the lens, most files first; NULL key (no lens) last */
	GArray *by_rating;    /* PixTally, key the rating ("-1".."5"), highest first; NULL key (none) last */
	GArray *by_keyword;   /* PixTally, key a keyword's path (every level: a file under
	                         Places/Denmark counts for Places too), most files first */
	GArray *by_person;    /* PixTally, key a person's name, most files first */
} PixStats;
void pix_stats_clear(PixStats *st);
/* Fills *out (clear it with pix_stats_clear, also after a failure) in one
 * pass over the files that pass `filter`. */
gboolean pix_store_stats(PixStore *s, const PixFilter *filter, PixStats *out, GError **error);

#endif
