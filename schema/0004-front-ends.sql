-- 0004: the read interface for front ends (issue 7): `photos`, one row per
-- photo or video on disk, and `duplicates`, the files whose content
-- another file has too.  Both are views over file_info: front ends query
-- them without knowing the tables, which may change; the views keep their
-- columns.  A later migration that drops file_info (to add a column)
-- must drop these first and create them again after: SQLite checks every
-- view when a table is altered.

-- Every image, RAW file and video present on disk (state 'ok', or 'error'
-- when only its content is damaged and its MD5 is known or it could not be
-- read at all), with its metadata.  Sidecars and other files are not in
-- it; missing files neither (file_info has them).
CREATE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

-- Files present on disk, not empty, whose MD5 another present file has:
-- one row per file, `copies` the number of paths with that content and
-- `distinct_files` the number of distinct files among them (hard links
-- to one inode count once).  Removing all but one copy of each group
-- frees size * (distinct_files - 1) bytes.
CREATE VIEW duplicates AS
WITH cand AS (
    -- the MD5s found twice or more, from files_by_md5 alone (no row read)
    SELECT md5 AS c_md5 FROM files WHERE md5 IS NOT NULL GROUP BY md5 HAVING count(*) > 1
), grp AS (
    -- of those, the groups still twice or more among present, non-empty files
    SELECT md5 AS g_md5, count(*) AS copies, count(DISTINCT dev || ':' || ino) AS distinct_files
    FROM files
    WHERE md5 IN (SELECT c_md5 FROM cand) AND state <> 'missing' AND size > 0
    GROUP BY md5 HAVING count(*) > 1
)
SELECT lower(hex(f.md5)) AS md5, f.size AS size, g.copies AS copies, g.distinct_files AS distinct_files,
       f.id AS id, i.path AS path
FROM grp g
JOIN files f ON f.md5 = g.g_md5 AND f.state <> 'missing' AND f.size > 0
JOIN file_info i ON i.id = f.id;

-- `photoidx ls --near` and front ends' map views: positions by latitude.
CREATE INDEX meta_by_gps ON meta (gps_lat, gps_lon) WHERE gps_lat IS NOT NULL;
