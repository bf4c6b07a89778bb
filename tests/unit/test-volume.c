/*
 * test-volume.c: the mount table (volume.c) from mountinfo texts of the
 * kinds a library lives on: a USB disk and a camera card by UUID, a file
 * system with only a label, NFS, CIFS and sshfs by source, tmpfs and an
 * unprobeable root by mount point, btrfs subvolumes, a bind mount of a
 * subdirectory, escaped names, and the same disk at two places.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "volume.h"

#include <sys/sysmacros.h>

static const char *const mountinfo =
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	"60 27 8:17 / /media/me/PHOTOS\\040DISK rw,nosuid - ext4 /dev/sdb1 rw\n"
	"61 27 8:33 / /media/me/CARD rw - vfat /dev/sdc1 rw,fmask=0022\n"
	"62 27 8:49 / /media/me/old rw - ext2 /dev/sdd1 rw\n"
	"63 27 0:50 / /mnt/nas rw - nfs4 nas.local:/export/photos rw,vers=4.2\n"
	"64 27 0:51 / /mnt/share rw - cifs //server/share rw\n"
	"65 27 0:52 / /mnt/ssh rw,nosuid shared:5 - fuse.sshfs me@host:/srv/pics rw,user_id=0\n"
	"66 27 0:23 / /tmp rw - tmpfs tmpfs rw\n"
	"67 27 0:53 / /home rw - btrfs /dev/sde1 rw,subvolid=257,subvol=/@home\n"
	"68 27 0:54 / /srv rw - btrfs /dev/sde1 rw,subvolid=258,subvol=/@srv\n"
	"69 27 8:17 /2024 /srv/year rw - ext4 /dev/sdb1 rw\n"
	"70 27 0:55 / /mnt/fat rw - fuse fusefat rw,user_id=0\n"
	"garbage line\n";

static const char *const probe =
	"/dev/sdb1\t11111111-2222-3333-4444-555555555555\tPHOTOS DISK\n"
	"/dev/sdc1\t1234-ABCD\tCARD\n"
	"/dev/sdd1\t\tOLDDISK\n"
	"/dev/sde1\taaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee\t\n";

static PixMounts *table(void)
{
	return pix_mounts_parse(mountinfo, probe);
}

static void test_identities(void)
{
	g_autoptr(GPtrArray) all = NULL;
	PixMounts *m = table();
	char *rel = NULL;

	/* a disk by UUID, its mount point unescaped */
	const PixVolume *v = pix_mounts_volume_of(m, "/media/me/PHOTOS DISK/2023/trip", makedev(8, 17), &rel);
	g_assert_nonnull(v);
	g_assert_cmpint(v->kind, ==, PIX_VOLUME_UUID);
	g_assert_cmpstr(v->ident, ==, "11111111-2222-3333-4444-555555555555");
	g_assert_cmpstr(v->label, ==, "PHOTOS DISK");
	g_assert_cmpstr(v->fstype, ==, "ext4");
	g_assert_cmpstr(rel, ==, "2023/trip");
	g_free(rel);

	/* a card: its serial */
	v = pix_mounts_volume_of(m, "/media/me/CARD/DCIM", makedev(8, 33), &rel);
	g_assert_cmpstr(v->ident, ==, "1234-ABCD");
	g_assert_cmpstr(rel, ==, "DCIM");
	g_free(rel);

	/* no UUID: the label */
	v = pix_mounts_find(m, PIX_VOLUME_LABEL, "OLDDISK");
	g_assert_nonnull(v);
	g_assert_cmpstr(v->mount_point, ==, "/media/me/old");

	/* network and FUSE shares: the mount source */
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_SOURCE, "nas.local:/export/photos"));
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_SOURCE, "//server/share"));
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_SOURCE, "me@host:/srv/pics"));

	/* nothing stable: type, source and mount point */
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_MOUNT, "tmpfs:tmpfs:/tmp"));
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_MOUNT, "fuse:fusefat:/mnt/fat"));
	/* a device not in the probe table (here: not readable) */
	v = pix_mounts_volume_of(m, "/etc", makedev(254, 0), &rel);
	g_assert_cmpint(v->kind, ==, PIX_VOLUME_MOUNT);
	g_assert_cmpstr(v->ident, ==, "ext4:/dev/vda:/");
	g_assert_cmpstr(rel, ==, "etc");
	g_free(rel);

	/* btrfs: each subvolume a volume of its own */
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_UUID, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee:subvolid=257"));
	g_assert_nonnull(pix_mounts_find(m, PIX_VOLUME_UUID, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee:subvolid=258"));

	/* one entry per identity: sdb1 is mounted twice */
	all = pix_mounts_volumes(m);
	g_assert_cmpuint(all->len, ==, 11);
	pix_mounts_free(m);
}

/* The same disk seen through a bind mount of a subdirectory: the same
 * relative paths, and the whole mount is the one that shows it. */
static void test_bind_mount(void)
{
	PixMounts *m = table();
	char *rel = NULL;

	/* /srv/year is /2024 of the disk: below /srv, the longest mount point
	 * with the path's device wins (not /srv, another device) */
	const PixVolume *v = pix_mounts_volume_of(m, "/srv/year/05", makedev(8, 17), &rel);
	g_assert_nonnull(v);
	g_assert_cmpstr(v->ident, ==, "11111111-2222-3333-4444-555555555555");
	g_assert_cmpstr(rel, ==, "2024/05");
	g_assert_cmpstr(v->mount_root, ==, "2024");
	/* the same directory through the whole disk */
	const PixVolume *whole = pix_mounts_find(m, PIX_VOLUME_UUID, v->ident);
	g_assert_cmpstr(whole->mount_point, ==, "/media/me/PHOTOS DISK");
	g_autofree char *path = pix_volume_path(whole, rel);
	g_assert_cmpstr(path, ==, "/media/me/PHOTOS DISK/2024/05");
	/* the bind mount shows only its part */
	g_autofree char *inside = pix_volume_path(v, "2024/05/a");
	g_assert_cmpstr(inside, ==, "/srv/year/05/a");
	g_assert_null(pix_volume_path(v, "2023/trip"));
	g_assert_null(pix_volume_path(v, "2024x"));
	g_autofree char *top = pix_volume_path(v, "2024");
	g_assert_cmpstr(top, ==, "/srv/year");
	g_free(rel);

	/* a path on the device but under no mount of it */
	g_assert_null(pix_mounts_volume_of(m, "/elsewhere", makedev(8, 17), NULL));
	/* a device no mount has */
	g_assert_null(pix_mounts_volume_of(m, "/media/me/CARD", makedev(9, 9), NULL));
	pix_mounts_free(m);
}

static void test_paths(void)
{
	PixMounts *m = table();
	const PixVolume *root = pix_mounts_find(m, PIX_VOLUME_MOUNT, "ext4:/dev/vda:/");
	g_autofree char *a = pix_volume_path(root, "");
	g_autofree char *b = pix_volume_path(root, "home/me");
	g_autofree char *c = pix_volume_rel_join("", "x");
	g_autofree char *d = pix_volume_rel_join("a/b", "x");
	g_autofree char *e = pix_volume_rel_join("a", "");
	g_assert_cmpstr(a, ==, "/");
	g_assert_cmpstr(b, ==, "/home/me");
	g_assert_cmpstr(c, ==, "x");
	g_assert_cmpstr(d, ==, "a/b/x");
	g_assert_cmpstr(e, ==, "a");
	g_assert_cmpint(pix_volume_kind_from_name("uuid"), ==, PIX_VOLUME_UUID);
	g_assert_cmpint(pix_volume_kind_from_name("nonsense"), ==, -1);
	g_assert_cmpstr(pix_volume_kind_name(PIX_VOLUME_SOURCE), ==, "source");

	const PixVolume *f = pix_volume_fallback(makedev(7, 3));
	g_assert_cmpstr(f->ident, ==, "dev:7:3");
	g_assert_true(f == pix_volume_fallback(makedev(7, 3)));
	pix_mounts_free(m);
}

/* The real table of this machine: readable, and its root found. */
static void test_this_machine(void)
{
	GError *error = NULL;
	const PixMounts *m = pix_mounts_get(&error);
	g_assert_no_error(error);
	g_assert_nonnull(m);
	struct stat st;
	g_assert_cmpint(stat("/", &st), ==, 0);
	char *rel = NULL;
	const PixVolume *v = pix_mounts_volume_of(m, "/", st.st_dev, &rel);
	g_assert_nonnull(v);
	g_assert_cmpstr(v->mount_point, ==, "/");
	g_assert_cmpstr(rel, ==, v->mount_root);
	g_free(rel);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/volume/identities", test_identities);
	g_test_add_func("/volume/bind-mount", test_bind_mount);
	g_test_add_func("/volume/paths", test_paths);
	g_test_add_func("/volume/this-machine", test_this_machine);
	return g_test_run();
}
