/*
 * phash-fill.h: perceptual hashes for the thumbnails a catalog stored
 * without one, computed from the stored renditions (no file is read).
 *
 * Thread-safety: main thread, with the writer PixStore; it starts and
 * joins its own threads.
 */
#ifndef PIX_PHASH_FILL_H
#define PIX_PHASH_FILL_H

#include "store.h"

/*
 * Every row of thumbs without a hash of PIX_PHASH_VERSION gets one (or,
 * with a note, the version alone), in committed chunks; the hashes
 * written are counted in PIX_N_PHASHES_FILLED.  FALSE with `error` set
 * when the catalog fails (the chunks committed stay).
 */
gboolean pix_phash_fill(PixStore *writer, GError **error);

/* The PixPhashFn of pix_phash_fill(): each job's rendition decoded and
 * hashed, on one thread per core.  `data` is unused. */
void pix_phash_fill_jobs(PixPhashJob *jobs, guint n, gpointer data);

#endif
