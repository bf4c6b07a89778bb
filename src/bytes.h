/*
 * bytes.h: numbers read from the bytes of a file, as containers store
 * them (big-endian for BMFF, PNG, CRW headers; little-endian for RIFF and
 * most RAW makers' blocks).  The callers have checked that the bytes are
 * there.
 *
 * Thread-safety: pure functions.
 */
#ifndef PIX_BYTES_H
#define PIX_BYTES_H

#include <glib.h>

static inline guint16 pix_be16(const guint8 *p)
{
	return (guint16)(p[0] << 8 | p[1]);
}

static inline guint32 pix_be32(const guint8 *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

static inline guint64 pix_be64(const guint8 *p)
{
	return (guint64)pix_be32(p) << 32 | pix_be32(p + 4);
}

static inline guint16 pix_le16(const guint8 *p)
{
	return (guint16)(p[1] << 8 | p[0]);
}

static inline guint32 pix_le24(const guint8 *p)
{
	return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16;
}

static inline guint32 pix_le32(const guint8 *p)
{
	return (guint32)p[3] << 24 | (guint32)p[2] << 16 | (guint32)p[1] << 8 | p[0];
}

#endif
