/*
 * queue.c: the bounded queue between pipeline stages (see queue.h).
 *
 * A ring buffer of `capacity` pointers under one mutex, with one condition
 * for "not empty" and one for "not full".  Any thread may push or pop.
 * A condition is signalled only when a thread waits on it: GLib's
 * g_cond_signal() makes a futex system call every time, which cost a
 * system call per message per queue when nobody was waiting.  And it
 * wakes one waiter at a time, which passes the wake-up on when it leaves
 * work (or room) behind: a broadcast woke every reader blocked on a full
 * hash queue whenever its hasher took a batch, and all but the few that
 * found room went back to sleep (16 readers, 200,000 small files: a
 * context switch per 4 files).
 *
 * Invariants:
 *  1. 0 <= len <= capacity, and the `len` elements from `head` (mod
 *     capacity) are the queued pointers in push order.  With a weight,
 *     `held` is the sum of their weights (0 when len == 0).
 *  2. open_producers only decreases; pop returns NULL at the end of input
 *     only when open_producers == 0 and len == 0.
 *  3. n_pop_waiters / n_push_waiters count the threads inside g_cond_wait*
 *     on not_empty / not_full; both change only under the lock, so a push
 *     or pop that sees zero has no one to wake.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "queue.h"

struct PixQueue {
	GMutex lock;
	GCond not_empty;
	GCond not_full;
	guint n_pop_waiters;    /* threads waiting on not_empty */
	guint n_push_waiters;   /* threads waiting on not_full */
	gpointer *ring;
	guint capacity;
	guint head;
	guint len;
	guint open_producers;
	PixQueueWeight weight;  /* NULL: bounded by count alone */
	gint64 max_weight;
	gint64 held;            /* the queued elements' weight */
};

static gboolean queue_check(PixQueue *q)
{
	return q->len <= q->capacity && q->head < q->capacity && q->held >= 0 && (q->len > 0 || q->held == 0);
}

/* Whether a push must wait for room. */
static gboolean is_full(const PixQueue *q)
{
	return q->len == q->capacity || (q->weight != NULL && q->len > 0 && q->held >= q->max_weight);
}

void pix_queue_set_weight(PixQueue *q, PixQueueWeight weight, gint64 max_weight)
{
	g_mutex_lock(&q->lock);
	g_assert(q->len == 0);
	q->weight = weight;
	q->max_weight = max_weight;
	g_mutex_unlock(&q->lock);
}

PixQueue *pix_queue_new(guint capacity, guint producers)
{
	g_assert(capacity >= 1 && producers >= 1);
	PixQueue *q = g_new0(PixQueue, 1);
	g_mutex_init(&q->lock);
	g_cond_init(&q->not_empty);
	g_cond_init(&q->not_full);
	q->ring = g_new0(gpointer, capacity);
	q->capacity = capacity;
	q->open_producers = producers;
	return q;
}

void pix_queue_free(PixQueue *q)
{
	if (q == NULL)
		return;
	g_assert(q->len == 0);
	g_mutex_clear(&q->lock);
	g_cond_clear(&q->not_empty);
	g_cond_clear(&q->not_full);
	g_free(q->ring);
	g_free(q);
}

void pix_queue_push_many(PixQueue *q, gpointer *items, guint n)
{
	guint done = 0;
	g_mutex_lock(&q->lock);
	g_assert(q->open_producers > 0);
	while (done < n) {
		while (is_full(q)) {
			/* a consumer may be waiting for what is already in */
			if (q->n_pop_waiters > 0)
				g_cond_signal(&q->not_empty);
			q->n_push_waiters++;
			g_cond_wait(&q->not_full, &q->lock);
			q->n_push_waiters--;
		}
		for (; done < n && !is_full(q); done++) {
			g_assert(items[done] != NULL);
			q->ring[(q->head + q->len) % q->capacity] = items[done];
			q->len++;
			if (q->weight != NULL)
				q->held += q->weight(items[done]);
		}
	}
	g_assert(queue_check(q));
	if (q->n_pop_waiters > 0)
		g_cond_signal(&q->not_empty);
	/* room left: the next producer waiting for it */
	if (!is_full(q) && q->n_push_waiters > 0)
		g_cond_signal(&q->not_full);
	g_mutex_unlock(&q->lock);
}

void pix_queue_push(PixQueue *q, gpointer data)
{
	pix_queue_push_many(q, &data, 1);
}

guint pix_queue_pop_many(PixQueue *q, gpointer *out, guint max, gint64 timeout_us, gboolean *is_timeout)
{
	return pix_queue_pop_weighed(q, out, max, NULL, 0, timeout_us, is_timeout);
}

guint pix_queue_pop_weighed(PixQueue *q, gpointer *out, guint max, PixQueueWeight weight, gint64 budget,
                            gint64 timeout_us, gboolean *is_timeout)
{
	gint64 deadline = timeout_us < 0 ? -1 : g_get_monotonic_time() + timeout_us;
	guint n = 0;

	g_assert(max >= 1);
	if (is_timeout != NULL)
		*is_timeout = FALSE;
	g_mutex_lock(&q->lock);
	while (q->len == 0 && q->open_producers > 0) {
		gboolean is_woken = TRUE;
		if (deadline >= 0 && g_get_monotonic_time() >= deadline) {
			is_woken = FALSE;
		} else {
			q->n_pop_waiters++;
			if (deadline < 0)
				g_cond_wait(&q->not_empty, &q->lock);
			else
				is_woken = g_cond_wait_until(&q->not_empty, &q->lock, deadline);
			q->n_pop_waiters--;
		}
		if (!is_woken && q->len == 0 && q->open_producers > 0) {
			if (is_timeout != NULL)
				*is_timeout = TRUE;
			g_mutex_unlock(&q->lock);
			return 0;
		}
	}
	gint64 total = 0;
	while (q->len > 0 && n < max) {
		if (weight != NULL) {
			total += weight(q->ring[q->head]);
			if (n > 0 && total > budget)
				break;  /* the first always comes */
		}
		out[n++] = q->ring[q->head];
		if (q->weight != NULL)
			q->held -= q->weight(q->ring[q->head]);
		q->ring[q->head] = NULL;
		q->head = (q->head + 1) % q->capacity;
		q->len--;
	}
	if (n > 0 && !is_full(q) && q->n_push_waiters > 0)
		g_cond_signal(&q->not_full);
	/* work left: the next consumer waiting for it (or the end of input) */
	if ((q->len > 0 || q->open_producers == 0) && q->n_pop_waiters > 0)
		g_cond_signal(&q->not_empty);
	g_assert(queue_check(q));
	g_mutex_unlock(&q->lock);
	return n;
}

gpointer pix_queue_pop_timeout(PixQueue *q, gint64 timeout_us, gboolean *is_timeout)
{
	gpointer data = NULL;
	return pix_queue_pop_many(q, &data, 1, timeout_us, is_timeout) == 1 ? data : NULL;
}

gpointer pix_queue_pop(PixQueue *q)
{
	return pix_queue_pop_timeout(q, -1, NULL);
}

void pix_queue_close(PixQueue *q)
{
	g_mutex_lock(&q->lock);
	g_assert(q->open_producers > 0);
	q->open_producers--;
	if (q->open_producers == 0)
		g_cond_broadcast(&q->not_empty);
	g_mutex_unlock(&q->lock);
}

guint pix_queue_length(PixQueue *q)
{
	g_mutex_lock(&q->lock);
	guint len = q->len;
	g_mutex_unlock(&q->lock);
	return len;
}
