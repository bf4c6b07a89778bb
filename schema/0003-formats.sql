-- 0003: every format a camera or phone writes (issue 6): video fields,
-- XMP sidecars linked to their images, and a re-read of the files whose
-- formats photoidx now understands.

-- Video (and audio) duration, seconds; NULL for stills.
ALTER TABLE meta ADD COLUMN duration_s REAL;
-- Videos: the OpenSubtitles hash, 16 lowercase hex digits (the file size
-- plus the 64-bit little-endian sums of its first and last 64 KiB), which
-- media servers use to find subtitles.
ALTER TABLE meta ADD COLUMN osdb_hash TEXT;

-- Sidecars (media 'sidecar', e.g. IMG_1234.CR2.xmp or IMG_1234.xmp) are
-- found beside their image by name; this index keeps that lookup cheap.
CREATE INDEX files_sidecars ON files (dir_id, name) WHERE media = 'sidecar' AND state <> 'missing';

-- Files read before this version whose metadata photoidx can now read
-- (RAW, HEIF, PNG, WebP, video, sidecars; JPEGs without a date, which may
-- have one in XMP) are read again by the next scan.
UPDATE files SET recheck = 1
WHERE state <> 'missing' AND md5 IS NOT NULL
  AND (media IN ('raw', 'video', 'sidecar')
       OR (media = 'image' AND mime <> 'image/jpeg')
       OR (mime = 'image/jpeg' AND NOT EXISTS
           (SELECT 1 FROM meta m WHERE m.file_id = files.id AND m.date_taken IS NOT NULL)));

-- file_info, as in 0002, plus:
--   duration_s, osdb_hash   from meta;
--   sidecar_id   for an image, RAW or video: the XMP sidecar beside it,
--                named after the whole file name (IMG_1.CR2.xmp, darktable,
--                digiKam) or its stem (IMG_1.xmp, Lightroom), either case
--                of ".xmp"; NULL without one;
--   date_taken, date_tz, date_source, gps_lat, gps_lon, gps_alt_m
--                from the sidecar when the file itself has no date (or no
--                position); date_source then starts with 'XMP sidecar'.
DROP VIEW file_info;
CREATE VIEW file_info AS
WITH fx AS (
    SELECT f.*,
        CASE WHEN f.media IN ('image', 'raw', 'video') THEN
            (SELECT x.id FROM files x
             WHERE x.dir_id = f.dir_id AND x.media = 'sidecar' AND x.state <> 'missing'
               AND x.name IN (f.name || '.xmp', f.name || '.XMP',
                              CASE WHEN instr(f.name, '.') > 1
                                   THEN rtrim(f.name, replace(f.name, '.', '')) || 'xmp' END,
                              CASE WHEN instr(f.name, '.') > 1
                                   THEN rtrim(f.name, replace(f.name, '.', '')) || 'XMP' END)
             ORDER BY length(x.name) DESC LIMIT 1)
        END AS sidecar_id
    FROM files f
)
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
    f.state                               AS state,
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
    coalesce(m.date_taken, x.date_taken)  AS date_taken,
    CASE WHEN m.date_taken IS NOT NULL THEN m.date_tz ELSE x.date_tz END AS date_tz,
    CASE WHEN m.date_taken IS NOT NULL THEN m.date_source
         WHEN x.date_taken IS NOT NULL THEN 'XMP sidecar ' || coalesce(x.date_source, '') END AS date_source,
    m.make, m.model, m.lens,
    m.exposure_s, m.fnumber, m.iso, m.focal_mm, m.orientation,
    m.width, m.height,
    CASE WHEN m.gps_lat IS NOT NULL THEN m.gps_lat ELSE x.gps_lat END AS gps_lat,
    CASE WHEN m.gps_lat IS NOT NULL THEN m.gps_lon ELSE x.gps_lon END AS gps_lon,
    CASE WHEN m.gps_lat IS NOT NULL THEN m.gps_alt_m ELSE x.gps_alt_m END AS gps_alt_m,
    m.duration_s                          AS duration_s,
    m.osdb_hash                           AS osdb_hash,
    f.sidecar_id                          AS sidecar_id
FROM fx f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN meta m ON m.file_id = f.id
LEFT JOIN meta x ON x.file_id = f.sidecar_id;
