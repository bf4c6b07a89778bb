/*
 * phash-eval.c: the perceptual hashes of src/phash.c compared on a corpus
 * of variants and distinct photos (tests/tools/similar-corpus.sh), for
 * doc/design.md and `make bench`.
 *
 *   phash-eval FILE.ppm...
 *
 * Each FILE is a binary PPM (P6, maxval 255: `convert X ppm:FILE`) named
 * after its photo as the corpus names it: PHOTO.ppm for the photo,
 * PHOTO__VARIANT.ppm for a variant (any directory, any further suffix
 * after the variant: pool__half.jpg.ppm).  Pairs of a photo and one of
 * its variants are the variant pairs; pairs of files of two photos are
 * distinct.  For each hash it prints, as a Markdown table: the distance
 * of the variant pairs (largest, and by variant), the smallest distance
 * between distinct photos, and at each distance the variant pairs within
 * it and the distinct pairs within it (false pairs).  Then each file's
 * number of decided frequencies (phash.h), lowest first, for the weak
 * hash's threshold.
 *
 * Reads the files named; writes stdout.  One thread.
 *
 * Invariants: none kept across files; every hash of a file is of the same
 * grid of grey levels (pix_phash_grey()) of its whole image, as thumb.c's
 * rendition is the whole image.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "phash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H_DHASH, H_DHASH2, H_PHASH, H_WHASH, H_PD, N_HASHES };
static const char *const hash_names[N_HASHES] = {
	"dHash (64 bits)", "dHash, both directions (128)", "DCT pHash (64)", "Haar wavelet hash (64)",
	"pHash + dHash (128)",
};
static const guint hash_bits[N_HASHES] = { 64, 128, 64, 64, 128 };

typedef struct {
	char *photo;       /* owned */
	char *variant;     /* owned; "" for the photo itself */
	guint64 h[N_HASHES][2];
	guint n_decided;
	guint w, h_px;
} File;

static guint8 *read_ppm(const char *path, guint *w, guint *h)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "phash-eval: cannot open '%s'\n", path);
		exit(2);
	}
	char magic[3] = { 0 };
	int maxval = 0;
	if (fscanf(f, "%2s %u %u %d", magic, w, h, &maxval) != 4 || strcmp(magic, "P6") != 0 || maxval != 255) {
		fprintf(stderr, "phash-eval: '%s' is no 8-bit binary PPM\n", path);
		exit(2);
	}
	fgetc(f);
	gsize n = (gsize)*w * *h * 3;
	guint8 *px = g_malloc(n);
	if (fread(px, 1, n, f) != n) {
		fprintf(stderr, "phash-eval: '%s' is cut\n", path);
		exit(2);
	}
	fclose(f);
	return px;
}

static guint dist(const File *a, const File *b, guint k)
{
	return pix_phash_distance(a->h[k][0], b->h[k][0]) + pix_phash_distance(a->h[k][1], b->h[k][1]);
}

int main(int argc, char **argv)
{
	GPtrArray *files = g_ptr_array_new();
	for (int i = 1; i < argc; i++) {
		File *f = g_new0(File, 1);
		g_autofree char *base = g_path_get_basename(argv[i]);
		char *sep = strstr(base, "__");
		char *dot = strchr(sep != NULL ? sep : base, '.');
		if (dot != NULL)
			*dot = '\0';
		if (sep != NULL) {
			*sep = '\0';
			f->variant = g_strdup(sep + 2);
		} else {
			f->variant = g_strdup("");
		}
		f->photo = g_strdup(base);
		guint8 *px = read_ppm(argv[i], &f->w, &f->h_px);
		guint32 grid[PIX_PHASH_GRID * PIX_PHASH_GRID], g98[9 * 8], g89[8 * 9];
		pix_phash_grey(px, f->w, f->h_px, 3, PIX_PHASH_GRID, PIX_PHASH_GRID, grid);
		pix_phash_grey(px, f->w, f->h_px, 3, 9, 8, g98);
		pix_phash_grey(px, f->w, f->h_px, 3, 8, 9, g89);
		f->h[H_DHASH][0] = f->h[H_DHASH2][0] = f->h[H_PD][1] = pix_phash_dhash(g98);
		f->h[H_DHASH2][1] = pix_phash_dhash_vertical(g89);
		f->h[H_PHASH][0] = f->h[H_PD][0] = pix_phash_dct(grid, &f->n_decided, NULL);
		f->h[H_WHASH][0] = pix_phash_whash(grid);
		g_free(px);
		g_ptr_array_add(files, f);
	}
	/* the variants' names, in the order first seen */
	GPtrArray *variants = g_ptr_array_new();
	for (guint i = 0; i < files->len; i++) {
		const File *f = files->pdata[i];
		gboolean seen = f->variant[0] == '\0';
		for (guint v = 0; v < variants->len && !seen; v++)
			seen = strcmp(variants->pdata[v], f->variant) == 0;
		if (!seen)
			g_ptr_array_add(variants, f->variant);
	}

	printf("| hash | variant pairs: largest distance | by variant (largest) | distinct photos: smallest distance |"
	       " largest distance with no false pair | variant pairs found there |\n"
	       "| --- | ---: | --- | ---: | ---: | ---: |\n");
	for (guint k = 0; k < N_HASHES; k++) {
		guint n_var = 0, var_max = 0, dis_min = G_MAXUINT;
		guint *var_at = g_new0(guint, hash_bits[k] + 1), *dis_at = g_new0(guint, hash_bits[k] + 1);
		guint *by_variant = g_new0(guint, variants->len);
		for (guint i = 0; i < files->len; i++)
			for (guint j = i + 1; j < files->len; j++) {
				const File *a = files->pdata[i], *b = files->pdata[j];
				guint d = dist(a, b, k);
				if (strcmp(a->photo, b->photo) != 0) {
					dis_at[d]++;
					dis_min = MIN(dis_min, d);
					continue;
				}
				if (a->variant[0] != '\0' && b->variant[0] != '\0')
					continue;       /* two variants: not a pair of the table */
				const File *v = a->variant[0] != '\0' ? a : b;
				n_var++;
				var_at[d]++;
				var_max = MAX(var_max, d);
				for (guint x = 0; x < variants->len; x++)
					if (strcmp(variants->pdata[x], v->variant) == 0)
						by_variant[x] = MAX(by_variant[x], d);
			}
		GString *bv = g_string_new(NULL);
		for (guint x = 0; x < variants->len; x++)
			g_string_append_printf(bv, "%s%s %u", x > 0 ? ", " : "", (char *)variants->pdata[x], by_variant[x]);
		guint found = 0, t = dis_min > 0 ? dis_min - 1 : 0;
		for (guint d = 0; d <= t; d++)
			found += var_at[d];
		printf("| %s | %u | %s | %u | %u | %u of %u (%.1f%%) |\n", hash_names[k], var_max, bv->str, dis_min, t,
		       found, n_var, n_var > 0 ? 100.0 * found / n_var : 0.0);
		g_string_free(bv, TRUE);
		g_free(by_variant);
		/* the curve, for the table of distances */
		printf("<!-- %s: distance variant_pairs_within false_pairs_within\n", hash_names[k]);
		guint cv = 0, cd = 0;
		for (guint d = 0; d <= hash_bits[k] / 2; d++) {
			cv += var_at[d];
			cd += dis_at[d];
			printf("   %u %u %u\n", d, cv, cd);
		}
		printf("-->\n");
		g_free(var_at);
		g_free(dis_at);
	}
	printf("\nDecided frequencies of the DCT hash (of 63), lowest first:");
	for (guint n = 0; n <= 63; n++)
		for (guint i = 0; i < files->len; i++) {
			const File *f = files->pdata[i];
			if (f->n_decided == n)
				printf(" %s%s%s %u;", f->photo, f->variant[0] != '\0' ? "__" : "", f->variant, n);
		}
	printf("\n");
	return 0;
}
