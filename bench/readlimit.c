/*
 * readlimit: the read limit of `make bench`: the time this machine takes
 * to read every file of a tree once, doing nothing else with them.
 *
 *   readlimit [-t THREADS] ROOT...
 *
 * Walks each ROOT (nftw: symbolic links not followed, other file systems
 * not entered, as photoidx by default), lists its regular files with their
 * inode numbers, sorts them by inode number (photoidx's read order on SSDs
 * and virtual disks), then THREADS threads (default 16) take the files in
 * that order, one at a time, and each reads its file to the end in 1 MiB
 * reads into its own buffer, opened with O_NOATIME where the file's owner
 * allows it.  Prints the files and bytes read and the seconds taken on
 * stderr.  Exits 0; 1 if a file or directory could not be read (each is
 * named on stderr); 2 out of memory or if a thread cannot be started; 64
 * on bad usage.
 *
 * Why a program of our own: the bench's read limit before it, `find |
 * xargs -P 16 -n 64 cat`, starts a process per 64 files, which on small
 * files costs more than reading them: it is slower than the disk (its
 * 64-reader variant measured twice as slow as the 16-reader one), so
 * photoidx looked faster than the limit.  Here no process is started per
 * file: the walk, the opens and the reads are all the cost there is, and
 * that is the least any indexer that reads every file must pay.
 *
 * Threads: the main thread walks and sorts, then starts the readers and
 * joins them.  Invariants:
 *   1. each listed file is read by exactly one reader: a file is taken by
 *      one atomic fetch-and-add on the shared index;
 *   2. files are handed out in ascending inode order;
 *   3. the readers share only that index and the list, which is not
 *      written once they start; each counts its own files and bytes,
 *      summed after the join.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_BYTES (1 << 20)
#define MAX_THREADS 1024

typedef struct {
	ino_t ino;
	char *path;		/* owned by the list */
} Entry;

/* the walk's output, read-only once the readers start */
static Entry *entries;
static size_t n_entries, cap_entries;
static int walk_errors;

static atomic_size_t next_entry;	/* the next file to hand out */

typedef struct {
	pthread_t thread;
	uint64_t n_files, n_bytes, n_errors;
} Reader;

static void die(const char *what)
{
	fprintf(stderr, "readlimit: %s: %m\n", what);
	exit(2);
}

static int list_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "readlimit: cannot %s '%s'\n", type == FTW_DNR ? "list" : "stat", path);
		walk_errors++;
		return 0;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (n_entries == cap_entries) {
		cap_entries = cap_entries ? 2 * cap_entries : 4096;
		entries = realloc(entries, cap_entries * sizeof *entries);
		if (!entries)
			die("out of memory");
	}
	entries[n_entries].ino = st->st_ino;
	if (!(entries[n_entries].path = strdup(path)))
		die("out of memory");
	n_entries++;
	return 0;
}

static int by_inode(const void *a, const void *b)
{
	ino_t x = ((const Entry *)a)->ino, y = ((const Entry *)b)->ino;
	return (x > y) - (x < y);
}

static void read_file(Reader *r, const char *path, char *buf)
{
	int fd = open(path, O_RDONLY | O_NOATIME | O_CLOEXEC);
	if (fd < 0 && errno == EPERM)	/* O_NOATIME: not the file's owner */
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "readlimit: cannot open '%s': %m\n", path);
		r->n_errors++;
		return;
	}
	ssize_t n;
	while ((n = read(fd, buf, READ_BYTES)) > 0)
		r->n_bytes += (uint64_t)n;
	if (n < 0) {
		fprintf(stderr, "readlimit: cannot read '%s': %m\n", path);
		r->n_errors++;
	} else {
		r->n_files++;
	}
	close(fd);
}

static void *read_files(void *data)
{
	Reader *r = data;
	char *buf = malloc(READ_BYTES);
	if (!buf)
		die("out of memory");
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&next_entry, 1, memory_order_relaxed);
		if (i >= n_entries)
			break;
		read_file(r, entries[i].path, buf);
	}
	free(buf);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n_threads = 16, opt;
	char *end;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't')
			goto usage;
		long v = strtol(optarg, &end, 10);
		if (*end || v < 1 || v > MAX_THREADS)
			goto usage;
		n_threads = (int)v;
	}
	if (optind == argc)
		goto usage;

	double start = now_s();
	for (int i = optind; i < argc; i++)
		if (nftw(argv[i], list_file, 64, FTW_PHYS | FTW_MOUNT) != 0) {
			fprintf(stderr, "readlimit: cannot walk '%s': %m\n", argv[i]);
			walk_errors++;
		}
	qsort(entries, n_entries, sizeof *entries, by_inode);

	Reader *readers = calloc((size_t)n_threads, sizeof *readers);
	if (!readers)
		die("out of memory");
	for (int i = 0; i < n_threads; i++) {
		errno = pthread_create(&readers[i].thread, NULL, read_files, &readers[i]);
		if (errno)
			die("cannot start a reader");
	}
	uint64_t n_files = 0, n_bytes = 0, n_errors = (uint64_t)walk_errors;
	for (int i = 0; i < n_threads; i++) {
		pthread_join(readers[i].thread, NULL);
		n_files += readers[i].n_files;
		n_bytes += readers[i].n_bytes;
		n_errors += readers[i].n_errors;
	}
	fprintf(stderr, "readlimit: %llu files, %llu bytes in %.2f s, %d threads, %llu errors\n",
		(unsigned long long)n_files, (unsigned long long)n_bytes, now_s() - start, n_threads,
		(unsigned long long)n_errors);
	for (size_t i = 0; i < n_entries; i++)
		free(entries[i].path);
	free(entries);
	free(readers);
	return n_errors ? 1 : 0;

usage:
	fprintf(stderr, "usage: readlimit [-t THREADS] ROOT... (THREADS 1..%d, default 16)\n", MAX_THREADS);
	return 64;
}
