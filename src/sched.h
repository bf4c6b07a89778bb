/*
 * sched.h: the order in which planned files are read, for the device they
 * are on.
 *
 * Reading in on-disk order is what keeps a disk streaming instead of
 * seeking; how many reads to keep in flight depends on the device.  The
 * device class of a file system comes from sysfs, seen through partitions,
 * device-mapper and md devices (the class of their slaves) and loop devices
 * (the class of the device holding the backing file):
 *
 *   rotational  a spinning disk: read by one or two readers, in the order
 *               of the physical offset of each file's first extent (FIEMAP)
 *   ssd         no seek cost: many reads in flight, in inode order
 *   virtual     a virtual disk (virtio, Xen) or memory: its rotational flag
 *               says nothing about the storage behind it; many reads in
 *               flight, in inode order
 *   network     NFS, CIFS/SMB, sshfs and other FUSE, 9p, Ceph... (statfs
 *               f_type): every request pays a round trip; many reads in
 *               flight, with blocking readers (io_uring's opens wait
 *               there in the kernel's workers, one after another)
 *   unknown     no block device and not a network file system (tmpfs,
 *               overlay): treated as ssd
 *
 * Thread-safety: pure functions, but for the FIEMAP ioctls.
 */
#ifndef PIX_SCHED_H
#define PIX_SCHED_H

#include "item.h"
#include "queue.h"

typedef enum {
	PIX_DEVICE_UNKNOWN,
	PIX_DEVICE_SSD,
	PIX_DEVICE_VIRTUAL,
	PIX_DEVICE_NETWORK,
	PIX_DEVICE_ROTATIONAL,
} PixDeviceClass;

/* "unknown", "ssd", "virtual", "network", "rotational" (static). */
const char *pix_device_class_name(PixDeviceClass c);
/* The class for one of those names; FALSE for anything else. */
gboolean pix_device_class_parse(const char *name, PixDeviceClass *out);

/*
 * The class of block device `dev` (an st_dev), read from the sysfs tree at
 * `sysfs_root` ("/sys"; tests pass a tree of their own).  *name, when
 * non-NULL, gets the kernel's name of the device the class was read from
 * ("sda", "vda"), or NULL (transfer full).
 */
PixDeviceClass pix_sched_device_class(guint64 dev, const char *sysfs_root, char **name);

/*
 * TRUE if statfs f_type `magic` is a network file system: NFS, CIFS/SMB,
 * FUSE (sshfs, rclone, s3fs...), 9p, Ceph, AFS, Coda, NCP, OCFS2, GFS2,
 * Lustre, GlusterFS (FUSE).  *name gets its short name ("nfs", "fuse").
 */
gboolean pix_sched_is_network_fs(guint64 magic, const char **name);

/*
 * The class of the file system holding `path`: network when statfs says
 * so, otherwise the block device's class (pix_sched_device_class() of its
 * st_dev).  *name as there, or the file system's short name for a network
 * one.
 */
PixDeviceClass pix_sched_path_class(const char *path, const char *sysfs_root, char **name);

/* Whether readers of the class read in batches through io_uring (each
 * keeps a batch of opens and reads in the kernel at once): where the
 * kernel allows it (pix_uring_is_available()), but on a spinning disk
 * (one file at a time, in disk order) and a network file system (whose
 * opens through io_uring wait one after another). */
gboolean pix_sched_is_uring(PixDeviceClass c);

/* Reader threads that suit the class, for a scan with thumbnails or not. */
guint pix_sched_readers(PixDeviceClass c, gboolean is_thumbnails);

/*
 * Sorts `items` (PixItem*) into reading order for a device of class `c`:
 * rotational, by the physical offset of each file's first extent (one
 * FIEMAP ioctl per file, without syncing; files it cannot map go last, in
 * inode order); otherwise by device, then inode.  Ties by name, so hard
 * links come out in the same order every scan.
 */
void pix_sched_order(GPtrArray *items, PixDeviceClass c);

/*
 * Hands `items` (PixItem*, planned for reading) to the readers' queue `out`
 * in pix_sched_order() order, counts them (PIX_N_TO_READ, PIX_BYTES_TO_READ)
 * and empties `items`.  May block while `out` is full.
 */
void pix_sched_push(GPtrArray *items, PixDeviceClass c, PixQueue *out);

#endif
