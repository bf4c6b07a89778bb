-- 0006: the EXIF fields a front end's own database asks for (KPhotoAlbum's
-- exif-info.db, issue 16): exposure settings, the GPS fix's time and the
-- camera's heading, and the picture's description.  Unknown is NULL, as
-- for the other columns.  Rows written before this migration have them
-- NULL until their file is read again (a change, a recheck, or
-- `photoidx scan --reread`): the upgrade reads no file.
ALTER TABLE meta ADD COLUMN aperture REAL;          -- ApertureValue, APEX (as EXIF stores it: f-number = 2^(aperture/2))
ALTER TABLE meta ADD COLUMN exposure_program INTEGER; -- EXIF ExposureProgram 0..8 (1 manual, 2 program, 3 aperture priority ...)
ALTER TABLE meta ADD COLUMN metering_mode INTEGER;  -- EXIF MeteringMode 0..6, 255 (other)
ALTER TABLE meta ADD COLUMN flash INTEGER;          -- EXIF Flash, the bit field as stored (bit 0: fired)
ALTER TABLE meta ADD COLUMN gps_time TEXT;          -- the GPS fix's time, UTC: 'YYYY-MM-DDTHH:MM:SS[.f]Z' with GPSDateStamp, else 'HH:MM:SS[.f]'
ALTER TABLE meta ADD COLUMN gps_direction REAL;     -- GPSImgDirection, degrees 0 <= d < 360 (the way the camera faced)
ALTER TABLE meta ADD COLUMN gps_direction_ref TEXT; -- 'T' true north, 'M' magnetic north (GPSImgDirectionRef), NULL when not given
ALTER TABLE meta ADD COLUMN description TEXT;       -- ImageDescription (EXIF) or dc:description (XMP), trimmed

-- file_info, photos and duplicates as in 0005, file_info and photos with
-- the new columns at their end (SQLite checks every view when a table is
-- altered: the dependents are dropped first and created again).
DROP VIEW duplicates;
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
    m.gps_time, m.gps_direction, m.gps_direction_ref, m.description
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN volumes v ON v.id = d.volume_id
LEFT JOIN meta m ON m.file_id = f.id;

-- photos, as in 0005, plus the new columns.
CREATE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id, volume, rel_path,
       aperture, exposure_program, metering_mode, flash,
       gps_time, gps_direction, gps_direction_ref, description
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

-- duplicates, as in 0005.
CREATE VIEW duplicates AS
WITH cand AS (
    SELECT md5 AS c_md5 FROM files WHERE md5 IS NOT NULL GROUP BY md5 HAVING count(*) > 1
), grp AS (
    SELECT md5 AS g_md5, count(*) AS copies, count(DISTINCT dev || ':' || ino) AS distinct_files
    FROM files
    WHERE md5 IN (SELECT c_md5 FROM cand) AND state <> 'missing' AND size > 0
    GROUP BY md5 HAVING count(*) > 1
)
SELECT lower(hex(f.md5)) AS md5, f.size AS size, g.copies AS copies, g.distinct_files AS distinct_files,
       f.id AS id, i.path AS path, i.state AS state, i.volume AS volume
FROM grp g
JOIN files f ON f.md5 = g.g_md5 AND f.state <> 'missing' AND f.size > 0
JOIN file_info i ON i.id = f.id;
