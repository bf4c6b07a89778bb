/*
 * mkfixture.c - write small, valid JPEG and TIFF test fixtures with EXIF data
 *
 * photoidx tests and benchmarks use this instead of third-party sample files:
 * every metadata value comes from the command line, so a test can check that
 * the indexer reads back exactly what was written.  Output is deterministic:
 * the same arguments always give byte-identical files.
 *
 * Build:  gcc -std=gnu11 -O2 -Wall -Wextra -o mkfixture mkfixture.c -lm
 *
 * Usage:  mkfixture jpeg OUT [options]
 *         mkfixture tiff OUT [options]
 *         mkfixture mpf OUT IMAGE.jpg PREVIEW.jpg
 *         mkfixture raw OUT PREVIEW.jpg [raw options]
 *
 * "mpf" wraps two JPEGs as a camera does: IMAGE gets an APP2 "MPF"
 * segment (CIPA DC-007) right after its SOI whose index names IMAGE as
 * the baseline primary and PREVIEW, appended after IMAGE's EOI, as a
 * "Large Thumbnail (VGA equivalent)" (--class fullhd: "Full-HD").
 * "raw" writes a TIFF-based RAW file as NEF and ARW lay them out: IFD0
 * (Make, Model, Orientation, a JPEGInterchangeFormat/Length pair naming
 * PREVIEW) and a SubIFD holding --raw-bytes (default 65536) of CFA data
 * (Photometric 32803, Nikon's compression 34713) of --width x --height;
 * the directories come first, then PREVIEW, then the CFA data, unless
 * --preview-first puts PREVIEW right after the header and the
 * directories after the CFA data, as some writers do.
 *
 * OUT may be "-" for stdout.  Exit status: 0 success, 2 bad arguments (one-line
 * usage message on stderr), 1 I/O error (the message names the file).
 * "mkfixture --help" prints the option list (see usage_text below).
 *
 * A metadata tag is written only when its option is given.  Structural tags
 * that the TIFF/Exif specifications require are always written: for JPEG,
 * IFD0 X/YResolution, ResolutionUnit and YCbCrPositioning; for TIFF the
 * baseline image tags; and whenever an Exif IFD exists, ExifVersion,
 * FlashpixVersion, ColorSpace (and ComponentsConfiguration for JPEG).
 * A TIFF's GPS IFD also gets GPSProcessingMethod "GPS", which exiftool
 * -validate insists on for TIFF.  The Exif IFD exists only if one of its tags
 * was asked for, the GPS IFD only with --gps.
 *
 * Known exiftool -validate findings that are by design: a JPEG with an Exif
 * IFD but no --exif-size lacks the PixelX/YDimension tags Exif requires (tests
 * need their absence too); --exif-size on a TIFF writes tags Exif reserves for
 * compressed files (minor); --app-before segments are unknown APPn (minor).
 *
 * The JPEG is an 8-bit baseline grayscale image (one component, 8x8 MCUs)
 * coded with the ITU T.81 Annex K example quantisation and Huffman tables.
 * Without --size every block is flat mid-gray; with --size, blocks carry
 * pseudo-random DC and AC coefficients so that the file reaches the requested
 * length with real entropy-coded data.  The TIFF is uncompressed 8-bit gray in
 * one strip, stored right after the 8-byte header, followed by the IFDs.
 *
 * --size fails with status 2 if the given --width/--height cannot hold that
 * many bytes (about 80 bytes per 8x8 block at most); a --size smaller than
 * the file needs is simply exceeded.  --truncate beyond the end writes the
 * whole file.
 */

#define _GNU_SOURCE   /* strptime, timegm */
#include <time.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_line[] =
    "usage: mkfixture jpeg|tiff OUT [options] | mpf OUT IMAGE PREVIEW | raw OUT PREVIEW [options] (mkfixture --help lists them)";

static const char usage_text[] =
    "usage: mkfixture jpeg OUT [options]\n"
    "       mkfixture tiff OUT [options]\n"
    "       mkfixture mpf OUT IMAGE.jpg PREVIEW.jpg [--class vga|fullhd]\n"
    "       mkfixture raw OUT PREVIEW.jpg [--make S] [--model S] [--orientation N]\n"
    "                 [--width W --height H] [--raw-bytes N] [--preview-first]\n"
    "OUT may be '-' for stdout.\n"
    "\n"
    "image:\n"
    "  --width W --height H     real pixel size (SOF0 / ImageWidth+ImageLength),\n"
    "                           1..65500 (jpeg) or 1..65535 (tiff), default 16x16\n"
    "  --big-endian             TIFF structure in \"MM\" order (default \"II\")\n"
    "  --seed N                 seed for the JPEG noise blocks (default 1)\n"
    "  --truncate N             write only the first N bytes of the file\n"
    "  --count N                write N files; OUT is a printf pattern with one\n"
    "                           integer conversion (\"IMG_%05d.jpg\"), numbered\n"
    "                           from 1. With --date, the file is built once and\n"
    "                           file i gets the date plus i-1 seconds (fast);\n"
    "                           without, file i is built with seed + i - 1\n"
    "metadata (each tag is written only if its option is given):\n"
    "  --exif-size W,H          Exif PixelXDimension/PixelYDimension (LONG)\n"
    "  --make S  --model S      IFD0 Make / Model\n"
    "  --software S             IFD0 Software\n"
    "  --modify-date D          IFD0 DateTime (\"YYYY:MM:DD HH:MM:SS\")\n"
    "  --orientation N          IFD0 Orientation (SHORT)\n"
    "  --lens S                 Exif LensModel\n"
    "  --date D                 Exif DateTimeOriginal and DateTimeDigitized\n"
    "  --offset Z               Exif OffsetTimeOriginal (\"+02:00\")\n"
    "  --subsec S               Exif SubSecTimeOriginal (\"123\")\n"
    "  --exposure N/D           Exif ExposureTime (RATIONAL; \"N\" means N/1)\n"
    "  --fnumber N/D            Exif FNumber (RATIONAL)\n"
    "  --focal N/D              Exif FocalLength (RATIONAL)\n"
    "  --iso N                  Exif ISO (SHORT)\n"
    "  --gps LAT,LON[,ALT]      GPS IFD from signed decimal degrees / metres\n"
    "  --gps-time H,M,S[,DATE]  with --gps: GPSTimeStamp (3 RATIONALs, S may be\n"
    "                           N/D) and GPSDateStamp \"YYYY:MM:DD\"\n"
    "  --gps-direction N/D[,R]  with --gps: GPSImgDirection, GPSImgDirectionRef R\n"
    "  --description S          IFD0 ImageDescription\n"
    "  --aperture N/D           Exif ApertureValue (RATIONAL, APEX)\n"
    "  --exposure-program N     Exif ExposureProgram (SHORT)\n"
    "  --metering N             Exif MeteringMode (SHORT)\n"
    "  --flash N                Exif Flash (SHORT)\n"
    "jpeg only:\n"
    "  --no-exif                no APP1 Exif segment (metadata options ignored)\n"
    "  --app-before N           N dummy APPn segments before the Exif APP1\n"
    "  --thumbnail              IFD1 with an embedded 160x120 JPEG thumbnail\n"
    "  --xmp                    APP1 XMP packet after the Exif APP1\n"
    "  --size BYTES             grow the file to ~BYTES (within 1%) with noise;\n"
    "                           picks a 4:3 size unless --width/--height given\n"
    "tiff only:\n"
    "  --pad-before-ifd BYTES   BYTES of filler between pixel data and IFD0\n"
    "  --pad-after-ifd BYTES    BYTES of filler after the IFDs and their values\n"
    "                           (with both > 256 KiB the directories lie in the\n"
    "                           middle of the file, far from either end)\n"
    "  --ifd-first              the IFDs and their values first, then the pixel\n"
    "                           data (as cameras write; the pads are ignored)\n";

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

static void die_usage(const char *fmt, ...)
{
    va_list ap;

    fputs("mkfixture: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; %s\n", usage_line);
    exit(2);
}

static void die_io(const char *name, int err)
{
    fprintf(stderr, "mkfixture: %s: %s\n", name, strerror(err));
    exit(1);
}

static void die_oom(void)
{
    fputs("mkfixture: out of memory\n", stderr);
    exit(1);
}

/* ------------------------------------------------------------------------ */
/* Growable byte buffer                                                      */

struct buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t extra)
{
    size_t want = b->len + extra;

    if (want < b->len)
        die_oom();
    if (want <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < want)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p)
        die_oom();
    b->p = p;
    b->cap = cap;
}

static void buf_put(struct buf *b, const void *data, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void buf_u8(struct buf *b, unsigned v)
{
    buf_reserve(b, 1);
    b->p[b->len++] = (unsigned char)v;
}

/* JPEG marker segment fields are always big-endian. */
static void buf_be16(struct buf *b, unsigned v)
{
    buf_u8(b, (v >> 8) & 0xff);
    buf_u8(b, v & 0xff);
}

static void buf_fill(struct buf *b, int c, size_t n)
{
    buf_reserve(b, n);
    memset(b->p + b->len, c, n);
    b->len += n;
}

/* ------------------------------------------------------------------------ */
/* PRNG: xorshift64*, seeded through splitmix64 so that small seeds differ   */
/* well and the state can never be zero.                                     */

struct prng {
    uint64_t s;
};

static void prng_seed(struct prng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    r->s = z ? z : 0x2545f4914f6cdd1dULL;
}

static uint64_t prng_next(struct prng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n) by multiply-shift, avoiding modulo bias worth caring about. */
static uint32_t prng_below(struct prng *r, uint32_t n)
{
    return (uint32_t)(((prng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

struct rational {
    uint32_t num, den;
};

struct options {
    int tiff;
    const char *out;
    uint32_t width, height;
    int have_width, have_height;
    int have_exif_size;
    uint32_t exif_w, exif_h;
    const char *make, *model, *lens, *software, *description;
    int have_gps_time, have_gps_direction;
    struct rational gps_hms[3], gps_direction;
    const char *gps_date, *gps_direction_ref;
    int have_aperture, have_program, have_metering, have_flash;
    struct rational aperture;
    uint32_t program, metering, flash;
    const char *date, *modify_date, *offset, *subsec;
    int have_exposure, have_fnumber, have_focal;
    struct rational exposure, fnumber, focal;
    int have_iso, have_orientation;
    uint32_t iso, orientation;
    int have_gps, have_alt;
    double lat, lon, alt;
    int big_endian, no_exif, thumbnail, xmp;
    uint32_t app_before;
    int have_size;
    uint64_t size;
    uint64_t seed;
    int have_truncate;
    uint64_t truncate;
    uint64_t count;
    int have_pad;
    uint64_t pad_before_ifd;
    uint64_t pad_after_ifd;
    int ifd_first;
};

#define JPEG_MAX_DIM 65500u

/* Parses a leading run of decimal digits; *end is left after it. */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno)
        return 0;
    *end = e;
    *out = v;
    return 1;
}

static uint64_t parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    const char *end;
    uint64_t v;

    if (!parse_digits(s, &end, &v) || *end || v < min || v > max)
        die_usage("bad value for %s: '%s' (want an integer %llu..%llu)", opt, s,
                  (unsigned long long)min, (unsigned long long)max);
    return v;
}

/* "W,H" with both parts in 0..UINT32_MAX. */
static void parse_pair(const char *opt, const char *s, uint32_t *a, uint32_t *b)
{
    const char *end;
    uint64_t x, y;

    if (!parse_digits(s, &end, &x) || *end != ',' || x > UINT32_MAX ||
        !parse_digits(end + 1, &end, &y) || *end || y > UINT32_MAX)
        die_usage("bad value for %s: '%s' (want W,H)", opt, s);
    *a = (uint32_t)x;
    *b = (uint32_t)y;
}

/* "N/D" or "N" (= N/1).  A zero denominator is accepted on purpose: tests
 * may want to see how the indexer copes with it. */
static struct rational parse_rational(const char *opt, const char *s)
{
    const char *end;
    uint64_t n, d = 1;

    if (!parse_digits(s, &end, &n) || n > UINT32_MAX)
        goto bad;
    if (*end == '/') {
        if (!parse_digits(end + 1, &end, &d) || d > UINT32_MAX)
            goto bad;
    }
    if (*end)
        goto bad;
    return (struct rational){ (uint32_t)n, (uint32_t)d };
bad:
    die_usage("bad value for %s: '%s' (want N/D)", opt, s);
    return (struct rational){ 0, 0 };
}

static double parse_double_part(const char *opt, const char *all, const char *s, char **end)
{
    errno = 0;
    double v = strtod(s, end);
    if (*end == s || errno || !isfinite(v))
        die_usage("bad value for %s: '%s' (want LAT,LON[,ALT])", opt, all);
    return v;
}

static void parse_gps(struct options *o, const char *opt, const char *s)
{
    char *end;

    o->lat = parse_double_part(opt, s, s, &end);
    if (*end != ',')
        die_usage("bad value for %s: '%s' (want LAT,LON[,ALT])", opt, s);
    o->lon = parse_double_part(opt, s, end + 1, &end);
    o->have_alt = 0;
    if (*end == ',') {
        o->alt = parse_double_part(opt, s, end + 1, &end);
        o->have_alt = 1;
    }
    if (*end)
        die_usage("bad value for %s: '%s' (want LAT,LON[,ALT])", opt, s);
    if (fabs(o->lat) > 90.0 || fabs(o->lon) > 180.0)
        die_usage("%s out of range: '%s'", opt, s);
    /* GPSAltitude is a RATIONAL with denominator 1000; keep the numerator in 32 bits. */
    if (o->have_alt && fabs(o->alt) >= 4294967.0)
        die_usage("%s altitude out of range: '%s'", opt, s);
    o->have_gps = 1;
}

/* Returns the option's value, from "--opt=value" or from the next argument. */
static const char *opt_value(int argc, char **argv, int *i, const char *arg, const char *name)
{
    size_t n = strlen(name);

    if (arg[n] == '=')
        return arg + n + 1;
    if (*i + 1 >= argc)
        die_usage("%s needs a value", name);
    return argv[++*i];
}

static int opt_is(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static void parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->width = o->height = 16;
    o->seed = 1;

    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        exit(0);
    }
    if (argc < 3)
        die_usage("missing arguments");
    if (!strcmp(argv[1], "tiff"))
        o->tiff = 1;
    else if (strcmp(argv[1], "jpeg"))
        die_usage("unknown format '%s'", argv[1]);
    o->out = argv[2];

    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];

#define VALUE(name) opt_value(argc, argv, &i, a, name)
        if (opt_is(a, "--width")) {
            o->width = (uint32_t)parse_uint("--width", VALUE("--width"), 1, 65535);
            o->have_width = 1;
        } else if (opt_is(a, "--height")) {
            o->height = (uint32_t)parse_uint("--height", VALUE("--height"), 1, 65535);
            o->have_height = 1;
        } else if (opt_is(a, "--exif-size")) {
            parse_pair("--exif-size", VALUE("--exif-size"), &o->exif_w, &o->exif_h);
            o->have_exif_size = 1;
        } else if (opt_is(a, "--make")) {
            o->make = VALUE("--make");
        } else if (opt_is(a, "--model")) {
            o->model = VALUE("--model");
        } else if (opt_is(a, "--description")) {
            o->description = VALUE("--description");
        } else if (opt_is(a, "--gps-time")) {
            /* "H,M,S[,YYYY:MM:DD]", split in place (argv lives as long as we do) */
            char *s = (char *)VALUE("--gps-time"), *parts[4] = { 0 };
            int n = 0;
            for (char *p = strtok(s, ","); p && n < 4; p = strtok(NULL, ","))
                parts[n++] = p;
            if (n < 3)
                die_usage("--gps-time: expected H,M,S[,YYYY:MM:DD]");
            for (int k = 0; k < 3; k++)
                o->gps_hms[k] = parse_rational("--gps-time", parts[k]);
            o->gps_date = parts[3];
            o->have_gps_time = 1;
        } else if (opt_is(a, "--gps-direction")) {
            char *s = (char *)VALUE("--gps-direction"), *ref = strchr(s, ',');
            if (ref)
                *ref++ = '\0';
            o->gps_direction = parse_rational("--gps-direction", s);
            o->gps_direction_ref = ref;
            o->have_gps_direction = 1;
        } else if (opt_is(a, "--aperture")) {
            o->aperture = parse_rational("--aperture", VALUE("--aperture"));
            o->have_aperture = 1;
        } else if (opt_is(a, "--exposure-program")) {
            o->program = (uint32_t)parse_uint("--exposure-program", VALUE("--exposure-program"), 0, 65535);
            o->have_program = 1;
        } else if (opt_is(a, "--metering")) {
            o->metering = (uint32_t)parse_uint("--metering", VALUE("--metering"), 0, 65535);
            o->have_metering = 1;
        } else if (opt_is(a, "--flash")) {
            o->flash = (uint32_t)parse_uint("--flash", VALUE("--flash"), 0, 65535);
            o->have_flash = 1;
        } else if (opt_is(a, "--lens")) {
            o->lens = VALUE("--lens");
        } else if (opt_is(a, "--software")) {
            o->software = VALUE("--software");
        } else if (opt_is(a, "--date")) {
            o->date = VALUE("--date");
        } else if (opt_is(a, "--modify-date")) {
            o->modify_date = VALUE("--modify-date");
        } else if (opt_is(a, "--offset")) {
            o->offset = VALUE("--offset");
        } else if (opt_is(a, "--subsec")) {
            o->subsec = VALUE("--subsec");
        } else if (opt_is(a, "--exposure")) {
            o->exposure = parse_rational("--exposure", VALUE("--exposure"));
            o->have_exposure = 1;
        } else if (opt_is(a, "--fnumber")) {
            o->fnumber = parse_rational("--fnumber", VALUE("--fnumber"));
            o->have_fnumber = 1;
        } else if (opt_is(a, "--focal")) {
            o->focal = parse_rational("--focal", VALUE("--focal"));
            o->have_focal = 1;
        } else if (opt_is(a, "--iso")) {
            o->iso = (uint32_t)parse_uint("--iso", VALUE("--iso"), 0, 65535);
            o->have_iso = 1;
        } else if (opt_is(a, "--orientation")) {
            o->orientation = (uint32_t)parse_uint("--orientation", VALUE("--orientation"), 0, 65535);
            o->have_orientation = 1;
        } else if (opt_is(a, "--gps")) {
            parse_gps(o, "--gps", VALUE("--gps"));
        } else if (!strcmp(a, "--big-endian")) {
            o->big_endian = 1;
        } else if (!strcmp(a, "--no-exif")) {
            o->no_exif = 1;
        } else if (opt_is(a, "--app-before")) {
            o->app_before = (uint32_t)parse_uint("--app-before", VALUE("--app-before"), 0, 1000);
        } else if (!strcmp(a, "--thumbnail")) {
            o->thumbnail = 1;
        } else if (!strcmp(a, "--xmp")) {
            o->xmp = 1;
        } else if (opt_is(a, "--size")) {
            o->size = parse_uint("--size", VALUE("--size"), 0, (uint64_t)1 << 40);
            o->have_size = 1;
        } else if (opt_is(a, "--seed")) {
            o->seed = parse_uint("--seed", VALUE("--seed"), 0, UINT64_MAX);
        } else if (opt_is(a, "--count")) {
            o->count = parse_uint("--count", VALUE("--count"), 1, 100000000);
        } else if (opt_is(a, "--truncate")) {
            o->truncate = parse_uint("--truncate", VALUE("--truncate"), 0, UINT64_MAX);
            o->have_truncate = 1;
        } else if (opt_is(a, "--pad-before-ifd")) {
            o->pad_before_ifd = parse_uint("--pad-before-ifd", VALUE("--pad-before-ifd"), 0,
                                           (uint64_t)1 << 31);
            o->have_pad = 1;
        } else if (opt_is(a, "--ifd-first")) {
            o->ifd_first = 1;
            o->have_pad = 1;
        } else if (opt_is(a, "--pad-after-ifd")) {
            o->pad_after_ifd = parse_uint("--pad-after-ifd", VALUE("--pad-after-ifd"), 0,
                                          (uint64_t)1 << 31);
            o->have_pad = 1;
        } else {
            die_usage("unknown option '%s'", a);
        }
#undef VALUE
    }

    if (o->tiff) {
        if (o->no_exif || o->app_before || o->thumbnail || o->xmp || o->have_size)
            die_usage("--no-exif, --app-before, --thumbnail, --xmp and --size are for jpeg only");
    } else {
        /* SOF allows 65535, but libjpeg refuses anything above 65500
         * (JPEG_MAX_DIMENSION) and every fixture must decode. */
        if (o->width > JPEG_MAX_DIM || o->height > JPEG_MAX_DIM)
            die_usage("jpeg --width/--height must be at most %u", JPEG_MAX_DIM);
        if (o->have_pad)
            die_usage("--pad-before-ifd, --pad-after-ifd and --ifd-first are for tiff only");
        if (o->thumbnail && o->no_exif)
            die_usage("--thumbnail needs the Exif segment, drop --no-exif");
    }
}

/* ------------------------------------------------------------------------ */
/* TIFF directory builder                                                    */
/*                                                                           */
/* Entries are collected per IFD in any order, then laid out in two passes: */
/* first every IFD's size is computed (it does not depend on offsets, since */
/* pointer tags are inline LONGs), which fixes all offsets; then pointer    */
/* tags are patched and the bytes are emitted in the chosen byte order.     */

enum {
    TT_BYTE = 1,
    TT_ASCII = 2,
    TT_SHORT = 3,
    TT_LONG = 4,
    TT_RATIONAL = 5,
    TT_UNDEFINED = 7
};

#define MAX_TAGS 32
#define MAX_NUMS 6

struct tag {
    uint16_t id, type;
    uint32_t count;
    const unsigned char *bytes;   /* ASCII / UNDEFINED payload, count bytes */
    uint32_t num[MAX_NUMS];       /* BYTE/SHORT/LONG values; RATIONAL num,den pairs */
};

struct ifd {
    struct tag tag[MAX_TAGS];
    int ntags;
    uint32_t offset;              /* from the start of the TIFF header */
    uint32_t next;                /* next IFD in the chain, 0 at the end */
};

static struct tag *ifd_add(struct ifd *d, uint16_t id, uint16_t type, uint32_t count)
{
    /* MAX_TAGS exceeds the most tags any IFD here can get, so this is a bug check. */
    if (d->ntags >= MAX_TAGS) {
        fputs("mkfixture: internal error: too many tags\n", stderr);
        abort();
    }
    struct tag *t = &d->tag[d->ntags++];
    memset(t, 0, sizeof *t);
    t->id = id;
    t->type = type;
    t->count = count;
    return t;
}

static void ifd_ascii(struct ifd *d, uint16_t id, const char *s)
{
    /* The count includes the terminating NUL, which is written from the C string. */
    ifd_add(d, id, TT_ASCII, (uint32_t)strlen(s) + 1)->bytes = (const unsigned char *)s;
}

static void ifd_undefined(struct ifd *d, uint16_t id, const unsigned char *p, uint32_t n)
{
    ifd_add(d, id, TT_UNDEFINED, n)->bytes = p;
}

static void ifd_short(struct ifd *d, uint16_t id, uint32_t v)
{
    ifd_add(d, id, TT_SHORT, 1)->num[0] = v;
}

static void ifd_long(struct ifd *d, uint16_t id, uint32_t v)
{
    ifd_add(d, id, TT_LONG, 1)->num[0] = v;
}

static void ifd_rational(struct ifd *d, uint16_t id, struct rational r)
{
    struct tag *t = ifd_add(d, id, TT_RATIONAL, 1);
    t->num[0] = r.num;
    t->num[1] = r.den;
}

static void ifd_set(struct ifd *d, uint16_t id, uint32_t v)
{
    for (int i = 0; i < d->ntags; i++)
        if (d->tag[i].id == id)
            d->tag[i].num[0] = v;
}

static uint64_t tag_value_size(const struct tag *t)
{
    static const unsigned type_size[] = { 0, 1, 1, 2, 4, 8, 1, 1 };
    return (uint64_t)t->count * type_size[t->type];
}

static uint64_t ifd_size(const struct ifd *d)
{
    uint64_t n = 2 + 12 * (uint64_t)d->ntags + 4;

    for (int i = 0; i < d->ntags; i++) {
        uint64_t s = tag_value_size(&d->tag[i]);
        /* Out-of-line values start on word boundaries, as TIFF 6.0 asks. */
        if (s > 4)
            n += (s + 1) & ~(uint64_t)1;
    }
    return n;
}

static void put16(unsigned char *p, uint32_t v, int big)
{
    if (big) {
        p[0] = (unsigned char)(v >> 8);
        p[1] = (unsigned char)v;
    } else {
        p[0] = (unsigned char)v;
        p[1] = (unsigned char)(v >> 8);
    }
}

static void put32(unsigned char *p, uint32_t v, int big)
{
    if (big) {
        put16(p, v >> 16, 1);
        put16(p + 2, v & 0xffff, 1);
    } else {
        put16(p, v & 0xffff, 0);
        put16(p + 2, v >> 16, 0);
    }
}

static void tag_write_value(unsigned char *p, const struct tag *t, int big)
{
    switch (t->type) {
    case TT_BYTE:
        for (uint32_t i = 0; i < t->count; i++)
            p[i] = (unsigned char)t->num[i];
        break;
    case TT_ASCII:
    case TT_UNDEFINED:
        memcpy(p, t->bytes, t->count);
        break;
    case TT_SHORT:
        for (uint32_t i = 0; i < t->count; i++)
            put16(p + 2 * i, t->num[i], big);
        break;
    case TT_LONG:
        for (uint32_t i = 0; i < t->count; i++)
            put32(p + 4 * i, t->num[i], big);
        break;
    case TT_RATIONAL:
        for (uint32_t i = 0; i < t->count; i++) {
            put32(p + 8 * i, t->num[2 * i], big);
            put32(p + 8 * i + 4, t->num[2 * i + 1], big);
        }
        break;
    }
}

static int tag_cmp(const void *a, const void *b)
{
    const struct tag *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Writes the IFD and its out-of-line values at base + d->offset.  base must
 * be zeroed so that unused inline bytes and alignment pads are 0. */
static void ifd_emit(unsigned char *base, struct ifd *d, int big)
{
    /* Readers may binary-search entries, and the spec requires ascending tags. */
    qsort(d->tag, (size_t)d->ntags, sizeof d->tag[0], tag_cmp);

    unsigned char *p = base + d->offset;
    uint32_t data = d->offset + 2 + 12 * (uint32_t)d->ntags + 4;

    put16(p, (uint32_t)d->ntags, big);
    p += 2;
    for (int i = 0; i < d->ntags; i++, p += 12) {
        const struct tag *t = &d->tag[i];
        uint32_t size = (uint32_t)tag_value_size(t);

        put16(p, t->id, big);
        put16(p + 2, t->type, big);
        put32(p + 4, t->count, big);
        if (size <= 4) {
            tag_write_value(p + 8, t, big);
        } else {
            put32(p + 8, data, big);
            tag_write_value(base + data, t, big);
            data += (size + 1) & ~1u;
        }
    }
    put32(p, d->next, big);
}

/* The directories of one TIFF structure, in the order they are stored. */
struct tiff_dirs {
    struct ifd ifd0, exif, gps, ifd1;
    int has_exif, has_gps, has_ifd1;
};

static const unsigned char exif_version[4] = { '0', '2', '3', '2' };
static const unsigned char flashpix_version[4] = { '0', '1', '0', '0' };
static const unsigned char components_ycbcr[4] = { 1, 2, 3, 0 };

/* GPS angles are stored as whole degrees, whole minutes and seconds with
 * this denominator (1e-6 arcsec, ~3e-10 degree), far inside the 1e-7 degree
 * round-trip the tests need. */
#define GPS_SEC_DEN 1000000u

static void gps_angle(struct ifd *gps, uint16_t id, double deg)
{
    /* Rounding once, in integer units of the last field, makes the carries
     * into minutes and degrees exact (no 60-second fields). */
    uint64_t units = (uint64_t)llround(fabs(deg) * 3600.0 * GPS_SEC_DEN);
    struct tag *t = ifd_add(gps, id, TT_RATIONAL, 3);

    t->num[0] = (uint32_t)(units / (3600ull * GPS_SEC_DEN));
    t->num[1] = 1;
    units %= 3600ull * GPS_SEC_DEN;
    t->num[2] = (uint32_t)(units / (60ull * GPS_SEC_DEN));
    t->num[3] = 1;
    t->num[4] = (uint32_t)(units % (60ull * GPS_SEC_DEN));
    t->num[5] = GPS_SEC_DEN;
}

/* GPSProcessingMethod: 8-byte character code, then the text (no NUL). */
static const unsigned char gps_method[11] = { 'A', 'S', 'C', 'I', 'I', 0, 0, 0, 'G', 'P', 'S' };

static void add_gps(const struct options *o, struct ifd *gps, int jpeg)
{
    struct tag *t = ifd_add(gps, 0x0000, TT_BYTE, 4);    /* GPSVersionID 2.3.0.0 */
    t->num[0] = 2;
    t->num[1] = 3;

    ifd_ascii(gps, 0x0001, o->lat < 0 ? "S" : "N");
    gps_angle(gps, 0x0002, o->lat);
    ifd_ascii(gps, 0x0003, o->lon < 0 ? "W" : "E");
    gps_angle(gps, 0x0004, o->lon);
    if (o->have_alt) {
        uint32_t mm = (uint32_t)llround(fabs(o->alt) * 1000.0);
        /* Below sea level only if something is left after rounding: no "-0". */
        ifd_add(gps, 0x0005, TT_BYTE, 1)->num[0] = o->alt < 0 && mm ? 1 : 0;
        ifd_rational(gps, 0x0006, (struct rational){ mm, 1000 });
    }
    if (o->have_gps_time) {
        struct tag *ts = ifd_add(gps, 0x0007, TT_RATIONAL, 3);
        for (int i = 0; i < 3; i++) {
            ts->num[2 * i] = o->gps_hms[i].num;
            ts->num[2 * i + 1] = o->gps_hms[i].den;
        }
    }
    if (o->have_gps_direction) {
        if (o->gps_direction_ref)
            ifd_ascii(gps, 0x0010, o->gps_direction_ref);
        ifd_rational(gps, 0x0011, o->gps_direction);
    }
    /* exiftool -validate treats this tag as mandatory in a TIFF's GPS IFD
     * (optional in JPEG), so TIFF fixtures carry it to validate cleanly. */
    if (!jpeg)
        ifd_undefined(gps, 0x001b, gps_method, sizeof gps_method);
    if (o->gps_date)
        ifd_ascii(gps, 0x001d, o->gps_date);
}

/* Adds the option-driven metadata shared by JPEG and TIFF output. */
static void add_metadata(const struct options *o, struct tiff_dirs *t, int jpeg)
{
    static const struct rational dpi72 = { 72, 1 };
    struct ifd *ifd0 = &t->ifd0, *exif = &t->exif;

    if (o->description)
        ifd_ascii(ifd0, 0x010e, o->description);
    if (o->make)
        ifd_ascii(ifd0, 0x010f, o->make);
    if (o->model)
        ifd_ascii(ifd0, 0x0110, o->model);
    if (o->have_orientation)
        ifd_short(ifd0, 0x0112, o->orientation);
    if (o->software)
        ifd_ascii(ifd0, 0x0131, o->software);
    if (o->modify_date)
        ifd_ascii(ifd0, 0x0132, o->modify_date);
    ifd_rational(ifd0, 0x011a, dpi72);
    ifd_rational(ifd0, 0x011b, dpi72);
    ifd_short(ifd0, 0x0128, 2);                         /* inches */
    if (jpeg)
        ifd_short(ifd0, 0x0213, 1);                     /* YCbCrPositioning centered */

    if (o->have_exposure)
        ifd_rational(exif, 0x829a, o->exposure);
    if (o->have_fnumber)
        ifd_rational(exif, 0x829d, o->fnumber);
    if (o->have_program)
        ifd_short(exif, 0x8822, o->program);
    if (o->have_iso)
        ifd_short(exif, 0x8827, o->iso);
    if (o->date) {
        ifd_ascii(exif, 0x9003, o->date);
        ifd_ascii(exif, 0x9004, o->date);
    }
    if (o->offset)
        ifd_ascii(exif, 0x9011, o->offset);
    if (o->have_aperture)
        ifd_rational(exif, 0x9202, o->aperture);
    if (o->have_metering)
        ifd_short(exif, 0x9207, o->metering);
    if (o->have_flash)
        ifd_short(exif, 0x9209, o->flash);
    if (o->have_focal)
        ifd_rational(exif, 0x920a, o->focal);
    if (o->subsec)
        ifd_ascii(exif, 0x9291, o->subsec);
    if (o->have_exif_size) {
        ifd_long(exif, 0xa002, o->exif_w);
        ifd_long(exif, 0xa003, o->exif_h);
    }
    if (o->lens)
        ifd_ascii(exif, 0xa434, o->lens);
    if (exif->ntags) {
        /* Exif 2.32 requires these in every Exif IFD; 2.32 because
         * OffsetTimeOriginal needs at least 2.31. */
        ifd_undefined(exif, 0x9000, exif_version, 4);
        if (jpeg)
            ifd_undefined(exif, 0x9101, components_ycbcr, 4);
        ifd_undefined(exif, 0xa000, flashpix_version, 4);
        ifd_short(exif, 0xa001, 1);                     /* sRGB */
        ifd_long(ifd0, 0x8769, 0);                      /* patched by tiff_layout */
        t->has_exif = 1;
    }

    if (o->have_gps) {
        add_gps(o, &t->gps, jpeg);
        ifd_long(ifd0, 0x8825, 0);                      /* patched by tiff_layout */
        t->has_gps = 1;
    }
}

/* Assigns offsets to the IFDs (in the order IFD0, Exif, GPS, IFD1) starting
 * at `at`, patches the pointers to them and returns the first free offset. */
static uint64_t tiff_layout(struct tiff_dirs *t, uint64_t at)
{
    struct ifd *order[4];
    int n = 0;

    order[n++] = &t->ifd0;
    if (t->has_exif)
        order[n++] = &t->exif;
    if (t->has_gps)
        order[n++] = &t->gps;
    if (t->has_ifd1)
        order[n++] = &t->ifd1;
    for (int i = 0; i < n; i++) {
        at = (at + 1) & ~(uint64_t)1;
        if (at > UINT32_MAX)
            die_usage("file would exceed 4 GiB");
        order[i]->offset = (uint32_t)at;
        order[i]->next = 0;
        at += ifd_size(order[i]);
    }
    if (at > UINT32_MAX)
        die_usage("file would exceed 4 GiB");
    if (t->has_exif)
        ifd_set(&t->ifd0, 0x8769, t->exif.offset);
    if (t->has_gps)
        ifd_set(&t->ifd0, 0x8825, t->gps.offset);
    if (t->has_ifd1)
        t->ifd0.next = t->ifd1.offset;
    return at;
}

static void tiff_emit(struct tiff_dirs *t, unsigned char *base, int big)
{
    base[0] = base[1] = big ? 'M' : 'I';
    put16(base + 2, 42, big);
    put32(base + 4, t->ifd0.offset, big);
    ifd_emit(base, &t->ifd0, big);
    if (t->has_exif)
        ifd_emit(base, &t->exif, big);
    if (t->has_gps)
        ifd_emit(base, &t->gps, big);
    if (t->has_ifd1)
        ifd_emit(base, &t->ifd1, big);
}

/* ------------------------------------------------------------------------ */
/* Baseline JPEG encoder (grayscale, Annex K tables)                        */

/* ITU T.81 Table K.1, natural (row-major) order. */
static const uint8_t std_luma_quant[64] = {
    16, 11, 10, 16, 24, 40, 51, 61,
    12, 12, 14, 19, 26, 58, 60, 55,
    14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62,
    18, 22, 37, 56, 68, 109, 103, 77,
    24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101,
    72, 92, 95, 98, 112, 100, 103, 99,
};

/* Zig-zag index -> natural index; DQT stores the table in zig-zag order. */
static const uint8_t zigzag_to_natural[64] = {
    0, 1, 8, 16, 9, 2, 3, 10,
    17, 24, 32, 25, 18, 11, 4, 5,
    12, 19, 26, 33, 40, 48, 41, 34,
    27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46,
    53, 60, 61, 54, 47, 55, 62, 63,
};

/* ITU T.81 Table K.3 (luminance DC) and K.5 (luminance AC). */
static const uint8_t dc_bits[16] = { 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
static const uint8_t dc_vals[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
static const uint8_t ac_bits[16] = { 0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d };
static const uint8_t ac_vals[162] = {
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12,
    0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
    0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
    0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
    0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16,
    0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
    0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39,
    0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
    0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
    0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
    0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
    0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98,
    0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
    0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
    0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
    0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
    0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
    0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
    0xf9, 0xfa,
};

struct huff {
    uint16_t code[256];
    uint8_t len[256];
};

/* Canonical code assignment of T.81 Annex C. */
static void huff_build(struct huff *h, const uint8_t bits[16], const uint8_t *vals)
{
    unsigned code = 0, k = 0;

    memset(h, 0, sizeof *h);
    for (unsigned len = 1; len <= 16; len++) {
        for (unsigned i = 0; i < bits[len - 1]; i++, k++) {
            h->code[vals[k]] = (uint16_t)code++;
            h->len[vals[k]] = (uint8_t)len;
        }
        code <<= 1;
    }
}

struct bitwriter {
    struct buf *b;
    uint32_t acc;
    int nbits;
};

/* len <= 16; at most 7 bits are pending, so acc never needs more than 23. */
static void bw_put(struct bitwriter *w, uint32_t bits, int len)
{
    w->acc = (w->acc << len) | (bits & ((1u << len) - 1));
    w->nbits += len;
    while (w->nbits >= 8) {
        unsigned byte = (w->acc >> (w->nbits - 8)) & 0xff;
        buf_u8(w->b, byte);
        /* A 0xFF in entropy-coded data must be stuffed or it reads as a marker. */
        if (byte == 0xff)
            buf_u8(w->b, 0);
        w->nbits -= 8;
    }
}

/* T.81 F.1.2.3: the final byte is padded with 1-bits. */
static void bw_flush(struct bitwriter *w)
{
    if (w->nbits > 0)
        bw_put(w, 0x7f, 8 - w->nbits);
}

/* Magnitude category (SSSS) of a coefficient value. */
static int category(int v)
{
    unsigned a = (unsigned)(v < 0 ? -v : v);

    return a ? 32 - __builtin_clz(a) : 0;
}

/* Writes the SSSS extra bits: v itself if positive, else v - 1 in one's complement form. */
static void put_value_bits(struct bitwriter *w, int v, int s)
{
    if (s)
        bw_put(w, (uint32_t)(v < 0 ? v + (1 << s) - 1 : v), s);
}

struct jpeg_coder {
    struct huff dc, ac;
    struct bitwriter bw;
    int pred;                     /* DC predictor */
};

static void encode_dc(struct jpeg_coder *c, int value)
{
    int diff = value - c->pred;
    int s = category(diff);

    c->pred = value;
    bw_put(&c->bw, c->dc.code[s], c->dc.len[s]);
    put_value_bits(&c->bw, diff, s);
}

static void encode_flat_block(struct jpeg_coder *c)
{
    encode_dc(c, c->pred);
    bw_put(&c->bw, c->ac.code[0x00], c->ac.len[0x00]);    /* EOB */
}

/* The AC part of a noise block: k nonzero coefficients of magnitude category
 * 1..smax, placed in the lower-frequency part of the zig-zag sequence as in
 * real photos. */
static void encode_noise_ac(struct jpeg_coder *c, struct prng *r, int k, int smax)
{
    int coef[64] = { 0 };
    uint8_t pool[63];
    int span = k * 2 < 63 ? k * 2 : 63;

    /* Partial Fisher-Yates: k distinct positions among 1..span. */
    for (int i = 0; i < span; i++)
        pool[i] = (uint8_t)(i + 1);
    for (int i = 0; i < k; i++) {
        int j = i + (int)prng_below(r, (uint32_t)(span - i));
        uint8_t tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
        int s = 1 + (int)prng_below(r, (uint32_t)smax);
        int mag = (1 << (s - 1)) + (int)prng_below(r, 1u << (s - 1));
        coef[pool[i]] = (prng_next(r) >> 63) ? -mag : mag;
    }

    int run = 0;
    for (int pos = 1; pos < 64; pos++) {
        if (!coef[pos]) {
            run++;
            continue;
        }
        for (; run > 15; run -= 16)
            bw_put(&c->bw, c->ac.code[0xf0], c->ac.len[0xf0]);   /* ZRL */
        int s = category(coef[pos]);
        int sym = (run << 4) | s;
        bw_put(&c->bw, c->ac.code[sym], c->ac.len[sym]);
        put_value_bits(&c->bw, coef[pos], s);
        run = 0;
    }
    if (run)
        bw_put(&c->bw, c->ac.code[0x00], c->ac.len[0x00]);       /* EOB */
}

static uint64_t bits_written(const struct jpeg_coder *c, size_t start)
{
    return (uint64_t)(c->bw.b->len - start) * 8 + (uint64_t)c->bw.nbits;
}

/* Magnitude categories go from 1..AC_SMIN up to 1..AC_SMAX when the image is
 * small for the requested --size. */
#define AC_SMIN 6
#define AC_SMAX 10

/* Writes the entropy-coded data of a w x h one-component image.  With
 * target_bytes == 0 all blocks are flat.  Otherwise each block gets as many
 * AC coefficients as the bits still missing per remaining block call for,
 * so the output converges on target_bytes (within about one block).  The
 * cost of a coefficient is measured as we go rather than guessed, because
 * it depends on run lengths, magnitudes and byte stuffing. */
static void encode_scan(struct buf *b, uint32_t w, uint32_t h, uint64_t target_bytes,
                        struct prng *r)
{
    struct jpeg_coder c;
    uint64_t blocks = (uint64_t)((w + 7) / 8) * ((h + 7) / 8);
    size_t start = b->len;
    uint64_t target_bits = target_bytes * 8;
    /* Measured AC bits and coefficient counts per smax, seeded with a prior
     * of 64 coefficients at 10 bits so early estimates are sane. */
    uint64_t cost_bits[AC_SMAX + 1], cost_coefs[AC_SMAX + 1];

    for (int s = 0; s <= AC_SMAX; s++) {
        cost_bits[s] = 640;
        cost_coefs[s] = 64;
    }
    /* One allocation up front instead of repeated doubling of a 5 MB buffer. */
    buf_reserve(b, (size_t)(target_bytes ? target_bytes : blocks) + 64);
    huff_build(&c.dc, dc_bits, dc_vals);
    huff_build(&c.ac, ac_bits, ac_vals);
    c.bw = (struct bitwriter){ b, 0, 0 };
    c.pred = 0;

    for (uint64_t i = 0; i < blocks; i++) {
        uint64_t done = bits_written(&c, start);
        uint64_t per = done < target_bits ? (target_bits - done) / (blocks - i) : 0;

        /* A flat block costs 6 bits; below ~16 there is nothing to spend. */
        if (!target_bytes || per < 16) {
            encode_flat_block(&c);
            continue;
        }
        /* With DC quantiser 16, levels -64..63 span the full sample range. */
        encode_dc(&c, (int)prng_below(r, 128) - 64);
        uint64_t want = bits_written(&c, start) - done;
        want = per > want + 4 ? per - want - 4 : 0;   /* 4: a possible EOB */

        /* Prefer more coefficients to bigger ones: raise the magnitude range
         * only while the needed mean count would not stay well below 63. */
        int smax = AC_SMIN;
        uint64_t mean;
        for (;;) {
            mean = want * cost_coefs[smax] / cost_bits[smax];
            if (mean <= 40 || smax == AC_SMAX)
                break;
            smax++;
        }
        if (mean > 63)
            mean = 63;
        uint32_t k = prng_below(r, (uint32_t)(2 * mean + 1));
        if (k > 63)
            k = 63;

        uint64_t before = bits_written(&c, start);
        encode_noise_ac(&c, r, (int)k, smax);
        cost_bits[smax] += bits_written(&c, start) - before;
        cost_coefs[smax] += k;
    }
    bw_flush(&c.bw);
}

/* Starts a marker segment and returns the position of its length field. */
static size_t seg_begin(struct buf *b, unsigned marker)
{
    buf_u8(b, 0xff);
    buf_u8(b, marker);
    size_t at = b->len;
    buf_be16(b, 0);
    return at;
}

static void seg_end(struct buf *b, size_t at)
{
    size_t len = b->len - at;

    if (len > 0xffff)
        die_usage("metadata too large for one JPEG segment (%zu bytes)", len);
    b->p[at] = (unsigned char)(len >> 8);
    b->p[at + 1] = (unsigned char)len;
}

/* DQT, SOF0, DHT and SOS header: everything between the APPn segments and
 * the entropy-coded data. */
static void put_frame_headers(struct buf *b, uint32_t w, uint32_t h)
{
    size_t at = seg_begin(b, 0xdb);                 /* DQT */
    buf_u8(b, 0x00);                                /* 8-bit, table 0 */
    for (int i = 0; i < 64; i++)
        buf_u8(b, std_luma_quant[zigzag_to_natural[i]]);
    seg_end(b, at);

    at = seg_begin(b, 0xc0);                        /* SOF0 */
    buf_u8(b, 8);
    buf_be16(b, h);
    buf_be16(b, w);
    buf_u8(b, 1);                                   /* one component */
    buf_u8(b, 1);                                   /* id */
    buf_u8(b, 0x11);                                /* 1x1 sampling */
    buf_u8(b, 0);                                   /* quant table 0 */
    seg_end(b, at);

    at = seg_begin(b, 0xc4);                        /* DHT */
    buf_u8(b, 0x00);                                /* DC table 0 */
    buf_put(b, dc_bits, sizeof dc_bits);
    buf_put(b, dc_vals, sizeof dc_vals);
    buf_u8(b, 0x10);                                /* AC table 0 */
    buf_put(b, ac_bits, sizeof ac_bits);
    buf_put(b, ac_vals, sizeof ac_vals);
    seg_end(b, at);

    at = seg_begin(b, 0xda);                        /* SOS */
    buf_u8(b, 1);
    buf_u8(b, 1);                                   /* component 1 */
    buf_u8(b, 0x00);                                /* DC 0 / AC 0 */
    buf_u8(b, 0);                                   /* Ss */
    buf_u8(b, 63);                                  /* Se */
    buf_u8(b, 0);                                   /* Ah/Al */
    seg_end(b, at);
}

/* The thumbnail is a bare SOI..EOI stream without APPn, like camera thumbnails. */
#define THUMB_W 160
#define THUMB_H 120

static void build_thumbnail(struct buf *b)
{
    buf_be16(b, 0xffd8);
    put_frame_headers(b, THUMB_W, THUMB_H);
    encode_scan(b, THUMB_W, THUMB_H, 0, NULL);
    buf_be16(b, 0xffd9);
}

static void put_app1_exif(struct buf *b, const struct options *o)
{
    static const struct rational dpi72 = { 72, 1 };
    struct tiff_dirs *t = calloc(1, sizeof *t);
    struct buf thumb = { 0 };

    if (!t)
        die_oom();
    add_metadata(o, t, 1);
    if (o->thumbnail) {
        build_thumbnail(&thumb);
        ifd_short(&t->ifd1, 0x0103, 6);             /* JPEG compression */
        ifd_rational(&t->ifd1, 0x011a, dpi72);
        ifd_rational(&t->ifd1, 0x011b, dpi72);
        ifd_short(&t->ifd1, 0x0128, 2);
        ifd_long(&t->ifd1, 0x0201, 0);              /* set below */
        ifd_long(&t->ifd1, 0x0202, (uint32_t)thumb.len);
        t->has_ifd1 = 1;
    }

    uint64_t end = tiff_layout(t, 8);
    uint64_t thumb_at = (end + 1) & ~(uint64_t)1;
    uint64_t total = thumb.len ? thumb_at + thumb.len : end;
    if (total > 0xffff - 2 - 6)
        die_usage("metadata too large for the APP1 Exif segment (%llu bytes)",
                  (unsigned long long)total);
    if (t->has_ifd1)
        ifd_set(&t->ifd1, 0x0201, (uint32_t)thumb_at);

    size_t at = seg_begin(b, 0xe1);
    buf_put(b, "Exif\0", 6);
    size_t base = b->len;
    buf_fill(b, 0, (size_t)total);
    tiff_emit(t, b->p + base, o->big_endian);
    if (thumb.len)
        memcpy(b->p + base + thumb_at, thumb.p, thumb.len);
    seg_end(b, at);

    free(thumb.p);
    free(t);
}

static void put_app0_jfif(struct buf *b)
{
    size_t at = seg_begin(b, 0xe0);
    buf_put(b, "JFIF", 5);                          /* with its NUL */
    buf_u8(b, 1);                                   /* version 1.01 */
    buf_u8(b, 1);
    buf_u8(b, 1);                                   /* dots per inch, as in IFD0 */
    buf_be16(b, 72);
    buf_be16(b, 72);
    buf_u8(b, 0);                                   /* no JFIF thumbnail */
    buf_u8(b, 0);
    seg_end(b, at);
}

/* Dummy APPn segments of 40 bytes each (length field included), cycling
 * through markers that carry no Exif, to trip readers that assume APP1
 * directly follows SOI/APP0.  The payload matches no known APPn signature. */
static void put_dummy_apps(struct buf *b, uint32_t n)
{
    static const uint8_t markers[] = { 0xe3, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xec, 0xef };

    for (uint32_t i = 0; i < n; i++) {
        unsigned m = markers[i % sizeof markers];
        char text[39];
        size_t at = seg_begin(b, m);

        memset(text, '.', sizeof text);
        int len = snprintf(text, sizeof text, "mkfixture filler APP%u #%u ", m - 0xe0, i);
        if (len >= 0 && (size_t)len < sizeof text)
            text[len] = '.';        /* replace snprintf's NUL with filler */
        buf_put(b, text, sizeof text - 1);
        seg_end(b, at);
    }
}

static void put_app1_xmp(struct buf *b)
{
    static const char ns[] = "http://ns.adobe.com/xap/1.0/";   /* sent with its NUL */
    static const char packet[] =
        "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"photoidx mkfixture\">\n"
        " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
        "  <rdf:Description rdf:about=\"\"\n"
        "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
        "   xmp:CreatorTool=\"photoidx mkfixture\"/>\n"
        " </rdf:RDF>\n"
        "</x:xmpmeta>\n"
        "<?xpacket end=\"w\"?>";
    size_t at = seg_begin(b, 0xe1);

    buf_put(b, ns, sizeof ns);
    buf_put(b, packet, sizeof packet - 1);
    seg_end(b, at);
}

/* Average bytes per 8x8 block when --size picks the dimensions: about what a
 * camera spends, so 5 MB gives a ~13-megapixel image. */
#define AUTO_BYTES_PER_BLOCK 24

static void build_jpeg(const struct options *o, struct buf *out)
{
    uint32_t w = o->width, h = o->height;
    struct prng r;
    int is_auto = o->have_size && !o->have_width && !o->have_height;
    uint64_t k = 1;

    if (is_auto) {
        /* 4:3 in multiples of 8: k*32 x k*24 pixels = 12*k*k blocks. */
        uint64_t blocks = o->size / AUTO_BYTES_PER_BLOCK + 1;
        while (12 * k * k < blocks)
            k++;
    }
again:
    if (is_auto) {
        if (k * 32 > JPEG_MAX_DIM)
            die_usage("--size too large for a baseline JPEG");
        w = (uint32_t)(k * 32);
        h = (uint32_t)(k * 24);
    }
    out->len = 0;
    prng_seed(&r, o->seed);

    buf_be16(out, 0xffd8);                          /* SOI */
    put_app0_jfif(out);
    put_dummy_apps(out, o->app_before);
    if (!o->no_exif)
        put_app1_exif(out, o);
    if (o->xmp)
        put_app1_xmp(out);
    put_frame_headers(out, w, h);

    uint64_t target = 0;
    if (o->have_size) {
        /* The rest of the file is the scan plus the 2-byte EOI. */
        uint64_t fixed = out->len + 2;
        target = o->size > fixed ? o->size - fixed : 0;
        /* Avoid 0, which would mean "flat", when only a few bytes are wanted. */
        if (!target)
            target = 1;
    }
    encode_scan(out, w, h, target, &r);
    buf_be16(out, 0xffd9);                          /* EOI */

    /* a small --size, where the headers are most of the file, can fall
     * short of the target in the picked size: one step larger then */
    if (is_auto && out->len < o->size - o->size / 100) {
        k++;
        goto again;
    }
    if (o->have_size && out->len < o->size - o->size / 100)
        die_usage("--size %llu does not fit in %ux%u pixels (got %zu bytes), "
                  "use a larger --width/--height", (unsigned long long)o->size, w, h, out->len);
}

/* ------------------------------------------------------------------------ */
/* TIFF file                                                                 */

static void build_tiff(const struct options *o, struct buf *out)
{
    struct tiff_dirs *t = calloc(1, sizeof *t);
    uint64_t pixels = (uint64_t)o->width * o->height;

    if (!t)
        die_oom();
    /* The strip sits right after the header so that --pad-before-ifd can
     * push the IFDs (not the pixels) past 64 KiB. */
    uint32_t strip_at = 8;
    ifd_long(&t->ifd0, 0x00fe, 0);                  /* NewSubfileType: full image */
    ifd_long(&t->ifd0, 0x0100, o->width);
    ifd_long(&t->ifd0, 0x0101, o->height);
    ifd_short(&t->ifd0, 0x0102, 8);
    ifd_short(&t->ifd0, 0x0103, 1);                 /* uncompressed */
    ifd_short(&t->ifd0, 0x0106, 1);                 /* BlackIsZero */
    ifd_long(&t->ifd0, 0x0111, strip_at);
    ifd_short(&t->ifd0, 0x0115, 1);
    ifd_long(&t->ifd0, 0x0116, o->height);          /* one strip */
    ifd_long(&t->ifd0, 0x0117, (uint32_t)pixels);
    add_metadata(o, t, 0);

    uint64_t total;
    if (o->ifd_first) {
        /* the directories' size does not depend on the strip's offset */
        uint64_t dirs_end = (tiff_layout(t, 8) + 1) & ~(uint64_t)1;
        if (dirs_end > UINT32_MAX)
            die_usage("file would exceed 4 GiB");
        strip_at = (uint32_t)dirs_end;
        ifd_set(&t->ifd0, 0x0111, strip_at);
        total = strip_at + pixels;
    } else {
        total = tiff_layout(t, strip_at + pixels + o->pad_before_ifd) + o->pad_after_ifd;
    }
    if (total > UINT32_MAX)
        die_usage("file would exceed 4 GiB");
    buf_fill(out, 0, (size_t)total);

    /* A diagonal gradient: cheap, deterministic and visibly an image. */
    unsigned char *p = out->p + strip_at;
    for (uint32_t y = 0; y < o->height; y++)
        for (uint32_t x = 0; x < o->width; x++)
            *p++ = (unsigned char)((x + y) * 4);

    tiff_emit(t, out->p, o->big_endian);
    free(t);
}

/* ------------------------------------------------------------------------ */

static void write_output(const char *name, const unsigned char *p, size_t n)
{
    int to_stdout = !strcmp(name, "-");
    const char *shown = to_stdout ? "<stdout>" : name;
    FILE *f = to_stdout ? stdout : fopen(name, "wb");

    if (!f)
        die_io(shown, errno);
    if (n && fwrite(p, 1, n, f) != n)
        die_io(shown, errno ? errno : EIO);
    if (fflush(f) != 0)
        die_io(shown, errno);
    if (!to_stdout && fclose(f) != 0)
        die_io(shown, errno);
}

static void build(const struct options *o, struct buf *out)
{
    out->len = 0;
    if (o->tiff)
        build_tiff(o, out);
    else
        build_jpeg(o, out);
}

static void write_built(const struct options *o, const char *name, const struct buf *out)
{
    size_t n = out->len;
    if (o->have_truncate && o->truncate < n)
        n = (size_t)o->truncate;
    write_output(name, out->p, n);
}

/* Replaces every copy of the 19-byte date `from` in the buffer with `to`. */
static void patch_dates(struct buf *b, const char *from, const char *to)
{
    for (size_t i = 0; i + 19 <= b->len; i++)
        if (b->p[i] == (unsigned char)from[0] && !memcmp(b->p + i, from, 19))
            memcpy(b->p + i, to, 19);
}

/* --count: N files named by the OUT pattern (see the usage text). */
static void build_many(struct options *o, struct buf *out)
{
    char name[4096], date[20], prev[20];
    uint64_t base_seed = o->seed;
    struct tm tm = { 0 };
    time_t t0 = 0;

    if (o->date) {
        if (strlen(o->date) != 19 || !strptime(o->date, "%Y:%m:%d %H:%M:%S", &tm))
            die_usage("--count with --date needs a date \"YYYY:MM:DD HH:MM:SS\"");
        t0 = timegm(&tm);
        build(o, out);
        memcpy(prev, o->date, 20);
    }
    for (uint64_t i = 0; i < o->count; i++) {
        if (snprintf(name, sizeof name, o->out, (int)(i + 1)) >= (int)sizeof name)
            die_usage("the --count pattern gives a name that is too long");
        if (o->date) {
            time_t t = t0 + (time_t)i;
            struct tm cur;
            gmtime_r(&t, &cur);
            strftime(date, sizeof date, "%Y:%m:%d %H:%M:%S", &cur);
            patch_dates(out, prev, date);
            memcpy(prev, date, 20);
        } else {
            o->seed = base_seed + i;
            build(o, out);
        }
        write_built(o, name, out);
    }
}

/* --- mpf and raw: wrappers around JPEGs made by anything ---------------- */

static unsigned char *slurp(const char *name, size_t *len)
{
    FILE *f = fopen(name, "rb");
    if (!f)
        die_io(name, errno);
    struct buf b = { 0 };
    unsigned char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        buf_put(&b, tmp, n);
    if (ferror(f))
        die_io(name, errno);
    fclose(f);
    *len = b.len;
    return b.p;
}

static void put_le16(struct buf *b, unsigned v)
{
    buf_u8(b, v & 0xff);
    buf_u8(b, (v >> 8) & 0xff);
}

static void put_le32(struct buf *b, uint32_t v)
{
    put_le16(b, v & 0xffff);
    put_le16(b, v >> 16);
}

static void set_be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (v >> (24 - 8 * i)) & 0xff;
}

static int mk_mpf(int argc, char **argv)
{
    if (argc < 5)
        die_usage("mpf: expected OUT IMAGE PREVIEW");
    uint32_t class = 0x010001;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--class") && i + 1 < argc) {
            i++;
            if (!strcmp(argv[i], "fullhd"))
                class = 0x010002;
            else if (strcmp(argv[i], "vga"))
                die_usage("--class: vga or fullhd");
        } else {
            die_usage("mpf: unknown option '%s'", argv[i]);
        }
    }
    size_t ilen, plen;
    unsigned char *img = slurp(argv[3], &ilen), *pv = slurp(argv[4], &plen);
    if (ilen < 4 || img[0] != 0xff || img[1] != 0xd8 || plen < 4 || pv[0] != 0xff || pv[1] != 0xd8)
        die_usage("mpf: IMAGE and PREVIEW must be JPEGs");
    /* APP2: "MPF\0", a big-endian TIFF header, the MP Index IFD with
     * MPFVersion, NumberOfImages and MPEntry (two 16-byte entries) */
    struct buf a = { 0 };
    buf_put(&a, "MPF", 4);
    size_t base = a.len;
    buf_put(&a, "MM\0\x2a\0\0\0\x08", 8);
    buf_be16(&a, 3);
    size_t entries_at;
    buf_be16(&a, 0xb000); buf_be16(&a, 7); buf_put(&a, "\0\0\0\x04" "0100", 8);
    buf_be16(&a, 0xb001); buf_be16(&a, 4); buf_put(&a, "\0\0\0\x01\0\0\0\x02", 8);
    buf_be16(&a, 0xb002); buf_be16(&a, 7); buf_put(&a, "\0\0\0\x20", 4);
    entries_at = a.len;
    buf_put(&a, "\0\0\0\0", 4);       /* offset of the entries, below */
    buf_put(&a, "\0\0\0\0", 4);       /* no next IFD */
    set_be32(a.p + entries_at, (uint32_t)(a.len - base));
    size_t e0 = a.len;
    buf_put(&a, "\x20\x03\0\0", 4);   /* representative, baseline primary */
    buf_fill(&a, 0, 12);
    size_t e1 = a.len;
    buf_put(&a, "\0\0\0\0", 4);
    set_be32(a.p + e1, class);
    buf_fill(&a, 0, 12);
    size_t app2_len = 2 + 2 + a.len;  /* marker, length, body */
    uint32_t total_image = (uint32_t)(ilen + app2_len);
    set_be32(a.p + e0 + 4, total_image);
    set_be32(a.p + e1 + 4, (uint32_t)plen);
    /* the preview's offset from the MPF header: SOI (2) + marker and
     * length (4) + "MPF\0" (4) come before the header */
    set_be32(a.p + e1 + 8, (uint32_t)(total_image - (2 + 4 + 4)));
    struct buf out = { 0 };
    buf_put(&out, img, 2);
    buf_u8(&out, 0xff);
    buf_u8(&out, 0xe2);
    buf_be16(&out, (unsigned)(a.len + 2));
    buf_put(&out, a.p, a.len);
    buf_put(&out, img + 2, ilen - 2);
    buf_put(&out, pv, plen);
    write_output(argv[2], out.p, out.len);
    free(a.p);
    free(out.p);
    free(img);
    free(pv);
    return 0;
}

/* One 12-byte little-endian IFD entry of a SHORT, LONG or ASCII value. */
static void ifd_entry(struct buf *b, unsigned tag, unsigned type, uint32_t count, uint32_t value)
{
    put_le16(b, tag);
    put_le16(b, type);
    put_le32(b, count);
    put_le32(b, value);
}

static int mk_raw(int argc, char **argv)
{
    if (argc < 4)
        die_usage("raw: expected OUT PREVIEW");
    const char *make = "NIKON CORPORATION", *model = "NIKON D7000";
    uint32_t orientation = 1, width = 4928, height = 3264, raw_bytes = 65536;
    int preview_first = 0;
    for (int i = 4; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--preview-first"))
            preview_first = 1;
        else if (i + 1 >= argc)
            die_usage("raw: '%s' needs a value or is unknown", a);
        else if (!strcmp(a, "--make"))
            make = argv[++i];
        else if (!strcmp(a, "--model"))
            model = argv[++i];
        else if (!strcmp(a, "--orientation"))
            orientation = (uint32_t)parse_uint(a, argv[++i], 1, 8);
        else if (!strcmp(a, "--width"))
            width = (uint32_t)parse_uint(a, argv[++i], 1, 65535);
        else if (!strcmp(a, "--height"))
            height = (uint32_t)parse_uint(a, argv[++i], 1, 65535);
        else if (!strcmp(a, "--raw-bytes"))
            raw_bytes = (uint32_t)parse_uint(a, argv[++i], 1, 1u << 30);
        else
            die_usage("raw: unknown option '%s'", a);
    }
    size_t plen;
    unsigned char *pv = slurp(argv[3], &plen);
    size_t make_len = strlen(make) + 1, model_len = strlen(model) + 1;
    /* the directories' block: IFD0 (7 entries), the SubIFD (7), then
     * Make and Model; offsets fixed once the layout is known */
    size_t ifd0_size = 2 + 7 * 12 + 4, sub_size = 2 + 7 * 12 + 4;
    size_t dirs_size = ifd0_size + sub_size + make_len + model_len;
    size_t dirs_at, pv_at, raw_at;
    if (preview_first) {
        pv_at = 8;
        raw_at = pv_at + plen;
        dirs_at = raw_at + raw_bytes;
    } else {
        dirs_at = 8;
        pv_at = dirs_at + dirs_size;
        raw_at = pv_at + plen;
    }
    size_t sub_at = dirs_at + ifd0_size, make_at = sub_at + sub_size, model_at = make_at + make_len;
    struct buf d = { 0 };
    put_le16(&d, 7);
    ifd_entry(&d, 0x00fe, 4, 1, 1);                 /* NewSubfileType: reduced */
    ifd_entry(&d, 0x010f, 2, (uint32_t)make_len, (uint32_t)make_at);
    ifd_entry(&d, 0x0110, 2, (uint32_t)model_len, (uint32_t)model_at);
    ifd_entry(&d, 0x0112, 3, 1, orientation);
    ifd_entry(&d, 0x014a, 4, 1, (uint32_t)sub_at);  /* SubIFDs */
    ifd_entry(&d, 0x0201, 4, 1, (uint32_t)pv_at);   /* JPEGInterchangeFormat */
    ifd_entry(&d, 0x0202, 4, 1, (uint32_t)plen);
    put_le32(&d, 0);
    put_le16(&d, 7);
    ifd_entry(&d, 0x00fe, 4, 1, 0);                 /* the full image */
    ifd_entry(&d, 0x0100, 4, 1, width);
    ifd_entry(&d, 0x0101, 4, 1, height);
    ifd_entry(&d, 0x0103, 3, 1, 34713);             /* Nikon's raw compression */
    ifd_entry(&d, 0x0106, 3, 1, 32803);             /* CFA */
    ifd_entry(&d, 0x0111, 4, 1, (uint32_t)raw_at);
    ifd_entry(&d, 0x0117, 4, 1, raw_bytes);
    put_le32(&d, 0);
    buf_put(&d, make, make_len);
    buf_put(&d, model, model_len);
    struct buf out = { 0 };
    buf_put(&out, "II\x2a\0", 4);
    put_le32(&out, (uint32_t)dirs_at);
    struct prng r;
    prng_seed(&r, raw_bytes ^ plen);
    for (int part = 0; part < 3; part++) {
        size_t at = out.len;
        if (at == dirs_at) {
            buf_put(&out, d.p, d.len);
        } else if (at == pv_at) {
            buf_put(&out, pv, plen);
        } else {
            for (uint32_t i = 0; i < raw_bytes; i++)
                buf_u8(&out, (unsigned)(prng_next(&r) >> 56));
        }
    }
    write_output(argv[2], out.p, out.len);
    free(d.p);
    free(out.p);
    free(pv);
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    struct buf out = { 0 };

    if (argc >= 2 && !strcmp(argv[1], "mpf"))
        return mk_mpf(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "raw"))
        return mk_raw(argc, argv);

    parse_args(argc, argv, &o);
    if (o.count > 0) {
        const char *pct = strchr(o.out, '%');
        if (!pct || strchr(pct + 1, '%') || !strpbrk(pct, "diu"))
            die_usage("--count needs OUT with one integer conversion, like IMG_%%05d.jpg");
        build_many(&o, &out);
    } else {
        build(&o, &out);
        write_built(&o, o.out, &out);
    }
    free(out.p);
    return 0;
}
