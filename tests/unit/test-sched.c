/*
 * test-sched.c: unit tests of src/sched.h, the reading order.
 *
 * pix_sched_order() sorts the items plan will have read by (device,
 * inode), then name, so the order is total and the same every scan.  The
 * tests shuffle item arrays and check the order that comes back: by
 * device and inode as unsigned 64-bit numbers (values above 2^63 exist:
 * inode numbers of some network and FUSE file systems), hard links of one
 * inode by name whatever the input order, and items equal in all three
 * (one name in two directories) left in their input order.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sched.h"
#include "testlib.h"

static PixItem *item(PixDir *dir, guint64 dev, guint64 ino, const char *name)
{
	PixItem *it = pix_item_new(PIX_ACT_ADD, dir, name);
	it->st.dev = dev;
	it->st.ino = ino;
	return it;
}

static GPtrArray *new_items(void)
{
	return g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
}

static void shuffle(GPtrArray *a)
{
	for (guint i = a->len; i > 1; i--) {
		guint j = (guint)g_test_rand_int_range(0, (gint32)i);
		gpointer t = a->pdata[i - 1];
		a->pdata[i - 1] = a->pdata[j];
		a->pdata[j] = t;
	}
}

static void assert_in_order(GPtrArray *a)
{
	for (guint i = 1; i < a->len; i++) {
		const PixItem *x = g_ptr_array_index(a, i - 1), *y = g_ptr_array_index(a, i);
		gboolean is_ordered = x->st.dev < y->st.dev ||
		                      (x->st.dev == y->st.dev && (x->st.ino < y->st.ino ||
		                       (x->st.ino == y->st.ino && strcmp(x->name, y->name) <= 0)));
		if (!is_ordered)
			g_error("items %u and %u out of order: (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %s) before "
			        "(%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %s)", i - 1, i, x->st.dev, x->st.ino,
			        x->name, y->st.dev, y->st.ino, y->name);
	}
}

static void test_order_by_dev_ino_name(void)
{
	g_autoptr(PixDir) dir = pix_dir_new("/d");
	g_autoptr(GPtrArray) a = new_items();

	for (guint i = 0; i < 500; i++) {
		g_autofree char *name = g_strdup_printf("f%03u", (guint)g_test_rand_int_range(0, 50));
		g_ptr_array_add(a, item(dir, (guint64)g_test_rand_int_range(0, 3),
		                        (guint64)g_test_rand_int_range(0, 100), name));
	}
	for (guint round = 0; round < 20; round++) {
		shuffle(a);
		pix_sched_order(a);
		g_assert_cmpuint(a->len, ==, 500);
		assert_in_order(a);
	}
}

/* Device before inode: a low inode on a later device comes after every
 * inode of an earlier device. */
static void test_device_first(void)
{
	g_autoptr(PixDir) dir = pix_dir_new("/d");
	g_autoptr(GPtrArray) a = new_items();

	g_ptr_array_add(a, item(dir, 2, 1, "b"));
	g_ptr_array_add(a, item(dir, 1, 1000, "c"));
	g_ptr_array_add(a, item(dir, 1, 5, "a"));
	pix_sched_order(a);
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 0))->name, ==, "a");
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 1))->name, ==, "c");
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 2))->name, ==, "b");
}

/* Unsigned comparison: a signed one, or a difference truncated to int,
 * misorders numbers that differ in their high bits. */
static void test_large_numbers(void)
{
	g_autoptr(PixDir) dir = pix_dir_new("/d");
	g_autoptr(GPtrArray) a = new_items();
	static const guint64 inos[] = {
		G_GUINT64_CONSTANT(0xffffffffffffffff), G_GUINT64_CONSTANT(0x8000000000000000), 1,
		G_GUINT64_CONSTANT(0x100000000), G_GUINT64_CONSTANT(0x7fffffffffffffff), 0xffffffff,
		G_GUINT64_CONSTANT(0x100000001), 2,
	};

	for (guint i = 0; i < G_N_ELEMENTS(inos); i++)
		g_ptr_array_add(a, item(dir, G_GUINT64_CONSTANT(0x8000000000000001), inos[i], "x"));
	g_ptr_array_add(a, item(dir, 1, G_GUINT64_CONSTANT(0xffffffffffffffff), "first"));
	for (guint round = 0; round < 10; round++) {
		shuffle(a);
		pix_sched_order(a);
		assert_in_order(a);
		g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 0))->name, ==, "first");
		g_assert_cmpuint(((PixItem *)g_ptr_array_index(a, 1))->st.ino, ==, 1);
		g_assert_cmpuint(((PixItem *)g_ptr_array_index(a, a->len - 1))->st.ino, ==,
		                 G_GUINT64_CONSTANT(0xffffffffffffffff));
	}
}

/* Hard links of one inode come out in name order, whatever order plan
 * found them in, so every scan reads them the same way. */
static void test_hard_links_by_name(void)
{
	g_autoptr(PixDir) dir = pix_dir_new("/d");
	static const char *const names[] = { "IMG_2.JPG", "copy of IMG_2.JPG", "IMG_2 (1).JPG", "z", "A" };

	for (guint round = 0; round < 30; round++) {
		g_autoptr(GPtrArray) a = new_items();
		for (guint i = 0; i < G_N_ELEMENTS(names); i++)
			g_ptr_array_add(a, item(dir, 7, 4242, names[i]));
		g_ptr_array_add(a, item(dir, 7, 4241, "before"));
		g_ptr_array_add(a, item(dir, 7, 4243, "after"));
		shuffle(a);
		pix_sched_order(a);
		static const char *const want[] = { "before", "A", "IMG_2 (1).JPG", "IMG_2.JPG",
		                                    "copy of IMG_2.JPG", "z", "after" };
		for (guint i = 0; i < G_N_ELEMENTS(want); i++)
			g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, i))->name, ==, want[i]);
	}
}

/* Items equal in device, inode and name (one name in two directories,
 * hard-linked) keep their input order: the sort is stable. */
static void test_stable_for_equal_keys(void)
{
	g_autoptr(PixDir) d1 = pix_dir_new("/one");
	g_autoptr(PixDir) d2 = pix_dir_new("/two");
	g_autoptr(PixDir) d3 = pix_dir_new("/three");
	g_autoptr(GPtrArray) a = new_items();

	g_ptr_array_add(a, item(d2, 1, 10, "same.jpg"));
	g_ptr_array_add(a, item(d1, 1, 20, "other.jpg"));
	g_ptr_array_add(a, item(d3, 1, 10, "same.jpg"));
	g_ptr_array_add(a, item(d1, 1, 10, "same.jpg"));
	g_ptr_array_add(a, item(d1, 1, 5, "early.jpg"));
	pix_sched_order(a);
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 0))->name, ==, "early.jpg");
	g_assert_true(((PixItem *)g_ptr_array_index(a, 1))->dir == d2);
	g_assert_true(((PixItem *)g_ptr_array_index(a, 2))->dir == d3);
	g_assert_true(((PixItem *)g_ptr_array_index(a, 3))->dir == d1);
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 4))->name, ==, "other.jpg");
}

static void test_empty_and_single(void)
{
	g_autoptr(PixDir) dir = pix_dir_new("/d");
	g_autoptr(GPtrArray) a = new_items();

	pix_sched_order(a);
	g_assert_cmpuint(a->len, ==, 0);
	g_ptr_array_add(a, item(dir, 1, 1, "only"));
	pix_sched_order(a);
	g_assert_cmpuint(a->len, ==, 1);
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 0))->name, ==, "only");
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/sched/order-by-dev-ino-name", test_order_by_dev_ino_name);
	g_test_add_func("/sched/device-first", test_device_first);
	g_test_add_func("/sched/large-numbers", test_large_numbers);
	g_test_add_func("/sched/hard-links-by-name", test_hard_links_by_name);
	g_test_add_func("/sched/stable-for-equal-keys", test_stable_for_equal_keys);
	g_test_add_func("/sched/empty-and-single", test_empty_and_single);
	return g_test_run();
}
