/*
 * meta.c: recognises a file's format from its first bytes and hands the
 * stream to the parser for it: the JPEG stream parser (meta-jpeg.c), or a
 * PixContainer (meta-*.c) through a PixStream (stream.c).  Also what the
 * containers share: a TIFF block's fields (pix_meta_read_tiff()) and a
 * video's OpenSubtitles hash.
 *
 * Reads the bytes it is fed; writes the item's mime, media and meta at the
 * end.  Runs on a hash thread.
 *
 * Invariants:
 *  1. The format is decided once, from the first HEAD_BYTES bytes (or all
 *     of a shorter file), never from the name; a container may only make
 *     the type more precise afterwards (a TIFF that holds a RAW image).
 *  2. Memory per parser is bounded: HEAD_BYTES plus what the JPEG parser
 *     or the stream and its container keep (see their limits).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"
#include "exif.h"
#include "tiff.h"

#include <string.h>

#define HEAD_BYTES 64
/* what the OpenSubtitles hash sums at each end of a video */
#define OSDB_BYTES 65536

typedef enum {
	FMT_UNKNOWN,
	FMT_JPEG,       /* meta-jpeg.c's own stream parser */
	FMT_CONTAINER,  /* a PixContainer reads it through a PixStream */
	FMT_OTHER,      /* recognised, no metadata parser */
} Format;

struct PixMetaParser {
	guint8 head[HEAD_BYTES];
	gsize head_len;
	gboolean is_decided;
	Format format;
	const char *mime;
	PixMediaKind media;
	PixJpegParser *jpeg;
	const PixContainer *container;
	PixStream *stream;      /* FMT_CONTAINER, or a video (for its hash) */
	void *state;            /* the container's */
	guint64 total_bytes;    /* bytes fed so far */
	guint64 expect_size;    /* the file's size as listed, or 0 */
};

/* Magic numbers: offset, bytes, what they mean; a NULL container means no
 * metadata parser for that format. */
typedef struct {
	gsize offset;
	const char *magic;
	gsize magic_len;
	const PixContainer *container;
	const char *mime;
	PixMediaKind media;
} Magic;

#define M(off, str, c, mime, media) { off, str, sizeof(str) - 1, c, mime, media }
#define TIFF_C (&pix_container_tiff)
#define NONE NULL
static const Magic magics[] = {
	M(0, "\x89PNG\r\n\x1a\n", &pix_container_png, "image/png", PIX_MEDIA_IMAGE),
	M(0, "GIF87a", NONE, "image/gif", PIX_MEDIA_IMAGE),
	M(0, "GIF89a", NONE, "image/gif", PIX_MEDIA_IMAGE),
	M(0, "II\x2a\x00\x10\x00\x00\x00" "CR", TIFF_C, "image/x-canon-cr2", PIX_MEDIA_RAW),
	M(0, "IIRO", TIFF_C, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "IIRS", TIFF_C, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "MMOR", TIFF_C, "image/x-olympus-orf", PIX_MEDIA_RAW),
	M(0, "IIU\x00", TIFF_C, "image/x-panasonic-rw2", PIX_MEDIA_RAW),
	M(0, "II\x2a\x00", TIFF_C, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "MM\x00\x2a", TIFF_C, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "II\x2b\x00", TIFF_C, "image/tiff", PIX_MEDIA_IMAGE),   /* BigTIFF */
	M(0, "MM\x00\x2b", TIFF_C, "image/tiff", PIX_MEDIA_IMAGE),
	M(0, "FUJIFILMCCD-RAW", &pix_container_raf, "image/x-fujifilm-raf", PIX_MEDIA_RAW),
	M(0, "\x00MRM", &pix_container_mrw, "image/x-minolta-mrw", PIX_MEDIA_RAW),
	M(0, "FOVb", &pix_container_x3f, "image/x-sigma-x3f", PIX_MEDIA_RAW),
	M(0, "II\x1a\x00\x00\x00HEAPCCDR", &pix_container_crw, "image/x-canon-crw", PIX_MEDIA_RAW),
	M(0, "\xff\x0a", &pix_container_bmff, "image/jxl", PIX_MEDIA_IMAGE),
	M(0, "\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a", &pix_container_bmff, "image/jxl", PIX_MEDIA_IMAGE),
	M(0, "BM", NONE, "image/bmp", PIX_MEDIA_IMAGE),
	M(0, "<?xpacket", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "<x:xmpmeta", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "\xef\xbb\xbf<?xpacket", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "\xef\xbb\xbf<x:xmpmeta", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "<x:xapmeta", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),   /* XMP before 2002 */
	M(0, "<rdf:RDF", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	/* darktable, Exiv2 before 0.27 (digiKam), Capture One */
	M(0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<x:xmpmeta", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<x:xmpmeta", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
	M(0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?xpacket", &pix_container_xmp, "application/rdf+xml", PIX_MEDIA_SIDECAR),
};
#undef M
#undef TIFF_C
#undef NONE

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

/* Sets what decide() found. */
static void decided(PixMetaParser *mp, Format format, const PixContainer *c, const char *mime, PixMediaKind media)
{
	mp->format = c != NULL ? FMT_CONTAINER : format;
	mp->container = c;
	mp->mime = mime;
	mp->media = media;
}

/* Decides the format from the head bytes collected so far. */
static void decide(PixMetaParser *mp)
{
	const guint8 *h = mp->head;
	gsize n = mp->head_len;

	mp->is_decided = TRUE;
	decided(mp, FMT_UNKNOWN, NULL, "application/octet-stream", PIX_MEDIA_OTHER);
	if (n == 0) {
		mp->mime = "application/x-empty";
		return;
	}
	if (n >= 3 && memcmp(h, "\xff\xd8\xff", 3) == 0) {
		decided(mp, FMT_JPEG, NULL, "image/jpeg", PIX_MEDIA_IMAGE);
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(magics); i++) {
		const Magic *m = &magics[i];
		if (n >= m->offset + m->magic_len && memcmp(h + m->offset, m->magic, m->magic_len) == 0) {
			decided(mp, FMT_OTHER, m->container, m->mime, m->media);
			return;
		}
	}
	if (n >= 12 && memcmp(h, "RIFF", 4) == 0) {
		if (memcmp(h + 8, "WEBP", 4) == 0)
			decided(mp, FMT_OTHER, &pix_container_riff, "image/webp", PIX_MEDIA_IMAGE);
		else if (memcmp(h + 8, "AVI ", 4) == 0)
			decided(mp, FMT_OTHER, &pix_container_riff, "video/x-msvideo", PIX_MEDIA_VIDEO);
		return;
	}
	/* QuickTime files from before ftyp start with one of these atoms */
	static const char *const qt_atoms[] = { "moov", "mdat", "wide", "free", "skip", "pnot" };
	for (guint i = 0; n >= 8 && i < G_N_ELEMENTS(qt_atoms); i++) {
		if (memcmp(h + 4, qt_atoms[i], 4) == 0) {
			decided(mp, FMT_OTHER, &pix_container_bmff, "video/quicktime", PIX_MEDIA_VIDEO);
			return;
		}
	}
	if (n >= 12 && memcmp(h + 4, "ftyp", 4) == 0) {
		/* isom, mp41, mp42, avc1 and the rest */
		decided(mp, FMT_OTHER, &pix_container_bmff, "video/mp4", PIX_MEDIA_VIDEO);
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

void pix_meta_parser_reset(PixMetaParser *mp)
{
	pix_jpeg_parser_free(mp->jpeg);
	if (mp->container != NULL)
		mp->container->free(mp->state);
	pix_stream_free(mp->stream);
	memset(mp, 0, sizeof *mp);
}

void pix_meta_parser_free(PixMetaParser *mp)
{
	if (mp == NULL)
		return;
	pix_meta_parser_reset(mp);
	g_free(mp);
}

void pix_meta_parser_expect_size(PixMetaParser *mp, guint64 size)
{
	g_assert(mp->total_bytes == 0);
	mp->expect_size = size;
}

/* Sets up the parser for the format decided: the container's stream (a
 * video's also keeps both ends for its hash). */
static void begin(PixMetaParser *mp)
{
	gsize keep_head = 0, keep_tail = 0;
	if (mp->format == FMT_JPEG)
		mp->jpeg = pix_jpeg_parser_new();
	if (mp->container != NULL) {
		keep_head = mp->container->keep_head;
		keep_tail = mp->container->keep_tail;
	}
	if (mp->media == PIX_MEDIA_VIDEO) {
		keep_head = MAX(keep_head, OSDB_BYTES);
		keep_tail = MAX(keep_tail, OSDB_BYTES);
	}
	if (mp->container != NULL || mp->media == PIX_MEDIA_VIDEO) {
		mp->stream = pix_stream_new(keep_head, keep_tail);
		pix_stream_expect_size(mp->stream, mp->expect_size);
	}
	if (mp->container != NULL)
		mp->state = mp->container->start(mp->stream);
}

/* Passes bytes to the parser chosen for the format. */
static void dispatch(PixMetaParser *mp, const guint8 *data, gsize len)
{
	if (mp->jpeg != NULL)
		pix_jpeg_parser_feed(mp->jpeg, data, len);
	if (mp->stream != NULL)
		pix_stream_feed(mp->stream, data, len);
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
		begin(mp);
		/* the head went in before the format was known: replay it */
		dispatch(mp, mp->head, mp->head_len);
		data += take;
		len -= take;
	}
	if (len > 0)
		dispatch(mp, data, len);
}

const PixPreview *pix_meta_parser_previews(const PixMetaParser *mp, guint *n)
{
	*n = 0;
	if (mp->jpeg != NULL)
		return pix_jpeg_parser_previews(mp->jpeg, n);
	if (mp->container != NULL && mp->container->previews != NULL && mp->state != NULL)
		return mp->container->previews(mp->state, n);
	return NULL;
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

void pix_meta_read_tiff(PixStream *s, const guint8 *tiff, gsize len, PixTiffRole role, PixMeta *m)
{
	g_autofree char *problem = NULL;
	if (!pix_exif_read_tiff(tiff, len, role, m, &problem))
		pix_stream_problem(s, "%s", problem);
}

void pix_meta_read_captured(PixStream *s, GBytes *exif, GBytes *xmp, PixMeta *m)
{
	gsize len;
	gboolean has_size = m->width_px >= 0;
	if (exif != NULL) {
		const guint8 *tiff = g_bytes_get_data(exif, &len);
		pix_meta_read_tiff(s, tiff, len, PIX_TIFF_ROLE_MAIN, m);
	}
	if (xmp != NULL) {
		const guint8 *packet = g_bytes_get_data(xmp, &len);
		pix_meta_read_xmp_in(s, packet, len, m, NULL);
	}
	if (!has_size) {
		/* EXIF's or XMP's claim is not this image's size */
		m->width_px = -1;
		m->height_px = -1;
	}
}

static void finish_jpeg(PixMetaParser *mp, PixItem *item)
{
	PixJpegInfo info;
	g_autoptr(PixMeta) m = pix_meta_new();
	gsize len;

	pix_jpeg_parser_finish(mp->jpeg, &info);
	m->width_px = info.width_px;
	m->height_px = info.height_px;
	if (info.error != NULL)
		add_error(item, info.error);
	/* what the metadata blocks say is wrong with them */
	g_autoptr(PixStream) s = pix_stream_new(0, 0);
	if (info.exif != NULL) {
		const guint8 *data = g_bytes_get_data(info.exif, &len);
		/* kept in the APP1 form: the TIFF follows "Exif\0\0" */
		pix_meta_read_tiff(s, data + 6, len - 6, PIX_TIFF_ROLE_MAIN, m);
	}
	/* XMP fills only what EXIF left unknown: EXIF is the camera's record;
	 * then the extended packet (what did not fit in the main one), then
	 * the IPTC-IIM (what XMP does not say) */
	if (info.xmp != NULL) {
		g_autofree char *guid = NULL, *problem = NULL;
		const guint8 *data = g_bytes_get_data(info.xmp, &len);
		pix_meta_read_xmp_in(s, data, len, m, &guid);
		g_autoptr(GBytes) ext = guid != NULL ? pix_xmp_ext_take(info.xmp_ext, guid, &problem) : NULL;
		if (ext != NULL) {
			data = g_bytes_get_data(ext, &len);
			pix_meta_read_xmp_in(s, data, len, m, NULL);
		} else if (problem != NULL) {
			pix_stream_problem(s, "corrupt XMP: %s", problem);
		}
	}
	if (info.irb != NULL) {
		const guint8 *data = g_bytes_get_data(info.irb, &len);
		pix_meta_read_irb(s, data, len, m);
	}
	g_autofree char *problems = pix_stream_problems(s);
	if (problems != NULL)
		add_error(item, problems);
	item->meta = g_steal_pointer(&m);
	pix_jpeg_info_clear(&info);
}

/* The OpenSubtitles hash: the size plus the sums, as little-endian 64-bit
 * words, of the first and the last 64 KiB (of the whole file twice when
 * it is smaller; a last partial word is zero-padded). */
static gboolean osdb_hash(const PixStream *s, guint64 *out)
{
	guint64 size = pix_stream_pos(s), hash = size;
	gsize n = (gsize)MIN(size, OSDB_BYTES);
	const guint8 *ends[2] = { pix_stream_peek(s, 0, n), pix_stream_peek(s, size - n, n) };
	for (guint e = 0; e < 2; e++) {
		if (ends[e] == NULL)
			return FALSE;
		for (gsize i = 0; i < n; i += 8) {
			guint64 word = 0;
			for (gsize b = 0; b < 8 && i + b < n; b++)
				word |= (guint64)ends[e][i + b] << (8 * b);
			hash += word;
		}
	}
	*out = hash;
	return TRUE;
}

static void finish_stream(PixMetaParser *mp, PixItem *item)
{
	g_autoptr(PixMeta) m = pix_meta_new();

	pix_stream_finish(mp->stream);
	if (mp->container != NULL) {
		mp->container->finish(mp->state, mp->stream, m);
		const char *mime = mp->container->mime != NULL ? mp->container->mime(mp->state, &mp->media) : NULL;
		if (mime != NULL)
			mp->mime = mime;
	}
	if (mp->media == PIX_MEDIA_VIDEO)
		m->has_osdb_hash = osdb_hash(mp->stream, &m->osdb_hash);
	g_autofree char *problems = pix_stream_problems(mp->stream);
	if (problems != NULL)
		add_error(item, problems);
	item->meta = g_steal_pointer(&m);
}

void pix_meta_parser_finish(PixMetaParser *mp, PixItem *item)
{
	if (!mp->is_decided) {
		decide(mp);
		begin(mp);
		dispatch(mp, mp->head, mp->head_len);
	}
	if (mp->jpeg != NULL)
		finish_jpeg(mp, item);
	else if (mp->stream != NULL)
		finish_stream(mp, item);
	/* every place read: the photographer's metadata settled */
	g_autofree char *note = pix_meta_finish_tags(item->meta);
	if (note != NULL) {
		g_autofree char *problem = g_strconcat("photographer's metadata: ", note, NULL);
		add_error(item, problem);
	}
	item->mime = mp->mime;
	item->media = mp->media;
}
