/*
 * xml-tree.h: a small XML element tree that keeps what a file says, for
 * rewriting another program's file without losing anything of it
 * (KPhotoAlbum's index.xml, export-kpa.c).
 *
 * Parsing keeps every element, every attribute in its order with its
 * value (entities decoded), comments, and text that is not whitespace;
 * whitespace between elements and around text, and the XML declaration,
 * are not kept:
 * writing indents by 4 spaces per level, as Qt's QXmlStreamWriter does
 * with auto-formatting, after a UTF-8 declaration.  So a file written by
 * pix_xml_write() and parsed again is written again byte for byte.
 *
 * Thread-safety: a tree is used by one thread.
 */
#ifndef PIX_XML_TREE_H
#define PIX_XML_TREE_H

#include <glib.h>

typedef enum {
	PIX_XML_ELEMENT,
	PIX_XML_TEXT,           /* character data, not all whitespace */
	PIX_XML_COMMENT,        /* a comment (or processing instruction), verbatim */
} PixXmlKind;

typedef struct PixXmlNode PixXmlNode;
struct PixXmlNode {
	PixXmlKind kind;
	char *name;             /* an element's name; NULL for the others (owned) */
	GPtrArray *attrs;       /* element: name, value, name, value ... (owned strings) */
	GPtrArray *children;    /* element: PixXmlNode (owned); NULL for the others */
	char *text;             /* text or comment: its content (owned) */
	PixXmlNode *parent;     /* (borrowed) */
};

/*
 * The document element of the `len` bytes at `data`, or NULL with `error`
 * set (G_MARKUP_ERROR, with the line and column).  At most `max_depth`
 * levels of elements.
 */
PixXmlNode *pix_xml_parse(const char *data, gsize len, guint max_depth, GError **error);
/* Writes the declaration and `root` to `out`. */
void pix_xml_write(GString *out, const PixXmlNode *root);
/* Frees a node and everything below it; accepts NULL. */
void pix_xml_free(PixXmlNode *node);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixXmlNode, pix_xml_free)

PixXmlNode *pix_xml_element_new(const char *name);
/* The value of attribute `name`, or NULL (transfer none). */
const char *pix_xml_get(const PixXmlNode *e, const char *name);
/* Sets attribute `name`: its value replaced in place, or appended. */
void pix_xml_set(PixXmlNode *e, const char *name, const char *value);
/* The first element child named `name`, or NULL. */
PixXmlNode *pix_xml_child(const PixXmlNode *e, const char *name);
/* Adds `child` (transfer full) to `e` at `index` (-1: at the end). */
void pix_xml_insert(PixXmlNode *e, PixXmlNode *child, gint index);
/* The number of element children of `e` named `name` (NULL: any). */
guint pix_xml_count(const PixXmlNode *e, const char *name);

#endif
