/*
 * read.c: reader threads and the buffer pool (see read.h).
 *
 * Reads planned files (open, fstat, read, fstat, close; never anything but
 * regular files, never following a symlink); writes PixChunks to the hash
 * queues.  Runs on cfg->n_readers reader threads; pix_chunk_free() runs on
 * the hash threads.
 *
 * Invariants:
 *  1. At most pool->max buffers exist at once (the memory cap); a reader
 *     that needs one waits for a consumer to free one.
 *  2. Every item popped from `in` yields messages on a single output queue,
 *     the first flagged START and the last END (the same message when there
 *     is one), or is freed unread after a stop request.
 *  3. A file's hash is only ever computed from one complete pass over a
 *     file whose size, mtime and ctime did not change during that pass
 *     (else RESTART, or END with an error).
 *  4. The item is not touched by the reader after START is pushed (only
 *     its pointer rides along in later messages).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "read.h"
#include "log.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_PASSES 3   /* reads of a file that keeps changing before giving up */

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080   /* Linux 6.14: read without keeping the pages */
#endif

struct PixBufPool {
	gint ref_count;         /* the readers, plus one per chunk holding a buffer */
	GMutex lock;
	GCond freed;
	GSList *free_bufs;
	guint n_allocated;
	guint max;
	gsize buf_bytes;
	gint64 *pending_bytes;  /* per output queue: DATA bytes not yet freed
	                           (atomic; here because chunks outlive readers) */
};

struct PixReaders {
	PixReadConfig cfg;
	PixQueue *in;
	PixQueue **out;
	guint n_out;
	guint next_out;         /* atomic: where the search for the least loaded starts */
	PixBufPool *pool;
	GThread **threads;
	/* devices whose file system refused RWF_DONTCACHE (st_dev as keys) */
	GMutex dontcache_lock;
	GHashTable *no_dontcache;
	/* --limit-rate: bytes allowed since `rate_start_us` */
	GMutex rate_lock;
	gint64 rate_start_us;
	gint64 rate_bytes;
};

guint pix_read_buffer_count(const PixReadConfig *cfg)
{
	/* in 64 bits: a huge --max-memory must not wrap to no buffers at all */
	guint64 n = cfg->max_memory_bytes / cfg->read_bytes;
	return (guint)CLAMP(n, 2, PIX_READ_MAX_BUFFERS);
}

static void pool_unref(PixBufPool *pool)
{
	if (!g_atomic_int_dec_and_test(&pool->ref_count))
		return;
	g_slist_free_full(pool->free_bufs, free);
	g_free(pool->pending_bytes);
	g_mutex_clear(&pool->lock);
	g_cond_clear(&pool->freed);
	g_free(pool);
}

static guint8 *pool_acquire(PixBufPool *pool)
{
	guint8 *buf = NULL;
	g_mutex_lock(&pool->lock);
	while (pool->free_bufs == NULL && pool->n_allocated >= pool->max)
		g_cond_wait(&pool->freed, &pool->lock);
	if (pool->free_bufs != NULL) {
		buf = pool->free_bufs->data;
		pool->free_bufs = g_slist_delete_link(pool->free_bufs, pool->free_bufs);
	} else {
		pool->n_allocated++;
	}
	g_mutex_unlock(&pool->lock);
	if (buf == NULL) {
		/* page aligned: ready for O_DIRECT, and kind to the page cache */
		if (posix_memalign((void **)&buf, 4096, pool->buf_bytes) != 0)
			g_error("out of memory for a %zu-byte read buffer", pool->buf_bytes);
	}
	g_atomic_int_inc(&pool->ref_count);
	return buf;
}

static void pool_release(PixBufPool *pool, guint8 *buf)
{
	g_mutex_lock(&pool->lock);
	pool->free_bufs = g_slist_prepend(pool->free_bufs, buf);
	g_cond_signal(&pool->freed);
	g_mutex_unlock(&pool->lock);
	pool_unref(pool);
}

void pix_chunk_free(PixChunk *c)
{
	if (c == NULL)
		return;
	if (c->pending_bytes != NULL)
		__atomic_sub_fetch(c->pending_bytes, (gint64)c->len, __ATOMIC_RELAXED);
	if (c->buf != NULL)
		pool_release(c->pool, c->buf);
	g_free(c->error);
	g_free(c);
}

static PixChunk *chunk_new(guint flags, PixItem *item)
{
	PixChunk *c = g_new0(PixChunk, 1);
	c->flags = flags;
	c->item = item;
	return c;
}

/* Sleeps as long as --limit-rate asks before `n` more bytes. */
static void throttle(PixReaders *r, gsize n)
{
	if (r->cfg.limit_bytes_per_s <= 0)
		return;
	g_mutex_lock(&r->rate_lock);
	if (r->rate_start_us == 0)
		r->rate_start_us = g_get_monotonic_time();
	r->rate_bytes += (gint64)n;
	gint64 due = r->rate_start_us + (gint64)((double)r->rate_bytes * G_USEC_PER_SEC / (double)r->cfg.limit_bytes_per_s);
	g_mutex_unlock(&r->rate_lock);
	while (!pix_stop_requested()) {
		gint64 now = g_get_monotonic_time();
		if (now >= due)
			break;
		g_usleep((gulong)MIN(due - now, 100000));
	}
}

/* The output queue with the fewest bytes waiting to be consumed; ties go
 * round-robin, so idle consumers all get work. */
static guint pick_out(PixReaders *r)
{
	guint start = (guint)g_atomic_int_add((gint *)&r->next_out, 1) % r->n_out;
	guint best = start;
	gint64 best_load = __atomic_load_n(&r->pool->pending_bytes[start], __ATOMIC_RELAXED);
	for (guint k = 1; k < r->n_out; k++) {
		guint i = (start + k) % r->n_out;
		gint64 load = __atomic_load_n(&r->pool->pending_bytes[i], __ATOMIC_RELAXED);
		if (load < best_load) {
			best = i;
			best_load = load;
		}
	}
	return best;
}

static int open_file(const char *path)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd = pix_path_open(path, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = pix_path_open(path, flags);   /* O_NOATIME needs ownership */
	return fd;
}

static gboolean is_dontcache_refused(PixReaders *r, guint64 dev)
{
	g_mutex_lock(&r->dontcache_lock);
	gboolean refused = g_hash_table_contains(r->no_dontcache, GSIZE_TO_POINTER((gsize)dev));
	g_mutex_unlock(&r->dontcache_lock);
	return refused;
}

static void refuse_dontcache(PixReaders *r, guint64 dev)
{
	g_mutex_lock(&r->dontcache_lock);
	g_hash_table_add(r->no_dontcache, GSIZE_TO_POINTER((gsize)dev));
	g_mutex_unlock(&r->dontcache_lock);
}

/* One read at `off`; without the page cache keeping the pages when
 * *is_uncached (cleared, and the device remembered, when the file system
 * refuses).  Returns bytes or -1 with errno. */
static ssize_t read_at(PixReaders *r, int fd, guint64 dev, guint8 *buf, gsize len, gint64 off, gboolean *is_uncached)
{
	for (;;) {
		ssize_t n;
		if (*is_uncached) {
			struct iovec iov = { .iov_base = buf, .iov_len = len };
			n = preadv2(fd, &iov, 1, off, RWF_DONTCACHE);
			if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
				refuse_dontcache(r, dev);
				*is_uncached = FALSE;
				continue;
			}
		} else {
			n = pread(fd, buf, len, off);
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n;
	}
}

/*
 * Reads up to cap bytes at `off`, retrying short reads, but stops at
 * `expect` bytes (what fstat said the file holds from here): a read past
 * the end would return 0 and cost a system call per file.  A file that grew
 * is caught by the fstat after the pass.  Returns bytes or -errno.
 */
static gssize read_full(PixReaders *r, int fd, guint64 dev, guint8 *buf, gsize cap, gint64 off, gint64 expect,
                        gboolean *is_uncached)
{
	gsize got = 0;
	if (expect >= 0 && (guint64)expect < cap)
		cap = expect > 0 ? (gsize)expect : 1;   /* 1: still see a file that grew */
	while (got < cap) {
		ssize_t n = read_at(r, fd, dev, buf + got, cap - got, off + (gint64)got, is_uncached);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (gsize)n;
	}
	return (gssize)got;
}

static gboolean is_stable(const PixStat *a, const PixStat *b, gint64 bytes)
{
	return a->size_bytes == b->size_bytes && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns && bytes == b->size_bytes;
}

/* Whether the readers must drop what they have: a stop request, or the
 * deadline passed. */
static gboolean is_dropping(const PixReaders *r)
{
	return pix_stop_requested() || (r->cfg.deadline_us > 0 && g_get_monotonic_time() >= r->cfg.deadline_us);
}

/* What the last message of a file will say (see read_one). */
typedef struct {
	PixStat st;
	gint64 bytes_read;
	char *error;
	gboolean is_aborted;
	gboolean is_racy;
	gboolean is_vanished;
	gboolean is_unstable;
} Ending;

/*
 * Reads one whole file and sends its messages (see read.h and invariants
 * 2-4).  The message with a pass's last bytes is held back until the
 * fstat after the read says whether the pass was stable, so that a file
 * that fits in one read costs one message.
 */
static void read_one(PixReaders *r, PixItem *item)
{
	g_autofree char *path = pix_item_path(item);
	guint out_index = pick_out(r);
	PixQueue *out = r->out[out_index];
	guint owed = PIX_CHUNK_START;   /* flags the next message must carry */
	PixChunk *held = NULL;          /* data read but not sent yet */
	Ending ending = { 0 };
	gboolean is_uncached = FALSE;   /* reading with RWF_DONTCACHE */
	struct stat st;
	PixStat before, after;
	int fd = open_file(path);
	int err = 0;

	if (fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENOTDIR) {
			/* deleted or renamed since it was listed: not a problem
			 * with the file, which is simply not there any more */
			ending.is_vanished = TRUE;
			g_autofree char *q = pix_quote(path);
			pix_notice("'%s' is gone since it was listed", q);
		} else if (err == ELOOP) {
			ending.error = g_strdup("cannot open: it, or a directory above it, became a symbolic link");
		} else {
			ending.error = g_strdup_printf("cannot open: %s", g_strerror(err));
		}
		goto done;
	}
	if (fstat(fd, &st) != 0) {
		err = errno;
		ending.error = g_strdup_printf("cannot stat: %s", g_strerror(err));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		ending.error = g_strdup("not read: it is no longer a regular file");
		ending.is_unstable = TRUE;
		goto done;
	}
	pix_stat_from(&before, &st);
	if (before.size_bytes > (gint64)r->cfg.read_bytes)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	is_uncached = !r->cfg.is_keep_cache && !is_dontcache_refused(r, before.dev);

	for (int pass = 1;; pass++) {
		gint64 total = 0;
		for (;;) {
			if (is_dropping(r)) {
				ending.is_aborted = TRUE;
				goto done;
			}
			guint8 *buf = pool_acquire(r->pool);
			gssize n = read_full(r, fd, before.dev, buf, r->cfg.read_bytes, total, before.size_bytes - total,
			                     &is_uncached);
			if (n <= 0) {
				pool_release(r->pool, buf);
				if (n < 0) {
					err = (int)-n;
					ending.error = g_strdup_printf("cannot read: %s", g_strerror(err));
					goto done;
				}
				break;
			}
			throttle(r, (gsize)n);
			PixChunk *c = chunk_new(0, item);
			c->buf = buf;
			c->pool = r->pool;
			c->data = buf;
			c->len = (gsize)n;
			c->pending_bytes = &r->pool->pending_bytes[out_index];
			__atomic_add_fetch(c->pending_bytes, n, __ATOMIC_RELAXED);
			total += n;
			pix_count_add(PIX_BYTES_READ, n);
			if ((gsize)n < r->cfg.read_bytes) {
				held = c;       /* a short read: the end of the file */
				break;
			}
			c->flags |= owed;
			owed = 0;
			pix_queue_push(out, c);
		}
		if (fstat(fd, &st) != 0) {
			err = errno;
			ending.error = g_strdup_printf("cannot stat: %s", g_strerror(err));
			goto done;
		}
		pix_stat_from(&after, &st);
		if (is_stable(&before, &after, total)) {
			gint64 now_ns = g_get_real_time() * 1000;
			ending.st = after;
			ending.bytes_read = total;
			/* two seconds: FAT (camera cards) keeps mtime in 2 s steps */
			ending.is_racy = after.mtime_ns > now_ns - G_GINT64_CONSTANT(2000000000) &&
			                 after.mtime_ns < now_ns + G_GINT64_CONSTANT(2000000000);
			break;
		}
		if (pass == MAX_PASSES) {
			ending.error = g_strdup_printf("changed while being read (%d tries); "
			                               "the next scan reads it again", MAX_PASSES);
			ending.is_unstable = TRUE;
			break;
		}
		before = after;
		if (held != NULL) {
			held->flags |= owed;
			owed = 0;
			pix_queue_push(out, g_steal_pointer(&held));
		}
		owed |= PIX_CHUNK_RESTART;
	}
done:
	if (fd >= 0) {
		/* the pages RWF_DONTCACHE did not keep need no dropping */
		if (!r->cfg.is_keep_cache && !is_uncached)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	if (ending.error != NULL) {
		g_autofree char *q = pix_quote(path);
		if (item->action == PIX_ACT_VERIFY && !ending.is_unstable)
			pix_warn("cannot verify '%s': %s", q, ending.error);
		else if (item->action != PIX_ACT_VERIFY)
			pix_warn("cannot index '%s': %s (skipping)", q, ending.error);
	}
	pix_count_add(PIX_N_READ, 1);
	PixChunk *last = held != NULL ? held : chunk_new(0, item);
	last->flags |= owed | PIX_CHUNK_END;
	last->st = ending.st;
	last->bytes_read = ending.bytes_read;
	last->error = ending.error;
	last->is_aborted = ending.is_aborted;
	last->is_racy = ending.is_racy;
	last->is_vanished = ending.is_vanished;
	last->is_unstable = ending.is_unstable;
	pix_queue_push(out, last);
}

static gpointer reader_main(gpointer data)
{
	PixReaders *r = data;
	PixItem *item;
	while ((item = pix_queue_pop(r->in)) != NULL) {
		if (is_dropping(r)) {
			pix_item_free(item);
			continue;
		}
		read_one(r, item);
	}
	for (guint i = 0; i < r->n_out; i++)
		pix_queue_close(r->out[i]);
	return NULL;
}

PixReaders *pix_read_start(const PixReadConfig *cfg, PixQueue *in, PixQueue **out, guint n_out)
{
	PixReaders *r = g_new0(PixReaders, 1);
	g_assert(cfg->n_readers >= 1 && cfg->read_bytes >= 4096 && n_out >= 1);
	g_assert(cfg->max_memory_bytes >= 2 * cfg->read_bytes);
	r->cfg = *cfg;
	r->in = in;
	r->out = g_memdup2(out, sizeof(PixQueue *) * n_out);
	r->n_out = n_out;
	r->pool = g_new0(PixBufPool, 1);
	r->pool->ref_count = 1;
	g_mutex_init(&r->pool->lock);
	g_cond_init(&r->pool->freed);
	r->pool->buf_bytes = cfg->read_bytes;
	r->pool->max = pix_read_buffer_count(cfg);
	r->pool->pending_bytes = g_new0(gint64, n_out);
	g_mutex_init(&r->rate_lock);
	g_mutex_init(&r->dontcache_lock);
	r->no_dontcache = g_hash_table_new(g_direct_hash, g_direct_equal);
	r->threads = g_new0(GThread *, cfg->n_readers);
	for (guint i = 0; i < cfg->n_readers; i++)
		r->threads[i] = g_thread_new("pix-read", reader_main, r);
	return r;
}

void pix_read_join(PixReaders *r)
{
	for (guint i = 0; i < r->cfg.n_readers; i++)
		g_thread_join(r->threads[i]);
	pool_unref(r->pool);
	g_mutex_clear(&r->rate_lock);
	g_mutex_clear(&r->dontcache_lock);
	g_hash_table_destroy(r->no_dontcache);
	g_free(r->threads);
	g_free(r->out);
	g_free(r);
}
