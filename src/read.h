/*
 * read.h: the readers.  A bounded pool of reader threads opens each planned
 * file once, reads it front to back in large reads into buffers from a
 * pool with a hard memory cap, and hands the buffers to the hash stage as
 * PixChunks.  Everything a later stage learns about a file's content comes
 * from these buffers: no stage opens a file again.
 *
 * Per file a reader sends one or more messages (PixChunk), all to the same
 * output queue, in order.  The first is flagged START (it hands over the
 * item), the last END (with the final stat, or the error, or the abort
 * flag); each may carry the file's next bytes.  A file that fits in one
 * read is one message, START | END with its data.  RESTART means the file
 * changed while it was read and is being read again from its start: the
 * consumer discards what it has before taking the message's data.
 * Each file goes to the output queue with the fewest bytes read and not yet
 * consumed, so the consumers share the work whatever the file sizes; a
 * file of several reads first to the one with the fewest such files being
 * read for it, so that each hashes as many side by side (pix_read_pick()).
 *
 * Thread-safety: pix_read_start()/pix_read_join() on one thread; chunks
 * may be freed on any thread.
 */
#ifndef PIX_READ_H
#define PIX_READ_H

#include "item.h"
#include "queue.h"

typedef struct PixBufPool PixBufPool;
typedef struct PixBuf PixBuf;

enum {
	PIX_CHUNK_START = 1 << 0,   /* first message of a file: transfers `item` */
	PIX_CHUNK_RESTART = 1 << 1, /* drop everything before this message's data */
	PIX_CHUNK_END = 1 << 2,     /* last message: the END fields are valid */
};

typedef struct PixChunk PixChunk;
struct PixChunk {
	guint flags;            /* PIX_CHUNK_* */
	PixItem *item;          /* START: (transfer full); later messages: the
	                           same item, owned by the consumer since START */
	const guint8 *data;     /* the file's next bytes (in `buf`), or NULL */
	gsize len;              /* how many; every message but the last of a
	                           pass carries a whole read (--read-size) */
	/* END only: */
	PixStat st;             /* fstat after the last read */
	gint64 bytes_read;      /* bytes of the final (complete) pass */
	char *error;            /* why reading failed, or NULL (owned) */
	gboolean is_aborted;    /* stop requested: drop the item */
	gboolean is_vanished;   /* the file was gone (ENOENT) when opened */
	gboolean is_unstable;   /* with error: it kept changing while read, or
	                           is no longer a regular file */
	gboolean is_racy;       /* mtime within two seconds of the read */

	PixBuf *buf;            /* pool buffer behind `data`: one reference,
	                           given back by pix_chunk_free() (the small
	                           files of a batch share one buffer) */
	gint64 *pending_bytes;  /* the load counter of its queue, which
	                           pix_chunk_free() lowers by `len` (atomic) */
	PixChunk *next;         /* the consumer's own link (its list of a
	                           file's chunks not yet hashed), NULL as sent */
};

/* Returns the chunk's buffer to its pool, counts its bytes as consumed,
 * and frees it.  Accepts NULL. */
void pix_chunk_free(PixChunk *c);

typedef struct {
	guint n_readers;            /* threads, >= 1 */
	gsize read_bytes;           /* bytes per read (and per buffer), a
	                               multiple of 4096 */
	gsize max_memory_bytes;     /* all buffers together, >= 2 * read_bytes */
	gboolean is_keep_cache;     /* FALSE: drop the file's pages once read */
	gint64 limit_bytes_per_s;   /* 0: unlimited */
	guint batch_files;          /* files a reader takes from its queue at
	                               once, reads, and hands on together
	                               (0 or 1: one at a time, which keeps a
	                               disk's seek order; at most 64) */
	gboolean is_blocking;       /* TRUE: never io_uring (on a network file
	                               system its opens wait in the kernel's
	                               workers, one after another) */
	gint64 deadline_us;         /* monotonic time after which files are
	                               dropped unread, or abandoned (as on a
	                               stop request); 0: none (verify --budget) */
} PixReadConfig;

typedef struct PixReaders PixReaders;

#define PIX_READ_MAX_BUFFERS 65536

/* How many buffers the pool may hold: --max-memory over --read-size,
 * between 2 and PIX_READ_MAX_BUFFERS. */
guint pix_read_buffer_count(const PixReadConfig *cfg);
/*
 * The rule that picks a file's output queue, of `n`: the one with the
 * fewest files of several reads being read for it (`n_large`, per queue;
 * NULL for a batch of small files, which goes by bytes alone), then the
 * fewest bytes read and not yet consumed (`pending`), ties to the first
 * from `start` on.  Reads the counters atomically.
 */
guint pix_read_pick(const gint *n_large, const gint64 *pending, guint n, guint start);

/*
 * Starts cfg->n_readers threads popping PixItems from `in` and sending
 * chunks to `out[0..n_out-1]` (each file's chunks to one of them).  Items
 * popped after a stop request are freed unread.  Each `out` must expect
 * cfg->n_readers producers: every reader closes every `out` once when `in`
 * ends.
 */
PixReaders *pix_read_start(const PixReadConfig *cfg, PixQueue *in, PixQueue **out, guint n_out);
/* Waits for the readers to finish and frees them (the buffer pool lives
 * until its last chunk is freed). */
void pix_read_join(PixReaders *r);

#endif
