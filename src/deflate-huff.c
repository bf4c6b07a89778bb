/*
 * deflate-huff.c: a zlib stream of Huffman-coded literals only (see
 * deflate-huff.h).
 *
 * Each block of BLOCK_BYTES input bytes gets its own dynamic code (RFC
 * 1951, 3.2.7): the literals' frequencies, a Huffman code of at most 15
 * bits (frequencies halved until it fits), its lengths sent with a code
 * of at most 7 bits, no run-length symbols (a few bytes more a block).
 * Two distance codes of one bit each are declared, none used, so that
 * every code is complete.  Bits go out through a 64-bit accumulator, four
 * bytes at a time.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "deflate-huff.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define BLOCK_BYTES (64 * 1024)
#define N_LITERALS 257          /* the bytes and the end of the block */
#define END_OF_BLOCK 256
#define N_DISTANCES 2
#define N_LENGTH_CODES 19       /* the alphabet of the code lengths */
#define MAX_BITS 15
#define MAX_LENGTH_BITS 7
/* the bytes a block's header and end can take: 3 + 5 + 5 + 4 bits,
 * 19 x 3, (257 + 2) x 7, 15 */
#define BLOCK_OVERHEAD 300

typedef struct {
	guint32 freq[N_LITERALS];
	guint8 len[N_LITERALS];
	guint16 code[N_LITERALS];       /* bit-reversed: deflate sends codes from their top bit */
} Code;

typedef struct {
	guint64 acc;
	int n_bits;
	guint8 *p;
} Bits;

static inline void put_bits(Bits *b, guint32 value, int n)
{
	b->acc |= (guint64)value << b->n_bits;
	b->n_bits += n;
	if (b->n_bits >= 32) {
		guint32 word = GUINT32_TO_LE((guint32)b->acc);
		memcpy(b->p, &word, 4);
		b->p += 4;
		b->acc >>= 32;
		b->n_bits -= 32;
	}
}

static void flush_bits(Bits *b)
{
	while (b->n_bits > 0) {
		*b->p++ = (guint8)b->acc;
		b->acc >>= 8;
		b->n_bits -= 8;
	}
	b->acc = 0;
	b->n_bits = 0;
}

typedef struct {
	const guint32 *freq;
} SortBy;

static int by_freq(const void *a, const void *b, void *data)
{
	const SortBy *s = data;
	int x = *(const int *)a, y = *(const int *)b;
	if (s->freq[x] != s->freq[y])
		return s->freq[x] < s->freq[y] ? -1 : 1;
	return x - y;
}

/* Huffman code lengths of the `n` symbols' frequencies (at least two
 * nonzero); returns the longest. */
static int huffman_lengths(const guint32 *freq, int n, guint8 *len)
{
	int leaves[N_LITERALS];
	guint64 weight[2 * N_LITERALS];
	int parent[2 * N_LITERALS];
	guint8 depth[2 * N_LITERALS];
	int m = 0;
	for (int i = 0; i < n; i++) {
		len[i] = 0;
		if (freq[i] > 0)
			leaves[m++] = i;
	}
	if (m < 2) {            /* not reached: make_code() gives two */
		for (int i = 0; i < m; i++)
			len[leaves[i]] = 1;
		return m;
	}
	SortBy s = { freq };
	g_qsort_with_data(leaves, m, sizeof leaves[0], by_freq, &s);
	for (int i = 0; i < m; i++)
		weight[i] = freq[leaves[i]];
	/* two queues: the sorted leaves, and the joined nodes, made in
	 * order of weight */
	int next_leaf = 0, next_node = m, n_nodes = m;
	while (n_nodes < 2 * m - 1) {
		int pick[2];
		for (int k = 0; k < 2; k++) {
			if (next_leaf < m && (next_node >= n_nodes || weight[next_leaf] <= weight[next_node]))
				pick[k] = next_leaf++;
			else
				pick[k] = next_node++;
		}
		weight[n_nodes] = weight[pick[0]] + weight[pick[1]];
		parent[pick[0]] = parent[pick[1]] = n_nodes;
		n_nodes++;
	}
	int longest = 0;
	depth[n_nodes - 1] = 0;
	for (int i = n_nodes - 2; i >= 0; i--) {
		depth[i] = depth[parent[i]] + 1;
		if (i < m) {
			len[leaves[i]] = depth[i];
			longest = MAX(longest, depth[i]);
		}
	}
	return longest;
}

/* Lengths of at most `limit` bits for `freq` (frequencies halved until
 * they fit), and the canonical codes of RFC 1951, 3.2.2, bit-reversed. */
static void make_code(const guint32 *freq_in, int n, int limit, guint8 *len, guint16 *code)
{
	guint32 freq[N_LITERALS];
	int n_used = 0;
	for (int i = 0; i < n; i++) {
		freq[i] = freq_in[i];
		n_used += freq[i] > 0;
	}
	/* a complete code needs two symbols */
	for (int i = 0; n_used < 2; i++) {
		if (freq[i] == 0) {
			freq[i] = 1;
			n_used++;
		}
	}
	while (huffman_lengths(freq, n, len) > limit) {
		for (int i = 0; i < n; i++)
			if (freq[i] > 0)
				freq[i] = (freq[i] >> 1) | 1;
	}
	guint16 count[MAX_BITS + 1] = { 0 }, next[MAX_BITS + 1];
	for (int i = 0; i < n; i++)
		count[len[i]]++;
	count[0] = 0;
	guint16 c = 0;
	for (int bits = 1; bits <= MAX_BITS; bits++) {
		c = (guint16)((c + count[bits - 1]) << 1);
		next[bits] = c;
	}
	for (int i = 0; i < n; i++) {
		code[i] = 0;
		if (len[i] == 0)
			continue;
		guint16 v = next[len[i]]++, r = 0;
		for (int b = 0; b < len[i]; b++)
			r = (guint16)((r << 1) | ((v >> b) & 1));
		code[i] = r;
	}
}

/* One block of `n` bytes, the last if `is_final`. */
static void put_block(Bits *b, const guint8 *in, gsize n, gboolean is_final)
{
	Code lit;
	memset(lit.freq, 0, sizeof lit.freq);
	for (gsize i = 0; i < n; i++)
		lit.freq[in[i]]++;
	lit.freq[END_OF_BLOCK] = 1;
	make_code(lit.freq, N_LITERALS, MAX_BITS, lit.len, lit.code);

	/* the lengths to send: the literals', then the two distances' */
	guint8 lengths[N_LITERALS + N_DISTANCES];
	memcpy(lengths, lit.len, N_LITERALS);
	lengths[N_LITERALS] = lengths[N_LITERALS + 1] = 1;
	guint32 cl_freq[N_LENGTH_CODES] = { 0 };
	guint8 cl_len[N_LENGTH_CODES];
	guint16 cl_code[N_LENGTH_CODES];
	for (int i = 0; i < N_LITERALS + N_DISTANCES; i++)
		cl_freq[lengths[i]]++;
	make_code(cl_freq, N_LENGTH_CODES, MAX_LENGTH_BITS, cl_len, cl_code);
	static const guint8 order[N_LENGTH_CODES] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
	int n_cl = N_LENGTH_CODES;
	while (n_cl > 4 && cl_len[order[n_cl - 1]] == 0)
		n_cl--;

	put_bits(b, is_final ? 1 : 0, 1);
	put_bits(b, 2, 2);                              /* dynamic Huffman codes */
	put_bits(b, N_LITERALS - 257, 5);
	put_bits(b, N_DISTANCES - 1, 5);
	put_bits(b, (guint32)(n_cl - 4), 4);
	for (int i = 0; i < n_cl; i++)
		put_bits(b, cl_len[order[i]], 3);
	for (int i = 0; i < N_LITERALS + N_DISTANCES; i++)
		put_bits(b, cl_code[lengths[i]], cl_len[lengths[i]]);

	/* the bytes: two codes of at most 15 bits between flushes fit */
	const guint16 *code = lit.code;
	const guint8 *len = lit.len;
	gsize i = 0;
	for (; i + 2 <= n; i += 2) {
		guint8 x = in[i], y = in[i + 1];
		b->acc |= (guint64)code[x] << b->n_bits;
		b->n_bits += len[x];
		put_bits(b, code[y], len[y]);
	}
	if (i < n)
		put_bits(b, code[in[i]], len[in[i]]);
	put_bits(b, code[END_OF_BLOCK], len[END_OF_BLOCK]);
}

void pix_deflate_huffman(const guint8 *in, gsize n, GByteArray *out)
{
	gsize n_blocks = MAX((n + BLOCK_BYTES - 1) / BLOCK_BYTES, 1);
	guint start = out->len;
	/* at most 15 bits a byte, a block's overhead, the header and check */
	g_byte_array_set_size(out, start + 2 + (guint)(n * 2 + n_blocks * BLOCK_OVERHEAD) + 4 + 8);
	guint8 *p = out->data + start;
	*p++ = 0x78;    /* deflate, 32 KiB window */
	*p++ = 0x01;    /* the fastest level; 0x7801 is a multiple of 31 */
	Bits b = { 0, 0, p };
	gsize at = 0;
	do {
		gsize take = MIN(n - at, (gsize)BLOCK_BYTES);
		put_block(&b, in + at, take, at + take >= n);
		at += take;
	} while (at < n);
	flush_bits(&b);
	guint32 check = (guint32)adler32_z(adler32(0, NULL, 0), in, n);
	guint32 be = GUINT32_TO_BE(check);
	memcpy(b.p, &be, 4);
	b.p += 4;
	g_byte_array_set_size(out, (guint)(b.p - out->data));
}
