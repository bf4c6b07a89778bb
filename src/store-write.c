/*
 * store-write.c: the items of a run, written in batches (see store.h):
 * files new, changed, moved (by inode, or by MD5 and size for a path
 * gone), missing and verified, their metadata, directories; the batches
 * taken from the store queue, committed by size or time, written again
 * after a deadlock or a lost connection.  Runs on the store thread (and
 * on the main thread before and after the pipeline), on a writer
 * PixStore that store.c opened.
 *
 * Invariants:
 *  1. Batch.written holds every item the open batch wrote, until it
 *     commits: a batch the server rolled back is written again from them.
 *  2. The catalog holds only whole batches (store-sql.c, invariant 1).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"
#include "log.h"
#include "path.h"
#include "volume.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* attempts to connect again for a batch whose connection was lost */
#define RECONNECT_ATTEMPTS 8

/* Counts for the summary what the batch does; published at COMMIT, so
 * the counts never include a batch that was rolled back. */
static void count(PixStore *s, PixCounter c, gint64 n)
{
	s->counts[c] += n;
}

/* A change-log entry for `item`'s file; with `old_tags` and `new_tags`
 * (both or neither NULL), its keywords and rating before and after where
 * they differ. */
static gboolean put_change_tagged(PixStore *s, gint64 file_id, const char *kind, const PixItem *item,
                                  const char *old_path, const char *new_path, const PixTagsSeen *old_tags,
                                  const PixTagsSeen *new_tags, GError **error)
{
	PixChangeRow c = {
		.file_id = file_id, .kind = kind, .old_path = (char *)old_path, .new_path = (char *)new_path,
		.has_old_md5 = item->has_old_md5,
		.has_new_md5 = item->has_md5 && strcmp(kind, "moved") != 0 && strcmp(kind, "missing") != 0,
		.has_old_size = strcmp(kind, "added") != 0, .old_size = item->old_st.size_bytes,
		.has_new_size = strcmp(kind, "missing") != 0, .new_size = item->st.size_bytes,
	};
	memcpy(c.old_md5, item->old_md5, 16);
	memcpy(c.new_md5, item->md5, 16);
	if (old_tags != NULL)
		pix_store_change_tags(&c, old_tags, new_tags);
	return pix_store_put_change_row(s, &c, error);
}

static gboolean put_change(PixStore *s, gint64 file_id, const char *kind, const PixItem *item,
                           const char *old_path, const char *new_path, GError **error)
{
	return put_change_tagged(s, file_id, kind, item, old_path, new_path, NULL, NULL, error);
}

/* The metadata row of file_id: replaced, or (is_new: a row just added)
 * inserted; and its keyword and people rows (store-tags.c), the old ones
 * deleted first unless `old` (what the row had, may be NULL) says there
 * are none. */
static gboolean put_meta(PixStore *s, gint64 file_id, const PixMeta *m, gboolean is_new, const PixTagsSeen *old,
                         GError **error)
{
	PixStmt *st;
	if (m == NULL && is_new)
		return TRUE;
	if (!pix_store_put_tags(s, file_id, m, is_new, old, error))
		return FALSE;
	if (m == NULL) {
		st = pix_store_stmt(s, ST_META_DELETE, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, file_id);
		return pix_store_step_done(s, st, "cannot write metadata", error);
	}
	st = pix_store_stmt(s, is_new ? ST_META_INSERT : ST_META_REPLACE, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, file_id);
	pix_store_bind_text_or_null(st, 2, m->date_taken);
	pix_store_bind_text_or_null(st, 3, m->date_tz);
	pix_store_bind_text_or_null(st, 4, m->date_source);
	pix_store_bind_text_or_null(st, 5, m->make);
	pix_store_bind_text_or_null(st, 6, m->model);
	pix_store_bind_text_or_null(st, 7, m->lens);
	pix_store_bind_double_or_null(st, 8, m->exposure_s);
	pix_store_bind_double_or_null(st, 9, m->fnumber);
	pix_store_bind_int_or_null(st, 10, m->iso);
	pix_store_bind_double_or_null(st, 11, m->focal_mm);
	pix_store_bind_int_or_null(st, 12, m->orientation);
	pix_store_bind_int_or_null(st, 13, m->width_px);
	pix_store_bind_int_or_null(st, 14, m->height_px);
	pix_store_bind_double_or_null(st, 15, m->gps_lat);
	pix_store_bind_double_or_null(st, 16, m->gps_lon);
	pix_store_bind_double_or_null(st, 17, m->gps_alt_m);
	pix_store_bind_double_or_null(st, 18, m->duration_s);
	if (m->has_osdb_hash) {
		char hex[17];
		g_snprintf(hex, sizeof hex, "%016" G_GINT64_MODIFIER "x", m->osdb_hash);
		pix_db_bind_text(st, 19, hex, -1, PIX_DB_TRANSIENT);
	}
	pix_store_bind_double_or_null(st, 20, m->aperture);
	pix_store_bind_int_or_null(st, 21, m->exposure_program);
	pix_store_bind_int_or_null(st, 22, m->metering_mode);
	pix_store_bind_int_or_null(st, 23, m->flash);
	pix_store_bind_text_or_null(st, 24, m->gps_time);
	pix_store_bind_double_or_null(st, 25, m->gps_direction);
	pix_store_bind_text_or_null(st, 26, m->gps_direction_ref);
	pix_store_bind_text_or_null(st, 27, m->description);
	const PixTags *t = m->tags;
	if (t != NULL) {
		if (t->rating != PIX_RATING_UNKNOWN)
			pix_db_bind_int64(st, 28, t->rating);
		const char *texts[] = { t->label, t->title, t->caption, t->creator, t->copyright, t->sublocation,
			                t->city, t->province, t->country, t->country_code };
		for (guint i = 0; i < G_N_ELEMENTS(texts); i++)
			pix_store_bind_text_or_null(st, 29 + (int)i, texts[i]);
		g_autofree char *keywords = pix_tags_keyword_lines(t);
		g_autofree char *people = pix_tags_people_lines(t);
		pix_store_bind_text_or_null(st, 39, keywords);
		pix_store_bind_text_or_null(st, 40, people);
		g_autofree char *title_key = pix_tags_key(t->title);
		g_autofree char *caption_key = pix_tags_key(t->caption);
		pix_store_bind_text_or_null(st, 41, title_key);
		pix_store_bind_text_or_null(st, 42, caption_key);
	}
	return pix_store_step_done(s, st, "cannot write metadata", error);
}

static PixFileState item_state(const PixItem *item)
{
	return item->error != NULL ? PIX_STATE_ERROR : PIX_STATE_OK;
}

static void bind_stat(PixStmt *st, int first, const PixStat *ps)
{
	pix_db_bind_int64(st, first, (gint64)ps->dev);
	pix_db_bind_int64(st, first + 1, (gint64)ps->ino);
	pix_db_bind_int64(st, first + 2, ps->mode);
	pix_db_bind_int64(st, first + 3, ps->size_bytes);
	pix_db_bind_int64(st, first + 4, ps->mtime_ns);
	pix_db_bind_int64(st, first + 5, ps->ctime_ns);
}

static gboolean put_dir(PixStore *s, PixItem *item, GError **error)
{
	PixDir *d = item->dir;
	PixStmt *st;

	if (item->action == PIX_ACT_DIR_MISSING) {
		g_assert(d->id > 0);
		st = pix_store_stmt(s, ST_DIR_MISSING, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, d->id);
		return pix_store_step_done(s, st, "cannot write a directory", error);
	}
	gint64 vol_id;
	g_autofree char *rel = NULL;
	if (!pix_store_dir_key(s, d, TRUE, &vol_id, &rel, error))
		return FALSE;
	/* a directory plan found has its id; a new one is given one (as new
	 * files are), so the row is written without waiting for an answer (on
	 * PostgreSQL, in the pipeline).  Plan looked the key up after this
	 * run took the volume's lock, and no other writer adds a row of a
	 * volume it does not hold (store-pg.c, invariant 2; on SQLite, one
	 * writer), so the key's row, if any, is one this writer gave an id:
	 * plan may not have seen it yet (a batch not yet committed, or a
	 * reader's older snapshot), s->dir_ids has.  The upsert fails rather
	 * than write under another id (DIR_UPSERT). */
	gint64 id = d->id;
	g_autofree char *key = NULL;
	if (id <= 0) {
		key = g_strdup_printf("%" G_GINT64_FORMAT "\t%s", vol_id, rel);
		id = (gint64)GPOINTER_TO_SIZE(g_hash_table_lookup(s->dir_ids, key));
	}
	if (id <= 0) {
		if ((id = pix_db_reserve_id(s->db, "dirs")) == 0) {
			pix_store_db_error(error, s, pix_db_errcode(s->db), "cannot write a directory");
			return FALSE;
		}
		if (s->batch_dir_id == 0)
			s->batch_dir_id = id;
		g_hash_table_insert(s->dir_ids, g_steal_pointer(&key), GSIZE_TO_POINTER((gsize)id));
	}
	st = pix_store_stmt(s, ST_DIR_UPSERT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 13, vol_id);
	pix_store_bind_path(st, 14, rel);
	if (d->parent != NULL && d->parent->id > 0)
		pix_db_bind_int64(st, 1, d->parent->id);
	pix_store_bind_path(st, 2, d->path);
	if (d->st.ino != 0) {
		pix_db_bind_int64(st, 3, (gint64)d->st.dev);
		pix_db_bind_int64(st, 4, (gint64)d->st.ino);
		pix_db_bind_int64(st, 5, d->st.mtime_ns);
		pix_db_bind_int64(st, 6, d->st.ctime_ns);
	}
	pix_db_bind_text(st, 7, d->error != NULL ? "error" : "ok", -1, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, 8, d->error);
	pix_db_bind_int64(st, 9, s->now_s);
	if (d->fsid != 0)
		pix_db_bind_int64(st, 10, (gint64)d->fsid);
	/* listed by this run (NULL when the listing failed, or outside a run) */
	if (d->error == NULL && s->scan_id > 0)
		pix_db_bind_int64(st, 11, s->scan_id);
	pix_db_bind_int(st, 12, d->is_unlisted);
	pix_db_bind_int64(st, 15, id);
	if (!pix_store_step_done(s, st, "cannot write a directory", error))
		return FALSE;
	d->id = id;
	return TRUE;
}

/* Binds the content columns shared by insert and update, from `first`:
 * md5, mime, media, state, error, recheck. */
static void bind_content(PixStmt *st, int first, const PixItem *item)
{
	if (item->has_md5)
		pix_db_bind_blob(st, first, item->md5, 16, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, first + 1, item->mime);
	pix_db_bind_text(st, first + 2, pix_media_name(item->media), -1, PIX_DB_STATIC);
	pix_db_bind_text(st, first + 3, pix_store_state_name(item_state(item)), -1, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, first + 4, item->error);
	pix_db_bind_int(st, first + 5, item->is_racy ? 1 : 0);
}

/* Inserts a new file row for `item`; *id is its row id. */
static gboolean insert_file(PixStore *s, PixItem *item, gint64 *id, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_INSERT, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	pix_db_bind_int64(st, 1, item->dir->id);
	pix_store_bind_path(st, 2, item->name);
	bind_stat(st, 3, &item->st);
	bind_content(st, 9, item);
	pix_db_bind_int64(st, 15, s->now_s);
	if (item->has_md5)
		pix_db_bind_int64(st, 16, s->now_s);
	/* the id named, not asked back: the insert's row is kept and written
	 * with others later (db.h; RETURNING would also cost SQLite a
	 * temporary table per insert, a third of the insert) */
	gint64 new_id = pix_db_reserve_id(s->db, "files");
	if (new_id == 0) {
		pix_store_db_error(error, s, pix_db_errcode(s->db), "cannot add a file");
		return FALSE;
	}
	pix_db_bind_int64(st, 17, new_id);
	if (!pix_store_step_done(s, st, "cannot add a file", error))
		return FALSE;
	*id = new_id;
	count(s, PIX_N_NEW, 1);
	return TRUE;
}


/*
 * --- decisions the store settles ---
 *
 * Plan decides from what the catalog held when the scan began; two
 * decisions need what only the writer knows, the content read and the
 * rows this run has written, and are settled here:
 *  - a new file whose MD5 and size are a file's whose path is gone, from a
 *    disk still mounted, is that file moved across file systems: it takes
 *    the row over (find_moved(), pick_moved(), take_over());
 *  - a file plan found gone is marked missing only while its row is still
 *    at that path (ST_FILE_MISSING);
 * and such new files, and the end-of-walk missing items, wait until the
 * input ends (Batch, MAX_DEFERRED): a rename plan found claims its row
 * first, and a file that turned up elsewhere is recorded as moved, not
 * also as missing.  A batch's new files are written after its other items
 * (settle_looking()): the change log lists them after those.
 */

/*
 * The rows a new file may be, moved (see the decisions above): same MD5,
 * from before this run, looked up for many new files at once (one round
 * trip per PIX_STORE_SET contents): a table from the MD5 (16 bytes, owned)
 * to its rows (PixFileRow*, with dir_path, dir_fsid and is_elsewhere).
 * Empty files all share one MD5: content says nothing about them.  Only
 * rows from before this run can have moved here (a first import into an
 * empty catalog asks nothing).
 */
static gboolean is_move_candidate(const PixStore *s, const PixItem *item)
{
	return item->action == PIX_ACT_ADD && !item->is_vanished && item->has_md5 && item->st.size_bytes > 0 &&
	       s->rows_before_run > 0;
}

static guint md5_hash(gconstpointer p)
{
	guint h;
	memcpy(&h, p, sizeof h);
	return h;
}

static gboolean md5_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, 16) == 0;
}

typedef struct {
	GPtrArray *md5s;        /* const guint8 * (borrowed), in set order */
	GHashTable *by_md5;
} Md5Set;

static void bind_md5(PixStmt *st, int i, guint k, gpointer data)
{
	pix_db_bind_blob(st, i, g_ptr_array_index(((Md5Set *)data)->md5s, k), 16, PIX_DB_STATIC);
}

static void take_md5_row(PixStmt *st, gpointer data)
{
	Md5Set *set = data;
	PixFileRow *row = pix_store_file_row_from(st, TRUE);
	GPtrArray *rows = row->has_md5 ? g_hash_table_lookup(set->by_md5, row->md5) : NULL;
	if (rows == NULL) {
		pix_file_row_free(row);
		return;
	}
	row->is_elsewhere = pix_db_column_int(st, 13) != 0;
	g_ptr_array_add(rows, row);
}

/* The candidates of items[0..n) (transfer full; NULL when none could
 * have one). */
static gboolean find_moved(PixStore *s, PixItem *const *items, guint n, GHashTable **candidates, GError **error)
{
	Md5Set set = { g_ptr_array_new(), NULL };
	*candidates = NULL;
	for (guint k = 0; k < n; k++) {
		if (!is_move_candidate(s, items[k]))
			continue;
		if (set.by_md5 == NULL)
			set.by_md5 = g_hash_table_new_full(md5_hash, md5_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
		if (g_hash_table_contains(set.by_md5, items[k]->md5))
			continue;
		g_hash_table_insert(set.by_md5, g_memdup2(items[k]->md5, 16),
		                    g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free));
		g_ptr_array_add(set.md5s, items[k]->md5);
	}
	gboolean ok = set.md5s->len == 0 ||
	              pix_store_run_set(s, ST_FILES_BY_MD5S, 2, s->rows_before_run, set.md5s->len, bind_md5,
	                                take_md5_row, &set, "cannot look for a moved file", error);
	g_ptr_array_free(set.md5s, TRUE);
	if (!ok) {
		g_clear_pointer(&set.by_md5, g_hash_table_destroy);
		return FALSE;
	}
	*candidates = set.by_md5;
	return TRUE;
}

/* The order rows of one content are tried in: the same name first, then
 * rows already missing, then the oldest. */
static int compare_candidates(gconstpointer a, gconstpointer b, gpointer name)
{
	const PixFileRow *x = *(PixFileRow *const *)a, *y = *(PixFileRow *const *)b;
	int by_name = (strcmp(y->name, name) == 0) - (strcmp(x->name, name) == 0);
	if (by_name != 0)
		return by_name;
	int by_state = (y->state == PIX_STATE_MISSING) - (x->state == PIX_STATE_MISSING);
	if (by_state != 0)
		return by_state;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * The row of a file that was moved to where `item` (new, read) is, among
 * `candidates` (find_moved()): same MD5 and size, and its own path gone
 * from a disk that is still there (a move across file systems, or a copy
 * and a delete).  A copy whose original is still in place is a file of
 * its own.  Returns the row (owned by `candidates`) or NULL.
 */
static PixFileRow *pick_moved(const PixStore *s, const PixItem *item, GHashTable *candidates)
{
	GPtrArray *all = candidates != NULL && is_move_candidate(s, item) ? g_hash_table_lookup(candidates, item->md5)
	                                                                   : NULL;
	if (all == NULL)
		return NULL;
	g_autoptr(GPtrArray) rows = g_ptr_array_new();
	for (guint i = 0; i < all->len; i++) {
		PixFileRow *row = g_ptr_array_index(all, i);
		if (row->st.size_bytes == item->st.size_bytes)
			g_ptr_array_add(rows, row);
	}
	g_ptr_array_sort_with_data(rows, compare_candidates, item->name);
	/* a new hard link of a file still at its path is that file's second
	 * name, not a file that moved here */
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		if (row->st.dev == item->st.dev && row->st.ino == item->st.ino && row->state != PIX_STATE_MISSING &&
		    !pix_path_is_gone(row->dir_path, row->name))
			return NULL;
	}
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
		/* PostgreSQL: a file its own host found gone, on a volume not
		 * mounted here (its path and device are that host's) */
		gboolean is_elsewhere = s->be->is_shared && row->state == PIX_STATE_MISSING && row->is_elsewhere;
		if (!is_elsewhere &&
		    (!pix_path_is_gone(row->dir_path, row->name) || !pix_path_ancestor_on(old_path, row->st.dev, row->dir_fsid)))
			continue;
		return row;
	}
	return NULL;
}

/* The file of `item` is the one of `row`, moved: the row takes its path,
 * stat and content. */
static gboolean take_over(PixStore *s, PixItem *item, PixFileRow *row, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_TAKE_OVER, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, row->id);
	pix_db_bind_int64(st, 2, item->dir->id);
	pix_store_bind_path(st, 3, item->name);
	bind_stat(st, 4, &item->st);
	bind_content(st, 10, item);
	pix_db_bind_int64(st, 16, s->now_s);
	if (!pix_store_step_done(s, st, "cannot move a file", error))
		return FALSE;
	item->row_id = row->id;
	item->old_st = row->st;
	item->has_old_md5 = row->has_md5;
	memcpy(item->old_md5, row->md5, 16);
	g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
	g_autofree char *new_path = pix_item_path(item);
	g_autofree char *q_old = pix_quote(old_path), *q_new = pix_quote(new_path);
	pix_info("'%s' is '%s', moved (same content)", q_new, q_old);
	count(s, PIX_N_MOVED, 1);
	/* the candidate now says what the row does, for the next new file
	 * of this content */
	g_free(row->dir_path);
	g_free(row->name);
	row->dir_path = g_strdup(item->dir->path);
	row->dir_fsid = item->dir->fsid;
	row->name = g_strdup(item->name);
	row->st = item->st;
	row->state = item_state(item);
	row->is_elsewhere = FALSE;
	return put_meta(s, row->id, item->meta, FALSE, NULL, error) &&
	       put_change(s, row->id, "moved", item, old_path, new_path, error);
}

/* A new file: the row of the file it is, moved (among `candidates`, see
 * find_moved(), when `is_looked`; else looked for now), or a row of its
 * own. */
static gboolean put_add(PixStore *s, PixItem *item, GHashTable *candidates, gboolean is_looked, GError **error)
{
	g_autoptr(GHashTable) own = NULL;
	gint64 id;

	if (!is_looked) {
		if (!find_moved(s, &item, 1, &own, error))
			return FALSE;
		candidates = own;
	}
	PixFileRow *moved = pick_moved(s, item, candidates);
	if (moved != NULL)
		return take_over(s, item, moved, error);
	if (!insert_file(s, item, &id, error))
		return FALSE;
	return put_meta(s, id, item->meta, TRUE, NULL, error) && put_change(s, id, "added", item, NULL, NULL, error);
}

/* The file's own keywords and rating, and its sidecar's, as the row of
 * ST_FILE_UPDATE_CONTENT gives them before its metadata is written. */
typedef struct {
	PixTagsSeen own, sidecar;
} Tagged;

static char *column_text_dup(PixStmt *st, int i)
{
	return pix_db_column_type(st, i) == PIX_DB_NULL ? NULL : g_strdup((const char *)pix_db_column_text(st, i));
}

static void tagged_from(Tagged *t, PixStmt *st)
{
	t->own.keywords = column_text_dup(st, 0);
	t->own.rating = pix_db_column_type(st, 1) == PIX_DB_NULL ? -2 : pix_db_column_int64(st, 1);
	t->own.has_people = pix_db_column_int(st, 2) != 0;
	t->sidecar.keywords = column_text_dup(st, 3);
	t->sidecar.rating = pix_db_column_type(st, 4) == PIX_DB_NULL ? -2 : pix_db_column_int64(st, 4);
	t->sidecar.has_people = FALSE;
}

static void tagged_clear(Tagged *t)
{
	pix_tags_seen_clear(&t->own);
	pix_tags_seen_clear(&t->sidecar);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Tagged, tagged_clear)

/* What counts of `own` for a file with `sidecar`'s values (borrowed). */
static PixTagsSeen counted(const PixTagsSeen *own, const PixTagsSeen *sidecar)
{
	return (PixTagsSeen){
		.keywords = sidecar->keywords != NULL ? sidecar->keywords : own->keywords,
		.rating = sidecar->rating != -2 ? sidecar->rating : own->rating,
	};
}

static gboolean put_content(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_UPDATE_CONTENT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	bind_content(st, 8, item);
	pix_db_bind_int64(st, 14, s->now_s);
	if (item->has_md5)
		pix_db_bind_int64(st, 15, s->now_s);
	pix_db_bind_int64(st, 16, item->dir->id);
	pix_store_bind_path(st, 17, item->name);
	/* a row comes back only when the row was still at the path read */
	int rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_db_reset(st);
		if (rc == PIX_DB_DONE)
			return TRUE;    /* the row is no longer at the path that was read */
		pix_store_db_error(error, s, rc, "cannot update a file");
		return FALSE;
	}
	g_auto(Tagged) was = { { NULL, -2, FALSE }, { NULL, -2, FALSE } };
	tagged_from(&was, st);
	if (!pix_store_step_done(s, st, "cannot update a file", error))
		return FALSE;
	if (!put_meta(s, item->row_id, item->meta, FALSE, &was.own, error))
		return FALSE;
	gboolean is_same = item->has_md5 && item->has_old_md5 && memcmp(item->md5, item->old_md5, 16) == 0;
	/* the old content's thumbnail, if this was its last file */
	if (item->has_old_md5 && (!is_same || item->st.size_bytes != item->old_st.size_bytes) &&
	    !pix_store_drop_thumb(s, item->old_md5, item->old_st.size_bytes, error))
		return FALSE;
	/* a move already said the file is back: its re-read adds nothing */
	gboolean is_back = !item->was_missing || item->action == PIX_ACT_MOVE;
	if (is_same && is_back && item->st.size_bytes == item->old_st.size_bytes &&
	    item->st.mtime_ns == item->old_st.mtime_ns && (item->error == NULL) == !item->was_error) {
		/* a recheck (recent mtime, earlier; a thumbnail wanted) found
		 * nothing new: the same content, as damaged as it was */
		if (item->action == PIX_ACT_CHANGE)
			count(s, PIX_N_UNCHANGED, 1);
		return TRUE;
	}
	if (item->action == PIX_ACT_CHANGE)
		count(s, PIX_N_CHANGED, 1);
	/* its keywords and rating as they count, before and after (a
	 * sidecar's own; an image's its sidecar's where it gives them) */
	g_auto(PixTagsSeen) now = { NULL, -2, FALSE };
	pix_tags_seen_of(item->meta, &now);
	PixTagsSeen old_counted = counted(&was.own, &was.sidecar), new_counted = counted(&now, &was.sidecar);
	if (!put_change_tagged(s, item->row_id, item->was_missing && is_same ? "restored" : "changed", item, NULL, NULL,
	                       &old_counted, &new_counted, error))
		return FALSE;
	/* an edited sidecar: the images it is the sidecar of */
	return item->media != PIX_MEDIA_SIDECAR || pix_store_sidecar_retagged(s, item->row_id, &was.own, &now, error);
}

static gboolean put_missing(PixStore *s, PixItem *item, GError **error);

static gboolean put_move(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_MOVE, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0 && item->row_id > 0);
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, item->dir->id);
	pix_store_bind_path(st, 3, item->name);
	pix_db_bind_int64(st, 4, (gint64)item->old_st.dev);
	pix_db_bind_int64(st, 5, (gint64)item->old_st.ino);
	if (!pix_store_step_done(s, st, "cannot move a file", error))
		return FALSE;
	if (pix_db_changes(s->db) == 0) {
		/* a copy of it, found by its MD5, took the row over meanwhile:
		 * this file is new, its content known, its metadata read next
		 * scan (recheck) */
		gint64 id;
		if (item->is_vanished)
			return TRUE;
		if (!item->is_read) {
			item->has_md5 = item->has_old_md5;
			memcpy(item->md5, item->old_md5, 16);
			item->is_racy = TRUE;
		}
		return insert_file(s, item, &id, error) && put_meta(s, id, item->meta, TRUE, NULL, error) &&
		       put_change(s, id, "added", item, NULL, NULL, error);
	}
	g_autofree char *new_path = pix_item_path(item);
	if (!put_change(s, item->row_id, "moved", item, item->old_path, new_path, error))
		return FALSE;
	count(s, PIX_N_MOVED, 1);
	if (item->is_vanished)
		return put_missing(s, item, error);    /* gone again before it was read */
	if (item->is_read)
		return put_content(s, item, error);
	st = pix_store_stmt(s, ST_FILE_UPDATE_STAT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	return pix_store_step_done(s, st, "cannot move a file", error);
}

static gboolean put_missing(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_MISSING, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, s->now_s);
	pix_db_bind_int64(st, 3, item->dir->id);
	pix_store_bind_path(st, 4, item->name);
	if (!pix_store_step_done(s, st, "cannot mark a file missing", error))
		return FALSE;
	if (pix_db_changes(s->db) == 0)
		return TRUE;
	count(s, PIX_N_MISSING, 1);
	return put_change(s, item->row_id, "missing", item, NULL, NULL, error);
}

static char *md5_hex(const guint8 *md5)
{
	char *hex = g_malloc(33);
	for (int i = 0; i < 16; i++)
		g_snprintf(hex + 2 * i, 3, "%02x", md5[i]);
	return hex;
}

/* A file verify read: its MD5 against the stored one. */
static gboolean put_verify(PixStore *s, PixItem *item, GError **error)
{
	g_autofree char *path = pix_item_path(item);
	g_autofree char *q = pix_quote(path);
	const char *state;

	if (item->is_vanished)
		return TRUE;    /* the reader said so; the next scan marks it missing */
	if (item->is_unstable || (item->error == NULL &&
	    (item->st.dev != item->old_st.dev || item->st.ino != item->old_st.ino ||
	     item->st.size_bytes != item->old_st.size_bytes || item->st.mtime_ns != item->old_st.mtime_ns))) {
		pix_notice("'%s' changed since the last scan: not verified (a scan reads it again)", q);
		count(s, PIX_N_STALE, 1);
		return TRUE;
	}
	if (item->error != NULL) {
		state = "unreadable";
		count(s, PIX_N_ERRORS, 1);
	} else if (memcmp(item->md5, item->old_md5, 16) == 0) {
		state = "ok";
		count(s, PIX_N_VERIFIED, 1);
	} else {
		g_autofree char *was = md5_hex(item->old_md5), *now = md5_hex(item->md5);
		state = "mismatch";
		count(s, PIX_N_MISMATCH, 1);
		pix_warn("'%s': content changed but size and mtime did not (MD5 was %s, is %s): %s", q, was, now,
		         item->st.ctime_ns == item->old_st.ctime_ns
		         ? "ctime unchanged too, so not by a write through the file system: bit rot?"
		         : "ctime changed: edited with its times put back?");
	}
	PixStmt *st = pix_store_stmt(s, ST_FILE_VERIFY, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, s->now_s);
	pix_db_bind_text(st, 3, state, -1, PIX_DB_STATIC);
	if (strcmp(state, "mismatch") == 0)
		pix_db_bind_blob(st, 4, item->md5, 16, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, 5, item->error);
	pix_db_bind_int64(st, 6, (gint64)item->old_st.dev);
	pix_db_bind_int64(st, 7, (gint64)item->old_st.ino);
	pix_db_bind_int64(st, 8, item->old_st.size_bytes);
	pix_db_bind_int64(st, 9, item->old_st.mtime_ns);
	return pix_store_step_done(s, st, "cannot record a verification", error);
}

/* pix_store_put(); `is_looked`: an ADD item's moved rows were looked for
 * already, and are among `candidates` (see put_add()). */
static gboolean store_put(PixStore *s, PixItem *item, GHashTable *candidates, gboolean is_looked, GError **error)
{
	gboolean ok;

	g_assert(pix_store_check(s) && s->mode == PIX_STORE_WRITE);
	if (!pix_store_begin_batch(s, error))
		return FALSE;
	/* what the file's sidecar links may now be (see pix_store_relink()) */
	if (item->action != PIX_ACT_DIR && item->action != PIX_ACT_DIR_MISSING && item->action != PIX_ACT_VERIFY)
		pix_store_mark_dirty(s, item);
	switch (item->action) {
	case PIX_ACT_DIR:
	case PIX_ACT_DIR_MISSING:
		ok = put_dir(s, item, error);
		break;
	case PIX_ACT_ADD:
		/* a new file gone before it was read: there is nothing to record */
		ok = item->is_vanished || put_add(s, item, candidates, is_looked, error);
		break;
	case PIX_ACT_CHANGE:
		/* a known file gone before it was read keeps what was known */
		ok = item->is_vanished ? put_missing(s, item, error) : put_content(s, item, error);
		break;
	case PIX_ACT_MOVE:
		ok = put_move(s, item, error);
		break;
	case PIX_ACT_MISSING:
		ok = put_missing(s, item, error);
		break;
	case PIX_ACT_VERIFY:
		ok = put_verify(s, item, error);
		break;
	default:
		g_assert_not_reached();
	}
	/* a thumbnail of a file that was not read (vanished, failed) would
	 * belong to no content */
	if (ok && item->thumb != NULL && item->has_md5 && !item->is_vanished)
		ok = pix_store_put_thumb(s, item, error);
	if (!ok) {
		pix_store_rollback_batch(s);
		return FALSE;
	}
	if (item->error != NULL && item->action != PIX_ACT_MISSING && item->action != PIX_ACT_DIR &&
	    item->action != PIX_ACT_DIR_MISSING && item->action != PIX_ACT_VERIFY)
		count(s, PIX_N_ERRORS, 1);
	return TRUE;
}

gboolean pix_store_put(PixStore *s, PixItem *item, GError **error)
{
	return store_put(s, item, NULL, FALSE, error);
}

/* Adds a committed batch to the write-rate bucket of the catalog's size. */
static void account_batch(PixStore *s, gint64 n_items, gint64 n_new_rows, gint64 busy_us, gint64 wall_us)
{
	if (s->rates == NULL)
		s->rates = g_array_new(FALSE, TRUE, sizeof(PixWriteRate));
	s->catalog_rows += n_new_rows;
	gint64 bucket = MAX(s->catalog_rows - 1, 0) / PIX_STORE_RATE_ROWS;
	guint i = s->rates->len;
	if (i == 0 || g_array_index(s->rates, PixWriteRate, i - 1).catalog_rows != bucket * PIX_STORE_RATE_ROWS) {
		PixWriteRate r = { .catalog_rows = bucket * PIX_STORE_RATE_ROWS };
		g_array_append_val(s->rates, r);
		i++;
	}
	PixWriteRate *r = &g_array_index(s->rates, PixWriteRate, i - 1);
	r->items += n_items;
	r->busy_us += busy_us;
	r->wall_us += wall_us;
}

const GArray *pix_store_write_rates(PixStore *s)
{
	if (s->rates == NULL)
		s->rates = g_array_new(FALSE, TRUE, sizeof(PixWriteRate));
	return s->rates;
}

/*
 * Items held back until the input ends, when plan has stored every move it
 * found by inode: a new file whose content matches a row whose path is
 * gone (it may take that row over, see pick_moved(), but only once no
 * rename claims the row), and the end-of-walk missing files and
 * directories (so that a file that turned up elsewhere is recorded as
 * moved, not also as missing).  They are written in that order, each kind
 * in arrival order (a directory after its files).  Bounded: at this many,
 * they are written at once, in the same order.
 */
#define MAX_DEFERRED 20000

/*
 * The batch being filled by pix_store_consume().  A new file that may be
 * a moved one (is_move_candidate()) waits in `looking` until the batch is
 * about to commit: the rows of all their contents are then asked for at
 * once (find_moved()), before any of them is written, so that reads do
 * not break up the batch's stream of inserts (on PostgreSQL each read
 * ends a COPY and waits a round trip).  Those with a candidate are
 * deferred, the others written.
 *
 * Every item written into the open batch is kept (`written`) until it
 * commits: on PostgreSQL, a batch the server rolled back (a deadlock
 * with another host, a serialization failure) or lost with its
 * connection is written again from them (batch_retry()).  So that they
 * hold bounded memory whatever their thumbnails weigh, a batch also
 * commits at BATCH_HELD_BYTES of thumbnails (2,000 small JPEGs of noise,
 * 49 KB of thumbnails each, held 100 MB in one batch of a second).
 */
#define BATCH_HELD_BYTES (8u << 20)
typedef struct {
	guint batch_items;
	gint64 batch_us;
	guint n_items;          /* written in the open batch */
	gint64 start_us;        /* when its first item came */
	gint64 busy_us;         /* time spent writing it so far */
	gint64 last_commit_us;
	gsize held_bytes;       /* of the thumbnails of `looking` and `written` */
	GPtrArray *looking;     /* PixItem (owned), in arrival order */
	GPtrArray *adds;        /* deferred: PixItem (owned) */
	GPtrArray *missing;     /* deferred: PixItem (owned) */
	GPtrArray *written;     /* PixItem (owned), written into the open
	                           batch, in order */
} Batch;


/* Drops the NULLs of `a` (items taken out of it), keeping the order. */
static void compact(GPtrArray *a)
{
	guint k = 0;
	for (guint i = 0; i < a->len; i++)
		if (a->pdata[i] != NULL)
			a->pdata[k++] = a->pdata[i];
	a->len = k;
}

static guint batch_len(const Batch *b)
{
	return b->n_items + b->looking->len;
}

/* Writes `item` (transfer full) into the open batch (`candidates`,
 * `is_looked`: see store_put()). */
static gboolean batch_write(PixStore *s, Batch *b, PixItem *item, GHashTable *candidates, gboolean is_looked,
                            GError **error)
{
	gint64 t0 = g_get_monotonic_time();
	if (batch_len(b) == 0)
		b->start_us = t0;
	b->held_bytes += pix_thumb_bytes(item->thumb);
	g_ptr_array_add(b->written, item);
	if (!store_put(s, item, candidates, is_looked, error))
		return FALSE;
	b->n_items++;
	b->busy_us += g_get_monotonic_time() - t0;
	return TRUE;
}

/* Settles the new files of `looking`: each is deferred or written. */
static gboolean settle_looking(PixStore *s, Batch *b, GError **error)
{
	g_autoptr(GHashTable) candidates = NULL;
	compact(b->looking);    /* a failed batch_write() left its item out */
	if (b->looking->len == 0)
		return TRUE;
	gint64 t0 = g_get_monotonic_time();
	gboolean ok = find_moved(s, (PixItem *const *)b->looking->pdata, b->looking->len, &candidates, error);
	b->busy_us += g_get_monotonic_time() - t0;
	for (guint i = 0; i < b->looking->len && ok; i++) {
		PixItem *item = g_ptr_array_index(b->looking, i);
		if (pick_moved(s, item, candidates) != NULL) {
			g_ptr_array_add(b->adds, item);
			b->looking->pdata[i] = NULL;
			continue;
		}
		b->looking->pdata[i] = NULL;
		ok = batch_write(s, b, item, NULL, TRUE, error);
	}
	if (!ok)
		return FALSE;   /* what is left, settled with the next commit */
	g_ptr_array_set_size(b->looking, 0);
	return TRUE;
}

/* Accounts for the batch just committed (begun at t0, when the catalog
 * had n_new new rows) and empties it. */
static void batch_committed(PixStore *s, Batch *b, gint64 n_new, gint64 t0)
{
	gint64 now = g_get_monotonic_time();
	account_batch(s, b->n_items, n_new, b->busy_us + (now - t0), now - b->last_commit_us);
	b->last_commit_us = now;
	b->busy_us = 0;
	b->n_items = 0;
	b->held_bytes = 0;
	g_ptr_array_set_size(b->written, 0);
}

/*
 * After a write or the commit of the open batch failed with `error`:
 * where the server rolled the batch back for a deadlock or a
 * serialization failure (PIX_STORE_ERROR_RETRY), or the connection is
 * gone (PIX_STORE_ERROR_LOST; connected again first), writes the batch
 * again from its items and commits it, at most BATCH_RETRIES times,
 * saying so.  The catalog is then as it was when the batch began, and
 * plan's decisions hold as they did: a new file's moved row is looked for
 * again.  TRUE: committed, error cleared.
 */
static gboolean batch_retry(PixStore *s, Batch *b, GError **error)
{
	for (guint n = 1; n <= BATCH_RETRIES; n++) {
		/* a lost connection is made again, where the backend has one */
		gboolean is_lost = s->be->reconnect != NULL && g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOST);
		if ((!is_lost && !g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_RETRY)) ||
		    pix_stop_requested())
			return FALSE;
		pix_notice("%s: writing its batch of %u items again (%u of %u)", (*error)->message, b->written->len, n,
		         BATCH_RETRIES);
		g_clear_error(error);
		pix_store_rollback_batch(s);
		if (is_lost && !s->be->reconnect(s, RECONNECT_ATTEMPTS, error))
			return FALSE;
		/* the other side of a deadlock goes first */
		g_usleep((gulong)g_random_int_range(10, 50) * 1000 * n);
		gint64 t0 = g_get_monotonic_time();
		gint64 n_new = s->counts[PIX_N_NEW];
		b->n_items = 0;
		b->busy_us = 0;
		gboolean ok = TRUE;
		for (guint i = 0; i < b->written->len && ok; i++, b->n_items++)
			ok = store_put(s, g_ptr_array_index(b->written, i), NULL, FALSE, error);
		if (ok && pix_store_commit(s, error)) {
			batch_committed(s, b, n_new, t0);
			return TRUE;
		}
	}
	return FALSE;
}

/* Commits the batch when it is full or old enough (or `is_final`). */
static gboolean batch_maybe_commit(PixStore *s, Batch *b, gboolean is_final, GError **error)
{
	if (batch_len(b) == 0 ||
	    (!is_final && batch_len(b) < b->batch_items && b->held_bytes < BATCH_HELD_BYTES &&
	     g_get_monotonic_time() - b->start_us < b->batch_us))
		return TRUE;
	if (!settle_looking(s, b, error))
		return FALSE;
	if (b->n_items == 0)
		return TRUE;    /* all of it deferred */
	gint64 t0 = g_get_monotonic_time();
	gint64 n_new = s->counts[PIX_N_NEW];
	if (!pix_store_commit(s, error))
		return FALSE;
	batch_committed(s, b, n_new, t0);
	return TRUE;
}

/* Takes `item` (transfer full) into the batch. */
static gboolean batch_put(PixStore *s, Batch *b, PixItem *item, GError **error)
{
	if (is_move_candidate(s, item)) {
		if (batch_len(b) == 0)
			b->start_us = g_get_monotonic_time();
		b->held_bytes += pix_thumb_bytes(item->thumb);     /* again if written: a commit a little early */
		g_ptr_array_add(b->looking, item);
	} else if (item->action == PIX_ACT_MISSING || item->action == PIX_ACT_DIR_MISSING) {
		g_ptr_array_add(b->missing, item);
	} else {
		/* no row can be the file of a new one here: looked for, none */
		if (!batch_write(s, b, item, NULL, TRUE, error))
			return FALSE;
	}
	return batch_maybe_commit(s, b, FALSE, error);
}

/* Writes the deferred items (see MAX_DEFERRED), the new files' moved rows
 * looked for together. */
static gboolean put_deferred(PixStore *s, Batch *b, GError **error)
{
	g_autoptr(GHashTable) candidates = NULL;
	if (!settle_looking(s, b, error) ||
	    !find_moved(s, (PixItem *const *)b->adds->pdata, b->adds->len, &candidates, error))
		return FALSE;
	GPtrArray *lists[] = { b->adds, b->missing };
	for (guint l = 0; l < G_N_ELEMENTS(lists); l++) {
		for (guint i = 0; i < lists[l]->len; i++) {
			PixItem *item = g_ptr_array_index(lists[l], i);
			if (item == NULL)
				continue;       /* written before a batch_retry() */
			lists[l]->pdata[i] = NULL;
			if (!batch_write(s, b, item, candidates, TRUE, error) || !batch_maybe_commit(s, b, FALSE, error))
				return FALSE;
		}
		g_ptr_array_set_size(lists[l], 0);
	}
	return TRUE;
}

/* Items taken from the store queue at once. */
#define CONSUME_BATCH 256

gboolean pix_store_consume(PixStore *s, PixQueue *in, guint batch_items, gint64 batch_us, GError **error)
{
	gboolean is_failed = FALSE;
	Batch b = { .batch_items = batch_items, .batch_us = batch_us, .last_commit_us = g_get_monotonic_time(),
	            .looking = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .adds = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .missing = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .written = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free) };

	for (;;) {
		gboolean is_timeout = FALSE;
		gint64 wait_us = -1;
		gpointer items[CONSUME_BATCH];
		if (batch_len(&b) > 0)
			wait_us = MAX(0, b.start_us + batch_us - g_get_monotonic_time());
		/* what the hashers handed over since the last look, at once */
		guint n = pix_queue_pop_many(in, items, CONSUME_BATCH, wait_us, &is_timeout);

		if (n == 0 && !is_timeout)
			break;
		for (guint i = 0; i < MAX(n, 1); i++) {
			PixItem *item = n > 0 ? items[i] : NULL;
			if (is_failed) {
				pix_item_free(item);
				continue;
			}
			gboolean is_ok = item == NULL ? batch_maybe_commit(s, &b, FALSE, error)
			                              : batch_put(s, &b, item, error);
			if (is_ok && b.adds->len + b.missing->len >= MAX_DEFERRED)
				is_ok = put_deferred(s, &b, error);
			if (!is_ok)
				is_ok = batch_retry(s, &b, error);
			if (!is_ok) {
				/* a look-up that failed leaves the batch open: what it
				 * holds is not committed with the run's end */
				pix_store_rollback_batch(s);
				is_failed = TRUE;
				pix_request_stop();
			}
		}
	}
	while (!is_failed && !(put_deferred(s, &b, error) && batch_maybe_commit(s, &b, TRUE, error)))
		is_failed = !batch_retry(s, &b, error);
	if (is_failed)
		pix_store_rollback_batch(s);
	g_ptr_array_free(b.written, TRUE);
	g_ptr_array_free(b.looking, TRUE);
	g_ptr_array_free(b.adds, TRUE);
	g_ptr_array_free(b.missing, TRUE);
	return !is_failed;
}


