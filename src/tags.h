/*
 * tags.h: the photographer's metadata of one file (issue 28): keywords
 * (flat and hierarchical), people with their regions, rating, label,
 * title, caption, creator, copyright and location names, as XMP and
 * IPTC-IIM write them.  A PixTags is filled by the readers (meta-xmp.c,
 * meta-iptc.c) from every place one file holds them, then finished
 * (pix_tags_finish()), which settles what each place gives: XMP over
 * IPTC, MWG regions over Microsoft's, hierarchical keywords over flat
 * ones that name a level of them.
 *
 * While it is filled a PixTags keeps the values as found, one list per
 * source; finishing makes `keywords` and `people` from them and forgets
 * the lists.  Every string is valid UTF-8 without control characters
 * but newline and tab (the readers' job), and owned.
 *
 * Thread-safety: a PixTags is used by one thread at a time.
 */
#ifndef PIX_TAGS_H
#define PIX_TAGS_H

#include <glib.h>

/* Bounds of what one file may give (more is dropped, with a note). */
#define PIX_TAGS_MAX_KEYWORDS 1000  /* levels of the keyword tree */
#define PIX_TAGS_MAX_DEPTH 16       /* levels of one hierarchical keyword */
#define PIX_TAGS_MAX_PEOPLE 256
#define PIX_TAGS_MAX_TEXT (32 * 1024) /* bytes of a text value or a name */

/* No rating recorded (xmp:Rating is -1 for rejected, 0 unrated, 1..5). */
#define PIX_RATING_UNKNOWN G_MININT

/*
 * One level of a file's keyword tree.  A flat keyword is a tree of one
 * level; "Places|Denmark|Copenhagen" three, each a keyword of the file.
 */
typedef struct {
	char *name;             /* this level's name, as the file spells it (owned) */
	int parent;             /* the index of the level above, -1 at the top */
	int depth;              /* 1 at the top */
	gboolean is_assigned;   /* the file names this keyword itself: a flat
	                           keyword, or the last level of a hierarchical
	                           one (else it only stands above one) */
} PixKeyword;

/* A person (or pet) in the picture. */
typedef struct {
	char *name;             /* (owned) */
	char *type;             /* MWG's region type ("Face", "Pet"), or NULL (owned) */
	gboolean has_area;
	/* the region, when has_area: its top-left corner, width and height
	 * in fractions (0..1) of the image as stored, before EXIF orientation
	 * (as MWG and Microsoft write them); the catalog's file_people view
	 * turns them into the shown image's */
	double x, y, w, h;
} PixPerson;

typedef struct PixTagsRaw PixTagsRaw;

typedef struct {
	/* after pix_tags_finish(): the keyword tree, parents before their
	 * children, in the order first met (PixKeyword) */
	GArray *keywords;
	GArray *people;         /* PixPerson, in order, after pix_tags_finish() */
	int rating;             /* -1..5, or PIX_RATING_UNKNOWN */
	char *label;            /* xmp:Label */
	char *title;            /* dc:title (x-default), IPTC 2:05 */
	char *caption;          /* dc:description (x-default), IPTC 2:120 */
	char *creator;          /* dc:creator, IPTC 2:80: names joined by "; " */
	char *copyright;        /* dc:rights (x-default), IPTC 2:116 */
	char *sublocation;      /* Iptc4xmpCore:Location, IPTC 2:92 */
	char *city;             /* photoshop:City, IPTC 2:90 */
	char *province;         /* photoshop:State, IPTC 2:95 (Province/State) */
	char *country;          /* photoshop:Country, IPTC 2:101 */
	char *country_code;     /* Iptc4xmpCore:CountryCode, IPTC 2:100 */
	PixTagsRaw *raw;        /* the values as found, until finished (owned) */
	char *note;             /* what was dropped as out of bounds or
	                           unusable, or NULL (owned) */
} PixTags;

PixTags *pix_tags_new(void);
/* Accepts NULL. */
void pix_tags_free(PixTags *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixTags, pix_tags_free)

/* Where a value was found, in the order of precedence. */
typedef enum {
	PIX_TAGS_XMP,           /* an XMP packet (sidecar, embedded, extended) */
	PIX_TAGS_IPTC,          /* IPTC-IIM */
} PixTagsSource;

/*
 * The readers' side: each adds what it finds; the first value of a field
 * from the better source wins (XMP over IPTC; within XMP, the main packet
 * over the extended one, as they are read in that order).  `text` is
 * trimmed and taken only when not empty.
 */
/* A scalar text field (&t->title, &t->city, ...), when still unknown. */
void pix_tags_set_text(char **field, const char *text);
/* A flat keyword (dc:subject, IPTC 2:25). */
void pix_tags_add_flat(PixTags *t, PixTagsSource source, const char *keyword);
/* A hierarchical keyword: `path` split at `separator` ('|' for Lightroom
 * and Media Pro, '/' for digiKam and Windows); empty levels dropped.
 * `source_rank` orders the properties (0 first): all paths of the
 * best-ranked property present are taken, the others ignored. */
void pix_tags_add_path(PixTags *t, guint source_rank, const char *path, char separator);
/* A creator's name (dc:creator, IPTC 2:80). */
void pix_tags_add_creator(PixTags *t, PixTagsSource source, const char *name);
/* xmp:Rating (a real from -1 to 5, rounded) when none is known yet;
 * MicrosoftPhoto:Rating is a percentage (`is_percent`), taken only
 * without an xmp:Rating.  FALSE when the text is no rating. */
gboolean pix_tags_set_rating(PixTags *t, const char *text, gboolean is_percent);
/* A named region of list `list` (0: MWG, 1: Microsoft's; the first that
 * has any is taken), area in stored-image fractions (has_area FALSE:
 * none), or a name alone (Iptc4xmpExt:PersonInImage, list 2: added when
 * no region names it).  Takes `p`'s strings. */
void pix_tags_add_person(PixTags *t, guint list, PixPerson *p);
/* Records a note (printf-style), kept with the earlier ones. */
void pix_tags_note(PixTags *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Fills what `dst` lacks from `src` (both not yet finished): as if src's
 * values had been added after dst's. */
void pix_tags_fill(PixTags *dst, const PixTags *src);

/*
 * Makes `keywords` and `people` from what was added (idempotent): the
 * paths of the best-ranked hierarchical property, as a tree whose levels
 * are matched by name ignoring case (the first spelling kept); then the
 * flat keywords of the best source (XMP's dc:subject, else IPTC's),
 * each but those naming a level of the tree (Lightroom lists every
 * level in dc:subject) added as a tree of one level; then the people of
 * the first region list that has any, and the names of PersonInImage no
 * region names.  Returns FALSE when the file gave no value at all (but
 * perhaps a note): the caller drops the PixTags.
 */
gboolean pix_tags_finish(PixTags *t);

/* After finishing: the assigned keywords' paths, levels joined by '/',
 * one per line, and the people's names one per line (each once), or NULL
 * when there are none (transfer full): the catalog's meta.keywords and
 * meta.people. */
char *pix_tags_keyword_lines(const PixTags *t);
char *pix_tags_people_lines(const PixTags *t);
/* The path of keyword `i`, levels joined by '/' (transfer full). */
char *pix_tags_keyword_path(const PixTags *t, guint i);

/* The catalog's look-up key of a keyword, a person's name, a title or a
 * caption (valid UTF-8): Unicode case folding, so that --keyword,
 * --person and --text find a word in any case on either backend
 * (transfer full; NULL for NULL). */
char *pix_tags_key(const char *text);

/* The invariants of a finished PixTags: parents before children, depth
 * one more than the parent's, bounds, UTF-8, areas within 0..1. */
gboolean pix_tags_check(const PixTags *t);

#endif
