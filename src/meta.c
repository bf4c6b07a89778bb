/*
 * meta.c: recognises a file's format from its first bytes and hands the
 * stream to the parser for that container (see meta.h).
 *
 * Reads the bytes it is fed; writes the item's mime, media and meta at the
 * end.  Runs on a hash thread.
 *
 * Invariants:
 *  1. The format is decided once, from the first HEAD_BYTES bytes (or all
 *     of a shorter file), never from the name.
 *  2. Memory per parser is bounded: HEAD_BYTES plus what the container
 *     parser keeps (see meta-jpeg.c).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta.h"
#include "exif.h"
#include "tiff.h"

#include <string.h>

#define HEAD_BYTES 64
/* what a TIFF-structured file keeps of its start: libexif reaches no
 * further than 64 KiB, and IFDs of TIFF and RAW files live near the start */
#define TIFF_HEAD_BYTES (256 * 1024)

typedef enum {
	FMT_UNKNOWN,
	FMT_JPEG,
	FMT_TIFF,    /* TIFF and the RAW formats built on it */
	FMT_OTHER,   /* recognised, no metadata parser yet */
} Format;

struct PixMetaParser {
	guint8 head[HEAD_BYTES];
	gsize head_len;
	gboolean is_decided;
	Format format;
	const char *mime;
	PixMediaKind media;
	PixJpegParser *jpeg;
	GByteArray *tiff_head;  /* FMT_TIFF: "Exif\0\0" + the file's first bytes */
	guint64 total_bytes;    /* bytes fed so far */
};

/* Magic numbers: offset, bytes, what they mean. */
typedef struct {
	gsize offset;
	const char *magic;
	gsize magic_len;
	Format format;
	const char *mime;
	PixMediaKind media;
} Magic;

#define M(off, str, fmt, mime, media) { off, str, sizeof(str) - 1, fmt, mime, media }
static const Magic magics[] = {
	M(0, "\xff\xd8\xff", FMT_JPEG, "image/jpeg", PIX_MEDIA_IMAGE),
	M(0, "\x89PNG\r\n\x1a\n", FMT_OTHER, "image/png", PIX_MEDIA_IMAGE),
	M(0, "GIF87a", FMT_OTHER, "image/gif", PIX_MEDIA_IMAGE),
	M(0, "GIF89a", FMT_OTHER, "image/gif", PIX_MEDIA_IMAGE),
	M(0, "II\x2a\x00\x10\x00\x00\x00" "CR", FMT_TIFF, "image/x-canon-cr2", PIX_MEDIA_RAW),
	M(0, "IIRO", FMT_TIFF, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "IIRS", FMT_TIFF, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "MMOR", FMT_TIFF, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "IIU\x00", FMT_TIFF, "image/x-panasonic-rw2", PIX_MEDIA_RAW),
	M(0, "II\x2a\x00", FMT_TIFF, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "MM\x00\x2a", FMT_TIFF, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "II\x2b\x00", FMT_TIFF, "image/tiff", PIX_MEDIA_IMAGE),   /* BigTIFF */
	M(0, "MM\x00\x2b", FMT_TIFF, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "FUJIFILMCCD-RAW", FMT_OTHER, "image/x-fuji-raf", PIX_MEDIA_RAW),
	M(0, "\x00MRM", FMT_OTHER, "image/x-minolta-mrw", PIX_MEDIA_RAW),
	M(0, "FOVb", FMT_OTHER, "image/x-sigma-x3f", PIX_MEDIA_RAW),
	M(0, "II\x1a\x00\x00\x00HEAPCCDR", FMT_OTHER, "image/x-canon-crw", PIX_MEDIA_RAW),
	M(0, "\xff\x0a", FMT_OTHER, "image/jxl", PIX_MEDIA_IMAGE),
	M(0, "\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a", FMT_OTHER, "image/jxl", PIX_MEDIA_IMAGE),
	M(0, "BM", FMT_OTHER, "image/bmp", PIX_MEDIA_IMAGE),
	M(0, "<?xpacket", FMT_OTHER, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "<x:xmpmeta", FMT_OTHER, "application/rdf+xml", PIX_MEDIA_SIDECAR),
};
#undef M

/* ISO base media (ftyp) major brands. */
typedef struct {
	const char brand[5];
	const char *mime;
	PixMediaKind media;
} Brand;

static const Brand brands[] = {
	{ "heic", "image/heic", PIX_MEDIA_IMAGE }, { "heix", "image/heic", PIX_MEDIA_IMAGE },
	{ "hevc", "image/heic", PIX_MEDIA_IMAGE }, { "heim", "image/heic", PIX_MEDIA_IMAGE },
	{ "heis", "image/heic", PIX_MEDIA_IMAGE }, { "mif1", "image/heif", PIX_MEDIA_IMAGE },
	{ "msf1", "image/heif", PIX_MEDIA_IMAGE }, { "avif", "image/avif", PIX_MEDIA_IMAGE },
	{ "avis", "image/avif", PIX_MEDIA_IMAGE }, { "crx ", "image/x-canon-cr3", PIX_MEDIA_RAW },
	{ "qt  ", "video/quicktime", PIX_MEDIA_VIDEO }, { "M4V ", "video/x-m4v", PIX_MEDIA_VIDEO },
	{ "M4VH", "video/x-m4v", PIX_MEDIA_VIDEO }, { "3gp4", "video/3gpp", PIX_MEDIA_VIDEO },
	{ "3gp5", "video/3gpp", PIX_MEDIA_VIDEO }, { "3gp6", "video/3gpp", PIX_MEDIA_VIDEO },
	{ "3g2a", "video/3gpp2", PIX_MEDIA_VIDEO },
};

/* Decides the format from the head bytes collected so far. */
static void decide(PixMetaParser *mp)
{
	const guint8 *h = mp->head;
	gsize n = mp->head_len;

	mp->is_decided = TRUE;
	mp->format = FMT_UNKNOWN;
	mp->mime = "application/octet-stream";
	mp->media = PIX_MEDIA_OTHER;
	if (n == 0) {
		mp->mime = "application/x-empty";
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(magics); i++) {
		const Magic *m = &magics[i];
		if (n >= m->offset + m->magic_len && memcmp(h + m->offset, m->magic, m->magic_len) == 0) {
			mp->format = m->format;
			mp->mime = m->mime;
			mp->media = m->media;
			return;
		}
	}
	if (n >= 12 && memcmp(h, "RIFF", 4) == 0) {
		if (memcmp(h + 8, "WEBP", 4) == 0) {
			mp->format = FMT_OTHER;
			mp->mime = "image/webp";
			mp->media = PIX_MEDIA_IMAGE;
		} else if (memcmp(h + 8, "AVI ", 4) == 0) {
			mp->format = FMT_OTHER;
			mp->mime = "video/x-msvideo";
			mp->media = PIX_MEDIA_VIDEO;
		}
		return;
	}
	/* QuickTime files from before ftyp start with one of these atoms */
	static const char *const qt_atoms[] = { "moov", "mdat", "wide", "free", "skip", "pnot" };
	for (guint i = 0; n >= 8 && i < G_N_ELEMENTS(qt_atoms); i++) {
		if (memcmp(h + 4, qt_atoms[i], 4) == 0) {
			mp->format = FMT_OTHER;
			mp->mime = "video/quicktime";
			mp->media = PIX_MEDIA_VIDEO;
			return;
		}
	}
	if (n >= 12 && memcmp(h + 4, "ftyp", 4) == 0) {
		mp->format = FMT_OTHER;
		mp->mime = "video/mp4";   /* isom, mp41, mp42, avc1 and the rest */
		mp->media = PIX_MEDIA_VIDEO;
		for (guint i = 0; i < G_N_ELEMENTS(brands); i++) {
			if (memcmp(h + 8, brands[i].brand, 4) == 0) {
				mp->mime = brands[i].mime;
				mp->media = brands[i].media;
				break;
			}
		}
	}
}

PixMetaParser *pix_meta_parser_new(void)
{
	return g_new0(PixMetaParser, 1);
}

void pix_meta_parser_free(PixMetaParser *mp)
{
	if (mp == NULL)
		return;
	pix_jpeg_parser_free(mp->jpeg);
	if (mp->tiff_head != NULL)
		g_byte_array_unref(mp->tiff_head);
	g_free(mp);
}

/* Passes bytes to the container parser chosen for the format. */
static void dispatch(PixMetaParser *mp, const guint8 *data, gsize len)
{
	if (mp->format == FMT_JPEG) {
		if (mp->jpeg == NULL)
			mp->jpeg = pix_jpeg_parser_new();
		pix_jpeg_parser_feed(mp->jpeg, data, len);
	} else if (mp->format == FMT_TIFF) {
		if (mp->tiff_head == NULL) {
			mp->tiff_head = g_byte_array_sized_new(MIN(TIFF_HEAD_BYTES, 4096) + 6);
			g_byte_array_append(mp->tiff_head, (const guint8 *)"Exif\0\0", 6);
		}
		gsize room = TIFF_HEAD_BYTES + 6 - mp->tiff_head->len;
		if (room > 0)
			g_byte_array_append(mp->tiff_head, data, (guint)MIN(len, room));
	}
}

void pix_meta_parser_feed(PixMetaParser *mp, const guint8 *data, gsize len)
{
	mp->total_bytes += len;
	if (!mp->is_decided) {
		gsize take = MIN(len, HEAD_BYTES - mp->head_len);
		memcpy(mp->head + mp->head_len, data, take);
		mp->head_len += take;
		if (mp->head_len < HEAD_BYTES)
			return;
		decide(mp);
		/* the head went in before the format was known: replay it */
		dispatch(mp, mp->head, mp->head_len);
		data += take;
		len -= take;
	}
	if (len > 0)
		dispatch(mp, data, len);
}

static void add_error(PixItem *item, const char *problem)
{
	if (item->error == NULL)
		item->error = g_strdup(problem);
	else {
		char *both = g_strconcat(item->error, "; ", problem, NULL);
		g_free(item->error);
		item->error = both;
	}
}

/* The EXIF block (after its "Exif\0\0" header) of `len` bytes, `total_len`
 * in all: its damage and its fields. */
static void read_exif_block(const guint8 *block, gsize len, guint64 total_len, PixMeta *m, PixItem *item)
{
	g_autofree char *problem = NULL;
	/* our structure check names the damage more precisely than libexif,
	 * which shrugs most of it off */
	g_autofree char *damage = pix_tiff_check(block + 6, len - 6, total_len);
	if (!pix_exif_read(block, len, m, &problem) && damage == NULL)
		add_error(item, problem);
	if (damage != NULL) {
		g_autofree char *text = g_strconcat("corrupt EXIF: ", damage, NULL);
		add_error(item, text);
	}
}

static void finish_jpeg(PixMetaParser *mp, PixItem *item)
{
	PixJpegInfo info;
	g_autoptr(PixMeta) m = pix_meta_new();

	pix_jpeg_parser_finish(mp->jpeg, &info);
	m->width_px = info.width_px;
	m->height_px = info.height_px;
	if (info.error != NULL)
		add_error(item, info.error);
	if (info.exif != NULL) {
		gsize len;
		const guint8 *data = g_bytes_get_data(info.exif, &len);
		read_exif_block(data, len, len - 6, m, item);
	}
	item->meta = g_steal_pointer(&m);
	pix_jpeg_info_clear(&info);
}

static void finish_tiff(PixMetaParser *mp, PixItem *item)
{
	g_autoptr(PixMeta) m = pix_meta_new();
	guint8 *tiff = mp->tiff_head->data + 6;
	gsize len = mp->tiff_head->len - 6;
	g_autofree char *damage = pix_tiff_check(tiff, len, mp->total_bytes);
	g_autofree char *ignored = NULL;

	if (damage != NULL) {
		g_autofree char *text = g_strconcat("corrupt TIFF structure: ", damage, NULL);
		add_error(item, text);
	}
	/* RW2 (0x55) and ORF ("RO", "RS") are TIFF with another version
	 * number, which libexif refuses: it reads them as version 42 */
	if (len >= 4 && !(tiff[2] == 42 && tiff[3] == 0) && !(tiff[2] == 0 && tiff[3] == 42) &&
	    !(tiff[2] == 43 || tiff[3] == 43)) {
		gboolean is_big = tiff[0] == 'M';
		tiff[2] = is_big ? 0 : 42;
		tiff[3] = is_big ? 42 : 0;
	}
	/* libexif sees only the head of a large file and calls what lies
	 * beyond "corrupt": only our check, which knows the file's length,
	 * judges the structure here */
	pix_exif_read(mp->tiff_head->data, mp->tiff_head->len, m, &ignored);
	item->meta = g_steal_pointer(&m);
}

void pix_meta_parser_finish(PixMetaParser *mp, PixItem *item)
{
	if (!mp->is_decided) {
		decide(mp);
		dispatch(mp, mp->head, mp->head_len);
	}
	item->mime = mp->mime;
	item->media = mp->media;
	if (mp->format == FMT_JPEG)
		finish_jpeg(mp, item);
	else if (mp->format == FMT_TIFF)
		finish_tiff(mp, item);
}
