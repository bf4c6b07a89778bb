/*
 * export-xdg.c: the freedesktop.org thumbnail cache written from the
 * catalog (see export-xdg.h): for each file on disk whose content has a
 * thumbnail, a PNG in normal/ (128 px), large/ (256 px) and x-large/
 * (512 px) under DIR, named by the MD5 of its URI.
 *
 * Reads the catalog (the files that pass the filter, one statement; then
 * their contents' renditions, 64 contents a statement) and the tEXt
 * chunks of the PNG files already there; writes the PNG files (its own
 * chunks, deflate-huff.c's stream) through atomic.h, unsynced, then
 * syncs the file system once.  The main thread reads the catalog and
 * hands each content to a pool of workers (one per processor), which
 * decode, scale and write its files' PNGs; they share only the counters
 * and the first error, under a lock.
 *
 * Pixels: x-large/ is the 512 px rendition decoded, large/ the 256 px
 * one, normal/ the 256 px one shrunk; each turned upright by the file's
 * EXIF orientation (meta.orientation).  Decoded once per content, only
 * when one of its files needs a PNG written.
 *
 * Invariants:
 *  1. A PNG's name is the MD5 of the Thumb::URI it holds, and its
 *     Thumb::MTime is the file's mtime as the catalog saw it: a consumer
 *     that finds the file changed since makes its own.
 *  2. A PNG file is written only whole (temporary name, then rename), with
 *     mode 0600; folders made are 0700.
 *  3. Only files whose row is state ok, on a mounted volume, get one.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "export-xdg.h"
#include "atomic.h"
#include "config.h"
#include "deflate-huff.h"
#include "hash.h"
#include "log.h"
#include "thumb-export.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>       /* crc32 */

/* The folders written and their sizes, by the specification's names. */
enum { XDG_NORMAL, XDG_LARGE, XDG_XLARGE, XDG_N_SIZES };
static const struct {
	const char *name;
	guint edge;
} xdg_sizes[XDG_N_SIZES] = { { "normal", 128 }, { "large", 256 }, { "x-large", 512 } };

/* What a PNG file's header holds, read to keep one that is current. */
#define MAX_HEAD_BYTES 65536
/* PNG's cost is its compression: each row filtered and Huffman-coded
 * only, no matching.  Measured on 1,000 photo-like thumbnail sets (three
 * PNGs each, 750 KB of pixels) through libpng: its defaults (every
 * filter tried, zlib level 6) 122 s of processor time and 320 MB; level
 * 1: 19.5 s and 368 MB; SUB and zlib's Huffman only: 7.5 s and 347 MB, of
 * which zlib was still two thirds (write_png()).  A thumbnail is not
 * worth more. */
/* contents queued per worker at most */
#define JOBS_PER_THREAD 4

/* A file to give thumbnails (strings in Export.strings). */
typedef struct {
	const char *path;       /* bytes */
	guint8 md5[16];
	gint64 size_bytes;
	gint64 mtime_s;
	int orientation;        /* EXIF 1-8, 0 unknown */
	gint64 width, height;   /* the image's, as stored; -1 unknown */
	const char *mime;       /* or NULL */
} XFile;

typedef struct {
	guint8 md5[16];
	gint64 size_bytes;
} Key;

typedef struct {
	const char *dir;
	GStringChunk *strings;
	GArray *files;          /* XFile */
	GHashTable *by_key;     /* Key* (owned) -> GArray of guint (file indexes) */
	GArray *md5s;           /* the distinct MD5s, 16 bytes each */
	PixXdgExport *out;      /* its counters summed under `lock` */
	GThreadPool *pool;      /* the workers: decoding, scaling, PNG (their time is the export's) */
	guint n_threads;
	GMutex lock;            /* guards error, n_pending and out's counters while workers run */
	GCond cond;             /* n_pending went down */
	guint n_pending;        /* contents queued or being written */
	GError *error;          /* the first failure to write: stops the rest */
} Export;

static guint key_hash(gconstpointer p)
{
	const Key *k = p;
	guint h;
	memcpy(&h, k->md5, sizeof h);
	return h ^ (guint)k->size_bytes;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a, *y = b;
	return x->size_bytes == y->size_bytes && memcmp(x->md5, y->md5, 16) == 0;
}

char *pix_xdg_thumbnails_dir(void)
{
	g_autofree char *cache = pix_xdg_dir(g_get_user_cache_dir(), ".cache");
	return g_build_filename(cache, "thumbnails", NULL);
}

static void set_errno(GError **error, int err, const char *what, const char *path)
{
	g_autofree char *q = pix_quote(path);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s '%s': %s", what, q, g_strerror(err));
}

/* --- the files ------------------------------------------------------------------ */

static gboolean on_record(gpointer data, const PixRecord *r)
{
	Export *e = data;
	const char *path = pix_record_text(r, PIX_COL_PATH);
	XFile f = { 0 };
	if (path == NULL || g_strcmp0(pix_record_text(r, PIX_COL_STATE), "ok") != 0 ||
	    !pix_md5_from_hex(pix_record_text(r, PIX_COL_MD5), f.md5))
		return TRUE;
	e->out->n_files++;
	f.path = g_string_chunk_insert(e->strings, path);
	f.size_bytes = pix_record_int(r, PIX_COL_SIZE, 0);
	/* seconds, as the specification (and st_mtime) count: floor */
	gint64 ns = pix_record_int(r, PIX_COL_MTIME_NS, 0);
	f.mtime_s = ns / G_GINT64_CONSTANT(1000000000) - (ns < 0 && ns % G_GINT64_CONSTANT(1000000000) != 0);
	f.orientation = (int)pix_record_int(r, PIX_COL_ORIENTATION, 0);
	f.width = pix_record_int(r, PIX_COL_WIDTH, -1);
	f.height = pix_record_int(r, PIX_COL_HEIGHT, -1);
	const char *mime = pix_record_text(r, PIX_COL_MIME);
	f.mime = mime != NULL && g_utf8_validate(mime, -1, NULL) ? g_string_chunk_insert_const(e->strings, mime) : NULL;
	guint index = e->files->len;
	g_array_append_val(e->files, f);
	Key k;
	memcpy(k.md5, f.md5, 16);
	k.size_bytes = f.size_bytes;
	GArray *idx = g_hash_table_lookup(e->by_key, &k);
	if (idx == NULL) {
		idx = g_array_new(FALSE, FALSE, sizeof(guint));
		g_hash_table_insert(e->by_key, g_memdup2(&k, sizeof k), idx);
		g_array_append_vals(e->md5s, f.md5, 1);
	}
	g_array_append_val(idx, index);
	return TRUE;
}

/* --- PNG ------------------------------------------------------------------------ */

static guint32 be32(const guint8 *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

/* Whether the PNG at `path` is one for `uri` at `mtime_s`: its tEXt
 * chunks before the image data say so. */
static gboolean is_current(const char *path, const char *uri, gint64 mtime_s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return FALSE;
	guint8 *head = g_malloc(MAX_HEAD_BYTES);
	ssize_t len = read(fd, head, MAX_HEAD_BYTES);
	close(fd);
	static const guint8 signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n' };
	gboolean has_uri = FALSE, has_mtime = FALSE;
	g_autofree char *mtime = g_strdup_printf("%" G_GINT64_FORMAT, mtime_s);
	for (gsize p = 8; len >= 8 && memcmp(head, signature, 8) == 0 && p + 8 <= (gsize)len;) {
		guint32 n = be32(head + p);
		const guint8 *type = head + p + 4, *data = head + p + 8;
		if (memcmp(type, "IDAT", 4) == 0 || n > (gsize)len - p - 8)
			break;
		if (memcmp(type, "tEXt", 4) == 0) {
			const guint8 *nul = memchr(data, '\0', n);
			if (nul != NULL) {
				gsize klen = (gsize)(nul - data), vlen = n - klen - 1;
				const char *value = (const char *)nul + 1;
				if (klen == 10 && memcmp(data, "Thumb::URI", 10) == 0)
					has_uri = vlen == strlen(uri) && memcmp(value, uri, vlen) == 0;
				else if (klen == 12 && memcmp(data, "Thumb::MTime", 12) == 0)
					has_mtime = vlen == strlen(mtime) && memcmp(value, mtime, vlen) == 0;
			}
		}
		p += 12 + (gsize)n;
	}
	g_free(head);
	return has_uri && has_mtime;
}

static void put_be32(guint8 *p, guint32 v)
{
	p[0] = (guint8)(v >> 24), p[1] = (guint8)(v >> 16), p[2] = (guint8)(v >> 8), p[3] = (guint8)v;
}

/* Appends to `png` a chunk of `type` holding the `n` bytes at `data`. */
static void put_chunk(GByteArray *png, const char *type, const guint8 *data, gsize n)
{
	guint8 head[8], crc[4];
	put_be32(head, (guint32)n);
	memcpy(head + 4, type, 4);
	g_byte_array_append(png, head, 8);
	g_byte_array_append(png, data, (guint)n);
	uLong sum = crc32(0, (const Bytef *)type, 4);
	if (n > 0)              /* crc32_z(sum, NULL, 0) would start again */
		sum = crc32_z(sum, data, n);
	put_be32(crc, (guint32)sum);
	g_byte_array_append(png, crc, 4);
}

static void put_text(GByteArray *png, const char *key, const char *value)
{
	gsize klen = strlen(key), vlen = strlen(value);
	guint8 *t = g_malloc(klen + 1 + vlen);
	memcpy(t, key, klen + 1);
	memcpy(t + klen + 1, value, vlen);
	put_chunk(png, "tEXt", t, klen + 1 + vlen);
	g_free(t);
}

/* The rows of `p` as RGB, each after its filter byte: SUB (each byte
 * less its left neighbour's).  Paeth left Huffman coding 10 % fewer
 * bytes on photographs (a 512 x 384 rendition: 233 KB against 260 KB),
 * but its arithmetic byte by byte took more than the coding: 8.0 s of
 * processor time for 1,000 photos' PNGs against 3.8 s. */
static guint8 *filtered_rows(const PixPixels *p, gsize *n)
{
	gsize stride = (gsize)p->width * 3;
	guint8 *rgb = g_malloc(stride * 2), *out = g_malloc((stride + 1) * p->height);
	guint8 *prev = rgb, *row = rgb + stride;
	memset(prev, 0, stride);
	for (guint y = 0; y < p->height; y++) {
		const guint8 *src = p->data + (gsize)y * p->width * p->channels;
		if (p->channels == 3) {
			memcpy(row, src, stride);
		} else {
			for (guint x = 0; x < p->width; x++)
				row[3 * x] = row[3 * x + 1] = row[3 * x + 2] = src[x];
		}
		guint8 *o = out + (stride + 1) * y;
		*o++ = 1;       /* SUB */
		memcpy(o, row, MIN(stride, 3));
		for (gsize x = 3; x < stride; x++)
			o[x] = (guint8)(row[x] - row[x - 3]);
		guint8 *t = prev;
		prev = row;
		row = t;
	}
	g_free(rgb);
	*n = (stride + 1) * p->height;
	return out;
}

/* Writes `p` (RGB or grey, written as RGB) to `path` through a temporary
 * file, with the specification's keys for `f`.  PNG written here, not by
 * libpng: zlib's Huffman-only coding was 72 % of an export's processor
 * time; deflate-huff.c makes the same stream four times as fast. */
static gboolean write_png(const char *path, const PixPixels *p, const XFile *f, const char *uri, GError **error)
{
	g_autoptr(PixAtomicFile) af = pix_atomic_new(path, 0600, error);
	if (af == NULL)
		return FALSE;
	g_autoptr(GByteArray) png = g_byte_array_sized_new(64 * 1024);
	static const guint8 signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n' };
	g_byte_array_append(png, signature, 8);
	guint8 ihdr[13] = { 0, 0, 0, 0, 0, 0, 0, 0, 8, 2, 0, 0, 0 };   /* 8 bits, RGB, deflate, adaptive filters, no interlace */
	put_be32(ihdr, p->width);
	put_be32(ihdr + 4, p->height);
	put_chunk(png, "IHDR", ihdr, sizeof ihdr);
	g_autofree char *mtime = g_strdup_printf("%" G_GINT64_FORMAT, f->mtime_s);
	g_autofree char *size = g_strdup_printf("%" G_GINT64_FORMAT, f->size_bytes);
	put_text(png, "Thumb::URI", uri);
	put_text(png, "Thumb::MTime", mtime);
	put_text(png, "Thumb::Size", size);
	if (f->mime != NULL)
		put_text(png, "Thumb::Mimetype", f->mime);
	if (f->width > 0 && f->height > 0) {
		g_autofree char *width = g_strdup_printf("%" G_GINT64_FORMAT, f->width);
		g_autofree char *height = g_strdup_printf("%" G_GINT64_FORMAT, f->height);
		put_text(png, "Thumb::Image::Width", width);
		put_text(png, "Thumb::Image::Height", height);
	}
	put_text(png, "Software", "photoidx " PIX_VERSION);
	gsize n;
	g_autofree guint8 *rows = filtered_rows(p, &n);
	g_autoptr(GByteArray) z = g_byte_array_sized_new((guint)(n / 2));
	pix_deflate_huffman(rows, n, z);
	put_chunk(png, "IDAT", z->data, z->len);
	put_chunk(png, "IEND", NULL, 0);
	FILE *to = pix_atomic_stream(af);
	if (fwrite(png->data, 1, png->len, to) != png->len || fflush(to) != 0) {
		g_autofree char *q = pix_quote(path);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot write '%s': %s", q,
		            g_strerror(errno));
		return FALSE;
	}
	return pix_atomic_commit_unsynced(g_steal_pointer(&af), error);
}

/* --- the renditions ---------------------------------------------------------------- */

/* A content's work: its JPEGs (copied: the row dies with the callback),
 * its pixels decoded when first wanted, and its files. */
typedef struct {
	guint8 *jpeg[PIX_THUMB_N_SIZES];        /* (owned) */
	gsize jpeg_bytes[PIX_THUMB_N_SIZES];
	PixPixels decoded[PIX_THUMB_N_SIZES];
	gboolean is_tried[PIX_THUMB_N_SIZES];
	const GArray *files;    /* indexes into Export.files (borrowed; nothing adds to either while workers run) */
	gint64 n_written, n_kept, n_failed;
} Job;

static void job_free(Job *j)
{
	for (int s = 0; s < PIX_THUMB_N_SIZES; s++) {
		g_free(j->jpeg[s]);
		pix_pixels_clear(&j->decoded[s]);
	}
	g_free(j);
}

static const PixPixels *job_pixels(Job *j, PixThumbSize size, GError **error)
{
	if (!j->is_tried[size]) {
		j->is_tried[size] = TRUE;
		if (!pix_pixels_from_jpeg(j->jpeg[size], j->jpeg_bytes[size], 0, &j->decoded[size], error))
			return NULL;
	} else if (j->decoded[size].data == NULL) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a stored thumbnail is damaged");
		return NULL;
	}
	return &j->decoded[size];
}

static gboolean is_failed(Export *e)
{
	g_mutex_lock(&e->lock);
	gboolean is = e->error != NULL;
	g_mutex_unlock(&e->lock);
	return is;
}

/* The PNG files of `f` that are not current, written from `j`'s pixels:
 * as they are when upright and of the size, else turned and scaled. */
static void write_file(Export *e, const XFile *f, Job *j)
{
	g_autoptr(GError) local = NULL;
	g_autofree char *uri = g_filename_to_uri(f->path, NULL, &local);
	if (uri == NULL) {
		g_autofree char *q = pix_quote(f->path);
		pix_warn("cannot make a URI of '%s': %s (skipping)", q, local->message);
		j->n_failed++;
		return;
	}
	g_autofree char *name = g_compute_checksum_for_string(G_CHECKSUM_MD5, uri, -1);
	gboolean is_turned = f->orientation >= 5 && f->orientation <= 8;
	gboolean is_upright = f->orientation < 2 || f->orientation > 8;
	for (int s = 0; s < XDG_N_SIZES; s++) {
		g_autofree char *png = g_strdup_printf("%s/%s/%s.png", e->dir, xdg_sizes[s].name, name);
		if (is_current(png, uri, f->mtime_s)) {
			j->n_kept++;
			continue;
		}
		const PixPixels *from = job_pixels(j, s == XDG_XLARGE ? PIX_THUMB_XLARGE : PIX_THUMB_LARGE, &local);
		if (from == NULL) {
			g_autofree char *q = pix_quote(f->path);
			pix_warn("cannot use the catalog's thumbnail of '%s': %s (skipping)", q, local->message);
			j->n_failed++;
			return;
		}
		guint pw = is_turned ? from->height : from->width, ph = is_turned ? from->width : from->height;
		/* the image's own size, turned as the pixels are, when the
		 * rendition is it scaled: the short edge as the image gives it */
		guint iw = (guint)CLAMP(is_turned ? f->height : f->width, 0, G_MAXINT32);
		guint ih = (guint)CLAMP(is_turned ? f->width : f->height, 0, G_MAXINT32);
		gboolean is_image_size = pix_fit_agrees(iw, ih, pw, ph);
		guint w, h;
		pix_fit_within(is_image_size ? iw : pw, is_image_size ? ih : ph, xdg_sizes[s].edge, &w, &h);
		PixPixels made = { 0 };
		if (!is_upright || w != pw || h != ph) {
			made = (PixPixels){ .width = from->width, .height = from->height, .channels = from->channels,
				            .data = g_memdup2(from->data, (gsize)from->width * from->height * from->channels) };
			pix_pixels_orient(&made, f->orientation);
			pix_pixels_scale(&made, w, h);
		}
		GError *write_error = NULL;
		gboolean is_ok = write_png(png, made.data != NULL ? &made : from, f, uri, &write_error);
		pix_pixels_clear(&made);
		if (!is_ok) {
			g_mutex_lock(&e->lock);
			if (e->error == NULL)
				e->error = write_error;
			else
				g_error_free(write_error);
			g_mutex_unlock(&e->lock);
			return;
		}
		j->n_written++;
	}
}

/* A worker: one content's files. */
static void run_job(gpointer data, gpointer user_data)
{
	Job *j = data;
	Export *e = user_data;
	for (guint i = 0; i < j->files->len && !is_failed(e); i++)
		write_file(e, &g_array_index(e->files, XFile, g_array_index(j->files, guint, i)), j);
	g_mutex_lock(&e->lock);
	e->out->n_written += j->n_written;
	e->out->n_kept += j->n_kept;
	e->out->n_failed += j->n_failed;
	e->n_pending--;
	g_cond_signal(&e->cond);
	g_mutex_unlock(&e->lock);
	job_free(j);
}

/* On the main thread: a content's row, handed to a worker (waiting while
 * JOBS_PER_THREAD a worker are queued: what is held stays bounded). */
static void on_row(gpointer data, const PixThumbRow *row)
{
	Export *e = data;
	Key k;
	memcpy(k.md5, row->md5, 16);
	k.size_bytes = row->size_bytes;
	GArray *idx = g_hash_table_lookup(e->by_key, &k);
	if (idx == NULL || row->jpeg[PIX_THUMB_LARGE] == NULL || row->jpeg[PIX_THUMB_XLARGE] == NULL || is_failed(e))
		return;
	Job *j = g_new0(Job, 1);
	for (int s = 0; s < PIX_THUMB_N_SIZES; s++) {
		j->jpeg[s] = g_memdup2(row->jpeg[s], row->jpeg_bytes[s]);
		j->jpeg_bytes[s] = row->jpeg_bytes[s];
	}
	j->files = idx;
	e->out->n_thumbnailed += idx->len;
	g_mutex_lock(&e->lock);
	while (e->n_pending >= JOBS_PER_THREAD * e->n_threads)
		g_cond_wait(&e->cond, &e->lock);
	e->n_pending++;
	g_mutex_unlock(&e->lock);
	g_thread_pool_push(e->pool, j, NULL);
}

/* Makes `path` a folder (0700) when it is not one. */
static gboolean make_dir(const char *path, GError **error)
{
	if (g_mkdir_with_parents(path, 0700) != 0) {
		set_errno(error, errno, "cannot create", path);
		return FALSE;
	}
	return TRUE;
}

gboolean pix_export_xdg(PixStore *reader, const char *dir, const PixFilter *filter, PixXdgExport *out,
                        GError **error)
{
	Export e = { .dir = dir, .out = out };
	PixFilter f = *filter;
	gboolean is_ok = FALSE;

	memset(out, 0, sizeof *out);
	g_assert(g_path_is_absolute(dir));
	f.show = PIX_SHOW_PRESENT;
	f.is_offline = FALSE;
	for (int s = 0; s < XDG_N_SIZES; s++) {
		g_autofree char *sub = g_build_filename(dir, xdg_sizes[s].name, NULL);
		if (!make_dir(sub, error))
			return FALSE;
	}
	e.strings = g_string_chunk_new(1 << 16);
	e.files = g_array_new(FALSE, FALSE, sizeof(XFile));
	e.by_key = g_hash_table_new_full(key_hash, key_equal, g_free, (GDestroyNotify)g_array_unref);
	e.md5s = g_array_new(FALSE, FALSE, 16);
	if (!pix_store_each_record(reader, &f, PIX_SORT_NONE, 0, on_record, &e, error))
		goto done;
	e.n_threads = CLAMP(g_get_num_processors(), 1, 16);
	g_mutex_init(&e.lock);
	g_cond_init(&e.cond);
	e.pool = g_thread_pool_new(run_job, &e, (gint)e.n_threads, TRUE, NULL);
	gboolean is_read = e.md5s->len == 0 ||
	                   pix_store_each_thumb(reader, (const guint8(*)[16])(void *)e.md5s->data, e.md5s->len,
	                                        1u << PIX_THUMB_LARGE | 1u << PIX_THUMB_XLARGE, on_row, &e, error);
	g_thread_pool_free(e.pool, FALSE, TRUE);        /* every job done */
	g_mutex_clear(&e.lock);
	g_cond_clear(&e.cond);
	if (!is_read)
		goto done;
	if (e.error != NULL) {
		g_propagate_error(error, g_steal_pointer(&e.error));
		goto done;
	}
	/* once, for everything written unsynced */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd) != 0) {
		set_errno(error, errno, "cannot sync", dir);
		if (fd >= 0)
			close(fd);
		goto done;
	}
	close(fd);
	is_ok = TRUE;
done:
	g_clear_error(&e.error);
	g_hash_table_unref(e.by_key);
	g_array_unref(e.files);
	g_array_unref(e.md5s);
	g_string_chunk_free(e.strings);
	return is_ok;
}
