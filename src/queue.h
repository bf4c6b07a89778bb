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
/*
 * Appends `n` elements in order (each non-NULL, transfer full) under one
 * lock, waking a waiting consumer once rather than per element: the
 * hand-off of a batch costs what one element did.  Waits for room as
 * pix_queue_push() does (a batch larger than the free room goes in as
 * room comes).
 */
void pix_queue_push_many(PixQueue *q, gpointer *items, guint n);
/*
 * Removes up to `max` (>= 1) of the oldest elements into `out`, waiting as
 * pix_queue_pop_timeout() does (timeout_us < 0: without limit) until there
 * is at least one.  Returns how many; 0 at the end of input or on a
 * timeout (then *is_timeout, when non-NULL, is TRUE).
 */
guint pix_queue_pop_many(PixQueue *q, gpointer *out, guint max, gint64 timeout_us, gboolean *is_timeout);
/* What an element weighs for pix_queue_pop_weighed(). */
typedef gint64 (*PixQueueWeight)(gconstpointer element);
/* As pix_queue_pop_many(), but the elements taken weigh at most `budget`
 * together by `weight` (called under the queue's lock), the first
 * whatever it weighs. */
guint pix_queue_pop_weighed(PixQueue *q, gpointer *out, guint max, PixQueueWeight weight, gint64 budget,
                            gint64 timeout_us, gboolean *is_timeout);
/*
 * Bounds the queue by weight as well as by count: a push waits while the
 * queue holds `max_weight` or more by `weight` (called under the queue's
 * lock, once on push and once on pop, so it must give an element the same
 * weight both times).  An element always enters an empty queue, so the
 * queue holds at most `max_weight` plus one element's weight.  Call before
 * the first push.
 */
void pix_queue_set_weight(PixQueue *q, PixQueueWeight weight, gint64 max_weight);
/* One producer is done. */
void pix_queue_close(PixQueue *q);
/* Number of elements waiting (a snapshot, for progress and tests). */
guint pix_queue_length(PixQueue *q);

#endif
