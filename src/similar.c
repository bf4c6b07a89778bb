/*
 * similar.c: groups of similar images by the centre rule, found through
 * a multi-index over the hashes' bands (see similar.h).
 *
 * Reads the caller's arrays; writes the groups it returns.  Called on
 * any one thread, which takes the centres in order; the candidates of
 * each window of centres are found on that thread and n_threads - 1 of
 * a GThreadPool of its own, which read the index, the hashes and
 * `taken` and write only their own Worker (see Worker).
 *
 * Invariants (pix_similar_check(), asserted on every result):
 *  1. A group's first member is its centre; every other member is within
 *     the distance of the centre (a weak one: has its value), and comes
 *     after it in the input (the best copy first).
 *  2. An index is in one group at most: once taken (`taken`), never taken
 *     again, and a centre is taken whether or not it finds members.
 *  3. Weak and strong hashes never share a group.
 *  4. taken[] is written only by the calling thread, and only while no
 *     worker runs; the groups do not depend on the number of threads.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "similar.h"
#include "phash.h"

#include <string.h>

#define N_BANDS 4
#define BAND_BITS 16
#define N_BUCKETS (1u << BAND_BITS)

guint pix_similar_format_rank(const char *mime, const char *media)
{
	static const char *const camera[] = { "image/jpeg", "image/heic", "image/heif", "image/avif" };
	if (g_strcmp0(media, "raw") == 0)
		return 0;
	for (guint i = 0; i < G_N_ELEMENTS(camera); i++)
		if (g_strcmp0(mime, camera[i]) == 0)
			return 0;
	return 1;
}

int pix_similar_compare(const PixSimilarKey *a, const PixSimilarKey *b)
{
	if (a->pixels != b->pixels)
		return a->pixels > b->pixels ? -1 : 1;
	if (a->format_rank != b->format_rank)
		return a->format_rank < b->format_rank ? -1 : 1;
	if (a->mtime_ns != b->mtime_ns)
		return a->mtime_ns < b->mtime_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static guint band_of(guint64 h, guint b)
{
	return (guint)(h >> (64 - BAND_BITS * (b + 1))) & (N_BUCKETS - 1);
}

/* An entry of a band: an index into the hashes (the caller's array, 8
 * bytes a hash, is read for the distance: 4 bytes a band here, so the
 * four bands and the hashes stay in the processor's cache longer). */
typedef guint32 Entry;

/* One band: bucket k's entries are entry[start[k] .. start[k + 1] - 1],
 * ascending by index. */
typedef struct {
	guint32 *start;       /* N_BUCKETS + 1 (owned) */
	Entry *entry;         /* (owned) */
} Band;

static void band_build(Band *band, guint b, const guint64 *hashes, const guint8 *is_weak, guint n)
{
	band->start = g_new0(guint32, N_BUCKETS + 1);
	guint m = 0;
	for (guint i = 0; i < n; i++)
		if (is_weak == NULL || !is_weak[i]) {
			band->start[band_of(hashes[i], b) + 1]++;
			m++;
		}
	for (guint k = 0; k < N_BUCKETS; k++)
		band->start[k + 1] += band->start[k];
	band->entry = g_new(Entry, MAX(m, 1u));
	g_autofree guint32 *fill = g_memdup2(band->start, sizeof(guint32) * N_BUCKETS);
	for (guint i = 0; i < n; i++)
		if (is_weak == NULL || !is_weak[i])
			band->entry[fill[band_of(hashes[i], b)]++] = i;
}

/*
 * A worker of the search.  The centres are taken in windows of WINDOW
 * images: the workers find, each for its share of the window (index i
 * with i mod n_workers = its number), every image after i within the
 * distance and not taken when the window began (its candidates); then
 * the calling thread takes the window's centres in order, each the
 * candidates still not taken (taken[] is written only then, read only
 * while the workers run).  What a centre takes is what it would take
 * alone: an image not taken at its turn was not taken when the window
 * began.  Each worker keeps a cursor per bucket, the first entry after
 * the last centre it looked there for, so a centre reads only the
 * entries after it (every index before it is taken).
 */
#define WINDOW 256
typedef struct {
	const Band *bands;
	const guint32 *mask;
	guint n_masks;
	const guint64 *hashes;
	const guint8 *is_weak;
	const guint8 *taken;
	guint distance;
	guint number, n_workers;
	guint32 *from;        /* N_BANDS * N_BUCKETS cursors (owned) */
	guint32 *bucket;      /* N_BANDS * n_masks: a centre's buckets, */
	guint32 *first;       /* their first entries to read, */
	guint32 *end;         /* and their ends (owned, all three) */
	GArray *out;          /* guint32: i, n, then n candidates; for each centre */
	guint32 window;       /* the window's first index */
	guint32 n;
	/* the workers' rendezvous (in the first worker's struct: shared) */
	GMutex *lock;
	GCond *done;
	guint *n_running;
} Worker;

/* Appends centre i's candidates to w->out: the buckets within the masks
 * of its bands, their places prefetched together (each is at a random
 * place of its band: the misses overlap), then their entries, then read.
 * The inner loop of the grouping, where the time goes; built for the
 * POPCNT instruction too, chosen at run time where the processor has it. */
__attribute__((target_clones("popcnt", "default")))
static void candidates(Worker *w, guint32 i)
{
	guint64 h = w->hashes[i];
	guint n = 0;
	for (guint b = 0; b < N_BANDS; b++) {
		guint key = band_of(h, b);
		for (guint k = 0; k < w->n_masks; k++, n++) {
			guint32 bucket = key ^ w->mask[k];
			w->bucket[n] = bucket;
			__builtin_prefetch(&w->from[b * N_BUCKETS + bucket]);
			__builtin_prefetch(&w->bands[b].start[bucket + 1]);
		}
	}
	n = 0;
	for (guint b = 0; b < N_BANDS; b++)
		for (guint k = 0; k < w->n_masks; k++, n++) {
			w->first[n] = w->from[b * N_BUCKETS + w->bucket[n]];
			w->end[n] = w->bands[b].start[w->bucket[n] + 1];
			__builtin_prefetch(&w->bands[b].entry[w->first[n]]);
		}
	guint at = w->out->len;
	guint32 head[2] = { i, 0 };
	g_array_append_vals(w->out, head, 2);
	n = 0;
	for (guint b = 0; b < N_BANDS; b++) {
		const Entry *entry = w->bands[b].entry;
		for (guint k = 0; k < w->n_masks; k++, n++) {
			guint32 e = w->first[n], end = w->end[n];
			while (e < end && entry[e] <= i)
				e++;
			w->from[b * N_BUCKETS + w->bucket[n]] = e;
			for (; e < end; e++) {
				guint32 j = entry[e];
				if ((guint)__builtin_popcountll(w->hashes[j] ^ h) <= w->distance && !w->taken[j])
					g_array_append_val(w->out, j);
			}
		}
	}
	g_array_index(w->out, guint32, at + 1) = w->out->len - at - 2;
}

/* The worker's share of the window. */
static void work(Worker *w)
{
	g_array_set_size(w->out, 0);
	guint32 end = MIN(w->window + WINDOW, w->n);
	guint32 i = w->window + (w->number + w->n_workers - w->window % w->n_workers) % w->n_workers;
	for (; i < end; i += w->n_workers)
		if (!w->taken[i] && (w->is_weak == NULL || !w->is_weak[i]))
			candidates(w, i);
}

static void work_in_pool(gpointer data, gpointer unused)
{
	(void)unused;
	Worker *w = data;
	work(w);
	g_mutex_lock(w->lock);
	if (--*w->n_running == 0)
		g_cond_signal(w->done);
	g_mutex_unlock(w->lock);
}

static void band_clear(Band *band)
{
	g_free(band->start);
	g_free(band->entry);
}

/* Appends group `members` (n of them) to g's arrays. */
static void add_group(GArray *members, GArray *starts, const guint32 *m, guint n)
{
	g_array_append_vals(members, m, n);
	guint32 end = members->len;
	g_array_append_val(starts, end);
}

static int compare_guint32(gconstpointer a, gconstpointer b)
{
	guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
	return x < y ? -1 : x > y;
}

/* The weak hashes, sorted by value then index. */
typedef struct {
	guint64 value;
	guint32 idx;
} Weak;

static int compare_weak(gconstpointer a, gconstpointer b)
{
	const Weak *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A group for every run of two or more equal weak values: its indices
 * (a new GArray of guint32) at by_centre[its first index]. */
static void group_weak(const guint64 *hashes, const guint8 *is_weak, guint n, GArray **by_centre)
{
	g_autoptr(GArray) weak = g_array_new(FALSE, FALSE, sizeof(Weak));
	for (guint i = 0; i < n; i++)
		if (is_weak[i]) {
			Weak w = { hashes[i], i };
			g_array_append_val(weak, w);
		}
	g_array_sort(weak, compare_weak);
	for (guint a = 0; a < weak->len;) {
		guint b = a + 1;
		const Weak *w = (const Weak *)(void *)weak->data;
		while (b < weak->len && w[b].value == w[a].value)
			b++;
		if (b - a >= 2) {
			GArray *m = g_array_sized_new(FALSE, FALSE, sizeof(guint32), b - a);
			for (guint k = a; k < b; k++)
				g_array_append_val(m, w[k].idx);
			by_centre[w[a].idx] = m;
		}
		a = b;
	}
}

PixSimilarGroups *pix_similar_group(const guint64 *hashes, const guint8 *is_weak, guint n, guint distance)
{
	/* below some tens of thousands, threads cost more than they save */
	guint n_threads = n < 20000 ? 1 : MIN(g_get_num_processors(), 8u);
	return pix_similar_group_threads(hashes, is_weak, n, distance, n_threads);
}

PixSimilarGroups *pix_similar_group_threads(const guint64 *hashes, const guint8 *is_weak, guint n, guint distance,
                                            guint n_threads)
{
	g_assert(distance <= 64 && n_threads >= 1);
	guint r = distance / N_BANDS;
	/* the masks of the bucket keys within r bits of a band's */
	g_autoptr(GArray) masks = g_array_new(FALSE, FALSE, sizeof(guint32));
	for (guint32 k = 0; k < N_BUCKETS; k++)
		if ((guint)__builtin_popcount(k) <= r)
			g_array_append_val(masks, k);
	Band bands[N_BANDS];
	for (guint b = 0; b < N_BANDS; b++)
		band_build(&bands[b], b, hashes, is_weak, n);
	g_autofree guint8 *taken = g_new0(guint8, MAX(n, 1u));
	/* the weak groups, kept at their centres until all are put in order */
	g_autofree GArray **weak_at = is_weak != NULL ? g_new0(GArray *, MAX(n, 1u)) : NULL;
	if (is_weak != NULL)
		group_weak(hashes, is_weak, n, weak_at);

	GMutex lock;
	GCond done;
	guint n_running = 0;
	g_mutex_init(&lock);
	g_cond_init(&done);
	g_autofree Worker *workers = g_new0(Worker, n_threads);
	g_autofree guint32 **next = g_new0(guint32 *, n_threads);   /* each worker's next centre in out */
	for (guint t = 0; t < n_threads; t++) {
		Worker *w = &workers[t];
		*w = (Worker){ .bands = bands, .mask = (const guint32 *)(void *)masks->data, .n_masks = masks->len,
		               .hashes = hashes, .is_weak = is_weak, .taken = taken, .distance = distance, .number = t,
		               .n_workers = n_threads, .n = n, .lock = &lock, .done = &done, .n_running = &n_running };
		w->from = g_new(guint32, (gsize)N_BANDS * N_BUCKETS);
		for (guint b = 0; b < N_BANDS; b++)
			memcpy(w->from + (gsize)b * N_BUCKETS, bands[b].start, sizeof(guint32) * N_BUCKETS);
		w->bucket = g_new(guint32, (gsize)N_BANDS * masks->len);
		w->first = g_new(guint32, (gsize)N_BANDS * masks->len);
		w->end = g_new(guint32, (gsize)N_BANDS * masks->len);
		w->out = g_array_new(FALSE, FALSE, sizeof(guint32));
	}
	GThreadPool *pool = n_threads > 1 ? g_thread_pool_new(work_in_pool, NULL, (gint)n_threads - 1, TRUE, NULL) : NULL;

	GArray *members = g_array_new(FALSE, FALSE, sizeof(guint32));
	GArray *starts = g_array_new(FALSE, FALSE, sizeof(guint32));
	guint32 zero = 0;
	g_array_append_val(starts, zero);
	g_autoptr(GArray) group = g_array_new(FALSE, FALSE, sizeof(guint32));
	for (guint32 window = 0; window < n; window += WINDOW) {
		/* the candidates of the window's centres, on every thread */
		n_running = n_threads - 1;
		for (guint t = 0; t < n_threads; t++) {
			workers[t].window = window;
			if (t > 0)
				g_thread_pool_push(pool, &workers[t], NULL);
		}
		work(&workers[0]);
		g_mutex_lock(&lock);
		while (n_running > 0)
			g_cond_wait(&done, &lock);
		g_mutex_unlock(&lock);
		for (guint t = 0; t < n_threads; t++)
			next[t] = (guint32 *)(void *)workers[t].out->data;
		/* then the centres in order, each taking its candidates still free */
		for (guint32 i = window; i < n && i < window + WINDOW; i++) {
			Worker *w = &workers[i % n_threads];
			guint32 *c = next[i % n_threads];
			gboolean has_list = c < (guint32 *)(void *)w->out->data + w->out->len && c[0] == i;
			if (has_list)
				next[i % n_threads] = c + 2 + c[1];
			if (is_weak != NULL && is_weak[i]) {
				GArray *wk = weak_at[i];
				if (wk != NULL) {
					add_group(members, starts, (const guint32 *)(void *)wk->data, wk->len);
					g_array_free(wk, TRUE);
				}
				continue;
			}
			if (taken[i])
				continue;
			g_assert(has_list);     /* not taken at the window's start */
			taken[i] = 1;           /* invariant 2: a centre, members or none */
			g_array_set_size(group, 0);
			g_array_append_val(group, i);
			for (guint32 k = 0; k < c[1]; k++) {
				guint32 j = c[2 + k];
				if (!taken[j]) {
					taken[j] = 1;
					g_array_append_val(group, j);
				}
			}
			if (group->len >= 2) {
				g_array_sort(group, compare_guint32);
				add_group(members, starts, (const guint32 *)(void *)group->data, group->len);
			}
		}
	}
	if (pool != NULL)
		g_thread_pool_free(pool, FALSE, TRUE);
	for (guint t = 0; t < n_threads; t++) {
		g_free(workers[t].from);
		g_free(workers[t].bucket);
		g_free(workers[t].first);
		g_free(workers[t].end);
		g_array_free(workers[t].out, TRUE);
	}
	g_mutex_clear(&lock);
	g_cond_clear(&done);
	for (guint b = 0; b < N_BANDS; b++)
		band_clear(&bands[b]);

	PixSimilarGroups *g = g_new0(PixSimilarGroups, 1);
	g->n_groups = starts->len - 1;
	g->members = (guint32 *)(void *)g_array_free(members, FALSE);
	g->starts = (guint32 *)(void *)g_array_free(starts, FALSE);
	g_assert(pix_similar_check(g, hashes, is_weak, n, distance));
	return g;
}

void pix_similar_groups_free(PixSimilarGroups *g)
{
	if (g == NULL)
		return;
	g_free(g->members);
	g_free(g->starts);
	g_free(g);
}

gboolean pix_similar_check(const PixSimilarGroups *g, const guint64 *hashes, const guint8 *is_weak, guint n,
                           guint distance)
{
	g_autofree guint8 *seen = g_new0(guint8, MAX(n, 1u));
	for (guint k = 0; k < g->n_groups; k++) {
		guint32 a = g->starts[k], b = g->starts[k + 1];
		if (b - a < 2)
			return FALSE;
		guint32 c = g->members[a];
		gboolean weak = is_weak != NULL && is_weak[c];
		for (guint32 x = a; x < b; x++) {
			guint32 i = g->members[x];
			if (i >= n || seen[i] || (x > a && i <= g->members[x - 1]))
				return FALSE;
			seen[i] = 1;
			if ((is_weak != NULL && is_weak[i]) != weak)
				return FALSE;   /* invariant 3 */
			if (weak ? hashes[i] != hashes[c] : pix_phash_distance(hashes[i], hashes[c]) > distance)
				return FALSE;   /* invariant 1 */
		}
	}
	return TRUE;
}
