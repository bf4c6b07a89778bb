/*
 * cmd-dups.c: `photoidx dups [FILTERS] [PATH...] [--json]`: groups of
 * files with the same content (MD5 and size), the group that frees the
 * most first, and what keeping one copy of each would free.  With
 * --similar [--distance N], groups of visually similar images instead
 * (similar.h: the centre rule over their perceptual hashes), each file
 * with its distance to the group's best copy.  With a rule for which
 * copy to keep (--keep), the copies that could go, as a list
 * (--print-removable, -0) or as a shell script to review and run
 * (--script, --link): one mechanism for both kinds of group.  Nothing is
 * deleted by photoidx itself.
 *
 * Reads the catalog (a reader); writes to stdout.  Main thread.
 *
 * Invariants:
 *  1. Hard links to one file are not copies: they count once in what
 *     removing would free, and are marked as such.
 *  2. Only files present on disk, not empty, with an MD5 take part.
 *  3. A file named removable is never the kept one, nor a hard link of
 *     it, nor on an offline volume; the kept one is on disk.  Of similar
 *     images, nor an exact copy of the kept one (same MD5 and size):
 *     which of those to keep is `dups`'s choice, and its script may keep
 *     the other, so the two scripts together never remove every copy.  The script
 *     acts on a copy only after checking that both it and the kept file
 *     still have the size and mtime the catalog knows (and, with
 *     --script-md5, the MD5).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-query.h"
#include "json.h"
#include "log.h"

#include "path.h"
#include "phash.h"
#include "similar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which copy of a group is kept. */
typedef enum {
	KEEP_OLDEST,          /* the oldest mtime */
	KEEP_NEWEST,          /* the newest mtime */
	KEEP_SHORTEST_PATH,   /* the shortest path */
	KEEP_PATH_PREFIX,     /* the first at or below a path */
	KEEP_BEST,            /* the best copy (similar.h): most pixels, a
	                         camera's format, the oldest */
} KeepRule;

/* What is printed. */
typedef enum {
	OUT_GROUPS,           /* the groups (text or --json) */
	OUT_REMOVABLE,        /* the paths that could go, one a line (or NUL-ended) */
	OUT_SCRIPT,           /* a shell script that removes or links them, checking first */
} DupsMode;

typedef struct {
	gboolean is_json;
	DupsMode mode;
	KeepRule keep;
	const char *keep_prefix;  /* KEEP_PATH_PREFIX: canonical path (borrowed) */
	gboolean is_null;         /* -0 */
	gboolean is_link;         /* --link: the script hard-links instead of removing */
	gboolean is_script_md5;   /* the script checks MD5s too */
	gboolean is_similar;      /* groups of similar images (--similar) */
	guint distance;           /* their distance, bits */
	gint64 n_groups, n_files, bytes_freed;
	gint64 n_removable, n_no_keeper;
	GString *buf;
	gboolean is_failed;
} DupsOut;

/* Whether two records are one file (hard links: same device and inode). */
static gboolean is_same_inode(const PixRecord *a, const PixRecord *b)
{
	return pix_record_int(a, PIX_COL_DEV, -1) == pix_record_int(b, PIX_COL_DEV, -2) &&
	       pix_record_int(a, PIX_COL_INO, -1) == pix_record_int(b, PIX_COL_INO, -2);
}

/* The index of an earlier file of the group with the same device and
 * inode as file i (a hard link), or -1. */
static int link_of(const PixDupGroup *g, guint i)
{
	for (guint k = 0; k < i; k++)
		if (is_same_inode(g->files[k], g->files[i]))
			return (int)k;
	return -1;
}

/* Whether two records have the same content (an exact copy). */
static gboolean is_same_content(const PixRecord *a, const PixRecord *b)
{
	return g_strcmp0(pix_record_text(a, PIX_COL_MD5), pix_record_text(b, PIX_COL_MD5)) == 0 &&
	       pix_record_int(a, PIX_COL_SIZE, -1) == pix_record_int(b, PIX_COL_SIZE, -2);
}

/* The index of an earlier file of the group with the same content as
 * file i, or -1. */
static int copy_of(const PixDupGroup *g, guint i)
{
	for (guint k = 0; k < i; k++)
		if (is_same_content(g->files[k], g->files[i]))
			return (int)k;
	return -1;
}

/* What ranks a record as a copy, as the grouping ranked it. */
static PixSimilarKey key_of(const PixRecord *r)
{
	gint64 w = pix_record_int(r, PIX_COL_WIDTH, 0), h = pix_record_int(r, PIX_COL_HEIGHT, 0);
	return (PixSimilarKey){
		.pixels = w > 0 && h > 0 ? (guint64)w * (guint64)h : 0,
		.format_rank = pix_similar_format_rank(pix_record_text(r, PIX_COL_MIME), pix_record_text(r, PIX_COL_MEDIA)),
		.mtime_ns = pix_record_int(r, PIX_COL_MTIME_NS, 0),
		.id = pix_record_int(r, PIX_COL_ID, 0),
	};
}

static gboolean is_on_disk(const PixRecord *r)
{
	return g_strcmp0(pix_record_text(r, PIX_COL_STATE), "offline") != 0;
}

/* Whether file a should be kept rather than file b, by the rule. */
static gboolean is_better_keeper(const DupsOut *d, const PixRecord *a, const PixRecord *b)
{
	gint64 ma = pix_record_int(a, PIX_COL_MTIME_NS, 0), mb = pix_record_int(b, PIX_COL_MTIME_NS, 0);
	gsize la = a->v[PIX_COL_PATH].len, lb = b->v[PIX_COL_PATH].len;
	switch (d->keep) {
	case KEEP_BEST: {
		PixSimilarKey ka = key_of(a), kb = key_of(b);
		return pix_similar_compare(&ka, &kb) < 0;
	}
	case KEEP_NEWEST:
		if (ma != mb)
			return ma > mb;
		break;
	case KEEP_SHORTEST_PATH:
		if (la != lb)
			return la < lb;
		break;
	case KEEP_OLDEST:
	case KEEP_PATH_PREFIX:
		if (ma != mb)
			return ma < mb;
		break;
	}
	/* ties: the shorter path, then the first in byte order */
	if (la != lb)
		return la < lb;
	return strcmp(pix_record_text(a, PIX_COL_PATH), pix_record_text(b, PIX_COL_PATH)) < 0;
}

/* The index of the file the rule keeps, or -1 when none may be (no copy
 * on disk, or none below the prefix). */
static int keeper_of(const DupsOut *d, const PixDupGroup *g)
{
	int best = -1;
	for (guint i = 0; i < g->n_files; i++) {
		const PixRecord *r = g->files[i];
		if (!is_on_disk(r))
			continue;
		if (d->keep == KEEP_PATH_PREFIX && !pix_path_is_under(pix_record_text(r, PIX_COL_PATH), d->keep_prefix))
			continue;
		if (best < 0 || is_better_keeper(d, r, g->files[best]))
			best = (int)i;
	}
	return best;
}

/* 'text' for sh: single quotes, a quote as '\'' (any byte but NUL). */
static void append_sh_quoted(GString *out, const char *text)
{
	g_string_append_c(out, '\'');
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '\'')
			g_string_append(out, "'\\''");
		else
			g_string_append_c(out, *p);
	}
	g_string_append_c(out, '\'');
}

/* One file as the script's functions take it: 'PATH' SIZE MTIME_S MD5. */
static void append_sh_file(GString *out, const PixRecord *r)
{
	append_sh_quoted(out, pix_record_text(r, PIX_COL_PATH));
	g_string_append_printf(out, " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %s", pix_record_int(r, PIX_COL_SIZE, 0),
	                       pix_record_int(r, PIX_COL_MTIME_NS, 0) / G_GINT64_CONSTANT(1000000000),
	                       pix_record_text(r, PIX_COL_MD5));
}

/* The removable files of a group: every file on disk but the kept one
 * and its hard links. */
static void put_removable(DupsOut *d, const PixDupGroup *g)
{
	GString *out = d->buf;
	int keep = keeper_of(d, g);
	if (keep < 0) {
		d->n_no_keeper++;
		return;
	}
	const PixRecord *k = g->files[keep];
	if (d->mode == OUT_SCRIPT) {
		g_string_append(out, "\n# keep ");
		append_sh_quoted(out, pix_record_text(k, PIX_COL_PATH));
		g_string_append_c(out, '\n');
	}
	for (guint i = 0; i < g->n_files; i++) {
		const PixRecord *r = g->files[i];
		if ((int)i == keep || !is_on_disk(r) || is_same_inode(r, k) || (d->is_similar && is_same_content(r, k)))
			continue;
		d->n_removable++;
		if (d->mode == OUT_REMOVABLE) {
			const PixValue *p = &r->v[PIX_COL_PATH];
			g_string_append_len(out, p->s, (gssize)p->len);
			g_string_append_c(out, d->is_null ? '\0' : '\n');
			continue;
		}
		g_string_append(out, d->is_link ? "link_to " : "remove ");
		append_sh_file(out, k);
		g_string_append_c(out, ' ');
		append_sh_file(out, r);
		g_string_append_c(out, '\n');
	}
}

/* The head of the script: what it does, and the checks before each act. */
static void print_script_head(const DupsOut *d)
{
	printf("#!/bin/sh\n"
	       "# Written by 'photoidx dups --script%s' from the catalog: review it, then run it\n"
	       "# with sh.  For each group of %s it keeps one file (the comment before\n"
	       "# the group names it) and %s the others%s.  Each act first checks that the\n"
	       "# kept file and the copy are still regular files with the size and mtime\n"
	       "# the catalog knows%s, and skips the copy, saying why, when not.\n"
	       "set -u\n"
	       "# same PATH SIZE MTIME MD5: the file is as the catalog saw it\n"
	       "same() {\n"
	       "\t[ -f \"$1\" ] && [ ! -L \"$1\" ] && [ \"$(stat -c %%s -- \"$1\")\" = \"$2\" ] &&\n"
	       "\t\t[ \"$(stat -c %%Y -- \"$1\")\" = \"$3\" ]%s\n"
	       "}\n"
	       "%s"
	       "\tif same \"$1\" \"$2\" \"$3\" \"$4\" && same \"$5\" \"$6\" \"$7\" \"$8\"; then\n"
	       "\t\t%s && echo \"%s: $5\"\n"
	       "\telse\n"
	       "\t\techo \"skipped: $5 (it or the kept file changed since the catalog saw it)\" >&2\n"
	       "\tfi\n"
	       "}\n",
	       d->is_similar ? " --similar" : "", d->is_similar ? "similar images" : "copies",
	       d->is_link ? "hard-links to it" : "removes",
	       d->is_similar ? "\n# (not its exact copies: 'photoidx dups' chooses which of those to keep)" : "",
	       d->is_script_md5 ? ", and their MD5" : "",
	       d->is_script_md5 ? " &&\n\t\t[ \"$(md5sum <\"$1\" | cut -c1-32)\" = \"$4\" ]" : "",
	       d->is_link ? "# link_to KEPT SIZE MTIME MD5 COPY SIZE MTIME MD5: COPY becomes a hard link to KEPT\nlink_to() {\n"
	                  : "# remove KEPT SIZE MTIME MD5 COPY SIZE MTIME MD5: COPY is removed\nremove() {\n",
	       d->is_link ? "ln -f -- \"$1\" \"$5\"" : "rm -f -- \"$5\"",
	       d->is_link ? "linked" : "removed");
}

/* What removing all but the best copy of a group of similar images frees:
 * each distinct file once, but the best copy's and its exact copies'. */
static gint64 similar_freed(const PixDupGroup *g)
{
	gint64 freed = 0;
	for (guint i = 1; i < g->n_files; i++) {
		const PixRecord *r = g->files[i];
		gboolean is_counted = is_same_content(r, g->files[0]);
		for (guint k = 0; k < i && !is_counted; k++)
			is_counted = is_same_inode(g->files[k], r);
		if (!is_counted)
			freed += pix_record_int(r, PIX_COL_SIZE, 0);
	}
	return freed;
}

/* A group of similar images, as text or JSON, into d->buf. */
static void put_similar(DupsOut *d, const PixDupGroup *g, gint64 freed)
{
	GString *out = d->buf;
	char hex[17];
	pix_phash_format(g->phash[0], hex);
	if (d->is_json) {
		gboolean is_first = TRUE;
		g_string_append(out, d->n_groups > 0 ? ",\n{" : "\n{");
		pix_json_key(out, "phash", &is_first);
		pix_json_string(out, hex);
		pix_json_key(out, "weak", &is_first);
		g_string_append(out, g->is_weak ? "true" : "false");
		pix_json_int(out, "images", g->n_files, &is_first);
		pix_json_int(out, "distinct", g->n_distinct, &is_first);
		pix_json_int(out, "bytes_freed", freed, &is_first);
		pix_json_key(out, "files", &is_first);
		g_string_append_c(out, '[');
		for (guint i = 0; i < g->n_files; i++) {
			const PixRecord *r = g->files[i];
			gboolean is_first_f = TRUE;
			int link = link_of(g, i), copy = copy_of(g, i);
			g_string_append(out, i > 0 ? ",{" : "{");
			pix_query_json_value(out, "id", &r->v[PIX_COL_ID], &is_first_f);
			pix_query_json_value(out, "path", &r->v[PIX_COL_PATH], &is_first_f);
			pix_query_json_value(out, "size", &r->v[PIX_COL_SIZE], &is_first_f);
			pix_query_json_value(out, "mtime_ns", &r->v[PIX_COL_MTIME_NS], &is_first_f);
			pix_query_json_value(out, "mime", &r->v[PIX_COL_MIME], &is_first_f);
			pix_query_json_value(out, "width", &r->v[PIX_COL_WIDTH], &is_first_f);
			pix_query_json_value(out, "height", &r->v[PIX_COL_HEIGHT], &is_first_f);
			pix_query_json_value(out, "md5", &r->v[PIX_COL_MD5], &is_first_f);
			pix_query_json_value(out, "state", &r->v[PIX_COL_STATE], &is_first_f);
			pix_phash_format(g->phash[i], hex);
			pix_json_key(out, "phash", &is_first_f);
			pix_json_string(out, hex);
			pix_json_int(out, "distance", g->distance[i], &is_first_f);
			pix_json_key(out, "best", &is_first_f);
			g_string_append(out, i == 0 ? "true" : "false");
			pix_json_key(out, "hard_link_of", &is_first_f);
			if (link >= 0)
				g_string_append_printf(out, "%" G_GINT64_FORMAT, pix_record_int(g->files[link], PIX_COL_ID, 0));
			else
				g_string_append(out, "null");
			pix_json_key(out, "exact_copy_of", &is_first_f);
			if (link < 0 && copy >= 0)
				g_string_append_printf(out, "%" G_GINT64_FORMAT, pix_record_int(g->files[copy], PIX_COL_ID, 0));
			else
				g_string_append(out, "null");
			g_string_append_c(out, '}');
		}
		g_string_append(out, "]}");
		return;
	}
	g_autofree char *free_s = pix_format_bytes(freed);
	g_string_append_printf(out, "%s%s  %u similar images%s, %s to free\n", d->n_groups > 0 ? "\n" : "", hex,
	                       g->n_files, g->is_weak ? " (the same uniform or tiny picture)" : "", free_s);
	for (guint i = 0; i < g->n_files; i++) {
		const PixRecord *r = g->files[i];
		int link = link_of(g, i), copy = copy_of(g, i);
		g_autofree char *q = pix_quote(pix_record_text(r, PIX_COL_PATH));
		if (i == 0)
			g_string_append_printf(out, "  best  %s", q);
		else
			g_string_append_printf(out, "  %-4u  %s", g->distance[i], q);
		gint64 w = pix_record_int(r, PIX_COL_WIDTH, 0), h = pix_record_int(r, PIX_COL_HEIGHT, 0);
		if (w > 0 && h > 0)
			g_string_append_printf(out, "  %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, w, h);
		if (link >= 0 || copy >= 0) {
			g_autofree char *ql = pix_quote(pix_record_text(g->files[link >= 0 ? link : copy], PIX_COL_PATH));
			g_string_append_printf(out, link >= 0 ? "  [hard link of %s: the same file]" : "  [exact copy of %s]",
			                       ql);
		}
		g_string_append_c(out, '\n');
	}
}

static gboolean print_group(gpointer data, const PixDupGroup *g)
{
	DupsOut *d = data;
	GString *out = d->buf;
	gint64 freed = g->distance != NULL ? similar_freed(g) : g->size * (gint64)(g->n_distinct - 1);

	g_string_truncate(out, 0);
	if (d->mode != OUT_GROUPS) {
		put_removable(d, g);
	} else if (g->distance != NULL) {
		put_similar(d, g, freed);
	} else if (d->is_json) {
		gboolean is_first = TRUE;
		g_string_append(out, d->n_groups > 0 ? ",\n{" : "\n{");
		pix_json_key(out, "md5", &is_first);
		pix_json_string(out, g->md5);
		pix_json_int(out, "size", g->size, &is_first);
		pix_json_int(out, "copies", g->n_files, &is_first);
		pix_json_int(out, "distinct", g->n_distinct, &is_first);
		pix_json_int(out, "bytes_freed", freed, &is_first);
		pix_json_key(out, "files", &is_first);
		g_string_append_c(out, '[');
		for (guint i = 0; i < g->n_files; i++) {
			const PixRecord *r = g->files[i];
			gboolean is_first_f = TRUE;
			int link = link_of(g, i);
			g_string_append(out, i > 0 ? ",{" : "{");
			pix_query_json_value(out, "id", &r->v[PIX_COL_ID], &is_first_f);
			pix_query_json_value(out, "path", &r->v[PIX_COL_PATH], &is_first_f);
			pix_query_json_value(out, "mtime_ns", &r->v[PIX_COL_MTIME_NS], &is_first_f);
			pix_query_json_value(out, "state", &r->v[PIX_COL_STATE], &is_first_f);
			pix_json_key(out, "hard_link_of", &is_first_f);
			if (link >= 0)
				g_string_append_printf(out, "%" G_GINT64_FORMAT, pix_record_int(g->files[link], PIX_COL_ID, 0));
			else
				g_string_append(out, "null");
			g_string_append_c(out, '}');
		}
		g_string_append(out, "]}");
	} else {
		g_autofree char *size = pix_format_bytes(g->size);
		g_autofree char *free_s = pix_format_bytes(freed);
		g_string_append_printf(out, "%s%s  %u copies of %s, %s to free\n", d->n_groups > 0 ? "\n" : "", g->md5,
		                       g->n_files, size, free_s);
		for (guint i = 0; i < g->n_files; i++) {
			int link = link_of(g, i);
			g_autofree char *q = pix_quote(pix_record_text(g->files[i], PIX_COL_PATH));
			g_string_append_printf(out, "  %s", q);
			if (link >= 0) {
				g_autofree char *ql = pix_quote(pix_record_text(g->files[link], PIX_COL_PATH));
				g_string_append_printf(out, "  [hard link of %s: the same file]", ql);
			}
			g_string_append_c(out, '\n');
		}
	}
	d->n_groups++;
	d->n_files += g->n_files;
	d->bytes_freed += freed;
	if (fwrite(out->str, 1, out->len, stdout) != out->len)
		d->is_failed = TRUE;
	return !d->is_failed;
}

int pix_cmd_dups(int argc, char **argv)
{
	PixQueryOptions o = { 0 };
	gboolean is_json = FALSE, is_removable = FALSE, is_script = FALSE;
	DupsOut d = { 0 };
	char *keep = NULL;
	gint distance = -1;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "a JSON object with the groups and totals", NULL },
		{ "similar", 0, 0, G_OPTION_ARG_NONE, &d.is_similar, "groups of visually similar images (resized, recompressed, a little cropped or brighter), from the perceptual hashes of scan --thumbnails", NULL },
		{ "distance", 0, 0, G_OPTION_ARG_INT, &distance, "with --similar: how many of the hash's 64 bits may differ from the group's best copy (default " G_STRINGIFY(PIX_PHASH_DEFAULT_DISTANCE) ", at most " G_STRINGIFY(PIX_PHASH_MAX_DISTANCE) ")", "N" },
		{ "keep", 0, 0, G_OPTION_ARG_STRING, &keep, "which copy of each group to keep: oldest (the default), newest, shortest-path, path-prefix=PATH, best (most pixels, a camera's format, the oldest: the default with --similar)", "RULE" },
		{ "print-removable", 0, 0, G_OPTION_ARG_NONE, &is_removable, "print the paths of the copies that could go (all but the kept one of each group), one a line", NULL },
		{ "null", '0', 0, G_OPTION_ARG_NONE, &d.is_null, "with --print-removable: end each path with NUL (for xargs -0)", NULL },
		{ "script", 0, 0, G_OPTION_ARG_NONE, &is_script, "print a shell script to review and run that removes those copies, each after checking it and the kept file are unchanged", NULL },
		{ "link", 0, 0, G_OPTION_ARG_NONE, &d.is_link, "with --script: replace each copy by a hard link to the kept file instead", NULL },
		{ "script-md5", 0, 0, G_OPTION_ARG_NONE, &d.is_script_md5, "with --script: check the MD5s too before each act (reads the files)", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - list files with the same content", entries,
		"Lists the groups of files at or below each PATH (default: all) that\n"
		"have the same content (MD5), and the bytes that keeping one copy of\n"
		"each would free.  Deletes nothing.  Hard links to one file are shown\n"
		"but free nothing; empty files are left out.  With --similar, groups\n"
		"of images that look alike instead, each file with its distance to the\n"
		"group's best copy.");
	g_autoptr(GError) error = NULL;
	int status;
	g_autoptr(PixStore) reader = pix_query_start("dups", ctx, argc, argv, &o, NULL, NULL, FALSE, &status);

	if (reader == NULL) {
		g_free(keep);
		return status;
	}
	g_autofree char *keep_rule = keep;
	g_autofree char *prefix = NULL;
	d.mode = is_script ? OUT_SCRIPT : is_removable ? OUT_REMOVABLE : OUT_GROUPS;
	if (keep_rule == NULL) {
		d.keep = d.is_similar ? KEEP_BEST : KEEP_OLDEST;
	} else if (strcmp(keep_rule, "best") == 0) {
		d.keep = KEEP_BEST;
	} else if (strcmp(keep_rule, "oldest") == 0) {
		d.keep = KEEP_OLDEST;
	} else if (strcmp(keep_rule, "newest") == 0) {
		d.keep = KEEP_NEWEST;
	} else if (strcmp(keep_rule, "shortest-path") == 0) {
		d.keep = KEEP_SHORTEST_PATH;
	} else if (g_str_has_prefix(keep_rule, "path-prefix=") && keep_rule[strlen("path-prefix=")] != '\0') {
		d.keep = KEEP_PATH_PREFIX;
		/* as PATH arguments are: absolute, symlinks resolved where they exist */
		const char *p = keep_rule + strlen("path-prefix=");
		char *real = realpath(p, NULL);
		prefix = real != NULL ? g_strdup(real) : g_canonicalize_filename(p, NULL);
		free(real);
		d.keep_prefix = prefix;
	} else {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("dups", "--keep: expected oldest, newest, shortest-path, path-prefix=PATH or best");
	}
	if (distance >= 0 && !d.is_similar) {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("dups", "--distance: only with --similar");
	}
	if (distance > PIX_PHASH_MAX_DISTANCE) {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("dups", "--distance: expected 0 to " G_STRINGIFY(PIX_PHASH_MAX_DISTANCE)
		                           " (bits of 64)");
	}
	if (d.is_similar && d.is_link) {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("dups", "--link: only for exact copies (a similar image is another picture)");
	}
	d.distance = distance >= 0 ? (guint)distance : PIX_PHASH_DEFAULT_DISTANCE;
	if (is_script + is_removable + is_json > 1 || (d.is_null && !is_removable) ||
	    ((d.is_link || d.is_script_md5) && !is_script) || (keep_rule != NULL && d.mode == OUT_GROUPS)) {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("dups", "--json, --print-removable (with -0) and --script (with --link, "
		                           "--script-md5) go alone, and --keep with one of the last two");
	}
	d.is_json = is_json;
	d.buf = g_string_new(NULL);
	if (is_json)
		printf("{\"groups\":[");
	if (is_script)
		print_script_head(&d);
	gboolean is_ok = d.is_similar ? pix_store_each_similar(reader, &o.filter, d.distance, print_group, &d, &error)
	                              : pix_store_each_dup(reader, &o.filter, print_group, &d, &error);
	pix_query_options_clear(&o);
	g_string_free(d.buf, TRUE);
	if (!is_ok) {
		if (is_json)
			printf("]}\n");
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	if (d.mode != OUT_GROUPS) {
		/* the count for people, on stderr: stdout is the list or script */
		if (d.n_no_keeper > 0)
			pix_notice("%" G_GINT64_FORMAT " groups kept whole: no copy on disk %s", d.n_no_keeper,
			           d.keep == KEEP_PATH_PREFIX ? "below the --keep path" : "to keep");
		pix_notice("%" G_GINT64_FORMAT " %s could go, in %" G_GINT64_FORMAT " groups", d.n_removable,
		           d.is_similar ? "similar images" : "copies", d.n_groups);
	} else if (is_json) {
		g_autofree char *dist = d.is_similar ? g_strdup_printf(",\"distance\":%u", d.distance) : g_strdup("");
		printf("%s],\"n_groups\":%" G_GINT64_FORMAT ",\"n_files\":%" G_GINT64_FORMAT
		       ",\"bytes_freed\":%" G_GINT64_FORMAT "%s}\n", d.n_groups > 0 ? "\n" : "", d.n_groups, d.n_files,
		       d.bytes_freed, dist);
	} else if (d.is_similar) {
		g_autofree char *freed = pix_format_bytes(d.bytes_freed);
		printf("%s%" G_GINT64_FORMAT " group%s of similar images within %u bits, %" G_GINT64_FORMAT " files: "
		       "keeping the best copy of each would free %s\n", d.n_groups > 0 ? "\n" : "", d.n_groups,
		       d.n_groups == 1 ? "" : "s", d.distance, d.n_files, freed);
	} else {
		g_autofree char *freed = pix_format_bytes(d.bytes_freed);
		printf("%s%" G_GINT64_FORMAT " group%s of duplicates, %" G_GINT64_FORMAT " files: keeping one copy of each "
		       "would free %s\n", d.n_groups > 0 ? "\n" : "", d.n_groups, d.n_groups == 1 ? "" : "s", d.n_files,
		       freed);
	}
	if (d.is_failed || fflush(stdout) != 0 || ferror(stdout)) {
		pix_error("cannot write the list: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}
