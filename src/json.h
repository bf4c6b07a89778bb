/*
 * json.h: writing JSON for --json output (stdout, stable field names).
 *
 * Thread-safety: pure functions on the caller's GString.
 */
#ifndef PIX_JSON_H
#define PIX_JSON_H

#include <glib.h>

/* Appends `text` as a JSON string.  Valid UTF-8 is kept as it is (escaped
 * where JSON requires); bytes that are not UTF-8 (file names can be any
 * bytes) are written in pix_quote()'s display form. NULL gives null. */
void pix_json_string(GString *out, const char *text);

/* Appends "key": to an object, with a comma before it unless it is the
 * first member (pass *is_first, initially TRUE). */
void pix_json_key(GString *out, const char *key, gboolean *is_first);

/* Appends "key": v (an integer member). */
void pix_json_int(GString *out, const char *key, gint64 v, gboolean *is_first);
/* Appends "key": v when `has`, else "key": null. */
void pix_json_int_or_null(GString *out, const char *key, gint64 v, gboolean has, gboolean *is_first);
/* Appends "key": text (pix_json_string(): NULL gives null). */
void pix_json_str(GString *out, const char *key, const char *text, gboolean *is_first);
/* Appends a finite double in the shortest form that reads back as the
 * same double ("0.1", not "0.10000000000000001"; 17 digits where needed),
 * in the C locale. */
void pix_json_real(GString *out, double d);
/* Appends "key": true or false. */
void pix_json_bool(GString *out, const char *key, gboolean v, gboolean *is_first);

#endif
