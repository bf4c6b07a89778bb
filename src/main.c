/*
 * main.c: the photoidx command: global options, the table of subcommands,
 * and what subcommands share (default catalog path, size parsing, usage
 * errors).
 *
 * Reads argv, the environment (PHOTOIDX_DB, XDG_DATA_HOME, HOME) and the
 * configuration file (through config); writes the usage text.  Main thread
 * only.
 *
 * Invariants:
 *  1. Every path out of main() returns one of the PIX_EXIT_* statuses.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd.h"
#include "config.h"
#include "db.h"
#include "log.h"

#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#ifndef PIX_VERSION
#define PIX_VERSION "unknown"
#endif

static const PixCmd commands[] = {
	{ "scan", pix_cmd_scan, "index directories into the catalog (first import and rescans)" },
	{ "watch", pix_cmd_watch, "scan, then index what changes as it lands (inotify)" },
	{ "verify", pix_cmd_verify, "read indexed files again and report content that changed behind size and mtime" },
	{ "changes", pix_cmd_changes, "list the change log since a sequence number (for front ends)" },
	{ "ls", pix_cmd_ls, "list the files of the catalog, by date taken, with filters" },
	{ "dups", pix_cmd_dups, "list groups of files with the same content, and what removing copies would free" },
	{ "stats", pix_cmd_stats, "count files and bytes by media type, camera and month" },
	{ "export", pix_cmd_export, "write the catalog as CSV or JSON lines, or a KPhotoAlbum database" },
	{ "volumes", pix_cmd_volumes, "list the disks, cards and shares the catalog knows, mounted or offline" },
	{ "status", pix_cmd_status, "show the catalog, its roots and volumes, the last runs, and what awaits a recheck" },
	{ "forget", pix_cmd_forget, "remove missing files, or all files of a volume, from the catalog" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: photoidx [--version] [--help] COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'photoidx COMMAND --help' describes a command's options.\n");
}

char *pix_cmd_default_db(void)
{
	const char *env = g_getenv("PHOTOIDX_DB");

	if (env != NULL && env[0] != '\0')
		return g_strdup(env);
	if (pix_config_catalog() != NULL)
		return g_strdup(pix_config_catalog());
	g_autofree char *data = pix_xdg_dir(g_get_user_data_dir(), ".local/share");
	return g_build_filename(data, "photoidx", "catalog.db", NULL);
}

int pix_cmd_check_config(void)
{
	g_autoptr(GError) error = NULL;

	if (pix_config_load(&error))
		return PIX_EXIT_OK;
	g_autofree char *q = pix_quote(pix_config_path());
	fprintf(stderr, "photoidx: cannot read '%s': %s\n", q, error->message);
	return PIX_EXIT_USAGE;
}

gboolean pix_cmd_parse_size(const char *text, gint64 *out)
{
	char *end = NULL;
	guint64 v;
	gint64 mult = 1;

	if (text == NULL || !g_ascii_isdigit(text[0]))
		return FALSE;
	v = g_ascii_strtoull(text, &end, 10);
	switch (g_ascii_toupper(*end)) {
	case '\0':
		break;
	case 'K':
		mult = 1024;
		break;
	case 'M':
		mult = 1024 * 1024;
		break;
	case 'G':
		mult = 1024 * 1024 * 1024;
		break;
	default:
		return FALSE;
	}
	if (*end != '\0') {
		end++;
		if (g_ascii_strcasecmp(end, "iB") != 0 && g_ascii_strcasecmp(end, "B") != 0 && *end != '\0')
			return FALSE;
	}
	if (v > (guint64)(G_MAXINT64 / mult))
		return FALSE;
	*out = (gint64)v * mult;
	return TRUE;
}

int pix_cmd_signal_status(int sig)
{
	return sig == SIGTERM ? PIX_EXIT_TERMINATED : PIX_EXIT_INTERRUPTED;
}

int pix_cmd_parse(const char *cmd, GOptionContext *ctx, int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		return pix_cmd_usage_error(cmd, "%s", error->message);
	if (argc > 1) {
		g_autofree char *q = pix_quote(argv[1]);
		return pix_cmd_usage_error(cmd, "unexpected argument '%s'", q);
	}
	return pix_cmd_check_config();
}

int pix_cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "photoidx %s: %s\nTry 'photoidx %s --help'.\n", cmd, msg, cmd);
	return PIX_EXIT_USAGE;
}

/* The walker holds a descriptor per directory level and the readers one per
 * file in flight: take the hard limit, as deep trees need it. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static const PixCmd *find_command(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* Runs `cmd` with argv[0] its name, options given before the command
 * (`photoidx --db FILE ls`) moved after it, as if given there. */
static int run_command(const PixCmd *cmd, int argc, char **argv, int at)
{
	g_autofree char **args = g_new0(char *, argc + 1);
	int n = 0;
	args[n++] = argv[at];
	for (int i = 1; i < at; i++)
		args[n++] = argv[i];
	for (int i = at + 1; i < argc; i++)
		args[n++] = argv[i];
	/* GOption's "Usage: photoidx scan [OPTION…]" */
	g_autofree char *prgname = g_strconcat("photoidx ", cmd->name, NULL);
	g_set_prgname(prgname);
	return cmd->fn(n, args);
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	raise_fd_limit();
	if (argc < 2) {
		usage(stderr);
		return PIX_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		/* photoidx help ls: the command's own help */
		const PixCmd *cmd = strcmp(argv[1], "help") == 0 && argc > 2 ? find_command(argv[2]) : NULL;
		if (cmd != NULL) {
			char *args[] = { argv[0], argv[2], "--help", NULL };
			return run_command(cmd, 3, args, 1);
		}
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			g_autofree char *q = pix_quote(argv[2]);
			fprintf(stderr, "photoidx: '%s' is not a photoidx command\n", q);
			usage(stderr);
			return PIX_EXIT_USAGE;
		}
		usage(stdout);
		return PIX_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("photoidx %s\ncatalogs: SQLite%s\n", PIX_VERSION, pix_db_has_pg() ? ", PostgreSQL" : "");
		return PIX_EXIT_OK;
	}
	/* the command: the first argument that names one, after options only
	 * (an option's value, as in --db FILE, may stand between them) */
	for (int i = 1; i < argc; i++) {
		const PixCmd *cmd = find_command(argv[i]);
		if (cmd != NULL)
			return run_command(cmd, argc, argv, i);
		if (argv[i][0] != '-' && (i == 1 || argv[i - 1][0] != '-' || strchr(argv[i - 1], '=') != NULL))
			break;
	}
	g_autofree char *q = pix_quote(argv[1]);
	if (argv[1][0] == '-')
		fprintf(stderr, "photoidx: no command after '%s'\n", q);
	else
		fprintf(stderr, "photoidx: '%s' is not a photoidx command\n", q);
	usage(stderr);
	return PIX_EXIT_USAGE;
}
