/*
 * volume.c: the mount table and the identity of each mounted file system
 * (see volume.h).
 *
 * Reads /proc/self/mountinfo and, through libblkid, the superblock of each
 * mounted block device (its UUID and label; where the device cannot be
 * read, /dev/disk/by-uuid and by-label); writes nothing.  Any thread: the
 * current table is swapped under a mutex, and every table read stays
 * allocated until the process ends, so a PixVolume handed out is never
 * freed under its user.
 *
 * Invariants:
 *  1. A mount's identity depends only on the file system (UUID, label,
 *     source), never on the device number or mount point, except for
 *     PIX_VOLUME_MOUNT, which has nothing else.
 *  2. Relative paths have no leading or trailing '/'; "" is the root.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "volume.h"
#include "path.h"

#include <blkid.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct PixMounts {
	GPtrArray *mounts;    /* PixVolume*, mountinfo order (owned) */
};

static const char *const kind_names[] = {
	[PIX_VOLUME_UUID] = "uuid",
	[PIX_VOLUME_LABEL] = "label",
	[PIX_VOLUME_SOURCE] = "source",
	[PIX_VOLUME_MOUNT] = "mount",
};

const char *pix_volume_kind_name(PixVolumeKind kind)
{
	return kind_names[kind];
}

int pix_volume_kind_from_name(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(kind_names); i++)
		if (name != NULL && strcmp(name, kind_names[i]) == 0)
			return (int)i;
	return -1;
}

static void volume_free(PixVolume *v)
{
	g_free(v->ident);
	g_free(v->uuid);
	g_free(v->label);
	g_free(v->fstype);
	g_free(v->source);
	g_free(v->mount_point);
	g_free(v->mount_root);
	g_free(v);
}

void pix_mounts_free(PixMounts *m)
{
	if (m == NULL)
		return;
	g_ptr_array_free(m->mounts, TRUE);
	g_free(m);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s)
{
	GString *out = g_string_sized_new(strlen(s));
	for (const char *p = s; *p != '\0'; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
		    p[3] <= '7') {
			g_string_append_c(out, (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0')));
			p += 3;
		} else {
			g_string_append_c(out, *p);
		}
	}
	return g_string_free(out, FALSE);
}

/* "/" -> "", "/a/b" -> "a/b" */
static char *rel_of_root(const char *root)
{
	while (*root == '/')
		root++;
	char *rel = g_strdup(root);
	gsize n = strlen(rel);
	while (n > 0 && rel[n - 1] == '/')
		rel[--n] = '\0';
	return rel;
}

static gboolean is_network_fs(const char *fstype, const char *source)
{
	static const char *const net[] = { "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs",
		                           "afs", "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.glusterfs" };
	for (gsize i = 0; i < G_N_ELEMENTS(net); i++)
		if (strcmp(fstype, net[i]) == 0)
			return TRUE;
	/* another FUSE file system of something remote: "host:/path", "//server/share" */
	return g_str_has_prefix(fstype, "fuse") && source[0] != '/' &&
	       (strchr(source, ':') != NULL || g_str_has_prefix(source, "//"));
}

/* The name in `dir` (/dev/disk/by-uuid, by-label) of the link to `dev_path`. */
static char *disk_link_to(const char *dir, const char *dev_path)
{
	g_autofree char *want = realpath(dev_path, NULL);
	DIR *d = opendir(dir);
	char *found = NULL;
	if (want == NULL || d == NULL) {
		if (d != NULL)
			closedir(d);
		return NULL;
	}
	struct dirent *e;
	while (found == NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		g_autofree char *link = g_build_filename(dir, e->d_name, NULL);
		g_autofree char *target = realpath(link, NULL);
		if (target != NULL && strcmp(target, want) == 0) {
			/* udev escapes like mountinfo, with \x hex */
			g_autofree char *name = g_strcompress(e->d_name);
			found = g_steal_pointer(&name);
		}
	}
	closedir(d);
	return found;
}

/* The UUID and label of the file system on block device `dev_path`. */
static void probe_block(const char *dev_path, char **uuid, char **label)
{
	blkid_probe pr = blkid_new_probe_from_filename(dev_path);
	if (pr != NULL) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_TYPE);
		if (blkid_do_safeprobe(pr) == 0) {
			const char *v = NULL;
			if (blkid_probe_lookup_value(pr, "UUID", &v, NULL) == 0 && v != NULL && *v != '\0')
				*uuid = g_strdup(v);
			if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0 && v != NULL && *v != '\0')
				*label = g_strdup(v);
		}
		blkid_free_probe(pr);
	}
	/* an unreadable device (not root): what udev recorded */
	if (*uuid == NULL)
		*uuid = disk_link_to("/dev/disk/by-uuid", dev_path);
	if (*label == NULL)
		*label = disk_link_to("/dev/disk/by-label", dev_path);
}

/* "subvolid=N" of a btrfs mount's super options, or NULL. */
static char *btrfs_subvol(const char *super_opts)
{
	g_auto(GStrv) opts = g_strsplit(super_opts, ",", -1);
	for (char **o = opts; *o != NULL; o++)
		if (g_str_has_prefix(*o, "subvolid="))
			return g_strdup(*o + strlen("subvolid="));
	return NULL;
}

/* Sets kind and ident from what is known of the mount; `probe` is the
 * test table ("DEVICE\tUUID\tLABEL" lines), or NULL to probe for real. */
static void identify(PixVolume *v, const char *super_opts, const char *probe)
{
	struct stat st;
	gboolean is_block = v->source[0] == '/' && stat(v->source, &st) == 0 && S_ISBLK(st.st_mode);

	if (probe != NULL) {
		g_auto(GStrv) lines = g_strsplit(probe, "\n", -1);
		for (char **l = lines; *l != NULL; l++) {
			g_auto(GStrv) f = g_strsplit(*l, "\t", 3);
			if (g_strv_length(f) == 3 && strcmp(f[0], v->source) == 0) {
				v->uuid = *f[1] != '\0' ? g_strdup(f[1]) : NULL;
				v->label = *f[2] != '\0' ? g_strdup(f[2]) : NULL;
				is_block = TRUE;
			}
		}
	} else if (is_block) {
		probe_block(v->source, &v->uuid, &v->label);
	}
	if (is_block && v->uuid != NULL) {
		g_autofree char *subvol = strcmp(v->fstype, "btrfs") == 0 ? btrfs_subvol(super_opts) : NULL;
		v->kind = PIX_VOLUME_UUID;
		v->ident = subvol != NULL ? g_strdup_printf("%s:subvolid=%s", v->uuid, subvol) : g_strdup(v->uuid);
	} else if (is_block && v->label != NULL) {
		v->kind = PIX_VOLUME_LABEL;
		v->ident = g_strdup(v->label);
	} else if (is_network_fs(v->fstype, v->source)) {
		v->kind = PIX_VOLUME_SOURCE;
		v->ident = g_strdup(v->source);
	} else {
		v->kind = PIX_VOLUME_MOUNT;
		v->ident = g_strdup_printf("%s:%s:%s", v->fstype, v->source, v->mount_point);
	}
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNT OPTS [OPTIONAL...] - TYPE SOURCE SUPER". */
static PixVolume *parse_line(const char *line, const char *probe)
{
	g_auto(GStrv) f = g_strsplit(line, " ", -1);
	guint n = g_strv_length(f);
	guint sep = 6;
	while (sep < n && strcmp(f[sep], "-") != 0)
		sep++;
	if (n < 6 || sep + 3 > n)
		return NULL;
	unsigned maj, min;
	if (sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return NULL;
	PixVolume *v = g_new0(PixVolume, 1);
	g_autofree char *root = unescape(f[3]);
	v->dev = makedev(maj, min);
	v->mount_root = rel_of_root(root);
	v->mount_point = unescape(f[4]);
	v->fstype = unescape(f[sep + 1]);
	v->source = unescape(f[sep + 2]);
	g_autofree char *super = sep + 3 < n ? unescape(f[sep + 3]) : g_strdup("");
	identify(v, super, probe);
	return v;
}

PixMounts *pix_mounts_parse(const char *mountinfo, const char *probe)
{
	PixMounts *m = g_new0(PixMounts, 1);
	m->mounts = g_ptr_array_new_with_free_func((GDestroyNotify)volume_free);
	g_auto(GStrv) lines = g_strsplit(mountinfo, "\n", -1);
	for (char **l = lines; *l != NULL; l++) {
		PixVolume *v = **l != '\0' ? parse_line(*l, probe) : NULL;
		if (v != NULL)
			g_ptr_array_add(m->mounts, v);
	}
	return m;
}

static GMutex lock;
static PixMounts *current;   /* the table last read (guarded by lock) */
static GPtrArray *all_read;  /* every table read, kept to the end (guarded by lock) */

const PixMounts *pix_mounts_refresh(GError **error)
{
	g_autofree char *text = NULL;
	if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, error))
		return NULL;
	PixMounts *m = pix_mounts_parse(text, NULL);
	g_mutex_lock(&lock);
	if (all_read == NULL)
		all_read = g_ptr_array_new();
	g_ptr_array_add(all_read, m);
	current = m;
	g_mutex_unlock(&lock);
	return m;
}

const PixMounts *pix_mounts_get(GError **error)
{
	g_mutex_lock(&lock);
	PixMounts *m = current;
	g_mutex_unlock(&lock);
	return m != NULL ? m : pix_mounts_refresh(error);
}

/* The mount of `dev` with the longest mount point above `path`. */
static const PixVolume *mount_of(const PixMounts *m, const char *path, guint64 dev)
{
	const PixVolume *best = NULL;
	for (guint i = 0; i < m->mounts->len; i++) {
		const PixVolume *v = g_ptr_array_index(m->mounts, i);
		/* of equal mount points, the later one is on top */
		if (v->dev == dev && pix_path_is_under(path, v->mount_point) &&
		    (best == NULL || strlen(v->mount_point) >= strlen(best->mount_point)))
			best = v;
	}
	return best;
}

const PixVolume *pix_mounts_volume_of(const PixMounts *m, const char *path, guint64 dev, char **rel_path)
{
	const PixVolume *v = mount_of(m, path, dev);
	if (v == NULL)
		return NULL;
	if (rel_path != NULL)
		*rel_path = pix_volume_rel_of(v, path);
	return v;
}

char *pix_volume_rel_of(const PixVolume *v, const char *path)
{
	if (!pix_path_is_under(path, v->mount_point))
		return NULL;
	const char *below = path + (strcmp(v->mount_point, "/") == 0 ? 0 : strlen(v->mount_point));
	return pix_volume_rel_join(v->mount_root, below + strspn(below, "/"));
}

/* Whether `a` shows more of its volume than `b`. */
static gboolean is_better_mount(const PixVolume *a, const PixVolume *b)
{
	gsize ra = strlen(a->mount_root), rb = strlen(b->mount_root);
	if (ra != rb)
		return ra < rb;
	return strlen(a->mount_point) < strlen(b->mount_point);
}

const PixVolume *pix_mounts_find(const PixMounts *m, PixVolumeKind kind, const char *ident)
{
	const PixVolume *best = NULL;
	for (guint i = 0; i < m->mounts->len; i++) {
		const PixVolume *v = g_ptr_array_index(m->mounts, i);
		if (v->kind == kind && strcmp(v->ident, ident) == 0 && (best == NULL || is_better_mount(v, best)))
			best = v;
	}
	return best;
}

GPtrArray *pix_mounts_volumes(const PixMounts *m)
{
	GPtrArray *out = g_ptr_array_new();
	for (guint i = 0; i < m->mounts->len; i++) {
		const PixVolume *v = g_ptr_array_index(m->mounts, i);
		if (pix_mounts_find(m, v->kind, v->ident) == v)
			g_ptr_array_add(out, (gpointer)v);
	}
	return out;
}

const PixVolume *pix_volume_mounted(const char *kind_name, const char *ident)
{
	const PixMounts *m = pix_mounts_get(NULL);
	int kind = pix_volume_kind_from_name(kind_name);
	return m != NULL && kind >= 0 && ident != NULL ? pix_mounts_find(m, (PixVolumeKind)kind, ident) : NULL;
}

char *pix_volume_path_now(const char *kind_name, const char *ident, const char *rel_path, const char *last_path)
{
	if (kind_name == NULL || rel_path == NULL)
		return g_strdup(last_path);
	const PixVolume *v = pix_volume_mounted(kind_name, ident);
	return v != NULL ? pix_volume_path(v, rel_path) : NULL;
}

const PixVolume *pix_volume_fallback(guint64 dev)
{
	static GHashTable *made;     /* dev -> PixVolume* (guarded by lock) */
	g_mutex_lock(&lock);
	if (made == NULL)
		made = g_hash_table_new(g_direct_hash, g_direct_equal);
	PixVolume *v = g_hash_table_lookup(made, GSIZE_TO_POINTER((gsize)dev));
	if (v == NULL) {
		v = g_new0(PixVolume, 1);
		v->kind = PIX_VOLUME_MOUNT;
		v->ident = g_strdup_printf("dev:%u:%u", major(dev), minor(dev));
		v->fstype = g_strdup("unknown");
		v->source = g_strdup("");
		v->mount_point = g_strdup("/");
		v->mount_root = g_strdup("");
		v->dev = dev;
		g_hash_table_insert(made, GSIZE_TO_POINTER((gsize)dev), v);
	}
	g_mutex_unlock(&lock);
	return v;
}

char *pix_volume_rel_join(const char *rel, const char *name)
{
	if (*rel == '\0')
		return g_strdup(name);
	if (*name == '\0')
		return g_strdup(rel);
	return g_strconcat(rel, "/", name, NULL);
}

char *pix_volume_path(const PixVolume *v, const char *rel_path)
{
	gsize n = strlen(v->mount_root);
	const char *below = rel_path;
	if (n > 0) {
		if (strncmp(rel_path, v->mount_root, n) != 0 || (rel_path[n] != '\0' && rel_path[n] != '/'))
			return NULL;
		below = rel_path + n + (rel_path[n] == '/');
	}
	if (*below == '\0')
		return g_strdup(v->mount_point);
	return pix_path_join(v->mount_point, below);
}
