/*
 * exif.c: EXIF blocks into PixMeta through libexif (see exif.h).
 *
 * Reads the block it is given; writes the PixMeta it is given.  Runs on the
 * hash threads; every call has its own ExifData and ExifLog.
 *
 * Invariants:
 *  1. A value is taken from an entry only after its format and component
 *     count were checked against the entry's size: a hostile block can make
 *     a field unknown, never make us read past an entry.
 *  2. Tags are read from the IFD the standard puts them in, falling back to
 *     the other main IFD (IFD0 <-> Exif) where files put them wrongly;
 *     GPS tags only from the GPS IFD.
 *  3. Strings stored in `meta` are valid UTF-8 (Latin-1 is converted).
 *  4. Everything libexif allocates for a block comes from the calling
 *     thread's arena and is given back at once when pix_exif_read()
 *     returns (arena_reset): no pointer into the arena outlives the call.
 *
 * The arena: libexif allocates every entry, its data, its IFD's array of
 * entries (grown by one at each entry) and its maker notes separately;
 * with the C library's allocator that was a third of the metadata's CPU
 * on small camera JPEGs (a million-file import spent 2 to 3 us a file in
 * calloc and free, issue 24).  Its ExifMem hooks take no context, so the
 * arena is the thread's own (the hash threads each have one; the first
 * block is kept for the next call and freed when the thread ends).
 * A reallocation doubles the room, so an IFD of n entries costs O(n)
 * bytes, not O(n^2), whatever a hostile file claims.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "exif.h"
#include "meta-value.h"

#include <libexif/exif-data.h>
#include <libexif/exif-log.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ExifData, exif_data_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ExifLog, exif_log_unref)

/* --- the arena ------------------------------------------------------------ */

#define ARENA_BLOCK_BYTES (64 * 1024)
#define ARENA_ALIGN 16

typedef struct ArenaBlock ArenaBlock;
struct ArenaBlock {
	ArenaBlock *older;      /* the block filled before this one, or NULL */
	gsize cap;              /* bytes of data[] */
	gsize used;
	max_align_t data[];
};

/* Before each allocation: the bytes it may grow to in place. */
typedef union {
	gsize room;
	guint8 align[ARENA_ALIGN];
} ArenaHeader;

static __thread ArenaBlock *arena;  /* the block being filled (owned), or NULL */

static void arena_free_blocks(gpointer p)
{
	for (ArenaBlock *b = p, *older; b != NULL; b = older) {
		older = b->older;
		g_free(b);
	}
}

/* The thread's blocks, freed when it ends (the newest block heads them). */
static GPrivate arena_owner = G_PRIVATE_INIT(arena_free_blocks);

static void arena_own(ArenaBlock *head)
{
	arena = head;
	g_private_set(&arena_owner, head);   /* (does not free the old head) */
}

/* Gives back everything allocated since the last reset; keeps the oldest
 * block when it is of the usual size, for the next call. */
static void arena_reset(void)
{
	if (arena == NULL)
		return;
	ArenaBlock *oldest = arena;
	while (oldest->older != NULL)
		oldest = oldest->older;
	for (ArenaBlock *b = arena, *older; b != oldest; b = older) {
		older = b->older;
		g_free(b);
	}
	if (oldest->cap > ARENA_BLOCK_BYTES) {
		g_free(oldest);
		oldest = NULL;
	} else {
		oldest->used = 0;
	}
	arena_own(oldest);
}

static void *arena_take(gsize room, gboolean is_zeroed)
{
	room = (room + ARENA_ALIGN - 1) & ~(gsize)(ARENA_ALIGN - 1);
	gsize need = sizeof(ArenaHeader) + room;
	if (arena == NULL || arena->cap - arena->used < need) {
		gsize cap = MAX(ARENA_BLOCK_BYTES, need);
		ArenaBlock *b = g_malloc(sizeof(ArenaBlock) + cap);
		b->cap = cap;
		b->used = 0;
		b->older = arena;
		arena_own(b);
	}
	ArenaHeader *h = (ArenaHeader *)((guint8 *)arena->data + arena->used);
	arena->used += need;
	h->room = room;
	void *p = h + 1;
	if (is_zeroed)
		memset(p, 0, room);
	return p;
}

static void *arena_alloc(ExifLong n)
{
	/* libexif's own allocator is calloc: it relies on zeroed memory */
	return arena_take(MAX(n, 1), TRUE);
}

static void *arena_realloc(void *p, ExifLong n)
{
	if (p == NULL)
		return arena_take(MAX(n, 1), FALSE);
	ArenaHeader *h = (ArenaHeader *)p - 1;
	if (n <= h->room)
		return p;
	void *q = arena_take(MAX((gsize)n, 2 * h->room), FALSE);
	memcpy(q, p, h->room);
	return q;
}

static void arena_release(void *p)
{
	(void)p;    /* all of it goes at arena_reset() */
}

/* What libexif's log said, keeping the first corrupt-data message. */
typedef struct {
	char *first_problem;
	guint n_problems;
} LogSink;

static void on_exif_log(ExifLog *log, ExifLogCode code, const char *domain, const char *format,
                        va_list args, void *data)
{
	LogSink *sink = data;
	(void)log;
	if (code != EXIF_LOG_CODE_CORRUPT_DATA)
		return;
	/* maker notes are vendor-private and often off by design; their
	 * problems do not make the standard EXIF data corrupt */
	if (domain != NULL && g_str_has_prefix(domain, "ExifMnote"))
		return;
	sink->n_problems++;
	if (sink->first_problem == NULL)
		sink->first_problem = g_strdup_vprintf(format, args);
}

/* The entry for `tag` in `ifd` or, failing that, in `fallback` (pass the
 * same IFD twice for none). */
static ExifEntry *find(ExifData *ed, ExifTag tag, ExifIfd ifd, ExifIfd fallback)
{
	ExifEntry *e = exif_content_get_entry(ed->ifd[ifd], tag);
	if (e == NULL && fallback != ifd)
		e = exif_content_get_entry(ed->ifd[fallback], tag);
	return e;
}

/* Whether `e` really holds `n` values of its format. */
static gboolean has_values(const ExifEntry *e, unsigned long n)
{
	unsigned int size = exif_format_get_size(e->format);
	return e->data != NULL && size > 0 && e->components >= n && e->size >= size * n;
}

/* Value `i` of an integer entry (BYTE, SHORT, LONG and signed kinds). */
static gboolean get_int(const ExifEntry *e, ExifByteOrder order, unsigned long i, gint64 *out)
{
	if (e == NULL || !has_values(e, i + 1))
		return FALSE;
	const unsigned char *p = e->data + i * exif_format_get_size(e->format);
	switch (e->format) {
	case EXIF_FORMAT_BYTE:
	case EXIF_FORMAT_UNDEFINED:
		*out = p[0];
		return TRUE;
	case EXIF_FORMAT_SBYTE:
		*out = (signed char)p[0];
		return TRUE;
	case EXIF_FORMAT_SHORT:
		*out = exif_get_short(p, order);
		return TRUE;
	case EXIF_FORMAT_SSHORT:
		*out = exif_get_sshort(p, order);
		return TRUE;
	case EXIF_FORMAT_LONG:
		*out = exif_get_long(p, order);
		return TRUE;
	case EXIF_FORMAT_SLONG:
		*out = exif_get_slong(p, order);
		return TRUE;
	default:
		return FALSE;
	}
}

/* Value `i` of a rational entry (or an integer one) as a double. */
static gboolean get_real(const ExifEntry *e, ExifByteOrder order, unsigned long i, double *out)
{
	gint64 n;
	if (e == NULL || !has_values(e, i + 1))
		return FALSE;
	const unsigned char *p = e->data + i * exif_format_get_size(e->format);
	if (e->format == EXIF_FORMAT_RATIONAL) {
		ExifRational r = exif_get_rational(p, order);
		if (r.denominator == 0)
			return FALSE;
		*out = (double)r.numerator / (double)r.denominator;
		return TRUE;
	}
	if (e->format == EXIF_FORMAT_SRATIONAL) {
		ExifSRational r = exif_get_srational(p, order);
		if (r.denominator == 0)
			return FALSE;
		*out = (double)r.numerator / (double)r.denominator;
		return TRUE;
	}
	if (!get_int(e, order, i, &n))
		return FALSE;
	*out = (double)n;
	return TRUE;
}

/* An ASCII entry as trimmed UTF-8, NULL when empty (transfer full). */
static char *get_string(const ExifEntry *e)
{
	if (e == NULL || e->data == NULL ||
	    (e->format != EXIF_FORMAT_ASCII && e->format != EXIF_FORMAT_UNDEFINED))
		return NULL;
	return pix_meta_text(e->data, e->size);
}

/* The date taken: DateTimeOriginal, else CreateDate, else ModifyDate,
 * each with its own sub-second and offset tags. */
static void read_date(ExifData *ed, PixMeta *m)
{
	static const struct {
		ExifTag date, subsec, offset;
		ExifIfd ifd, fallback;
		const char *name;
	} sources[] = {
		{ EXIF_TAG_DATE_TIME_ORIGINAL, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, EXIF_TAG_OFFSET_TIME_ORIGINAL,
		  EXIF_IFD_EXIF, EXIF_IFD_0, "DateTimeOriginal" },
		{ EXIF_TAG_DATE_TIME_DIGITIZED, EXIF_TAG_SUB_SEC_TIME_DIGITIZED, EXIF_TAG_OFFSET_TIME_DIGITIZED,
		  EXIF_IFD_EXIF, EXIF_IFD_0, "CreateDate" },
		{ EXIF_TAG_DATE_TIME, EXIF_TAG_SUB_SEC_TIME, EXIF_TAG_OFFSET_TIME,
		  EXIF_IFD_0, EXIF_IFD_EXIF, "ModifyDate" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(sources); i++) {
		g_autofree char *text = get_string(find(ed, sources[i].date, sources[i].ifd, sources[i].fallback));
		if (text == NULL)
			continue;
		g_autofree char *subsec = get_string(find(ed, sources[i].subsec, EXIF_IFD_EXIF, EXIF_IFD_0));
		g_autofree char *offset = get_string(find(ed, sources[i].offset, EXIF_IFD_EXIF, EXIF_IFD_0));
		if (pix_meta_set_exif_date(m, text, subsec, offset, sources[i].name))
			return;
	}
}

/* A GPS coordinate tag and its hemisphere reference as signed degrees. */
static gboolean read_coordinate(ExifData *ed, ExifByteOrder order, ExifTag value_tag, ExifTag ref_tag,
                                char negative_ref, double *out)
{
	ExifContent *gps = ed->ifd[EXIF_IFD_GPS];
	ExifEntry *e = exif_content_get_entry(gps, value_tag);
	double dms[3];
	guint n = 0;
	while (n < 3 && get_real(e, order, n, &dms[n]))
		n++;
	g_autofree char *ref = get_string(exif_content_get_entry(gps, ref_tag));
	return pix_meta_coordinate(dms, n, ref, negative_ref, value_tag == EXIF_TAG_GPS_LATITUDE ? 90.0 : 180.0, out);
}

static void read_gps(ExifData *ed, ExifByteOrder order, PixMeta *m)
{
	double lat, lon, alt;
	gint64 alt_ref = 0;

	if (ed->ifd[EXIF_IFD_GPS] == NULL || ed->ifd[EXIF_IFD_GPS]->count == 0)
		return;
	/* a position is one value: both coordinates, or neither */
	if (isnan(m->gps_lat) && isnan(m->gps_lon) &&
	    read_coordinate(ed, order, EXIF_TAG_GPS_LATITUDE, EXIF_TAG_GPS_LATITUDE_REF, 'S', &lat) &&
	    read_coordinate(ed, order, EXIF_TAG_GPS_LONGITUDE, EXIF_TAG_GPS_LONGITUDE_REF, 'W', &lon)) {
		m->gps_lat = lat;
		m->gps_lon = lon;
	}
	ExifContent *gps = ed->ifd[EXIF_IFD_GPS];
	double hms[3], dir;
	guint n = 0;
	const ExifEntry *ts = exif_content_get_entry(gps, EXIF_TAG_GPS_TIME_STAMP);
	while (n < 3 && get_real(ts, order, n, &hms[n]))
		n++;
	g_autofree char *date_stamp = get_string(exif_content_get_entry(gps, EXIF_TAG_GPS_DATE_STAMP));
	pix_meta_set_gps_time(m, hms, n, date_stamp);
	if (get_real(exif_content_get_entry(gps, EXIF_TAG_GPS_IMG_DIRECTION), order, 0, &dir)) {
		g_autofree char *ref = get_string(exif_content_get_entry(gps, EXIF_TAG_GPS_IMG_DIRECTION_REF));
		pix_meta_set_direction(m, dir, ref);
	}
	if (isnan(m->gps_alt_m) &&
	    get_real(exif_content_get_entry(gps, EXIF_TAG_GPS_ALTITUDE), order, 0, &alt) && isfinite(alt)) {
		get_int(exif_content_get_entry(gps, EXIF_TAG_GPS_ALTITUDE_REF), order, 0, &alt_ref);
		m->gps_alt_m = alt_ref == 1 ? -alt : alt;
	}
}

/* ISO: the first non-zero of its values (Nikon writes "0 200"). */
static void read_iso(const ExifEntry *e, ExifByteOrder order, PixMeta *m)
{
	gint64 n;
	for (unsigned long i = 0; e != NULL && i < e->components && i < 4; i++) {
		if (get_int(e, order, i, &n) && n > 0) {
			m->iso = n;
			return;
		}
	}
}

static gboolean read_block(ExifMem *mem, const guint8 *data, gsize len, PixMeta *m, char **problem);

gboolean pix_exif_read(const guint8 *data, gsize len, PixMeta *m, char **problem)
{
	static const guint8 header[6] = { 'E', 'x', 'i', 'f', 0, 0 };

	*problem = NULL;
	if (len < 6 + 8 || memcmp(data, header, 6) != 0 ||
	    !((data[6] == 'I' && data[7] == 'I') || (data[6] == 'M' && data[7] == 'M'))) {
		*problem = g_strdup("corrupt EXIF: no TIFF header");
		return FALSE;
	}
	ExifMem *mem = exif_mem_new(arena_alloc, arena_realloc, arena_release);
	gboolean is_ok = read_block(mem, data, len, m, problem);
	exif_mem_unref(mem);
	arena_reset();
	return is_ok;
}

/* pix_exif_read() with libexif's memory from `mem`. */
static gboolean read_block(ExifMem *mem, const guint8 *data, gsize len, PixMeta *m, char **problem)
{
	LogSink sink = { 0 };
	gint64 n;
	double v;

	g_autoptr(ExifData) ed = exif_data_new_mem(mem);
	g_autoptr(ExifLog) log = exif_log_new_mem(mem);
	if (mem == NULL || ed == NULL || log == NULL)
		g_error("libexif cannot allocate");
	exif_log_set_func(log, on_exif_log, &sink);
	exif_data_log(ed, log);
	exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
	exif_data_unset_option(ed, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS);
	exif_data_load_data(ed, data, (unsigned int)MIN(len, G_MAXUINT));
	ExifByteOrder order = exif_data_get_byte_order(ed);

	pix_meta_set_string(&m->make, get_string(find(ed, EXIF_TAG_MAKE, EXIF_IFD_0, EXIF_IFD_EXIF)));
	pix_meta_set_string(&m->model, get_string(find(ed, EXIF_TAG_MODEL, EXIF_IFD_0, EXIF_IFD_EXIF)));
	pix_meta_set_string(&m->lens, get_string(find(ed, EXIF_TAG_LENS_MODEL, EXIF_IFD_EXIF, EXIF_IFD_0)));
	read_date(ed, m);
	if (isnan(m->exposure_s) && get_real(find(ed, EXIF_TAG_EXPOSURE_TIME, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &v) && v > 0)
		m->exposure_s = v;
	if (isnan(m->fnumber) && get_real(find(ed, EXIF_TAG_FNUMBER, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &v) && v > 0)
		m->fnumber = v;
	if (isnan(m->focal_mm) && get_real(find(ed, EXIF_TAG_FOCAL_LENGTH, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &v) && v > 0)
		m->focal_mm = v;
	if (m->iso < 0)
		read_iso(find(ed, EXIF_TAG_ISO_SPEED_RATINGS, EXIF_IFD_EXIF, EXIF_IFD_0), order, m);
	/* IFD1 (the thumbnail) as a last resort: its orientation is the
	 * image's when IFD0 has none */
	if (m->orientation < 0 && (get_int(find(ed, EXIF_TAG_ORIENTATION, EXIF_IFD_0, EXIF_IFD_EXIF), order, 0, &n) ||
	                           get_int(find(ed, EXIF_TAG_ORIENTATION, EXIF_IFD_1, EXIF_IFD_1), order, 0, &n)) &&
	    n >= 1 && n <= 8)
		m->orientation = (int)n;
	read_gps(ed, order, m);
	if (get_real(find(ed, EXIF_TAG_APERTURE_VALUE, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &v))
		pix_meta_set_aperture(m, v);
	if (get_int(find(ed, EXIF_TAG_EXPOSURE_PROGRAM, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &n))
		pix_meta_set_exposure_program(m, n);
	if (get_int(find(ed, EXIF_TAG_METERING_MODE, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &n))
		pix_meta_set_metering_mode(m, n);
	if (get_int(find(ed, EXIF_TAG_FLASH, EXIF_IFD_EXIF, EXIF_IFD_0), order, 0, &n))
		pix_meta_set_flash(m, n);
	pix_meta_set_string(&m->description, get_string(find(ed, EXIF_TAG_IMAGE_DESCRIPTION, EXIF_IFD_0, EXIF_IFD_EXIF)));

	if (sink.n_problems > 0) {
		*problem = g_strdup_printf("corrupt EXIF: %s", sink.first_problem);
		g_free(sink.first_problem);
		return FALSE;
	}
	return TRUE;
}
