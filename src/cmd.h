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
	PIX_EXIT_PARTIAL = 1,      /* finished; a path or file could not be read, or a file's
	                              content is damaged (each named, each in state 'error') */
	PIX_EXIT_FATAL = 2,        /* the catalog is unusable (or full, locked, newer) */
	PIX_EXIT_USAGE = 64,       /* bad command line */
	PIX_EXIT_OUTPUT = 73,      /* an export's output cannot be written (sysexits'
	                              EX_CANTCREAT); the catalog is fine */
	PIX_EXIT_INTERRUPTED = 130, /* SIGINT (128 + 2): what was done is committed */
	PIX_EXIT_TERMINATED = 143  /* SIGTERM (128 + 15): the same; a watch stopped so exits 0 */
};

/* The exit status of a run stopped by `sig` (SIGINT: 130, SIGTERM: 143). */
int pix_cmd_signal_status(int sig);

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
int pix_cmd_volumes(int argc, char **argv);
int pix_cmd_status(int argc, char **argv);
int pix_cmd_forget(int argc, char **argv);

/* The catalog when no --db is given: $PHOTOIDX_DB (unless empty; a
 * relative one is relative to the current directory, as --db is), else
 * the configuration file's [catalog] path, else
 * $XDG_DATA_HOME/photoidx/catalog.db, else
 * ~/.local/share/photoidx/catalog.db (transfer full).  A configuration
 * file that cannot be read counts as absent here: a command checks it
 * first with pix_cmd_check_config(). */
char *pix_cmd_default_db(void);

/* The help text of every command's --db option. */
#define PIX_DB_HELP "catalog file (default $PHOTOIDX_DB, else the config's catalog, else $XDG_DATA_HOME/photoidx/catalog.db)"

/* Reads the configuration file (see config.h) if not done yet.  Returns
 * PIX_EXIT_OK, or PIX_EXIT_USAGE after printing one line
 * "photoidx: cannot read 'FILE': why" when the file is there but cannot
 * be read or parsed.  A missing file is fine and says nothing. */
int pix_cmd_check_config(void);

/* The command line of a command that takes no arguments but its options:
 * parses it with `ctx`, refuses what is left, reads the configuration
 * file.  PIX_EXIT_OK, or PIX_EXIT_USAGE after saying why. */
int pix_cmd_parse(const char *cmd, GOptionContext *ctx, int argc, char **argv);

/* Opens the catalog `db` (NULL: the default) as a reader for command
 * `cmd`; NULL after printing why, with *status PIX_EXIT_FATAL.  (A
 * PixStore*, transfer full; cmd-volumes.c) */
struct PixStore *pix_cmd_open_reader(const char *db, int *status);
/* A time for people: "2024-05-06 07:08" (local time), or "never" for 0
 * (transfer full; cmd-volumes.c). */
char *pix_cmd_time_text(gint64 at_s);

/* "65536", "64K", "64M", "1G", "1MiB" (binary units) into bytes. */
gboolean pix_cmd_parse_size(const char *text, gint64 *out);

/* Prints "photoidx CMD: MESSAGE" and a hint to use --help; returns
 * PIX_EXIT_USAGE. */
int pix_cmd_usage_error(const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

#endif
