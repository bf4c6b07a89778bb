/*
 * pipeline.c: the stages of a scan and their start and shutdown order
 * (see pipeline.h).
 *
 * Creates the queues, starts the walker, plan, readers, hashers and the
 * status-line threads, runs the store stage on the calling thread, then
 * joins everything.  Reads nothing itself but the clock and the counters.
 *
 * Shutdown is by end of input, front to back: the walker closes the
 * listing queue; plan closes the read queue and its slot of the store
 * queue; every reader closes every hash queue; every hasher closes its
 * slot of the store queue; the store stage returns when the last slot is
 * closed and the queue drained.  A stop request (signal, fatal catalog
 * error) makes each stage stop producing and drain its input, so the same
 * order ends the run, and what reached the store is committed.
 *
 * Invariants:
 *  1. Queue producer counts match the closers above, so every queue ends.
 *  2. The store stage is the only user of `writer` while the threads run.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pipeline.h"
#include "hash.h"
#include "log.h"
#include "plan.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LISTING_QUEUE 64
#define READ_QUEUE 4096
#define STORE_QUEUE 8192
#define STATUS_INTERVAL_US 250000

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	if (stop_signal != 0)
		_exit(128 + sig);   /* second signal: committed data is safe */
	stop_signal = sig;
	pix_request_stop();
}

void pix_pipeline_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking wait (the catalog lock) returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int pix_pipeline_stop_signal(void)
{
	return stop_signal;
}

typedef struct {
	const PixWalkConfig *cfg;
	char **roots;
	PixQueue *out;
	gint is_done;           /* atomic: the walk has ended */
} WalkArgs;

static gpointer walk_main(gpointer data)
{
	WalkArgs *a = data;
	pix_walk_run(a->cfg, a->roots, a->out);
	g_atomic_int_set(&a->is_done, 1);
	return NULL;
}

typedef struct {
	PixPlanConfig cfg;
	GError *error;
	gboolean is_ok;
} PlanArgs;

static gpointer plan_main(gpointer data)
{
	PlanArgs *a = data;
	a->is_ok = pix_plan_run(&a->cfg, &a->error);
	return NULL;
}

typedef struct {
	GMutex lock;
	GCond done_cond;
	gboolean is_done;
	gint64 start_us;
	const gint *is_walk_done;   /* WalkArgs.is_done */
} Status;

static char *format_duration(gint64 s)
{
	if (s >= 3600)
		return g_strdup_printf("%" G_GINT64_FORMAT ":%02d:%02d", s / 3600, (int)(s / 60 % 60), (int)(s % 60));
	return g_strdup_printf("%d:%02d", (int)(s / 60), (int)(s % 60));
}

/* "1,234/5,678 files, 1.2 GB/4.5 GB, 640 MB/s, ETA 0:07" */
static char *status_line(const Status *st, gboolean is_walking)
{
	gint64 n_read = pix_count_get(PIX_N_READ), n_total = pix_count_get(PIX_N_TO_READ);
	gint64 bytes = pix_count_get(PIX_BYTES_READ), bytes_total = pix_count_get(PIX_BYTES_TO_READ);
	gint64 unchanged = pix_count_get(PIX_N_UNCHANGED);
	double secs = (double)(g_get_monotonic_time() - st->start_us) / G_USEC_PER_SEC;
	double rate = secs > 0 ? (double)bytes / secs : 0;
	g_autofree char *b = pix_format_bytes(bytes);
	g_autofree char *bt = pix_format_bytes(bytes_total);
	g_autofree char *eta = NULL;
	GString *line = g_string_new(NULL);

	if (!is_walking && rate > 0 && bytes_total >= bytes)
		eta = format_duration((gint64)((double)(bytes_total - bytes) / rate));
	g_string_printf(line, "%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " files, %s/%s, %.0f MB/s, ETA %s",
	                n_read, n_total, b, bt, rate / 1e6, eta != NULL ? eta : "?");
	if (unchanged > 0)
		g_string_append_printf(line, ", %" G_GINT64_FORMAT " unchanged", unchanged);
	if (is_walking)
		g_string_append(line, ", walking");

	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line->len >= ws.ws_col)
		g_string_truncate(line, ws.ws_col - 1);
	return g_string_free(line, FALSE);
}

static gpointer status_main(gpointer data)
{
	Status *st = data;
	g_mutex_lock(&st->lock);
	while (!st->is_done) {
		gint64 deadline = g_get_monotonic_time() + STATUS_INTERVAL_US;
		if (g_cond_wait_until(&st->done_cond, &st->lock, deadline))
			continue;
		g_autofree char *line = status_line(st, !g_atomic_int_get(st->is_walk_done));
		pix_log_status(line);
	}
	g_mutex_unlock(&st->lock);
	pix_log_status(NULL);
	return NULL;
}

gboolean pix_pipeline_scan(const PixPipelineConfig *cfg, PixStore *writer, gboolean *is_interrupted,
                           GError **error)
{
	g_autoptr(PixStore) reader = NULL;
	guint n_hashers = MAX(cfg->n_hashers, 1);
	guint n_bufs = pix_read_buffer_count(&cfg->read);
	PixQueue *listings = pix_queue_new(LISTING_QUEUE, 1);
	PixQueue *to_read = pix_queue_new(READ_QUEUE, 1);
	PixQueue *to_store = pix_queue_new(STORE_QUEUE, 1 + n_hashers);
	g_autofree PixQueue **to_hash = g_new0(PixQueue *, n_hashers);
	Status status = { .start_us = g_get_monotonic_time() };
	GThread *status_thread = NULL;
	GError *store_error = NULL;
	gboolean is_ok;

	*is_interrupted = FALSE;
	reader = pix_store_open(cfg->db_path, PIX_STORE_READ, FALSE, error);
	if (reader == NULL) {
		pix_queue_free(listings);
		pix_queue_free(to_read);
		pix_queue_free(to_store);
		return FALSE;
	}
	for (guint i = 0; i < n_hashers; i++)
		to_hash[i] = pix_queue_new(2 * n_bufs + 4 * cfg->read.n_readers + 16, cfg->read.n_readers);

	WalkArgs walk_args = { .cfg = &cfg->walk, .roots = cfg->roots, .out = listings };
	status.is_walk_done = &walk_args.is_done;
	PlanArgs plan_args = { .cfg = { .catalog = reader, .roots = cfg->roots, .in = listings,
	                                .to_read = to_read, .to_store = to_store,
	                                .device_class = cfg->device_class } };
	GThread *walker = g_thread_new("pix-walk", walk_main, &walk_args);
	GThread *planner = g_thread_new("pix-plan", plan_main, &plan_args);
	PixReaders *readers = pix_read_start(&cfg->read, to_read, to_hash, n_hashers);
	PixHashers *hashers = pix_hash_start(to_hash, n_hashers, to_store);
	if (cfg->is_progress) {
		g_mutex_init(&status.lock);
		g_cond_init(&status.done_cond);
		status_thread = g_thread_new("pix-status", status_main, &status);
	}

	is_ok = pix_store_consume(writer, to_store, cfg->batch_items, cfg->batch_us, &store_error);

	g_thread_join(walker);
	g_thread_join(planner);
	pix_read_join(readers);
	pix_hash_join(hashers);
	if (status_thread != NULL) {
		g_mutex_lock(&status.lock);
		status.is_done = TRUE;
		g_cond_signal(&status.done_cond);
		g_mutex_unlock(&status.lock);
		g_thread_join(status_thread);
		g_mutex_clear(&status.lock);
		g_cond_clear(&status.done_cond);
	}
	for (guint i = 0; i < n_hashers; i++)
		pix_queue_free(to_hash[i]);
	pix_queue_free(listings);
	pix_queue_free(to_read);
	pix_queue_free(to_store);

	*is_interrupted = stop_signal != 0;
	if (!is_ok) {
		g_propagate_error(error, store_error);
		g_clear_error(&plan_args.error);
		return FALSE;
	}
	if (!plan_args.is_ok) {
		g_propagate_error(error, plan_args.error);
		return FALSE;
	}
	return TRUE;
}
