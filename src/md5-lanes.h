/*
 * md5-lanes.h: MD5 (RFC 1321) of several messages at once, in SIMD lanes.
 *
 * One MD5 stream is a chain of dependent 32-bit operations that no CPU
 * runs faster than about 0.65 GB/s; eight streams side by side in the
 * eight 32-bit lanes of an AVX2 register run four times as fast, sixteen
 * in an AVX-512 register (with its rotate and three-input logic) faster
 * still.
 * A file's progress is only its PixMd5 state (four words and a length), so
 * lanes are not tied to files: each call runs whichever files have data,
 * and a file left alone continues on the scalar block function with the
 * same state.
 *
 * Thread-safety: pure functions on the caller's states.
 */
#ifndef PIX_MD5_LANES_H
#define PIX_MD5_LANES_H

#include <glib.h>

#define PIX_MD5_MAX_LANES 16
#define PIX_MD5_BLOCK 64

/* The state of one MD5 computation. */
typedef struct {
	guint32 h[4];           /* A, B, C, D */
	guint64 length_bytes;   /* bytes consumed by pix_md5_*_blocks so far */
} PixMd5;

void pix_md5_init(PixMd5 *m);

/* Consumes `n_blocks` 64-byte blocks at `data` (scalar code). */
void pix_md5_blocks(PixMd5 *m, const guint8 *data, gsize n_blocks);

/*
 * Consumes the last `tail_len` bytes (any length) and writes the digest.
 * The state is spent afterwards.
 */
void pix_md5_finish(PixMd5 *m, const guint8 *tail, gsize tail_len, guint8 out[16]);

/*
 * How many streams pix_md5_lanes_blocks() runs at once: 16 with AVX-512,
 * 8 with AVX2, 0 without either (then use OpenSSL).  Decided once, at run
 * time, from the CPU; PIX_MD5_LANES=0, 8 or 16 in the environment can only
 * lower it (to measure, or to test the other paths).
 */
guint pix_md5_lane_count(void);
/* Sets the lane count, clamped to what the CPU runs; for tests. */
void pix_md5_set_lane_count(guint n);

/*
 * Consumes `n_blocks` 64-byte blocks for each of `n` streams (1 to
 * pix_md5_lane_count()): states[i] from data[i].  Streams may be at
 * different points of their messages.
 */
void pix_md5_lanes_blocks(PixMd5 *const states[], const guint8 *const data[], guint n, gsize n_blocks);

#endif
