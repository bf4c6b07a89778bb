/*
 * test-md5.c: md5-lanes.c equals OpenSSL's MD5.
 *
 * The scalar block function and the AVX2 and AVX-512 lanes must give RFC 1321 digests
 * for every message length from 0 to a few KiB, for lengths around every
 * block and padding boundary, for lanes that start and finish at different
 * times (files of different sizes sharing lanes, as the hasher runs them),
 * for every number of lanes in use, and for random sizes up to several MiB.
 * OpenSSL's EVP MD5 (pix_md5_buffer) is the reference.  Each lane test runs
 * at 8 and at 16 lanes, skipping a width the CPU lacks.
 */
#include "hash.h"
#include "md5-lanes.h"
#include "testlib.h"

#define DATA_BYTES (8 * 1024 * 1024)

static guint8 *data;   /* DATA_BYTES of pseudo-random bytes, for every test */

static void expect_digest(const guint8 *msg, gsize len, const guint8 got[16])
{
	guint8 want[16];
	pix_md5_buffer(msg, len, want);
	if (memcmp(got, want, 16) != 0) {
		char g[33], w[33];
		pix_md5_hex(got, g);
		pix_md5_hex(want, w);
		g_error("MD5 of %zu bytes: got %s, want %s", len, g, w);
	}
}

/* Scalar, the whole message as blocks then the tail, for 0..4 KiB. */
static void test_scalar_every_length(void)
{
	for (gsize len = 0; len <= 4096; len++) {
		PixMd5 m;
		guint8 out[16];
		gsize blocks = len / PIX_MD5_BLOCK;
		pix_md5_init(&m);
		pix_md5_blocks(&m, data, blocks);
		pix_md5_finish(&m, data + blocks * PIX_MD5_BLOCK, len - blocks * PIX_MD5_BLOCK, out);
		expect_digest(data, len, out);
	}
}

/* The tail given to pix_md5_finish may hold whole blocks too. */
static void test_scalar_long_tail(void)
{
	static const gsize lens[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 65536, 100001 };
	for (guint i = 0; i < G_N_ELEMENTS(lens); i++) {
		PixMd5 m;
		guint8 out[16];
		pix_md5_init(&m);
		pix_md5_finish(&m, data, lens[i], out);
		expect_digest(data, lens[i], out);
	}
}

/* Lengths around each padding boundary: 55/56 bytes in the last block
 * decide whether the length fits in it. */
static gsize boundary_length(guint i)
{
	static const gsize offsets[] = { 0, 1, 54, 55, 56, 57, 62, 63 };
	return (i / G_N_ELEMENTS(offsets)) * PIX_MD5_BLOCK + offsets[i % G_N_ELEMENTS(offsets)];
}

/*
 * Runs `n` messages (lengths[i] bytes at starts[i]) through the lanes the
 * way the hasher does: each step takes the streams that still have whole
 * blocks, as many blocks as the shortest of them has (at most `max_step`),
 * and a stream alone goes scalar.  Then checks every digest.
 */
static void run_streams(guint n, const gsize *lengths, const gsize *starts, gsize max_step)
{
	PixMd5 *m = g_new0(PixMd5, n);
	gsize *done = g_new0(gsize, n);

	for (guint i = 0; i < n; i++)
		pix_md5_init(&m[i]);
	for (;;) {
		PixMd5 *states[PIX_MD5_MAX_LANES];
		const guint8 *ptrs[PIX_MD5_MAX_LANES];
		guint picked[PIX_MD5_MAX_LANES];
		guint k = 0;
		gsize step = max_step;
		for (guint i = 0; i < n && k < pix_md5_lane_count(); i++) {
			gsize blocks = (lengths[i] - done[i]) / PIX_MD5_BLOCK;
			if (blocks == 0)
				continue;
			states[k] = &m[i];
			ptrs[k] = data + starts[i] + done[i];
			picked[k] = i;
			step = MIN(step, blocks);
			k++;
		}
		if (k == 0)
			break;
		if (k == 1)
			pix_md5_blocks(states[0], ptrs[0], step);
		else
			pix_md5_lanes_blocks(states, ptrs, k, step);
		for (guint j = 0; j < k; j++)
			done[picked[j]] += step * PIX_MD5_BLOCK;
	}
	for (guint i = 0; i < n; i++) {
		guint8 out[16];
		pix_md5_finish(&m[i], data + starts[i] + done[i], lengths[i] - done[i], out);
		g_assert_cmpuint(m[i].length_bytes, ==, done[i] + (lengths[i] - done[i]) / PIX_MD5_BLOCK * PIX_MD5_BLOCK +
		                 ((lengths[i] - done[i]) % PIX_MD5_BLOCK + 1 + 8 <= PIX_MD5_BLOCK ? 1 : 2) * PIX_MD5_BLOCK);
		expect_digest(data + starts[i], lengths[i], out);
	}
	g_free(m);
	g_free(done);
}

/* Every length 0..4 KiB, eight at a time in the lanes, each lane at its
 * own offset in the data (so lanes never see the same bytes). */
static void test_lanes_every_length(gconstpointer width)
{
	if (!pix_test_need_lanes(width))
		return;
	guint w = pix_md5_lane_count();
	for (gsize base = 0; base <= 4096; base += w) {
		gsize lengths[PIX_MD5_MAX_LANES], starts[PIX_MD5_MAX_LANES];
		for (guint l = 0; l < w; l++) {
			lengths[l] = base + l;
			starts[l] = l * 5000 + base % 97;
		}
		run_streams(w, lengths, starts, G_MAXSIZE);
	}
}

static void test_lanes_padding_boundaries(gconstpointer width)
{
	if (!pix_test_need_lanes(width))
		return;
	guint w = pix_md5_lane_count();
	for (guint i = 0; i < 8 * 40; i += w) {
		gsize lengths[PIX_MD5_MAX_LANES], starts[PIX_MD5_MAX_LANES];
		for (guint l = 0; l < w; l++) {
			lengths[l] = boundary_length(i + l);
			starts[l] = l * 4096 + 3;
		}
		run_streams(w, lengths, starts, G_MAXSIZE);
	}
}

/* 1 to all lanes in use: the idle lanes must not disturb the others. */
static void test_lanes_partly_used(gconstpointer width)
{
	if (!pix_test_need_lanes(width))
		return;
	for (guint n = 1; n <= pix_md5_lane_count(); n++) {
		gsize lengths[PIX_MD5_MAX_LANES], starts[PIX_MD5_MAX_LANES];
		for (guint l = 0; l < n; l++) {
			lengths[l] = 10 * PIX_MD5_BLOCK + 17 * l;
			starts[l] = 1000 * l;
		}
		run_streams(n, lengths, starts, G_MAXSIZE);
	}
}

/* Twenty streams of very different lengths share the lanes in small steps,
 * so lanes empty and refill with other streams mid-way. */
static void test_lanes_finish_at_different_times(gconstpointer width)
{
	if (!pix_test_need_lanes(width))
		return;
	GRand *r = g_rand_new_with_seed(42);
	for (int round = 0; round < 20; round++) {
		gsize lengths[20], starts[20];
		for (guint i = 0; i < 20; i++) {
			lengths[i] = (gsize)g_rand_int_range(r, 0, 40000);
			starts[i] = (gsize)g_rand_int_range(r, 0, DATA_BYTES - 40000);
		}
		run_streams(20, lengths, starts, (gsize)g_rand_int_range(r, 1, 64));
	}
	g_rand_free(r);
}

/* Random sizes up to several MiB, all lanes at once. */
static void test_lanes_random_large(gconstpointer width)
{
	if (!pix_test_need_lanes(width))
		return;
	GRand *r = g_rand_new_with_seed(7);
	for (int round = 0; round < 4; round++) {
		guint w = pix_md5_lane_count();
		gsize lengths[PIX_MD5_MAX_LANES], starts[PIX_MD5_MAX_LANES];
		for (guint l = 0; l < w; l++) {
			lengths[l] = (gsize)g_rand_int_range(r, 0, 6 * 1024 * 1024);
			starts[l] = (gsize)g_rand_int_range(r, 0, DATA_BYTES - lengths[l]);
		}
		run_streams(w, lengths, starts, 16384);
	}
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	data = g_malloc(DATA_BYTES);
	guint32 x = 2463534242u;
	for (gsize i = 0; i < DATA_BYTES; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (guint8)x;
	}
	g_test_add_func("/md5/scalar/every-length-to-4k", test_scalar_every_length);
	g_test_add_func("/md5/scalar/tail-with-whole-blocks", test_scalar_long_tail);
	static const guint widths[] = { 8, 16 };
	for (guint i = 0; i < G_N_ELEMENTS(widths); i++) {
		static const struct {
			const char *name;
			GTestDataFunc fn;
		} tests[] = {
			{ "every-length-to-4k", test_lanes_every_length },
			{ "padding-boundaries", test_lanes_padding_boundaries },
			{ "one-to-all-in-use", test_lanes_partly_used },
			{ "finish-at-different-times", test_lanes_finish_at_different_times },
			{ "random-sizes-to-6mib", test_lanes_random_large },
		};
		for (guint t = 0; t < G_N_ELEMENTS(tests); t++) {
			g_autofree char *path = g_strdup_printf("/md5/lanes-%u/%s", widths[i], tests[t].name);
			g_test_add_data_func(path, GUINT_TO_POINTER(widths[i]), tests[t].fn);
		}
	}
	int rc = g_test_run();
	g_free(data);
	return rc;
}
