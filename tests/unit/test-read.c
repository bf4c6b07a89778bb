/*
 * test-read.c: the readers (read.c) and hashers (hash.c) on real files.
 *
 * Covers the message protocol (START, data, RESTART, END), the hard cap on
 * buffers, files that vanish, turn into FIFOs or symlinks, or change while
 * they are read, and the MD5 of the hash stage against RFC 1321's vectors
 * and against whole-buffer MD5 for many sizes.
 */
#include "hash.h"
#include "log.h"
#include "read.h"
#include "testlib.h"
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/* Random bytes of `len` into a new file in a new directory; returns the
 * directory (its PixDir) and sets *name. */
static PixDir *file_with(gsize len, const char *name, guint32 seed)
{
	g_autofree char *dir = pix_test_dir("read");
	g_autofree char *path = g_build_filename(dir, name, NULL);
	guint8 *data = g_malloc(len + 1);
	GRand *r = g_rand_new_with_seed(seed);
	for (gsize i = 0; i < len; i++)
		data[i] = (guint8)g_rand_int(r);
	pix_test_write(path, data, len);
	g_rand_free(r);
	g_free(data);
	return pix_dir_new(dir);
}

static PixItem *item_for(PixDir *dir, const char *name)
{
	PixItem *item = pix_item_new(PIX_ACT_ADD, dir, name);
	g_autofree char *path = pix_item_path(item);
	struct stat st;
	if (lstat(path, &st) == 0)
		pix_stat_from(&item->st, &st);
	return item;
}

typedef struct {
	PixQueue *in;
	PixQueue *out;
	PixReaders *readers;
} Rig;

/* One reader feeding one output queue; `items` (NULL-terminated) queued. */
static Rig rig_start(gsize read_bytes, gsize max_memory, PixItem **items)
{
	Rig rig;
	PixReadConfig cfg = { .n_readers = 1, .read_bytes = read_bytes, .max_memory_bytes = max_memory,
	                      .is_keep_cache = TRUE };
	rig.in = pix_queue_new(64, 1);
	rig.out = pix_queue_new(1024, 1);
	for (PixItem **p = items; *p != NULL; p++)
		pix_queue_push(rig.in, *p);
	pix_queue_close(rig.in);
	rig.readers = pix_read_start(&cfg, rig.in, &rig.out, 1);
	return rig;
}

static void rig_finish(Rig *rig)
{
	g_assert_null(pix_queue_pop(rig->out));
	pix_read_join(rig->readers);
	pix_queue_free(rig->in);
	pix_queue_free(rig->out);
}

static PixChunk *next_msg(Rig *rig)
{
	PixChunk *c = pix_queue_pop(rig->out);
	g_assert_nonnull(c);
	return c;
}

static void test_whole_file(void)
{
	gsize len = 3 * 1024 * 1024 + 12345;
	g_autoptr(PixDir) dir = file_with(len, "f.bin", 1);
	PixItem *items[] = { item_for(dir, "f.bin"), NULL };
	g_autofree char *path = g_build_filename(dir->path, "f.bin", NULL);
	g_autofree char *want = NULL;
	gsize want_len;
	g_assert_true(g_file_get_contents(path, &want, &want_len, NULL));

	Rig rig = rig_start(1024 * 1024, 8 * 1024 * 1024, items);
	GByteArray *got = g_byte_array_new();
	PixItem *item = NULL;
	guint n_msgs = 0;
	PixChunk *c;
	for (;;) {
		c = next_msg(&rig);
		n_msgs++;
		g_assert_cmpint(!!(c->flags & PIX_CHUNK_START), ==, n_msgs == 1);
		if (n_msgs == 1)
			item = c->item;
		g_assert_true(c->item == item);
		g_assert_false(c->flags & PIX_CHUNK_RESTART);
		g_assert_cmpuint(c->len, <=, 1024 * 1024);
		if (c->len > 0)
			g_byte_array_append(got, c->data, (guint)c->len);
		if (c->flags & PIX_CHUNK_END)
			break;
		g_assert_cmpuint(c->len, ==, 1024 * 1024);   /* whole reads */
		pix_chunk_free(c);
	}
	g_assert_null(c->error);
	g_assert_false(c->is_aborted);
	g_assert_cmpint(c->bytes_read, ==, (gint64)len);
	g_assert_cmpint(c->st.size_bytes, ==, (gint64)len);
	g_assert_cmpuint(n_msgs, ==, 4);       /* the last read carries END */
	g_assert_cmpmem(got->data, got->len, want, want_len);
	pix_chunk_free(c);
	pix_item_free(item);
	g_byte_array_free(got, TRUE);
	rig_finish(&rig);
}

/* A file that fits in one read costs one message. */
static void test_small_file_one_message(void)
{
	g_autoptr(PixDir) dir = file_with(100, "small.bin", 8);
	PixItem *items[] = { item_for(dir, "small.bin"), NULL };
	Rig rig = rig_start(64 * 1024, 1024 * 1024, items);
	PixChunk *c = next_msg(&rig);
	g_assert_cmpuint(c->flags, ==, PIX_CHUNK_START | PIX_CHUNK_END);
	g_assert_cmpuint(c->len, ==, 100);
	g_assert_null(c->error);
	g_assert_cmpint(c->bytes_read, ==, 100);
	pix_item_free(c->item);
	pix_chunk_free(c);
	rig_finish(&rig);
}

/* With room for 3 buffers, a consumer that keeps them gets no fourth until
 * it gives one back: the memory cap holds. */
static void test_memory_cap(void)
{
	gsize rs = 64 * 1024;
	g_autoptr(PixDir) dir = file_with(40 * rs, "big.bin", 2);
	PixItem *items[] = { item_for(dir, "big.bin"), NULL };
	Rig rig = rig_start(rs, 3 * rs, items);
	PixChunk *held[3];
	for (int i = 0; i < 3; i++) {
		held[i] = next_msg(&rig);
		g_assert_cmpuint(held[i]->len, ==, rs);
	}
	PixItem *item = held[0]->item;
	gboolean is_timeout = FALSE;
	g_assert_null(pix_queue_pop_timeout(rig.out, 300000, &is_timeout));
	g_assert_true(is_timeout);
	pix_chunk_free(held[0]);
	PixChunk *fourth = pix_queue_pop_timeout(rig.out, 5 * G_USEC_PER_SEC, &is_timeout);
	g_assert_nonnull(fourth);
	g_assert_cmpuint(fourth->len, ==, rs);
	pix_chunk_free(fourth);
	pix_chunk_free(held[1]);
	pix_chunk_free(held[2]);
	PixChunk *c;
	while (!((c = next_msg(&rig))->flags & PIX_CHUNK_END))
		pix_chunk_free(c);
	g_assert_null(c->error);
	g_assert_cmpint(c->bytes_read, ==, 40 * (gint64)rs);
	pix_chunk_free(c);
	pix_item_free(item);
	rig_finish(&rig);
}

/* The queue of the two in `out` that has a message within 5 s. */
static guint queue_with_message(PixQueue **out)
{
	for (int i = 0; i < 500; i++) {
		for (guint k = 0; k < 2; k++)
			if (pix_queue_length(out[k]) > 0)
				return k;
		g_usleep(10000);
	}
	g_assert_not_reached();
}

/* Pops a file's messages from `q` to its END (returned), freeing each
 * data message when the next comes; the last (its bytes still counted as
 * waiting at `q`) is left in *last. */
static PixChunk *drain_file(PixQueue *q, PixChunk **last)
{
	gboolean is_timeout;
	for (;;) {
		PixChunk *c = pix_queue_pop_timeout(q, 5 * G_USEC_PER_SEC, &is_timeout);
		g_assert_nonnull(c);
		if (c->flags & PIX_CHUNK_END)
			return c;
		pix_chunk_free(*last);
		*last = c;
	}
}

/* Files of several reads: each goes to the least loaded consumer, not
 * all of a batch to the batch's, and a consumer holds at most its share
 * of the pool (the pool over the consumers) though the pool has room:
 * one reader cannot fill the pool with one file while the other
 * consumer waits (RAW files of 18 MB, a 16 MiB pool, 2 hashers). */
/* The rule for a file's consumer: a large file to the one with the fewest
 * large files being read for it, then the fewest bytes waiting; a batch of
 * small files by bytes alone; ties to the first from the start. */
static void test_pick_rule(void)
{
	gint64 pending[3] = { 100, 0, 50 };
	gint n_large[3] = { 0, 1, 0 };
	g_assert_cmpuint(pix_read_pick(NULL, pending, 3, 0), ==, 1);
	g_assert_cmpuint(pix_read_pick(n_large, pending, 3, 0), ==, 2);   /* not the idle one, already reading one */
	g_assert_cmpuint(pix_read_pick(n_large, pending, 3, 1), ==, 2);
	n_large[2] = 2;
	g_assert_cmpuint(pix_read_pick(n_large, pending, 3, 1), ==, 0);
	gint64 even[3] = { 7, 7, 7 };
	gint same[3] = { 1, 1, 1 };
	for (guint start = 0; start < 6; start++) {
		g_assert_cmpuint(pix_read_pick(NULL, even, 3, start), ==, start % 3);
		g_assert_cmpuint(pix_read_pick(same, even, 3, start), ==, start % 3);
	}
	g_assert_cmpuint(pix_read_pick(same, pending, 1, 5), ==, 0);
}

static void test_large_files_spread(void)
{
	gsize rs = 64 * 1024;
	g_autoptr(PixDir) da = file_with(6 * rs, "a.bin", 3);
	g_autoptr(PixDir) db = file_with(6 * rs, "b.bin", 4);
	PixReadConfig cfg = { .n_readers = 1, .read_bytes = rs, .max_memory_bytes = 8 * rs, .is_keep_cache = TRUE,
	                      .batch_files = 16, .is_blocking = TRUE };
	PixQueue *in = pix_queue_new(64, 1);
	PixQueue *out[2] = { pix_queue_new(1024, 1), pix_queue_new(1024, 1) };
	pix_queue_push(in, item_for(da, "a.bin"));
	pix_queue_push(in, item_for(db, "b.bin"));
	pix_queue_close(in);
	PixReaders *r = pix_read_start(&cfg, in, out, 2);

	/* a.bin: 4 reads of the pool's 8 buffers, then nothing while held */
	guint x = queue_with_message(out);
	PixChunk *held[4];
	gboolean is_timeout;
	for (int i = 0; i < 4; i++) {
		held[i] = pix_queue_pop_timeout(out[x], 5 * G_USEC_PER_SEC, &is_timeout);
		g_assert_nonnull(held[i]);
		g_assert_cmpuint(held[i]->len, ==, rs);
	}
	g_assert_null(pix_queue_pop_timeout(out[x], 300000, &is_timeout));
	g_assert_true(is_timeout);
	g_assert_cmpuint(pix_queue_length(out[1 - x]), ==, 0);
	PixItem *a = held[0]->item;
	for (int i = 0; i < 4; i++)
		pix_chunk_free(held[i]);

	/* the rest of a.bin; its last read still waiting at x, b.bin goes
	 * to the other consumer, though it is of the same batch */
	PixChunk *last = NULL;
	PixChunk *end = drain_file(out[x], &last);
	g_assert_null(end->error);
	g_assert_cmpint(end->bytes_read, ==, 6 * (gint64)rs);
	pix_chunk_free(end);
	g_assert_nonnull(last);
	g_assert_true(queue_with_message(out) == 1 - x);
	PixChunk *b_last = NULL;
	end = drain_file(out[1 - x], &b_last);
	g_assert_null(end->error);
	g_assert_cmpint(end->bytes_read, ==, 6 * (gint64)rs);
	PixItem *b = end->item;
	g_assert_true(b != a);
	pix_chunk_free(end);
	pix_chunk_free(last);
	pix_chunk_free(b_last);
	pix_item_free(a);
	pix_item_free(b);
	for (guint k = 0; k < 2; k++) {
		g_assert_null(pix_queue_pop(out[k]));
	}
	pix_read_join(r);
	pix_queue_free(in);
	pix_queue_free(out[0]);
	pix_queue_free(out[1]);
}

/* Reads one item that is expected to fail; returns its only message
 * (START | END, no data). */
static PixChunk *read_failure_msg(PixDir *dir, const char *name)
{
	PixItem *items[] = { pix_item_new(PIX_ACT_ADD, dir, name), NULL };
	Rig rig = rig_start(64 * 1024, 1024 * 1024, items);
	PixChunk *c = next_msg(&rig);
	g_assert_cmpuint(c->flags, ==, PIX_CHUNK_START | PIX_CHUNK_END);
	g_assert_cmpuint(c->len, ==, 0);
	rig_finish(&rig);
	return c;
}

/* As read_failure_msg(); returns END's error, which must be set. */
static char *read_failure(PixDir *dir, const char *name)
{
	PixChunk *c = read_failure_msg(dir, name);
	char *error = g_steal_pointer(&c->error);
	g_assert_false(c->is_vanished);
	pix_item_free(c->item);
	pix_chunk_free(c);
	g_assert_nonnull(error);
	return error;
}

/* A file deleted since it was listed is not an error: it is gone. */
static void test_vanished(void)
{
	g_autoptr(PixDir) dir = file_with(10, "here.txt", 3);
	PixChunk *c = read_failure_msg(dir, "gone.txt");
	g_assert_true(c->is_vanished);
	g_assert_null(c->error);
	pix_item_free(c->item);
	pix_chunk_free(c);
}

static void test_fifo_not_opened_for_long(void)
{
	g_autoptr(PixDir) dir = file_with(10, "x", 4);
	g_autofree char *path = g_build_filename(dir->path, "pipe", NULL);
	g_assert_cmpint(mkfifo(path, 0644), ==, 0);
	/* no writer: a blocking open would hang the test */
	g_autofree char *error = read_failure(dir, "pipe");
	g_assert_cmpstr(error, ==, "not read: it is no longer a regular file");
}

static void test_symlink_not_followed(void)
{
	g_autoptr(PixDir) dir = file_with(10, "target", 5);
	g_autofree char *path = g_build_filename(dir->path, "link", NULL);
	g_assert_cmpint(symlink("target", path), ==, 0);
	g_autofree char *error = read_failure(dir, "link");
	g_assert_cmpstr(error, ==, "cannot open: it, or a directory above it, became a symbolic link");
}

/* The consumer appends to the file while the reader waits for a buffer:
 * the reader must notice, send RESTART and read the file again, and END
 * must describe the final content. */
static void test_changed_while_read(void)
{
	gsize rs = 64 * 1024;
	g_autoptr(PixDir) dir = file_with(16 * rs, "grow.bin", 6);
	g_autofree char *path = g_build_filename(dir->path, "grow.bin", NULL);
	PixItem *items[] = { item_for(dir, "grow.bin"), NULL };
	Rig rig = rig_start(rs, 2 * rs, items);
	PixChunk *first = next_msg(&rig);
	PixItem *item = first->item;

	FILE *f = fopen(path, "ab");
	g_assert_nonnull(f);
	fputs("more bytes", f);
	fclose(f);
	pix_chunk_free(first);

	gboolean is_restarted = FALSE;
	gint64 after_restart = 0;
	PixChunk *c;
	for (;;) {
		c = next_msg(&rig);
		if (c->flags & PIX_CHUNK_RESTART) {
			is_restarted = TRUE;
			after_restart = 0;
		}
		after_restart += (gint64)c->len;
		if (c->flags & PIX_CHUNK_END)
			break;
		pix_chunk_free(c);
	}
	g_assert_true(is_restarted);
	g_assert_null(c->error);
	g_assert_cmpint(c->bytes_read, ==, 16 * (gint64)rs + 10);
	g_assert_cmpint(after_restart, ==, c->bytes_read);
	pix_chunk_free(c);
	pix_item_free(item);
	rig_finish(&rig);
}

static void test_md5_vectors(void)
{
	static const struct {
		const char *in, *hex;
	} v[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		  "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(v); i++) {
		guint8 md5[16];
		char hex[33];
		pix_md5_buffer(v[i].in, strlen(v[i].in), md5);
		pix_md5_hex(md5, hex);
		g_assert_cmpstr(hex, ==, v[i].hex);
	}
}

/* Readers and hashers together: every file's MD5 equals the MD5 of its
 * bytes, whatever its size against the read size, with files of many
 * sizes in flight at once over several readers and hashers. */
static void test_hash_stage(void)
{
	static const gsize sizes[] = { 0, 1, 55, 56, 63, 64, 65, 4095, 4096, 4097, 65535, 65536, 65537,
	                               100000, 131072, 262145, 1000000 };
	g_autofree char *dir_path = pix_test_dir("hash");
	g_autoptr(PixDir) dir = pix_dir_new(dir_path);
	GHashTable *want = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	PixQueue *in = pix_queue_new(64, 1), *store = pix_queue_new(64, 2);
	PixQueue *to_hash[2] = { pix_queue_new(64, 3), pix_queue_new(64, 3) };

	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
		g_autofree char *name = g_strdup_printf("f%u.bin", i);
		g_autofree char *path = g_build_filename(dir_path, name, NULL);
		guint8 *data = g_malloc(sizes[i] + 1);
		for (gsize j = 0; j < sizes[i]; j++)
			data[j] = (guint8)(j * 7 + i);
		pix_test_write(path, data, sizes[i]);
		guint8 md5[16];
		char *hex = g_malloc(33);
		pix_md5_buffer(data, sizes[i], md5);
		pix_md5_hex(md5, hex);
		g_hash_table_insert(want, g_strdup(name), hex);
		g_free(data);
	}
	PixReadConfig cfg = { .n_readers = 3, .read_bytes = 65536, .max_memory_bytes = 8 * 65536,
	                      .is_keep_cache = TRUE };
	PixReaders *r = pix_read_start(&cfg, in, to_hash, 2);
	PixHashers *h = pix_hash_start(to_hash, 2, store);
	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
		g_autofree char *name = g_strdup_printf("f%u.bin", i);
		pix_queue_push(in, item_for(dir, name));
	}
	pix_queue_close(in);
	guint n = 0;
	PixItem *item;
	while ((item = pix_queue_pop(store)) != NULL) {
		char hex[33];
		g_assert_true(item->has_md5);
		g_assert_null(item->error);
		pix_md5_hex(item->md5, hex);
		g_assert_cmpstr(hex, ==, g_hash_table_lookup(want, item->name));
		g_assert_nonnull(item->mime);
		n++;
		pix_item_free(item);
	}
	g_assert_cmpuint(n, ==, G_N_ELEMENTS(sizes));
	pix_read_join(r);
	pix_hash_join(h);
	pix_queue_free(in);
	pix_queue_free(store);
	pix_queue_free(to_hash[0]);
	pix_queue_free(to_hash[1]);
	g_hash_table_destroy(want);
}

/* One large file alone: the hasher runs it through OpenSSL's block
 * function on its own state (no lanes to share); the MD5 must still be the
 * file's, for a size that is not a multiple of a block. */
static void test_hash_alone(void)
{
	gsize len = 5 * 1024 * 1024 + 37;
	g_autoptr(PixDir) dir = file_with(len, "alone.bin", 11);
	g_autofree char *path = g_build_filename(dir->path, "alone.bin", NULL);
	g_autofree char *bytes = NULL;
	gsize n;
	g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
	guint8 want[16];
	pix_md5_buffer(bytes, n, want);

	PixQueue *in = pix_queue_new(4, 1), *store = pix_queue_new(4, 1);
	PixQueue *to_hash = pix_queue_new(64, 1);
	PixReadConfig cfg = { .n_readers = 1, .read_bytes = 65536, .max_memory_bytes = 8 * 65536,
	                      .is_keep_cache = TRUE };
	PixReaders *r = pix_read_start(&cfg, in, &to_hash, 1);
	PixHashers *h = pix_hash_start(&to_hash, 1, store);
	pix_queue_push(in, item_for(dir, "alone.bin"));
	pix_queue_close(in);
	PixItem *item = pix_queue_pop(store);
	g_assert_nonnull(item);
	g_assert_true(item->has_md5);
	g_assert_cmpmem(item->md5, 16, want, 16);
	pix_item_free(item);
	g_assert_null(pix_queue_pop(store));
	pix_read_join(r);
	pix_hash_join(h);
	pix_queue_free(in);
	pix_queue_free(store);
	pix_queue_free(to_hash);
}

/* What a read of a mixed batch gave for one file: its MD5 (hex) or error. */
static GHashTable *read_mixed(guint batch_files, gboolean is_keep_cache)
{
	g_autofree char *dir_path = pix_test_dir("batch");
	g_autoptr(PixDir) dir = pix_dir_new(dir_path);
	static const gsize sizes[] = { 0, 1, 100, 4096, 16384, 65535, 65536, 65537, 200000 };
	GPtrArray *items = g_ptr_array_new();
	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
		g_autofree char *name = g_strdup_printf("f%u.bin", i);
		g_autofree char *path = g_build_filename(dir_path, name, NULL);
		guint8 *data = g_malloc(sizes[i] + 1);
		for (gsize j = 0; j < sizes[i]; j++)
			data[j] = (guint8)(j * 13 + i);
		pix_test_write(path, data, sizes[i]);
		g_free(data);
		g_ptr_array_add(items, item_for(dir, name));
	}
	/* listed, then changed: grown, gone, a FIFO, a symbolic link */
	const char *later[] = { "grown", "gone", "fifo", "link" };
	for (guint i = 0; i < G_N_ELEMENTS(later); i++) {
		g_autofree char *path = g_build_filename(dir_path, later[i], NULL);
		pix_test_write(path, "0123456789", 10);
		g_ptr_array_add(items, item_for(dir, later[i]));
		g_assert_cmpint(i == 0 ? 0 : unlink(path), ==, 0);
		if (i == 0) {
			FILE *f = fopen(path, "ab");
			fputs(" and more", f);
			fclose(f);
		} else if (i == 2) {
			g_assert_cmpint(mkfifo(path, 0644), ==, 0);
		} else if (i == 3) {
			g_assert_cmpint(symlink("f1.bin", path), ==, 0);
		}
	}
	PixQueue *in = pix_queue_new(64, 1), *store = pix_queue_new(64, 2);
	PixQueue *to_hash[2] = { pix_queue_new(256, 2), pix_queue_new(256, 2) };
	PixReadConfig cfg = { .n_readers = 2, .read_bytes = 65536, .max_memory_bytes = 4 * 65536,
	                      .is_keep_cache = is_keep_cache, .batch_files = batch_files };
	for (guint i = 0; i < items->len; i++)
		pix_queue_push(in, g_ptr_array_index(items, i));
	pix_queue_close(in);
	g_ptr_array_free(items, TRUE);
	PixReaders *r = pix_read_start(&cfg, in, to_hash, 2);
	PixHashers *h = pix_hash_start(to_hash, 2, store);
	GHashTable *got = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	PixItem *item;
	while ((item = pix_queue_pop(store)) != NULL) {
		char hex[33] = "";
		if (item->has_md5)
			pix_md5_hex(item->md5, hex);
		g_hash_table_insert(got, g_strdup(item->name),
		                    g_strdup_printf("%s %s %d %" G_GINT64_FORMAT, hex, item->error ? item->error : "-",
		                                    item->is_vanished, item->st.size_bytes));
		pix_item_free(item);
	}
	pix_read_join(r);
	pix_hash_join(h);
	pix_queue_free(in);
	pix_queue_free(store);
	pix_queue_free(to_hash[0]);
	pix_queue_free(to_hash[1]);
	return got;
}

/* Files read in batches (through io_uring where the kernel allows, with
 * small files sharing buffers) come out exactly as read one at a time:
 * the same MD5s, errors, vanished files and final stats; the file that
 * grew after it was listed has the MD5 of all its bytes. */
static void test_batch_same_as_one_by_one(void)
{
	for (int keep = 0; keep <= 1; keep++) {
		g_autoptr(GHashTable) one = read_mixed(1, keep);
		g_autoptr(GHashTable) batch = read_mixed(16, keep);
		g_assert_cmpuint(g_hash_table_size(one), ==, 13);
		g_assert_cmpuint(g_hash_table_size(batch), ==, g_hash_table_size(one));
		GHashTableIter it;
		gpointer k, v;
		g_hash_table_iter_init(&it, one);
		while (g_hash_table_iter_next(&it, &k, &v))
			g_assert_cmpstr(g_hash_table_lookup(batch, k), ==, v);
		guint8 md5[16];
		char hex[33];
		pix_md5_buffer("0123456789 and more", 19, md5);
		pix_md5_hex(md5, hex);
		g_autofree char *grown = g_strdup_printf("%s - 0 19", hex);
		g_assert_cmpstr(g_hash_table_lookup(batch, "grown"), ==, grown);
		g_assert_true(g_str_has_suffix(g_hash_table_lookup(batch, "fifo"), "not read: it is no longer a regular file 0 10"));
	}
}

/* Last: the stop flag is process-wide and cannot be cleared. */
static void test_stop_aborts(void)
{
	gsize rs = 64 * 1024;
	g_autoptr(PixDir) dir = file_with(32 * rs, "long.bin", 7);
	PixItem *items[] = { item_for(dir, "long.bin"), item_for(dir, "long.bin"), NULL };
	Rig rig = rig_start(rs, 2 * rs, items);
	PixChunk *first = next_msg(&rig);
	PixItem *item = first->item;
	pix_request_stop();
	pix_chunk_free(first);
	PixChunk *c;
	while (!((c = next_msg(&rig))->flags & PIX_CHUNK_END))
		pix_chunk_free(c);
	g_assert_true(c->is_aborted);
	pix_chunk_free(c);
	pix_item_free(item);
	/* the second item is freed unread: no message for it */
	rig_finish(&rig);
}

/* A path longer than PATH_MAX among others in one batch of opens: it
 * fails at submission, and the kernel stops submitting there; the opens
 * after it must still be submitted and complete (the reader waited for
 * them forever: t1018's 4,200-byte path in a batch of five). */
static void test_uring_long_path(void)
{
	if (!pix_uring_is_available()) {
		g_test_skip("io_uring is not available here (PIX_IO=threads, or the kernel refuses it)");
		return;
	}
	g_autofree char *dir = g_dir_make_tmp("pix-uring-XXXXXX", NULL);
	g_autofree char *file = g_build_filename(dir, "f", NULL);
	g_assert_true(g_file_set_contents(file, "x", 1, NULL));
	GString *longp = g_string_new(dir);
	while (longp->len <= PATH_MAX)
		g_string_append(longp, "/abcdefghijklmnopqrstuvwxyz");
	char *paths[] = { longp->str, file, file, longp->str, file };
	int fds[G_N_ELEMENTS(paths)];
	PixUring *u = pix_uring_new(8);
	g_assert_nonnull(u);
	pix_uring_open(u, paths, O_RDONLY | O_CLOEXEC, fds, G_N_ELEMENTS(paths));
	g_assert_cmpint(fds[0], ==, -ENAMETOOLONG);
	g_assert_cmpint(fds[3], ==, -ENAMETOOLONG);
	for (guint i = 1; i < G_N_ELEMENTS(paths); i++) {
		if (i == 3)
			continue;
		g_assert_cmpint(fds[i], >=, 0);
		close(fds[i]);
	}
	pix_uring_free(u);
	g_string_free(longp, TRUE);
	g_unlink(file);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/read/whole-file-in-large-reads", test_whole_file);
	g_test_add_func("/read/small-file-is-one-message", test_small_file_one_message);
	g_test_add_func("/read/memory-cap-holds", test_memory_cap);
	g_test_add_func("/read/large-files-spread-over-consumers", test_large_files_spread);
	g_test_add_func("/read/pick-rule", test_pick_rule);
	g_test_add_func("/read/vanished-file-is-gone-not-an-error", test_vanished);
	g_test_add_func("/read/fifo-not-opened-for-long", test_fifo_not_opened_for_long);
	g_test_add_func("/read/symlink-not-followed", test_symlink_not_followed);
	g_test_add_func("/read/changed-while-read-is-read-again", test_changed_while_read);
	g_test_add_func("/hash/md5-rfc1321-vectors", test_md5_vectors);
	g_test_add_func("/hash/stage-md5-of-many-sizes", test_hash_stage);
	g_test_add_func("/hash/one-file-alone", test_hash_alone);
	g_test_add_func("/read/batch-same-as-one-by-one", test_batch_same_as_one_by_one);
	g_test_add_func("/stop/read-aborts", test_stop_aborts);
	g_test_add_func("/uring/open-long-path-in-a-batch", test_uring_long_path);
	return g_test_run();
}
