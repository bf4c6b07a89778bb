/*
 * cmd.h: the subcommands and what they share.
 *
 * Adding a subcommand `foo`:
 *  1. write src/cmd-foo.c with `int pix_cmd_foo(int argc, char **argv)`,
 *     which parses its own options (GOptionContext) and returns an exit
 *     status below;
 *  2. declare it here;
 *  3. add a line to commands[] in main.c;
 *  4. document it in doc/photoidx.1 and the README, and test it in
 *     tests/cli/tNNNN-foo-*.sh.
 */
#ifndef PIX_CMD_H
#define PIX_CMD_H

#include <glib.h>

/* Exit statuses, the same for every command. */
enum {
	PIX_EXIT_OK = 0,           /* everything done */
	PIX_EXIT_PARTIAL = 1,      /* finished, but some files could not be indexed */
	PIX_EXIT_FATAL = 2,        /* the catalog is unusable (or full, locked, newer) */
	PIX_EXIT_USAGE = 64,       /* bad command line */
	PIX_EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM: what was done is committed */
};

typedef struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} PixCmd;

int pix_cmd_scan(int argc, char **argv);
int pix_cmd_verify(int argc, char **argv);
int pix_cmd_changes(int argc, char **argv);
int pix_cmd_watch(int argc, char **argv);
int pix_cmd_ls(int argc, char **argv);
int pix_cmd_dups(int argc, char **argv);
int pix_cmd_stats(int argc, char **argv);
int pix_cmd_export(int argc, char **argv);

/* The default catalog: $XDG_DATA_HOME/photoidx/catalog.db, else
 * ~/.local/share/photoidx/catalog.db (transfer full). */
char *pix_cmd_default_db(void);

/* "65536", "64K", "64M", "1G", "1MiB" (binary units) into bytes. */
gboolean pix_cmd_parse_size(const char *text, gint64 *out);

/* Prints "photoidx CMD: MESSAGE" and a hint to use --help; returns
 * PIX_EXIT_USAGE. */
int pix_cmd_usage_error(const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

#endif
