/*
 * tiff.h: our own reader of TIFF structure (the IFDs behind EXIF in JPEG,
 * TIFF and TIFF-based RAW files), the only one: EXIF blocks come here
 * through exif.c.
 *
 * Readers such as libexif accept a great deal of damage silently (IFDs
 * that overlap, values pointing outside the block, sub-IFD pointers of the
 * wrong type, IFD loops); an indexer must say that a file is damaged, so
 * this walks the structure itself and reports the first problem it finds.
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef PIX_TIFF_H
#define PIX_TIFF_H

#include "item.h"
#include "meta.h"

/*
 * Checks the TIFF structure at `data` (a TIFF header at data[0]): the IFD0
 * chain (IFD0, IFD1, ... up to 8 directories; further ones are not
 * checked), the Exif and GPS IFDs of IFD0 and the Interoperability IFD of
 * the Exif IFD (a pointer of count 0 or value 0 means none), and the
 * SubIFDs of the chain's directories (16 pointers each, each pointer's
 * chain up to 8 directories, SubIFDs within SubIFDs up to 8 deep: deeper
 * is damage); 32 directories in all.  `len` bytes are at hand out of a
 * TIFF of `total_len` bytes (>= len; the whole file for a TIFF file):
 * structures that lie in [len, total_len) cannot be checked and pass.
 * Returns NULL when sound, else what is wrong (transfer full), e.g.
 * "bad IFD1 directory at offset 4660".
 */
char *pix_tiff_check(const guint8 *data, gsize len, guint64 total_len);

/* Which directory a TIFF block's IFD0 really is (CR3 stores its Exif and
 * GPS directories as TIFF blocks of their own). */
typedef enum {
	PIX_TIFF_ROLE_MAIN,   /* IFD0 is IFD0 (with its Exif and GPS pointers) */
	PIX_TIFF_ROLE_EXIF,   /* IFD0 holds the Exif directory's tags */
	PIX_TIFF_ROLE_GPS,    /* IFD0 holds the GPS directory's tags */
} PixTiffRole;

/*
 * Bytes of the TIFF at offset `off`, `len` of them, or NULL when they are
 * not at hand (transfer none: valid until pix_tiff_read() returns).  The
 * reader asks for a directory's entries in one piece first, then entry by
 * entry, so a getter that notes what it lacked can fetch it (meta-tiff.c).
 */
typedef const guint8 *(*PixTiffGetFn)(void *src, guint64 off, gsize len);

/*
 * Our own reader of the fields PixMeta holds (make, model, lens, dates
 * with sub-seconds and offsets, exposure, f-number, ISO, focal length,
 * orientation, GPS, pixel size of the main image), wherever they lie:
 * offsets past 64 KiB, RAW files' own directories (SubIFDs, RW2's IFD0
 * tags), blocks whose IFD0 is an Exif or GPS directory.  Fills only
 * fields unknown in `m` (NULL, NAN, -1), so an earlier source (another
 * block, a container's own fields) keeps precedence; a date from a worse
 * tag gives way (see pix_meta_set_exif_date()).  Bytes come from `get` (a TIFF of `size` bytes);
 * what it cannot get is skipped.  Never fails: damage is
 * pix_tiff_check()'s job.  Classic TIFF, BigTIFF, RW2 and ORF headers.
 *
 * The tags are read where the standard puts them, falling back to the
 * other main directory where files put them wrongly (IFD0 <-> Exif IFD),
 * GPS tags from the GPS IFD only (their numbers collide with the
 * Interoperability IFD's); an Exif or GPS pointer of the wrong type is
 * followed through its value field, as libexif and exiftool follow it.
 * A directory whose entries run past `size` is skipped whole, as exiftool
 * does (its count is the damage); one that is merely not at hand keeps the
 * entries before the gap.
 *
 * Pixel size (role MAIN only, set when both are unknown), as exiftool
 * reports ImageWidth/ImageHeight for TIFF and TIFF-based RAW files: the
 * first value met walking IFD0, its SubIFDs (tag 0x014a, in entry order)
 * and the IFD1.. chain, unless the first directory whose NewSubfileType is
 * 0 (full resolution) has one; Phase One's maker-note directory (IIQ)
 * overrides, and RW2's sensor borders (right - left, bottom - top) win over
 * all.  Containers that know the real size set it first (a JPEG's SOF, a
 * PNG's IHDR), so it stays; a CR3 gets its CMT1's.
 *
 * Thread-safety: reentrant (no state outside the call).
 *
 * IFD0's metadata blocks (XMP, IPTC, Photoshop resources) are asked of
 * `get` whether or not `kind` is given, so that a getter that fetches
 * what it lacks fetches them too; with `kind`, they are copied there.
 *
 * `kind` may be NULL; when given (role MAIN), it says whether IFD0 has
 * DNGVersion and whether an image directory holds sensor data (CFA or
 * LinearRaw photometric interpretation, a camera maker's raw compression,
 * a Phase One directory): a RAW file, not a TIFF picture; and where the
 * image data ends (PixTiffKind.data), for the caller to judge against the
 * file's length.
 */
typedef struct {
	guint64 end;            /* offset after its last byte; 0: none found */
	guint64 off;            /* where that piece starts */
	const char *what;       /* "strip", "tile" or "JPEG preview" (static) */
} PixTiffData;

typedef struct {
	gboolean is_dng;
	gboolean has_raw_data;
	/* the piece of image data (a strip or tile of any image directory met
	 * by the size walk, or a JPEG preview) that ends furthest into the
	 * file, as the directories' offsets and byte counts say: past the
	 * file's end, the file is truncated */
	PixTiffData data;
	/* IFD0's metadata blocks (role MAIN, when at hand), each at most
	 * PIX_TIFF_MAX_BLOCK bytes, or NULL (owned: pix_tiff_kind_clear()):
	 * XMP (tag 700), IPTC-IIM (33723), Photoshop resources (34377) */
	GBytes *xmp, *iptc, *irb;
} PixTiffKind;

#define PIX_TIFF_MAX_BLOCK (4u << 20)
/* Frees the blocks of `kind` (not `kind` itself). */
void pix_tiff_kind_clear(PixTiffKind *kind);

void pix_tiff_read(PixTiffGetFn get, void *src, guint64 size, PixTiffRole ifd0, PixMeta *m, PixTiffKind *kind);
/*
 * The JPEG previews a TIFF-based RAW file's directories point to (IFD0's
 * chain and their SubIFDs, as pix_tiff_read() walks them): a
 * JPEGInterchangeFormat/Length pair, a directory whose one strip is JPEG
 * data that is not the sensor's (CR2's IFD0, DNG's preview SubIFDs), and
 * RW2's JpgFromRaw.  Maker-note previews (ORF, PEF, Nikon's PreviewIFD)
 * are not looked for.  Writes at most `max` into `out`, in the order met;
 * returns how many.  Bytes come from `get` as for pix_tiff_read() (what
 * is not at hand is skipped, and asked for).  Reentrant.
 */
guint pix_tiff_previews(PixTiffGetFn get, void *src, guint64 size, PixPreview *out, guint max);

/* The same over `len` bytes in memory. */
void pix_tiff_read_mem(const guint8 *data, gsize len, PixTiffRole ifd0, PixMeta *m);

#endif
