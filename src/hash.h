/*
 * hash.h: the hash stage.  Hasher threads take the readers' chunks, compute
 * each file's MD5 (OpenSSL EVP, the reference implementation), feed the
 * same bytes to the metadata parser, and pass the finished item on to the
 * store.
 *
 * Thread-safety: pix_hash_start()/pix_hash_join() on one thread;
 * pix_md5_buffer() on any.
 */
#ifndef PIX_HASH_H
#define PIX_HASH_H

#include "item.h"
#include "queue.h"

typedef struct PixHashers PixHashers;

/*
 * Starts one hasher thread per queue in `in[0..n-1]` (PixChunk, see
 * read.h), each pushing finished PixItems to `out` and closing one
 * producer slot of `out` when its input ends.
 */
PixHashers *pix_hash_start(PixQueue **in, guint n, PixQueue *out);
/* Waits for the hashers to finish and frees them. */
void pix_hash_join(PixHashers *h);

/* MD5 of a buffer, with the same code as the hash stage (for tests and
 * verification). */
void pix_md5_buffer(const void *data, gsize len, guint8 out[16]);

/* 32 lowercase hex digits of an MD5 into `hex` (33 bytes). */
void pix_md5_hex(const guint8 md5[16], char hex[33]);

#endif
