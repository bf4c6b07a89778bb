/*
 * hash.h: the hash stage.  Hasher threads take the readers' chunks, compute
 * each file's MD5 (OpenSSL EVP, the reference implementation), feed the
 * same bytes to the metadata parser, and pass the finished item on to the
 * store.
 *
 * Thread-safety: pix_hash_start()/pix_hash_join() on one thread;
 * pix_md5_buffer() on any.
 */
#ifndef PIX_HASH_H
#define PIX_HASH_H

#include "item.h"
#include "queue.h"
#include "read.h"

typedef struct PixHashers PixHashers;

/*
 * Starts one hasher thread per queue in `in[0..n-1]` (PixChunk, see
 * read.h), each pushing finished PixItems to `out` and closing one
 * producer slot of `out` when its input ends.
 */
PixHashers *pix_hash_start(PixQueue **in, guint n, PixQueue *out);
/* Waits for the hashers to finish and frees them. */
void pix_hash_join(PixHashers *h);

/*
 * One hasher without a thread: what each hasher thread runs, and what the
 * unit tests drive message by message.  Its bookkeeping costs the same
 * per message and per finished file whether it holds ten files or ten
 * thousand (see hash.c).
 *
 * Thread-safety: a PixHasher is used by one thread at a time.
 */
typedef struct PixHasher PixHasher;

/* Operation counts of a hasher, for tests: they measure work, not time. */
typedef struct {
	guint64 n_visits;       /* times the bookkeeping looked at one file's
	                           state: per message taken, per file placed,
	                           picked for a step or finished */
	guint64 n_file_allocs;  /* per-file records allocated (the others
	                           were recycled) */
	guint n_in_flight;      /* files whose START came and that are not
	                           finished */
	guint n_ready;          /* of them, with whole blocks to hash */
} PixHasherStats;

/* A hasher running `n_lanes` streams at once (clamped to what the CPU
 * runs: pix_md5_lane_count(); 0: OpenSSL's EVP MD5 per file). */
PixHasher *pix_hasher_new(guint n_lanes);
/* Frees the hasher; it must hold no file and no finished item.  Accepts
 * NULL. */
void pix_hasher_free(PixHasher *h);
/* Takes one message of the readers (transfer full; see read.h): every
 * message of a file, in order, from START to END. */
void pix_hasher_take(PixHasher *h, PixChunk *c);
/* Runs one lane step over the oldest files with whole blocks ready;
 * returns whether there was anything to hash. */
gboolean pix_hasher_step(PixHasher *h);
/* Finishes every file with nothing left to hash (MD5, metadata, errors)
 * and appends its item to pix_hasher_done(); drops aborted ones.  Returns
 * how many files it finished or dropped. */
guint pix_hasher_finish(PixHasher *h);
/* The finished items, in the order they finished (transfer none of the
 * array; the items are the caller's to take, after which it empties the
 * array). */
GPtrArray *pix_hasher_done(PixHasher *h);
/* Whether a step or a finish has work. */
gboolean pix_hasher_is_busy(const PixHasher *h);
void pix_hasher_stats(const PixHasher *h, PixHasherStats *out);
/* The invariants of hash.c, for g_assert() in tests (walks every list:
 * not for the hot path). */
gboolean pix_hasher_check(const PixHasher *h);

/* MD5 of a buffer, with the same code as the hash stage (for tests and
 * verification). */
void pix_md5_buffer(const void *data, gsize len, guint8 out[16]);

/* 32 lowercase hex digits of an MD5 into `hex` (33 bytes). */
void pix_md5_hex(const guint8 md5[16], char hex[33]);
/* The 16 bytes of 32 hex digits (either case); FALSE for NULL or anything
 * else. */
gboolean pix_md5_from_hex(const char *hex, guint8 md5[16]);

#endif
