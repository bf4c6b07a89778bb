#!/usr/bin/python3
# phash-ref.py: the reference values of tests/unit/test-phash.c, from the
# reference implementation of the hashes: imagehash 4.3's phash(),
# dhash() and whash() (BSD-2-Clause, J. Buchner), transcribed below as
# it computes them on an image already of the hash's grid size (PIL
# returns a copy when asked to resize an image to its own size, so no
# resampling enters).  Needs Debian's python3-pil, python3-numpy,
# python3-scipy and python3-pywt (imagehash itself is not packaged).
#
#   /usr/bin/python3 tests/tools/phash-ref.py >cases.txt
#
# Each line: CASE PHASH DHASH WHASH, the hashes as imagehash's str()
# gives them (16 hex digits).  The grids are made by grid() below, which
# test-phash.c repeats in C.
import numpy
import pywt
import scipy.fftpack
from PIL import Image


def to_hex(diff):
    bits = ''.join(str(b) for b in 1 * diff.flatten())
    return '{:0>16x}'.format(int(bits, 2))


def phash(image, hash_size=8, highfreq_factor=4):
    img_size = hash_size * highfreq_factor
    image = image.convert('L').resize((img_size, img_size), Image.LANCZOS)
    pixels = numpy.asarray(image)
    dct = scipy.fftpack.dct(scipy.fftpack.dct(pixels, axis=0), axis=1)
    dctlowfreq = dct[:hash_size, :hash_size]
    med = numpy.median(dctlowfreq)
    return to_hex(dctlowfreq > med)


def dhash(image, hash_size=8):
    image = image.convert('L').resize((hash_size + 1, hash_size), Image.LANCZOS)
    pixels = numpy.asarray(image)
    return to_hex(pixels[:, 1:] > pixels[:, :-1])


def whash(image, hash_size=8, image_scale=32):
    ll_max_level = int(numpy.log2(image_scale))
    level = int(numpy.log2(hash_size))
    dwt_level = ll_max_level - level
    image = image.convert('L').resize((image_scale, image_scale), Image.LANCZOS)
    pixels = numpy.asarray(image) / 255.
    coeffs = list(pywt.wavedec2(pixels, 'haar', level=ll_max_level))
    coeffs[0] *= 0
    pixels = pywt.waverec2(coeffs, 'haar')
    dwt_low = pywt.wavedec2(pixels, 'haar', level=dwt_level)[0]
    med = numpy.median(dwt_low)
    return to_hex(dwt_low > med)


def grid(case, w, h):
    """Grey levels of case `case` (as grid() in test-phash.c)."""
    seed = case * 2654435761 % 2**32
    out = []
    for y in range(h):
        row = []
        for x in range(w):
            if case % 3 == 0:      # noise (an LCG)
                seed = (seed * 1103515245 + 12345) % 2**31
                v = (seed >> 16) % 256
            elif case % 3 == 1:    # a quadratic pattern
                v = (x * x * (case + 3) + y * (7 * case + 1) + x * y * (case % 5)) % 256
            else:                  # blocks and a ramp
                v = (((x // 4 + y // 5 + case // 3) % 3) * 70 + x * (case // 3 + 1) + y) % 256
            row.append(v)
        out.append(row)
    return out


def image(rows):
    return Image.fromarray(numpy.array(rows, dtype=numpy.uint8), 'L')


for case in range(12):
    p = phash(image(grid(case, 32, 32)))
    d = dhash(image(grid(case, 9, 8)))
    w = whash(image(grid(case, 32, 32)))
    print(case, p, d, w)
