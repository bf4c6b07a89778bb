/*
 * tags.c: the photographer's metadata of one file, as its readers find it
 * and as the catalog stores it (see tags.h).
 *
 * Reads nothing but what the readers add; writes the PixTags.  Runs on a
 * hash thread (one PixTags per file being read).
 *
 * Invariants (pix_tags_check(), asserted after pix_tags_finish()):
 *  1. A keyword's parent comes before it in `keywords`, its depth is one
 *     more than its parent's (1 at the top), and there are at most
 *     PIX_TAGS_MAX_KEYWORDS levels, PIX_TAGS_MAX_DEPTH deep.  (No two
 *     levels under one parent have names equal ignoring case: level_of()
 *     makes it so; not checked, a quadratic walk.)
 *  2. At most PIX_TAGS_MAX_PEOPLE people; an area lies within the image
 *     (0 <= x, y; w, h > 0; x + w, y + h <= 1).
 *  3. Every string is valid UTF-8, not empty, at most PIX_TAGS_MAX_TEXT
 *     bytes, without control characters but newline and tab (a keyword
 *     level or a name has neither).
 *  4. The raw lists exist until finishing and are freed by it: a finished
 *     PixTags has raw == NULL.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tags.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* The hierarchical properties ranked (see pix_tags_add_path()). */
#define N_RANKS 8
/* The region lists: MWG, Microsoft, PersonInImage names. */
#define N_LISTS 3

struct PixTagsRaw {
	GPtrArray *flat[2];     /* char*: per source (XMP, IPTC), as found */
	GPtrArray *paths[N_RANKS]; /* GStrv: per property rank, levels split */
	GPtrArray *creators[2]; /* char*: per source */
	GArray *people[N_LISTS]; /* PixPerson */
	int percent;            /* MicrosoftPhoto:Rating, -1 unknown */
	gboolean is_over_noted; /* a note said that more was given than kept */
};

static void person_clear(gpointer p)
{
	PixPerson *x = p;
	g_free(x->name);
	g_free(x->type);
}

static void keyword_clear(gpointer p)
{
	g_free(((PixKeyword *)p)->name);
}

static PixTagsRaw *raw_new(void)
{
	PixTagsRaw *r = g_new0(PixTagsRaw, 1);
	for (guint i = 0; i < 2; i++) {
		r->flat[i] = g_ptr_array_new_with_free_func(g_free);
		r->creators[i] = g_ptr_array_new_with_free_func(g_free);
	}
	for (guint i = 0; i < N_RANKS; i++)
		r->paths[i] = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	for (guint i = 0; i < N_LISTS; i++) {
		r->people[i] = g_array_new(FALSE, TRUE, sizeof(PixPerson));
		g_array_set_clear_func(r->people[i], person_clear);
	}
	r->percent = -1;
	return r;
}

static void raw_free(PixTagsRaw *r)
{
	if (r == NULL)
		return;
	for (guint i = 0; i < 2; i++) {
		g_ptr_array_unref(r->flat[i]);
		g_ptr_array_unref(r->creators[i]);
	}
	for (guint i = 0; i < N_RANKS; i++)
		g_ptr_array_unref(r->paths[i]);
	for (guint i = 0; i < N_LISTS; i++)
		g_array_unref(r->people[i]);
	g_free(r);
}

PixTags *pix_tags_new(void)
{
	PixTags *t = g_new0(PixTags, 1);
	t->keywords = g_array_new(FALSE, TRUE, sizeof(PixKeyword));
	g_array_set_clear_func(t->keywords, keyword_clear);
	t->people = g_array_new(FALSE, TRUE, sizeof(PixPerson));
	g_array_set_clear_func(t->people, person_clear);
	t->rating = PIX_RATING_UNKNOWN;
	t->raw = raw_new();
	return t;
}

void pix_tags_free(PixTags *t)
{
	if (t == NULL)
		return;
	g_array_unref(t->keywords);
	g_array_unref(t->people);
	char **texts[] = { &t->label, &t->title, &t->caption, &t->creator, &t->copyright, &t->sublocation,
		           &t->city, &t->province, &t->country, &t->country_code, &t->note };
	for (guint i = 0; i < G_N_ELEMENTS(texts); i++)
		g_free(*texts[i]);
	raw_free(t->raw);
	g_free(t);
}

void pix_tags_note(PixTags *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (t->note == NULL) {
		t->note = g_steal_pointer(&what);
	} else if (strlen(t->note) < 1024) {
		char *both = g_strconcat(t->note, "; ", what, NULL);
		g_free(t->note);
		t->note = both;
	}
}

/*
 * `text` as a value: trimmed, cut to PIX_TAGS_MAX_TEXT bytes (at a
 * character), control characters but newline and tab (with `is_name`,
 * those too) made spaces; NULL when nothing is left (transfer full).
 * The readers give valid UTF-8.
 */
static char *clean(const char *text, gboolean is_name)
{
	if (text == NULL)
		return NULL;
	g_assert(g_utf8_validate(text, -1, NULL));
	GString *s = g_string_sized_new(MIN(strlen(text), PIX_TAGS_MAX_TEXT) + 1);
	for (const char *p = text; *p != '\0';) {
		const char *next = g_utf8_next_char(p);
		if (s->len + (gsize)(next - p) > PIX_TAGS_MAX_TEXT)
			break;
		gunichar c = g_utf8_get_char(p);
		gboolean is_control = c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029;
		if (is_control && (is_name || (c != '\n' && c != '\t')))
			g_string_append_c(s, ' ');
		else
			g_string_append_len(s, p, next - p);
		p = next;
	}
	g_strstrip(s->str);
	s->len = strlen(s->str);
	if (s->len == 0) {
		g_string_free(s, TRUE);
		return NULL;
	}
	return g_string_free(s, FALSE);
}

/* More keywords or people than kept: said once. */
static void note_over(PixTags *t)
{
	if (t->raw->is_over_noted)
		return;
	t->raw->is_over_noted = TRUE;
	pix_tags_note(t, "more than %d keywords or %d people: the rest dropped", PIX_TAGS_MAX_KEYWORDS,
	              PIX_TAGS_MAX_PEOPLE);
}

void pix_tags_set_text(char **field, const char *text)
{
	if (*field == NULL)
		*field = clean(text, FALSE);
}

static void add_unique(GPtrArray *list, char *value)
{
	for (guint i = 0; i < list->len; i++) {
		if (strcmp(list->pdata[i], value) == 0) {
			g_free(value);
			return;
		}
	}
	g_ptr_array_add(list, value);
}

void pix_tags_add_flat(PixTags *t, PixTagsSource source, const char *keyword)
{
	g_assert(t->raw != NULL);
	char *k = clean(keyword, TRUE);
	if (k == NULL)
		return;
	if (t->raw->flat[source]->len >= PIX_TAGS_MAX_KEYWORDS) {
		note_over(t);
		g_free(k);
		return;
	}
	add_unique(t->raw->flat[source], k);
}

void pix_tags_add_path(PixTags *t, guint source_rank, const char *path, char separator)
{
	g_assert(t->raw != NULL && source_rank < N_RANKS);
	if (path == NULL)
		return;
	if (t->raw->paths[source_rank]->len >= PIX_TAGS_MAX_KEYWORDS) {
		note_over(t);
		return;
	}
	char sep[2] = { separator, '\0' };
	g_auto(GStrv) parts = g_strsplit(path, sep, PIX_TAGS_MAX_DEPTH + 2);
	GPtrArray *levels = g_ptr_array_new();
	for (guint i = 0; parts[i] != NULL; i++) {
		char *level = clean(parts[i], TRUE);
		if (level != NULL)
			g_ptr_array_add(levels, level);
	}
	if (levels->len > PIX_TAGS_MAX_DEPTH) {
		pix_tags_note(t, "a keyword of more than %d levels dropped", PIX_TAGS_MAX_DEPTH);
		g_ptr_array_set_free_func(levels, g_free);
		g_ptr_array_unref(levels);
		return;
	}
	if (levels->len == 0) {
		g_ptr_array_unref(levels);
		return;
	}
	g_ptr_array_add(levels, NULL);
	g_ptr_array_add(t->raw->paths[source_rank], g_ptr_array_free(levels, FALSE));
}

void pix_tags_add_creator(PixTags *t, PixTagsSource source, const char *name)
{
	g_assert(t->raw != NULL);
	char *n = clean(name, TRUE);
	if (n != NULL && t->raw->creators[source]->len < PIX_TAGS_MAX_PEOPLE)
		add_unique(t->raw->creators[source], n);
	else
		g_free(n);
}

gboolean pix_tags_set_rating(PixTags *t, const char *text, gboolean is_percent)
{
	g_autofree char *s = g_strstrip(g_strdup(text != NULL ? text : ""));
	char *end = NULL;
	double v = g_ascii_strtod(s, &end);
	if (s[0] == '\0' || end == s || *end != '\0' || !isfinite(v))
		return FALSE;
	if (is_percent) {
		if (v < 0 || v > 100)
			return FALSE;
		if (t->raw != NULL && t->raw->percent < 0)
			t->raw->percent = (int)lround(v);
		return TRUE;
	}
	if (v < -1 || v > 5)
		return FALSE;
	if (t->rating == PIX_RATING_UNKNOWN)
		t->rating = (int)lround(v);
	return TRUE;
}

/* Whether `p`'s area is one of an image: within it (a rounding's worth
 * over its edges is clamped), not empty. */
static gboolean area_fits(PixPerson *p)
{
	const double slack = 0.01;
	if (!isfinite(p->x) || !isfinite(p->y) || !isfinite(p->w) || !isfinite(p->h) || p->w <= 0 || p->h <= 0 ||
	    p->x < -slack || p->y < -slack || p->x + p->w > 1 + slack || p->y + p->h > 1 + slack)
		return FALSE;
	p->x = CLAMP(p->x, 0, 1);
	p->y = CLAMP(p->y, 0, 1);
	p->w = MIN(p->w, 1 - p->x);
	p->h = MIN(p->h, 1 - p->y);
	return p->w > 0 && p->h > 0;
}

void pix_tags_add_person(PixTags *t, guint list, PixPerson *p)
{
	g_assert(t->raw != NULL && list < N_LISTS);
	char *name = clean(p->name, TRUE), *type = clean(p->type, TRUE);
	g_free(p->name);
	g_free(p->type);
	p->name = name;
	p->type = type;
	if (p->name != NULL && t->raw->people[list]->len >= PIX_TAGS_MAX_PEOPLE)
		note_over(t);
	if (p->name == NULL || t->raw->people[list]->len >= PIX_TAGS_MAX_PEOPLE) {
		person_clear(p);
		return;
	}
	if (p->has_area && !area_fits(p)) {
		pix_tags_note(t, "the region of '%s' lies outside the image (x %g, y %g, w %g, h %g): kept without it",
		              p->name, p->x, p->y, p->w, p->h);
		p->has_area = FALSE;
	}
	if (!p->has_area)
		p->x = p->y = p->w = p->h = 0;
	g_array_append_val(t->raw->people[list], *p);
}

static void copy_list(GPtrArray *dst, const GPtrArray *src, gboolean is_strv)
{
	if (dst->len > 0)
		return;
	for (guint i = 0; i < src->len; i++)
		g_ptr_array_add(dst, is_strv ? (gpointer)g_strdupv(src->pdata[i]) : (gpointer)g_strdup(src->pdata[i]));
}

void pix_tags_fill(PixTags *dst, const PixTags *src)
{
	g_assert(dst->raw != NULL && src->raw != NULL);
	char **d[] = { &dst->label, &dst->title, &dst->caption, &dst->creator, &dst->copyright, &dst->sublocation,
		       &dst->city, &dst->province, &dst->country, &dst->country_code };
	char *const *s[] = { &src->label, &src->title, &src->caption, &src->creator, &src->copyright,
		             &src->sublocation, &src->city, &src->province, &src->country, &src->country_code };
	for (guint i = 0; i < G_N_ELEMENTS(d); i++)
		if (*d[i] == NULL && *s[i] != NULL)
			*d[i] = g_strdup(*s[i]);
	if (dst->rating == PIX_RATING_UNKNOWN)
		dst->rating = src->rating;
	if (dst->raw->percent < 0)
		dst->raw->percent = src->raw->percent;
	for (guint i = 0; i < 2; i++) {
		copy_list(dst->raw->flat[i], src->raw->flat[i], FALSE);
		copy_list(dst->raw->creators[i], src->raw->creators[i], FALSE);
	}
	for (guint i = 0; i < N_RANKS; i++)
		copy_list(dst->raw->paths[i], src->raw->paths[i], TRUE);
	for (guint i = 0; i < N_LISTS; i++) {
		if (dst->raw->people[i]->len > 0)
			continue;
		for (guint k = 0; k < src->raw->people[i]->len; k++) {
			PixPerson p = g_array_index(src->raw->people[i], PixPerson, k);
			p.name = g_strdup(p.name);
			p.type = g_strdup(p.type);
			g_array_append_val(dst->raw->people[i], p);
		}
	}
	if (src->note != NULL)
		pix_tags_note(dst, "%s", src->note);
}

/* --- finishing --- */

/* Whether two names are the same keyword or person: equal ignoring case. */
static gboolean same_name(const char *a, const char *b)
{
	g_autofree char *fa = g_utf8_casefold(a, -1), *fb = g_utf8_casefold(b, -1);
	return strcmp(fa, fb) == 0;
}

/* The level `name` under `parent` (-1: the top), added when missing;
 * -1 when the tree is full. */
static int level_of(PixTags *t, int parent, const char *name)
{
	for (guint i = 0; i < t->keywords->len; i++) {
		const PixKeyword *k = &g_array_index(t->keywords, PixKeyword, i);
		if (k->parent == parent && same_name(k->name, name))
			return (int)i;
	}
	if (t->keywords->len >= PIX_TAGS_MAX_KEYWORDS)
		return -1;
	PixKeyword k = {
		.name = g_strdup(name), .parent = parent,
		.depth = parent < 0 ? 1 : g_array_index(t->keywords, PixKeyword, parent).depth + 1,
	};
	g_array_append_val(t->keywords, k);
	return (int)t->keywords->len - 1;
}

static void finish_keywords(PixTags *t)
{
	PixTagsRaw *r = t->raw;
	gboolean is_full = FALSE;
	for (guint rank = 0; rank < N_RANKS; rank++) {
		GPtrArray *paths = r->paths[rank];
		if (paths->len == 0)
			continue;
		for (guint i = 0; i < paths->len && !is_full; i++) {
			char **levels = paths->pdata[i];
			int at = -1;
			for (guint k = 0; levels[k] != NULL && !is_full; k++)
				is_full = (at = level_of(t, at, levels[k])) < 0;
			if (!is_full)
				g_array_index(t->keywords, PixKeyword, at).is_assigned = TRUE;
		}
		break;          /* the best-ranked property alone */
	}
	GPtrArray *flat = r->flat[PIX_TAGS_XMP]->len > 0 ? r->flat[PIX_TAGS_XMP] : r->flat[PIX_TAGS_IPTC];
	/* a flat keyword naming a level of the tree is that level (Lightroom
	 * lists every level in dc:subject); the names are matched against
	 * the tree as the hierarchical keywords made it */
	guint n_tree = t->keywords->len;
	for (guint i = 0; i < flat->len && !is_full; i++) {
		const char *name = flat->pdata[i];
		gboolean is_level = FALSE;
		for (guint k = 0; k < n_tree && !is_level; k++)
			is_level = same_name(g_array_index(t->keywords, PixKeyword, k).name, name);
		if (is_level)
			continue;
		int at = level_of(t, -1, name);
		if (at < 0)
			is_full = TRUE;
		else
			g_array_index(t->keywords, PixKeyword, at).is_assigned = TRUE;
	}
	if (is_full)
		pix_tags_note(t, "more than %d keywords: the rest dropped", PIX_TAGS_MAX_KEYWORDS);
}

static void finish_people(PixTags *t)
{
	PixTagsRaw *r = t->raw;
	for (guint list = 0; list < 2; list++) {
		GArray *a = r->people[list];
		if (a->len == 0)
			continue;
		for (guint i = 0; i < a->len; i++) {
			PixPerson *p = &g_array_index(a, PixPerson, i);
			PixPerson taken = *p;
			p->name = p->type = NULL;
			g_array_append_val(t->people, taken);
		}
		break;
	}
	/* PersonInImage: the names no region gives */
	GArray *names = r->people[2];
	for (guint i = 0; i < names->len && t->people->len < PIX_TAGS_MAX_PEOPLE; i++) {
		PixPerson *p = &g_array_index(names, PixPerson, i);
		gboolean is_known = FALSE;
		for (guint k = 0; k < t->people->len && !is_known; k++)
			is_known = same_name(g_array_index(t->people, PixPerson, k).name, p->name);
		if (is_known)
			continue;
		PixPerson taken = { .name = g_steal_pointer(&p->name) };
		g_array_append_val(t->people, taken);
	}
}

static char *join(const GPtrArray *names)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s", i > 0 ? "; " : "", (const char *)names->pdata[i]);
	return g_string_free(s, FALSE);
}

gboolean pix_tags_finish(PixTags *t)
{
	if (t->raw != NULL) {
		PixTagsRaw *r = t->raw;
		finish_keywords(t);
		finish_people(t);
		GPtrArray *creators = r->creators[PIX_TAGS_XMP]->len > 0 ? r->creators[PIX_TAGS_XMP]
		                                                          : r->creators[PIX_TAGS_IPTC];
		if (t->creator == NULL && creators->len > 0) {
			g_autofree char *joined = join(creators);
			t->creator = clean(joined, FALSE);
		}
		/* Windows' stars: 1, 25, 50, 75, 99 percent; a value between
		 * two counts as the nearer */
		if (t->rating == PIX_RATING_UNKNOWN && r->percent >= 0)
			t->rating = r->percent == 0 ? 0 : r->percent < 13 ? 1 : r->percent < 38 ? 2 : r->percent < 63 ? 3
			            : r->percent < 88 ? 4 : 5;
		raw_free(g_steal_pointer(&t->raw));
	}
	g_assert(pix_tags_check(t));
	return t->keywords->len > 0 || t->people->len > 0 || t->rating != PIX_RATING_UNKNOWN || t->label != NULL ||
	       t->title != NULL || t->caption != NULL || t->creator != NULL || t->copyright != NULL ||
	       t->sublocation != NULL || t->city != NULL || t->province != NULL || t->country != NULL ||
	       t->country_code != NULL;
}

char *pix_tags_keyword_path(const PixTags *t, guint i)
{
	const char *levels[PIX_TAGS_MAX_DEPTH + 1];
	guint n = 0;
	for (int at = (int)i; at >= 0 && n < G_N_ELEMENTS(levels); n++) {
		const PixKeyword *k = &g_array_index(t->keywords, PixKeyword, at);
		levels[n] = k->name;
		at = k->parent;
	}
	GString *s = g_string_new(NULL);
	while (n > 0)
		g_string_append_printf(s, "%s%s", s->len > 0 ? "/" : "", levels[--n]);
	return g_string_free(s, FALSE);
}

char *pix_tags_keyword_lines(const PixTags *t)
{
	GString *s = NULL;
	for (guint i = 0; i < t->keywords->len; i++) {
		if (!g_array_index(t->keywords, PixKeyword, i).is_assigned)
			continue;
		g_autofree char *path = pix_tags_keyword_path(t, i);
		if (s == NULL)
			s = g_string_new(NULL);
		else
			g_string_append_c(s, '\n');
		g_string_append(s, path);
	}
	return s != NULL ? g_string_free(s, FALSE) : NULL;
}

char *pix_tags_people_lines(const PixTags *t)
{
	GString *s = NULL;
	for (guint i = 0; i < t->people->len; i++) {
		const char *name = g_array_index(t->people, PixPerson, i).name;
		gboolean is_dup = FALSE;
		for (guint k = 0; k < i && !is_dup; k++)
			is_dup = strcmp(g_array_index(t->people, PixPerson, k).name, name) == 0;
		if (is_dup)
			continue;
		if (s == NULL)
			s = g_string_new(NULL);
		else
			g_string_append_c(s, '\n');
		g_string_append(s, name);
	}
	return s != NULL ? g_string_free(s, FALSE) : NULL;
}

static gboolean is_clean(const char *s, gboolean is_name)
{
	if (s == NULL)
		return TRUE;
	if (s[0] == '\0' || strlen(s) > PIX_TAGS_MAX_TEXT || !g_utf8_validate(s, -1, NULL))
		return FALSE;
	for (const char *p = s; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if ((c < 0x20 || (c >= 0x7f && c < 0xa0)) && (is_name || (c != '\n' && c != '\t')))
			return FALSE;
	}
	return TRUE;
}

gboolean pix_tags_check(const PixTags *t)
{
	if (t == NULL || t->keywords->len > PIX_TAGS_MAX_KEYWORDS || t->people->len > PIX_TAGS_MAX_PEOPLE)
		return FALSE;
	for (guint i = 0; i < t->keywords->len; i++) {
		const PixKeyword *k = &g_array_index(t->keywords, PixKeyword, i);
		if (k->name == NULL || !is_clean(k->name, TRUE) || k->parent >= (int)i || k->depth > PIX_TAGS_MAX_DEPTH)
			return FALSE;
		int want = k->parent < 0 ? 1 : g_array_index(t->keywords, PixKeyword, k->parent).depth + 1;
		if (k->depth != want)
			return FALSE;
	}
	for (guint i = 0; i < t->people->len; i++) {
		const PixPerson *p = &g_array_index(t->people, PixPerson, i);
		if (p->name == NULL || !is_clean(p->name, TRUE) || !is_clean(p->type, TRUE))
			return FALSE;
		if (p->has_area && !(p->x >= 0 && p->y >= 0 && p->w > 0 && p->h > 0 && p->x + p->w <= 1 + 1e-9 &&
		                     p->y + p->h <= 1 + 1e-9))
			return FALSE;
	}
	const char *texts[] = { t->label, t->title, t->caption, t->creator, t->copyright, t->sublocation,
		                t->city, t->province, t->country, t->country_code };
	for (guint i = 0; i < G_N_ELEMENTS(texts); i++)
		if (!is_clean(texts[i], FALSE))
			return FALSE;
	return (t->rating == PIX_RATING_UNKNOWN || (t->rating >= -1 && t->rating <= 5)) && t->raw == NULL;
}

char *pix_tags_key(const char *text)
{
	return text != NULL ? g_utf8_casefold(text, -1) : NULL;
}
