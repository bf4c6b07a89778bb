/*
 * test-export-kpa-thumbs.c: unit tests of KPhotoAlbum's thumbnail cache
 * (src/export-kpa-thumbs.h): the index's bytes (version 5, QString paths in
 * UTF-16BE, big-endian integers), the 32 MiB rollover (1000 bytes here),
 * shared bytes for copies, a merge into what KPhotoAlbum appended, a
 * rename, a damaged index read as far as it goes.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "export-kpa-thumbs.h"
#include "testlib.h"

#include <stdio.h>
#include <sys/stat.h>

static guint32 be32(const guint8 *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

/* A fake thumbnail: SOI, n - 4 bytes of `fill`, EOI. */
static guint8 *fake_jpeg(gsize n, guint8 fill)
{
	guint8 *b = g_malloc(n);
	memset(b, fill, n);
	b[0] = 0xFF, b[1] = 0xD8, b[n - 2] = 0xFF, b[n - 1] = 0xD9;
	return b;
}

static gint64 size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_kpa_index_bytes(void)
{
	g_autofree char *dir = pix_test_dir("kpa");
	g_autofree char *why = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(PixKpaCache) c = pix_kpa_cache_open(dir, 256, 1000, &why, &error);
	g_assert_no_error(error);
	g_assert_null(why);
	g_assert_false(pix_kpa_cache_existed(c));
	/* 400 bytes each in files of 1000: a file moves on once past 1000 */
	for (int i = 0; i < 5; i++) {
		g_autofree char *rel = g_strdup_printf("2024/é %d.jpg", i);
		g_autofree guint8 *j = fake_jpeg(400, (guint8)i);
		g_assert_true(pix_kpa_cache_add(c, rel, j, 400, NULL, &error));
	}
	g_assert_true(pix_kpa_cache_add(c, "copy.jpg", NULL, 0, "2024/é 4.jpg", &error));
	g_assert_true(pix_kpa_cache_commit(c, &error));
	g_assert_no_error(error);

	g_autofree char *t0 = g_build_filename(dir, "thumb-0", NULL);
	g_autofree char *t1 = g_build_filename(dir, "thumb-1", NULL);
	g_autofree char *t2 = g_build_filename(dir, "thumb-2", NULL);
	g_assert_cmpint(size_of(t0), ==, 1200);     /* 0, 400, 800: past 1000 */
	g_assert_cmpint(size_of(t1), ==, 800);      /* 0, 400 */
	g_assert_cmpint(size_of(t2), ==, -1);
	g_autofree char *index = g_build_filename(dir, "thumbnailindex", NULL);
	g_autofree guint8 *b = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(index, (char **)&b, &len, NULL));
	g_assert_cmpuint(be32(b), ==, 5);           /* version */
	g_assert_cmpuint(be32(b + 4), ==, 256);     /* size */
	g_assert_cmpuint(be32(b + 8), ==, 1);       /* current file */
	g_assert_cmpuint(be32(b + 12), ==, 800);    /* current offset */
	g_assert_cmpuint(be32(b + 16), ==, 6);      /* count */
	/* the first entry, by path: "2024/é 0.jpg" in UTF-16BE, 12 units */
	g_assert_cmpuint(be32(b + 20), ==, 24);
	g_assert_cmpuint(b[24], ==, 0);
	g_assert_cmpuint(b[25], ==, '2');
	g_assert_cmpuint(b[34], ==, 0x00);
	g_assert_cmpuint(b[35], ==, 0xE9);          /* é */
	const guint8 *e = b + 24 + 24;
	g_assert_cmpuint(be32(e), ==, 0);           /* file */
	g_assert_cmpuint(be32(e + 4), ==, 0);       /* offset */
	g_assert_cmpuint(be32(e + 8), ==, 400);     /* size */
	/* every entry: copy.jpg shares the last one's bytes */
	gsize p = 20;
	guint n = 0;
	guint32 copy_at = 0, last_at = 1;
	while (p < len) {
		guint32 slen = be32(b + p);
		g_autofree char *name = g_convert((const char *)b + p + 4, slen, "UTF-8", "UTF-16BE", NULL, NULL, NULL);
		p += 4 + slen;
		guint32 file = be32(b + p), off = be32(b + p + 4);
		if (g_strcmp0(name, "copy.jpg") == 0)
			copy_at = file << 16 | off;
		if (g_strcmp0(name, "2024/é 4.jpg") == 0)
			last_at = file << 16 | off;
		p += 12;
		n++;
	}
	g_assert_cmpuint(n, ==, 6);
	g_assert_cmpuint(copy_at, ==, last_at);
	g_assert_cmpuint(last_at, ==, 1u << 16 | 400);
}

/* What KPhotoAlbum appends between full saves (entries after the header's
 * position, the header not rewritten) is read and kept; new thumbnails
 * go after the last; the old bytes stay where the old index says. */
static void test_kpa_merge(void)
{
	g_autofree char *dir = pix_test_dir("kpa");
	g_autoptr(GError) error = NULL;
	g_autofree char *why = NULL;
	{
		g_autoptr(PixKpaCache) c = pix_kpa_cache_open(dir, 192, 1 << 20, &why, &error);
		g_autofree guint8 *j = fake_jpeg(300, 1);
		g_assert_true(pix_kpa_cache_add(c, "a.jpg", j, 300, NULL, &error));
		g_assert_true(pix_kpa_cache_commit(c, &error));
	}
	/* KPhotoAlbum's incremental save: b.jpg at 300, appended */
	g_autofree char *t0 = g_build_filename(dir, "thumb-0", NULL);
	g_autofree char *index = g_build_filename(dir, "thumbnailindex", NULL);
	FILE *f = fopen(t0, "ab");
	g_autofree guint8 *jb = fake_jpeg(100, 2);
	fwrite(jb, 1, 100, f);
	fclose(f);
	f = fopen(index, "ab");
	static const guint8 entry[] = { 0, 0, 0, 10, 0, 'b', 0, '.', 0, 'j', 0, 'p', 0, 'g', 0, 0, 0, 0, 0, 0, 1, 44, 0, 0, 0, 100 };
	fwrite(entry, 1, sizeof entry, f);
	fclose(f);

	g_autoptr(PixKpaCache) c = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
	g_assert_no_error(error);
	g_assert_null(why);
	g_assert_cmpint(pix_kpa_cache_size(c), ==, 192);   /* the cache's size wins */
	g_assert_cmpuint(pix_kpa_cache_len(c), ==, 2);
	g_assert_false(pix_kpa_cache_is_dirty(c));
	g_autofree guint8 *jc = fake_jpeg(50, 3);
	g_assert_true(pix_kpa_cache_add(c, "c.jpg", jc, 50, NULL, &error));
	g_assert_true(pix_kpa_cache_rename(c, "a.jpg", "moved/a.jpg"));
	g_assert_true(pix_kpa_cache_commit(c, &error));
	g_assert_cmpint(size_of(t0), ==, 450);
	g_autofree guint8 *data = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(t0, (char **)&data, &len, NULL));
	g_assert_cmpmem(data + 300, 100, jb, 100);
	g_assert_cmpmem(data + 400, 50, jc, 50);

	g_autoptr(PixKpaCache) again = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
	g_assert_cmpuint(pix_kpa_cache_len(again), ==, 3);
	g_assert_true(pix_kpa_cache_has(again, "moved/a.jpg"));
	g_assert_false(pix_kpa_cache_has(again, "a.jpg"));
	g_assert_true(pix_kpa_cache_has(again, "b.jpg"));
}

/* A cut index: the entries before the damage are kept; an entry naming
 * bytes its file does not have is left out; both are said. */
static void test_kpa_damaged(void)
{
	g_autofree char *dir = pix_test_dir("kpa");
	g_autoptr(GError) error = NULL;
	g_autofree char *why = NULL;
	{
		g_autoptr(PixKpaCache) c = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
		for (int i = 0; i < 3; i++) {
			g_autofree char *rel = g_strdup_printf("%d.jpg", i);
			g_autofree guint8 *j = fake_jpeg(100, (guint8)i);
			g_assert_true(pix_kpa_cache_add(c, rel, j, 100, NULL, &error));
		}
		g_assert_true(pix_kpa_cache_commit(c, &error));
	}
	g_autofree char *index = g_build_filename(dir, "thumbnailindex", NULL);
	g_autofree char *b = NULL;
	gsize len;
	g_assert_true(g_file_get_contents(index, &b, &len, NULL));
	/* entries are 4 + 10 + 12 bytes: cut the third in its name */
	pix_test_write(index, b, len - 20);
	g_autoptr(PixKpaCache) c = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
	g_assert_no_error(error);
	g_assert_nonnull(strstr(why, "damaged after entry 2"));
	g_assert_cmpuint(pix_kpa_cache_len(c), ==, 2);
	g_assert_true(pix_kpa_cache_is_dirty(c));
	g_clear_pointer(&why, g_free);

	/* the second entry's offset beyond its file */
	b[20 + 26 + 4 + 10 + 4] = 0x7F;
	pix_test_write(index, b, len);
	g_autoptr(PixKpaCache) d = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
	g_assert_cmpuint(pix_kpa_cache_len(d), ==, 2);
	g_assert_cmpuint(pix_kpa_cache_n_unreadable(d), ==, 1);
	g_assert_nonnull(strstr(why, "1 of its entries"));
	g_clear_pointer(&why, g_free);

	/* another version: nothing of it read */
	b[3] = 9;
	pix_test_write(index, b, len);
	g_autoptr(PixKpaCache) v = pix_kpa_cache_open(dir, 256, 1 << 20, &why, &error);
	g_assert_cmpuint(pix_kpa_cache_len(v), ==, 0);
	g_assert_nonnull(strstr(why, "version 9"));
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/export-kpa-thumbs/index-bytes", test_kpa_index_bytes);
	g_test_add_func("/export-kpa-thumbs/merge", test_kpa_merge);
	g_test_add_func("/export-kpa-thumbs/damaged", test_kpa_damaged);
	return g_test_run();
}
