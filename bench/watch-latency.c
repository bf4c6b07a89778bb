/*
 * watch-latency: how long after a file is closed its row is visible in the
 * catalog of a running `photoidx watch`.
 *
 *   watch-latency CATALOG DIR N INTERVAL_MS
 *
 * Writes N small files into DIR (watched), one every INTERVAL_MS, noting
 * when each is closed; meanwhile polls CATALOG (read-only, every 2 ms) for
 * the rows of DIR's files and notes when each appears.  Prints the median,
 * 95th percentile and maximum latency in milliseconds, and how many rows
 * never appeared within 30 s of the last close.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct {
	const char *dir;
	int n;
	int interval_ms;
	double *closed;         /* per file, ms */
	volatile int n_written;
} Writer;

static void *write_files(void *data)
{
	Writer *w = data;
	for (int i = 0; i < w->n; i++) {
		char path[4096], text[64];
		snprintf(path, sizeof path, "%s/lat_%06d.jpg", w->dir, i);
		int len = snprintf(text, sizeof text, "latency probe %d\n", i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, text, (size_t)len) != len) {
			perror(path);
			exit(1);
		}
		close(fd);
		w->closed[i] = now_ms();
		__atomic_store_n(&w->n_written, i + 1, __ATOMIC_RELEASE);
		usleep((useconds_t)w->interval_ms * 1000);
	}
	return NULL;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: watch-latency CATALOG DIR N INTERVAL_MS\n");
		return 64;
	}
	const char *db_path = argv[1];
	Writer w = { .dir = argv[2], .n = atoi(argv[3]), .interval_ms = atoi(argv[4]) };
	if (w.n <= 0 || w.interval_ms < 0)
		return 64;
	w.closed = calloc((size_t)w.n, sizeof(double));
	double *seen = calloc((size_t)w.n, sizeof(double));
	int n_seen = 0;

	sqlite3 *db;
	sqlite3_stmt *st;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open %s\n", db_path);
		return 2;
	}
	sqlite3_busy_timeout(db, 1000);
	/* the probe files' rows, by name: lat_NNNNNN.jpg */
	if (sqlite3_prepare_v2(db, "SELECT f.name FROM files f JOIN dirs d ON d.id = f.dir_id"
	                       " WHERE d.path = ?1 AND f.name LIKE 'lat\\_%' ESCAPE '\\'", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s\n", sqlite3_errmsg(db));
		return 2;
	}
	sqlite3_bind_text(st, 1, w.dir, -1, SQLITE_STATIC);

	pthread_t writer;
	pthread_create(&writer, NULL, write_files, &w);
	double deadline = 0;
	while (n_seen < w.n) {
		int n_written = __atomic_load_n(&w.n_written, __ATOMIC_ACQUIRE);
		if (n_written == w.n && deadline == 0)
			deadline = now_ms() + 30000;
		if (deadline != 0 && now_ms() > deadline)
			break;
		sqlite3_reset(st);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int i = atoi((const char *)sqlite3_column_text(st, 0) + 4);
			if (i >= 0 && i < w.n && seen[i] == 0) {
				seen[i] = now_ms();
				n_seen++;
			}
		}
		usleep(2000);
	}
	pthread_join(writer, NULL);

	double *lat = calloc((size_t)w.n, sizeof(double));
	int n = 0;
	for (int i = 0; i < w.n; i++)
		if (seen[i] != 0)
			lat[n++] = seen[i] - w.closed[i];
	qsort(lat, (size_t)n, sizeof(double), compare_doubles);
	if (n == 0) {
		printf("no row appeared\n");
		return 1;
	}
	printf("%d files, one every %d ms: close to row median %.0f ms, p95 %.0f ms, max %.0f ms; %d never appeared\n",
	       w.n, w.interval_ms, lat[n / 2], lat[(int)(0.95 * (n - 1))], lat[n - 1], w.n - n);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return w.n == n ? 0 : 1;
}
