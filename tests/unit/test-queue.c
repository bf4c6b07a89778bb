/*
 * test-queue.c: unit tests of the bounded queue (src/queue.h).
 *
 * Covers FIFO order (also across the ring's wrap-around), back-pressure
 * (push blocks while the queue is full), the end of input (pop gives NULL
 * only once every producer closed and the queue drained), pop_timeout's
 * timeout-versus-end report, and many producers and consumers moving every
 * item exactly once.
 *
 * The blocking tests run the blocking call on a helper thread and check
 * from the test thread that it has not returned yet; the waits are short
 * (tens of milliseconds) and the checks are ordered so that a slow machine
 * can only make a correct queue pass more slowly, never fail.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "queue.h"
#include "testlib.h"

/* Items are small integers disguised as pointers; 0 is never used
 * because the queue refuses NULL. */
#define ITEM(n) GUINT_TO_POINTER((guint)(n) + 1)
#define ITEM_NUMBER(p) (GPOINTER_TO_UINT(p) - 1)

/* How long a helper thread gets to show that it is (wrongly) not blocked. */
#define SETTLE_US (50 * 1000)
/* How long a helper thread may take to return once it should: a queue
 * that loses a wake-up fails the test instead of hanging it. */
#define WAKE_TIMEOUT_US (10 * G_USEC_PER_SEC)

/* Waits until the atomic `*counter` reaches `n`; fails the test after
 * WAKE_TIMEOUT_US. */
static void wait_for_count(gint *counter, gint n, const char *what)
{
	gint64 deadline = g_get_monotonic_time() + WAKE_TIMEOUT_US;
	while (g_atomic_int_get(counter) < n) {
		if (g_get_monotonic_time() > deadline)
			g_error("%s: still blocked after %d s", what, (int)(WAKE_TIMEOUT_US / G_USEC_PER_SEC));
		g_usleep(1000);
	}
}

static void test_fifo_order(void)
{
	PixQueue *q = pix_queue_new(8, 1);

	for (guint i = 0; i < 8; i++)
		pix_queue_push(q, ITEM(i));
	g_assert_cmpuint(pix_queue_length(q), ==, 8);
	for (guint i = 0; i < 8; i++)
		g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, i);
	g_assert_cmpuint(pix_queue_length(q), ==, 0);
	pix_queue_close(q);
	g_assert_null(pix_queue_pop(q));
	pix_queue_free(q);
}

/* Interleaved pushes and pops move the ring's head all the way round many
 * times: order must survive the wrap. */
static void test_fifo_order_across_wrap(void)
{
	PixQueue *q = pix_queue_new(3, 1);
	guint next_in = 0, next_out = 0;

	for (guint round = 0; round < 200; round++) {
		guint n_push = 1 + round % 3;
		for (guint i = 0; i < n_push && pix_queue_length(q) < 3; i++)
			pix_queue_push(q, ITEM(next_in++));
		guint n_pop = 1 + (round * 7) % 3;
		for (guint i = 0; i < n_pop && pix_queue_length(q) > 0; i++)
			g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, next_out++);
	}
	while (pix_queue_length(q) > 0)
		g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, next_out++);
	g_assert_cmpuint(next_out, ==, next_in);
	g_assert_cmpuint(next_in, >, 200);
	pix_queue_close(q);
	pix_queue_free(q);
}

typedef struct {
	PixQueue *q;
	gpointer item;
	gint is_done;       /* atomic: the blocking call returned */
	gpointer popped;
} Blocker;

static gpointer push_thread(gpointer data)
{
	Blocker *b = data;
	pix_queue_push(b->q, b->item);
	g_atomic_int_set(&b->is_done, 1);
	return NULL;
}

static gpointer pop_thread(gpointer data)
{
	Blocker *b = data;
	b->popped = pix_queue_pop(b->q);
	g_atomic_int_set(&b->is_done, 1);
	return NULL;
}

static void test_push_blocks_when_full(void)
{
	PixQueue *q = pix_queue_new(2, 1);
	Blocker b = { .q = q, .item = ITEM(2) };

	pix_queue_push(q, ITEM(0));
	pix_queue_push(q, ITEM(1));
	GThread *t = g_thread_new("pusher", push_thread, &b);
	g_usleep(SETTLE_US);
	g_assert_cmpint(g_atomic_int_get(&b.is_done), ==, 0);
	g_assert_cmpuint(pix_queue_length(q), ==, 2);

	/* one pop makes room: the pusher must now get through */
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, 0);
	wait_for_count(&b.is_done, 1, "a push after a pop made room");
	g_thread_join(t);
	g_assert_cmpint(g_atomic_int_get(&b.is_done), ==, 1);
	g_assert_cmpuint(pix_queue_length(q), ==, 2);
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, 1);
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, 2);
	pix_queue_close(q);
	pix_queue_free(q);
}

static void test_pop_blocks_until_push(void)
{
	PixQueue *q = pix_queue_new(4, 1);
	Blocker b = { .q = q };

	GThread *t = g_thread_new("popper", pop_thread, &b);
	g_usleep(SETTLE_US);
	g_assert_cmpint(g_atomic_int_get(&b.is_done), ==, 0);
	pix_queue_push(q, ITEM(42));
	wait_for_count(&b.is_done, 1, "a pop after a push");
	g_thread_join(t);
	g_assert_cmpuint(ITEM_NUMBER(b.popped), ==, 42);
	pix_queue_close(q);
	pix_queue_free(q);
}

/* With two producers, one close is not the end: a waiting pop must keep
 * waiting, and only the last close (queue empty) wakes it with NULL. */
static void test_end_needs_every_producer(void)
{
	PixQueue *q = pix_queue_new(4, 2);
	gboolean is_timeout = FALSE;

	pix_queue_push(q, ITEM(1));
	pix_queue_close(q);
	/* the element pushed before the close is still delivered */
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, 1);
	g_assert_null(pix_queue_pop_timeout(q, 20 * 1000, &is_timeout));
	g_assert_true(is_timeout);

	/* the second producer may still push */
	pix_queue_push(q, ITEM(2));
	Blocker b = { .q = q };
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, 2);
	GThread *t = g_thread_new("popper", pop_thread, &b);
	g_usleep(SETTLE_US);
	g_assert_cmpint(g_atomic_int_get(&b.is_done), ==, 0);
	pix_queue_close(q);
	wait_for_count(&b.is_done, 1, "a pop after the last close");
	g_thread_join(t);
	g_assert_null(b.popped);
	/* and it stays ended */
	g_assert_null(pix_queue_pop(q));
	pix_queue_free(q);
}

/* Closing with elements still queued: they all come out before the end. */
static void test_drain_after_close(void)
{
	PixQueue *q = pix_queue_new(5, 1);

	for (guint i = 0; i < 5; i++)
		pix_queue_push(q, ITEM(i));
	pix_queue_close(q);
	for (guint i = 0; i < 5; i++)
		g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop(q)), ==, i);
	g_assert_null(pix_queue_pop(q));
	pix_queue_free(q);
}

static void test_pop_timeout(void)
{
	PixQueue *q = pix_queue_new(2, 1);
	gboolean is_timeout = TRUE;

	/* an element at hand: no wait, no timeout */
	pix_queue_push(q, ITEM(7));
	g_assert_cmpuint(ITEM_NUMBER(pix_queue_pop_timeout(q, 0, &is_timeout)), ==, 7);
	g_assert_false(is_timeout);

	/* empty and open: NULL after (not before) the timeout */
	gint64 start = g_get_monotonic_time();
	g_assert_null(pix_queue_pop_timeout(q, 30 * 1000, &is_timeout));
	g_assert_true(is_timeout);
	g_assert_cmpint(g_get_monotonic_time() - start, >=, 30 * 1000);

	/* a zero timeout on an empty open queue is a timeout too */
	is_timeout = FALSE;
	g_assert_null(pix_queue_pop_timeout(q, 0, &is_timeout));
	g_assert_true(is_timeout);

	/* is_timeout may be NULL */
	g_assert_null(pix_queue_pop_timeout(q, 1000, NULL));

	/* ended: NULL at once, and not a timeout, however long the timeout */
	pix_queue_close(q);
	start = g_get_monotonic_time();
	is_timeout = TRUE;
	g_assert_null(pix_queue_pop_timeout(q, 10 * G_USEC_PER_SEC, &is_timeout));
	g_assert_false(is_timeout);
	g_assert_cmpint(g_get_monotonic_time() - start, <, 5 * G_USEC_PER_SEC);
	pix_queue_free(q);
}

/* A pop_timeout waiting on an open queue is woken by the last close and
 * reports the end, not a timeout. */
typedef struct {
	PixQueue *q;
	gpointer popped;
	gboolean is_timeout;
	gint is_done;
} TimedPop;

static gpointer timed_pop_thread(gpointer data)
{
	TimedPop *t = data;
	t->popped = pix_queue_pop_timeout(t->q, 20 * G_USEC_PER_SEC, &t->is_timeout);
	g_atomic_int_set(&t->is_done, 1);
	return NULL;
}

static void test_pop_timeout_woken_by_close(void)
{
	PixQueue *q = pix_queue_new(2, 1);
	TimedPop tp = { .q = q, .is_timeout = TRUE, .popped = ITEM(0) };
	gint64 start = g_get_monotonic_time();

	GThread *t = g_thread_new("timed-popper", timed_pop_thread, &tp);
	g_usleep(SETTLE_US);
	pix_queue_close(q);
	wait_for_count(&tp.is_done, 1, "a timed pop after the last close");
	g_thread_join(t);
	g_assert_null(tp.popped);
	g_assert_false(tp.is_timeout);
	g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
	pix_queue_free(q);
}

#define N_PRODUCERS 4
#define N_CONSUMERS 4
#define N_PER_PRODUCER 20000

typedef struct {
	PixQueue *q;
	guint producer;
	gint *seen;         /* per item: how many times it was popped (atomic) */
	gboolean is_order_ok;
	guint n_popped;
	gint *n_finished;   /* workers that returned (atomic, shared) */
} Worker;

static gpointer producer_thread(gpointer data)
{
	Worker *w = data;
	for (guint i = 0; i < N_PER_PRODUCER; i++)
		pix_queue_push(w->q, ITEM(w->producer * N_PER_PRODUCER + i));
	pix_queue_close(w->q);
	g_atomic_int_inc(w->n_finished);
	return NULL;
}

static gpointer consumer_thread(gpointer data)
{
	Worker *w = data;
	/* a FIFO hands one producer's items out in its push order, so any one
	 * consumer sees each producer's numbers strictly increasing */
	gint64 last[N_PRODUCERS];
	gpointer p;

	for (guint i = 0; i < N_PRODUCERS; i++)
		last[i] = -1;
	w->is_order_ok = TRUE;
	while ((p = pix_queue_pop(w->q)) != NULL) {
		guint n = ITEM_NUMBER(p);
		guint producer = n / N_PER_PRODUCER;
		if (producer >= N_PRODUCERS || (gint64)n <= last[producer])
			w->is_order_ok = FALSE;
		else
			last[producer] = n;
		if (n < N_PRODUCERS * N_PER_PRODUCER)
			g_atomic_int_inc(&w->seen[n]);
		w->n_popped++;
	}
	g_atomic_int_inc(w->n_finished);
	return NULL;
}

static void test_many_producers_and_consumers(void)
{
	PixQueue *q = pix_queue_new(16, N_PRODUCERS);
	g_autofree gint *seen = g_new0(gint, N_PRODUCERS * N_PER_PRODUCER);
	Worker producers[N_PRODUCERS], consumers[N_CONSUMERS];
	GThread *threads[N_PRODUCERS + N_CONSUMERS];
	guint n_popped = 0;
	gint n_finished = 0;

	for (guint i = 0; i < N_CONSUMERS; i++) {
		consumers[i] = (Worker){ .q = q, .seen = seen, .n_finished = &n_finished };
		threads[N_PRODUCERS + i] = g_thread_new("consumer", consumer_thread, &consumers[i]);
	}
	for (guint i = 0; i < N_PRODUCERS; i++) {
		producers[i] = (Worker){ .q = q, .producer = i, .n_finished = &n_finished };
		threads[i] = g_thread_new("producer", producer_thread, &producers[i]);
	}
	wait_for_count(&n_finished, N_PRODUCERS + N_CONSUMERS, "producers and consumers");
	for (guint i = 0; i < G_N_ELEMENTS(threads); i++)
		g_thread_join(threads[i]);

	for (guint i = 0; i < N_CONSUMERS; i++) {
		g_assert_true(consumers[i].is_order_ok);
		n_popped += consumers[i].n_popped;
	}
	g_assert_cmpuint(n_popped, ==, N_PRODUCERS * N_PER_PRODUCER);
	for (guint i = 0; i < N_PRODUCERS * N_PER_PRODUCER; i++) {
		if (seen[i] != 1)
			g_error("item %u was popped %d times", i, seen[i]);
	}
	g_assert_cmpuint(pix_queue_length(q), ==, 0);
	pix_queue_free(q);
}

/* Back-pressure as a bound: a producer racing a slow consumer never has
 * more than `capacity` elements waiting. */
typedef struct {
	PixQueue *q;
	guint n;
} Flood;

static gpointer flood_thread(gpointer data)
{
	Flood *f = data;
	for (guint i = 0; i < f->n; i++)
		pix_queue_push(f->q, ITEM(i));
	pix_queue_close(f->q);
	return NULL;
}

/* The integer an element stands for is its weight. */
static gint64 weight_of(gconstpointer p)
{
	return GPOINTER_TO_INT(p);
}

/* Batches by weight: small elements together up to the budget, a heavy
 * one alone (the first of a batch whatever it weighs), order kept. */
static void test_pop_weighed(void)
{
	PixQueue *q = pix_queue_new(16, 1);
	static const int w[] = { 1, 1, 2, 9, 1, 20, 3, 3, 3, 1 };
	for (guint i = 0; i < G_N_ELEMENTS(w); i++)
		pix_queue_push(q, GINT_TO_POINTER(w[i]));
	pix_queue_close(q);
	static const int want[][4] = { { 1, 1, 2 }, { 9, 1 }, { 20 }, { 3, 3, 3, 1 } };
	gpointer out[8];
	for (guint b = 0; b < G_N_ELEMENTS(want); b++) {
		guint n = pix_queue_pop_weighed(q, out, 8, weight_of, 10, -1, NULL);
		guint n_want = 0;
		while (n_want < 4 && want[b][n_want] != 0)
			n_want++;
		g_assert_cmpuint(n, ==, n_want);
		for (guint i = 0; i < n; i++)
			g_assert_cmpint(GPOINTER_TO_INT(out[i]), ==, want[b][i]);
	}
	g_assert_cmpuint(pix_queue_pop_weighed(q, out, 8, weight_of, 10, -1, NULL), ==, 0);
	pix_queue_free(q);
}

/* Bounded by weight: a push waits while the queue holds the bound or
 * more, whatever the count; a pop that brings it under lets it in; an
 * element heavier than the bound still enters an empty queue. */
static void test_push_blocks_by_weight(void)
{
	PixQueue *q = pix_queue_new(100, 1);
	pix_queue_set_weight(q, weight_of, 10);
	Blocker b = { .q = q, .item = GINT_TO_POINTER(1) };

	pix_queue_push(q, GINT_TO_POINTER(4));
	pix_queue_push(q, GINT_TO_POINTER(4));
	pix_queue_push(q, GINT_TO_POINTER(4));  /* 12: at the bound and over */
	GThread *t = g_thread_new("pusher", push_thread, &b);
	g_usleep(SETTLE_US);
	g_assert_cmpint(g_atomic_int_get(&b.is_done), ==, 0);
	g_assert_cmpuint(pix_queue_length(q), ==, 3);

	g_assert_cmpint(GPOINTER_TO_INT(pix_queue_pop(q)), ==, 4);   /* 8 */
	wait_for_count(&b.is_done, 1, "a push after a pop brought the weight under the bound");
	g_thread_join(t);
	g_assert_cmpuint(pix_queue_length(q), ==, 3);
	static const int rest[] = { 4, 4, 1 };
	for (guint i = 0; i < G_N_ELEMENTS(rest); i++)
		g_assert_cmpint(GPOINTER_TO_INT(pix_queue_pop(q)), ==, rest[i]);
	g_assert_cmpuint(pix_queue_length(q), ==, 0);

	/* empty, so the heavy one goes in at once; then it alone is over */
	pix_queue_push(q, GINT_TO_POINTER(20));
	Blocker b2 = { .q = q, .item = GINT_TO_POINTER(1) };
	t = g_thread_new("pusher", push_thread, &b2);
	g_usleep(SETTLE_US);
	g_assert_cmpint(g_atomic_int_get(&b2.is_done), ==, 0);
	g_assert_cmpint(GPOINTER_TO_INT(pix_queue_pop(q)), ==, 20);
	wait_for_count(&b2.is_done, 1, "a push into the emptied queue");
	g_thread_join(t);
	g_assert_cmpint(GPOINTER_TO_INT(pix_queue_pop(q)), ==, 1);
	pix_queue_close(q);
	g_assert_null(pix_queue_pop(q));
	pix_queue_free(q);
}

static void test_length_never_exceeds_capacity(void)
{
	PixQueue *q = pix_queue_new(5, 1);
	Flood f = { .q = q, .n = 500 };
	guint max_len = 0, n = 0;
	gpointer p;

	GThread *t = g_thread_new("flood", flood_thread, &f);
	while ((p = pix_queue_pop(q)) != NULL) {
		g_assert_cmpuint(ITEM_NUMBER(p), ==, n);
		n++;
		if (n % 50 == 0)
			g_usleep(1000);  /* let the producer fill up */
		max_len = MAX(max_len, pix_queue_length(q));
	}
	g_thread_join(t);
	g_assert_cmpuint(n, ==, 500);
	g_assert_cmpuint(max_len, <=, 5);
	g_assert_cmpuint(max_len, >=, 1);
	pix_queue_free(q);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/queue/fifo-order", test_fifo_order);
	g_test_add_func("/queue/fifo-order-across-wrap", test_fifo_order_across_wrap);
	g_test_add_func("/queue/push-blocks-when-full", test_push_blocks_when_full);
	g_test_add_func("/queue/pop-blocks-until-push", test_pop_blocks_until_push);
	g_test_add_func("/queue/end-needs-every-producer", test_end_needs_every_producer);
	g_test_add_func("/queue/drain-after-close", test_drain_after_close);
	g_test_add_func("/queue/pop-timeout", test_pop_timeout);
	g_test_add_func("/queue/pop-timeout-woken-by-close", test_pop_timeout_woken_by_close);
	g_test_add_func("/queue/many-producers-and-consumers", test_many_producers_and_consumers);
	g_test_add_func("/queue/length-never-exceeds-capacity", test_length_never_exceeds_capacity);
	g_test_add_func("/queue/pop-weighed-batches", test_pop_weighed);
	g_test_add_func("/queue/push-blocks-by-weight", test_push_blocks_by_weight);
	return g_test_run();
}
