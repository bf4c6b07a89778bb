/*
 * xml-tree.c: an XML element tree parsed with GMarkup and written back in
 * Qt's auto-formatted style (see xml-tree.h).
 *
 * Reads the bytes it is given; writes the GString it is given.  Main
 * thread (one tree, one thread).
 *
 * GMarkup expands only the five predefined entities and character
 * references, reads no DTD, and checks UTF-8 and well-formedness, so a
 * hostile file cannot make it fetch or grow anything.
 *
 * Invariants:
 *  1. Every node's parent is the element whose children hold it; the
 *     root's parent is NULL.
 *  2. An element's attrs hold names and values in pairs, names unique.
 *  3. The parse never nests deeper than its max_depth.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "xml-tree.h"

#include <string.h>

typedef struct {
	PixXmlNode *root;
	PixXmlNode *current;    /* the innermost open element, NULL before the root */
	guint depth;
	guint max_depth;
} Parse;

static PixXmlNode *node_new(PixXmlKind kind)
{
	PixXmlNode *n = g_new0(PixXmlNode, 1);
	n->kind = kind;
	if (kind == PIX_XML_ELEMENT) {
		n->attrs = g_ptr_array_new_with_free_func(g_free);
		n->children = g_ptr_array_new_with_free_func((GDestroyNotify)pix_xml_free);
	}
	return n;
}

PixXmlNode *pix_xml_element_new(const char *name)
{
	PixXmlNode *n = node_new(PIX_XML_ELEMENT);
	n->name = g_strdup(name);
	return n;
}

void pix_xml_free(PixXmlNode *node)
{
	if (node == NULL)
		return;
	if (node->attrs != NULL)
		g_ptr_array_unref(node->attrs);
	if (node->children != NULL)
		g_ptr_array_unref(node->children);
	g_free(node->name);
	g_free(node->text);
	g_free(node);
}

/* Invariants 1 and 2 for `e` and its children (debug checker). */
static gboolean node_check(const PixXmlNode *e)
{
	if (e->kind != PIX_XML_ELEMENT)
		return e->children == NULL && e->attrs == NULL;
	if (e->attrs->len % 2 != 0)
		return FALSE;
	for (guint i = 0; i < e->attrs->len; i += 2)
		for (guint j = i + 2; j < e->attrs->len; j += 2)
			if (strcmp(e->attrs->pdata[i], e->attrs->pdata[j]) == 0)
				return FALSE;
	for (guint i = 0; i < e->children->len; i++)
		if (((PixXmlNode *)e->children->pdata[i])->parent != e)
			return FALSE;
	return TRUE;
}

void pix_xml_insert(PixXmlNode *e, PixXmlNode *child, gint index)
{
	child->parent = e;
	if (index < 0 || (guint)index >= e->children->len)
		g_ptr_array_add(e->children, child);
	else
		g_ptr_array_insert(e->children, index, child);
}

static void on_start(GMarkupParseContext *ctx, const char *name, const char **names, const char **values,
                     gpointer data, GError **error)
{
	Parse *p = data;
	(void)ctx;
	if (p->current == NULL && p->root != NULL) {
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "a second document element <%s>", name);
		return;
	}
	if (p->depth >= p->max_depth) {
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "elements nested deeper than %u",
		            p->max_depth);
		return;
	}
	PixXmlNode *e = pix_xml_element_new(name);
	for (guint i = 0; names[i] != NULL; i++) {
		if (pix_xml_get(e, names[i]) != NULL) {
			g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
			            "attribute '%s' twice in <%s>", names[i], name);
			pix_xml_free(e);
			return;
		}
		g_ptr_array_add(e->attrs, g_strdup(names[i]));
		g_ptr_array_add(e->attrs, g_strdup(values[i]));
	}
	if (p->current == NULL)
		p->root = e;
	else
		pix_xml_insert(p->current, e, -1);
	p->current = e;
	p->depth++;
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
	Parse *p = data;
	(void)ctx, (void)name, (void)error;
	g_assert(node_check(p->current));
	p->current = p->current->parent;
	p->depth--;
}

static void add_leaf(Parse *p, PixXmlKind kind, const char *text, gsize len)
{
	if (p->current == NULL)
		return;         /* before or after the document element */
	PixXmlNode *n = node_new(kind);
	n->text = g_strndup(text, len);
	pix_xml_insert(p->current, n, -1);
}

/* Character data without the whitespace around it, which is layout (the
 * writer indents): so text written and parsed again is the same. */
static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data, GError **error)
{
	(void)ctx, (void)error;
	while (len > 0 && g_ascii_isspace(text[0]))
		text++, len--;
	while (len > 0 && g_ascii_isspace(text[len - 1]))
		len--;
	if (len > 0)
		add_leaf(data, PIX_XML_TEXT, text, len);
}

static void on_passthrough(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data, GError **error)
{
	(void)ctx, (void)error;
	add_leaf(data, PIX_XML_COMMENT, text, len);
}

PixXmlNode *pix_xml_parse(const char *data, gsize len, guint max_depth, GError **error)
{
	static const GMarkupParser parser = {
		.start_element = on_start,
		.end_element = on_end,
		.text = on_text,
		.passthrough = on_passthrough,
	};
	Parse p = { .max_depth = max_depth };
	GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, G_MARKUP_TREAT_CDATA_AS_TEXT, &p, NULL);
	gboolean is_ok = g_markup_parse_context_parse(ctx, data, (gssize)len, error) &&
	                 g_markup_parse_context_end_parse(ctx, error);
	g_markup_parse_context_free(ctx);
	if (!is_ok || p.root == NULL) {
		if (is_ok)
			g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_EMPTY, "no document element");
		pix_xml_free(p.root);
		return NULL;
	}
	return p.root;
}

/* Text as an attribute value or character data, escaped as
 * QXmlStreamWriter escapes it. */
static void put_escaped(GString *out, const char *s)
{
	for (const char *c = s; *c != '\0'; c++) {
		switch (*c) {
		case '&': g_string_append(out, "&amp;"); break;
		case '<': g_string_append(out, "&lt;"); break;
		case '>': g_string_append(out, "&gt;"); break;
		case '"': g_string_append(out, "&quot;"); break;
		case '\n': g_string_append(out, "&#10;"); break;
		case '\r': g_string_append(out, "&#13;"); break;
		case '\t': g_string_append(out, "&#9;"); break;
		default: g_string_append_c(out, *c);
		}
	}
}

static void write_node(GString *out, const PixXmlNode *n, guint depth)
{
	for (guint i = 0; i < depth; i++)
		g_string_append(out, "    ");
	if (n->kind == PIX_XML_COMMENT) {
		g_string_append(out, n->text);
		g_string_append_c(out, '\n');
		return;
	}
	if (n->kind == PIX_XML_TEXT) {
		put_escaped(out, n->text);
		g_string_append_c(out, '\n');
		return;
	}
	g_string_append_printf(out, "<%s", n->name);
	for (guint i = 0; i < n->attrs->len; i += 2) {
		g_string_append_printf(out, " %s=\"", (const char *)n->attrs->pdata[i]);
		put_escaped(out, n->attrs->pdata[i + 1]);
		g_string_append_c(out, '"');
	}
	if (n->children->len == 0) {
		g_string_append(out, "/>\n");
		return;
	}
	g_string_append(out, ">\n");
	for (guint i = 0; i < n->children->len; i++)
		write_node(out, n->children->pdata[i], depth + 1);
	for (guint i = 0; i < depth; i++)
		g_string_append(out, "    ");
	g_string_append_printf(out, "</%s>\n", n->name);
}

void pix_xml_write(GString *out, const PixXmlNode *root)
{
	g_string_append(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	write_node(out, root, 0);
}

const char *pix_xml_get(const PixXmlNode *e, const char *name)
{
	for (guint i = 0; i < e->attrs->len; i += 2)
		if (strcmp(e->attrs->pdata[i], name) == 0)
			return e->attrs->pdata[i + 1];
	return NULL;
}

void pix_xml_set(PixXmlNode *e, const char *name, const char *value)
{
	for (guint i = 0; i < e->attrs->len; i += 2)
		if (strcmp(e->attrs->pdata[i], name) == 0) {
			g_free(e->attrs->pdata[i + 1]);
			e->attrs->pdata[i + 1] = g_strdup(value);
			return;
		}
	g_ptr_array_add(e->attrs, g_strdup(name));
	g_ptr_array_add(e->attrs, g_strdup(value));
}

PixXmlNode *pix_xml_child(const PixXmlNode *e, const char *name)
{
	for (guint i = 0; i < e->children->len; i++) {
		PixXmlNode *c = e->children->pdata[i];
		if (c->kind == PIX_XML_ELEMENT && strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

guint pix_xml_count(const PixXmlNode *e, const char *name)
{
	guint n = 0;
	for (guint i = 0; i < e->children->len; i++) {
		const PixXmlNode *c = e->children->pdata[i];
		n += c->kind == PIX_XML_ELEMENT && (name == NULL || strcmp(c->name, name) == 0);
	}
	return n;
}
