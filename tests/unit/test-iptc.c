/*
 * test-iptc.c: unit tests of src/meta-iptc.c: IPTC-IIM datasets (the
 * fields read, repeated keywords and by-lines, the date from 2:55 and
 * 2:60) in their character sets (declared UTF-8, Latin-1, undeclared,
 * unknown), Photoshop resources around them (names padded, odd sizes,
 * other signatures), XMP's precedence, and hostile blocks: lengths past
 * the end, extended datasets, garbage, truncation at every length and
 * random mutations must never crash, and keep what came before.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta-int.h"
#include "testlib.h"

/* Appends dataset record:number with `len` bytes of `value`. */
static void dataset(GByteArray *b, guint8 record, guint8 number, const void *value, gsize len)
{
	guint8 head[5] = { 0x1c, record, number, (guint8)(len >> 8), (guint8)len };
	g_assert_cmpuint(len, <, 0x8000);
	g_byte_array_append(b, head, 5);
	g_byte_array_append(b, value, (guint)len);
}

static void text(GByteArray *b, guint8 record, guint8 number, const char *s)
{
	dataset(b, record, number, s, strlen(s));
}

/* Reads `b` as IIM; the stream's problems in *problems (transfer full). */
static PixMeta *read_iim(GByteArray *b, char **problems)
{
	PixMeta *m = pix_meta_new();
	PixStream *s = pix_stream_new(0, 0);
	guint8 *copy = g_memdup2(b->data, b->len);   /* ASan sees a read past it */
	pix_meta_read_iptc(s, copy, b->len, m);
	g_free(copy);
	g_autofree char *note = pix_meta_finish_tags(m);
	*problems = pix_stream_problems(s);
	g_assert_null(note);
	pix_stream_free(s);
	return m;
}

static void test_fields(void)
{
	g_autoptr(GByteArray) b = g_byte_array_new();
	text(b, 1, 90, "\x1b%G");
	text(b, 2, 0, "\x00\x04");
	text(b, 2, 5, "Object name");
	text(b, 2, 25, "alpha");
	text(b, 2, 25, "beta");
	text(b, 2, 25, "alpha");
	text(b, 2, 55, "20050929");
	text(b, 2, 60, "165100+0200");
	text(b, 2, 80, "Ann");
	text(b, 2, 80, "Ben");
	text(b, 2, 90, "København");
	text(b, 2, 92, "Nyhavn");
	text(b, 2, 95, "Hovedstaden");
	text(b, 2, 100, "DNK");
	text(b, 2, 101, "Denmark");
	text(b, 2, 116, "© 2005 Ann");
	text(b, 2, 120, "A harbour\nat dusk");
	text(b, 2, 7, "ignored edit status");
	g_autofree char *problems = NULL;
	g_autoptr(PixMeta) m = read_iim(b, &problems);
	g_assert_null(problems);
	PixTags *t = m->tags;
	g_assert_nonnull(t);
	g_assert_cmpstr(t->title, ==, "Object name");
	g_assert_cmpuint(t->keywords->len, ==, 2);
	g_assert_cmpstr(g_array_index(t->keywords, PixKeyword, 1).name, ==, "beta");
	g_assert_cmpstr(t->creator, ==, "Ann; Ben");
	g_assert_cmpstr(t->city, ==, "København");
	g_assert_cmpstr(t->sublocation, ==, "Nyhavn");
	g_assert_cmpstr(t->province, ==, "Hovedstaden");
	g_assert_cmpstr(t->country_code, ==, "DNK");
	g_assert_cmpstr(t->country, ==, "Denmark");
	g_assert_cmpstr(t->copyright, ==, "© 2005 Ann");
	g_assert_cmpstr(t->caption, ==, "A harbour\nat dusk");
	g_assert_cmpstr(m->date_taken, ==, "2005-09-29T16:51:00");
	g_assert_cmpstr(m->date_tz, ==, "+02:00");
	g_assert_cmpstr(m->date_source, ==, "IPTC DateCreated");
}

static void test_dates(void)
{
	/* a date alone says nothing of the time; a known date stays */
	g_autoptr(GByteArray) b = g_byte_array_new();
	text(b, 2, 55, "20040220");
	g_autofree char *p1 = NULL;
	g_autoptr(PixMeta) m = read_iim(b, &p1);
	g_assert_null(m->date_taken);

	g_autoptr(GByteArray) c = g_byte_array_new();
	text(c, 2, 55, "20040230");     /* no 30 February */
	text(c, 2, 60, "120000");
	g_autofree char *p2 = NULL;
	g_autoptr(PixMeta) n = read_iim(c, &p2);
	g_assert_null(n->date_taken);

	g_autoptr(GByteArray) d = g_byte_array_new();
	text(d, 2, 55, "20040220");
	text(d, 2, 60, "101500");
	PixMeta *k = pix_meta_new();
	k->date_taken = g_strdup("2001-01-01T00:00:00");
	k->date_source = "DateTimeOriginal";
	pix_meta_read_iptc(NULL, d->data, d->len, k);
	g_assert_cmpstr(k->date_taken, ==, "2001-01-01T00:00:00");
	g_assert_cmpstr(k->date_source, ==, "DateTimeOriginal");
	pix_meta_free(k);

	g_autofree char *p3 = NULL;
	g_autoptr(PixMeta) o = read_iim(d, &p3);
	g_assert_cmpstr(o->date_taken, ==, "2004-02-20T10:15:00");
	g_assert_null(o->date_tz);
}

static void test_charsets(void)
{
	/* undeclared: UTF-8 where it is valid, else Windows-1252 */
	g_autoptr(GByteArray) a = g_byte_array_new();
	text(a, 2, 90, "M\xc3\xbcnchen");
	text(a, 2, 101, "Fran\xe7" "a \x80 \x93quote\x94");
	g_autofree char *pa = NULL;
	g_autoptr(PixMeta) ma = read_iim(a, &pa);
	g_assert_null(pa);
	g_assert_cmpstr(ma->tags->city, ==, "München");
	g_assert_cmpstr(ma->tags->country, ==, "França € “quote”");

	/* declared Latin-1: its bytes, even where they would be UTF-8 */
	g_autoptr(GByteArray) b = g_byte_array_new();
	text(b, 1, 90, "\x1b.A");
	text(b, 2, 90, "M\xc3\xbcnchen");
	g_autofree char *pb = NULL;
	g_autoptr(PixMeta) mb = read_iim(b, &pb);
	g_assert_null(pb);
	g_assert_cmpstr(mb->tags->city, ==, "MÃ¼nchen");

	/* declared UTF-8, not UTF-8: replaced, and said */
	g_autoptr(GByteArray) c = g_byte_array_new();
	text(c, 1, 90, "\x1b%G");
	text(c, 2, 90, "Bad \xff byte");
	g_autofree char *pc = NULL;
	g_autoptr(PixMeta) mc = read_iim(c, &pc);
	g_assert_nonnull(pc);
	g_assert_true(g_utf8_validate(mc->tags->city, -1, NULL));
	g_assert_true(g_str_has_prefix(mc->tags->city, "Bad "));

	/* a character set not known: ASCII text passes without a word, the
	 * rest is read as Latin-1 and said once */
	g_autoptr(GByteArray) d = g_byte_array_new();
	text(d, 1, 90, "\x1b(B\x1b&@\x1b$)B");
	text(d, 2, 90, "Plain");
	g_autofree char *pd = NULL;
	g_autoptr(PixMeta) md = read_iim(d, &pd);
	g_assert_null(pd);
	g_assert_cmpstr(md->tags->city, ==, "Plain");
	text(d, 2, 101, "\xb0\xa1");
	text(d, 2, 5, "\xb0\xa2");
	g_autofree char *pe = NULL;
	g_autoptr(PixMeta) me = read_iim(d, &pe);
	g_assert_nonnull(pe);
	g_assert_nonnull(strstr(pe, "character set"));
	g_assert_null(strstr(strstr(pe, "character set") + 1, "character set"));
	g_assert_true(g_utf8_validate(me->tags->country, -1, NULL));
}

static void test_damage(void)
{
	/* a length past the end: what came before is kept, the damage said */
	g_autoptr(GByteArray) a = g_byte_array_new();
	text(a, 2, 5, "Kept");
	guint8 cut[] = { 0x1c, 2, 120, 0x10, 0x00, 'x', 'y' };
	g_byte_array_append(a, cut, sizeof cut);
	g_autofree char *pa = NULL;
	g_autoptr(PixMeta) ma = read_iim(a, &pa);
	g_assert_cmpstr(ma->tags->title, ==, "Kept");
	g_assert_nonnull(strstr(pa, "runs past the end"));

	/* an extended dataset: its length in 2 bytes after the flag */
	g_autoptr(GByteArray) b = g_byte_array_new();
	guint8 ext[] = { 0x1c, 2, 120, 0x80, 0x02, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o' };
	g_byte_array_append(b, ext, sizeof ext);
	text(b, 2, 5, "After");
	g_autofree char *pb = NULL;
	g_autoptr(PixMeta) mb = read_iim(b, &pb);
	g_assert_null(pb);
	g_assert_cmpstr(mb->tags->caption, ==, "hello");
	g_assert_cmpstr(mb->tags->title, ==, "After");

	/* an extended length of 0 or more than 4 bytes, or a huge one */
	static const guint8 bad[][9] = {
		{ 0x1c, 2, 120, 0x80, 0x00 },
		{ 0x1c, 2, 120, 0x80, 0x05, 0, 0, 0, 1 },
		{ 0x1c, 2, 120, 0x80, 0x04, 0xff, 0xff, 0xff, 0xff },
	};
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GByteArray) c = g_byte_array_new();
		g_byte_array_append(c, bad[i], sizeof bad[i]);
		g_autofree char *pc = NULL;
		g_autoptr(PixMeta) mc = read_iim(c, &pc);
		g_assert_nonnull(pc);
		g_assert_null(mc->tags);
	}

	/* zeros after the last dataset are padding; anything else is not */
	g_autoptr(GByteArray) d = g_byte_array_new();
	text(d, 2, 5, "Padded");
	guint8 zeros[7] = { 0 };
	g_byte_array_append(d, zeros, sizeof zeros);
	g_autofree char *pd = NULL;
	g_autoptr(PixMeta) md = read_iim(d, &pd);
	g_assert_null(pd);
	g_byte_array_append(d, (const guint8 *)"junk", 4);
	g_autofree char *pe = NULL;
	g_autoptr(PixMeta) me = read_iim(d, &pe);
	g_assert_cmpstr(me->tags->title, ==, "Padded");
	g_assert_nonnull(strstr(pe, "no dataset"));
}

/* A Photoshop resource: signature, id, name (Pascal, padded to even),
 * size, data (padded to even). */
static void resource(GByteArray *b, const char *sig, guint16 id, const char *name, const guint8 *data, guint32 len)
{
	guint8 head[6] = { (guint8)sig[0], (guint8)sig[1], (guint8)sig[2], (guint8)sig[3], (guint8)(id >> 8), (guint8)id };
	g_byte_array_append(b, head, 6);
	guint8 n = (guint8)strlen(name);
	g_byte_array_append(b, &n, 1);
	g_byte_array_append(b, (const guint8 *)name, n);
	if ((1 + n) & 1)
		g_byte_array_append(b, (const guint8 *)"", 1);
	guint8 size[4] = { (guint8)(len >> 24), (guint8)(len >> 16), (guint8)(len >> 8), (guint8)len };
	g_byte_array_append(b, size, 4);
	g_byte_array_append(b, data, len);
	if (len & 1)
		g_byte_array_append(b, (const guint8 *)"", 1);
}

static void test_resources(void)
{
	g_autoptr(GByteArray) iim = g_byte_array_new();
	text(iim, 2, 5, "In resources");
	text(iim, 2, 25, "odd");        /* makes the block's length odd */
	g_assert_true(iim->len & 1);
	g_autoptr(GByteArray) b = g_byte_array_new();
	resource(b, "8BIM", 0x03ed, "", (const guint8 *)"0123456789abcdef", 16);
	resource(b, "8BIM", 0x0425, "digest", (const guint8 *)"0123456789abcdef", 15);
	resource(b, "PHUT", 0x0404, "named", iim->data, iim->len);
	g_autoptr(PixMeta) m = pix_meta_new();
	PixStream *s = pix_stream_new(0, 0);
	g_autofree guint8 *copy = g_memdup2(b->data, b->len);
	g_assert_true(pix_meta_read_irb(s, copy, b->len, m));
	g_autofree char *problems = pix_stream_problems(s);
	pix_stream_free(s);
	g_assert_null(problems);
	g_assert_cmpstr(m->tags->title, ==, "In resources");

	/* none: FALSE, nothing said; a resource cut short: said */
	g_autoptr(GByteArray) c = g_byte_array_new();
	resource(c, "8BIM", 0x03ed, "", (const guint8 *)"xx", 2);
	g_autoptr(PixMeta) n = pix_meta_new();
	g_assert_false(pix_meta_read_irb(NULL, c->data, c->len, n));
	g_byte_array_set_size(c, c->len - 1);
	PixStream *t = pix_stream_new(0, 0);
	g_assert_false(pix_meta_read_irb(t, c->data, c->len, n));
	g_autofree char *p2 = pix_stream_problems(t);
	pix_stream_free(t);
	g_assert_nonnull(p2);
}

/* Every truncation and many mutations of a rich block: no crash, no
 * read past it (ASan), text valid. */
static void test_hostile(void)
{
	g_autoptr(GByteArray) iim = g_byte_array_new();
	text(iim, 1, 90, "\x1b%G");
	text(iim, 2, 5, "Title");
	for (guint i = 0; i < 20; i++)
		text(iim, 2, 25, "keyword");
	text(iim, 2, 120, "Caption");
	g_autoptr(GByteArray) b = g_byte_array_new();
	resource(b, "8BIM", 0x0404, "", iim->data, iim->len);
	GRand *r = g_rand_new_with_seed(28);
	for (guint n = 0; n <= b->len; n++) {
		g_autoptr(PixMeta) m = pix_meta_new();
		g_autofree guint8 *copy = g_memdup2(b->data, n);
		pix_meta_read_irb(NULL, copy, n, m);
		g_autofree char *note = pix_meta_finish_tags(m);
	}
	for (guint k = 0; k < 20000; k++) {
		g_autofree guint8 *copy = g_memdup2(b->data, b->len);
		for (guint j = 0; j < 1 + k % 8; j++)
			copy[g_rand_int_range(r, 0, (gint32)b->len)] = (guint8)g_rand_int(r);
		g_autoptr(PixMeta) m = pix_meta_new();
		PixStream *s = pix_stream_new(0, 0);
		pix_meta_read_irb(s, copy, b->len, m);
		pix_meta_read_iptc(s, copy, b->len, m);
		g_autofree char *note = pix_meta_finish_tags(m);
		g_autofree char *problems = pix_stream_problems(s);
		g_assert_true(problems == NULL || g_utf8_validate(problems, -1, NULL));
		g_assert_true(m->tags == NULL || pix_tags_check(m->tags));
		pix_stream_free(s);
	}
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/iptc/fields", test_fields);
	g_test_add_func("/iptc/dates", test_dates);
	g_test_add_func("/iptc/charsets", test_charsets);
	g_test_add_func("/iptc/damage", test_damage);
	g_test_add_func("/iptc/resources", test_resources);
	g_test_add_func("/iptc/hostile", test_hostile);
	return g_test_run();
}
