/*
 * item.c: constructors and destructors of PixItem, PixDir and PixMeta.
 *
 * Reads and writes nothing but memory.  Any thread may call these; a given
 * item is only ever touched by its current owner (see item.h).  PixDir
 * reference counts are atomic because items of one directory are freed by
 * the store thread while plan may still hold the directory.
 *
 * Invariants:
 *  1. pix_item_free() releases exactly one reference of item->dir.
 *  2. Unknown PixMeta numbers are NAN or -1 from the moment of creation, so
 *     a parser that finds nothing leaves nothing that looks like a value.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "item.h"
#include "path.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

PixDir *pix_dir_new(const char *path)
{
	PixDir *d = g_new0(PixDir, 1);
	d->ref_count = 1;
	d->path = g_strdup(path);
	return d;
}

PixDir *pix_dir_ref(PixDir *d)
{
	g_atomic_int_inc(&d->ref_count);
	return d;
}

void pix_dir_unref(PixDir *d)
{
	if (d == NULL || !g_atomic_int_dec_and_test(&d->ref_count))
		return;
	pix_dir_unref(d->parent);
	g_free(d->path);
	g_free(d->error);
	g_free(d);
}

PixItem *pix_item_new(PixAction action, PixDir *dir, const char *name)
{
	/* the name in the item's own block: one allocation a file, not two */
	gsize name_bytes = name != NULL ? strlen(name) + 1 : 0;
	PixItem *item = g_malloc0(sizeof *item + name_bytes);
	item->action = action;
	item->dir = pix_dir_ref(dir);
	if (name != NULL)
		item->name = memcpy(item + 1, name, name_bytes);
	return item;
}

void pix_item_free(PixItem *item)
{
	if (item == NULL)
		return;
	pix_dir_unref(item->dir);
	g_free(item->old_path);
	pix_meta_free(item->meta);
	pix_thumb_free(item->thumb);
	g_free(item->error);
	g_free(item);
}

char *pix_item_path(const PixItem *item)
{
	if (item->name == NULL)
		return g_strdup(item->dir->path);
	return pix_path_join(item->dir->path, item->name);
}

void pix_item_set_error(PixItem *item, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_free(item->error);
	item->error = g_strdup_vprintf(fmt, ap);
	va_end(ap);
}

void pix_stat_from(PixStat *out, const struct stat *st)
{
	out->dev = (guint64)st->st_dev;
	out->ino = (guint64)st->st_ino;
	out->mode = (guint32)st->st_mode;
	out->size_bytes = (gint64)st->st_size;
	out->mtime_ns = (gint64)st->st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st->st_mtim.tv_nsec;
	out->ctime_ns = (gint64)st->st_ctim.tv_sec * G_GINT64_CONSTANT(1000000000) + st->st_ctim.tv_nsec;
}

void pix_stat_from_statx(PixStat *out, const struct statx *sx)
{
	G_STATIC_ASSERT(PIX_STATX_MASK == (STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME));
	out->dev = (guint64)makedev(sx->stx_dev_major, sx->stx_dev_minor);
	out->ino = sx->stx_ino;
	out->mode = sx->stx_mode;
	out->size_bytes = (gint64)sx->stx_size;
	out->mtime_ns = sx->stx_mtime.tv_sec * G_GINT64_CONSTANT(1000000000) + sx->stx_mtime.tv_nsec;
	out->ctime_ns = sx->stx_ctime.tv_sec * G_GINT64_CONSTANT(1000000000) + sx->stx_ctime.tv_nsec;
}

gboolean pix_stat_same(const PixStat *a, const PixStat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size_bytes == b->size_bytes &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

PixMeta *pix_meta_new(void)
{
	PixMeta *m = g_new0(PixMeta, 1);
	m->exposure_s = NAN;
	m->fnumber = NAN;
	m->iso = -1;
	m->focal_mm = NAN;
	m->orientation = -1;
	m->width_px = -1;
	m->height_px = -1;
	m->gps_lat = NAN;
	m->gps_lon = NAN;
	m->gps_alt_m = NAN;
	m->duration_s = NAN;
	m->aperture = NAN;
	m->exposure_program = -1;
	m->metering_mode = -1;
	m->flash = -1;
	m->gps_direction = NAN;
	return m;
}

void pix_meta_fill(PixMeta *dst, const PixMeta *src)
{
#define STR(f) if (dst->f == NULL && src->f != NULL) dst->f = g_strdup(src->f)
#define NUM(f) if (isnan(dst->f)) dst->f = src->f
#define INT(f) if (dst->f < 0) dst->f = src->f
	if (dst->date_taken == NULL && src->date_taken != NULL) {
		dst->date_taken = g_strdup(src->date_taken);
		g_free(dst->date_tz);
		dst->date_tz = g_strdup(src->date_tz);
		dst->date_source = src->date_source;
	}
	STR(make);
	STR(model);
	STR(lens);
	NUM(exposure_s);
	NUM(fnumber);
	INT(iso);
	NUM(focal_mm);
	INT(orientation);
	if (dst->width_px < 0 && dst->height_px < 0) {
		dst->width_px = src->width_px;
		dst->height_px = src->height_px;
	}
	if (isnan(dst->gps_lat) && isnan(dst->gps_lon)) {
		dst->gps_lat = src->gps_lat;
		dst->gps_lon = src->gps_lon;
	}
	NUM(gps_alt_m);
	NUM(duration_s);
	NUM(aperture);
	INT(exposure_program);
	INT(metering_mode);
	INT(flash);
	STR(gps_time);
	if (isnan(dst->gps_direction)) {
		dst->gps_direction = src->gps_direction;
		g_free(dst->gps_direction_ref);
		dst->gps_direction_ref = g_strdup(src->gps_direction_ref);
	}
	STR(description);
	if (!dst->has_osdb_hash) {
		dst->osdb_hash = src->osdb_hash;
		dst->has_osdb_hash = src->has_osdb_hash;
	}
	if (src->tags != NULL) {
		if (dst->tags == NULL)
			dst->tags = pix_tags_new();
		pix_tags_fill(dst->tags, src->tags);
	}
#undef STR
#undef NUM
#undef INT
}

void pix_meta_free(PixMeta *m)
{
	if (m == NULL)
		return;
	g_free(m->date_taken);
	g_free(m->date_tz);
	g_free(m->make);
	g_free(m->model);
	g_free(m->lens);
	g_free(m->gps_time);
	g_free(m->gps_direction_ref);
	g_free(m->description);
	pix_tags_free(m->tags);
	g_free(m);
}

static const char *const media_names[PIX_N_MEDIA] = {
	[PIX_MEDIA_OTHER] = "other",
	[PIX_MEDIA_IMAGE] = "image",
	[PIX_MEDIA_RAW] = "raw",
	[PIX_MEDIA_VIDEO] = "video",
	[PIX_MEDIA_SIDECAR] = "sidecar",
};

const char *pix_media_name(PixMediaKind kind)
{
	g_assert((guint)kind < PIX_N_MEDIA);
	return media_names[kind];
}

int pix_media_from_name(const char *name)
{
	for (int i = 0; i < PIX_N_MEDIA; i++)
		if (g_strcmp0(name, media_names[i]) == 0)
			return i;
	return -1;
}
