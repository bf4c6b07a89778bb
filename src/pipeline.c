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
#include "verify.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LISTING_QUEUE 64
#define READ_QUEUE 4096
#define STORE_QUEUE 8192
/* and at most this many bytes of thumbnails: 8,192 items of small JPEGs
 * carry 49-64 KB each, 400-500 MB, which a writer slower than the hashers
 * (a PostgreSQL catalog over a slow link) would let pile up */
#define STORE_QUEUE_THUMB_BYTES (16 << 20)
#define STATUS_INTERVAL_US 250000
#define READ_BATCH 16          /* files a reader takes at once (not on a spinning disk) */

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

void pix_pipeline_clear_stop(void)
{
	pix_clear_stop();
	/* a signal that came meanwhile still stops */
	if (stop_signal != 0)
		pix_request_stop();
}

typedef struct {
	PixWalkConfig cfg;
	char **roots;
	PixQueue *out;
	PixStore *catalog;      /* --quick: a reader for the walker, else NULL */
	GHashTable *always_list; /* --quick: paths listed anyway (borrowed) */
	gint64 trusted_scan_id;
	GError *error;          /* the catalog failed (--quick) */
	gint is_done;           /* atomic: the walk has ended */
} WalkArgs;

/* --quick: the walker asks the catalog (PixWalkIsKnownFn). */
static gboolean walk_is_known(gpointer data, const PixDir *dir, GPtrArray **subdir_names, gint64 *n_files)
{
	WalkArgs *a = data;
	gboolean is_known = FALSE;
	if (a->error != NULL || (a->always_list != NULL && g_hash_table_contains(a->always_list, dir->path)))
		return FALSE;
	if (!pix_store_dir_is_known(a->catalog, dir, a->trusted_scan_id, &is_known, subdir_names, n_files,
	                            &a->error)) {
		pix_request_stop();
		return FALSE;
	}
	return is_known;
}

static gpointer walk_main(gpointer data)
{
	WalkArgs *a = data;
	pix_walk_run(&a->cfg, a->roots, a->out);
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

/*
 * The stages before the readers: a scan's walker and plan, or verify's
 * chooser.  start() starts their threads, which feed `to_read` and hold one
 * producer slot of `to_store`, and close both; join() waits for them and
 * says whether they failed (error set).
 */
typedef struct {
	void (*start)(gpointer data, PixQueue *to_read, PixQueue *to_store);
	gboolean (*join)(gpointer data, GError **error);
	gpointer data;
	const gint *is_listing_done; /* for the status line: still walking? */
} Source;

/* What an item weighs in the store queue. */
static gint64 item_thumb_bytes(gconstpointer item)
{
	return (gint64)pix_thumb_bytes(((const PixItem *)item)->thumb);
}

/* Runs `src` and the stages after it: readers, hashers, store (on this
 * thread), and the status line. */
static gboolean run(const PixPipelineConfig *cfg, PixStore *writer, const Source *src, gboolean *is_interrupted,
                    GError **error)
{
	guint n_hashers = MAX(cfg->n_hashers, 1);
	guint n_bufs = pix_read_buffer_count(&cfg->read);
	PixQueue *to_read = pix_queue_new(READ_QUEUE, 1);
	PixQueue *to_store = pix_queue_new(STORE_QUEUE, 1 + n_hashers);
	pix_queue_set_weight(to_store, item_thumb_bytes, STORE_QUEUE_THUMB_BYTES);
	g_autofree PixQueue **to_hash = g_new0(PixQueue *, n_hashers);
	Status status = { .start_us = g_get_monotonic_time(), .is_walk_done = src->is_listing_done };
	GThread *status_thread = NULL;
	GError *store_error = NULL, *src_error = NULL;

	*is_interrupted = FALSE;
	for (guint i = 0; i < n_hashers; i++)
		to_hash[i] = pix_queue_new(2 * n_bufs + 64 * cfg->read.n_readers + 16, cfg->read.n_readers);
	src->start(src->data, to_read, to_store);
	/* a spinning disk reads in the planned order, one file per reader at
	 * a time; elsewhere a reader takes files in batches, which costs one
	 * hand-off per batch instead of two per file */
	PixReadConfig read_cfg = cfg->read;
	if (read_cfg.batch_files == 0)
		read_cfg.batch_files = cfg->device_class == PIX_DEVICE_ROTATIONAL ? 1 : READ_BATCH;
	/* measured over sshfs with 2 ms round trips: 1,000 small files in
	 * 1.3-1.5 s with blocking readers, 3.2-3.5 s through io_uring, whose
	 * opens there wait in the kernel's workers (pix_sched_is_uring) */
	read_cfg.is_blocking = read_cfg.is_blocking || !pix_sched_is_uring(cfg->device_class);
	PixReaders *readers = pix_read_start(&read_cfg, to_read, to_hash, n_hashers);
	PixHashers *hashers = pix_hash_start(to_hash, n_hashers, to_store);
	if (cfg->is_progress) {
		g_mutex_init(&status.lock);
		g_cond_init(&status.done_cond);
		status_thread = g_thread_new("pix-status", status_main, &status);
	}

	gboolean is_stored = pix_store_consume(writer, to_store, cfg->batch_items, cfg->batch_us, &store_error);

	gboolean is_src_ok = src->join(src->data, &src_error);
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
	pix_queue_free(to_read);
	pix_queue_free(to_store);

	*is_interrupted = stop_signal != 0;
	if (!is_stored) {
		g_propagate_error(error, store_error);
		g_clear_error(&src_error);
		return FALSE;
	}
	if (!is_src_ok) {
		g_propagate_error(error, src_error);
		return FALSE;
	}
	return TRUE;
}

/* --- scan: walker and plan --- */

typedef struct {
	const PixPipelineConfig *cfg;
	PixStore *plan_reader;
	const PixThumbIndex *thumbs_known;
	PixQueue *listings;
	WalkArgs walk;
	PlanArgs plan;
	GThread *walker, *planner;
} ScanSource;

static void scan_start(gpointer data, PixQueue *to_read, PixQueue *to_store)
{
	ScanSource *s = data;
	s->plan = (PlanArgs){ .cfg = { .catalog = s->plan_reader, .roots = s->cfg->roots, .in = s->listings,
	                               .to_read = to_read, .to_store = to_store,
	                               .device_class = s->cfg->device_class, .busy_files = s->cfg->busy_files,
	                               .is_reread = s->cfg->is_reread,
	                               .is_thumbnails = s->cfg->is_thumbnails,
	                               .thumbs_known = s->thumbs_known,
	                               .mount_roots = s->cfg->mount_roots } };
	s->walker = g_thread_new("pix-walk", walk_main, &s->walk);
	s->planner = g_thread_new("pix-plan", plan_main, &s->plan);
}

static gboolean scan_join(gpointer data, GError **error)
{
	ScanSource *s = data;
	g_thread_join(s->walker);
	g_thread_join(s->planner);
	if (s->walk.error != NULL) {
		g_propagate_error(error, g_steal_pointer(&s->walk.error));
		g_clear_error(&s->plan.error);
		return FALSE;
	}
	if (!s->plan.is_ok) {
		g_propagate_error(error, g_steal_pointer(&s->plan.error));
		return FALSE;
	}
	return TRUE;
}

gboolean pix_pipeline_scan(const PixPipelineConfig *cfg, PixStore *writer, gboolean *is_interrupted,
                           GError **error)
{
	g_autoptr(PixStore) reader = NULL, walk_reader = NULL;

	*is_interrupted = FALSE;
	reader = pix_store_open(cfg->db_path, PIX_STORE_READ, FALSE, error);
	if (reader == NULL)
		return FALSE;
	if (cfg->is_quick && (walk_reader = pix_store_open(cfg->db_path, PIX_STORE_READ, FALSE, error)) == NULL)
		return FALSE;

	/* the contents with a thumbnail, so that a copy is not decoded */
	g_autoptr(PixThumbIndex) thumbs_known = NULL;
	if (cfg->is_thumbnails && (thumbs_known = pix_store_thumb_index(reader, error)) == NULL)
		return FALSE;

	ScanSource s = { .cfg = cfg, .plan_reader = reader, .listings = pix_queue_new(LISTING_QUEUE, 1),
	                 .thumbs_known = thumbs_known };
	s.walk = (WalkArgs){ .cfg = cfg->walk, .roots = cfg->roots, .out = s.listings, .catalog = walk_reader,
	                     .always_list = cfg->always_list, .trusted_scan_id = cfg->trusted_scan_id };
	if (cfg->is_quick) {
		s.walk.cfg.is_known = walk_is_known;
		s.walk.cfg.is_known_data = &s.walk;
	}
	Source src = { .start = scan_start, .join = scan_join, .data = &s, .is_listing_done = &s.walk.is_done };
	gboolean is_ok = run(cfg, writer, &src, is_interrupted, error);
	pix_queue_free(s.listings);
	return is_ok;
}

/* --- verify: the chooser --- */

typedef struct {
	PixVerifyPlanConfig cfg;
	GThread *thread;
	GError *error;
	gboolean is_ok;
	gint is_done;
} VerifySource;

static gpointer verify_main(gpointer data)
{
	VerifySource *v = data;
	v->is_ok = pix_verify_plan_run(&v->cfg, &v->error);
	g_atomic_int_set(&v->is_done, 1);
	return NULL;
}

static void verify_start(gpointer data, PixQueue *to_read, PixQueue *to_store)
{
	VerifySource *v = data;
	v->cfg.to_read = to_read;
	v->cfg.to_store = to_store;
	v->thread = g_thread_new("pix-verify", verify_main, v);
}

static gboolean verify_join(gpointer data, GError **error)
{
	VerifySource *v = data;
	g_thread_join(v->thread);
	if (!v->is_ok) {
		g_propagate_error(error, g_steal_pointer(&v->error));
		return FALSE;
	}
	return TRUE;
}

gboolean pix_pipeline_verify(const PixPipelineConfig *cfg, char **paths, gint64 max_bytes, PixStore *writer,
                             gboolean *is_interrupted, GError **error)
{
	g_autoptr(PixStore) reader = pix_store_open(cfg->db_path, PIX_STORE_READ, FALSE, error);

	*is_interrupted = FALSE;
	if (reader == NULL)
		return FALSE;
	VerifySource v = { .cfg = { .catalog = reader, .paths = paths, .max_bytes = max_bytes,
	                            .deadline_us = cfg->read.deadline_us, .device_class = cfg->device_class } };
	Source src = { .start = verify_start, .join = verify_join, .data = &v, .is_listing_done = &v.is_done };
	return run(cfg, writer, &src, is_interrupted, error);
}
