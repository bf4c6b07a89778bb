/*
 * store-query.c: the catalog as front ends and scripts read it: records of
 * the `file_info` view that pass a filter (ls, export), groups of files
 * with the same content (dups), and tallies (stats).
 *
 * Reads the catalog through a reader PixStore, only through the public
 * view, so the commands read what doc/schema.md promises front ends.
 * Main thread (any one thread per PixStore).
 *
 * Invariants:
 *  1. Every value from the command line reaches SQLite as a bound
 *     parameter; the SQL text is made only of constants.
 *  2. One call reads one snapshot: each answer is one statement; but for
 *     similar images, whose records are read again by id after the
 *     grouping, and kept only where their hash is still the one grouped
 *     (pix_store_each_similar()).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "query.h"
#include "phash.h"
#include "similar.h"
#include "store-int.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>


const char *const pix_column_names[PIX_N_COLS] = {
	"id", "path", "name", "dir", "size", "mtime_ns", "md5", "mime", "media", "state", "error", "dev", "ino",
	"first_seen_at", "changed_at", "last_seen_at", "hashed_at", "missing_since", "verified_at",
	"verify_state", "date_taken", "date_tz", "date_source", "make", "model", "lens", "exposure_s",
	"fnumber", "iso", "focal_mm", "orientation", "width", "height", "gps_lat", "gps_lon", "gps_alt_m",
	"duration_s", "osdb_hash", "sidecar_id", "volume", "volume_label", "rel_path",
	"aperture", "exposure_program", "metering_mode", "flash", "gps_time", "gps_direction",
	"gps_direction_ref", "description",
	"rating", "label", "title", "caption", "creator", "copyright", "sublocation", "city", "province", "country",
	"country_code", "keywords", "people",
};

gboolean pix_column_is_list(PixColumn c)
{
	return c == PIX_COL_KEYWORDS || c == PIX_COL_PEOPLE;
}

/* The mean radius of the Earth (IUGG), metres. */
#define EARTH_RADIUS_M 6371008.8

/* A statement being built: its text and, in order, its parameters. */
typedef enum { ARG_TEXT, ARG_BLOB, ARG_REAL, ARG_INT } ArgType;
typedef struct {
	ArgType type;
	char *s;        /* owned */
	gsize len;
	double d;
	gint64 i;
} Arg;

typedef struct {
	GString *sql;
	GArray *args;   /* Arg */
	char **paths;   /* borrowed: bound by pix_store_bind_under() */
	int under_first; /* their first parameter number */
	const char *like;   /* the catalog's case-insensitive LIKE: SQLite's
	                       LIKE ignores case (ASCII), PostgreSQL's does not */
	gboolean has_bytes; /* the paths, names and volume names are text (a
	                       display form where not UTF-8), their bytes in
	                       *_bytes (PixStoreBackend.has_bytes_columns) */
} Sql;

static void arg_clear(gpointer p)
{
	g_free(((Arg *)p)->s);
}

static void sql_init(Sql *q, PixStore *s, const char *text)
{
	q->has_bytes = s->be->has_bytes_columns;
	q->like = s->be->like;
	q->sql = g_string_new(text);
	q->args = g_array_new(FALSE, TRUE, sizeof(Arg));
	g_array_set_clear_func(q->args, arg_clear);
	q->paths = NULL;
	q->under_first = 0;
}

static void sql_clear(Sql *q)
{
	g_string_free(q->sql, TRUE);
	g_array_free(q->args, TRUE);
}

/* Appends `text` with one numbered parameter in place of each '?'. */
static void sql_add(Sql *q, const char *text, ...)
{
	va_list ap;
	va_start(ap, text);
	for (const char *p = text; *p != '\0'; p++) {
		if (*p != '?') {
			g_string_append_c(q->sql, *p);
			continue;
		}
		Arg a = { .type = va_arg(ap, int) };
		if (a.type == ARG_REAL) {
			a.d = va_arg(ap, double);
		} else if (a.type == ARG_INT) {
			a.i = va_arg(ap, gint64);
		} else {
			const char *s = va_arg(ap, const char *);
			a.len = strlen(s);
			a.s = g_strdup(s);
		}
		g_array_append_val(q->args, a);
		g_string_append_printf(q->sql, "?%u", q->args->len);
	}
	va_end(ap);
}

/* "%text%", with LIKE's wildcards in `text` escaped by '\'. */
static char *like_pattern(const char *text)
{
	GString *p = g_string_new("%");
	for (const char *c = text; *c != '\0'; c++) {
		if (*c == '%' || *c == '_' || *c == '\\')
			g_string_append_c(p, '\\');
		g_string_append_c(p, *c);
	}
	g_string_append_c(p, '%');
	return g_string_free(p, FALSE);
}

/* `text` folded by pix_tags_key(), LIKE's wildcards escaped by '\', between
 * `before` and `after` (transfer full): keywords.key, people.key,
 * title_key and caption_key are folded so, on both backends alike. */
static char *folded_pattern(const char *before, const char *text, const char *after)
{
	g_autofree char *folded = pix_tags_key(text);
	GString *p = g_string_new(before);
	for (const char *c = folded; *c != '\0'; c++) {
		if (*c == '%' || *c == '_' || *c == '\\')
			g_string_append_c(p, '\\');
		g_string_append_c(p, *c);
	}
	g_string_append(p, after);
	return g_string_free(p, FALSE);
}

/* The filter's conditions on the photographer's metadata. */
static void sql_filter_tags(Sql *q, const PixFilter *f)
{
	if (f->keyword != NULL) {
		/* the keyword itself, the levels below a path, a level so named */
		g_autofree char *key = pix_tags_key(f->keyword);
		g_strstrip(key);
		while (g_str_has_suffix(key, "/"))
			key[strlen(key) - 1] = '\0';
		g_autofree char *below = folded_pattern("", key, "/%");
		g_autofree char *named = folded_pattern("%/", key, "");
		sql_add(q, " AND id IN (SELECT file_id FROM file_keywords WHERE key = ?", ARG_TEXT, key);
		sql_add(q, " OR key LIKE ? ESCAPE '\\'", ARG_TEXT, below);
		sql_add(q, " OR key LIKE ? ESCAPE '\\')", ARG_TEXT, named);
	}
	if (f->has_rating)
		sql_add(q, " AND rating >= ?", ARG_INT, f->min_rating);
	if (f->person != NULL) {
		g_autofree char *key = pix_tags_key(f->person);
		sql_add(q, " AND id IN (SELECT file_id FROM file_people WHERE key = ?)", ARG_TEXT, g_strstrip(key));
	}
	if (f->text != NULL) {
		/* the folded word in the folded keys (schema/0010): the same
		 * answer on both backends, whatever their LIKE folds */
		g_autofree char *key = folded_pattern("%", f->text, "%");
		sql_add(q, " AND (id IN (SELECT file_id FROM file_text_keys WHERE title_key LIKE ? ESCAPE '\\'", ARG_TEXT, key);
		sql_add(q, " OR caption_key LIKE ? ESCAPE '\\')", ARG_TEXT, key);
		sql_add(q, " OR id IN (SELECT file_id FROM file_keywords WHERE key LIKE ? ESCAPE '\\'))", ARG_TEXT, key);
	}
}

/* Great-circle distance in metres (haversine), for `near` filters. */
static double distance_m(double lat1, double lon1, double lat2, double lon2)
{
	double rad = G_PI / 180.0;
	double dlat = (lat2 - lat1) * rad, dlon = (lon2 - lon1) * rad;
	double a = sin(dlat / 2) * sin(dlat / 2) + cos(lat1 * rad) * cos(lat2 * rad) * sin(dlon / 2) * sin(dlon / 2);
	return 2 * EARTH_RADIUS_M * asin(sqrt(fmin(1.0, a)));
}

static void sql_distance_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == PIX_DB_NULL) {
			sqlite3_result_null(ctx);
			return;
		}
	sqlite3_result_double(ctx, distance_m(sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1]),
	                                      sqlite3_value_double(argv[2]), sqlite3_value_double(argv[3])));
}

/* The expression of a record's distance from the filter's point. */
static void sql_distance(Sql *q, const PixFilter *f)
{
	sql_add(q, "pix_distance_m(gps_lat, gps_lon, ?, ?)", ARG_REAL, f->near_lat, ARG_REAL, f->near_lon);
}

/* Appends the filter's conditions, after a WHERE already written. */
static void sql_filter(Sql *q, const PixFilter *f)
{
	static const char *const show_sql[] = {
		[PIX_SHOW_PRESENT] = " state NOT IN ('missing', 'offline')",
		[PIX_SHOW_MISSING] = " state = 'missing'",
		[PIX_SHOW_ERRORS] = " state = 'error'",
		[PIX_SHOW_ALL] = " 1 = 1",
	};
	g_string_append(q->sql, f->is_offline && f->show == PIX_SHOW_PRESENT ? " state <> 'missing'" : show_sql[f->show]);
	if (f->media_mask != 0) {
		const char *sep = " AND media IN (";
		for (int m = 0; m < PIX_N_MEDIA; m++)
			if (f->media_mask & (1u << m)) {
				g_string_append(q->sql, sep);
				sql_add(q, "?", ARG_TEXT, pix_media_name(m));
				sep = ", ";
			}
		g_string_append(q->sql, ")");
	}
	if (f->date_from != NULL)
		sql_add(q, " AND date_taken >= ?", ARG_TEXT, f->date_from);
	if (f->date_to != NULL)
		sql_add(q, " AND date_taken < ?", ARG_TEXT, f->date_to);
	if (f->is_no_date)
		g_string_append(q->sql, " AND date_taken IS NULL");
	if (f->make != NULL) {
		g_autofree char *p = like_pattern(f->make);
		g_string_append_printf(q->sql, " AND make %s", q->like);
		sql_add(q, " ? ESCAPE '\\'", ARG_TEXT, p);
	}
	if (f->model != NULL) {
		g_autofree char *p = like_pattern(f->model);
		g_string_append_printf(q->sql, " AND model %s", q->like);
		sql_add(q, " ? ESCAPE '\\'", ARG_TEXT, p);
	}
	if (f->has_near) {
		/* a box around the circle first, which the cheap comparisons
		 * settle for most rows; longitudes near the poles or across
		 * the antimeridian: any */
		double dlat = f->radius_m / (EARTH_RADIUS_M * G_PI / 180.0);
		double c = cos(fmin(89.0, fabs(f->near_lat) + dlat) * G_PI / 180.0);
		double dlon = dlat / c;
		sql_add(q, " AND gps_lat BETWEEN ? AND ?", ARG_REAL, f->near_lat - dlat, ARG_REAL, f->near_lat + dlat);
		if (f->near_lon - dlon >= -180.0 && f->near_lon + dlon <= 180.0)
			sql_add(q, " AND gps_lon BETWEEN ? AND ?", ARG_REAL, f->near_lon - dlon, ARG_REAL, f->near_lon + dlon);
		g_string_append(q->sql, " AND ");
		sql_distance(q, f);
		sql_add(q, " <= ?", ARG_REAL, f->radius_m);
	}
	sql_filter_tags(q, f);
	if (f->paths != NULL && f->paths[0] != NULL) {
		q->paths = f->paths;
		q->under_first = (int)q->args->len + 1;
		pix_store_sql_under(q->sql, q->has_bytes ? "dir_bytes" : "dir", q->has_bytes ? "name_bytes" : "name",
		                    g_strv_length(f->paths), q->under_first);
	}
}

/* The column list of a record, then ", distance" (NULL without a point). */
static void sql_columns(Sql *q, const PixFilter *f)
{
	for (int c = 0; c < PIX_N_COLS; c++) {
		gboolean is_bytes = q->has_bytes && (c == PIX_COL_PATH || c == PIX_COL_NAME || c == PIX_COL_DIR ||
		                                 c == PIX_COL_REL_PATH || c == PIX_COL_VOLUME ||
		                                 c == PIX_COL_VOLUME_LABEL);
		g_string_append_printf(q->sql, "%s%s%s%s", c == 0 ? "" : ", ", pix_column_names[c],
		                       is_bytes ? "_bytes AS " : "", is_bytes ? pix_column_names[c] : "");
	}
	if (f->has_near) {
		g_string_append(q->sql, ", ");
		sql_distance(q, f);
	} else {
		g_string_append(q->sql, ", NULL");
	}
}

static PixStmt *sql_prepare(PixStore *s, Sql *q, GError **error)
{
	PixDb *db = pix_store_db(s);
	PixStmt *st = NULL;
	/* PostgreSQL's catalog has pix_distance_m() as a SQL function (schema/pg) */
	int rc = db->lite == NULL ? PIX_DB_OK
	         : sqlite3_create_function(db->lite, "pix_distance_m", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
	                                   sql_distance_fn, NULL, NULL);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, q->sql->str, &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot prepare a query");
		return NULL;
	}
	for (guint i = 0; i < q->args->len; i++) {
		Arg *a = &g_array_index(q->args, Arg, i);
		if (a->type == ARG_REAL)
			pix_db_bind_double(st, (int)i + 1, a->d);
		else if (a->type == ARG_INT)
			pix_db_bind_int64(st, (int)i + 1, a->i);
		else
			pix_db_bind_text(st, (int)i + 1, a->s, (int)a->len, PIX_DB_STATIC);
	}
	if (q->paths != NULL)
		pix_store_bind_under(st, q->under_first, q->paths);
	return st;
}

static void value_from(PixValue *v, PixStmt *st, int i)
{
	memset(v, 0, sizeof(*v));
	switch (pix_db_column_type(st, i)) {
	case PIX_DB_INTEGER:
		v->type = PIX_VAL_INT;
		v->i = pix_db_column_int64(st, i);
		v->d = (double)v->i;
		break;
	case PIX_DB_FLOAT:
		v->type = PIX_VAL_REAL;
		v->d = pix_db_column_double(st, i);
		break;
	case PIX_DB_TEXT:
		v->type = PIX_VAL_TEXT;
		v->s = (const char *)pix_db_column_text(st, i);
		v->len = (gsize)pix_db_column_bytes(st, i);
		break;
	case PIX_DB_BLOB:
		/* blobs are paths and names that are not UTF-8; as bytes, NUL-terminated */
		v->type = PIX_VAL_BYTES;
		v->s = (const char *)pix_db_column_text(st, i);
		v->len = (gsize)pix_db_column_bytes(st, i);
		break;
	default:
		v->type = PIX_VAL_NULL;
	}
}

static const char *column_text_or_null(PixStmt *st, int i)
{
	return pix_db_column_type(st, i) == PIX_DB_NULL ? NULL : (const char *)pix_db_column_text(st, i);
}

static void record_from(PixRecord *r, PixStmt *st, int first)
{
	for (int c = 0; c < PIX_N_COLS; c++)
		value_from(&r->v[c], st, first + c);
	r->distance_m = pix_db_column_type(st, first + PIX_N_COLS) == PIX_DB_NULL
	                ? NAN : pix_db_column_double(st, first + PIX_N_COLS);
}

const char *pix_record_text(const PixRecord *r, PixColumn c)
{
	const PixValue *v = &r->v[c];
	return v->type == PIX_VAL_TEXT || v->type == PIX_VAL_BYTES ? v->s : NULL;
}

gint64 pix_record_int(const PixRecord *r, PixColumn c, gint64 def)
{
	const PixValue *v = &r->v[c];
	return v->type == PIX_VAL_INT ? v->i : v->type == PIX_VAL_REAL ? (gint64)v->d : def;
}

double pix_record_real(const PixRecord *r, PixColumn c)
{
	const PixValue *v = &r->v[c];
	return v->type == PIX_VAL_INT || v->type == PIX_VAL_REAL ? v->d : NAN;
}

/* Steps `st` to its end, calling fn(data, st) per row; FALSE from fn stops. */
typedef gboolean (*RowFn)(gpointer data, PixStmt *st);
static gboolean each_row(PixStore *s, PixStmt *st, RowFn fn, gpointer data, GError **error)
{
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		if (!fn(data, st))
			return TRUE;
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the catalog");
		return FALSE;
	}
	return TRUE;
}

typedef struct {
	PixRecordFn fn;
	gpointer data;
} EachRecord;

static gboolean record_row(gpointer data, PixStmt *st)
{
	EachRecord *e = data;
	PixRecord r;
	record_from(&r, st, 0);
	return e->fn(e->data, &r);
}

gboolean pix_store_each_record(PixStore *s, const PixFilter *filter, PixSort sort, gint64 limit, PixRecordFn fn,
                               gpointer data, GError **error)
{
	static const char *const order_sql[] = {
		[PIX_SORT_DATE] = " ORDER BY date_taken IS NULL, date_taken, path",
		[PIX_SORT_PATH] = " ORDER BY path",
		[PIX_SORT_SIZE] = " ORDER BY size DESC, path",
		[PIX_SORT_NONE] = " ORDER BY id",
	};
	Sql q;
	sql_init(&q, s, "SELECT ");
	sql_columns(&q, filter);
	g_string_append(q.sql, " FROM file_info WHERE");
	sql_filter(&q, filter);
	g_string_append(q.sql, order_sql[sort]);
	if (limit > 0)
		g_string_append_printf(q.sql, " LIMIT %" G_GINT64_FORMAT, limit);
	g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
	EachRecord e = { fn, data };
	gboolean is_ok = st != NULL && each_row(s, st, record_row, &e, error);
	sql_clear(&q);
	return is_ok;
}

/* --- the photographer's metadata, row by row --- */

typedef struct {
	PixTagRowFn fn;
	gpointer data;
} EachTag;

static gboolean tag_row(gpointer data, PixStmt *st)
{
	EachTag *e = data;
	PixTagRow r = {
		.is_person = pix_db_column_int64(st, 0) != 0,
		.file_id = pix_db_column_int64(st, 1),
		.ord = pix_db_column_int64(st, 2),
		.name = (const char *)pix_db_column_text(st, 3),
		.parent_ord = pix_db_column_type(st, 4) == PIX_DB_NULL ? -1 : pix_db_column_int64(st, 4),
		.is_assigned = pix_db_column_type(st, 5) != PIX_DB_NULL && pix_db_column_int64(st, 5) != 0,
		.type = pix_db_column_type(st, 6) == PIX_DB_NULL ? NULL : (const char *)pix_db_column_text(st, 6),
		.has_area = pix_db_column_type(st, 7) != PIX_DB_NULL,
	};
	if (r.has_area) {
		r.x = pix_db_column_double(st, 7);
		r.y = pix_db_column_double(st, 8);
		r.w = pix_db_column_double(st, 9);
		r.h = pix_db_column_double(st, 10);
	}
	return r.name == NULL || e->fn(e->data, &r);
}

gboolean pix_store_each_tag_row(PixStore *s, const PixFilter *filter, PixTagRowFn fn, gpointer data,
                                GError **error)
{
	Sql q;
	sql_init(&q, s, "WITH sel AS MATERIALIZED (SELECT id FROM file_info WHERE");
	sql_filter(&q, filter);
	g_string_append(q.sql, ") SELECT 0, k.file_id, k.ord, k.keyword, k.parent_ord, k.is_assigned, NULL, NULL, NULL,"
	                " NULL, NULL FROM sel JOIN file_keywords k ON k.file_id = sel.id"
	                " UNION ALL SELECT 1, p.file_id, p.ord, p.name, NULL, NULL, p.type, p.x, p.y, p.w, p.h"
	                " FROM sel JOIN file_people p ON p.file_id = sel.id ORDER BY 2, 1, 3");
	g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
	EachTag e = { fn, data };
	gboolean is_ok = st != NULL && each_row(s, st, tag_row, &e, error);
	sql_clear(&q);
	return is_ok;
}

/* --- dups --- */

/* A record that outlives its row: values copied into `chunk`. */
static PixRecord *record_copy(const PixRecord *r, GStringChunk *chunk)
{
	PixRecord *c = g_new(PixRecord, 1);
	*c = *r;
	for (int i = 0; i < PIX_N_COLS; i++)
		if (c->v[i].s != NULL)
			c->v[i].s = g_string_chunk_insert_len(chunk, c->v[i].s, (gssize)c->v[i].len);
	return c;
}

typedef struct {
	PixDupFn fn;
	gpointer data;
	GPtrArray *files;       /* PixRecord* of the group being read (owned) */
	GStringChunk *chunk;
	char md5[33];
	gint64 size;
	guint n_distinct;
	gboolean is_stopped;
} EachDup;

static gboolean dup_flush(EachDup *e)
{
	if (e->files->len > 0 && !e->is_stopped) {
		PixDupGroup g = {
			.md5 = e->md5,
			.size = e->size,
			.n_files = e->files->len,
			.n_distinct = e->n_distinct,
			.files = (const PixRecord *const *)e->files->pdata,
		};
		e->is_stopped = !e->fn(e->data, &g);
	}
	g_ptr_array_set_size(e->files, 0);
	g_string_chunk_clear(e->chunk);
	return !e->is_stopped;
}

static gboolean dup_row(gpointer data, PixStmt *st)
{
	EachDup *e = data;
	PixRecord r;
	record_from(&r, st, 1);
	const char *md5 = pix_record_text(&r, PIX_COL_MD5);
	if (md5 == NULL)
		return TRUE;
	if (strcmp(md5, e->md5) != 0) {
		if (!dup_flush(e))
			return FALSE;
		g_strlcpy(e->md5, md5, sizeof(e->md5));
		e->size = pix_record_int(&r, PIX_COL_SIZE, 0);
		e->n_distinct = (guint)pix_db_column_int64(st, 0);
	}
	g_ptr_array_add(e->files, record_copy(&r, e->chunk));
	return TRUE;
}

gboolean pix_store_each_dup(PixStore *s, const PixFilter *filter, PixDupFn fn, gpointer data, GError **error)
{
	PixFilter f = *filter;
	Sql q;

	/* copies present on disk only: a missing file frees nothing */
	if (f.show == PIX_SHOW_ALL || f.show == PIX_SHOW_MISSING)
		f.show = PIX_SHOW_PRESENT;
	sql_init(&q, s, "WITH sel AS MATERIALIZED (SELECT ");
	sql_columns(&q, &f);
	g_string_append(q.sql, " FROM file_info WHERE");
	sql_filter(&q, &f);
	/* the duplicates view finds the candidates through the MD5 index;
	 * the groups are then made again among those that pass the filter */
	g_string_append(q.sql,
		" AND id IN (SELECT id FROM duplicates)),"
		" grp AS (SELECT md5 AS g_md5, count(DISTINCT dev || ':' || ino) AS g_distinct, max(size) AS g_size"
		" FROM sel GROUP BY md5 HAVING count(*) > 1)"
		" SELECT g_distinct, sel.* FROM sel JOIN grp ON g_md5 = sel.md5"
		" ORDER BY g_size * (g_distinct - 1) DESC, g_md5, sel.path");
	g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
	EachDup e = { .fn = fn, .data = data, .files = g_ptr_array_new_with_free_func(g_free),
	              .chunk = g_string_chunk_new(4096) };
	gboolean is_ok = st != NULL && each_row(s, st, dup_row, &e, error);
	if (is_ok)
		dup_flush(&e);
	g_ptr_array_free(e.files, TRUE);
	g_string_chunk_free(e.chunk);
	sql_clear(&q);
	return is_ok;
}

/* --- similar images --- */

/* A file with a hash, as the first statement reads it. */
typedef struct {
	PixSimilarKey key;
	guint64 hash;
	gboolean is_weak;
} Hashed;

static gboolean hashed_row(gpointer data, PixStmt *st)
{
	GArray *files = data;
	gint64 w = pix_db_column_type(st, 3) == PIX_DB_NULL ? 0 : pix_db_column_int64(st, 3);
	gint64 h = pix_db_column_type(st, 4) == PIX_DB_NULL ? 0 : pix_db_column_int64(st, 4);
	Hashed f = {
		.key = {
			.id = pix_db_column_int64(st, 0),
			.pixels = w > 0 && h > 0 ? (guint64)w * (guint64)h : 0,
			.format_rank = pix_similar_format_rank(column_text_or_null(st, 5), column_text_or_null(st, 6)),
			.mtime_ns = pix_db_column_int64(st, 7),
		},
		.hash = (guint64)pix_db_column_int64(st, 1),
		.is_weak = pix_db_column_int64(st, 2) != 0,
	};
	g_array_append_val(files, f);
	return TRUE;
}

static int compare_hashed(gconstpointer a, gconstpointer b)
{
	return pix_similar_compare(&((const Hashed *)a)->key, &((const Hashed *)b)->key);
}

/* A record of the second statement, with the hash it has now. */
typedef struct {
	PixRecord *record;    /* (owned) values in EachSimilar.chunk */
	guint64 hash;
} Fetched;

static void fetched_free(gpointer p)
{
	Fetched *f = p;
	g_free(f->record);
	g_free(f);
}

typedef struct {
	PixStore *s;
	PixDupFn fn;
	gpointer data;
	const guint64 *hashes;    /* by position, best copy first */
	const guint8 *is_weak;
	const gint64 *ids;
	const PixSimilarGroups *groups;
	PixStmt *st;              /* the records of PIX_STORE_SET ids */
	GHashTable *fetched;      /* id -> Fetched (owned) */
	GStringChunk *chunk;
	gboolean is_stopped;
} EachSimilar;

static gboolean fetched_row(gpointer data, PixStmt *st)
{
	EachSimilar *e = data;
	PixRecord r;
	record_from(&r, st, 0);
	if (pix_db_column_type(st, PIX_N_COLS + 1) == PIX_DB_NULL)
		return TRUE;
	Fetched *f = g_new(Fetched, 1);
	f->record = record_copy(&r, e->chunk);
	f->hash = (guint64)pix_db_column_int64(st, PIX_N_COLS + 1);
	g_hash_table_replace(e->fetched, &f->record->v[PIX_COL_ID].i, f);
	return TRUE;
}

/* The records of ids[0 .. n - 1] into e->fetched. */
static gboolean fetch(EachSimilar *e, const gint64 *ids, guint n, GError **error)
{
	for (guint from = 0; from < n; from += PIX_STORE_SET) {
		pix_db_reset(e->st);
		pix_db_clear_bindings(e->st);
		for (guint k = from; k < n && k < from + PIX_STORE_SET; k++)
			pix_db_bind_int64(e->st, (int)(k - from) + 1, ids[k]);
		if (!each_row(e->s, e->st, fetched_row, e, error))
			return FALSE;
	}
	return TRUE;
}

typedef struct {
	const PixRecord *record;
	guint64 hash;
	guint distance;
} Member;

/* The best copy first, then by distance, then by path. */
static int compare_members(gconstpointer pa, gconstpointer pb, gpointer unused)
{
	(void)unused;
	const Member *a = pa, *b = pb;
	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	return strcmp(pix_record_text(a->record, PIX_COL_PATH), pix_record_text(b->record, PIX_COL_PATH));
}

/* Group k as it is now: its files whose hash is still the one grouped
 * (not missing), the group dropped when its best copy is not; then fn. */
static void emit_group(EachSimilar *e, guint k)
{
	guint32 a = e->groups->starts[k], b = e->groups->starts[k + 1];
	guint64 centre = e->hashes[e->groups->members[a]];
	gboolean is_weak = e->is_weak[e->groups->members[a]];
	g_autoptr(GArray) m = g_array_new(FALSE, FALSE, sizeof(Member));
	for (guint32 x = a; x < b; x++) {
		guint32 i = e->groups->members[x];
		const Fetched *f = g_hash_table_lookup(e->fetched, &e->ids[i]);
		if (f == NULL || f->hash != e->hashes[i] ||
		    g_strcmp0(pix_record_text(f->record, PIX_COL_STATE), "missing") == 0) {
			if (x == a)
				return;     /* the centre changed: its members may be far apart */
			continue;
		}
		Member mb = { f->record, f->hash, is_weak ? 0 : pix_phash_distance(f->hash, centre) };
		g_array_append_val(m, mb);
	}
	if (m->len < 2)
		return;
	g_qsort_with_data(&g_array_index(m, Member, 1), (gint)m->len - 1, sizeof(Member),
	                  compare_members, NULL);
	g_autofree const PixRecord **files = g_new(const PixRecord *, m->len);
	g_autofree guint *distance = g_new(guint, m->len);
	g_autofree guint64 *phash = g_new(guint64, m->len);
	g_autoptr(GHashTable) inodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < m->len; i++) {
		const Member *mb = &g_array_index(m, Member, i);
		files[i] = mb->record;
		distance[i] = mb->distance;
		phash[i] = mb->hash;
		g_hash_table_add(inodes, g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
		                                         pix_record_int(mb->record, PIX_COL_DEV, -1),
		                                         pix_record_int(mb->record, PIX_COL_INO, -1)));
	}
	PixDupGroup g = {
		.size = pix_record_int(files[0], PIX_COL_SIZE, 0),
		.n_files = m->len,
		.n_distinct = g_hash_table_size(inodes),
		.files = files,
		.distance = distance,
		.phash = phash,
		.is_weak = is_weak,
	};
	e->is_stopped = !e->fn(e->data, &g);
}

/* The groups, most images first, then by their best copy. */
static int compare_group_order(gconstpointer pa, gconstpointer pb, gpointer data)
{
	const PixSimilarGroups *g = data;
	guint32 a = *(const guint32 *)pa, b = *(const guint32 *)pb;
	guint32 na = g->starts[a + 1] - g->starts[a], nb = g->starts[b + 1] - g->starts[b];
	if (na != nb)
		return na > nb ? -1 : 1;
	return a < b ? -1 : a > b;
}

gboolean pix_store_each_similar(PixStore *s, const PixFilter *filter, guint distance, PixDupFn fn, gpointer data,
                                GError **error)
{
	PixFilter f = *filter;
	Sql q;
	if (f.show == PIX_SHOW_ALL || f.show == PIX_SHOW_MISSING)
		f.show = PIX_SHOW_PRESENT;
	/* 1: every hash, with what ranks its file's copy */
	sql_init(&q, s, "SELECT fi.id, p.phash, p.phash_weak, fi.width, fi.height, fi.mime, fi.media, fi.mtime_ns"
	             " FROM (SELECT id, width, height, mime, media, mtime_ns FROM file_info WHERE");
	sql_filter(&q, &f);
	g_string_append(q.sql, ") fi JOIN file_phash p ON p.id = fi.id");
	g_autoptr(GArray) files = g_array_new(FALSE, FALSE, sizeof(Hashed));
	gboolean is_ok;
	{
		g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
		is_ok = st != NULL && each_row(s, st, hashed_row, files, error);
	}
	sql_clear(&q);
	if (!is_ok)
		return FALSE;
	g_array_sort(files, compare_hashed);
	guint n = files->len;
	g_autofree guint64 *hashes = g_new(guint64, MAX(n, 1u));
	g_autofree guint8 *is_weak = g_new(guint8, MAX(n, 1u));
	g_autofree gint64 *ids = g_new(gint64, MAX(n, 1u));
	for (guint i = 0; i < n; i++) {
		const Hashed *h = &g_array_index(files, Hashed, i);
		hashes[i] = h->hash;
		is_weak[i] = h->is_weak;
		ids[i] = h->key.id;
	}
	g_array_set_size(files, 0);
	g_array_free(g_steal_pointer(&files), TRUE);
	g_autoptr(PixSimilarGroups) groups = pix_similar_group(hashes, is_weak, n, distance);

	/* 2: the records of the grouped files, by id */
	g_autofree guint32 *order = g_new(guint32, MAX(groups->n_groups, 1u));
	for (guint k = 0; k < groups->n_groups; k++)
		order[k] = k;
	g_qsort_with_data(order, (gint)groups->n_groups, sizeof(guint32), compare_group_order, groups);
	PixFilter none = { 0 };
	sql_init(&q, s, "WITH sel AS (SELECT ");
	sql_columns(&q, &none);
	g_string_append(q.sql, " FROM file_info WHERE id IN (");
	for (guint k = 1; k <= PIX_STORE_SET; k++)
		g_string_append_printf(q.sql, "%s?%u", k > 1 ? ", " : "", k);
	g_string_append(q.sql, ")) SELECT sel.*, p.phash FROM sel JOIN file_phash p ON p.id = sel.id");
	g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
	sql_clear(&q);
	if (st == NULL)
		return FALSE;
	EachSimilar e = {
		.s = s, .fn = fn, .data = data, .hashes = hashes, .is_weak = is_weak, .ids = ids, .groups = groups,
		.st = st, .fetched = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, fetched_free),
		.chunk = g_string_chunk_new(4096),
	};
	g_autoptr(GArray) batch_ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (guint from = 0; from < groups->n_groups && is_ok && !e.is_stopped;) {
		/* whole groups, up to PIX_STORE_SET files (a larger group alone) */
		guint to = from;
		g_array_set_size(batch_ids, 0);
		while (to < groups->n_groups) {
			guint32 k = order[to];
			guint32 a = groups->starts[k], b = groups->starts[k + 1];
			if (to > from && batch_ids->len + (b - a) > PIX_STORE_SET)
				break;
			for (guint32 x = a; x < b; x++)
				g_array_append_val(batch_ids, ids[groups->members[x]]);
			to++;
		}
		is_ok = fetch(&e, (const gint64 *)(void *)batch_ids->data, batch_ids->len, error);
		for (guint j = from; j < to && is_ok && !e.is_stopped; j++)
			emit_group(&e, order[j]);
		g_hash_table_remove_all(e.fetched);
		g_string_chunk_clear(e.chunk);
		from = to;
	}
	g_hash_table_unref(e.fetched);
	g_string_chunk_free(e.chunk);
	return is_ok;
}

/* --- stats --- */

static void tally_clear(gpointer p)
{
	g_free(((PixTally *)p)->key);
}

static GArray *tally_array(void)
{
	GArray *a = g_array_new(FALSE, TRUE, sizeof(PixTally));
	g_array_set_clear_func(a, tally_clear);
	return a;
}

void pix_stats_clear(PixStats *st)
{
	g_clear_pointer(&st->by_media, g_array_unref);
	g_clear_pointer(&st->by_camera, g_array_unref);
	g_clear_pointer(&st->by_month, g_array_unref);
	g_clear_pointer(&st->by_year, g_array_unref);
	g_clear_pointer(&st->by_lens, g_array_unref);
	g_clear_pointer(&st->by_rating, g_array_unref);
	g_clear_pointer(&st->by_keyword, g_array_unref);
	g_clear_pointer(&st->by_person, g_array_unref);
	st->n = st->bytes = 0;
}

/* Adds n files of `bytes` to the tally of `key` (NULL: none) in `a`,
 * found through `index` (key -> position + 1; NULL key as ""). */
static void tally_add(GArray *a, GHashTable *index, const char *key, gint64 n, gint64 bytes)
{
	const char *k = key != NULL ? key : "";
	guint at = GPOINTER_TO_UINT(g_hash_table_lookup(index, k));
	if (at == 0) {
		PixTally t = { .key = g_strdup(key) };
		g_array_append_val(a, t);
		at = a->len;
		g_hash_table_insert(index, g_strdup(k), GUINT_TO_POINTER(at));
	}
	PixTally *t = &g_array_index(a, PixTally, at - 1);
	t->n += n;
	t->bytes += bytes;
}

typedef struct {
	PixStats *out;
	GHashTable *index[8];   /* by_media, by_camera, by_month, by_year, by_lens, by_rating, by_keyword, by_person */
} Tallies;

/* A row of the one statement: column 0 says which part it is (see
 * pix_store_stats()). */
static gboolean tally_row(gpointer data, PixStmt *st)
{
	Tallies *t = data;
	gint64 part = pix_db_column_int64(st, 0);
	gint64 n = pix_db_column_int64(st, 4), bytes = pix_db_column_int64(st, 5);
	g_assert(pix_db_column_count(st) == 8);

	if (part == 1 || part == 2) {
		GArray *a = part == 1 ? t->out->by_keyword : t->out->by_person;
		tally_add(a, t->index[part == 1 ? 6 : 7], column_text_or_null(st, 1), n, bytes);
		return TRUE;
	}
	tally_add(t->out->by_media, t->index[0], column_text_or_null(st, 1), n, bytes);
	tally_add(t->out->by_camera, t->index[1], column_text_or_null(st, 2), n, bytes);
	const char *month = column_text_or_null(st, 3);
	g_autofree char *year = month != NULL ? g_strndup(month, 4) : NULL;
	tally_add(t->out->by_month, t->index[2], month, n, bytes);
	tally_add(t->out->by_year, t->index[3], year, n, bytes);
	tally_add(t->out->by_lens, t->index[4], column_text_or_null(st, 6), n, bytes);
	g_autofree char *rating = pix_db_column_type(st, 7) == PIX_DB_NULL ? NULL
	                          : g_strdup_printf("%" G_GINT64_FORMAT, pix_db_column_int64(st, 7));
	tally_add(t->out->by_rating, t->index[5], rating, n, bytes);
	t->out->n += n;
	t->out->bytes += bytes;
	return TRUE;
}

/* Highest rating first; none last. */
static gint by_rating(gconstpointer pa, gconstpointer pb)
{
	const PixTally *a = pa, *b = pb;
	if ((a->key == NULL) != (b->key == NULL))
		return a->key == NULL ? 1 : -1;
	gint64 x = a->key != NULL ? g_ascii_strtoll(a->key, NULL, 10) : 0, y = b->key != NULL ? g_ascii_strtoll(b->key, NULL, 10) : 0;
	return x > y ? -1 : x < y;
}

/* Most files first, then by key; no key last. */
static gint by_count(gconstpointer pa, gconstpointer pb)
{
	const PixTally *a = pa, *b = pb;
	if ((a->key == NULL) != (b->key == NULL))
		return a->key == NULL ? 1 : -1;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return g_strcmp0(a->key, b->key);
}

/* By key; no key last. */
static gint by_key(gconstpointer pa, gconstpointer pb)
{
	const PixTally *a = pa, *b = pb;
	if ((a->key == NULL) != (b->key == NULL))
		return a->key == NULL ? 1 : -1;
	return g_strcmp0(a->key, b->key);
}

gboolean pix_store_stats(PixStore *s, const PixFilter *filter, PixStats *out, GError **error)
{
	Tallies t = { .out = out };
	Sql q;

	memset(out, 0, sizeof(*out));
	out->by_media = tally_array();
	out->by_camera = tally_array();
	out->by_month = tally_array();
	out->by_year = tally_array();
	out->by_lens = tally_array();
	out->by_rating = tally_array();
	out->by_keyword = tally_array();
	out->by_person = tally_array();
	for (int i = 0; i < 8; i++)
		t.index[i] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	/* one statement, one snapshot: the files that pass (sel), grouped by
	 * all the keys of one file at once (a few thousand groups for a
	 * large library) and summed into each tally here (part 0); each
	 * keyword level (1) and person (2) they have, counted by their case-
	 * folded key and shown as first spelled */
	sql_init(&q, s, "WITH sel AS MATERIALIZED (SELECT id, size, media, make, model, date_taken, lens, rating"
	             " FROM file_info WHERE");
	sql_filter(&q, filter);
	g_string_append(q.sql, ") SELECT 0, media,"
	                " CASE WHEN make IS NULL AND model IS NULL THEN NULL ELSE coalesce(trim(make), '') || ");
	sql_add(&q, "?", ARG_TEXT, "\t");       /* SQLite's char(9) is PostgreSQL's chr(9) */
	g_string_append(q.sql, " || coalesce(trim(model), '') END,"
	                " substr(date_taken, 1, 7), count(*), coalesce(sum(size), 0), nullif(trim(lens), ''), rating"
	                " FROM sel GROUP BY 2, 3, 4, 7, 8"
	                " UNION ALL SELECT 1, min(k.path), NULL, NULL, count(*), coalesce(sum(sel.size), 0), NULL, NULL"
	                " FROM sel JOIN file_keywords k ON k.file_id = sel.id GROUP BY k.key"
	                " UNION ALL SELECT 2, min(p.name), NULL, NULL, count(*), coalesce(sum(sel.size), 0), NULL, NULL"
	                " FROM sel JOIN (SELECT file_id, key, min(name) AS name FROM file_people GROUP BY file_id, key) p"
	                " ON p.file_id = sel.id"
	                " GROUP BY p.key");
	g_autoptr(PixStmt) st = sql_prepare(s, &q, error);
	gboolean is_ok = st != NULL && each_row(s, st, tally_row, &t, error);
	sql_clear(&q);
	for (int i = 0; i < 8; i++)
		g_hash_table_unref(t.index[i]);
	g_array_sort(out->by_media, by_count);
	g_array_sort(out->by_camera, by_count);
	g_array_sort(out->by_month, by_key);
	g_array_sort(out->by_year, by_key);
	g_array_sort(out->by_lens, by_count);
	g_array_sort(out->by_rating, by_rating);
	g_array_sort(out->by_keyword, by_count);
	g_array_sort(out->by_person, by_count);
	return is_ok;
}

gboolean pix_store_last_seq(PixStore *s, gint64 *seq, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s, "SELECT coalesce(max(seq), 0) FROM changes", &st);
	if (rc == PIX_DB_OK && (rc = pix_db_step(st)) == PIX_DB_ROW) {
		*seq = pix_db_column_int64(st, 0);
		return TRUE;
	}
	pix_store_db_error(error, s, rc, "cannot read the change log");
	return FALSE;
}
