/*
 * cmd-query.h: what the commands that read the catalog (ls, dups, stats,
 * export) share: the filter options, the reader, and the writers of
 * records as CSV, JSON and JSON lines.
 *
 * Main thread only.
 */
#ifndef PIX_CMD_QUERY_H
#define PIX_CMD_QUERY_H

#include "cmd.h"
#include "query.h"

#include <stdio.h>

/* The options of a filter as given, and the filter made of them. */
typedef struct {
	char *db;
	char *from, *to, *date;
	gboolean is_no_date;
	char *make, *model;
	char **types;
	char *near, *radius;
	gboolean is_missing, is_errors, is_all, is_offline;
	char *keyword, *rating, *person, *text;
	char **paths;           /* the PATH arguments, canonical (owned) */
	char *date_to;          /* the exclusive bound made of --to/--date (owned) */
	PixFilter filter;       /* points into the above */
} PixQueryOptions;

/*
 * The option context of command `cmd`: its own `entries` (NULL-terminated,
 * may be NULL), then --db and the filter options (--from, --to, --date,
 * --no-date, --make, --model, --type, --near, --radius, --missing,
 * --errors, --all, --offline, --keyword, --rating, --person, --text)
 * parsed into `o`, with `summary` for --help.
 * (transfer full)
 */
GOptionContext *pix_query_context(PixQueryOptions *o, const char *what, const GOptionEntry *entries,
                                  const char *summary);
void pix_query_options_clear(PixQueryOptions *o);

/* Checks a command's own options once they are parsed: PIX_EXIT_OK, or
 * PIX_EXIT_USAGE after saying why (pix_cmd_usage_error). */
typedef int (*PixQueryCheckFn)(const char *cmd, gpointer data);

/*
 * Parses the command line of `cmd` with `ctx`: the arguments left are
 * PATHs (files at or below them; they need not exist any more), the
 * filter options make o->filter, and `check` (may be NULL) checks the
 * command's own.  Then sets up logging (quiet when `is_quiet`) and opens
 * o->db (or the default catalog) as a reader.  Returns the reader, or
 * NULL with *status PIX_EXIT_USAGE or PIX_EXIT_FATAL after saying why (and
 * `o` cleared).
 */
PixStore *pix_query_start(const char *cmd, GOptionContext *ctx, int argc, char **argv, PixQueryOptions *o,
                          PixQueryCheckFn check, gpointer check_data, gboolean is_quiet, int *status);

/* How records are written. */
typedef enum {
	PIX_OUT_CSV,      /* RFC 4180, a header line of column names */
	PIX_OUT_JSON,     /* one array of objects, one object per line */
	PIX_OUT_JSONL,    /* one object per line */
	PIX_OUT_MD5SUM,   /* "MD5  PATH" lines that `md5sum -c` checks (GNU's escapes) */
	PIX_OUT_HASHDEEP, /* hashdeep's known-hashes file (size,md5,filename) for `hashdeep -a -k` */
} PixOutFormat;

/* A writer of records to a stdio stream. */
typedef struct {
	PixOutFormat format;
	FILE *out;
	gboolean has_distance; /* add distance_m (a `near` filter) */
	gint64 n;              /* records written */
	gboolean is_failed;    /* a write failed (errno kept in err) */
	gint64 n_unlisted;     /* md5sum, hashdeep: files left out (no MD5; hashdeep: a newline in the path) */
	int err;
	GString *buf;
} PixRecordWriter;

void pix_record_writer_init(PixRecordWriter *w, PixOutFormat format, FILE *out, gboolean has_distance);
/* Writes one record (a PixRecordFn: returns FALSE once a write failed). */
gboolean pix_record_writer_put(gpointer writer, const PixRecord *r);
/* Ends the output (the JSON array's bracket), flushes; FALSE when any write
 * failed.  Frees the buffer. */
gboolean pix_record_writer_finish(PixRecordWriter *w);

/* Appends `v` to a JSON object as "key": value; bytes that are not UTF-8
 * are written in display form and, exactly, as "key_b64": base64. */
void pix_query_json_value(GString *js, const char *key, const PixValue *v, gboolean *is_first);

/* A camera's name for people: "Canon EOS 5D" from make "Canon" and model
 * "Canon EOS 5D", "NIKON D70" from "NIKON CORPORATION" and "NIKON D70"
 * (models often repeat a word of the make), else "make model"; NULL
 * when both are NULL (transfer full). */
char *pix_query_camera_name(const char *make, const char *model);

#endif
