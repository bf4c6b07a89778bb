/*
 * uring.c: batches of opens, reads and closes through io_uring (see
 * uring.h), with liburing.
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
#include <unistd.h>

struct PixUring {
	struct io_uring ring;
	guint depth;
};

typedef enum { OP_OPEN, OP_READ, OP_CLOSE } Op;

/* Whether this kernel gives a ring with the three operations. */
static gboolean probe(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);
	if (rc < 0) {
		pix_info("io_uring is not available (%s): reading with blocking system calls", g_strerror(-rc));
		return FALSE;
	}
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
	gboolean ok = p != NULL && io_uring_opcode_supported(p, IORING_OP_OPENAT2) &&
	              io_uring_opcode_supported(p, IORING_OP_READ) && io_uring_opcode_supported(p, IORING_OP_CLOSE);
	if (p != NULL)
		io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
	if (!ok)
		pix_info("io_uring lacks openat2, read or close here: reading with blocking system calls");
	return ok;
}

gboolean pix_uring_is_available(void)
{
	static gsize state = 0;   /* 0 unknown, 1 no, 2 yes */
	if (g_once_init_enter(&state)) {
		gboolean is_off = g_strcmp0(g_getenv("PIX_IO"), "threads") == 0;
		g_once_init_leave(&state, !is_off && probe() ? 2 : 1);
	}
	return state == 2;
}

PixUring *pix_uring_new(guint depth)
{
	if (!pix_uring_is_available())
		return NULL;
	PixUring *u = g_new0(PixUring, 1);
	u->depth = MAX(depth, 1);
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

/* Submits operation `op` for each index < n (but reads of no bytes and
 * closes of no descriptor), in rounds of the ring's depth, and waits for
 * all of them. */
static void run(PixUring *u, Op op, guint n, char *const *paths, const struct open_how *how, const int *fds,
                guint8 *const *bufs, const gsize *lens, int rw_flags, gssize *res)
{
	guint i = 0;
	while (i < n) {
		guint queued = 0;
		for (; i < n && queued < u->depth; i++) {
			if ((op == OP_READ && lens[i] == 0) || (op == OP_CLOSE && fds[i] < 0))
				continue;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
			g_assert(sqe != NULL);   /* invariant 1: the ring is empty at each round */
			switch (op) {
			case OP_OPEN:
				io_uring_prep_openat2(sqe, AT_FDCWD, paths[i], (struct open_how *)how);
				break;
			case OP_READ:
				io_uring_prep_read(sqe, fds[i], bufs[i], (unsigned)lens[i], 0);
				sqe->rw_flags = rw_flags;
				break;
			case OP_CLOSE:
				io_uring_prep_close(sqe, fds[i]);
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
	g_autofree gssize *res = g_new0(gssize, n);
	run(u, OP_OPEN, n, paths, &how, NULL, NULL, NULL, 0, res);
	for (guint i = 0; i < n; i++)
		fds[i] = (int)res[i];
}

void pix_uring_read(PixUring *u, const int *fds, guint8 *const *bufs, const gsize *lens, int rw_flags,
                    gssize *res, guint n)
{
	memset(res, 0, n * sizeof *res);
	run(u, OP_READ, n, NULL, NULL, fds, bufs, lens, rw_flags, res);
}

void pix_uring_close(PixUring *u, const int *fds, guint n)
{
	g_autofree gssize *res = g_new0(gssize, n);
	run(u, OP_CLOSE, n, NULL, NULL, fds, NULL, NULL, 0, res);
}
