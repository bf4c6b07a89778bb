/*
 * log.h: diagnostics on stderr, the terminal status line, and the
 * bookkeeping behind the exit status.
 *
 * stdout carries results only; everything here goes to stderr.  Messages
 * follow git's style: lowercase, no full stop, what went wrong first, the
 * subject in single quotes and made safe with pix_quote().
 *
 * Thread-safety: every function may be called from any thread; lines from
 * different threads never interleave, and a warning printed while the
 * status line is shown clears it first.
 */
#ifndef PIX_LOG_H
#define PIX_LOG_H

#include <glib.h>

/* quiet: no notices (problems with files and errors still print);
 * verbose: pix_info() prints. */
void pix_log_init(gboolean is_quiet, gboolean is_verbose);

/* A problem with one file or directory: always printed, and counted. */
void pix_warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* A fatal problem (the run stops): always printed. */
void pix_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Something the user should know that is not a problem (waiting for a
 * lock): printed unless quiet, not counted. */
void pix_notice(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* A remark for --verbose. */
void pix_info(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* How many pix_warn() calls there were. */
guint pix_log_warnings(void);

/* Shows `line` as the status line on stderr (a terminal), replacing the
 * previous one; NULL clears it for good output after it. */
void pix_log_status(const char *line);

/*
 * A display-safe copy of `bytes` (a file name or path, any bytes): valid
 * UTF-8 is kept, control characters (C0, DEL and the C1 range U+0080 to
 * U+009F) become \n, \t, \r or \xNN per byte, invalid UTF-8 bytes become
 * \xNN and a backslash becomes \\.  (transfer full)
 */
char *pix_quote(const char *bytes);

/*
 * Per-run counters, shared by the stages (atomic).  The store thread counts
 * what it committed; plan counts what it found unchanged; the readers count
 * bytes.
 */
typedef enum {
	PIX_N_DIRS,         /* directories listed */
	PIX_N_NEW,          /* files added */
	PIX_N_CHANGED,      /* files read again because they changed */
	PIX_N_MOVED,        /* files found at a new path */
	PIX_N_MISSING,      /* files gone */
	PIX_N_UNCHANGED,    /* files not read: same device, inode, size, times */
	PIX_N_ERRORS,       /* files stored in state 'error' in this run */
	PIX_N_SKIPPED,      /* entries not indexed: excluded, symlinks, other mounts */
	PIX_N_TO_READ,      /* files planned for reading */
	PIX_BYTES_TO_READ,  /* their bytes, as walked */
	PIX_N_READ,         /* files read to the end (or failed) */
	PIX_BYTES_READ,     /* bytes of file data read */
	PIX_NS_META,        /* thread CPU time in the metadata parsers, ns */
	PIX_NS_SCAN,        /* of which in scanning image data for its end, ns */
	PIX_N_VERIFIED,     /* verify: files found with their stored MD5 */
	PIX_N_MISMATCH,     /* verify: files whose content changed, size and mtime not */
	PIX_N_STALE,        /* verify: files changed since the last scan (not verified) */
	PIX_N_THUMBS,       /* thumbnails made (images decoded for one) */
	PIX_N_THUMB_NOTES,  /* images none could be made of */
	PIX_N_THUMBS_KNOWN, /* copies of a content with one: not decoded */
	PIX_N_PHASHES_FILLED, /* perceptual hashes computed from stored thumbnails */
	PIX_N_COUNTERS
} PixCounter;

void pix_count_add(PixCounter c, gint64 n);
gint64 pix_count_get(PixCounter c);

/* CPU time of the calling thread, ns.  A system call (the vDSO does not
 * serve thread clocks): read it per batch, not per file. */
gint64 pix_thread_cpu_ns(void);
/* The monotonic clock, ns, from the vDSO (no system call): for timing
 * short stretches of computation, which a thread seldom loses the CPU in. */
gint64 pix_clock_ns(void);
/* Whether the stages time their metadata reading (PIX_NS_META and
 * PIX_NS_SCAN): only for a report that shows it (scan --json).  Off by
 * default: the clock readings (1.5 thread-clock system calls a file) and
 * the shared counters made an import of 40,000 small files 1.05x as long
 * (design.md). */
void pix_set_meta_timing(gboolean is_on);
gboolean pix_is_meta_timing(void);

/* Asks every stage to stop at the next safe point (async-signal-safe). */
void pix_request_stop(void);
gboolean pix_stop_requested(void);
/* Forgets a stop that a failure requested (pix_pipeline_clear_stop()). */
void pix_clear_stop(void);

/* "12.3 MB" style size, decimal units, the locale's decimal point, an
 * ASCII space: the one size formatter of every command (transfer full). */
char *pix_format_bytes(gint64 bytes);
/* "…" where the locale's character set is UTF-8, else "..." (static). */
const char *pix_ellipsis(void);
/* `text` for a column of a terminal: in pix_quote()'s display form, cut
 * to `max_chars` characters (the last an ellipsis) when longer, then
 * padded with spaces to `pad_chars` characters (transfer full). */
char *pix_fit_text(const char *text, glong max_chars, glong pad_chars);

#endif
