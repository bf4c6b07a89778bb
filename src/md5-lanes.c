/*
 * md5-lanes.c: MD5 in eight AVX2 or sixteen AVX-512 lanes (four or eight
 * in narrower AVX-512VL registers when fewer streams have data), and the
 * scalar MD5 block function that shares their state layout (see
 * md5-lanes.h).
 * Written from RFC 1321.
 *
 * Reads the callers' data and states; writes the states.  Runs on the hash
 * threads.  The vector functions are compiled for AVX2 and AVX-512 on
 * their own (target attributes), so the program still runs on CPUs without
 * them; the choice is made once, at run time.
 *
 * Each block step loads the 64-byte block of every lane, transposes the
 * words so that register W[j] holds word j of every lane's block, and runs
 * the 64 MD5 steps on all lanes at once.
 *
 * Invariants:
 *  1. For any split of a message into calls, pix_md5_*_blocks() followed by
 *     pix_md5_finish() gives the RFC 1321 digest of the whole message
 *     (tests/unit/test-md5.c proves it against OpenSSL).
 *  2. length_bytes counts exactly the bytes consumed as blocks.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "md5-lanes.h"

#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PIX_HAVE_X86 1
#endif

static const guint32 K[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

void pix_md5_init(PixMd5 *m)
{
	m->h[0] = 0x67452301;
	m->h[1] = 0xefcdab89;
	m->h[2] = 0x98badcfe;
	m->h[3] = 0x10325476;
	m->length_bytes = 0;
}

/* The 64 steps of RFC 1321 on one block, words w[0..15], for any width:
 * S is the step (a, b, c, d rotate through its first four arguments), FF,
 * GG, HH and II the round functions, i the step's index into K. */
#define MD5_STEPS(S, FF, GG, HH, II) \
	do { \
	S(FF, a, b, c, d, w[0], 0, 7);    S(FF, d, a, b, c, w[1], 1, 12); \
	S(FF, c, d, a, b, w[2], 2, 17);   S(FF, b, c, d, a, w[3], 3, 22); \
	S(FF, a, b, c, d, w[4], 4, 7);    S(FF, d, a, b, c, w[5], 5, 12); \
	S(FF, c, d, a, b, w[6], 6, 17);   S(FF, b, c, d, a, w[7], 7, 22); \
	S(FF, a, b, c, d, w[8], 8, 7);    S(FF, d, a, b, c, w[9], 9, 12); \
	S(FF, c, d, a, b, w[10], 10, 17); S(FF, b, c, d, a, w[11], 11, 22); \
	S(FF, a, b, c, d, w[12], 12, 7);  S(FF, d, a, b, c, w[13], 13, 12); \
	S(FF, c, d, a, b, w[14], 14, 17); S(FF, b, c, d, a, w[15], 15, 22); \
	\
	S(GG, a, b, c, d, w[1], 16, 5);   S(GG, d, a, b, c, w[6], 17, 9); \
	S(GG, c, d, a, b, w[11], 18, 14); S(GG, b, c, d, a, w[0], 19, 20); \
	S(GG, a, b, c, d, w[5], 20, 5);   S(GG, d, a, b, c, w[10], 21, 9); \
	S(GG, c, d, a, b, w[15], 22, 14); S(GG, b, c, d, a, w[4], 23, 20); \
	S(GG, a, b, c, d, w[9], 24, 5);   S(GG, d, a, b, c, w[14], 25, 9); \
	S(GG, c, d, a, b, w[3], 26, 14);  S(GG, b, c, d, a, w[8], 27, 20); \
	S(GG, a, b, c, d, w[13], 28, 5);  S(GG, d, a, b, c, w[2], 29, 9); \
	S(GG, c, d, a, b, w[7], 30, 14);  S(GG, b, c, d, a, w[12], 31, 20); \
	\
	S(HH, a, b, c, d, w[5], 32, 4);   S(HH, d, a, b, c, w[8], 33, 11); \
	S(HH, c, d, a, b, w[11], 34, 16); S(HH, b, c, d, a, w[14], 35, 23); \
	S(HH, a, b, c, d, w[1], 36, 4);   S(HH, d, a, b, c, w[4], 37, 11); \
	S(HH, c, d, a, b, w[7], 38, 16);  S(HH, b, c, d, a, w[10], 39, 23); \
	S(HH, a, b, c, d, w[13], 40, 4);  S(HH, d, a, b, c, w[0], 41, 11); \
	S(HH, c, d, a, b, w[3], 42, 16);  S(HH, b, c, d, a, w[6], 43, 23); \
	S(HH, a, b, c, d, w[9], 44, 4);   S(HH, d, a, b, c, w[12], 45, 11); \
	S(HH, c, d, a, b, w[15], 46, 16); S(HH, b, c, d, a, w[2], 47, 23); \
	\
	S(II, a, b, c, d, w[0], 48, 6);   S(II, d, a, b, c, w[7], 49, 10); \
	S(II, c, d, a, b, w[14], 50, 15); S(II, b, c, d, a, w[5], 51, 21); \
	S(II, a, b, c, d, w[12], 52, 6);  S(II, d, a, b, c, w[3], 53, 10); \
	S(II, c, d, a, b, w[10], 54, 15); S(II, b, c, d, a, w[1], 55, 21); \
	S(II, a, b, c, d, w[8], 56, 6);   S(II, d, a, b, c, w[15], 57, 10); \
	S(II, c, d, a, b, w[6], 58, 15);  S(II, b, c, d, a, w[13], 59, 21); \
	S(II, a, b, c, d, w[4], 60, 6);   S(II, d, a, b, c, w[11], 61, 10); \
	S(II, c, d, a, b, w[2], 62, 15);  S(II, b, c, d, a, w[9], 63, 21); \
	} while (0)

/* One block: the 64 steps from the state in a, b, c, d (variables of any
 * width, GNU C's __typeof__), then each word added to its value before
 * them (ADD: the width's addition). */
#define MD5_BLOCK(S, FF, GG, HH, II, ADD) \
	do { \
		__typeof__(a) aa = a, bb = b, cc = c, dd = d; \
		MD5_STEPS(S, FF, GG, HH, II); \
		a = ADD(a, aa); \
		b = ADD(b, bb); \
		c = ADD(c, cc); \
		d = ADD(d, dd); \
	} while (0)

/* --- scalar --- */

#define F(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define G(b, c, d) ((c) ^ ((d) & ((b) ^ (c))))
#define H(b, c, d) ((b) ^ (c) ^ (d))
#define I(b, c, d) ((c) ^ ((b) | ~(d)))
#define ROTL(x, s) (((x) << (s)) | ((x) >> (32 - (s))))
#define ADD32(x, y) ((x) + (y))
#define STEP(f, a, b, c, d, w, i, s) \
	do { \
		(a) += f((b), (c), (d)) + (w) + K[i]; \
		(a) = ROTL((a), (s)) + (b); \
	} while (0)

static inline guint32 load_le32(const guint8 *p)
{
	guint32 v;
	memcpy(&v, p, 4);
	return GUINT32_FROM_LE(v);
}

void pix_md5_blocks(PixMd5 *m, const guint8 *data, gsize n_blocks)
{
	guint32 a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3];

	for (gsize n = 0; n < n_blocks; n++, data += PIX_MD5_BLOCK) {
		guint32 w[16];
		for (int i = 0; i < 16; i++)
			w[i] = load_le32(data + 4 * i);
		MD5_BLOCK(STEP, F, G, H, I, ADD32);
	}
	m->h[0] = a;
	m->h[1] = b;
	m->h[2] = c;
	m->h[3] = d;
	m->length_bytes += (guint64)n_blocks * PIX_MD5_BLOCK;
}

void pix_md5_finish(PixMd5 *m, const guint8 *tail, gsize tail_len, guint8 out[16])
{
	guint8 last[2 * PIX_MD5_BLOCK] = { 0 };
	gsize full = tail_len / PIX_MD5_BLOCK;

	pix_md5_blocks(m, tail, full);
	tail += full * PIX_MD5_BLOCK;
	tail_len -= full * PIX_MD5_BLOCK;

	guint64 bits = (m->length_bytes + tail_len) * 8;
	memcpy(last, tail, tail_len);
	last[tail_len] = 0x80;
	gsize n = tail_len + 1 + 8 <= PIX_MD5_BLOCK ? 1 : 2;
	for (int i = 0; i < 8; i++)
		last[n * PIX_MD5_BLOCK - 8 + i] = (guint8)(bits >> (8 * i));
	pix_md5_blocks(m, last, n);
	for (int i = 0; i < 4; i++) {
		guint32 v = GUINT32_TO_LE(m->h[i]);
		memcpy(out + 4 * i, &v, 4);
	}
}

/* --- lanes --- */

static gint lane_count = -1;    /* decided at the first call */
/* with 16 lanes: whether the CPU has AVX-512VL (256- and 128-bit AVX-512,
 * every AVX-512 CPU but the Xeon Phi), decided with lane_count */
static gint is_lanes_vl;

static guint cpu_lanes(gboolean *is_vl)
{
	*is_vl = FALSE;
#ifdef PIX_HAVE_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		*is_vl = __builtin_cpu_supports("avx512vl") != 0;
		return 16;
	}
	if (__builtin_cpu_supports("avx2"))
		return 8;
#endif
	return 0;
}

void pix_md5_set_lane_count(guint n)
{
	gboolean is_vl;
	guint cpu = cpu_lanes(&is_vl);
	guint lanes = n >= 16 && cpu >= 16 ? 16 : n >= 8 && cpu >= 8 ? 8 : 0;
	g_atomic_int_set(&is_lanes_vl, lanes == 16 && is_vl);
	g_atomic_int_set(&lane_count, (gint)lanes);
}

guint pix_md5_lane_count(void)
{
	gint v = g_atomic_int_get(&lane_count);
	if (v < 0) {
		const char *want = g_getenv("PIX_MD5_LANES");
		pix_md5_set_lane_count(want != NULL ? (guint)g_ascii_strtoull(want, NULL, 10) : 16);
		v = g_atomic_int_get(&lane_count);
	}
	return (guint)v;
}

#ifdef PIX_HAVE_X86

#define VF(b, c, d) _mm256_xor_si256((d), _mm256_and_si256((b), _mm256_xor_si256((c), (d))))
#define VG(b, c, d) _mm256_xor_si256((c), _mm256_and_si256((d), _mm256_xor_si256((b), (c))))
#define VH(b, c, d) _mm256_xor_si256(_mm256_xor_si256((b), (c)), (d))
#define VI(b, c, d) _mm256_xor_si256((c), _mm256_or_si256((b), _mm256_xor_si256((d), ones)))
#define VROTL(x, s) _mm256_or_si256(_mm256_slli_epi32((x), (s)), _mm256_srli_epi32((x), 32 - (s)))
/* A step on vectors of any width: ADD and SET1 its 32-bit addition and
 * broadcast, ROT its rotate. */
#define VEC_STEP(ADD, SET1, ROT, f, a, b, c, d, w, i, s) \
	do { \
		(a) = ADD((a), ADD(f((b), (c), (d)), ADD((w), SET1((int)K[i])))); \
		(a) = ADD(ROT((a), (s)), (b)); \
	} while (0)
#define VSTEP(...) VEC_STEP(_mm256_add_epi32, _mm256_set1_epi32, VROTL, __VA_ARGS__)

/* Rows r[0..7] (lane l's words 0..7 or 8..15) into columns (word j of
 * every lane), in place. */
__attribute__((target("avx2"))) static inline void transpose8(__m256i r[8])
{
	__m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
	__m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
	__m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
	__m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
	__m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
	__m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
	__m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
	__m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
	r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
	r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
	r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
	r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
	r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
	r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
	r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
	r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

/* A pass's start: lane l reads data[l] (past n, an idle block) from the
 * state of states[l], word i of lane l at words[i * width + l]. */
static void lanes_gather(PixMd5 *const states[], const guint8 *const data[], guint n, guint width,
                         const guint8 *p[], guint32 *words)
{
	static const guint8 idle[PIX_MD5_BLOCK];   /* what unused lanes chew on */
	for (guint l = 0; l < width; l++) {
		p[l] = l < n ? data[l] : idle;
		for (int i = 0; i < 4; i++)
			words[i * width + l] = l < n ? states[l]->h[i] : 0;
	}
}

/* The n streams' next blocks (the idle lanes stay where they are). */
static inline void lanes_advance(const guint8 *p[], guint n)
{
	for (guint l = 0; l < n; l++)
		p[l] += PIX_MD5_BLOCK;
}

/* A pass's end: the states of the n streams back from `words`. */
static void lanes_scatter(PixMd5 *const states[], guint n, guint width, const guint32 *words, gsize n_blocks)
{
	for (guint l = 0; l < n; l++) {
		for (int i = 0; i < 4; i++)
			states[l]->h[i] = words[i * width + l];
		states[l]->length_bytes += (guint64)n_blocks * PIX_MD5_BLOCK;
	}
}

/* Eight lanes of 256-bit registers, on whichever steps STEPM (AVX2's, or
 * AVX-512VL's with its rotate and three-input logic). */
#define LANES8_HEAD(NAME, ISA) \
	__attribute__((target(ISA))) static void NAME(PixMd5 *const states[], const guint8 *const data[], guint n, \
	                                                 gsize n_blocks)
#define LANES8(NAME, TARGET, STEPM, FF, GG, HH, II) \
LANES8_HEAD(NAME, TARGET) \
{ \
	const guint8 *p[8]; \
	guint32 init[4][8]; \
	const __m256i ones = _mm256_set1_epi32(-1); \
	(void)ones; \
\
	lanes_gather(states, data, n, 8, p, &init[0][0]); \
	__m256i a = _mm256_loadu_si256((const __m256i *)init[0]); \
	__m256i b = _mm256_loadu_si256((const __m256i *)init[1]); \
	__m256i c = _mm256_loadu_si256((const __m256i *)init[2]); \
	__m256i d = _mm256_loadu_si256((const __m256i *)init[3]); \
\
	for (gsize blk = 0; blk < n_blocks; blk++) { \
		__m256i w[16]; \
		for (guint l = 0; l < 8; l++) { \
			w[l] = _mm256_loadu_si256((const __m256i *)p[l]); \
			w[8 + l] = _mm256_loadu_si256((const __m256i *)(p[l] + 32)); \
		} \
		transpose8(w); \
		transpose8(w + 8); \
		lanes_advance(p, n); \
		MD5_BLOCK(STEPM, FF, GG, HH, II, _mm256_add_epi32); \
	} \
	_mm256_storeu_si256((__m256i *)init[0], a); \
	_mm256_storeu_si256((__m256i *)init[1], b); \
	_mm256_storeu_si256((__m256i *)init[2], c); \
	_mm256_storeu_si256((__m256i *)init[3], d); \
	lanes_scatter(states, n, 8, &init[0][0], n_blocks); \
}

LANES8(lanes_avx2, "avx2", VSTEP, VF, VG, VH, VI)

/* The same steps on sixteen lanes of AVX-512: vpternlogd computes F, G,
 * H and I in one instruction each, vprold rotates. */
#define ZF(b, c, d) _mm512_ternarylogic_epi32((b), (c), (d), 0xca)   /* b ? c : d */
#define ZG(b, c, d) _mm512_ternarylogic_epi32((d), (b), (c), 0xca)   /* d ? b : c */
#define ZH(b, c, d) _mm512_ternarylogic_epi32((b), (c), (d), 0x96)   /* b ^ c ^ d */
#define ZI(b, c, d) _mm512_ternarylogic_epi32((b), (c), (d), 0x39)   /* c ^ (b | ~d) */
#define ZSTEP(...) VEC_STEP(_mm512_add_epi32, _mm512_set1_epi32, _mm512_rol_epi32, __VA_ARGS__)

/* Rows r[0..15] (lane l's 16 words) into columns (word j of every lane). */
__attribute__((target("avx512f"))) static inline void transpose16(__m512i r[16])
{
	__m512i t[16], u[16];
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	/* u[4k + j], j = 0..3: per 128-bit lane, word j (+4, +8, +12) of rows 4k..4k+3 */
	for (int k = 0; k < 4; k++) {
		u[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
		u[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
		u[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
		u[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
	}
	for (int j = 0; j < 4; j++) {
		__m512i v0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88);      /* words j, j+8: rows 0-7 */
		__m512i v1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xdd);      /* words j+4, j+12 */
		__m512i v2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x88); /* rows 8-15 */
		__m512i v3 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xdd);
		r[j] = _mm512_shuffle_i32x4(v0, v2, 0x88);
		r[j + 8] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
		r[j + 4] = _mm512_shuffle_i32x4(v1, v3, 0x88);
		r[j + 12] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
	}
}

__attribute__((target("avx512f"))) static void lanes_avx512(PixMd5 *const states[], const guint8 *const data[],
                                                          guint n, gsize n_blocks)
{
	const guint8 *p[16];
	guint32 init[4][16];

	lanes_gather(states, data, n, 16, p, &init[0][0]);
	__m512i a = _mm512_loadu_si512(init[0]);
	__m512i b = _mm512_loadu_si512(init[1]);
	__m512i c = _mm512_loadu_si512(init[2]);
	__m512i d = _mm512_loadu_si512(init[3]);

	for (gsize blk = 0; blk < n_blocks; blk++) {
		__m512i w[16];
		for (guint l = 0; l < 16; l++)
			w[l] = _mm512_loadu_si512(p[l]);
		transpose16(w);
		lanes_advance(p, n);
		MD5_BLOCK(ZSTEP, ZF, ZG, ZH, ZI, _mm512_add_epi32);
	}
	_mm512_storeu_si512(init[0], a);
	_mm512_storeu_si512(init[1], b);
	_mm512_storeu_si512(init[2], c);
	_mm512_storeu_si512(init[3], d);
	lanes_scatter(states, n, 16, &init[0][0], n_blocks);
}

/* AVX-512VL: the three-input logic and the rotate of AVX-512 on 256- and
 * 128-bit registers.  A pass costs about the same time whatever its width
 * (each lane's steps are a chain of dependent operations), so with few
 * streams a narrow pass does the same work as a 16-lane one for less: 8
 * lanes in 256 bits, 4 in 128 (pix_md5_lanes_blocks() has the figures). */
#define YF(b, c, d) _mm256_ternarylogic_epi32((b), (c), (d), 0xca)
#define YG(b, c, d) _mm256_ternarylogic_epi32((d), (b), (c), 0xca)
#define YH(b, c, d) _mm256_ternarylogic_epi32((b), (c), (d), 0x96)
#define YI(b, c, d) _mm256_ternarylogic_epi32((b), (c), (d), 0x39)
#define YSTEP(...) VEC_STEP(_mm256_add_epi32, _mm256_set1_epi32, _mm256_rol_epi32, __VA_ARGS__)

LANES8(lanes_vl8, "avx512f,avx512vl", YSTEP, YF, YG, YH, YI)

#define XF(b, c, d) _mm_ternarylogic_epi32((b), (c), (d), 0xca)
#define XG(b, c, d) _mm_ternarylogic_epi32((d), (b), (c), 0xca)
#define XH(b, c, d) _mm_ternarylogic_epi32((b), (c), (d), 0x96)
#define XI(b, c, d) _mm_ternarylogic_epi32((b), (c), (d), 0x39)
#define XSTEP(...) VEC_STEP(_mm_add_epi32, _mm_set1_epi32, _mm_rol_epi32, __VA_ARGS__)

__attribute__((target("avx512f,avx512vl"))) static void lanes_vl4(PixMd5 *const states[], const guint8 *const data[],
                                                                guint n, gsize n_blocks)
{
	const guint8 *p[4];
	guint32 init[4][4];

	lanes_gather(states, data, n, 4, p, &init[0][0]);
	__m128i a = _mm_loadu_si128((const __m128i *)init[0]);
	__m128i b = _mm_loadu_si128((const __m128i *)init[1]);
	__m128i c = _mm_loadu_si128((const __m128i *)init[2]);
	__m128i d = _mm_loadu_si128((const __m128i *)init[3]);

	for (gsize blk = 0; blk < n_blocks; blk++) {
		__m128i w[16];
		/* words 4g..4g+3 of the four lanes, transposed */
		for (int g = 0; g < 4; g++) {
			__m128i r0 = _mm_loadu_si128((const __m128i *)(p[0] + 16 * g));
			__m128i r1 = _mm_loadu_si128((const __m128i *)(p[1] + 16 * g));
			__m128i r2 = _mm_loadu_si128((const __m128i *)(p[2] + 16 * g));
			__m128i r3 = _mm_loadu_si128((const __m128i *)(p[3] + 16 * g));
			__m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
			__m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
			w[4 * g] = _mm_unpacklo_epi64(t0, t2);
			w[4 * g + 1] = _mm_unpackhi_epi64(t0, t2);
			w[4 * g + 2] = _mm_unpacklo_epi64(t1, t3);
			w[4 * g + 3] = _mm_unpackhi_epi64(t1, t3);
		}
		lanes_advance(p, n);
		MD5_BLOCK(XSTEP, XF, XG, XH, XI, _mm_add_epi32);
	}
	_mm_storeu_si128((__m128i *)init[0], a);
	_mm_storeu_si128((__m128i *)init[1], b);
	_mm_storeu_si128((__m128i *)init[2], c);
	_mm_storeu_si128((__m128i *)init[3], d);
	lanes_scatter(states, n, 4, &init[0][0], n_blocks);
}

#endif

void pix_md5_lanes_blocks(PixMd5 *const states[], const guint8 *const data[], guint n, gsize n_blocks)
{
	guint lanes = pix_md5_lane_count();
	g_assert(n >= 1 && n <= lanes);
#ifdef PIX_HAVE_X86
	/* half-empty, the AVX-512 code still beats full AVX2 lanes (measured:
	 * 5.8 GB/s for 16 streams against 2.2 GB/s for 8, one core); with
	 * AVX-512VL a pass of up to 4 streams in 128 bits takes 108 ns, of up
	 * to 8 in 256 bits 116 ns, against 131-150 ns for a 16-lane pass,
	 * whatever the number of streams in it (the large files of a scan
	 * with thumbnails come 2 or 3 at a time) */
	gboolean is_vl = g_atomic_int_get(&is_lanes_vl) != 0;
	if (lanes == 16 && n <= 4 && is_vl)
		lanes_vl4(states, data, n, n_blocks);
	else if (lanes == 16 && n <= 8 && is_vl)
		lanes_vl8(states, data, n, n_blocks);
	else if (lanes == 16)
		lanes_avx512(states, data, n, n_blocks);
	else
		lanes_avx2(states, data, n, n_blocks);
#else
	(void)states;
	(void)data;
	(void)n_blocks;
	g_assert_not_reached();
#endif
}
