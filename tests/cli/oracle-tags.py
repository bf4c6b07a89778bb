# oracle-tags.py: the photographer's metadata of each image as photoidx
# must give it (doc/schema.md, issue 28), worked out from exiftool's
# reading of the same files (`exiftool -j -G1 -struct -n`), and compared
# with the catalog's, value by value.  Used by t1025 and t1026.
#
# Usage: python3 oracle-tags.py EXIFTOOL.json RECORDS.json PEOPLE.tsv [--sidecars]
#   EXIFTOOL.json  exiftool's objects for the images and their sidecars
#   RECORDS.json   `photoidx ls --json` of the images (what file_info gives)
#   PEOPLE.tsv     file_people: path, name, x, y, w, h (tab-separated, empty
#                  for no region), in the catalog's order
# With --sidecars, NAME.xmp or NAME.EXT.xmp beside an image is its sidecar,
# whose values win field by field (the longer name first, as photoidx).
# With --except FILE, the differences FILE lists (lines "PATH<TAB>FIELD<TAB>
# why", PATH a suffix of the image's path, FIELD a column, "people" or
# "regions") are expected: printed as "exception", and one listed that is
# not a difference any more is printed as "stale" and fails.
# Prints each difference and "compared N values"; exits 1 on a difference
# (or a stale exception) or when nothing was compared.
import json, os, sys

HIER = [("XMP-lr:HierarchicalSubject", "|"), ("XMP-digiKam:TagsList", "/"),
        ("XMP-mediapro:CatalogSets", "|"), ("XMP-microsoft:LastKeywordXMP", "/")]
TEXTS = [  # column, XMP key (a lang-alt when marked), IPTC key
    ("label", "XMP-xmp:Label", False, None),
    ("title", "XMP-dc:Title", True, "IPTC:ObjectName"),
    ("caption", "XMP-dc:Description", True, "IPTC:Caption-Abstract"),
    ("copyright", "XMP-dc:Rights", True, "IPTC:CopyrightNotice"),
    ("sublocation", "XMP-iptcCore:Location", False, "IPTC:Sub-location"),
    ("city", "XMP-photoshop:City", False, "IPTC:City"),
    ("province", "XMP-photoshop:State", False, "IPTC:Province-State"),
    ("country", "XMP-photoshop:Country", False, "IPTC:Country-PrimaryLocationName"),
    ("country_code", "XMP-iptcCore:CountryCode", False, "IPTC:Country-PrimaryLocationCode"),
]


def text(v):
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = " ".join(str(v).replace("\r", " ").split("\x00")).strip() if not isinstance(v, str) else v
    s = "".join(c if c in "\n\t" or ord(c) >= 0x20 and not 0x7f <= ord(c) < 0xa0 else " " for c in s)
    s = s.strip()
    return s or None


def lst(v):
    if v is None:
        return []
    return [text(x) for x in (v if isinstance(v, list) else [v]) if text(x) is not None]


def lang(d, key):
    if key in d:
        return d[key]
    for k, v in d.items():
        if k.startswith(key + "-"):
            return v
    return None


def keywords(d):
    """The assigned keywords' paths, levels joined by '/', in order."""
    nodes = []  # [name, parent, assigned]

    def level(parent, name):
        for i, n in enumerate(nodes):
            if n[1] == parent and n[0].casefold() == name.casefold():
                return i
        nodes.append([name, parent, False])
        return len(nodes) - 1
    for key, sep in HIER:
        paths = lst(d.get(key))
        if not paths:
            continue
        for p in paths:
            levels = [x.strip() for x in p.split(sep) if x.strip()]
            at = -1
            for x in levels:
                at = level(at, x)
            if at >= 0:
                nodes[at][2] = True
        break
    flat = lst(d.get("XMP-dc:Subject")) or lst(d.get("IPTC:Keywords"))
    tree = [n[0].casefold() for n in nodes]
    for f in flat:
        if f.casefold() in tree:
            continue
        nodes[level(-1, f)][2] = True

    def path(i):
        out = []
        while i >= 0:
            out.insert(0, nodes[i][0])
            i = nodes[i][1]
        return "/".join(out)
    return [path(i) for i, n in enumerate(nodes) if n[2]]


def rating(d):
    r = d.get("XMP-xmp:Rating")
    if r is not None:
        return int(round(float(r)))
    p = d.get("XMP-microsoft:RatingPercent")
    if p is None:
        return None
    p = int(round(float(p)))
    return 0 if p == 0 else 1 if p < 13 else 2 if p < 38 else 3 if p < 63 else 4 if p < 88 else 5


def people(d):
    """[(name, (x, y, w, h) of the stored image, or None)]"""
    out = []
    mwg = d.get("XMP-mwg-rs:RegionInfo") or {}
    dims = mwg.get("AppliedToDimensions") or {}
    for r in mwg.get("RegionList") or []:
        name = text(r.get("Name"))
        if name is None:
            continue
        a = r.get("Area")
        area = None
        if a is not None and all(k in a for k in "XYWH"):
            x, y, w, h = (float(a[k]) for k in "XYWH")
            if a.get("Unit", "normalized") == "pixel":
                if dims.get("W") and dims.get("H"):
                    x, w = x / float(dims["W"]), w / float(dims["W"])
                    y, h = y / float(dims["H"]), h / float(dims["H"])
                    area = (x - w / 2, y - h / 2, w, h)
            elif a.get("Unit", "normalized") == "normalized":
                area = (x - w / 2, y - h / 2, w, h)
        out.append((name, area))
    if not out:
        mp = d.get("XMP-MP:RegionInfoMP") or {}
        for r in mp.get("Regions") or []:
            name = text(r.get("PersonDisplayName"))
            if name is None:
                continue
            rect = str(r.get("Rectangle", "")).split(",")
            area = tuple(float(v) for v in rect) if len(rect) == 4 else None
            out.append((name, area))
    for n in lst(d.get("XMP-iptcExt:PersonInImage")):
        if n.casefold() not in [o[0].casefold() for o in out]:
            out.append((n, None))
    return out


def shown(area, o):
    """A stored-image area in the image as shown (EXIF orientation o)."""
    x, y, w, h = area
    return {2: (1 - x - w, y, w, h), 3: (1 - x - w, 1 - y - h, w, h), 4: (x, 1 - y - h, w, h),
            5: (y, x, h, w), 6: (1 - y - h, x, h, w), 7: (1 - y - h, 1 - x - w, h, w),
            8: (y, 1 - x - w, h, w)}.get(o, area)


def values(d):
    v = {"keywords": keywords(d) or None, "rating": rating(d)}
    for col, key, is_lang, iptc in TEXTS:
        v[col] = text(lang(d, key) if is_lang else d.get(key)) or (text(d.get(iptc)) if iptc else None)
    creators = []
    for c in lst(d.get("XMP-dc:Creator")) or lst(d.get("IPTC:By-line")):
        if c not in creators:
            creators.append(c)
    v["creator"] = "; ".join(creators) or None
    v["people"] = people(d) or None
    return v


def main():
    theirs = {os.path.abspath(o["SourceFile"]): o for o in json.load(open(sys.argv[1]))}
    ours = {r["path"]: r for r in json.load(open(sys.argv[2]))}
    regions = {}
    for line in open(sys.argv[3]):
        f = line.rstrip("\n").split("\t")
        regions.setdefault(f[0], []).append((f[1], None if f[2] == "" else tuple(float(x) for x in f[2:6])))
    is_sidecars = "--sidecars" in sys.argv
    n, bad = 0, []
    for path, r in sorted(ours.items()):
        d = theirs.get(path)
        if d is None:
            bad.append((path, "file", "exiftool did not read it"))
            continue
        want = values(d)
        orientation = int(d.get("IFD0:Orientation") or d.get("XMP-tiff:Orientation") or 1)
        if is_sidecars:
            stem = os.path.splitext(path)[0]
            for side in (path + ".xmp", path + ".XMP", stem + ".xmp", stem + ".XMP"):
                if side in theirs:
                    s = values(theirs[side])
                    want = {k: s[k] if s[k] is not None else want[k] for k in want}
                    break
        for col in ("keywords", "rating", "label", "title", "caption", "creator", "copyright", "sublocation",
                    "city", "province", "country", "country_code"):
            got = r.get(col)
            if col == "keywords":
                got = got or None
            n += 1
            if got != want[col]:
                bad.append((path, col, "%r, exiftool's %r" % (got, want[col])))
        names = r.get("people") or None
        want_people = want["people"]
        want_names = None
        if want_people:
            want_names = []
            for p in want_people:
                if p[0] not in want_names:
                    want_names.append(p[0])
        n += 1
        if names != want_names:
            bad.append((path, "people", "%r, exiftool's %r" % (names, want_names)))
        got_regions = regions.get(path, [])
        want_regions = [(p[0], shown(p[1], orientation) if p[1] is not None else None) for p in want_people or []]
        if len(got_regions) != len(want_regions):
            bad.append((path, "regions", "%d, exiftool's %d" % (len(got_regions), len(want_regions))))
            continue
        for g, w in zip(got_regions, want_regions):
            n += 1
            # an area outside the image is dropped (with a note): exiftool shows it
            w_area = w[1]
            if w_area is not None and (min(w_area) < -0.01 or w_area[0] + w_area[2] > 1.01 or w_area[1] + w_area[3] > 1.01):
                w_area = None
            if g[0] != w[0] or (g[1] is None) != (w_area is None) or \
                    (g[1] is not None and any(abs(a - b) > 1e-6 for a, b in zip(g[1], w_area))):
                bad.append((path, "regions", "%r, exiftool's %r" % (g, (w[0], w_area))))
    excepted = []
    if "--except" in sys.argv:
        for line in open(sys.argv[sys.argv.index("--except") + 1]):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 2 and f[0] and not f[0].startswith("#"):
                excepted.append((f[0], f[1]))
    failed = False
    for path, col, what in bad:
        is_excepted = any(path.endswith("/" + e[0]) and col == e[1] for e in excepted)
        print("%s%s: %s %s" % ("exception: " if is_excepted else "", path, col, what))
        failed = failed or not is_excepted
    for e in excepted:
        if not any(path.endswith("/" + e[0]) and col == e[1] for path, col, what in bad):
            print("stale: %s %s is not a difference" % e)
            failed = True
    print("compared %d values" % n)
    sys.exit(1 if failed or n == 0 else 0)


main()
