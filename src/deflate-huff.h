/*
 * deflate-huff.h: a zlib stream of Huffman-coded literals only.
 *
 * What zlib's Z_HUFFMAN_ONLY makes (no matches looked for: filtered
 * photographs have few worth the search), written four to five times
 * faster than zlib 1.2 writes it, for the PNGs of the freedesktop.org
 * export (export-xdg.c), where zlib was 72 % of the processor time.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef PIX_DEFLATE_HUFF_H
#define PIX_DEFLATE_HUFF_H

#include <glib.h>

/* Appends to `out` the zlib stream (RFC 1950: header, RFC 1951 blocks of
 * dynamic Huffman codes of literals, Adler-32) of the `n` bytes at `in`. */
void pix_deflate_huffman(const guint8 *in, gsize n, GByteArray *out);

#endif
