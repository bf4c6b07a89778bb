/*
 * verify.h: chooses the files `photoidx verify` reads again: those with an
 * MD5 in the catalog, oldest verification first, within a byte budget and
 * a deadline, and hands them to the readers (PIX_ACT_VERIFY items).  The
 * hashers hash them without metadata; the store compares (store.c,
 * put_verify).
 *
 * Thread: pix_verify_plan_run() runs on one thread of its own, with its
 * own reader PixStore (its place in the pipeline is plan's).
 */
#ifndef PIX_VERIFY_H
#define PIX_VERIFY_H

#include "queue.h"
#include "sched.h"
#include "store.h"

typedef struct {
	PixStore *catalog;        /* a reader (borrowed) */
	char **paths;             /* absolute canonical paths to verify at or
	                             below, or NULL for the whole catalog */
	gint64 max_bytes;         /* stop choosing once this many bytes are
	                             chosen (the file crossing it included);
	                             0: no limit */
	gint64 deadline_us;       /* monotonic time to stop choosing; 0: none */
	PixDeviceClass device_class;
	PixQueue *to_read;        /* PixItem; closed once */
	PixQueue *to_store;       /* its producer slot closed once */
} PixVerifyPlanConfig;

/* Chooses and hands out the files; returns FALSE with `error` set when the
 * catalog could not be read (then it has asked every stage to stop).
 * Closes its outputs in both cases. */
gboolean pix_verify_plan_run(const PixVerifyPlanConfig *cfg, GError **error);

#endif
