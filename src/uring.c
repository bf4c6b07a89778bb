/*
 * uring.c: batches of opens, reads, stats and closes through io_uring
 * (see uring.h), with liburing.
 *
 * Each call fills submission entries (user_data: the index in the caller's
 * arrays), submits and waits for all of them in rounds of the ring's
 * depth, and writes each result where its index says.
 *
 * Invariants:
 *  1. Between calls the ring holds no submitted and unreaped operation:
 *     every call waits for as many completions as it submitted.
 *  2. Every index < n of a call gets exactly one result.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "uring.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct PixUring {
	struct io_uring ring;
	guint depth;
	gboolean has_statx;     /* the kernel's io_uring has IORING_OP_STATX */
};

typedef enum { OP_OPEN, OP_READ, OP_STATX, OP_CLOSE } Op;

/* One call's operations: which, and the caller's arrays it reads (the
 * ones its operation needs; the others NULL). */
typedef struct {
	Op op;
	char *const *paths;            /* OP_OPEN; OP_STATX, relative to dirfd */
	const struct open_how *how;    /* OP_OPEN */
	int dirfd;                     /* OP_STATX */
	const int *fds;                /* OP_READ, OP_CLOSE */
	guint8 *const *bufs;           /* OP_READ */
	const gsize *lens;             /* OP_READ */
	int flags;                     /* OP_READ: preadv2 flags; OP_STATX: AT_* */
	unsigned mask;                 /* OP_STATX */
	struct statx *stx;             /* OP_STATX: where each result goes */
} Ops;

/* Whether this kernel gives a ring with the three operations (and, in
 * *has_statx, whether it has statx too). */
static gboolean probe(gboolean *has_statx)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);
	*has_statx = FALSE;
	if (rc < 0) {
		pix_info("io_uring is not available (%s): reading with blocking system calls", g_strerror(-rc));
		return FALSE;
	}
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
	gboolean ok = p != NULL && io_uring_opcode_supported(p, IORING_OP_OPENAT2) &&
	              io_uring_opcode_supported(p, IORING_OP_READ) && io_uring_opcode_supported(p, IORING_OP_CLOSE);
	*has_statx = p != NULL && io_uring_opcode_supported(p, IORING_OP_STATX);
	if (p != NULL)
		io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
	if (!ok)
		pix_info("io_uring lacks openat2, read or close here: reading with blocking system calls");
	return ok;
}

static gsize probed = 0;   /* 0 unknown, 1 no, 2 yes, 3 yes with statx */

gboolean pix_uring_is_available(void)
{
	if (g_once_init_enter(&probed)) {
		gboolean is_off = g_strcmp0(g_getenv("PIX_IO"), "threads") == 0;
		gboolean has_statx = FALSE;
		gsize state = !is_off && probe(&has_statx) ? (has_statx ? 3 : 2) : 1;
		g_once_init_leave(&probed, state);
	}
	return probed >= 2;
}

PixUring *pix_uring_new(guint depth)
{
	if (!pix_uring_is_available())
		return NULL;
	PixUring *u = g_new0(PixUring, 1);
	u->depth = MAX(depth, 1);
	u->has_statx = probed == 3;
	if (io_uring_queue_init(u->depth, &u->ring, 0) < 0) {
		g_free(u);
		return NULL;
	}
	return u;
}

void pix_uring_free(PixUring *u)
{
	if (u == NULL)
		return;
	io_uring_queue_exit(&u->ring);
	g_free(u);
}

/* Reaps `n` completions into res[user_data]. */
static void reap(PixUring *u, guint n, gssize *res)
{
	for (guint k = 0; k < n; k++) {
		struct io_uring_cqe *cqe;
		int rc;
		while ((rc = io_uring_wait_cqe(&u->ring, &cqe)) == -EINTR)
			;
		if (rc < 0)
			g_error("io_uring: cannot wait for a completion: %s", g_strerror(-rc));
		res[io_uring_cqe_get_data64(cqe)] = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
	}
}

/* Whether index i of `o` has an operation: reads of no bytes and closes
 * of no descriptor have none. */
static gboolean has_op(const Ops *o, guint i)
{
	switch (o->op) {
	case OP_READ:
		return o->lens[i] > 0;
	case OP_CLOSE:
		return o->fds[i] >= 0;
	case OP_OPEN:
	case OP_STATX:
		return TRUE;
	}
	g_assert_not_reached();
}

/* Submits the operations of `o` for each index < n that has one, in
 * rounds of the ring's depth, and waits for all of them. */
static void run(PixUring *u, const Ops *o, guint n, gssize *res)
{
	guint i = 0;
	while (i < n) {
		guint queued = 0;
		for (; i < n && queued < u->depth; i++) {
			if (!has_op(o, i))
				continue;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
			g_assert(sqe != NULL);   /* invariant 1: the ring is empty at each round */
			switch (o->op) {
			case OP_OPEN:
				io_uring_prep_openat2(sqe, AT_FDCWD, o->paths[i], (struct open_how *)o->how);
				break;
			case OP_READ:
				io_uring_prep_read(sqe, o->fds[i], o->bufs[i], (unsigned)o->lens[i], 0);
				sqe->rw_flags = o->flags;
				break;
			case OP_STATX:
				io_uring_prep_statx(sqe, o->dirfd, o->paths[i], o->flags, o->mask, &o->stx[i]);
				break;
			case OP_CLOSE:
				io_uring_prep_close(sqe, o->fds[i]);
				break;
			}
			io_uring_sqe_set_data64(sqe, i);
			queued++;
		}
		if (queued == 0)
			break;
		/* an entry the kernel cannot even start (an open of a path
		 * longer than PATH_MAX) completes with its error, and the
		 * submission stops there: the entries after it stay in the ring
		 * until submitted again (without this, the reap waited forever
		 * for their completions) */
		for (guint submitted = 0; submitted < queued;) {
			int rc;
			while ((rc = io_uring_submit(&u->ring)) == -EINTR)
				;
			if (rc < 0)
				g_error("io_uring: cannot submit: %s", g_strerror(-rc));
			if (rc == 0)
				g_error("io_uring: the kernel took none of %u entries", queued - submitted);
			submitted += (guint)rc;
		}
		reap(u, queued, res);
	}
}

void pix_uring_open(PixUring *u, char *const *paths, int flags, int *fds, guint n)
{
	struct open_how how = { .flags = (guint64)(flags | O_NOFOLLOW), .resolve = RESOLVE_NO_SYMLINKS };
	Ops o = { .op = OP_OPEN, .paths = paths, .how = &how };
	g_autofree gssize *res = g_new0(gssize, n);
	run(u, &o, n, res);
	for (guint i = 0; i < n; i++)
		fds[i] = (int)res[i];
}

void pix_uring_read(PixUring *u, const int *fds, guint8 *const *bufs, const gsize *lens, int rw_flags,
                    gssize *res, guint n)
{
	Ops o = { .op = OP_READ, .fds = fds, .bufs = bufs, .lens = lens, .flags = rw_flags };
	memset(res, 0, n * sizeof *res);
	run(u, &o, n, res);
}

gboolean pix_uring_has_statx(const PixUring *u)
{
	return u != NULL && u->has_statx;
}

void pix_uring_statx_at(PixUring *u, int dirfd, char *const *names, int flags, unsigned mask, struct statx *stx,
                        gssize *res, guint n)
{
	Ops o = { .op = OP_STATX, .dirfd = dirfd, .paths = names, .flags = flags, .mask = mask, .stx = stx };
	g_assert(u->has_statx);
	run(u, &o, n, res);
}

void pix_uring_close(PixUring *u, const int *fds, guint n)
{
	Ops o = { .op = OP_CLOSE, .fds = fds };
	g_autofree gssize *res = g_new0(gssize, n);
	run(u, &o, n, res);
}
