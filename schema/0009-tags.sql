-- 0009: the photographer's metadata (issue 28): keywords, people with
-- their regions, rating, label, title, caption, creator, copyright and
-- location names, from XMP (sidecars, embedded, extended) and IPTC-IIM.
--
-- Each file's own values are in its meta row and in `keywords` and
-- `people`; an image's XMP sidecar has its own.  Where a sidecar and the
-- image's own content both give a field, the sidecar's wins (as digiKam
-- and darktable read them): file_info, photos, file_keywords and
-- file_people give each image what wins, field by field (the keywords as
-- a whole, the people as a whole, each text and the rating).
--
-- Invariants:
--  * meta.keywords is NULL exactly when the file has no `keywords` row,
--    and meta.people exactly when it has no `people` row (the writer
--    writes them together, in the batch of the file's row);
--  * a keyword's parent_ord names a row of the same file with a smaller
--    ord and a depth one less; a top-level one has parent_ord NULL and
--    depth 1;
--  * an area lies within the image: 0 <= area_x, area_y; area_w, area_h
--    > 0; area_x + area_w <= 1, area_y + area_h <= 1 (all four NULL
--    without one).
--
-- Rows written before this migration have none of it until their file is
-- read again (a change, or `photoidx scan --reread`): the upgrade reads
-- no file.  This migration follows 0008 (near-duplicates), which only
-- adds to `thumbs` and a view of its own; it changes neither.

ALTER TABLE meta ADD COLUMN rating INTEGER;       -- xmp:Rating (-1 rejected, 0 unrated, 1..5 stars), else MicrosoftPhoto:Rating as stars
ALTER TABLE meta ADD COLUMN label TEXT;           -- xmp:Label (a colour label's name: Red, Green...)
ALTER TABLE meta ADD COLUMN title TEXT;           -- dc:title (x-default), else IPTC 2:05 Object Name
ALTER TABLE meta ADD COLUMN caption TEXT;         -- dc:description (x-default), else IPTC 2:120 Caption/Abstract
ALTER TABLE meta ADD COLUMN creator TEXT;         -- dc:creator, else IPTC 2:80 By-line: the names joined by '; '
ALTER TABLE meta ADD COLUMN copyright TEXT;       -- dc:rights (x-default), else IPTC 2:116 Copyright Notice
ALTER TABLE meta ADD COLUMN sublocation TEXT;     -- Iptc4xmpCore:Location, else IPTC 2:92 Sub-location
ALTER TABLE meta ADD COLUMN city TEXT;            -- photoshop:City, else IPTC 2:90
ALTER TABLE meta ADD COLUMN province TEXT;        -- photoshop:State, else IPTC 2:95 Province/State
ALTER TABLE meta ADD COLUMN country TEXT;         -- photoshop:Country, else IPTC 2:101 Country Name
ALTER TABLE meta ADD COLUMN country_code TEXT;    -- Iptc4xmpCore:CountryCode, else IPTC 2:100
ALTER TABLE meta ADD COLUMN keywords TEXT;        -- the keywords the file gives, one per line, a hierarchy's levels joined by '/' (its rows in `keywords`)
ALTER TABLE meta ADD COLUMN people TEXT;          -- the people's names, one per line (their rows in `people`)

-- A keyword or rating change in the change log (a 'changed' entry): the
-- values before and after, both NULL when that field did not change.
ALTER TABLE changes ADD COLUMN old_keywords TEXT;
ALTER TABLE changes ADD COLUMN new_keywords TEXT;
ALTER TABLE changes ADD COLUMN old_rating INTEGER;
ALTER TABLE changes ADD COLUMN new_rating INTEGER;

-- One row per level of a file's keyword tree: a flat keyword is one row,
-- "Places|Denmark|Copenhagen" three (each a keyword of the file, as
-- Lightroom has it), the hierarchy kept as parent links between the rows.
CREATE TABLE keywords (
    file_id     INTEGER NOT NULL REFERENCES files(id),
    ord         INTEGER NOT NULL,   -- its place among the file's rows, from 0; parents first
    keyword     TEXT NOT NULL,      -- this level's name, as the file spells it
    parent_ord  INTEGER,            -- the ord of the level above, NULL at the top
    depth       INTEGER NOT NULL,   -- 1 at the top
    path        TEXT NOT NULL,      -- the levels from the top, joined by '/'
    key         TEXT NOT NULL,      -- path, case-folded (Unicode), for look-ups in any case
    is_assigned INTEGER NOT NULL,   -- 1: the file gives this keyword itself (a flat one, or the last level of a hierarchical one); 0: it only stands above one
    PRIMARY KEY (file_id, ord)
) WITHOUT ROWID;
CREATE INDEX keywords_by_key ON keywords (key);

-- One row per person (or pet) a file names: MWG's named regions
-- (mwg-rs:Regions, as digiKam, Lightroom and Picasa write them), else
-- Microsoft's (MP:RegionInfo), then the names of Iptc4xmpExt:PersonInImage
-- no region gives.
CREATE TABLE people (
    file_id     INTEGER NOT NULL REFERENCES files(id),
    ord         INTEGER NOT NULL,   -- its place among the file's rows, from 0
    name        TEXT NOT NULL,
    key         TEXT NOT NULL,      -- name, case-folded (Unicode)
    type        TEXT,               -- MWG's region type: 'Face', 'Pet' ...; NULL when not given
    area_x      REAL,               -- the region's left edge, a fraction of the image's width as stored (before EXIF orientation)
    area_y      REAL,               -- its top edge, a fraction of the stored height
    area_w      REAL,               -- its width, likewise
    area_h      REAL,               -- its height, likewise
    PRIMARY KEY (file_id, ord)
) WITHOUT ROWID;
CREATE INDEX people_by_key ON people (key);

-- file_info and photos as in 0006, with the new columns at their end,
-- each the sidecar's value where the sidecar has one, else the file's
-- own.  (The other views that read file_info keep working: SQLite binds
-- a view's names when it is used.)
DROP VIEW photos;
DROP VIEW file_info;

CREATE VIEW file_info AS
SELECT
    f.id                                  AS id,
    CASE WHEN typeof(d.path) = 'text' AND typeof(f.name) = 'text'
         THEN rtrim(d.path, '/') || '/' || f.name
         ELSE CAST(rtrim(CAST(d.path AS TEXT), '/') || '/' || f.name AS BLOB) END AS path,
    f.name                                AS name,
    d.path                                AS dir,
    f.size                                AS size,
    f.mtime_ns                            AS mtime_ns,
    CASE WHEN f.md5 IS NULL THEN NULL ELSE lower(hex(f.md5)) END AS md5,
    f.mime                                AS mime,
    f.media                               AS media,
    CASE WHEN v.is_online = 0 AND f.state <> 'missing' THEN 'offline' ELSE f.state END AS state,
    f.error                               AS error,
    f.dev                                 AS dev,
    f.ino                                 AS ino,
    f.first_seen_at                       AS first_seen_at,
    f.changed_at                          AS changed_at,
    CASE WHEN f.state = 'missing' THEN NULL ELSE d.scanned_at END AS last_seen_at,
    f.hashed_at                           AS hashed_at,
    f.missing_since                       AS missing_since,
    f.verified_at                         AS verified_at,
    f.verify_state                        AS verify_state,
    m.date_taken, m.date_tz, m.date_source,
    m.make, m.model, m.lens,
    m.exposure_s, m.fnumber, m.iso, m.focal_mm, m.orientation,
    m.width, m.height,
    m.gps_lat, m.gps_lon, m.gps_alt_m,
    m.duration_s                          AS duration_s,
    m.osdb_hash                           AS osdb_hash,
    f.sidecar_id                          AS sidecar_id,
    v.ident                               AS volume,
    v.label                               AS volume_label,
    CASE WHEN d.rel_path IS NULL THEN NULL
         WHEN d.rel_path = '' THEN f.name
         WHEN typeof(d.rel_path) = 'text' AND typeof(f.name) = 'text' THEN d.rel_path || '/' || f.name
         ELSE CAST(CAST(d.rel_path AS TEXT) || '/' || f.name AS BLOB) END AS rel_path,
    m.aperture, m.exposure_program, m.metering_mode, m.flash,
    m.gps_time, m.gps_direction, m.gps_direction_ref, m.description,
    coalesce(s.rating, m.rating)          AS rating,
    coalesce(s.label, m.label)            AS label,
    coalesce(s.title, m.title)            AS title,
    coalesce(s.caption, m.caption)        AS caption,
    coalesce(s.creator, m.creator)        AS creator,
    coalesce(s.copyright, m.copyright)    AS copyright,
    coalesce(s.sublocation, m.sublocation) AS sublocation,
    coalesce(s.city, m.city)              AS city,
    coalesce(s.province, m.province)      AS province,
    coalesce(s.country, m.country)        AS country,
    coalesce(s.country_code, m.country_code) AS country_code,
    coalesce(s.keywords, m.keywords)      AS keywords,
    coalesce(s.people, m.people)          AS people
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN volumes v ON v.id = d.volume_id
LEFT JOIN meta m ON m.file_id = f.id
LEFT JOIN meta s ON s.file_id = f.sidecar_id;

CREATE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id, volume, rel_path,
       aperture, exposure_program, metering_mode, flash,
       gps_time, gps_direction, gps_direction_ref, description,
       rating, label, title, caption, creator, copyright, sublocation, city, province,
       country, country_code, keywords, people
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

-- Each file's keywords as they count for it: its sidecar's when the
-- sidecar has any, else its own (from_id says whose row it is).
CREATE VIEW file_keywords AS
SELECT f.id AS file_id, k.ord AS ord, k.keyword AS keyword, k.parent_ord AS parent_ord, k.depth AS depth,
       k.path AS path, k.key AS key, k.is_assigned AS is_assigned, k.file_id AS from_id
FROM keywords k
JOIN files f ON f.id = k.file_id
WHERE NOT EXISTS (SELECT 1 FROM meta s WHERE s.file_id = f.sidecar_id AND s.keywords IS NOT NULL)
UNION ALL
SELECT f.id, k.ord, k.keyword, k.parent_ord, k.depth, k.path, k.key, k.is_assigned, k.file_id
FROM keywords k
JOIN meta s ON s.file_id = k.file_id AND s.keywords IS NOT NULL
JOIN files f ON f.sidecar_id = k.file_id;

-- Each file's people as they count for it (its sidecar's when the
-- sidecar names any, else its own), each region in fractions of the
-- image as shown: turned by the file's EXIF orientation (1..8).
CREATE VIEW file_people AS
SELECT p.file_id AS file_id, p.ord AS ord, p.name AS name, p.key AS key, p.type AS type,
       CASE coalesce(o.orientation, 1)
            WHEN 2 THEN 1 - p.area_x - p.area_w WHEN 3 THEN 1 - p.area_x - p.area_w WHEN 4 THEN p.area_x
            WHEN 5 THEN p.area_y WHEN 6 THEN 1 - p.area_y - p.area_h WHEN 7 THEN 1 - p.area_y - p.area_h
            WHEN 8 THEN p.area_y ELSE p.area_x END AS x,
       CASE coalesce(o.orientation, 1)
            WHEN 2 THEN p.area_y WHEN 3 THEN 1 - p.area_y - p.area_h WHEN 4 THEN 1 - p.area_y - p.area_h
            WHEN 5 THEN p.area_x WHEN 6 THEN p.area_x WHEN 7 THEN 1 - p.area_x - p.area_w
            WHEN 8 THEN 1 - p.area_x - p.area_w ELSE p.area_y END AS y,
       CASE WHEN coalesce(o.orientation, 1) BETWEEN 5 AND 8 THEN p.area_h ELSE p.area_w END AS w,
       CASE WHEN coalesce(o.orientation, 1) BETWEEN 5 AND 8 THEN p.area_w ELSE p.area_h END AS h,
       p.from_id AS from_id
FROM (
    SELECT f.id AS file_id, q.ord, q.name, q.key, q.type, q.area_x, q.area_y, q.area_w, q.area_h, q.file_id AS from_id
    FROM people q
    JOIN files f ON f.id = q.file_id
    WHERE NOT EXISTS (SELECT 1 FROM meta s WHERE s.file_id = f.sidecar_id AND s.people IS NOT NULL)
    UNION ALL
    SELECT f.id, q.ord, q.name, q.key, q.type, q.area_x, q.area_y, q.area_w, q.area_h, q.file_id
    FROM people q
    JOIN meta s ON s.file_id = q.file_id AND s.people IS NOT NULL
    JOIN files f ON f.sidecar_id = q.file_id
) p
LEFT JOIN meta o ON o.file_id = p.file_id;
