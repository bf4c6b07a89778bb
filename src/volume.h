/*
 * volume.h: the file systems a library lives on, and what identifies
 * each one wherever it is mounted.
 *
 * A volume is a file system (a btrfs subvolume counts as one) named by an
 * identity that survives unmounting: its UUID (libblkid), else its label,
 * else, for network and FUSE file systems, its mount source
 * ("server:/export", "user@host:/path", "//server/share").  A file system
 * with none of these (tmpfs, overlay, a FUSE mount of nothing) is named by
 * its type, source and mount point: it is the same volume only there.
 *
 * The mount table is /proc/self/mountinfo as read at one moment, with the
 * identity of every mounted file system (probed once, when first asked).
 * Paths inside a volume are relative to the root of its file system, with
 * no leading or trailing slash ("" for the root itself), so that a bind
 * mount of a subdirectory yields the same relative paths as the whole
 * file system mounted elsewhere.
 *
 * Thread-safety: pix_mounts_get() and pix_mounts_refresh() may be called
 * from any thread; a PixMounts and its PixVolumes are immutable once
 * returned and live until the process ends.
 */
#ifndef PIX_VOLUME_H
#define PIX_VOLUME_H

#include <glib.h>

typedef enum {
	PIX_VOLUME_UUID,      /* the file system's UUID (FAT: its serial) */
	PIX_VOLUME_LABEL,     /* no UUID: its label */
	PIX_VOLUME_SOURCE,    /* network or FUSE: the mount source */
	PIX_VOLUME_MOUNT,     /* none of those: type, source and mount point */
} PixVolumeKind;

/* "uuid", "label", "source", "mount" (static); and back (-1: unknown). */
const char *pix_volume_kind_name(PixVolumeKind kind);
int pix_volume_kind_from_name(const char *name);

/* One mounted file system, as the mount table saw it. */
typedef struct {
	PixVolumeKind kind;
	char *ident;          /* the identity: UUID, label, source or "type:source:mount point" */
	char *uuid;           /* NULL when none */
	char *label;          /* NULL when none */
	char *fstype;         /* "ext4", "vfat", "fuse.sshfs", ... */
	char *source;         /* the mount source ("/dev/sdb1", "host:/x") */
	char *mount_point;    /* absolute, bytes */
	char *mount_root;     /* the part of the file system mounted there,
	                         relative ("" when it is the whole) */
	guint64 dev;          /* st_dev of the files under mount_point */
} PixVolume;

typedef struct PixMounts PixMounts;

/* The mount table as last read (read on first use; transfer none).  NULL
 * with `error` set when /proc/self/mountinfo cannot be read. */
const PixMounts *pix_mounts_get(GError **error);
/* Reads the mount table again (a disk was plugged in or out). */
const PixMounts *pix_mounts_refresh(GError **error);
/* Parses a mountinfo text (for tests: no probing, identities from the
 * `probe` table "DEVICE\tUUID\tLABEL" lines, or NULL).  (transfer full) */
PixMounts *pix_mounts_parse(const char *mountinfo, const char *probe);
void pix_mounts_free(PixMounts *m);

/*
 * The volume that holds `path` (absolute, canonical), whose st_dev is
 * `dev`: the mount with that device whose mount point is the longest
 * prefix of `path`.  NULL when the table has none (mounted since the table
 * was read: the caller may read it again).
 * (transfer none; *rel_path, when not NULL, gets the path relative to the
 * volume's root, transfer full.)
 */
const PixVolume *pix_mounts_volume_of(const PixMounts *m, const char *path, guint64 dev, char **rel_path);
/* The mounted volume of this identity, or NULL when it is not mounted now.
 * Of several mounts of one volume, the one showing most of it (the
 * shortest mount_root), then the shortest mount point.  (transfer none) */
const PixVolume *pix_mounts_find(const PixMounts *m, PixVolumeKind kind, const char *ident);
/* The volumes mounted now, one per identity (const PixVolume*, transfer container). */
GPtrArray *pix_mounts_volumes(const PixMounts *m);

/* The volume named by `kind_name` ("uuid"...) and `ident` as the catalog
 * records them, mounted now (the table as last read), or NULL: offline,
 * or the mount table unreadable.  (transfer none) */
const PixVolume *pix_volume_mounted(const char *kind_name, const char *ident);
/* Where `rel_path` of that volume is now (transfer full): NULL when it is
 * offline; `last_path` as it is when `kind_name` is NULL (a row not
 * placed on a volume yet). */
char *pix_volume_path_now(const char *kind_name, const char *ident, const char *rel_path, const char *last_path);

/* A volume for a device no mount shows (0: unknown): kind
 * PIX_VOLUME_MOUNT, ident "dev:MAJOR:MINOR", mounted at "/". (transfer none) */
const PixVolume *pix_volume_fallback(guint64 dev);

/* Where `rel_path` of volume `v` is now: its absolute path, or NULL when
 * that part of the volume is not visible through v's mount. (transfer full) */
char *pix_volume_path(const PixVolume *v, const char *rel_path);
/* The path relative to the volume's root of `path` (absolute), seen
 * through v's mount; NULL when `path` is not below v's mount point.  The
 * inverse of pix_volume_path().  (transfer full) */
char *pix_volume_rel_of(const PixVolume *v, const char *path);
/* `rel` joined with `name` ("" + "a" is "a"). (transfer full) */
char *pix_volume_rel_join(const char *rel, const char *name);

#endif
