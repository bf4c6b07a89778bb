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
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_PASSES 3   /* reads of a file that keeps changing before giving up */

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080   /* Linux 6.14: read without keeping the pages */
#endif

/* A buffer of the pool: read_bytes of data, shared by the chunks (and the
 * reader filling it) that hold a reference. */
struct PixBuf {
	PixBufPool *pool;
	gint refs;              /* atomic */
	guint8 *data;           /* page aligned */
};

struct PixBufPool {
	gint ref_count;         /* the readers, plus one per buffer in use */
	GMutex lock;
	GCond freed;            /* a buffer came back */
	guint n_waiters;        /* readers waiting on `freed` */
	GCond *share_freed;     /* per output queue: a buffer of its DATA came
	                           back (only the readers of that consumer
	                           wake, one per buffer) */
	guint *n_share_waiters; /* per output queue: readers waiting on it */
	gint *n_large;          /* per output queue: files of several reads
	                           being read for it (atomic) */
	GSList *free_bufs;      /* PixBuf* */
	guint n_allocated;
	guint max;
	gsize buf_bytes;
	gint64 *pending_bytes;  /* per output queue: DATA bytes not yet freed
	                           (atomic; here because chunks outlive readers) */
	guint n_out;
};

struct PixReaders {
	PixReadConfig cfg;
	PixQueue *in;
	PixQueue **out;
	guint n_out;
	guint next_out;         /* atomic: where the search for the least loaded starts */
	PixBufPool *pool;
	GThread **threads;
	/* devices whose file system refused RWF_DONTCACHE (st_dev as keys);
	 * is_any_refused (atomic) spares the lock while none has */
	GMutex dontcache_lock;
	GHashTable *no_dontcache;
	gint is_any_refused;
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

static void buf_free(gpointer p)
{
	PixBuf *b = p;
	free(b->data);
	g_free(b);
}

static void pool_unref(PixBufPool *pool)
{
	if (!g_atomic_int_dec_and_test(&pool->ref_count))
		return;
	g_slist_free_full(pool->free_bufs, buf_free);
	for (guint i = 0; i < pool->n_out; i++)
		g_cond_clear(&pool->share_freed[i]);
	g_free(pool->share_freed);
	g_free(pool->n_share_waiters);
	g_free(pool->n_large);
	g_free(pool->pending_bytes);
	g_mutex_clear(&pool->lock);
	g_cond_clear(&pool->freed);
	g_free(pool);
}

/* A buffer with one reference, or NULL when the pool is at its cap and
 * `is_wait` is FALSE. */
static PixBuf *pool_acquire(PixBufPool *pool, gboolean is_wait)
{
	PixBuf *buf = NULL;
	gboolean is_new = FALSE;
	g_mutex_lock(&pool->lock);
	while (pool->free_bufs == NULL && pool->n_allocated >= pool->max && is_wait) {
		pool->n_waiters++;
		g_cond_wait(&pool->freed, &pool->lock);
		pool->n_waiters--;
	}
	if (pool->free_bufs != NULL) {
		buf = pool->free_bufs->data;
		pool->free_bufs = g_slist_delete_link(pool->free_bufs, pool->free_bufs);
	} else if (pool->n_allocated < pool->max) {
		pool->n_allocated++;
		is_new = TRUE;
	}
	g_mutex_unlock(&pool->lock);
	if (is_new) {
		buf = g_new0(PixBuf, 1);
		buf->pool = pool;
		/* page aligned: ready for O_DIRECT, and kind to the page cache */
		if (posix_memalign((void **)&buf->data, 4096, pool->buf_bytes) != 0)
			g_error("out of memory for a %zu-byte read buffer", pool->buf_bytes);
	}
	if (buf == NULL)
		return NULL;
	buf->refs = 1;
	g_atomic_int_inc(&pool->ref_count);
	return buf;
}

static void buf_ref(PixBuf *buf)
{
	g_atomic_int_inc(&buf->refs);
}

/* Drops a reference; the last gives the buffer back to its pool, and
 * wakes the readers waiting for a buffer and one waiting for the share of
 * the consumer whose load counter is `pending` (when not NULL). */
static void buf_unref(PixBuf *buf, const gint64 *pending)
{
	if (!g_atomic_int_dec_and_test(&buf->refs))
		return;
	PixBufPool *pool = buf->pool;
	g_mutex_lock(&pool->lock);
	pool->free_bufs = g_slist_prepend(pool->free_bufs, buf);
	/* a futex call only for a reader that waits */
	if (pool->n_waiters > 0)
		g_cond_broadcast(&pool->freed);
	if (pending != NULL) {
		gsize k = (gsize)(pending - pool->pending_bytes);
		g_assert(k < pool->n_out);
		if (pool->n_share_waiters[k] > 0)
			g_cond_signal(&pool->share_freed[k]);
	}
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
		buf_unref(c->buf, c->pending_bytes);
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

guint pix_read_pick(const gint *n_large, const gint64 *pending, guint n, guint start)
{
	guint best = start % n;
	gint best_files = n_large != NULL ? g_atomic_int_get(&n_large[best]) : 0;
	gint64 best_load = __atomic_load_n(&pending[best], __ATOMIC_RELAXED);
	for (guint k = 1; k < n; k++) {
		guint i = (start + k) % n;
		gint files = n_large != NULL ? g_atomic_int_get(&n_large[i]) : 0;
		gint64 load = __atomic_load_n(&pending[i], __ATOMIC_RELAXED);
		if (files < best_files || (files == best_files && load < best_load)) {
			best = i;
			best_files = files;
			best_load = load;
		}
	}
	return best;
}

/* The output queue for a batch of small files, or (`is_large`) for a file
 * of several reads, which it counts in: read_fd() counts it out when the
 * file's last message is gathered.  Ties go round-robin, so idle
 * consumers all get work.  A hasher runs the MD5 of the large files it is
 * given side by side in SIMD lanes, as many as have bytes ready; given by
 * load alone, they went to the hasher that was not busy decoding a
 * preview when they started, so that one ran 9 to 16 of them at once and
 * the other 2 or 3 (50 RAW files of 18 MB with thumbnails, 32 readers, 2
 * hashers). */
static guint pick_out(PixReaders *r, gboolean is_large)
{
	PixBufPool *pool = r->pool;
	guint start = (guint)g_atomic_int_add((gint *)&r->next_out, 1) % r->n_out;
	guint best = pix_read_pick(is_large ? pool->n_large : NULL, pool->pending_bytes, r->n_out, start);
	if (is_large)
		g_atomic_int_inc(&pool->n_large[best]);
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
	if (!g_atomic_int_get(&r->is_any_refused))
		return FALSE;
	g_mutex_lock(&r->dontcache_lock);
	gboolean refused = g_hash_table_contains(r->no_dontcache, GSIZE_TO_POINTER((gsize)dev));
	g_mutex_unlock(&r->dontcache_lock);
	return refused;
}

static void refuse_dontcache(PixReaders *r, guint64 dev)
{
	g_mutex_lock(&r->dontcache_lock);
	g_hash_table_add(r->no_dontcache, GSIZE_TO_POINTER((gsize)dev));
	g_atomic_int_set(&r->is_any_refused, 1);
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
	return a->dev == b->dev && a->ino == b->ino && a->size_bytes == b->size_bytes && a->mtime_ns == b->mtime_ns &&
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

#define MAX_BATCH_FILES 64
#define BATCH_READS 4    /* a batch's files weigh at most this many reads together */
#define PENDING_NS G_GINT64_CONSTANT(10000000) /* longest a message waits for its batch */
#define PENDING_MAX 64   /* messages a reader gathers before handing them on */
#define SHARE_ALIGN 64   /* where a small file's bytes start in a shared buffer */
/* Of a shared buffer, the bytes small files use: the pages a batch of
 * them touches, not the whole buffer; at most a quarter of a read, so
 * that the small files the pool holds at once do not grow as reads
 * shrink (with thumbnails, reads of 512 KiB: 48 buffers using 256 KiB each
 * held twice the images of 24 of 1 MiB, and peak RSS on 168 small images
 * went from 82-95 MB, median 87, to 81-105, median 90; with a quarter,
 * 80-100, median 85; 12 runs each, in turn). */
#define SHARE_BYTES (256 * 1024)

/* One reader thread's state across the files of a batch. */
typedef struct {
	PixReaders *r;
	guint out_index;        /* the batch's output queue */
	PixQueue *out;
	PixChunk *pending[PENDING_MAX]; /* messages not yet handed on, in order */
	guint n_pending;
	gint64 pending_since_ns; /* when the oldest of them was gathered */
	PixUring *uring;        /* batches through io_uring, or NULL */
	PixBuf *shared;         /* the buffer small files are read into, one
	                           after the other (one reference), or NULL */
	gsize shared_used;
} Reader;

/* Hands the gathered messages to the batch's queue, in one hand-off. */
static void flush(Reader *rd)
{
	if (rd->n_pending == 0)
		return;
	pix_queue_push_many(rd->out, (gpointer *)rd->pending, rd->n_pending);
	rd->n_pending = 0;
}

static void emit(Reader *rd, PixChunk *c)
{
	gint64 now = pix_clock_ns();
	if (rd->n_pending == 0)
		rd->pending_since_ns = now;
	rd->pending[rd->n_pending++] = c;
	/* a whole read is worth starting on at once; small files wait for
	 * the batch, unless reading is slow (a network, --limit-rate): then
	 * what was read goes on within PENDING_NS */
	if (rd->n_pending == PENDING_MAX || c->len == rd->r->cfg.read_bytes || now - rd->pending_since_ns > PENDING_NS)
		flush(rd);
}

static void drop_shared(Reader *rd)
{
	if (rd->shared != NULL)
		buf_unref(g_steal_pointer(&rd->shared), NULL);
}

/* A buffer from the pool; before waiting for one, everything this reader
 * holds goes (messages handed on, the shared buffer released), so that
 * consumers can give buffers back and no two readers wait on each other. */
static PixBuf *acquire(Reader *rd)
{
	PixBuf *buf = pool_acquire(rd->r->pool, FALSE);
	if (buf != NULL)
		return buf;
	flush(rd);
	drop_shared(rd);
	return pool_acquire(rd->r->pool, TRUE);
}

/*
 * Room for the next read of at most `want` bytes: a share of the reader's
 * shared buffer when `want` is less than a whole read (small files, and
 * the last piece of a larger one), else a buffer of its own.  Returns the
 * buffer (one reference for the caller) and sets *data; without
 * `is_wait`, NULL where a new buffer would mean waiting (for a caller
 * that holds references it has not handed on: waiting then could wait
 * for itself).
 */
static PixBuf *room_in(Reader *rd, gsize want, gboolean is_wait, guint8 **data)
{
	gsize whole = rd->r->cfg.read_bytes;
	if (want >= whole) {
		PixBuf *buf = is_wait ? acquire(rd) : pool_acquire(rd->r->pool, FALSE);
		if (buf != NULL)
			*data = buf->data;
		return buf;
	}
	gsize at = (rd->shared_used + SHARE_ALIGN - 1) & ~(gsize)(SHARE_ALIGN - 1);
	if (rd->shared == NULL || at + want > MAX(MIN(whole / 4, SHARE_BYTES), want)) {
		guint8 *unused;
		PixBuf *buf = room_in(rd, whole, is_wait, &unused);
		if (buf == NULL)
			return NULL;
		drop_shared(rd);
		rd->shared = buf;
		at = 0;
	}
	buf_ref(rd->shared);
	rd->shared_used = at + want;
	*data = rd->shared->data + at;
	return rd->shared;
}

/*
 * Before another whole read of a file of several reads: waits while the
 * file's consumer holds more than its share of the pool (the pool over
 * the consumers), so that one reader cannot fill the pool with one file
 * while the other consumers wait for theirs (a 16 MiB pool and RAW files
 * of 18 MB: one hasher busy, one idle).  What this reader holds is handed
 * on first.  A consumer always works through what it holds without
 * waiting for more, so the wait ends; the freed buffer signals it, and a
 * share of a small files' buffer (which signals nothing) within 2 ms.
 */
static void wait_for_share(Reader *rd)
{
	PixReaders *r = rd->r;
	PixBufPool *pool = r->pool;
	if (r->n_out < 2)
		return;
	gint64 share = (gint64)MAX(pool->max / r->n_out, 2) * (gint64)pool->buf_bytes;
	gint64 *pending = &pool->pending_bytes[rd->out_index];
	if (__atomic_load_n(pending, __ATOMIC_RELAXED) < share)
		return;
	flush(rd);
	drop_shared(rd);
	g_mutex_lock(&pool->lock);
	while (__atomic_load_n(pending, __ATOMIC_RELAXED) >= share && !is_dropping(r)) {
		pool->n_share_waiters[rd->out_index]++;
		g_cond_wait_until(&pool->share_freed[rd->out_index], &pool->lock, g_get_monotonic_time() + 2000);
		pool->n_share_waiters[rd->out_index]--;
	}
	g_mutex_unlock(&pool->lock);
}

static PixBuf *room_for(Reader *rd, gsize want, guint8 **data)
{
	return room_in(rd, want, TRUE, data);
}

/* Whether `item` carries the stat its listing took moments ago (a verify
 * carries the catalog's). */
static gboolean has_listed_stat(const PixItem *item)
{
	return item->action != PIX_ACT_VERIFY && item->st.ino != 0 && S_ISREG(item->st.mode);
}

/* The stat to compare the file with after its read: the listing's (the
 * open fd is checked against it after the read, which spares an fstat
 * per file), or else the open fd's. */
static gboolean stat_before(const PixItem *item, int fd, PixStat *before, char **error)
{
	struct stat st;
	if (has_listed_stat(item)) {
		*before = item->st;
		return TRUE;
	}
	if (fstat(fd, &st) != 0) {
		*error = g_strdup_printf("cannot stat: %s", g_strerror(errno));
		return FALSE;
	}
	pix_stat_from(before, &st);
	return TRUE;
}

/*
 * The stat after a read, by statx of the open fd asking only for what the
 * catalog keeps (PIX_STATX_MASK, item.h).  A system call, not a round of
 * the io_uring batch: the kernel runs a ring's statx on its worker
 * threads, which cost what the system call does here (measured).
 */
static int stat_after(int fd, PixStat *out)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, PIX_STATX_MASK, &sx) != 0)
		return -1;
	pix_stat_from_statx(out, &sx);
	return 0;
}

/* What END says of a stable pass of `total` bytes with stat `after`. */
static void set_read(Ending *ending, const PixStat *after, gint64 total)
{
	gint64 now_ns = g_get_real_time() * 1000;
	ending->st = *after;
	ending->bytes_read = total;
	/* two seconds: FAT (camera cards) keeps mtime in 2 s steps */
	ending->is_racy = after->mtime_ns > now_ns - G_GINT64_CONSTANT(2000000000) &&
	                  after->mtime_ns < now_ns + G_GINT64_CONSTANT(2000000000);
}

/* What END says of a file that is no longer a regular file (a FIFO or a
 * device put in its place): not read, and not a damaged file. */
static void set_not_regular(Ending *ending)
{
	ending->error = g_strdup("not read: it is no longer a regular file");
	ending->is_unstable = TRUE;
}

/* Gathers a file's last message: `held` (its last data) or a new one,
 * flagged `owed` and END, saying what `ending` says. */
static void emit_end(Reader *rd, PixItem *item, PixChunk *held, guint owed, const Ending *ending)
{
	pix_count_add(PIX_N_READ, 1);
	PixChunk *last = held != NULL ? held : chunk_new(0, item);
	last->flags |= owed | PIX_CHUNK_END;
	last->st = ending->st;
	last->bytes_read = ending->bytes_read;
	last->error = ending->error;
	last->is_aborted = ending->is_aborted;
	last->is_racy = ending->is_racy;
	last->is_vanished = ending->is_vanished;
	last->is_unstable = ending->is_unstable;
	emit(rd, last);
}

/* A chunk of `n` bytes at `data` in `buf` (the caller's reference) of
 * the file of `item`, counted as read and as waiting for the batch's
 * consumer. */
static PixChunk *data_chunk(Reader *rd, PixItem *item, PixBuf *buf, guint8 *data, gsize n)
{
	PixChunk *c = chunk_new(0, item);
	c->buf = buf;
	c->data = data;
	c->len = n;
	c->pending_bytes = &rd->r->pool->pending_bytes[rd->out_index];
	__atomic_add_fetch(c->pending_bytes, (gint64)n, __ATOMIC_RELAXED);
	pix_count_add(PIX_BYTES_READ, (gint64)n);
	return c;
}

/*
 * A small file read whole (the `n` bytes its listing's stat said) by
 * io_uring: if the fstat after the read says the file is the one listed
 * and did not change, its one message (START | END with the data) is
 * gathered and TRUE returned; otherwise nothing is, and the caller reads
 * it the ordinary way.
 */
static gboolean finish_whole(Reader *rd, PixItem *item, int fd, PixBuf *buf, guint8 *data, gssize n)
{
	PixStat after;
	Ending ending = { 0 };
	if (stat_after(fd, &after) != 0)
		return FALSE;
	if (!S_ISREG(after.mode) || !is_stable(&item->st, &after, n))
		return FALSE;
	throttle(rd->r, (gsize)n);
	set_read(&ending, &after, n);
	PixChunk *c = NULL;
	if (n > 0)
		c = data_chunk(rd, item, buf, data, (gsize)n);
	else
		buf_unref(buf, NULL);   /* an empty file: END alone, as read_fd() sends it */
	emit_end(rd, item, c, PIX_CHUNK_START, &ending);
	return TRUE;
}

/*
 * Reads one whole file and gathers its messages (see read.h and invariants
 * 2-4).  The message with a pass's last bytes is held back until the
 * fstat after the read says whether the pass was stable, so that a file
 * that fits in one read costs one message.
 */
static void read_fd(Reader *rd, PixItem *item, const char *path, int fd, int err)
{
	PixReaders *r = rd->r;
	guint owed = PIX_CHUNK_START;   /* flags the next message must carry */
	PixChunk *held = NULL;          /* data read but not sent yet */
	Ending ending = { 0 };
	gboolean is_uncached = FALSE;   /* reading with RWF_DONTCACHE */
	struct stat st;
	PixStat before, after;
	gint *n_large = NULL;           /* the count this file is in */

	if (fd < 0) {
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
	if (!stat_before(item, fd, &before, &ending.error))
		goto done;
	if (!S_ISREG(before.mode)) {
		set_not_regular(&ending);
		goto done;
	}
	if (before.size_bytes > (gint64)r->cfg.read_bytes) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		/* a file of several reads goes to a consumer of its own
		 * (pick_out()), not with its batch: a batch's large files
		 * all on one hasher left the others idle (50 RAW files of
		 * 18 MB with thumbnails, 2 hashers: one busy, one half idle) */
		flush(rd);
		rd->out_index = pick_out(r, TRUE);
		rd->out = r->out[rd->out_index];
		n_large = &r->pool->n_large[rd->out_index];
	}
	is_uncached = !r->cfg.is_keep_cache && !is_dontcache_refused(r, before.dev);

	for (int pass = 1;; pass++) {
		gint64 total = 0;
		for (;;) {
			if (is_dropping(r)) {
				ending.is_aborted = TRUE;
				goto done;
			}
			/* what the stat says is left, and one byte more for a file
			 * that was empty (to see one that grew) */
			gint64 left = MAX(before.size_bytes - total, 1);
			guint8 *data;
			gsize room = (gsize)MIN(left, (gint64)r->cfg.read_bytes);
			if (before.size_bytes > (gint64)r->cfg.read_bytes)
				wait_for_share(rd);
			PixBuf *buf = room_for(rd, room, &data);
			gssize n = read_full(r, fd, before.dev, data, room, total, before.size_bytes - total, &is_uncached);
			if (n <= 0) {
				buf_unref(buf, NULL);
				if (n < 0) {
					err = (int)-n;
					/* a FIFO or device in the place of the file listed
					 * (its stat was the listing's) cannot be read */
					if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
						set_not_regular(&ending);
					} else {
						ending.error = g_strdup_printf("cannot read: %s", g_strerror(err));
					}
					goto done;
				}
				break;
			}
			throttle(r, (gsize)n);
			PixChunk *c = data_chunk(rd, item, buf, data, (gsize)n);
			total += n;
			if ((gsize)n < r->cfg.read_bytes) {
				held = c;       /* a short read: the end of the file */
				break;
			}
			c->flags |= owed;
			owed = 0;
			emit(rd, c);
		}
		if (stat_after(fd, &after) != 0) {
			err = errno;
			ending.error = g_strdup_printf("cannot stat: %s", g_strerror(err));
			goto done;
		}
		if (!S_ISREG(after.mode)) {
			set_not_regular(&ending);
			goto done;
		}
		if (is_stable(&before, &after, total)) {
			set_read(&ending, &after, total);
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
			emit(rd, g_steal_pointer(&held));
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
	emit_end(rd, item, held, owed, &ending);
	if (n_large != NULL)
		g_atomic_int_add(n_large, -1);
}

/* Opens and reads one file with blocking system calls. */
static void read_one(Reader *rd, PixItem *item)
{
	g_autofree char *path = pix_item_path(item);
	int fd = open_file(path);
	read_fd(rd, item, path, fd, fd < 0 ? errno : 0);
}

/*
 * A batch through io_uring: the opens of all its files submitted at once,
 * then the reads of those that fit in one read, then the closes.  A file
 * whose read came back whole and stable is finished here, as read_fd()
 * would have (the same messages); any other (an error, a large file, a
 * short read, a change) goes to read_fd() with its descriptor, which reads
 * it again from the start, so that io_uring never decides what is
 * recorded.
 */
static void read_batch_uring(Reader *rd, PixItem **items, guint n)
{
	PixReaders *r = rd->r;
	char *paths[MAX_BATCH_FILES];
	int fds[MAX_BATCH_FILES];
	guint8 *bufs[MAX_BATCH_FILES];
	gsize lens[MAX_BATCH_FILES];
	gssize res[MAX_BATCH_FILES];
	PixBuf *held[MAX_BATCH_FILES];
	gboolean is_uncached = !r->cfg.is_keep_cache;
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

	for (guint i = 0; i < n; i++)
		paths[i] = pix_item_path(items[i]);
	pix_uring_open(rd->uring, paths, flags | O_NOATIME, fds, n);
	for (guint i = 0; i < n; i++) {
		const PixStat *st = &items[i]->st;
		held[i] = NULL;
		lens[i] = 0;
		if (fds[i] == -EPERM || fds[i] == -ENAMETOOLONG || fds[i] == -EAGAIN) {
			/* O_NOATIME needs ownership; a long path is opened in
			 * pieces; EAGAIN: a lookup that would block (no retry
			 * here) */
			fds[i] = open_file(paths[i]);
			if (fds[i] < 0)
				fds[i] = -errno;
		}
		if (fds[i] < 0 || !has_listed_stat(items[i]) || st->size_bytes >= (gint64)r->cfg.read_bytes)
			continue;
		is_uncached = is_uncached && !is_dontcache_refused(r, st->dev);
		/* one byte more than the stat said: a file that grew since it
		 * was listed reads longer, and goes the ordinary way */
		held[i] = room_in(rd, (gsize)st->size_bytes + 1, FALSE, &bufs[i]);
		if (held[i] != NULL)
			lens[i] = (gsize)st->size_bytes + 1;
	}
	pix_uring_read(rd->uring, fds, bufs, lens, is_uncached ? RWF_DONTCACHE : 0, res, n);
	for (guint i = 0; i < n; i++) {
		PixItem *item = items[i];
		if (is_dropping(r)) {
			if (held[i] != NULL)
				buf_unref(held[i], NULL);
			pix_item_free(item);
		} else if (held[i] != NULL && res[i] == item->st.size_bytes && finish_whole(rd, item, fds[i], held[i], bufs[i], res[i])) {
			/* done */
		} else {
			if (held[i] != NULL)
				buf_unref(held[i], NULL);
			if (res[i] == -EOPNOTSUPP || res[i] == -EINVAL)
				refuse_dontcache(r, item->st.dev);
			read_fd(rd, item, paths[i], fds[i] >= 0 ? fds[i] : -1, fds[i] < 0 ? -fds[i] : 0);
			fds[i] = -1;   /* read_fd() closed it */
		}
		g_free(paths[i]);
	}
	pix_uring_close(rd->uring, fds, n);
}

/* A file's weight in a batch: its listed size. */
static gint64 item_bytes(gconstpointer p)
{
	const PixItem *item = p;
	return MAX(item->st.size_bytes, 0);
}

static gpointer reader_main(gpointer data)
{
	Reader rd = { .r = data };
	PixReaders *r = rd.r;
	if (r->cfg.batch_files > 1 && !r->cfg.is_blocking)
		rd.uring = pix_uring_new(r->cfg.batch_files);
	gpointer items[MAX_BATCH_FILES];
	guint n;
	/* a batch is small files (their listed sizes together at most
	 * BATCH_READS reads) or one large one: a reader that took 16 RAW
	 * files of 18 MB read them one after the other while the other
	 * readers, and so hashers, ran out of work */
	gint64 budget = BATCH_READS * (gint64)r->cfg.read_bytes;
	while ((n = pix_queue_pop_weighed(r->in, items, r->cfg.batch_files, item_bytes, budget, -1, NULL)) > 0) {
		/* a batch goes to one consumer, in one hand-off per
		 * PENDING_MAX messages */
		rd.out_index = pick_out(r, FALSE);
		rd.out = r->out[rd.out_index];
		if (rd.uring != NULL && n > 1) {
			read_batch_uring(&rd, (PixItem **)items, n);
		} else {
			for (guint i = 0; i < n; i++) {
				if (is_dropping(r))
					pix_item_free(items[i]);
				else
					read_one(&rd, items[i]);
			}
		}
		flush(&rd);
	}
	drop_shared(&rd);
	pix_uring_free(rd.uring);
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
	r->cfg.batch_files = CLAMP(cfg->batch_files, 1, MAX_BATCH_FILES);
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
	r->pool->n_out = n_out;
	r->pool->share_freed = g_new0(GCond, n_out);
	r->pool->n_share_waiters = g_new0(guint, n_out);
	r->pool->n_large = g_new0(gint, n_out);
	for (guint i = 0; i < n_out; i++)
		g_cond_init(&r->pool->share_freed[i]);
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
