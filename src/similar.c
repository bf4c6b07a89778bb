/*
 * similar.c: groups of similar images by the centre rule, found through
 * a multi-index over the hashes' bands (see similar.h).
 *
 * Reads the caller's arrays; writes the groups it returns.  Main thread
 * (any one thread per call).
 *
 * Invariants (pix_similar_check(), asserted on every result):
 *  1. A group's first member is its centre; every other member is within
 *     the distance of the centre (a weak one: has its value), and comes
 *     after it in the input (the best copy first).
 *  2. An index is in one group at most: once taken (`taken`), never taken
 *     again, and a centre is taken whether or not it finds members.
 *  3. Weak and strong hashes never share a group.
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

/* An entry of a band: a hash and its index, together so that a bucket's
 * entries are read from one place. */
typedef guint32 Entry;

/* Where a bucket's entries are: entry[from .. end - 1].  The centres come
 * in ascending order, and every index below the centre's is taken (it
 * was a centre, or a member, before), so `from` moves past the entries
 * of indices up to the last centre that looked there: a centre reads
 * only the entries after it. */
typedef struct {
	guint32 from, end;
} Bucket;

/* One band: bucket k's entries, ascending by index. */
typedef struct {
	Bucket *bucket;       /* N_BUCKETS (owned) */
	Entry *entry;         /* (owned) */
} Band;

static void band_build(Band *band, guint b, const guint64 *hashes, const guint8 *is_weak, guint n)
{
	g_autofree guint32 *start = g_new0(guint32, N_BUCKETS + 1);
	guint m = 0;
	for (guint i = 0; i < n; i++)
		if (is_weak == NULL || !is_weak[i]) {
			start[band_of(hashes[i], b) + 1]++;
			m++;
		}
	for (guint k = 0; k < N_BUCKETS; k++)
		start[k + 1] += start[k];
	band->bucket = g_new(Bucket, N_BUCKETS);
	for (guint k = 0; k < N_BUCKETS; k++)
		band->bucket[k] = (Bucket){ start[k], start[k + 1] };
	band->entry = g_new(Entry, MAX(m, 1u));
	for (guint i = 0; i < n; i++)
		if (is_weak == NULL || !is_weak[i]) {
			guint32 at = start[band_of(hashes[i], b)]++;
			band->entry[at] = i;
		}
}

/* A bucket a centre looks into. */
typedef struct {
	Bucket *bucket;
	const Entry *entry;
} Probe;

/* Takes into `group` every index after centre i not taken yet whose hash
 * is within `distance` of h, from the buckets within the masks of h's
 * bands.  The inner loop of the grouping, where the time goes: each
 * bucket is at a random place of its band, so all the buckets' places
 * are asked of memory first (prefetched, the misses overlapping), then
 * their entries, then they are read.  Built for the POPCNT instruction
 * too, chosen at run time where the processor has it. */
__attribute__((target_clones("popcnt", "default")))
static void take_near(Band *bands, const guint32 *mask, guint n_masks, Probe *probes, guint32 i, const guint64 *hashes,
                      guint distance, guint8 *taken, GArray *group)
{
	guint n = 0;
	guint64 h = hashes[i];
	for (guint b = 0; b < N_BANDS; b++) {
		guint key = band_of(h, b);
		for (guint k = 0; k < n_masks; k++, n++) {
			probes[n].bucket = &bands[b].bucket[key ^ mask[k]];
			probes[n].entry = bands[b].entry;
			__builtin_prefetch(probes[n].bucket);
		}
	}
	for (guint p = 0; p < n; p++)
		__builtin_prefetch(&probes[p].entry[probes[p].bucket->from]);
	for (guint p = 0; p < n; p++) {
		Bucket *k = probes[p].bucket;
		const Entry *e = probes[p].entry + k->from, *end = probes[p].entry + k->end;
		while (e < end && *e <= i)
			e++;
		k->from = (guint32)(e - probes[p].entry);
		for (; e < end; e++) {
			if ((guint)__builtin_popcountll(hashes[*e] ^ h) > distance || taken[*e])
				continue;
			taken[*e] = 1;
			g_array_append_val(group, *e);
		}
	}
}

static void band_clear(Band *band)
{
	g_free(band->bucket);
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
	g_assert(distance <= 64);
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

	GArray *members = g_array_new(FALSE, FALSE, sizeof(guint32));
	GArray *starts = g_array_new(FALSE, FALSE, sizeof(guint32));
	guint32 zero = 0;
	g_array_append_val(starts, zero);
	g_autoptr(GArray) group = g_array_new(FALSE, FALSE, sizeof(guint32));
	const guint32 *mask = (const guint32 *)(void *)masks->data;
	g_autofree Probe *probes = g_new(Probe, (gsize)N_BANDS * masks->len);
	for (guint32 i = 0; i < n; i++) {
		if (is_weak != NULL && is_weak[i]) {
			GArray *w = weak_at[i];
			if (w != NULL) {
				add_group(members, starts, (const guint32 *)(void *)w->data, w->len);
				g_array_free(w, TRUE);
			}
			continue;
		}
		if (taken[i])
			continue;
		taken[i] = 1;           /* invariant 2: a centre, members or none */
		g_array_set_size(group, 0);
		g_array_append_val(group, i);
		take_near(bands, mask, masks->len, probes, i, hashes, distance, taken, group);
		if (group->len >= 2) {
			g_array_sort(group, compare_guint32);
			add_group(members, starts, (const guint32 *)(void *)group->data, group->len);
		}
	}
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
