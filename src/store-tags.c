/*
 * store-tags.c: the photographer's metadata in the catalog (schema 0009):
 * a file's keyword and people rows, and the change log's entries for a
 * keyword or rating change, the file's own or one its sidecar brings.
 *
 * Writes through the writer PixStore, on its thread, inside its batch
 * (store-write.c and store-sidecars.c call it).
 *
 * What counts for an image is its sidecar's keywords where the sidecar
 * gives any, else its own (and so for the rating): the views file_info
 * and file_keywords say the same in SQL.  A change of either is logged
 * as a 'changed' entry of the image with the values before and after.
 *
 * Invariants (checked in SQL, on either backend, by tags_sound in
 * tests/cli/tags-lib.sh, after each catalog the tag tests make):
 *  1. A file's keyword and people rows are written in the batch of its
 *     meta row, from the same PixTags: meta.keywords is NULL exactly when
 *     it has no keyword row, meta.people exactly when no people row.
 *  2. A keyword row's parent_ord is a smaller ord of the same file
 *     (PixTags keeps parents first, tags.c invariant 1).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"

#include <string.h>

void pix_tags_seen_clear(PixTagsSeen *t)
{
	g_clear_pointer(&t->keywords, g_free);
	t->rating = -2;
	t->has_people = FALSE;
}

void pix_tags_seen_of(const PixMeta *m, PixTagsSeen *out)
{
	out->keywords = NULL;
	out->rating = -2;
	out->has_people = FALSE;
	if (m == NULL || m->tags == NULL)
		return;
	out->keywords = pix_tags_keyword_lines(m->tags);
	if (m->tags->rating != PIX_RATING_UNKNOWN)
		out->rating = m->tags->rating;
	out->has_people = m->tags->people->len > 0;
}

static gboolean delete_rows(PixStore *s, StatementId id, gint64 file_id, GError **error)
{
	PixStmt *st = pix_store_stmt(s, id, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, file_id);
	return pix_store_step_done(s, st, "cannot write keywords or people", error);
}

gboolean pix_store_put_tags(PixStore *s, gint64 file_id, const PixMeta *m, gboolean is_new, const PixTagsSeen *old,
                            GError **error)
{
	const PixTags *t = m != NULL ? m->tags : NULL;
	if (!is_new) {
		/* the old rows go, but where the row said it had none */
		if ((old == NULL || old->keywords != NULL) && !delete_rows(s, ST_KEYWORDS_DELETE, file_id, error))
			return FALSE;
		if ((old == NULL || old->has_people) && !delete_rows(s, ST_PEOPLE_DELETE, file_id, error))
			return FALSE;
	}
	if (t == NULL)
		return TRUE;
	for (guint i = 0; i < t->keywords->len; i++) {
		const PixKeyword *k = &g_array_index(t->keywords, PixKeyword, i);
		g_autofree char *path = pix_tags_keyword_path(t, i);
		g_autofree char *key = pix_tags_key(path);
		PixStmt *st = pix_store_stmt(s, ST_KEYWORD_INSERT, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, file_id);
		pix_db_bind_int64(st, 2, i);
		pix_db_bind_text(st, 3, k->name, -1, PIX_DB_TRANSIENT);
		if (k->parent >= 0)
			pix_db_bind_int64(st, 4, k->parent);
		pix_db_bind_int64(st, 5, k->depth);
		pix_db_bind_text(st, 6, path, -1, PIX_DB_TRANSIENT);
		pix_db_bind_text(st, 7, key, -1, PIX_DB_TRANSIENT);
		pix_db_bind_int(st, 8, k->is_assigned ? 1 : 0);
		if (!pix_store_step_done(s, st, "cannot write keywords", error))
			return FALSE;
	}
	for (guint i = 0; i < t->people->len; i++) {
		const PixPerson *p = &g_array_index(t->people, PixPerson, i);
		g_autofree char *key = pix_tags_key(p->name);
		PixStmt *st = pix_store_stmt(s, ST_PERSON_INSERT, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, file_id);
		pix_db_bind_int64(st, 2, i);
		pix_db_bind_text(st, 3, p->name, -1, PIX_DB_TRANSIENT);
		pix_db_bind_text(st, 4, key, -1, PIX_DB_TRANSIENT);
		pix_store_bind_text_or_null(st, 5, p->type);
		if (p->has_area) {
			pix_db_bind_double(st, 6, p->x);
			pix_db_bind_double(st, 7, p->y);
			pix_db_bind_double(st, 8, p->w);
			pix_db_bind_double(st, 9, p->h);
		}
		if (!pix_store_step_done(s, st, "cannot write people", error))
			return FALSE;
	}
	return TRUE;
}

void pix_store_change_tags(PixChangeRow *c, const PixTagsSeen *old, const PixTagsSeen *new)
{
	c->has_keywords_change = g_strcmp0(old->keywords, new->keywords) != 0;
	c->has_rating_change = old->rating != new->rating;
	c->is_retagged = c->has_keywords_change || c->has_rating_change;
	c->old_keywords = c->has_keywords_change ? old->keywords : NULL;
	c->new_keywords = c->has_keywords_change ? new->keywords : NULL;
	c->old_rating = old->rating;
	c->new_rating = new->rating;
}

/* Column `i` of `st` as a rating (-2 for NULL). */
static gint64 column_rating(PixStmt *st, int i)
{
	return pix_db_column_type(st, i) == PIX_DB_NULL ? -2 : pix_db_column_int64(st, i);
}

static char *column_text(PixStmt *st, int i)
{
	return pix_db_column_type(st, i) == PIX_DB_NULL ? NULL : g_strdup((const char *)pix_db_column_text(st, i));
}

gboolean pix_store_image_tags(PixStore *s, gint64 id, PixTagsSeen *out, guint8 md5[16], gboolean *has_md5,
                              gint64 *size, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_IMAGE_TAGS, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, id);
	int rc = pix_db_step(st);
	out->keywords = NULL;
	out->rating = -2;
	out->has_people = FALSE;
	*has_md5 = FALSE;
	*size = 0;
	if (rc == PIX_DB_ROW) {
		out->keywords = column_text(st, 0);
		out->rating = column_rating(st, 1);
		*has_md5 = pix_store_column_md5(st, 2, md5);
		*size = pix_db_column_int64(st, 3);
		rc = pix_db_step(st);
	}
	pix_db_reset(st);
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read a file's keywords");
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_put_retagged(PixStore *s, gint64 id, const guint8 *md5, gint64 size, const PixTagsSeen *old,
                                const PixTagsSeen *new, GError **error)
{
	PixChangeRow c = {
		.file_id = id, .kind = "changed", .has_old_md5 = md5 != NULL, .has_new_md5 = md5 != NULL,
		.has_old_size = TRUE, .has_new_size = TRUE, .old_size = size, .new_size = size,
	};
	pix_store_change_tags(&c, old, new);
	if (!c.is_retagged)
		return TRUE;
	if (md5 != NULL) {
		memcpy(c.old_md5, md5, 16);
		memcpy(c.new_md5, md5, 16);
	}
	return pix_store_put_change_row(s, &c, error);
}

/* What counts for an image: the sidecar's value where it has one. */
static void effective(PixTagsSeen *out, const PixTagsSeen *sidecar, const char *own_keywords, gint64 own_rating)
{
	out->keywords = (char *)(sidecar->keywords != NULL ? sidecar->keywords : own_keywords);
	out->rating = sidecar->rating != -2 ? sidecar->rating : own_rating;
	out->has_people = FALSE;
}

typedef struct {
	gint64 id;
	guint8 md5[16];
	gboolean has_md5;
	gint64 size;
	char *keywords;
	gint64 rating;
} Linked;

gboolean pix_store_sidecar_retagged(PixStore *s, gint64 sidecar_id, const PixTagsSeen *old, const PixTagsSeen *new,
                                    GError **error)
{
	if (g_strcmp0(old->keywords, new->keywords) == 0 && old->rating == new->rating)
		return TRUE;
	PixStmt *st = pix_store_stmt(s, ST_SIDECAR_TAGGED, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, sidecar_id);
	g_autoptr(GArray) images = g_array_new(FALSE, TRUE, sizeof(Linked));
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		Linked l = { .id = pix_db_column_int64(st, 0) };
		l.has_md5 = pix_store_column_md5(st, 1, l.md5);
		l.size = pix_db_column_int64(st, 2);
		l.keywords = column_text(st, 3);
		l.rating = column_rating(st, 4);
		g_array_append_val(images, l);
	}
	pix_db_reset(st);
	gboolean ok = rc == PIX_DB_DONE;
	if (!ok)
		pix_store_db_error(error, s, rc, "cannot read a sidecar's images");
	/* written once the statement is done with: on PostgreSQL a write
	 * may not go between a statement's rows */
	for (guint i = 0; i < images->len; i++) {
		Linked *l = &g_array_index(images, Linked, i);
		PixTagsSeen before, after;
		effective(&before, old, l->keywords, l->rating);
		effective(&after, new, l->keywords, l->rating);
		if (ok)
			ok = pix_store_put_retagged(s, l->id, l->has_md5 ? l->md5 : NULL, l->size, &before, &after, error);
		g_free(l->keywords);
	}
	return ok;
}
