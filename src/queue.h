/*
 * queue.h: a bounded, closable FIFO of pointers between pipeline stages.
 *
 * Back-pressure: pix_queue_push() blocks while the queue holds `capacity`
 * elements, so a fast stage cannot run ahead of a slow one by more than the
 * capacity, and memory stays bounded.  A queue has producers that each call
 * pix_queue_close() once when they are done; when the last one has closed
 * and the queue is drained, pix_queue_pop() returns NULL.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef PIX_QUEUE_H
#define PIX_QUEUE_H

#include <glib.h>

typedef struct PixQueue PixQueue;

/* A queue holding at most `capacity` (>= 1) elements, expecting `producers`
 * (>= 1) calls of pix_queue_close() before it ends. */
PixQueue *pix_queue_new(guint capacity, guint producers);
/* Frees the queue; it must be empty.  Accepts NULL. */
void pix_queue_free(PixQueue *q);

/* Appends `data` (non-NULL, transfer full), waiting for room.  Must not be
 * called by a producer after its pix_queue_close(). */
void pix_queue_push(PixQueue *q, gpointer data);
/* Removes the oldest element (transfer full), waiting for one; NULL once
 * every producer has closed and the queue is empty. */
gpointer pix_queue_pop(PixQueue *q);
/* As pix_queue_pop(), but gives up after `timeout_us` microseconds: then
 * returns NULL and sets *is_timeout (which is FALSE on the end of input). */
gpointer pix_queue_pop_timeout(PixQueue *q, gint64 timeout_us, gboolean *is_timeout);
/* One producer is done. */
void pix_queue_close(PixQueue *q);
/* Number of elements waiting (a snapshot, for progress and tests). */
guint pix_queue_length(PixQueue *q);

#endif
