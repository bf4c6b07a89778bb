/*
 * test-hash.c: the hasher (hash.c), driven message by message without
 * threads through PixHasher.
 *
 * Proves, at every lane arrangement the CPU runs (0: OpenSSL's EVP per
 * file, 8: AVX2, 16: AVX-512; a width the CPU lacks is skipped):
 *  1. Its bookkeeping is flat (issue 24).  Finishing one file costs the
 *     same operations with 10 files in flight as with 10,000; a steady
 *     stream of small files, taken as the hasher thread takes them, costs
 *     a bounded number of operations per file, the same with 10,000 idle
 *     files held as with none; and files are recycled: per-file records
 *     allocated stay at the most files in flight at once, not the files
 *     processed.  Operations are PixHasherStats.n_visits, never time, so
 *     a slow or loaded machine cannot fail these.
 *  2. Its MD5s equal OpenSSL's (pix_md5_buffer) on every length to 2 KiB,
 *     around block and read boundaries and on random sizes to 4 MiB, with
 *     thousands of files in flight, their messages interleaved at random
 *     across files and split as readers split them: whole reads with a
 *     shorter last, short reads (the carry path), END alone or with the
 *     last data, RESTART (only the last pass counts).  Among them, files
 *     whose END says error (no MD5), vanished, or aborted (never comes
 *     out), and PIX_ACT_ADD items, whose metadata parser sees the same
 *     bytes and must not disturb the MD5.
 *  3. Every item comes out exactly once, and the hasher ends empty.
 *
 * Everything random comes from GRands with fixed seeds, printed with any
 * failure, so a failure reproduces.
 */
#include "hash.h"
#include "md5-lanes.h"
#include "testlib.h"

#define DATA_BYTES (8 * 1024 * 1024)

/* hash.c's MAX_READY: the thread takes no messages while this many files
 * are ready */
#define THREAD_MAX_READY (4 * PIX_MD5_MAX_LANES)
/* and takes at most this many at once (its TAKE_BATCH) */
#define THREAD_TAKE_BATCH 64

static guint8 *data;    /* DATA_BYTES of pseudo-random bytes: every file's
                           content is a slice of it */

/* What a file's END says, and so what must come out of the hasher. */
typedef enum {
	FATE_HASHED,        /* its MD5 */
	FATE_ERROR,         /* an error, no MD5 */
	FATE_VANISHED,      /* gone when opened: one message, no data */
	FATE_ABORTED,       /* dropped: never comes out */
} Fate;

static const char *const fate_names[] = { "hashed", "error", "vanished", "aborted" };

/* One file of a test: its content, how it was sent, what must come out. */
typedef struct {
	gsize start, len;       /* content of its last pass: data[start, start + len) */
	Fate fate;
	gboolean is_unstable;   /* FATE_ERROR: as END says it */
	PixAction action;       /* PIX_ACT_VERIFY (no metadata) or PIX_ACT_ADD */
	/* how its messages were split, for the failure message */
	gsize read_bytes;       /* 0: sent by hand */
	gboolean is_short;      /* short reads of random sizes */
	gboolean is_restart;    /* a first pass of other bytes, then RESTART */
	PixItem *item;          /* from START to END: the hasher's (a key) */
	guint n_out;            /* times its item came out */
} File;

typedef struct {
	File *files;
	guint n;
	guint n_out;            /* items out, of every file */
	guint32 seed;           /* of the test's GRand */
	PixDir *dir;
} Set;

static Set *set_new(guint n, guint32 seed)
{
	Set *s = g_new0(Set, 1);
	s->files = g_new0(File, n);
	s->n = n;
	s->seed = seed;
	s->dir = pix_dir_new("/test-hash");
	return s;
}

static void set_free(Set *s)
{
	pix_dir_unref(s->dir);
	g_free(s->files);
	g_free(s);
}

/* File `i`: `len` bytes somewhere in the data, hashed, no metadata. */
static void set_file(Set *s, guint i, gsize len, GRand *r)
{
	File *f = &s->files[i];
	g_assert_cmpuint(len, <=, DATA_BYTES);
	f->len = len;
	f->start = (gsize)g_rand_int_range(r, 0, (gint32)(DATA_BYTES - len + 1));
	f->fate = FATE_HASHED;
	f->action = PIX_ACT_VERIFY;
}

static guint64 visits(const PixHasher *h)
{
	PixHasherStats st;
	pix_hasher_stats(h, &st);
	return st.n_visits;
}

static guint in_flight(const PixHasher *h)
{
	PixHasherStats st;
	pix_hasher_stats(h, &st);
	return st.n_in_flight;
}

/*
 * Gives the hasher a message of file `i`: `len` bytes at `off` in the data
 * (chunks of tests have no pool buffer), flagged `flags`.  START makes the
 * file's item (its row_id is `i`, to know it when it comes out); END says
 * what the file's fate says.
 */
static void send(PixHasher *h, Set *s, guint i, guint flags, gsize off, gsize len)
{
	File *f = &s->files[i];
	PixChunk *c = g_new0(PixChunk, 1);
	if (flags & PIX_CHUNK_START) {
		g_autofree char *name = g_strdup_printf("f%u", i);
		f->item = pix_item_new(f->action, s->dir, name);
		f->item->row_id = i;
	}
	g_assert_nonnull(f->item);
	c->flags = flags;
	c->item = f->item;
	c->data = len > 0 ? data + off : NULL;
	c->len = len;
	if (flags & PIX_CHUNK_END) {
		c->st.size_bytes = (gint64)f->len;
		c->bytes_read = (gint64)f->len;
		c->is_vanished = f->fate == FATE_VANISHED;
		c->is_aborted = f->fate == FATE_ABORTED;
		if (f->fate == FATE_ERROR) {
			c->error = g_strdup_printf("cannot read: file %u", i);
			c->is_unstable = f->is_unstable;
		}
		f->item = NULL;
	}
	pix_hasher_take(h, c);
}

static G_GNUC_NORETURN void fail(const Set *s, guint i, const char *what)
{
	const File *f = &s->files[i];
	g_error("file %u of %u (%zu bytes at %zu, %s, %s, read size %zu%s%s), seed %u: %s", i, s->n, f->len, f->start,
	        fate_names[f->fate], f->action == PIX_ACT_ADD ? "add" : "verify", f->read_bytes,
	        f->is_short ? ", short reads" : "", f->is_restart ? ", restarted" : "", s->seed, what);
}

/* One item out of the hasher: the file's outcome, once (frees it). */
static void check_item(Set *s, PixItem *item)
{
	g_assert_cmpint(item->row_id, >=, 0);
	g_assert_cmpint(item->row_id, <, s->n);
	guint i = (guint)item->row_id;
	File *f = &s->files[i];
	if (f->n_out++ > 0)
		fail(s, i, "came out twice");
	s->n_out++;
	if (!item->is_read)
		fail(s, i, "not marked read");
	switch (f->fate) {
	case FATE_HASHED: {
		guint8 want[16];
		char got_hex[33], want_hex[33];
		pix_md5_buffer(data + f->start, f->len, want);
		if (!item->has_md5)
			fail(s, i, "no MD5");
		if (memcmp(item->md5, want, 16) != 0) {
			pix_md5_hex(item->md5, got_hex);
			pix_md5_hex(want, want_hex);
			g_autofree char *what = g_strdup_printf("MD5 %s, want %s", got_hex, want_hex);
			fail(s, i, what);
		}
		if (item->bytes_read != (gint64)f->len || item->st.size_bytes != (gint64)f->len)
			fail(s, i, "not END's size");
		/* an ADD item's parser may call random bytes damaged; a VERIFY
		 * item has no parser */
		if (f->action == PIX_ACT_VERIFY && item->error != NULL)
			fail(s, i, item->error);
		break;
	}
	case FATE_ERROR: {
		g_autofree char *want = g_strdup_printf("cannot read: file %u", i);
		if (item->has_md5)
			fail(s, i, "an MD5 despite the error");
		if (g_strcmp0(item->error, want) != 0 || item->is_unstable != f->is_unstable)
			fail(s, i, "not END's error");
		break;
	}
	case FATE_VANISHED:
		if (item->has_md5 || !item->is_vanished)
			fail(s, i, "not vanished");
		break;
	case FATE_ABORTED:
		fail(s, i, "aborted, yet it came out");
	}
	pix_item_free(item);
}

/* Takes the finished items, as the hasher thread hands them on. */
static void collect(PixHasher *h, Set *s)
{
	GPtrArray *done = pix_hasher_done(h);
	for (guint k = 0; k < done->len; k++)
		check_item(s, done->pdata[k]);
	g_ptr_array_set_size(done, 0);
}

/* Hashes and finishes all there is to, and takes what came out. */
static void run_idle(PixHasher *h, Set *s)
{
	while (pix_hasher_step(h))
		;
	pix_hasher_finish(h);
	collect(h, s);
	g_assert_false(pix_hasher_is_busy(h));
}

/* Every item came out once (an aborted one never), and the hasher holds
 * nothing: it can be freed. */
static void expect_all_out(PixHasher *h, Set *s)
{
	for (guint i = 0; i < s->n; i++)
		if (s->files[i].n_out != (s->files[i].fate == FATE_ABORTED ? 0 : 1))
			fail(s, i, "never came out");
	g_assert_true(pix_hasher_check(h));
	g_assert_cmpuint(in_flight(h), ==, 0);
	g_assert_cmpuint(pix_hasher_done(h)->len, ==, 0);
	pix_hasher_free(h);
}

/* --- 1. flat cost ---------------------------------------------------------- */

#define OPEN_BYTES 1024     /* what each file has when it is held open */
#define LAST_BYTES 100      /* its END's data: a block and a partial one */

/* Opens files [first, first + n) of `s`: a START with OPEN_BYTES each,
 * no END, hashed as far as they go; returns the visits it cost. */
static guint64 open_files(PixHasher *h, Set *s, guint first, guint n)
{
	guint64 before = visits(h);
	for (guint i = first; i < first + n; i++)
		send(h, s, i, PIX_CHUNK_START, s->files[i].start, OPEN_BYTES);
	run_idle(h, s);
	g_assert_true(pix_hasher_check(h));
	return visits(h) - before;
}

/* Sends an open file's END with its last bytes, and runs the hasher until
 * the file comes out, alone; returns the visits it cost. */
static guint64 end_file(PixHasher *h, Set *s, guint i)
{
	guint64 before = visits(h);
	guint n_out = s->n_out;
	const File *f = &s->files[i];
	send(h, s, i, PIX_CHUNK_END, f->start + OPEN_BYTES, f->len - OPEN_BYTES);
	run_idle(h, s);
	g_assert_cmpuint(s->n_out, ==, n_out + 1);
	g_assert_cmpuint(f->n_out, ==, 1);
	return visits(h) - before;
}

/* A set of `n` files of OPEN_BYTES + LAST_BYTES. */
static Set *open_set(guint n, guint32 seed)
{
	Set *s = set_new(n, seed);
	GRand *r = g_rand_new_with_seed(seed);
	for (guint i = 0; i < n; i++)
		set_file(s, i, OPEN_BYTES + LAST_BYTES, r);
	g_rand_free(r);
	return s;
}

/*
 * With `n` files in flight, the visits of opening them (per file) and of
 * finishing, one at a time, the oldest, one in the middle and the newest
 * (whatever order a list or an array keeps them in).  Then finishes the
 * rest.
 */
static void finish_among(gconstpointer width, guint n, double *open_per_file, guint64 cost[3])
{
	PixHasher *h = pix_hasher_new(GPOINTER_TO_UINT(width));
	Set *s = open_set(n, 24);
	const guint picks[3] = { 0, n / 2, n - 1 };

	*open_per_file = (double)open_files(h, s, 0, n) / n;
	g_assert_cmpuint(in_flight(h), ==, n);
	for (guint k = 0; k < 3; k++)
		cost[k] = end_file(h, s, picks[k]);
	for (guint i = 0; i < n; i++)
		if (s->files[i].n_out == 0)
			send(h, s, i, PIX_CHUNK_END, s->files[i].start + OPEN_BYTES, LAST_BYTES);
	run_idle(h, s);
	expect_all_out(h, s);
	set_free(s);
}

/* Finishing a file costs the same among 10 or 10,000 in flight. */
static void test_finish_one_of_many(gconstpointer width)
{
	double open_few, open_many;
	guint64 few[3], many[3];

	if (!pix_test_need_lanes(width))
		return;
	finish_among(width, 10, &open_few, few);
	finish_among(width, 10000, &open_many, many);
	static const char *const picked[] = { "the oldest", "one in the middle", "the newest" };
	for (guint k = 0; k < 3; k++) {
		g_test_message("finishing %s: %" G_GUINT64_FORMAT " visits among 10 in flight, %" G_GUINT64_FORMAT
		               " among 10,000", picked[k], few[k], many[k]);
		g_assert_cmpuint(many[k], ==, few[k]);
	}
	/* opening costs the same per file too (to a visit: lane steps may
	 * group the last files of a set differently) */
	g_assert_cmpfloat(open_many, <=, open_few + 1);
}

/* Stream files' sizes: every length 0 to 1,600 bytes (1,601 is prime), in
 * the same order whatever the files held beside them. */
static gsize stream_len(guint k)
{
	return (gsize)k * 389 % 1601;
}

/* What a one-message file may cost: taken and placed, picked and placed
 * again at each lane step it is in (each consumes a block of it at
 * least), finished.  A hasher that looks at every file it holds at each
 * step costs thousands with 10,000 held. */
static guint64 stream_bound(gsize len)
{
	return 3 + 2 * (len / PIX_MD5_BLOCK);
}

/*
 * Files [first, first + n) of `s`, one message each (START | END), taken
 * as the hasher thread takes them: a batch while fewer than
 * THREAD_MAX_READY files are ready, the finished handed on, a step, the
 * finished handed on.  Returns the visits they cost and raises *peak to the
 * most files in flight.
 */
static guint64 stream(PixHasher *h, Set *s, guint first, guint n, guint *peak)
{
	guint64 before = visits(h);
	guint next = first;
	while (next < first + n || pix_hasher_is_busy(h)) {
		PixHasherStats st;
		pix_hasher_stats(h, &st);
		if (st.n_ready < THREAD_MAX_READY) {
			for (guint k = 0; k < THREAD_TAKE_BATCH && next < first + n; k++, next++) {
				send(h, s, next, PIX_CHUNK_START | PIX_CHUNK_END, s->files[next].start, s->files[next].len);
				*peak = MAX(*peak, in_flight(h));
			}
			pix_hasher_finish(h);
			collect(h, s);
		}
		if (pix_hasher_step(h)) {
			pix_hasher_finish(h);
			collect(h, s);
		}
	}
	g_assert_true(pix_hasher_check(h));
	return visits(h) - before;
}

/* A set of `n_held` files to hold open, then `n` stream files. */
static Set *stream_set(guint n_held, guint n, guint32 seed)
{
	Set *s = set_new(n_held + n, seed);
	GRand *r = g_rand_new_with_seed(seed);
	for (guint i = 0; i < n_held; i++)
		set_file(s, i, OPEN_BYTES, r);
	for (guint k = 0; k < n; k++)
		set_file(s, n_held + k, stream_len(k), r);
	g_rand_free(r);
	return s;
}

/* `n` stream files beside `n_held` files held open (ended afterwards):
 * the visits of the stream files, the most files in flight, and the
 * records allocated by then. */
static guint64 stream_beside(gconstpointer width, guint n_held, guint n, guint *peak, guint64 *n_allocs)
{
	PixHasher *h = pix_hasher_new(GPOINTER_TO_UINT(width));
	Set *s = stream_set(n_held, n, 2024);
	PixHasherStats st;

	*peak = 0;
	open_files(h, s, 0, n_held);
	guint64 cost = stream(h, s, n_held, n, peak);
	pix_hasher_stats(h, &st);
	*n_allocs = st.n_file_allocs;
	for (guint i = 0; i < n_held; i++)
		send(h, s, i, PIX_CHUNK_END, 0, 0);
	run_idle(h, s);
	expect_all_out(h, s);
	set_free(s);
	return cost;
}

/* 10,000 small files as the thread takes them cost a bounded number of
 * visits each, the same with 10,000 idle files held as with none. */
static void test_steady_stream(gconstpointer width)
{
	const guint n = 10000;
	guint64 bound = 0, n_allocs;
	guint peak;

	if (!pix_test_need_lanes(width))
		return;
	for (guint k = 0; k < n; k++)
		bound += stream_bound(stream_len(k));
	guint64 alone = stream_beside(width, 0, n, &peak, &n_allocs);
	guint64 beside = stream_beside(width, 10000, n, &peak, &n_allocs);
	g_test_message("%u one-message files: %" G_GUINT64_FORMAT " visits alone, %" G_GUINT64_FORMAT
	               " beside 10,000 held, at most %" G_GUINT64_FORMAT, n, alone, beside, bound);
	g_assert_cmpuint(alone, <=, bound);
	g_assert_cmpuint(beside, <=, bound);
	/* the held files, with nothing to hash, cost the stream nothing */
	g_assert_cmpuint(beside, ==, alone);
}

/* Records are allocated for the most files in flight at once, not for
 * every file. */
static void test_files_recycle(gconstpointer width)
{
	const guint n = 10000;
	guint peak;
	guint64 n_allocs;

	if (!pix_test_need_lanes(width))
		return;
	stream_beside(width, 0, n, &peak, &n_allocs);
	g_test_message("%u one-message files: %" G_GUINT64_FORMAT " records allocated, at most %u in flight", n,
	               n_allocs, peak);
	g_assert_cmpuint(n_allocs, <=, peak);
	/* the thread's throttle holds the stream to a few batches */
	g_assert_cmpuint(peak, <=, 4 * THREAD_TAKE_BATCH);

	/* 10,000 held at once, finished, then 10,000 more: no allocation */
	PixHasher *h = pix_hasher_new(GPOINTER_TO_UINT(width));
	Set *s = open_set(2 * n, 25);
	PixHasherStats st;
	open_files(h, s, 0, n);
	for (guint i = 0; i < n; i++)
		end_file(h, s, i);
	open_files(h, s, n, n);
	for (guint i = n; i < 2 * n; i++)
		end_file(h, s, i);
	pix_hasher_stats(h, &st);
	g_assert_cmpuint(st.n_file_allocs, ==, n);
	expect_all_out(h, s);
	set_free(s);
}

/* --- 2. MD5s with many files in flight ------------------------------------------ */

/* A message of a file's plan: what send() is given. */
typedef struct {
	guint flags;
	gsize off, len;
} Msg;

static void add_msg(GArray *msgs, guint flags, gsize off, gsize len)
{
	Msg m = { flags, off, len };
	g_array_append_val(msgs, m);
}

/* Splits `len` bytes at `off` into messages, as a reader reads them:
 * whole reads of f->read_bytes with a shorter last, or short reads. */
static void split_pass(GArray *msgs, const File *f, gsize off, gsize len, GRand *r)
{
	for (gsize pos = 0; pos < len;) {
		gsize n = f->read_bytes;
		if (f->is_short)
			n = (gsize)g_rand_int_range(r, 1, (gint32)f->read_bytes + 1);
		n = MIN(n, len - pos);
		add_msg(msgs, 0, off + pos, n);
		pos += n;
	}
}

/*
 * Plans file `f`'s messages: maybe a first pass of other bytes (a file
 * that changed while read), its last pass (all of it when hashed, a part
 * when it fails or is aborted), its END alone or on the last data.
 */
static GArray *plan_file(File *f, GRand *r)
{
	static const gsize read_sizes[] = { 64, 192, 4096, 65536 };
	GArray *msgs = g_array_new(FALSE, FALSE, sizeof(Msg));

	if (f->fate == FATE_VANISHED) {
		add_msg(msgs, PIX_CHUNK_START | PIX_CHUNK_END, 0, 0);
		return msgs;
	}
	f->read_bytes = read_sizes[g_rand_int_range(r, 0, G_N_ELEMENTS(read_sizes))];
	/* a hundred messages a file or so, not 65,536 for 4 MiB */
	while (f->len / f->read_bytes > 64)
		f->read_bytes *= 4;
	f->is_short = g_rand_int_range(r, 0, 4) == 0;
	f->is_restart = g_rand_int_range(r, 0, 8) == 0;
	if (f->is_restart) {
		gsize len = (gsize)g_rand_int_range(r, 0, (gint32)MIN(f->len + 200, 65536));
		split_pass(msgs, f, (gsize)g_rand_int_range(r, 0, DATA_BYTES - 65536), len, r);
	}
	guint first_of_pass = msgs->len;
	gsize len = f->fate == FATE_HASHED ? f->len : (gsize)g_rand_int_range(r, 0, (gint32)f->len + 1);
	split_pass(msgs, f, f->start, len, r);
	if (msgs->len > first_of_pass && f->fate != FATE_ABORTED && g_rand_boolean(r))
		g_array_index(msgs, Msg, msgs->len - 1).flags |= PIX_CHUNK_END;
	else
		add_msg(msgs, PIX_CHUNK_END, 0, 0);
	if (f->is_restart)
		g_array_index(msgs, Msg, first_of_pass).flags |= PIX_CHUNK_RESTART;
	g_array_index(msgs, Msg, 0).flags |= PIX_CHUNK_START;
	return msgs;
}

/* Asserts that the plans hold every case the test claims to cover (the
 * odds in plan_file() and mixed_set() make them). */
static void expect_every_case(const Set *s, GArray *const *plans)
{
	guint n_fate[G_N_ELEMENTS(fate_names)] = { 0 };
	guint n_add = 0, n_short = 0, n_restart = 0, n_end_alone = 0, n_end_data = 0;
	for (guint i = 0; i < s->n; i++) {
		const File *f = &s->files[i];
		const Msg *end = &g_array_index(plans[i], Msg, plans[i]->len - 1);
		n_fate[f->fate]++;
		n_add += f->action == PIX_ACT_ADD;
		n_short += f->is_short;
		n_restart += f->is_restart;
		n_end_alone += end->len == 0 && plans[i]->len > 1;
		n_end_data += end->len > 0 && plans[i]->len > 1;
	}
	g_test_message("%u hashed, %u failed, %u vanished, %u aborted; %u add; %u short reads, %u restarted; "
	               "END after the data %u, with the last %u",
	               n_fate[FATE_HASHED], n_fate[FATE_ERROR], n_fate[FATE_VANISHED], n_fate[FATE_ABORTED], n_add,
	               n_short, n_restart, n_end_alone, n_end_data);
	for (guint k = 0; k < G_N_ELEMENTS(n_fate); k++)
		g_assert_cmpuint(n_fate[k], >, 0);
	g_assert_cmpuint(n_add, >, 0);
	g_assert_cmpuint(n_short, >, 0);
	g_assert_cmpuint(n_restart, >, 0);
	g_assert_cmpuint(n_end_alone, >, 0);
	g_assert_cmpuint(n_end_data, >, 0);
}

/*
 * Sends every file's planned messages, interleaved at random across files
 * (each file's in order), and runs lane steps and finishes at random
 * points between them, as the hasher thread does between batches; then
 * runs the hasher empty and checks every item.  Asserts that the files
 * really were many in flight at once: at least `min_in_flight`.
 */
static void run_interleaved(gconstpointer width, Set *s, GRand *r, guint min_in_flight)
{
	PixHasher *h = pix_hasher_new(GPOINTER_TO_UINT(width));
	GArray **plans = g_new0(GArray *, s->n);
	guint *next = g_new0(guint, s->n);
	guint *active = g_new0(guint, s->n);    /* files with messages to send */
	guint n_active = s->n, peak = 0;

	for (guint i = 0; i < s->n; i++) {
		plans[i] = plan_file(&s->files[i], r);
		active[i] = i;
	}
	expect_every_case(s, plans);
	for (guint n_sent = 1; n_active > 0; n_sent++) {
		guint a = (guint)g_rand_int_range(r, 0, (gint32)n_active);
		guint i = active[a];
		const Msg *m = &g_array_index(plans[i], Msg, next[i]);
		send(h, s, i, m->flags, m->off, m->len);
		if (++next[i] == plans[i]->len)
			active[a] = active[--n_active];
		peak = MAX(peak, in_flight(h));
		if (g_rand_int_range(r, 0, 16) == 0) {
			for (gint k = g_rand_int_range(r, 0, 8); k > 0; k--)
				pix_hasher_step(h);
			pix_hasher_finish(h);
			collect(h, s);
		}
		/* the checker walks the lists: now and then, not per message */
		if (n_sent % 512 == 0)
			g_assert_true(pix_hasher_check(h));
	}
	run_idle(h, s);
	g_test_message("%u files, at most %u in flight at once, seed %u", s->n, peak, s->seed);
	g_assert_cmpuint(peak, >=, min_in_flight);
	expect_all_out(h, s);
	for (guint i = 0; i < s->n; i++)
		g_array_free(plans[i], TRUE);
	g_free(plans);
	g_free(next);
	g_free(active);
}

/*
 * Appends `n_lens` hashed files of `lens`, and after each, at random, one
 * of random size to `max_other` that errs, vanishes or is aborted; a
 * quarter of them ADD items, with the metadata parser.  Returns the set.
 */
static Set *mixed_set(const gsize *lens, guint n_lens, gsize max_other, guint32 seed, GRand *r)
{
	Set *s = set_new(2 * n_lens, seed);
	guint n = 0;
	for (guint k = 0; k < n_lens; k++) {
		set_file(s, n++, lens[k], r);
		if (g_rand_int_range(r, 0, 10) == 0) {
			File *f = &s->files[n];
			set_file(s, n++, (gsize)g_rand_int_range(r, 0, (gint32)max_other + 1), r);
			f->fate = (Fate)g_rand_int_range(r, FATE_ERROR, FATE_ABORTED + 1);
			f->is_unstable = g_rand_boolean(r);
		}
	}
	s->n = n;
	for (guint i = 0; i < n; i++)
		if (g_rand_int_range(r, 0, 4) == 0)
			s->files[i].action = PIX_ACT_ADD;
	return s;
}

/* Every length 0 to 2 KiB, and lengths around blocks (55/56 bytes in the
 * last block decide whether the length fits) and reads, to 1 MiB. */
static void test_every_length(gconstpointer width)
{
	static const gsize near[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 121 };
	static const gsize reads[] = { 4096, 16384, 65536, 262144, 1048576 };
	const guint32 seed = 1;

	if (!pix_test_need_lanes(width))
		return;
	GArray *lens = g_array_new(FALSE, FALSE, sizeof(gsize));
	for (gsize len = 0; len <= 2048; len++)
		g_array_append_val(lens, len);
	for (guint k = 0; k < G_N_ELEMENTS(reads); k++) {
		for (guint j = 0; j < G_N_ELEMENTS(near); j++) {
			gsize below = reads[k] - near[j] - 1, above = reads[k] + near[j];
			g_array_append_val(lens, below);
			g_array_append_val(lens, above);
		}
	}
	GRand *r = g_rand_new_with_seed(seed);
	Set *s = mixed_set((const gsize *)lens->data, lens->len, 70000, seed, r);
	run_interleaved(width, s, r, 1000);
	set_free(s);
	g_rand_free(r);
	g_array_free(lens, TRUE);
}

/* Random sizes to 4 MiB among hundreds of small files. */
static void test_random_sizes(gconstpointer width)
{
	const guint32 seed = 2;
	gsize lens[400];

	if (!pix_test_need_lanes(width))
		return;
	GRand *r = g_rand_new_with_seed(seed);
	for (guint k = 0; k < G_N_ELEMENTS(lens); k++)
		lens[k] = (gsize)g_rand_int_range(r, 0, k % 25 == 0 ? 4 * 1024 * 1024 : 8192);
	Set *s = mixed_set(lens, G_N_ELEMENTS(lens), 1024 * 1024, seed, r);
	run_interleaved(width, s, r, 200);
	set_free(s);
	g_rand_free(r);
}

/* pix_md5_from_hex: the inverse of pix_md5_hex, either case; anything
 * but 32 hex digits refused */
static void test_md5_from_hex(void)
{
	guint8 md5[16], back[16];
	char hex[33];
	for (int i = 0; i < 16; i++)
		md5[i] = (guint8)(i * 17 + 3);
	pix_md5_hex(md5, hex);
	g_assert_true(pix_md5_from_hex(hex, back));
	g_assert_cmpmem(back, 16, md5, 16);
	g_assert_true(pix_md5_from_hex("D41D8CD98F00B204E9800998ECF8427E", back));
	g_assert_true(pix_md5_from_hex("d41d8cd98f00b204e9800998ecf8427e", md5));
	g_assert_cmpmem(back, 16, md5, 16);
	g_assert_false(pix_md5_from_hex(NULL, back));
	g_assert_false(pix_md5_from_hex("", back));
	g_assert_false(pix_md5_from_hex("d41d8cd98f00b204e9800998ecf8427", back));
	g_assert_false(pix_md5_from_hex("d41d8cd98f00b204e9800998ecf8427e0", back));
	g_assert_false(pix_md5_from_hex("d41d8cd98f00b204e9800998ecf8427g", back));
	g_assert_false(pix_md5_from_hex("g41d8cd98f00b204e9800998ecf8427e", back));
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	data = g_malloc(DATA_BYTES);
	guint32 x = 2463534242u;
	for (gsize i = 0; i < DATA_BYTES; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (guint8)x;
	}
	static const struct {
		const char *path;
		GTestDataFunc fn;
	} tests[] = {
		{ "/hash/flat-cost/lanes-%u/finish-one-of-many", test_finish_one_of_many },
		{ "/hash/flat-cost/lanes-%u/steady-stream", test_steady_stream },
		{ "/hash/flat-cost/lanes-%u/files-recycle", test_files_recycle },
		{ "/hash/md5-many-in-flight/lanes-%u/every-length-to-2k", test_every_length },
		{ "/hash/md5-many-in-flight/lanes-%u/random-sizes-to-4mib", test_random_sizes },
	};
	static const guint widths[] = { 0, 8, 16 };
	for (guint t = 0; t < G_N_ELEMENTS(tests); t++) {
		for (guint i = 0; i < G_N_ELEMENTS(widths); i++) {
			g_autofree char *path = g_strdup_printf(tests[t].path, widths[i]);
			g_test_add_data_func(path, GUINT_TO_POINTER(widths[i]), tests[t].fn);
		}
	}
	g_test_add_func("/hash/md5-from-hex", test_md5_from_hex);
	int rc = g_test_run();
	g_free(data);
	return rc;
}
