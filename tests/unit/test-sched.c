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

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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
		pix_sched_order(a, PIX_DEVICE_SSD);
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
	pix_sched_order(a, PIX_DEVICE_SSD);
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
		pix_sched_order(a, PIX_DEVICE_SSD);
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
		pix_sched_order(a, PIX_DEVICE_SSD);
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
	pix_sched_order(a, PIX_DEVICE_SSD);
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

	pix_sched_order(a, PIX_DEVICE_SSD);
	g_assert_cmpuint(a->len, ==, 0);
	g_ptr_array_add(a, item(dir, 1, 1, "only"));
	pix_sched_order(a, PIX_DEVICE_SSD);
	g_assert_cmpuint(a->len, ==, 1);
	g_assert_cmpstr(((PixItem *)g_ptr_array_index(a, 0))->name, ==, "only");
}

/* --- device classes, from a sysfs tree of our own --- */

/* Makes `rel` (a directory under root) with attribute files "name=value". */
static void sys_node(const char *root, const char *rel, ...)
{
	g_autofree char *dir = g_build_filename(root, rel, NULL);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	va_list ap;
	va_start(ap, rel);
	for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *)) {
		g_auto(GStrv) kv = g_strsplit(a, "=", 2);
		g_autofree char *path = g_build_filename(dir, kv[0], NULL);
		g_autofree char *parent = g_path_get_dirname(path);
		g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
		g_autofree char *text = g_strconcat(kv[1], "\n", NULL);
		pix_test_write(path, text, strlen(text));
	}
	va_end(ap);
}

/* root/dev/block/MAJ:MIN -> the node, as sysfs links them. */
static void sys_dev(const char *root, guint maj, guint min, const char *rel)
{
	g_autofree char *blk = g_build_filename(root, "dev", "block", NULL);
	g_assert_cmpint(g_mkdir_with_parents(blk, 0755), ==, 0);
	g_autofree char *link = g_strdup_printf("%s/%u:%u", blk, maj, min);
	g_autofree char *target = g_build_filename(root, rel, NULL);
	g_assert_cmpint(symlink(target, link), ==, 0);
}

/* slaves/NAME -> the node, as dm and md link their parts. */
static void sys_slave(const char *root, const char *rel, const char *slave_rel)
{
	g_autofree char *dir = g_build_filename(root, rel, "slaves", NULL);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_autofree char *base = g_path_get_basename(slave_rel);
	g_autofree char *link = g_build_filename(dir, base, NULL);
	g_autofree char *target = g_build_filename(root, slave_rel, NULL);
	g_assert_cmpint(symlink(target, link), ==, 0);
}

static void expect_class(const char *root, guint maj, guint min, PixDeviceClass want, const char *want_name)
{
	g_autofree char *name = NULL;
	PixDeviceClass c = pix_sched_device_class((guint64)makedev(maj, min), root, &name);
	if (c != want || g_strcmp0(name, want_name) != 0)
		g_error("%u:%u is %s on %s, want %s on %s", maj, min, pix_device_class_name(c), name,
		        pix_device_class_name(want), want_name);
}

static void test_device_classes(void)
{
	/* the fake devices have majors above 3000, clear of the real one of
	 * the test directory, which this tree also maps */
	g_autofree char *root = pix_test_dir("sysfs");
	const char *sda = "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
	const char *nvme = "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1";
	const char *vda = "devices/pci0000:00/0000:00:02.0/virtio1/block/vda";

	sys_node(root, sda, "queue/rotational=1", NULL);
	sys_node(root, "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1",
	         "partition=1", NULL);
	sys_node(root, nvme, "queue/rotational=0", NULL);
	sys_node(root, "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1/nvme0n1p2", "partition=2", NULL);
	sys_node(root, vda, "queue/rotational=1", NULL);
	sys_node(root, "devices/virtual/block/zram0", "queue/rotational=0", NULL);
	sys_node(root, "devices/virtual/block/dm-0", "queue/rotational=0", NULL);
	sys_slave(root, "devices/virtual/block/dm-0",
	          "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1/nvme0n1p2");
	sys_node(root, "devices/virtual/block/md0", "queue/rotational=0", NULL);
	sys_slave(root, "devices/virtual/block/md0", "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1");
	sys_slave(root, "devices/virtual/block/md0",
	          "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1");

	/* a loop device whose backing file lies on the NVMe disk: the test
	 * directory's own device is mapped to nvme0n1 in this tree */
	struct stat st;
	g_assert_cmpint(stat(root, &st), ==, 0);
	sys_dev(root, major(st.st_dev), minor(st.st_dev), nvme);
	g_autofree char *backing = g_build_filename(root, "disk.img", NULL);
	pix_test_write(backing, "x", 1);
	g_autofree char *loop_attr = g_strconcat("loop/backing_file=", backing, NULL);
	sys_node(root, "devices/virtual/block/loop0", "queue/rotational=1", loop_attr, NULL);
	sys_node(root, "devices/virtual/block/loop1", "queue/rotational=1", NULL);

	sys_dev(root, 3008, 0, sda);
	sys_dev(root, 3008, 1, "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1");
	sys_dev(root, 3259, 2, "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1/nvme0n1p2");
	sys_dev(root, 3254, 0, vda);
	sys_dev(root, 3252, 0, "devices/virtual/block/zram0");
	sys_dev(root, 3253, 0, "devices/virtual/block/dm-0");
	sys_dev(root, 3009, 0, "devices/virtual/block/md0");
	sys_dev(root, 3007, 0, "devices/virtual/block/loop0");
	sys_dev(root, 3007, 1, "devices/virtual/block/loop1");

	expect_class(root, 3008, 0, PIX_DEVICE_ROTATIONAL, "sda");
	expect_class(root, 3008, 1, PIX_DEVICE_ROTATIONAL, "sda");          /* a partition: its disk */
	expect_class(root, 3259, 2, PIX_DEVICE_SSD, "nvme0n1");
	expect_class(root, 3254, 0, PIX_DEVICE_VIRTUAL, "vda");           /* virtio says rotational=1 */
	expect_class(root, 3252, 0, PIX_DEVICE_VIRTUAL, "zram0");
	expect_class(root, 3253, 0, PIX_DEVICE_SSD, "dm-0");              /* dm on an NVMe partition */
	expect_class(root, 3009, 0, PIX_DEVICE_ROTATIONAL, "md0");          /* an SSD mirrored with a disk */
	expect_class(root, 3007, 0, PIX_DEVICE_SSD, "nvme0n1");             /* loop: its backing file's disk */
	expect_class(root, 3007, 1, PIX_DEVICE_VIRTUAL, "loop1");           /* loop without a backing file */
	expect_class(root, 3000, 42, PIX_DEVICE_UNKNOWN, NULL);             /* tmpfs and the like */
}

/* A loop device whose backing file is on the loop device itself (or any
 * cycle) must not recurse for ever. */
static void test_device_class_cycle(void)
{
	g_autofree char *root = pix_test_dir("sysfs-cycle");
	struct stat st;
	g_assert_cmpint(stat(root, &st), ==, 0);
	g_autofree char *backing = g_build_filename(root, "self.img", NULL);
	pix_test_write(backing, "x", 1);
	g_autofree char *attr = g_strconcat("loop/backing_file=", backing, NULL);
	sys_node(root, "devices/virtual/block/loop9", attr, NULL);
	sys_dev(root, major(st.st_dev), minor(st.st_dev), "devices/virtual/block/loop9");
	g_autofree char *name = NULL;
	g_assert_cmpint(pix_sched_device_class((guint64)st.st_dev, root, &name), ==, PIX_DEVICE_UNKNOWN);
}

/* The physical offset of a file's first extent, asked independently. */
static guint64 physical(const char *path)
{
	struct {
		struct fiemap map;
		struct fiemap_extent extents[1];
	} req = { .map = { .fm_length = FIEMAP_MAX_OFFSET, .fm_extent_count = 1 } };
	int fd = open(path, O_RDONLY);
	g_assert_cmpint(fd, >=, 0);
	int rc = ioctl(fd, FS_IOC_FIEMAP, &req.map);
	close(fd);
	if (rc != 0 || req.map.fm_mapped_extents == 0)
		return G_MAXUINT64;
	return req.extents[0].fe_physical;
}

/* On a rotating disk, files come out in the order of their data on disk,
 * not of their inode numbers or names. */
static void test_rotational_order(void)
{
	g_autofree char *dir_path = pix_test_dir("fiemap");
	g_autoptr(PixDir) dir = pix_dir_new(dir_path);
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free);
	guint8 block[8192];
	memset(block, 0x5a, sizeof block);

	/* written in an order unlike their names, each synced so the
	 * allocator places its data before the next */
	for (int i = 0; i < 12; i++) {
		g_autofree char *name = g_strdup_printf("f%02d", (i * 7) % 12);
		g_autofree char *path = g_build_filename(dir_path, name, NULL);
		pix_test_write(path, block, sizeof block);
		int fd = open(path, O_RDONLY);
		fsync(fd);
		close(fd);
		if (physical(path) == G_MAXUINT64) {
			g_test_skip("this file system does not map extents (FIEMAP)");
			return;
		}
		struct stat st;
		g_assert_cmpint(stat(path, &st), ==, 0);
		PixItem *it = pix_item_new(PIX_ACT_ADD, dir, name);
		pix_stat_from(&it->st, &st);
		g_ptr_array_add(a, it);
	}
	pix_sched_order(a, PIX_DEVICE_ROTATIONAL);
	guint64 last = 0;
	for (guint i = 0; i < a->len; i++) {
		g_autofree char *path = pix_item_path(g_ptr_array_index(a, i));
		guint64 ph = physical(path);
		g_assert_cmpuint(ph, >=, last);
		last = ph;
	}
}

/* Readers per class: more through io_uring with thumbnails, where each
 * reader holds one large file at a time and the hashers' MD5 lanes want
 * several streams. */
static void test_readers(void)
{
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_ROTATIONAL, FALSE), ==, 2);
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_ROTATIONAL, TRUE), ==, 2);
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_NETWORK, FALSE), ==, 16);
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_NETWORK, TRUE), ==, 16);
	gboolean is_uring = pix_sched_is_uring(PIX_DEVICE_SSD);
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_SSD, FALSE), ==, is_uring ? 4 : 16);
	g_assert_cmpuint(pix_sched_readers(PIX_DEVICE_SSD, TRUE), ==, 16);
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
	g_test_add_func("/sched/device-classes", test_device_classes);
	g_test_add_func("/sched/device-class-cycle", test_device_class_cycle);
	g_test_add_func("/sched/rotational-order-is-physical", test_rotational_order);
	g_test_add_func("/sched/readers", test_readers);
	return g_test_run();
}
