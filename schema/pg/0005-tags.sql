-- PostgreSQL schema version 5 (issue 28): the photographer's metadata,
-- as SQLite's 0009 (read it for what each column holds): keywords, people
-- with their regions, rating, label, title, caption, creator, copyright
-- and location names, from XMP and IPTC-IIM, the sidecar's winning over
-- the file's own, field by field, in file_info, photos, file_keywords and
-- file_people.  This migration follows version 4 (near-duplicates), which
-- only adds to `thumbs` and a view of its own.
--
-- file_info and photos are replaced in place (CREATE OR REPLACE VIEW),
-- their new columns at their very end, after the *_bytes and *_text ones:
-- CREATE OR REPLACE can only add columns at the end, and a view made anew
-- would have to be dropped first, with every view built on it (a front
-- end's own, file_thumbnails, duplicates).  So here, unlike SQLite, the
-- new columns do not stand before the bytes.
--
-- Invariants: as SQLite's 0009.  The per-file rows' file_id is not a
-- declared foreign key, as meta's is not (0001's header).

ALTER TABLE meta
    ADD COLUMN rating bigint,           -- xmp:Rating (-1 rejected, 0 unrated, 1..5), else MicrosoftPhoto:Rating as stars
    ADD COLUMN label text,              -- xmp:Label
    ADD COLUMN title text,              -- dc:title (x-default), else IPTC 2:05
    ADD COLUMN caption text,            -- dc:description (x-default), else IPTC 2:120
    ADD COLUMN creator text,            -- dc:creator, else IPTC 2:80: names joined by '; '
    ADD COLUMN copyright text,          -- dc:rights (x-default), else IPTC 2:116
    ADD COLUMN sublocation text,        -- Iptc4xmpCore:Location, else IPTC 2:92
    ADD COLUMN city text,               -- photoshop:City, else IPTC 2:90
    ADD COLUMN province text,           -- photoshop:State, else IPTC 2:95
    ADD COLUMN country text,            -- photoshop:Country, else IPTC 2:101
    ADD COLUMN country_code text,       -- Iptc4xmpCore:CountryCode, else IPTC 2:100
    ADD COLUMN keywords text,           -- the keywords the file gives, one per line, levels joined by '/'
    ADD COLUMN people text;             -- the people's names, one per line

-- a keyword or rating change: before and after, both NULL when unchanged
ALTER TABLE changes
    ADD COLUMN old_keywords text,
    ADD COLUMN new_keywords text,
    ADD COLUMN old_rating bigint,
    ADD COLUMN new_rating bigint;

CREATE TABLE keywords (
    file_id     bigint NOT NULL,        -- files.id (not declared)
    ord         bigint NOT NULL,        -- its place among the file's rows, from 0; parents first
    keyword     text NOT NULL,          -- this level's name
    parent_ord  bigint,                 -- the ord of the level above, NULL at the top
    depth       bigint NOT NULL,        -- 1 at the top
    path        text NOT NULL,          -- the levels from the top, joined by '/'
    key         text NOT NULL,          -- path, case-folded (Unicode)
    is_assigned bigint NOT NULL,        -- 1: given by the file itself; 0: only above one
    PRIMARY KEY (file_id, ord)
);
CREATE INDEX keywords_by_key ON keywords (key);

CREATE TABLE people (
    file_id     bigint NOT NULL,        -- files.id (not declared)
    ord         bigint NOT NULL,        -- its place among the file's rows, from 0
    name        text NOT NULL,
    key         text NOT NULL,          -- name, case-folded (Unicode)
    type        text,                   -- MWG's region type, NULL when not given
    area_x      double precision,       -- the region in fractions of the image as stored
    area_y      double precision,
    area_w      double precision,
    area_h      double precision,
    PRIMARY KEY (file_id, ord)
);
CREATE INDEX people_by_key ON people (key);

-- file_info as in version 2, the new columns at the end
CREATE OR REPLACE VIEW file_info AS
SELECT i.id, pix_display(i.path_bytes) AS path, pix_display(i.name_bytes) AS name,
       pix_display(i.dir_bytes) AS dir, i.size, i.mtime_ns, i.md5, i.mime, i.media, i.state, i.error,
       i.dev, i.ino, i.first_seen_at, i.changed_at, i.last_seen_at, i.hashed_at, i.missing_since,
       i.verified_at, i.verify_state, i.date_taken, i.date_tz, i.date_source, i.make, i.model, i.lens,
       i.exposure_s, i.fnumber, i.iso, i.focal_mm, i.orientation, i.width, i.height,
       i.gps_lat, i.gps_lon, i.gps_alt_m, i.duration_s, i.osdb_hash, i.sidecar_id,
       pix_display(i.volume_bytes) AS volume, pix_display(i.volume_label_bytes) AS volume_label,
       pix_display(i.rel_path_bytes) AS rel_path,
       i.aperture, i.exposure_program, i.metering_mode, i.flash,
       i.gps_time, i.gps_direction, i.gps_direction_ref, i.description,
       i.path_bytes, i.name_bytes, i.dir_bytes, i.rel_path_bytes, i.volume_bytes, i.volume_label_bytes,
       pix_text(i.path_bytes)     AS path_text,
       pix_text(i.name_bytes)     AS name_text,
       pix_text(i.dir_bytes)      AS dir_text,
       pix_text(i.rel_path_bytes) AS rel_path_text,
       i.rating, i.label, i.title, i.caption, i.creator, i.copyright, i.sublocation, i.city, i.province,
       i.country, i.country_code, i.keywords, i.people
FROM (
SELECT
    f.id                                  AS id,
    rtrim(d.path, '/'::bytea) || '/'::bytea || f.name AS path_bytes,
    f.name                                AS name_bytes,
    d.path                                AS dir_bytes,
    f.size                                AS size,
    f.mtime_ns                            AS mtime_ns,
    encode(f.md5, 'hex')                  AS md5,
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
    v.ident                               AS volume_bytes,
    v.label                               AS volume_label_bytes,
    CASE WHEN d.rel_path IS NULL THEN NULL
         WHEN d.rel_path = ''::bytea THEN f.name
         ELSE d.rel_path || '/'::bytea || f.name END AS rel_path_bytes,
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
LEFT JOIN meta s ON s.file_id = f.sidecar_id
) i;

-- photos as in version 2, the new columns at the end
CREATE OR REPLACE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id, volume, rel_path,
       aperture, exposure_program, metering_mode, flash,
       gps_time, gps_direction, gps_direction_ref, description,
       path_bytes, name_bytes, dir_bytes, rel_path_bytes, volume_bytes,
       path_text, name_text, dir_text, rel_path_text,
       rating, label, title, caption, creator, copyright, sublocation, city, province,
       country, country_code, keywords, people
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

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
