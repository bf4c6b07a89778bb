/*
 * mkseeds.c: writes small hand-made seed files for the fuzz targets, for
 * formats and structures the shared samples and the fixture generator do
 * not cover (AVI, WebP variants, JPEG XL, MRW, RAF, PNG text chunks, CR3
 * boxes, QuickTime metadata, XMP sidecars, the photographer's XMP,
 * IPTC-IIM, ExtendedXMP parts).
 *
 * Usage: mkseeds OUTDIR [JPEG...]
 * writes OUTDIR/TARGET/NAME for each target, and OUTDIR/tiff/jpeg-exif-N.tif
 * with the EXIF TIFF block of each JPEG named (real IFDs for the tiff
 * target).
 *
 * The files are valid enough to lead a parser deep into its structure
 * (right lengths, offsets and nesting); the fuzzer mutates from there.
 * Output is deterministic.  Not built with the sanitizers: it only writes.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- a growable byte buffer --- */

typedef struct {
	uint8_t *p;
	size_t len, cap;
} Buf;

static void put(Buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL) {
			perror("mkseeds");
			exit(1);
		}
	}
	if (n > 0)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }
static void put8(Buf *b, unsigned v) { uint8_t c = (uint8_t)v; put(b, &c, 1); }
static void zeros(Buf *b, size_t n) { while (n-- > 0) put8(b, 0); }
static void be16(Buf *b, unsigned v) { put8(b, v >> 8); put8(b, v); }
static void be32(Buf *b, uint32_t v) { be16(b, v >> 16); be16(b, v & 0xffff); }
static void le16(Buf *b, unsigned v) { put8(b, v); put8(b, v >> 8); }
static void le32(Buf *b, uint32_t v) { le16(b, v & 0xffff); le16(b, v >> 16); }
static void set_be32(Buf *b, size_t at, uint32_t v)
{
	b->p[at] = v >> 24; b->p[at + 1] = v >> 16; b->p[at + 2] = v >> 8; b->p[at + 3] = v;
}
static void set_le32(Buf *b, size_t at, uint32_t v)
{
	b->p[at] = v; b->p[at + 1] = v >> 8; b->p[at + 2] = v >> 16; b->p[at + 3] = v >> 24;
}
static void cat(Buf *b, const Buf *o) { put(b, o->p, o->len); }
static void clear(Buf *b) { free(b->p); memset(b, 0, sizeof(*b)); }

static const char *outdir;

static void save(const char *target, const char *name, const Buf *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkseeds: cannot create '%s': %s\n", path, strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0) {
		fprintf(stderr, "mkseeds: cannot write '%s': %s\n", path, strerror(errno));
		exit(1);
	}
}

/* --- a TIFF block with the fields PixMeta holds --- */

typedef struct {
	uint16_t tag, type;
	uint32_t count;
	const void *value;      /* type-sized items in host order, or a string */
} Entry;

/* One IFD at `at` (little-endian); values that do not fit go after it.
 * Returns the offset after everything written.  `next` is the next IFD. */
static size_t ifd(Buf *b, size_t at, const Entry *e, unsigned n, uint32_t next)
{
	static const unsigned size[] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8 };
	size_t extra = at + 2 + 12 * n + 4;
	while (b->len < at)
		put8(b, 0);
	b->len = at;
	le16(b, n);
	Buf data = { 0 };
	for (unsigned i = 0; i < n; i++) {
		size_t bytes = size[e[i].type] * e[i].count;
		Buf v = { 0 };
		if (e[i].type == 2 || e[i].type == 7 || e[i].type == 1)
			put(&v, e[i].value, bytes);
		else if (e[i].type == 3)
			for (uint32_t k = 0; k < e[i].count; k++)
				le16(&v, ((const uint16_t *)e[i].value)[k]);
		else
			for (uint32_t k = 0; k < bytes / 4; k++)
				le32(&v, ((const uint32_t *)e[i].value)[k]);
		le16(b, e[i].tag);
		le16(b, e[i].type);
		le32(b, e[i].count);
		if (bytes <= 4) {
			put(b, v.p, v.len);
			zeros(b, 4 - bytes);
		} else {
			le32(b, (uint32_t)(extra + data.len));
			cat(&data, &v);
			if (data.len & 1)
				put8(&data, 0);
		}
		clear(&v);
	}
	le32(b, next);
	cat(b, &data);
	size_t end = b->len;
	clear(&data);
	return end;
}

/* A little-endian TIFF block: IFD0 (make, model, orientation, date), the
 * Exif IFD (dates with offset and sub-seconds, exposure, f-number, ISO,
 * focal length, lens, pixel size) and the GPS IFD. */
static void tiff_block(Buf *b)
{
	static const uint16_t orient = 6, iso = 400, one = 1;
	static const uint32_t expo[] = { 1, 250 }, fnum[] = { 28, 10 }, focal[] = { 50, 1 };
	static const uint32_t lat[] = { 48, 1, 51, 1, 2400, 100 }, lon[] = { 2, 1, 21, 1, 700, 100 };
	static const uint32_t alt[] = { 35, 1 }, width = 4000, height = 3000;
	static const uint8_t gpsver[] = { 2, 3, 0, 0 };
	uint32_t exif_at = 200, gps_at = 500;

	puts_(b, "II*");
	put8(b, 0);
	le32(b, 8);
	Entry ifd0[] = {
		{ 0x010f, 2, 6, "Canon" }, { 0x0110, 2, 10, "EOS 5D X" }, { 0x0112, 3, 1, &orient },
		{ 0x0132, 2, 20, "2021:06:01 12:00:00" }, { 0x8769, 4, 1, &exif_at }, { 0x8825, 4, 1, &gps_at },
	};
	ifd(b, 8, ifd0, 6, 0);
	Entry exif[] = {
		{ 0x829a, 5, 1, expo }, { 0x829d, 5, 1, fnum }, { 0x8827, 3, 1, &iso },
		{ 0x9003, 2, 20, "2021:06:01 11:59:58" }, { 0x9004, 2, 20, "2021:06:01 11:59:58" },
		{ 0x9011, 2, 7, "+02:00" }, { 0x9291, 2, 4, "123" }, { 0x920a, 5, 1, focal },
		{ 0xa002, 4, 1, &width }, { 0xa003, 4, 1, &height }, { 0xa434, 2, 12, "EF50mm f/2" },
	};
	ifd(b, exif_at, exif, 11, 0);
	Entry gps[] = {
		{ 0x0000, 1, 4, gpsver }, { 0x0001, 2, 2, "N" }, { 0x0002, 5, 3, lat }, { 0x0003, 2, 2, "E" },
		{ 0x0004, 5, 3, lon }, { 0x0005, 1, 1, &one }, { 0x0006, 5, 1, alt },
	};
	ifd(b, gps_at, gps, 7, 0);
}

/* --- JPEG --- */

/* A minimal baseline JPEG: APP1 Exif, APP1 XMP, SOF0 (w x h), SOS, a few
 * bytes of entropy data with a stuffed FF00 and a restart marker, EOI. */
static void jpeg(Buf *b, unsigned w, unsigned h, int with_xmp)
{
	Buf t = { 0 };
	tiff_block(&t);
	be16(b, 0xffd8);
	be16(b, 0xffe1);
	be16(b, (unsigned)(2 + 6 + t.len));
	put(b, "Exif\0\0", 6);
	cat(b, &t);
	if (with_xmp) {
		static const char ns[] = "http://ns.adobe.com/xap/1.0/";
		static const char x[] = "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF "
			"xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description "
			"xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmp:Rating='3'/></rdf:RDF></x:xmpmeta>";
		be16(b, 0xffe1);
		be16(b, (unsigned)(2 + sizeof(ns) + strlen(x)));
		put(b, ns, sizeof(ns));
		puts_(b, x);
	}
	static const uint8_t dqt[] = { 0xff, 0xdb, 0, 67, 0 };
	put(b, dqt, sizeof(dqt));
	for (int i = 0; i < 64; i++)
		put8(b, 1);
	be16(b, 0xffc0);
	be16(b, 11);
	put8(b, 8);
	be16(b, h);
	be16(b, w);
	put8(b, 1);
	put8(b, 1); put8(b, 0x11); put8(b, 0);
	be16(b, 0xffdd);
	be16(b, 4);
	be16(b, 1);
	be16(b, 0xffda);
	be16(b, 8);
	put8(b, 1); put8(b, 1); put8(b, 0); put8(b, 0); put8(b, 63); put8(b, 0);
	static const uint8_t scan[] = { 0x12, 0x34, 0xff, 0x00, 0x56, 0xff, 0xd0, 0x78, 0x9a };
	put(b, scan, sizeof(scan));
	be16(b, 0xffd9);
	clear(&t);
}

/* --- XMP --- */

static const char xmp_attrs[] =
	"<?xpacket begin='\xef\xbb\xbf' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
	"<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
	" <rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
	"  <rdf:Description rdf:about=''\n"
	"    xmlns:exif='http://ns.adobe.com/exif/1.0/'\n"
	"    xmlns:tiff='http://ns.adobe.com/tiff/1.0/'\n"
	"    xmlns:aux='http://ns.adobe.com/exif/1.0/aux/'\n"
	"    xmlns:exifEX='http://cipa.jp/exif/1.0/'\n"
	"    xmlns:xmp='http://ns.adobe.com/xap/1.0/'\n"
	"    xmlns:photoshop='http://ns.adobe.com/photoshop/1.0/'\n"
	"    tiff:Make='NIKON CORPORATION' tiff:Model='NIKON D850' tiff:Orientation='8'\n"
	"    exif:DateTimeOriginal='2020-02-29T23:59:59.250+05:30' exif:FNumber='28/10'\n"
	"    exif:ExposureTime='1/8000' exif:FocalLength='850/10' exif:PixelXDimension='8256'\n"
	"    exif:PixelYDimension='5504' exif:GPSLatitude='51,30.4512N' exif:GPSLongitude='0,7.5012W'\n"
	"    exif:GPSAltitude='120/1' exif:GPSAltitudeRef='1' aux:Lens='AF-S 24-70mm f/2.8E'\n"
	"    exifEX:LensModel='24-70' exifEX:PhotographicSensitivity='6400'\n"
	"    xmp:CreateDate='2020:02:29 23:59:59' photoshop:DateCreated='2020-02-29'/>\n"
	" </rdf:RDF>\n"
	"</x:xmpmeta>\n"
	"<?xpacket end='w'?>";

static const char xmp_elements[] =
	"<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"Adobe XMP Core 5.6\">\n"
	"<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
	"<rdf:Description rdf:about=\"\" xmlns:e=\"http://ns.adobe.com/exif/1.0/\"\n"
	"  xmlns:t=\"http://ns.adobe.com/tiff/1.0/\" xmlns:Iptc4xmpCore=\"http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/\">\n"
	" <t:Make>Canon</t:Make>\n"
	" <t:Model>Canon EOS R5</t:Model>\n"
	" <e:ISOSpeedRatings><rdf:Seq><rdf:li>100</rdf:li><rdf:li>200</rdf:li></rdf:Seq></e:ISOSpeedRatings>\n"
	" <e:DateTimeOriginal>2019-07-04T08:30:00Z</e:DateTimeOriginal>\n"
	" <e:GPSLatitude>40,26.767N</e:GPSLatitude>\n"
	" <e:GPSLongitude>79,58.933W</e:GPSLongitude>\n"
	" <e:FNumber rdf:parseType=\"Resource\"/>\n"
	" <Iptc4xmpCore:Location><rdf:Description e:GPSLatitude=\"1,1N\"/></Iptc4xmpCore:Location>\n"
	" <t:ImageDescription><rdf:Alt><rdf:li xml:lang=\"x-default\">caf&#xe9; &amp; &lt;tea&gt;</rdf:li></rdf:Alt></t:ImageDescription>\n"
	"</rdf:Description>\n"
	"</rdf:RDF>\n"
	"</x:xmpmeta>\n";

static void xmp_seeds(void)
{
	Buf b = { 0 };
	puts_(&b, xmp_attrs);
	save("xmp", "attrs.xmp", &b);
	clear(&b);
	puts_(&b, xmp_elements);
	save("xmp", "elements.xmp", &b);
	clear(&b);
	puts_(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	puts_(&b, xmp_elements);
	save("xmp", "decl.xmp", &b);
	clear(&b);
	puts_(&b, "<x:xapmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	          "<rdf:Description xmlns:exif='http://ns.adobe.com/exif/1.0/' exif:DateTimeOriginal='2001-01-01T00:00'"
	          " exif:GPSLatitude='10,0,30S' exif:GPSLongitude='20,5,0E'/></rdf:RDF></x:xapmeta>");
	save("xmp", "xap.xmp", &b);
	clear(&b);
}

/* --- the photographer's metadata: XMP with tags, IPTC-IIM, ExtendedXMP --- */

static const char xmp_tags[] =
	"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
	"<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/'"
	" xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmlns:lr='http://ns.adobe.com/lightroom/1.0/'"
	" xmlns:mwg-rs='http://www.metadataworkinggroup.com/schemas/regions/'"
	" xmlns:stArea='http://ns.adobe.com/xmp/sType/Area#' xmlns:stDim='http://ns.adobe.com/xap/1.0/sType/Dimensions#'"
	" xmlns:MP='http://ns.microsoft.com/photo/1.2/' xmlns:MPRI='http://ns.microsoft.com/photo/1.2/t/RegionInfo#'"
	" xmlns:MPReg='http://ns.microsoft.com/photo/1.2/t/Region#' xmp:Rating='4' xmp:Label='Red'>"
	"<dc:subject><rdf:Bag><rdf:li>Places</rdf:li><rdf:li>sunset</rdf:li></rdf:Bag></dc:subject>"
	"<lr:hierarchicalSubject><rdf:Bag><rdf:li>Places|Denmark|Aarhus</rdf:li></rdf:Bag></lr:hierarchicalSubject>"
	"<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>Title</rdf:li></rdf:Alt></dc:title>"
	"<mwg-rs:Regions rdf:parseType='Resource'><mwg-rs:AppliedToDimensions stDim:w='40' stDim:h='20' stDim:unit='pixel'/>"
	"<mwg-rs:RegionList><rdf:Bag><rdf:li><rdf:Description mwg-rs:Name='Ada' mwg-rs:Type='Face'>"
	"<mwg-rs:Area stArea:x='0.5' stArea:y='0.5' stArea:w='0.2' stArea:h='0.2' stArea:unit='normalized'/>"
	"</rdf:Description></rdf:li></rdf:Bag></mwg-rs:RegionList></mwg-rs:Regions>"
	"<MP:RegionInfo rdf:parseType='Resource'><MPRI:Regions><rdf:Bag><rdf:li MPReg:PersonDisplayName='Bob'"
	" MPReg:Rectangle='0.1, 0.1, 0.2, 0.2'/></rdf:Bag></MPRI:Regions></MP:RegionInfo>"
	"</rdf:Description></rdf:RDF></x:xmpmeta>";

static void iim_text(Buf *b, unsigned record, unsigned number, const char *s)
{
	put8(b, 0x1c);
	put8(b, record);
	put8(b, number);
	be16(b, (unsigned)strlen(s));
	puts_(b, s);
}

static void iim(Buf *b, int is_utf8)
{
	if (is_utf8)
		iim_text(b, 1, 90, "\x1b%G");
	iim_text(b, 2, 5, "Title");
	iim_text(b, 2, 25, "keyword");
	iim_text(b, 2, 25, is_utf8 ? "K\xc3\xb8benhavn" : "K\xf8benhavn");
	iim_text(b, 2, 55, "20050929");
	iim_text(b, 2, 60, "165100+0200");
	iim_text(b, 2, 80, "By-line");
	iim_text(b, 2, 90, "City");
	iim_text(b, 2, 101, "Country");
	iim_text(b, 2, 116, "Copyright");
	/* an extended dataset */
	put8(b, 0x1c); put8(b, 2); put8(b, 120); be16(b, 0x8002); be16(b, 7); puts_(b, "Caption");
}

static void tags_seeds(void)
{
	Buf b = { 0 };
	puts_(&b, xmp_tags);
	save("xmp", "tags.xmp", &b);
	clear(&b);
	iim(&b, 1);
	save("iptc", "utf8.iim", &b);
	clear(&b);
	iim(&b, 0);
	save("iptc", "latin.iim", &b);
	/* the same inside Photoshop resources, a named one before */
	Buf r = { 0 };
	puts_(&r, "8BIM"); be16(&r, 0x03ed); put8(&r, 4); puts_(&r, "name"); put8(&r, 0); be32(&r, 3); puts_(&r, "abc"); put8(&r, 0);
	puts_(&r, "8BIM"); be16(&r, 0x0404); put8(&r, 0); put8(&r, 0); be32(&r, (uint32_t)b.len); put(&r, b.p, b.len);
	if (b.len & 1)
		put8(&r, 0);
	save("iptc", "resources.irb", &r);
	clear(&r);
	clear(&b);
	/* ExtendedXMP: two parts out of order, each framed by its length */
	static const char guid[] = "0123456789ABCDEF0123456789ABCDEF";
	size_t n = strlen(xmp_tags), half = n / 2;
	for (int k = 1; k >= 0; k--) {
		size_t off = k == 0 ? 0 : half, len = k == 0 ? half : n - half;
		be16(&b, (unsigned)(32 + 8 + len));
		puts_(&b, guid);
		be32(&b, (uint32_t)n);
		be32(&b, (uint32_t)off);
		put(&b, xmp_tags + off, len);
	}
	save("xmpext", "two-parts.bin", &b);
	clear(&b);
}

/* --- PNG --- */

static uint32_t crc_table[256];

static uint32_t crc32(const uint8_t *p, size_t n)
{
	if (crc_table[1] == 0)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void chunk(Buf *b, const char *type, const void *data, size_t n)
{
	be32(b, (uint32_t)n);
	size_t at = b->len;
	put(b, type, 4);
	put(b, data, n);
	be32(b, crc32(b->p + at, n + 4));
}

/* zlib with stored (uncompressed) deflate blocks: valid, needs no zlib. */
static void zlib_stored(Buf *b, const uint8_t *p, size_t n)
{
	uint32_t a = 1, s = 0;
	put8(b, 0x78);
	put8(b, 0x01);
	size_t at = 0;
	do {
		size_t k = n - at > 65535 ? 65535 : n - at;
		put8(b, at + k == n);
		le16(b, (unsigned)k);
		le16(b, (unsigned)~k & 0xffff);
		put(b, p + at, k);
		at += k;
	} while (at < n);
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		s = (s + a) % 65521;
	}
	be32(b, s << 16 | a);
}

/* ImageMagick's "Raw profile type NAME": "\nNAME\n  LENGTH\nHEX...\n". */
static void raw_profile(Buf *b, const char *name, const Buf *data)
{
	char head[64];
	snprintf(head, sizeof(head), "\n%s\n%8zu\n", name, data->len);
	puts_(b, head);
	for (size_t i = 0; i < data->len; i++) {
		char hex[3];
		snprintf(hex, sizeof(hex), "%02x", data->p[i]);
		puts_(b, hex);
		if (i % 36 == 35)
			puts_(b, "\n");
	}
	puts_(b, "\n");
}

static void png_head(Buf *b, uint32_t w, uint32_t h)
{
	Buf ihdr = { 0 };
	put(b, "\x89PNG\r\n\x1a\n", 8);
	be32(&ihdr, w);
	be32(&ihdr, h);
	put8(&ihdr, 8); put8(&ihdr, 0); put8(&ihdr, 0); put8(&ihdr, 0); put8(&ihdr, 0);
	chunk(b, "IHDR", ihdr.p, ihdr.len);
	clear(&ihdr);
}

static void png_tail(Buf *b)
{
	Buf idat = { 0 };
	static const uint8_t row[] = { 0, 0x80 };
	zlib_stored(&idat, row, sizeof(row));
	chunk(b, "IDAT", idat.p, idat.len);
	chunk(b, "IEND", NULL, 0);
	clear(&idat);
}

static void png_seeds(void)
{
	Buf t = { 0 }, b = { 0 }, c = { 0 }, p = { 0 }, z = { 0 };
	tiff_block(&t);

	png_head(&b, 1, 1);
	chunk(&b, "eXIf", t.p, t.len);
	png_tail(&b);
	save("png", "exif.png", &b);
	clear(&b);

	png_head(&b, 2, 3);
	put(&c, "Exif\0\0", 6);
	cat(&c, &t);
	chunk(&b, "eXIf", c.p, c.len);
	clear(&c);
	png_tail(&b);
	save("png", "exif-header.png", &b);
	clear(&b);

	/* tEXt raw profile (EXIF, APP1 form), zTXt raw profile (XMP) */
	png_head(&b, 640, 480);
	puts_(&c, "Raw profile type exif");
	put8(&c, 0);
	put(&p, "Exif\0\0", 6);
	cat(&p, &t);
	raw_profile(&c, "exif", &p);
	chunk(&b, "tEXt", c.p, c.len);
	clear(&c);
	clear(&p);
	puts_(&c, "Raw profile type xmp");
	put8(&c, 0);
	put8(&c, 0);
	puts_(&p, xmp_attrs);
	raw_profile(&z, "xmp", &p);
	zlib_stored(&c, z.p, z.len);
	chunk(&b, "zTXt", c.p, c.len);
	clear(&c);
	clear(&p);
	clear(&z);
	puts_(&c, "Comment");
	put8(&c, 0);
	puts_(&c, "not metadata");
	chunk(&b, "tEXt", c.p, c.len);
	clear(&c);
	png_tail(&b);
	save("png", "raw-profiles.png", &b);
	clear(&b);

	/* iTXt XMP, plain and compressed; a zTXt "APP1" profile */
	png_head(&b, 100, 50);
	puts_(&c, "XML:com.adobe.xmp");
	put8(&c, 0); put8(&c, 0); put8(&c, 0); put8(&c, 0); put8(&c, 0);
	puts_(&c, xmp_elements);
	chunk(&b, "iTXt", c.p, c.len);
	clear(&c);
	puts_(&c, "XML:com.adobe.xmp");
	put8(&c, 0); put8(&c, 1); put8(&c, 0);
	puts_(&c, "en");
	put8(&c, 0);
	put8(&c, 0);
	zlib_stored(&c, (const uint8_t *)xmp_attrs, strlen(xmp_attrs));
	chunk(&b, "iTXt", c.p, c.len);
	clear(&c);
	puts_(&c, "Raw profile type APP1");
	put8(&c, 0);
	put8(&c, 0);
	put(&p, "Exif\0\0", 6);
	cat(&p, &t);
	raw_profile(&z, "APP1", &p);
	zlib_stored(&c, z.p, z.len);
	chunk(&b, "zTXt", c.p, c.len);
	clear(&c);
	clear(&p);
	clear(&z);
	png_tail(&b);
	save("png", "itxt.png", &b);
	clear(&b);
	clear(&t);
}

/* --- RIFF: WebP and AVI --- */

/* Starts a chunk (or a LIST/RIFF with `list` type); returns where its size
 * goes, for riff_end(). */
static size_t riff_begin(Buf *b, const char *id, const char *list)
{
	put(b, id, 4);
	size_t at = b->len;
	le32(b, 0);
	if (list != NULL)
		put(b, list, 4);
	return at;
}

static void riff_end(Buf *b, size_t at)
{
	set_le32(b, at, (uint32_t)(b->len - at - 4));
	if (b->len & 1)
		put8(b, 0);
}

static void riff_chunk(Buf *b, const char *id, const void *data, size_t n)
{
	size_t at = riff_begin(b, id, NULL);
	put(b, data, n);
	riff_end(b, at);
}

static void riff_seeds(void)
{
	Buf t = { 0 }, b = { 0 }, c = { 0 };
	tiff_block(&t);

	/* WebP extended: VP8X canvas, EXIF (with "Exif\0\0"), XMP, VP8 */
	size_t riff = riff_begin(&b, "RIFF", "WEBP");
	static const uint8_t vp8x[] = { 0x0c, 0, 0, 0, 0x1f, 0x03, 0, 0x57, 0x02, 0 };  /* 800x600 */
	riff_chunk(&b, "VP8X", vp8x, sizeof(vp8x));
	static const uint8_t vp8[] = { 0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x20, 0x03, 0x58, 0x02, 0, 0, 0, 0 };
	riff_chunk(&b, "VP8 ", vp8, sizeof(vp8));
	put(&c, "Exif\0\0", 6);
	cat(&c, &t);
	riff_chunk(&b, "EXIF", c.p, c.len);
	clear(&c);
	riff_chunk(&b, "XMP ", xmp_attrs, strlen(xmp_attrs));
	riff_end(&b, riff);
	save("riff", "extended.webp", &b);
	clear(&b);

	/* WebP lossy, bare EXIF */
	riff = riff_begin(&b, "RIFF", "WEBP");
	riff_chunk(&b, "VP8 ", vp8, sizeof(vp8));
	riff_chunk(&b, "EXIF", t.p, t.len);
	riff_end(&b, riff);
	save("riff", "lossy.webp", &b);
	clear(&b);

	/* WebP lossless: VP8L signature 0x2f, 14-bit width-1 and height-1 */
	riff = riff_begin(&b, "RIFF", "WEBP");
	static const uint8_t vp8l[] = { 0x2f, 0x3f, 0xc0, 0x1f, 0x00, 0x00, 0, 0 };
	riff_chunk(&b, "VP8L", vp8l, sizeof(vp8l));
	riff_end(&b, riff);
	save("riff", "lossless.webp", &b);
	clear(&b);

	/* AVI: hdrl (avih, a video and an audio strl), INFO, IDIT, movi, idx1 */
	riff = riff_begin(&b, "RIFF", "AVI ");
	size_t hdrl = riff_begin(&b, "LIST", "hdrl");
	le32(&c, 33367);        /* microseconds per frame */
	le32(&c, 0); le32(&c, 0); le32(&c, 0x10);
	le32(&c, 300);          /* frames */
	le32(&c, 0); le32(&c, 2); le32(&c, 0);
	le32(&c, 640); le32(&c, 480);
	zeros(&c, 16);
	riff_chunk(&b, "avih", c.p, c.len);
	clear(&c);
	size_t strl = riff_begin(&b, "LIST", "strl");
	put(&c, "vidsMJPG", 8);
	le32(&c, 0); le16(&c, 0); le16(&c, 0); le32(&c, 0);
	le32(&c, 1001);         /* scale */
	le32(&c, 30000);        /* rate */
	le32(&c, 0);
	le32(&c, 300);          /* length */
	le32(&c, 0); le32(&c, 0xffffffff); le32(&c, 0);
	le16(&c, 0); le16(&c, 0); le16(&c, 640); le16(&c, 480);
	riff_chunk(&b, "strh", c.p, c.len);
	clear(&c);
	le32(&c, 40); le32(&c, 640); le32(&c, (uint32_t)-480); le16(&c, 1); le16(&c, 24);
	put(&c, "MJPG", 4);
	zeros(&c, 20);
	riff_chunk(&b, "strf", c.p, c.len);
	clear(&c);
	riff_end(&b, strl);
	strl = riff_begin(&b, "LIST", "strl");
	put(&c, "auds", 4);
	zeros(&c, 52);
	riff_chunk(&b, "strh", c.p, c.len);
	clear(&c);
	le16(&c, 1); le16(&c, 2); le32(&c, 44100); le32(&c, 176400); le16(&c, 4); le16(&c, 16);
	riff_chunk(&b, "strf", c.p, c.len);
	clear(&c);
	riff_end(&b, strl);
	riff_end(&b, hdrl);
	size_t info = riff_begin(&b, "LIST", "INFO");
	riff_chunk(&b, "ISFT", "Lavf58\0", 7);
	riff_end(&b, info);
	riff_chunk(&b, "IDIT", "SAT JAN 05 14:03:22 2008\n\0", 26);
	riff_chunk(&b, "JUNK", "\0\0\0\0", 4);
	size_t movi = riff_begin(&b, "LIST", "movi");
	riff_chunk(&b, "00dc", "\xff\xd8\xff\xd9", 4);
	riff_chunk(&b, "01wb", "\0\0\0\0", 4);
	riff_end(&b, movi);
	riff_chunk(&b, "idx1", "00dc\x10\0\0\0\x04\0\0\0\x04\0\0\0", 16);
	riff_end(&b, riff);
	save("riff", "video.avi", &b);
	/* an OpenDML continuation */
	riff = riff_begin(&b, "RIFF", "AVIX");
	movi = riff_begin(&b, "LIST", "movi");
	riff_chunk(&b, "00dc", "\xff\xd8\xff\xd9", 4);
	riff_end(&b, movi);
	riff_end(&b, riff);
	save("riff", "avix.avi", &b);
	clear(&b);
	clear(&t);
}

/* --- ISO base media: HEIF, MP4, QuickTime, CR3, JPEG XL --- */

static size_t box_begin(Buf *b, const char *type)
{
	size_t at = b->len;
	be32(b, 0);
	put(b, type, 4);
	return at;
}

static void box_end(Buf *b, size_t at)
{
	set_be32(b, at, (uint32_t)(b->len - at));
}

static void box(Buf *b, const char *type, const void *data, size_t n)
{
	size_t at = box_begin(b, type);
	put(b, data, n);
	box_end(b, at);
}

static void ftyp(Buf *b, const char *major, const char *compat)
{
	size_t at = box_begin(b, "ftyp");
	puts_(b, major);
	be32(b, 0);
	puts_(b, compat);
	box_end(b, at);
}

static void heif_seed(void)
{
	Buf b = { 0 }, t = { 0 };
	tiff_block(&t);
	ftyp(&b, "heic", "mif1heic");
	size_t meta = box_begin(&b, "meta");
	be32(&b, 0);
	box(&b, "hdlr", "\0\0\0\0\0\0\0\0pict\0\0\0\0\0\0\0\0\0\0\0\0\0", 25);
	box(&b, "pitm", "\0\0\0\0\0\x01", 6);
	size_t iinf = box_begin(&b, "iinf");
	be32(&b, 0);
	be16(&b, 3);
	box(&b, "infe", "\x02\0\0\0\0\x01\0\0hvc1\0", 13);
	box(&b, "infe", "\x02\0\0\0\0\x02\0\0Exif\0", 13);
	box(&b, "infe", "\x02\0\0\0\0\x03\0\0mime\0application/rdf+xml\0", 33);
	box_end(&b, iinf);
	size_t iloc = box_begin(&b, "iloc");
	put8(&b, 1); put8(&b, 0); put8(&b, 0); put8(&b, 0);  /* version 1 */
	put8(&b, 0x44);         /* offset size 4, length size 4 */
	put8(&b, 0x00);         /* base offset size 0, index size 0 */
	be16(&b, 3);
	size_t loc[3];
	for (int i = 0; i < 3; i++) {
		be16(&b, i + 1);
		be16(&b, 0);    /* construction method 0: file offset */
		be16(&b, 0);    /* data reference */
		be16(&b, 1);    /* extents */
		loc[i] = b.len;
		be32(&b, 0);
		be32(&b, 0);
	}
	box_end(&b, iloc);
	size_t iprp = box_begin(&b, "iprp");
	size_t ipco = box_begin(&b, "ipco");
	box(&b, "ispe", "\0\0\0\0\0\0\x0f\xc0\0\0\x0b\xd0", 12);      /* 4032x3024 */
	box(&b, "irot", "\x01", 1);
	box_end(&b, ipco);
	box(&b, "ipma", "\0\0\0\0\0\0\0\x01\0\x01\x02\x81\x02", 13);
	box_end(&b, iprp);
	box_end(&b, meta);
	size_t mdat = box_begin(&b, "mdat");
	set_be32(&b, loc[0], (uint32_t)b.len);
	set_be32(&b, loc[0] + 4, 4);
	put(&b, "\0\0\0\0", 4);
	set_be32(&b, loc[1], (uint32_t)b.len);
	set_be32(&b, loc[1] + 4, (uint32_t)(4 + 6 + t.len));
	be32(&b, 6);            /* offset of the TIFF header after this word */
	put(&b, "Exif\0\0", 6);
	cat(&b, &t);
	set_be32(&b, loc[2], (uint32_t)b.len);
	set_be32(&b, loc[2] + 4, (uint32_t)strlen(xmp_elements));
	puts_(&b, xmp_elements);
	box_end(&b, mdat);
	save("bmff", "image.heic", &b);
	clear(&b);
	clear(&t);
}

static void mvhd(Buf *b)
{
	Buf c = { 0 };
	be32(&c, 0);
	be32(&c, 3700000000u);  /* created, seconds since 1904 */
	be32(&c, 3700000000u);
	be32(&c, 600);          /* timescale */
	be32(&c, 6000);         /* duration */
	be32(&c, 0x10000); be16(&c, 0x100);
	zeros(&c, 10 + 36 + 24);
	be32(&c, 2);
	box(b, "mvhd", c.p, c.len);
	clear(&c);
}

static void trak(Buf *b, const char *handler)
{
	Buf c = { 0 };
	size_t tr = box_begin(b, "trak");
	be32(&c, 0); be32(&c, 0); be32(&c, 0); be32(&c, 1); be32(&c, 0); be32(&c, 6000);
	zeros(&c, 8 + 8 + 36);
	be32(&c, 1920 << 16);
	be32(&c, 1080 << 16);
	box(b, "tkhd", c.p, c.len);
	clear(&c);
	size_t mdia = box_begin(b, "mdia");
	be32(&c, 0); be32(&c, 0);
	puts_(&c, handler);
	zeros(&c, 12);
	puts_(&c, "Handler");
	put8(&c, 0);
	box(b, "hdlr", c.p, c.len);
	clear(&c);
	box(b, "minf", "", 0);
	box_end(b, mdia);
	box_end(b, tr);
}

static void video_seeds(void)
{
	Buf b = { 0 }, c = { 0 };

	/* MP4: ftyp, moov (mvhd, video and sound traks, udta with (c)xyz,
	 * (c)mak, (c)mod, QuickTime meta keys/ilst), mdat */
	ftyp(&b, "isom", "isomiso2avc1mp41");
	size_t moov = box_begin(&b, "moov");
	mvhd(&b);
	trak(&b, "soun");
	trak(&b, "vide");
	size_t udta = box_begin(&b, "udta");
	be16(&c, 17); be16(&c, 0x15c7);
	puts_(&c, "+48.8577+002.2950/");
	box(&b, "\xa9xyz", c.p, c.len);
	clear(&c);
	be16(&c, 5); be16(&c, 0x15c7);
	puts_(&c, "Apple");
	box(&b, "\xa9mak", c.p, c.len);
	clear(&c);
	be16(&c, 9); be16(&c, 0x15c7);
	puts_(&c, "iPhone 12");
	box(&b, "\xa9mod", c.p, c.len);
	clear(&c);
	box_end(&b, udta);
	size_t meta = box_begin(&b, "meta");
	box(&b, "hdlr", "\0\0\0\0\0\0\0\0mdta\0\0\0\0\0\0\0\0\0\0\0\0\0", 25);
	size_t keys = box_begin(&b, "keys");
	be32(&b, 0);
	be32(&b, 4);
	static const char *const key[] = {
		"com.apple.quicktime.location.ISO6709", "com.apple.quicktime.make",
		"com.apple.quicktime.model", "com.apple.quicktime.creationdate",
	};
	static const char *const val[] = {
		"+37.3349-122.0090+030.000/", "Apple", "iPhone 12 Pro", "2021-06-01T14:03:22+0200",
	};
	for (int i = 0; i < 4; i++) {
		be32(&b, (uint32_t)(8 + strlen(key[i])));
		puts_(&b, "mdta");
		puts_(&b, key[i]);
	}
	box_end(&b, keys);
	size_t ilst = box_begin(&b, "ilst");
	for (int i = 0; i < 4; i++) {
		be32(&b, (uint32_t)(8 + 16 + strlen(val[i])));
		be32(&b, i + 1);
		be32(&b, (uint32_t)(16 + strlen(val[i])));
		puts_(&b, "data");
		be32(&b, 1);
		be32(&b, 0);
		puts_(&b, val[i]);
	}
	box_end(&b, ilst);
	box_end(&b, meta);
	box_end(&b, moov);
	box(&b, "mdat", "\0\0\0\0\0\0\0\0", 8);
	save("bmff", "video.mp4", &b);
	clear(&b);

	/* QuickTime without ftyp, mdat first with a 64-bit size */
	be32(&b, 8);
	puts_(&b, "wide");
	be32(&b, 1);
	puts_(&b, "mdat");
	be32(&b, 0);
	be32(&b, 16 + 8);
	zeros(&b, 8);
	moov = box_begin(&b, "moov");
	mvhd(&b);
	trak(&b, "vide");
	box_end(&b, moov);
	save("bmff", "old.mov", &b);
	clear(&b);

	/* 3GP with a box running to the end of the file (size 0) */
	ftyp(&b, "3gp4", "3gp4isom");
	moov = box_begin(&b, "moov");
	mvhd(&b);
	box_end(&b, moov);
	be32(&b, 0);
	puts_(&b, "mdat");
	zeros(&b, 16);
	save("bmff", "to-end.3gp", &b);
	clear(&b);
}

static const uint8_t canon_uuid[16] = {
	0x85, 0xc0, 0xb6, 0x87, 0x82, 0x0f, 0x11, 0xe0, 0x81, 0x11, 0xf4, 0xce, 0x46, 0x2b, 0x6a, 0x48,
};

static void cr3_seed(void)
{
	Buf b = { 0 }, t = { 0 };
	tiff_block(&t);
	ftyp(&b, "crx ", "crx isom");
	size_t moov = box_begin(&b, "moov");
	size_t uuid = box_begin(&b, "uuid");
	put(&b, canon_uuid, 16);
	box(&b, "CNCV", "CanonCR3_001/00.09.00/00.00.00", 30);
	box(&b, "CMT1", t.p, t.len);
	/* the Exif and GPS directories as TIFF blocks of their own: the
	 * same block, read at other roles */
	box(&b, "CMT2", t.p, t.len);
	box(&b, "CMT3", "II*\0\x08\0\0\0\0\0\0\0\0\0", 14);
	box(&b, "CMT4", t.p, t.len);
	box_end(&b, uuid);
	mvhd(&b);
	trak(&b, "vide");
	box_end(&b, moov);
	box(&b, "mdat", "\0\0\0\0", 4);
	save("bmff", "raw.cr3", &b);
	clear(&b);
	clear(&t);
}

static void jxl_seeds(void)
{
	Buf b = { 0 }, t = { 0 };
	tiff_block(&t);

	/* bare codestream: FF 0A, SizeHeader: small (div8) 1 bit set,
	 * height (h/8-1) 5 bits, ratio 3 bits (0: width follows), width */
	static const uint8_t bare[] = { 0xff, 0x0a, 0xfa, 0x7f, 0x01, 0x90, 0x08, 0x06, 0x01, 0x00, 0x00 };
	put(&b, bare, sizeof(bare));
	save("bmff", "bare.jxl", &b);
	clear(&b);
	/* large size header: not small, 2-bit selector, 9..30 bits */
	static const uint8_t large[] = { 0xff, 0x0a, 0x00, 0x3c, 0x0e, 0x78, 0x1f, 0x00, 0x10, 0x00 };
	put(&b, large, sizeof(large));
	save("bmff", "large.jxl", &b);
	clear(&b);

	/* container: signature, ftyp jxl, jxll, Exif (4-byte offset, TIFF),
	 * xml, jxlp pieces of the codestream */
	box(&b, "JXL ", "\x0d\x0a\x87\x0a", 4);
	ftyp(&b, "jxl ", "jxl ");
	box(&b, "jxll", "\x05", 1);
	size_t exif = box_begin(&b, "Exif");
	be32(&b, 0);
	cat(&b, &t);
	box_end(&b, exif);
	box(&b, "xml ", xmp_attrs, strlen(xmp_attrs));
	size_t jxlp = box_begin(&b, "jxlp");
	be32(&b, 0);
	put(&b, bare, 6);
	box_end(&b, jxlp);
	jxlp = box_begin(&b, "jxlp");
	be32(&b, 0x80000001u);
	put(&b, bare + 6, sizeof(bare) - 6);
	box_end(&b, jxlp);
	save("bmff", "container.jxl", &b);
	clear(&b);

	box(&b, "JXL ", "\x0d\x0a\x87\x0a", 4);
	ftyp(&b, "jxl ", "jxl ");
	box(&b, "jxlc", bare, sizeof(bare));
	save("bmff", "jxlc.jxl", &b);
	clear(&b);
	clear(&t);
}

/* --- RAF and MRW --- */

static void raf_seed(void)
{
	Buf b = { 0 }, j = { 0 };
	jpeg(&j, 160, 120, 1);
	puts_(&b, "FUJIFILMCCD-RAW 0201FF383501");
	puts_(&b, "X-T3");                       /* the camera, 32 bytes at 28 */
	zeros(&b, 60 - b.len);
	puts_(&b, "0100");
	zeros(&b, 84 - b.len);
	/* 84: preview offset and length, 92: directory, 100: raw data */
	be32(&b, 148); be32(&b, (uint32_t)j.len);
	be32(&b, (uint32_t)(148 + j.len)); be32(&b, 16);
	be32(&b, (uint32_t)(148 + j.len + 16)); be32(&b, 64);
	zeros(&b, 148 - b.len);
	cat(&b, &j);
	be32(&b, 1); be16(&b, 0x100); be16(&b, 4); be16(&b, 3000); be16(&b, 4000);
	zeros(&b, 4);
	zeros(&b, 64);
	save("raf", "camera.raf", &b);
	clear(&b);
	clear(&j);
}

static void mrw_seed(void)
{
	Buf b = { 0 }, t = { 0 };
	tiff_block(&t);
	put(&b, "\0MRM", 4);
	be32(&b, 0);
	put(&b, "\0PRD", 4);
	be32(&b, 24);
	puts_(&b, "21810002");
	be16(&b, 1544); be16(&b, 2056);          /* sensor */
	be16(&b, 1536); be16(&b, 2048);          /* image */
	put8(&b, 12); put8(&b, 12); put8(&b, 0x59); put8(&b, 0);
	be16(&b, 0); be16(&b, 1);
	put(&b, "\0WBG", 4);
	be32(&b, 12);
	zeros(&b, 12);
	put(&b, "\0RIF", 4);
	be32(&b, 8);
	zeros(&b, 8);
	put(&b, "\0TTW", 4);
	be32(&b, (uint32_t)t.len);
	cat(&b, &t);
	put(&b, "\0PAD", 4);
	be32(&b, 4);
	zeros(&b, 4);
	set_be32(&b, 4, (uint32_t)(b.len - 8));
	zeros(&b, 32);                           /* the raw data */
	save("mrw", "camera.mrw", &b);
	clear(&b);
	clear(&t);
}

/* --- TIFF and JPEG --- */

static void tiff_jpeg_seeds(void)
{
	Buf b = { 0 };
	tiff_block(&b);
	save("tiff", "block.tif", &b);
	/* BigTIFF header with one empty IFD */
	clear(&b);
	static const uint8_t big[] = { 'I', 'I', 0x2b, 0, 8, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0,
	                               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	put(&b, big, sizeof(big));
	save("tiff", "big.tif", &b);
	clear(&b);
	jpeg(&b, 64, 48, 1);
	save("jpeg", "hand.jpg", &b);
	clear(&b);
}

/* --- TIFF blocks out of JPEG files (for the tiff target) --- */

/* Writes tiff/NAME of the first APP1 "Exif\0\0" payload of the JPEG at
 * `path` (its TIFF block); quietly nothing when there is none. */
static void exif_of(const char *path, unsigned n)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "mkseeds: cannot open '%s': %s\n", path, strerror(errno));
		exit(1);
	}
	Buf d = { 0 };
	uint8_t chunk_[65536];
	size_t got;
	while ((got = fread(chunk_, 1, sizeof(chunk_), f)) > 0)
		put(&d, chunk_, got);
	fclose(f);
	size_t i = 2;
	while (d.len >= 4 && d.p[0] == 0xff && d.p[1] == 0xd8 && i + 4 <= d.len && d.p[i] == 0xff) {
		unsigned m = d.p[i + 1];
		size_t seg = (size_t)d.p[i + 2] << 8 | d.p[i + 3];
		if (m == 0xda || m == 0xd9 || seg < 2 || i + 2 + seg > d.len)
			break;
		if (m == 0xe1 && seg >= 8 && memcmp(d.p + i + 4, "Exif\0\0", 6) == 0) {
			char name[64];
			Buf t = { 0 };
			put(&t, d.p + i + 10, seg - 8);
			snprintf(name, sizeof(name), "jpeg-exif-%03u.tif", n);
			save("tiff", name, &t);
			clear(&t);
			break;
		}
		i += 2 + seg;
	}
	clear(&d);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mkseeds OUTDIR [JPEG...]\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkseeds: cannot create '%s': %s\n", outdir, strerror(errno));
		return 1;
	}
	xmp_seeds();
	tags_seeds();
	png_seeds();
	riff_seeds();
	heif_seed();
	video_seeds();
	cr3_seed();
	jxl_seeds();
	raf_seed();
	mrw_seed();
	tiff_jpeg_seeds();
	for (int i = 2; i < argc; i++)
		exif_of(argv[i], (unsigned)i - 1);
	return 0;
}
