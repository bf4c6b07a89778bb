/*
 * sched.c: device classes and reading order (see sched.h).
 *
 * Reads sysfs (the device's queue/rotational, partition, slaves and
 * loop/backing_file entries) and, for rotating disks, each file's extent
 * map (FIEMAP); writes nothing but the caller's array.  Runs on plan's
 * thread, and on the main thread at start-up for the roots' classes.
 *
 * Invariants:
 *  1. The order is total and deterministic for equal keys: then (dev, ino),
 *     then name, so two hard links of one inode come out in the same order
 *     every scan.
 *  2. Following partitions, slaves and loop backing files is bounded
 *     (MAX_DEPTH), whatever cycles a sysfs tree contains.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sched.h"
#include "log.h"
#include "path.h"
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_DEPTH 8
#define FIEMAP_EXTENTS 16    /* extents asked for in the one ioctl per file */

static const char *const class_names[] = {
	[PIX_DEVICE_UNKNOWN] = "unknown",
	[PIX_DEVICE_SSD] = "ssd",
	[PIX_DEVICE_VIRTUAL] = "virtual",
	[PIX_DEVICE_NETWORK] = "network",
	[PIX_DEVICE_ROTATIONAL] = "rotational",
};

const char *pix_device_class_name(PixDeviceClass c)
{
	return class_names[c];
}

gboolean pix_device_class_parse(const char *name, PixDeviceClass *out)
{
	for (guint i = 0; i < G_N_ELEMENTS(class_names); i++) {
		if (g_strcmp0(name, class_names[i]) == 0) {
			*out = (PixDeviceClass)i;
			return TRUE;
		}
	}
	return FALSE;
}

gboolean pix_sched_is_uring(PixDeviceClass c)
{
	return c != PIX_DEVICE_ROTATIONAL && c != PIX_DEVICE_NETWORK && pix_uring_is_available();
}

guint pix_sched_readers(PixDeviceClass c, gboolean is_thumbnails)
{
	/* a disk head serves one stream well and two tolerably; flash, the
	 * storage behind virtual disks and network file systems want a deep
	 * queue.  On sshfs with 2 ms round trips 16 readers read 1,000 small
	 * files in 1.2-1.3 s, 32 in 1.9-2.0 s, 64 in 2.3-2.5 s: more only
	 * queue up in the one SSH connection */
	if (c == PIX_DEVICE_ROTATIONAL)
		return 2;
	/* through io_uring each reader has a batch of 16 in the kernel at
	 * once, so 4 keep 64 in flight; more threads only switched more
	 * (virtio disk, 2 cores, against 16 readers: 200,000 files of 1.3 KB
	 * 0.93x warm and 0.89x cold, a card of 5 MB JPEGs 0.91x cold and
	 * 1.06x warm; 2 and 4 readers alike within 5%).  With thumbnails a
	 * reader holds one large file at a time, and each hasher runs the
	 * MD5 of as many side by side as have bytes ready: 4 readers left
	 * the lanes mostly 1 or 2 streams wide, 8 read 50 RAW files of
	 * 18 MB in 1.53 s against 1.64 (0.93x, 6% less processor time), and
	 * 16 (in reads of 512 KiB, cmd-run.c, and spread by count,
	 * read.c) run them 5 to 8 wide where 8 ran 2 to 5: 0.88x the time
	 * and 0.94x the processor time, camera JPEGs 0.98x */
	if (pix_sched_is_uring(c) && is_thumbnails)
		return 16;
	if (pix_sched_is_uring(c))
		return 4;
	return 16;
}

static const struct {
	guint64 magic;
	const char *name;
} network_fs[] = {
	{ 0x6969, "nfs" },
	{ 0xff534d42, "cifs" },
	{ 0xfe534d42, "smb2" },
	{ 0x517b, "smb" },
	{ 0x65735546, "fuse" },       /* sshfs, rclone, s3fs, glusterfs... */
	{ 0x01021997, "9p" },
	{ 0x00c36400, "ceph" },
	{ 0x5346414f, "afs" },
	{ 0x6b414653, "afs" },        /* kAFS */
	{ 0x73757245, "coda" },
	{ 0x564c, "ncp" },
	{ 0x7461636f, "ocfs2" },
	{ 0x01161970, "gfs2" },
	{ 0x0bd00bd0, "lustre" },
	{ 0xbacbacbc, "vboxsf" },
};

gboolean pix_sched_is_network_fs(guint64 magic, const char **name)
{
	for (guint i = 0; i < G_N_ELEMENTS(network_fs); i++) {
		if (network_fs[i].magic == (magic & 0xffffffffu)) {
			if (name != NULL)
				*name = network_fs[i].name;
			return TRUE;
		}
	}
	return FALSE;
}

PixDeviceClass pix_sched_path_class(const char *path, const char *sysfs_root, char **name)
{
	struct statfs sfs;
	struct stat st;
	const char *fs;

	if (name != NULL)
		*name = NULL;
	if (statfs(path, &sfs) == 0 && pix_sched_is_network_fs((guint64)sfs.f_type, &fs)) {
		if (name != NULL)
			*name = g_strdup(fs);
		return PIX_DEVICE_NETWORK;
	}
	if (stat(path, &st) != 0)
		return PIX_DEVICE_UNKNOWN;
	return pix_sched_device_class((guint64)st.st_dev, sysfs_root, name);
}

/* The first line of a sysfs attribute, or NULL (transfer full). */
static char *read_attr(const char *dir, const char *attr)
{
	g_autofree char *path = g_build_filename(dir, attr, NULL);
	char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	return g_strstrip(text);
}

static PixDeviceClass class_of_dev(guint64 dev, const char *root, int depth, char **name);

/* Combines the classes of a device's parts: one spinning disk makes the
 * whole spin; otherwise one virtual makes it virtual. */
static PixDeviceClass combine(PixDeviceClass a, PixDeviceClass b)
{
	return MAX(a, b);   /* unknown < ssd < virtual < network < rotational */
}

static PixDeviceClass class_of_node(const char *node_in, const char *root, int depth, char **name)
{
	g_autofree char *node = g_strdup(node_in);
	g_autofree char *partition = read_attr(node, "partition");
	if (depth > MAX_DEPTH)
		return PIX_DEVICE_UNKNOWN;
	if (partition != NULL) {
		/* a partition: the disk is the directory above */
		char *parent = g_path_get_dirname(node);
		g_free(node);
		node = parent;
	}
	if (name != NULL) {
		g_free(*name);
		*name = g_path_get_basename(node);
	}

	/* a loop device is as fast as what holds its backing file */
	g_autofree char *backing = read_attr(node, "loop/backing_file");
	struct stat st;
	if (backing != NULL && backing[0] == '/' && stat(backing, &st) == 0)
		return class_of_dev((guint64)st.st_dev, root, depth + 1, name);

	/* device-mapper and md devices: their slaves decide */
	g_autofree char *slaves_dir = g_build_filename(node, "slaves", NULL);
	GDir *slaves = g_dir_open(slaves_dir, 0, NULL);
	if (slaves != NULL) {
		PixDeviceClass c = PIX_DEVICE_UNKNOWN;
		gboolean has_slaves = FALSE;
		const char *entry;
		while ((entry = g_dir_read_name(slaves)) != NULL) {
			g_autofree char *link = g_build_filename(slaves_dir, entry, NULL);
			g_autofree char *real = realpath(link, NULL);
			if (real != NULL) {
				c = combine(c, class_of_node(real, root, depth + 1, NULL));
				has_slaves = TRUE;
			}
		}
		g_dir_close(slaves);
		if (has_slaves)
			return c;
	}

	/* virtual disks report rotational=1 whatever the host has */
	if (strstr(node, "/virtio") != NULL || strstr(node, "/xen") != NULL || strstr(node, "/vbd-") != NULL ||
	    strstr(node, "/devices/virtual/") != NULL)
		return PIX_DEVICE_VIRTUAL;

	g_autofree char *rotational = read_attr(node, "queue/rotational");
	if (rotational == NULL)
		return PIX_DEVICE_UNKNOWN;
	return strcmp(rotational, "1") == 0 ? PIX_DEVICE_ROTATIONAL : PIX_DEVICE_SSD;
}

static PixDeviceClass class_of_dev(guint64 dev, const char *root, int depth, char **name)
{
	g_autofree char *link = g_strdup_printf("%s/dev/block/%u:%u", root, major((dev_t)dev), minor((dev_t)dev));
	g_autofree char *node = realpath(link, NULL);
	if (node == NULL)
		return PIX_DEVICE_UNKNOWN;   /* no block device: tmpfs, NFS, btrfs subvolumes */
	return class_of_node(node, root, depth, name);
}

PixDeviceClass pix_sched_device_class(guint64 dev, const char *sysfs_root, char **name)
{
	if (name != NULL)
		*name = NULL;
	return class_of_dev(dev, sysfs_root, 0, name);
}

/* The physical offset of the file's first extent, or G_MAXUINT64. */
static guint64 first_physical(const char *path)
{
	struct {
		struct fiemap map;
		struct fiemap_extent extents[FIEMAP_EXTENTS];
	} req;
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd = pix_path_open(path, flags | O_NOATIME);
	guint64 physical = G_MAXUINT64;

	if (fd < 0 && errno == EPERM)
		fd = pix_path_open(path, flags);
	if (fd < 0)
		return physical;
	memset(&req, 0, sizeof req);
	req.map.fm_length = FIEMAP_MAX_OFFSET;
	req.map.fm_extent_count = FIEMAP_EXTENTS;
	req.map.fm_flags = 0;   /* no FIEMAP_FLAG_SYNC: never force writeback */
	if (ioctl(fd, FS_IOC_FIEMAP, &req.map) == 0 && req.map.fm_mapped_extents > 0)
		physical = req.extents[0].fe_physical;
	close(fd);
	return physical;
}

typedef struct {
	PixItem *item;
	guint64 physical;
} Keyed;

static int compare_keyed(gconstpointer a, gconstpointer b)
{
	const Keyed *x = a, *y = b;
	if (x->physical != y->physical)
		return x->physical < y->physical ? -1 : 1;
	if (x->item->st.dev != y->item->st.dev)
		return x->item->st.dev < y->item->st.dev ? -1 : 1;
	if (x->item->st.ino != y->item->st.ino)
		return x->item->st.ino < y->item->st.ino ? -1 : 1;
	return strcmp(x->item->name, y->item->name);
}

void pix_sched_order(GPtrArray *items, PixDeviceClass c)
{
	g_autoptr(GArray) keyed = g_array_sized_new(FALSE, FALSE, sizeof(Keyed), items->len);

	for (guint i = 0; i < items->len; i++) {
		Keyed k = { .item = g_ptr_array_index(items, i), .physical = 0 };
		if (c == PIX_DEVICE_ROTATIONAL) {
			g_autofree char *path = pix_item_path(k.item);
			k.physical = first_physical(path);
		}
		g_array_append_val(keyed, k);
	}
	g_array_sort(keyed, compare_keyed);
	for (guint i = 0; i < items->len; i++)
		g_ptr_array_index(items, i) = g_array_index(keyed, Keyed, i).item;
}

void pix_sched_push(GPtrArray *items, PixDeviceClass c, PixQueue *out)
{
	pix_sched_order(items, c);
	for (guint i = 0; i < items->len; i++) {
		PixItem *item = g_ptr_array_index(items, i);
		pix_count_add(PIX_N_TO_READ, 1);
		pix_count_add(PIX_BYTES_TO_READ, item->st.size_bytes);
		g_ptr_array_index(items, i) = NULL;   /* the readers own it now */
		pix_queue_push(out, item);
	}
	g_ptr_array_set_size(items, 0);
}
