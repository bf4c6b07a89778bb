/*
 * sched.h: the order in which planned files are read.
 *
 * Reading in on-disk order is what keeps a disk streaming instead of
 * seeking.  Plan hands each directory's files to be read to
 * pix_sched_order() before queueing them for the readers.
 *
 * Thread-safety: pure functions on the caller's data.
 */
#ifndef PIX_SCHED_H
#define PIX_SCHED_H

#include "item.h"

/* Sorts `items` (PixItem*) into reading order: by device, then inode
 * (the inode table and, on most file systems, data follow inode order). */
void pix_sched_order(GPtrArray *items);

#endif
