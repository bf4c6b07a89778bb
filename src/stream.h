/*
 * stream.h: random access for metadata parsers over a file that is read
 * once, front to back.
 *
 * The hash stage sees each file's bytes once, in order, and never opens
 * the file again (read.h).  A container parser (PNG chunks, ISO base media
 * boxes, RIFF chunks, a TIFF's IFDs) needs bytes at offsets it learns as
 * it goes.  A PixStream reconciles the two: the parser asks for the byte
 * ranges it wants (pix_stream_want()), and the stream hands each range to
 * the parser's callback once the file has gone past its end.  A callback
 * may ask for more ranges, usually further on (the next box header, a
 * payload); ranges that lie behind are served from what the stream keeps
 * (its head and tail, see pix_stream_new()) or else are reported as missed.
 *
 * Bounded by construction: at most PIX_STREAM_MAX_PENDING ranges wait at
 * a time, at most PIX_STREAM_MAX_WANTS are asked for over the file's life,
 * one range is at most PIX_STREAM_MAX_WANT bytes, and all waiting ranges
 * together hold at most PIX_STREAM_MAX_HELD bytes.  A parser that exceeds a
 * limit gets FALSE from pix_stream_want() and the stream records the
 * problem; a hostile file cannot make a parser loop or hoard memory.
 *
 * Thread-safety: a stream is used by one thread at a time.
 */
#ifndef PIX_STREAM_H
#define PIX_STREAM_H

#include <glib.h>

#define PIX_STREAM_MAX_PENDING 1024
#define PIX_STREAM_MAX_WANTS 100000
#define PIX_STREAM_MAX_WANT (16u << 20)
#define PIX_STREAM_MAX_HELD (64u << 20)
/* A range that starts at most this many bytes behind the read position is
 * always served (the stream keeps at least that much of its tail): a
 * parser may ask for a payload right after the header it just read. */
#define PIX_STREAM_BACK 4096

typedef struct PixStream PixStream;

/*
 * A range's bytes: `len` bytes at `data` from file offset `off` (transfer
 * none: valid during the call only).  `len` is the length asked for, or
 * less when the file ended first; 0 (data NULL) when the range lies
 * beyond the end, or went by before it was asked for and is not kept.
 * `ctx` and `arg` are what pix_stream_want() was given.
 */
typedef void (*PixStreamFn)(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

/* A stream that keeps the first `keep_head` and the last `keep_tail`
 * bytes of the file (each may be 0; the tail is at least PIX_STREAM_BACK),
 * for pix_stream_peek() and for ranges asked for after they went by. */
PixStream *pix_stream_new(gsize keep_head, gsize keep_tail);
/* The file's size as listed, before its first byte is fed: while the
 * bytes fed end farther than keep_tail from it, the tail keeps only
 * PIX_STREAM_BACK of them (copying every piece's last keep_tail bytes cost
 * a file of 18 MB in 256 KiB reads a copy of all of it).  A file that
 * ends before that size then has less of its tail kept (its read changed
 * under it, and is read again); one that grows keeps its whole tail. */
void pix_stream_expect_size(PixStream *s, guint64 size);
/* Accepts NULL. */
void pix_stream_free(PixStream *s);

/* The file's next `len` bytes: fills waiting ranges and calls back those
 * now complete, in order of their end offset. */
void pix_stream_feed(PixStream *s, const guint8 *data, gsize len);
/* The file ended: calls back every waiting range with what it got. */
void pix_stream_finish(PixStream *s);

/*
 * Asks for `len` bytes at `off` (len <= PIX_STREAM_MAX_WANT; larger asks
 * are cut to it).  `fn` is called exactly once, possibly before this
 * returns (when the bytes are kept, or the file has ended).  Returns FALSE
 * without calling `fn` when a limit is reached or the stream has failed:
 * the parser should stop asking.
 */
gboolean pix_stream_want(PixStream *s, guint64 off, gsize len, PixStreamFn fn, void *ctx, guint64 arg);

/* `len` bytes at `off` when the stream has them at hand (in its head or its
 * tail), else NULL (transfer none: valid until the next feed). */
const guint8 *pix_stream_peek(const PixStream *s, guint64 off, gsize len);

/* Bytes fed so far (the file's size after pix_stream_finish()). */
guint64 pix_stream_pos(const PixStream *s);
/* Whether pix_stream_finish() was called. */
gboolean pix_stream_is_finished(const PixStream *s);

/*
 * Records a problem with the file's structure (printf-style; what went
 * wrong, where): kept in order, joined with "; " by pix_stream_problems().
 * pix_stream_fail() also stops the stream: no callback runs after it and
 * pix_stream_want() returns FALSE.  At most 4 problems are kept.
 */
void pix_stream_problem(PixStream *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void pix_stream_fail(PixStream *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
gboolean pix_stream_has_failed(const PixStream *s);
/* The problems recorded, "; "-joined, or NULL (transfer full). */
char *pix_stream_problems(const PixStream *s);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixStream, pix_stream_free)

#endif
