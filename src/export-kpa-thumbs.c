/*
 * export-kpa-thumbs.c: KPhotoAlbum's thumbnail cache, DIR/.thumbnails
 * (format in export-kpa-thumbs.h), merged with the catalog's renditions.
 *
 * Reads the old index and data files (each entry's bytes checked to be in
 * its file and to start as a JPEG), and the renditions from the catalog
 * (pix_store_each_thumb, 64 contents a statement); writes the data file
 * being appended to and the index through atomic.h.  Main thread.
 *
 * Writing: new thumbnails go after the old ones, where KPhotoAlbum would
 * put its next (the current file and offset, found as its loader finds
 * them: the header's, pushed on by every entry).  The data file being
 * appended to is written whole to a temporary file (its old bytes up to
 * that offset, then the new ones) and renamed over the old one; further
 * files are new.  The index goes last.  An old index names only bytes
 * that every new data file still holds at the same place, so a crash at
 * any point leaves the old cache or the new one, never one whose index
 * names bytes that are not there.
 *
 * Invariants:
 *  1. Every entry of `entries` names bytes inside its data file as it
 *     will be once committed: in an old file (checked when read), or in
 *     one this session writes (below cur_file/cur_offset).
 *  2. cur_offset <= file_bytes + the last JPEG's size, and an entry of
 *     file cur_file ends at or before cur_offset (cache_check()).
 *  3. Nothing is written before pix_kpa_cache_commit() but data files
 *     that have filled up, each whole, before the index that names them.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "export-kpa-thumbs.h"
#include "atomic.h"
#include "log.h"
#include "path.h"
#include "thumb-export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX_NAME "thumbnailindex"
#define MAX_INDEX_BYTES (1u << 30)
#define MAX_FILE_INDEX (1 << 20)

typedef struct {
	gint32 file, offset, size;
} Loc;

struct PixKpaCache {
	char *dir;              /* DIR/.thumbnails (owned) */
	int size_px;
	gint64 file_bytes;      /* a data file moves on past this offset */
	gboolean has_index;     /* an index was there and read */
	GHashTable *entries;    /* rel (owned) -> Loc (owned) */
	GHashTable *added;      /* rels added this session (keys of `entries`) */
	gint32 cur_file;        /* where the next thumbnail goes */
	gint32 cur_offset;
	guint n_unreadable;
	gboolean is_dirty;
	PixAtomicFile *out;     /* data file cur_file being written, or NULL (owned) */
};

static gboolean cache_check(const PixKpaCache *c)
{
	if (c->cur_file < 0 || c->cur_offset < 0)
		return FALSE;
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, c->entries);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		const Loc *l = value;
		if (l->file == c->cur_file && (gint64)l->offset + l->size > c->cur_offset)
			return FALSE;
	}
	return TRUE;
}

static char *data_path(const PixKpaCache *c, gint32 file)
{
	g_autofree char *name = g_strdup_printf("thumb-%d", (int)file);
	return g_build_filename(c->dir, name, NULL);
}

static void set_errno(GError **error, int err, const char *what, const char *path)
{
	g_autofree char *q = pix_quote(path);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s '%s': %s", what, q, g_strerror(err));
}

static guint32 be32(const guint8 *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

static void put_be32(GByteArray *out, guint32 v)
{
	guint8 b[4] = { (guint8)(v >> 24), (guint8)(v >> 16), (guint8)(v >> 8), (guint8)v };
	g_byte_array_append(out, b, 4);
}

/* The old data files, opened once each while the index is checked. */
typedef struct {
	PixKpaCache *c;
	GHashTable *fds;        /* file index -> fd + 1 (0: could not open) */
	GHashTable *sizes;      /* file index -> size + 1 */
} Files;

static gint64 file_size(Files *f, gint32 file, int *fd)
{
	gpointer key = GINT_TO_POINTER(file);
	if (!g_hash_table_contains(f->fds, key)) {
		g_autofree char *path = data_path(f->c, file);
		int d = open(path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		gint64 size = d >= 0 && fstat(d, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
		g_hash_table_insert(f->fds, key, GINT_TO_POINTER(d + 1));
		g_hash_table_insert(f->sizes, key, GSIZE_TO_POINTER((gsize)(size + 1)));
	}
	*fd = GPOINTER_TO_INT(g_hash_table_lookup(f->fds, key)) - 1;
	return (gint64)GPOINTER_TO_SIZE(g_hash_table_lookup(f->sizes, key)) - 1;
}

static void close_fd(gpointer key, gpointer value, gpointer data)
{
	(void)key, (void)data;
	if (GPOINTER_TO_INT(value) > 0)
		close(GPOINTER_TO_INT(value) - 1);
}

/* Whether `l` names bytes of an old data file that begin as a JPEG. */
static gboolean is_readable(Files *f, const Loc *l)
{
	if (l->file < 0 || l->file >= MAX_FILE_INDEX || l->offset < 0 || l->size < 2)
		return FALSE;
	int fd;
	gint64 size = file_size(f, l->file, &fd);
	guint8 soi[2];
	return size >= 0 && (gint64)l->offset + l->size <= size && pread(fd, soi, 2, l->offset) == 2 &&
	       soi[0] == 0xFF && soi[1] == 0xD8;
}

/* A QString as QDataStream writes it, from `p` (at most `len` bytes):
 * its UTF-8 in *out (NULL when it is null or not UTF-16), the bytes it
 * takes, or 0 when it runs past the end. */
static gsize read_qstring(const guint8 *p, gsize len, char **out)
{
	*out = NULL;
	if (len < 4)
		return 0;
	guint32 n = be32(p);
	if (n == 0xFFFFFFFFu)
		return 4;
	if (n % 2 != 0 || n > len - 4)
		return 0;
	g_autofree gunichar2 *units = g_new(gunichar2, n / 2 + 1);
	for (guint32 i = 0; i < n / 2; i++)
		units[i] = (gunichar2)(p[4 + 2 * i] << 8 | p[5 + 2 * i]);
	*out = g_utf16_to_utf8(units, n / 2, NULL, NULL, NULL);
	return 4 + n;
}

static void put_qstring(GByteArray *out, const char *utf8)
{
	glong n = 0;
	g_autofree gunichar2 *units = g_utf8_to_utf16(utf8, -1, NULL, &n, NULL);
	g_assert(units != NULL);  /* rels are valid UTF-8 */
	put_be32(out, (guint32)n * 2);
	for (glong i = 0; i < n; i++) {
		guint8 b[2] = { (guint8)(units[i] >> 8), (guint8)units[i] };
		g_byte_array_append(out, b, 2);
	}
}

/* Moves the current position past `l`, as KPhotoAlbum's loader does. */
static void advance(PixKpaCache *c, const Loc *l)
{
	gint64 end = (gint64)l->offset + l->size;
	if (l->file > c->cur_file) {
		c->cur_file = l->file;
		c->cur_offset = (gint32)end;
	} else if (l->file == c->cur_file && end > c->cur_offset) {
		c->cur_offset = (gint32)end;
	}
	if (c->cur_offset > c->file_bytes) {
		c->cur_file++;
		c->cur_offset = 0;
	}
}

/* Reads the index `bytes`: its entries, the position; what could not
 * be read in *why. */
static void parse_index(PixKpaCache *c, const guint8 *b, gsize len, char **why)
{
	gint32 version = len >= 4 ? (gint32)be32(b) : -1;
	gsize head = version == 5 ? 20 : 16;
	if ((version != 4 && version != 5) || len < head) {
		*why = version == 4 || version == 5 ? g_strdup("its header is cut")
		                                     : g_strdup_printf("it is of version %d, which KPhotoAlbum 5.x "
		                                                       "does not read (4 and 5)", (int)version);
		c->is_dirty = TRUE;
		return;
	}
	gsize p = 4;
	if (version == 5) {
		gint32 size = (gint32)be32(b + p);
		p += 4;
		if (size < 1 || size > 8192) {
			*why = g_strdup_printf("its thumbnail size %d is not a size", (int)size);
			c->is_dirty = TRUE;
			return;
		}
		c->size_px = size;
	}
	c->has_index = TRUE;
	c->cur_file = MAX((gint32)be32(b + p), 0);
	c->cur_offset = MAX((gint32)be32(b + p + 4), 0);
	p += 12;    /* and the count, which is not trusted */

	Files f = { .c = c, .fds = g_hash_table_new(NULL, NULL), .sizes = g_hash_table_new(NULL, NULL) };
	/* the header's position, no further than its data file goes */
	int fd;
	gint64 size = c->cur_file < MAX_FILE_INDEX ? file_size(&f, c->cur_file, &fd) : -1;
	if (c->cur_file >= MAX_FILE_INDEX)
		c->cur_file = 0;
	c->cur_offset = (gint32)MIN((gint64)c->cur_offset, MAX(size, 0));

	guint n_read = 0;
	while (p < len) {
		char *rel;
		gsize used = read_qstring(b + p, len - p, &rel);
		if (used == 0 || len - p - used < 12) {
			g_free(rel);
			*why = g_strdup_printf("it is damaged after entry %u (%" G_GSIZE_FORMAT " bytes not read)", n_read,
			                       len - p);
			c->is_dirty = TRUE;
			break;
		}
		p += used;
		Loc l = { (gint32)be32(b + p), (gint32)be32(b + p + 4), (gint32)be32(b + p + 8) };
		p += 12;
		n_read++;
		if (rel == NULL || rel[0] == '\0' || !is_readable(&f, &l)) {
			g_free(rel);
			c->n_unreadable++;
			c->is_dirty = TRUE;
			continue;
		}
		advance(c, &l);
		g_hash_table_replace(c->entries, rel, g_memdup2(&l, sizeof l));
	}
	if (c->n_unreadable > 0 && *why == NULL)
		*why = g_strdup_printf("%u of its entries name bytes that are not a thumbnail in its data files",
		                       c->n_unreadable);
	g_hash_table_foreach(f.fds, close_fd, NULL);
	g_hash_table_unref(f.fds);
	g_hash_table_unref(f.sizes);
}

PixKpaCache *pix_kpa_cache_open(const char *thumb_dir, int size_px, gint64 file_bytes, char **why,
                                GError **error)
{
	g_autoptr(PixKpaCache) c = g_new0(PixKpaCache, 1);
	g_autofree char *index = g_build_filename(thumb_dir, INDEX_NAME, NULL);
	g_autofree char *bytes = NULL;
	gsize len = 0;
	struct stat st;

	g_assert(size_px > 0 && file_bytes > 0 && file_bytes <= PIX_KPA_THUMB_FILE_BYTES);
	*why = NULL;
	c->dir = g_strdup(thumb_dir);
	c->size_px = size_px;
	c->file_bytes = file_bytes;
	c->entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	c->added = g_hash_table_new(g_str_hash, g_str_equal);
	if (lstat(thumb_dir, &st) != 0 && errno != ENOENT) {
		set_errno(error, errno, "cannot read", thumb_dir);
		return NULL;
	}
	if (lstat(index, &st) != 0) {
		if (errno == ENOENT)
			return g_steal_pointer(&c);
		set_errno(error, errno, "cannot read", index);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_INDEX_BYTES) {
		*why = g_strdup(S_ISREG(st.st_mode) ? "it is larger than 1 GiB" : "it is not a regular file");
		c->is_dirty = TRUE;
		return g_steal_pointer(&c);
	}
	g_autoptr(GError) local = NULL;
	if (!g_file_get_contents(index, &bytes, &len, &local)) {
		g_autofree char *q = pix_quote(index);
		g_set_error(error, G_FILE_ERROR, local->code, "cannot read '%s': %s", q, local->message);
		return NULL;
	}
	parse_index(c, (const guint8 *)bytes, len, why);
	g_assert(cache_check(c));
	return g_steal_pointer(&c);
}

void pix_kpa_cache_free(PixKpaCache *c)
{
	if (c == NULL)
		return;
	pix_atomic_abort(c->out);
	g_hash_table_unref(c->added);
	g_hash_table_unref(c->entries);
	g_free(c->dir);
	g_free(c);
}

int pix_kpa_cache_size(const PixKpaCache *c)
{
	return c->size_px;
}

gboolean pix_kpa_cache_existed(const PixKpaCache *c)
{
	return c->has_index;
}

guint pix_kpa_cache_len(const PixKpaCache *c)
{
	return g_hash_table_size(c->entries);
}

guint pix_kpa_cache_n_unreadable(const PixKpaCache *c)
{
	return c->n_unreadable;
}

gboolean pix_kpa_cache_has(const PixKpaCache *c, const char *rel)
{
	return g_hash_table_contains(c->entries, rel);
}

gboolean pix_kpa_cache_drop(PixKpaCache *c, const char *rel)
{
	g_hash_table_remove(c->added, rel);
	if (!g_hash_table_remove(c->entries, rel))
		return FALSE;
	c->is_dirty = TRUE;
	return TRUE;
}

gboolean pix_kpa_cache_rename(PixKpaCache *c, const char *from, const char *to)
{
	Loc *l = g_hash_table_lookup(c->entries, from);
	if (l == NULL || strcmp(from, to) == 0)
		return FALSE;
	Loc copy = *l;
	pix_kpa_cache_drop(c, from);
	pix_kpa_cache_drop(c, to);
	g_hash_table_insert(c->entries, g_strdup(to), g_memdup2(&copy, sizeof copy));
	c->is_dirty = TRUE;
	return TRUE;
}

/* Starts data file cur_file: its old bytes up to cur_offset first. */
static gboolean start_data_file(PixKpaCache *c, GError **error)
{
	g_autofree char *path = data_path(c, c->cur_file);
	if (g_mkdir_with_parents(c->dir, 0777) != 0) {
		set_errno(error, errno, "cannot create", c->dir);
		return FALSE;
	}
	c->out = pix_atomic_new(path, 0666, error);
	if (c->out == NULL)
		return FALSE;
	if (c->cur_offset == 0)
		return TRUE;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set_errno(error, errno, "cannot read", path);
		return FALSE;
	}
	FILE *to = pix_atomic_stream(c->out);
	g_autofree char *buf = g_malloc(1 << 20);
	gint64 left = c->cur_offset;
	while (left > 0) {
		ssize_t n = read(fd, buf, (size_t)MIN(left, 1 << 20));
		if (n <= 0) {
			/* cut since it was read: what the index names is gone */
			set_errno(error, n < 0 ? errno : EIO, "cannot read", path);
			close(fd);
			return FALSE;
		}
		if (fwrite(buf, 1, (size_t)n, to) != (size_t)n) {
			set_errno(error, errno, "cannot write", path);
			close(fd);
			return FALSE;
		}
		left -= n;
	}
	close(fd);
	return TRUE;
}

gboolean pix_kpa_cache_add(PixKpaCache *c, const char *rel, const guint8 *jpeg, gsize len, const char *share_with,
                           GError **error)
{
	Loc l;
	const Loc *shared = share_with != NULL && g_hash_table_contains(c->added, share_with)
	                    ? g_hash_table_lookup(c->entries, share_with) : NULL;
	g_assert(g_utf8_validate(rel, -1, NULL) && (shared != NULL || (len > 0 && len < (1u << 30))));
	if (shared != NULL) {
		l = *shared;
	} else {
		if (c->out == NULL && !start_data_file(c, error))
			return FALSE;
		FILE *to = pix_atomic_stream(c->out);
		if (fwrite(jpeg, 1, len, to) != len) {
			g_autofree char *path = data_path(c, c->cur_file);
			set_errno(error, errno, "cannot write", path);
			return FALSE;
		}
		l = (Loc){ c->cur_file, c->cur_offset, (gint32)len };
		c->cur_offset += (gint32)len;
		if (c->cur_offset > c->file_bytes) {
			/* full: whole, before the index that will name it */
			if (!pix_atomic_commit(g_steal_pointer(&c->out), error))
				return FALSE;
			c->cur_file++;
			c->cur_offset = 0;
		}
	}
	pix_kpa_cache_drop(c, rel);
	char *key = g_strdup(rel);
	g_hash_table_insert(c->entries, key, g_memdup2(&l, sizeof l));
	g_hash_table_add(c->added, key);
	c->is_dirty = TRUE;
	return TRUE;
}

gboolean pix_kpa_cache_is_dirty(const PixKpaCache *c)
{
	return c->is_dirty;
}

static int str_ptr_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

gboolean pix_kpa_cache_commit(PixKpaCache *c, GError **error)
{
	g_assert(cache_check(c));
	if (c->out != NULL && !pix_atomic_commit(g_steal_pointer(&c->out), error))
		return FALSE;
	if (!c->is_dirty)
		return TRUE;
	g_autoptr(GByteArray) b = g_byte_array_sized_new(64 + 64 * g_hash_table_size(c->entries));
	put_be32(b, PIX_KPA_THUMB_VERSION);
	put_be32(b, (guint32)c->size_px);
	put_be32(b, (guint32)c->cur_file);
	put_be32(b, (guint32)c->cur_offset);
	put_be32(b, g_hash_table_size(c->entries));
	guint n_rels = 0;
	g_autofree gpointer *rels = g_hash_table_get_keys_as_array(c->entries, &n_rels);
	qsort(rels, n_rels, sizeof *rels, str_ptr_cmp);
	for (guint i = 0; i < n_rels; i++) {
		const Loc *l = g_hash_table_lookup(c->entries, rels[i]);
		put_qstring(b, rels[i]);
		put_be32(b, (guint32)l->file);
		put_be32(b, (guint32)l->offset);
		put_be32(b, (guint32)l->size);
	}
	g_autofree char *path = g_build_filename(c->dir, INDEX_NAME, NULL);
	if (g_mkdir_with_parents(c->dir, 0777) != 0) {
		set_errno(error, errno, "cannot create", c->dir);
		return FALSE;
	}
	g_autoptr(PixAtomicFile) af = pix_atomic_new(path, 0666, error);
	if (af == NULL)
		return FALSE;
	FILE *to = pix_atomic_stream(af);
	if (fwrite(b->data, 1, b->len, to) != b->len) {
		set_errno(error, errno, "cannot write", path);
		return FALSE;
	}
	if (!pix_atomic_commit(g_steal_pointer(&af), error))
		return FALSE;
	c->is_dirty = FALSE;
	return TRUE;
}

/* --- from the catalog ------------------------------------------------------- */

void pix_kpa_thumbs_done_clear(PixKpaThumbsDone *out)
{
	g_clear_pointer(&out->why, g_free);
}

/* A content wanted, by its MD5 (index.xml has no size; two sizes of one
 * MD5 would be a collision nobody has found), and the wants that have it. */
typedef struct {
	guint8 md5[16];
} Key;

typedef struct {
	PixKpaCache *c;
	const PixKpaThumbWant *wants;
	GHashTable *by_key;     /* Key* -> GArray of guint (want indexes) */
	gboolean *is_done;      /* per want */
	PixThumbSize source;    /* the rendition used */
	GError *error;          /* the first failure to write (stops the rest) */
	gint64 n_written;
} Fill;

static guint key_hash(gconstpointer p)
{
	const Key *k = p;
	guint h;
	memcpy(&h, k->md5, sizeof h);
	return h;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a, *y = b;
	return memcmp(x->md5, y->md5, 16) == 0;
}

/*
 * The JPEG KPhotoAlbum would have made of `row` for an image turned by
 * `angle`: its long edge `size_px` (a smaller image enlarged, as
 * KPhotoAlbum does), turned.  NULL and *is_as_is when the stored
 * rendition is that already; NULL and `error` when it cannot be decoded.
 */
static GBytes *kpa_jpeg(const PixThumbRow *row, PixThumbSize source, int size_px, const PixKpaThumbWant *want,
                        gboolean *is_as_is, GError **error)
{
	guint w = row->width_px[source], h = row->height_px[source];
	int angle = want->angle;
	gboolean is_turned = angle == 90 || angle == 270;
	*is_as_is = angle == 0 && MAX(w, h) == (guint)size_px;
	if (*is_as_is)
		return NULL;
	guint tw, th, sw = is_turned ? h : w, sh = is_turned ? w : h;
	/* from the image's size (as shown) when the rendition is it scaled:
	 * the short edge KPhotoAlbum computes */
	guint iw = (guint)CLAMP(want->width, 0, G_MAXINT32), ih = (guint)CLAMP(want->height, 0, G_MAXINT32);
	if (pix_fit_agrees(iw, ih, sw, sh))
		sw = iw, sh = ih;
	pix_fit_box(sw, sh, (guint)size_px, &tw, &th);
	PixPixels p = { 0 };
	guint min_edge = MAX(w, h) > (guint)size_px ? (guint)size_px : 0;
	if (!pix_pixels_from_jpeg(row->jpeg[source], row->jpeg_bytes[source], min_edge, &p, error))
		return NULL;
	pix_pixels_orient(&p, pix_orientation_of_angle(angle));
	pix_pixels_scale(&p, tw, th);
	GBytes *out = pix_pixels_to_jpeg(&p, error);
	pix_pixels_clear(&p);
	return out;
}

static void on_row(gpointer data, const PixThumbRow *row)
{
	Fill *f = data;
	Key k;
	memcpy(k.md5, row->md5, 16);
	GArray *idx = g_hash_table_lookup(f->by_key, &k);
	if (idx == NULL || f->error != NULL || row->jpeg[f->source] == NULL)
		return;
	/* copies of one content at one angle share their bytes */
	const char *first_at[4] = { NULL, NULL, NULL, NULL };
	for (guint i = 0; i < idx->len && f->error == NULL; i++) {
		guint wi = g_array_index(idx, guint, i);
		const PixKpaThumbWant *w = &f->wants[wi];
		int quarter = w->angle / 90;
		if (f->is_done[wi])
			continue;       /* a second row of this MD5 (another size) */
		if (first_at[quarter] == NULL) {
			g_autoptr(GError) local = NULL;
			gboolean is_as_is;
			g_autoptr(GBytes) made = kpa_jpeg(row, f->source, pix_kpa_cache_size(f->c), w, &is_as_is, &local);
			if (made == NULL && !is_as_is) {
				g_autofree char *q = pix_quote(w->rel);
				pix_warn("cannot use the catalog's thumbnail of '%s' for KPhotoAlbum: %s (skipping)", q,
				         local->message);
				continue;
			}
			gsize len = 0;
			const guint8 *bytes = made != NULL ? g_bytes_get_data(made, &len) : row->jpeg[f->source];
			if (made == NULL)
				len = row->jpeg_bytes[f->source];
			if (!pix_kpa_cache_add(f->c, w->rel, bytes, len, NULL, &f->error))
				return;
			first_at[quarter] = w->rel;
		} else if (!pix_kpa_cache_add(f->c, w->rel, NULL, 0, first_at[quarter], &f->error)) {
			return;
		}
		f->is_done[wi] = TRUE;
		f->n_written++;
	}
}

/* The size of a data file: PIX_KPA_THUMB_FILE_BYTES, or less for a
 * test (PIX_TEST_KPA_THUMB_FILE_BYTES: the rollover seen with a few
 * thumbnails). */
static gint64 data_file_bytes(void)
{
	const char *test = g_getenv("PIX_TEST_KPA_THUMB_FILE_BYTES");
	gint64 n = test != NULL ? g_ascii_strtoll(test, NULL, 10) : 0;
	return n > 0 && n < PIX_KPA_THUMB_FILE_BYTES ? n : PIX_KPA_THUMB_FILE_BYTES;
}

gboolean pix_kpa_thumbs_export(PixStore *reader, const char *dir, int size_px, const PixKpaThumbWant *wants,
                               guint n, PixKpaThumbsDone *out, GError **error)
{
	g_autofree char *thumb_dir = g_build_filename(dir, ".thumbnails", NULL);
	g_autoptr(PixKpaCache) c = pix_kpa_cache_open(thumb_dir, size_px, data_file_bytes(), &out->why, error);
	if (c == NULL)
		return FALSE;
	out->size_px = pix_kpa_cache_size(c);
	out->n_unreadable = pix_kpa_cache_n_unreadable(c);

	g_autofree gboolean *is_done = g_new0(gboolean, MAX(n, 1));
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(key_hash, key_equal, g_free, (GDestroyNotify)g_array_unref);
	g_autoptr(GArray) md5s = g_array_new(FALSE, FALSE, 16);
	for (guint i = 0; i < n; i++) {
		const PixKpaThumbWant *w = &wants[i];
		if (!w->is_changed && w->moved_from != NULL && !pix_kpa_cache_has(c, w->rel) &&
		    pix_kpa_cache_rename(c, w->moved_from, w->rel)) {
			out->n_renamed++;
			is_done[i] = TRUE;
		} else if (!w->is_changed && pix_kpa_cache_has(c, w->rel)) {
			is_done[i] = TRUE;
		} else if (w->angle >= 0 && w->angle < 360 && w->angle % 90 == 0) {
			Key k;
			memcpy(k.md5, w->md5, 16);
			GArray *idx = g_hash_table_lookup(by_key, &k);
			if (idx == NULL) {
				idx = g_array_new(FALSE, FALSE, sizeof(guint));
				g_hash_table_insert(by_key, g_memdup2(&k, sizeof k), idx);
				g_array_append_vals(md5s, w->md5, 1);
			}
			g_array_append_val(idx, i);
		}
	}
	/* the 256 px rendition is KPhotoAlbum's default as it is; any other
	 * size is made from the 512 px one (DCT-scaled when smaller) */
	Fill f = { .c = c, .wants = wants, .by_key = by_key, .is_done = is_done,
		   .source = out->size_px == 256 ? PIX_THUMB_LARGE : PIX_THUMB_XLARGE };
	if (md5s->len > 0 && !pix_store_each_thumb(reader, (const guint8(*)[16])(void *)md5s->data, md5s->len,
	                                           1u << f.source, on_row, &f, error))
		return FALSE;
	if (f.error != NULL) {
		g_propagate_error(error, f.error);
		return FALSE;
	}
	out->n_written = f.n_written;
	for (guint i = 0; i < n; i++) {
		if (is_done[i])
			continue;
		out->n_none++;
		/* an old thumbnail of other content: KPhotoAlbum makes it anew */
		if (wants[i].is_changed && pix_kpa_cache_drop(c, wants[i].rel))
			out->n_dropped++;
	}
	out->is_written = pix_kpa_cache_is_dirty(c) && (pix_kpa_cache_existed(c) || pix_kpa_cache_len(c) > 0);
	if (out->is_written && !pix_kpa_cache_commit(c, error))
		return FALSE;
	out->n_entries = pix_kpa_cache_len(c);
	return TRUE;
}
