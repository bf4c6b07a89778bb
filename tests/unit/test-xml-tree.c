/*
 * test-xml-tree.c: the preserving XML tree (xml-tree.c): what a file
 * says survives a parse and a write, attribute order and escapes
 * included; writing is idempotent; hostile input is refused.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "xml-tree.h"

#include <string.h>

static char *round_trip(const char *in)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(PixXmlNode) root = pix_xml_parse(in, strlen(in), 16, &error);
	g_assert_no_error(error);
	g_assert_nonnull(root);
	GString *out = g_string_new(NULL);
	pix_xml_write(out, root);
	return g_string_free(out, FALSE);
}

static void test_keeps_everything(void)
{
	const char *in =
	    "<?xml version='1.0'?>\n<a z=\"1\" b='2' m=\"&amp;&lt;&gt;&quot;&#10;&#9;&#13;&apos;\">"
	    "  <!-- a comment -->\n<b/><c x=\"\xc3\xa9\">text &amp; more</c><b y=\"\"/></a>";
	g_autofree char *out = round_trip(in);
	g_assert_cmpstr(out, ==,
	                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	                "<a z=\"1\" b=\"2\" m=\"&amp;&lt;&gt;&quot;&#10;&#9;&#13;'\">\n"
	                "    <!-- a comment -->\n"
	                "    <b/>\n"
	                "    <c x=\"\xc3\xa9\">\n"
	                "        text &amp; more\n"
	                "    </c>\n"
	                "    <b y=\"\"/>\n"
	                "</a>\n");
	/* and written again, the same bytes */
	g_autofree char *again = round_trip(out);
	g_assert_cmpstr(again, ==, out);
}

static void test_edit(void)
{
	const char *in = "<r><i file=\"a\" n=\"1\"/></r>";
	g_autoptr(PixXmlNode) root = pix_xml_parse(in, strlen(in), 16, NULL);
	PixXmlNode *i = pix_xml_child(root, "i");
	g_assert_nonnull(i);
	g_assert_cmpstr(pix_xml_get(i, "file"), ==, "a");
	g_assert_null(pix_xml_get(i, "none"));
	pix_xml_set(i, "file", "b");
	pix_xml_set(i, "new", "x\"y");
	PixXmlNode *j = pix_xml_element_new("j");
	pix_xml_insert(root, j, 0);
	g_assert_true(j->parent == root);
	g_assert_cmpuint(pix_xml_count(root, NULL), ==, 2);
	g_assert_cmpuint(pix_xml_count(root, "i"), ==, 1);
	g_autoptr(GString) out = g_string_new(NULL);
	pix_xml_write(out, root);
	g_assert_cmpstr(out->str, ==,
	                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r>\n    <j/>\n    <i file=\"b\" n=\"1\" new=\"x&quot;y\"/>\n</r>\n");
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"", "<a>", "<a></b>", "<a x=\"1\" x=\"2\"/>", "<a/><b/>", "<a>&bogus;</a>", "<a>\xff</a>",
		"<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
	};
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(PixXmlNode) root = pix_xml_parse(bad[i], strlen(bad[i]), 16, &error);
		g_test_message("%s", bad[i]);
		g_assert_null(root);
		g_assert_nonnull(error);
	}
	/* nesting beyond the limit */
	g_autoptr(GString) deep = g_string_new(NULL);
	for (int i = 0; i < 20; i++)
		g_string_append(deep, "<a>");
	for (int i = 0; i < 20; i++)
		g_string_append(deep, "</a>");
	g_autoptr(GError) error = NULL;
	g_assert_null(pix_xml_parse(deep->str, deep->len, 16, &error));
	g_assert_nonnull(error);
	g_autoptr(PixXmlNode) ok = pix_xml_parse(deep->str, deep->len, 20, NULL);
	g_assert_nonnull(ok);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/xml-tree/keeps-everything", test_keeps_everything);
	g_test_add_func("/xml-tree/edit", test_edit);
	g_test_add_func("/xml-tree/refused", test_refused);
	return g_test_run();
}
