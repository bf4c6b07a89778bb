-- 0003: every format a camera or phone writes (issue 6): video fields,
-- XMP sidecars linked to their images, and a re-read of the files whose
-- formats photoidx now understands.

-- Video (and audio) duration, seconds; NULL for stills.
ALTER TABLE meta ADD COLUMN duration_s REAL;
-- Videos: the OpenSubtitles hash, 16 lowercase hex digits (the file size
-- plus the 64-bit little-endian sums of its first and last 64 KiB), which
-- media servers use to find subtitles.
ALTER TABLE meta ADD COLUMN osdb_hash TEXT;

-- An image, RAW file or video: the XMP sidecar beside it (files.id), by
-- name: IMG_1.CR2.xmp (darktable, digiKam) or IMG_1.xmp (Lightroom),
-- .xmp or .XMP, the longer name first; NULL without one.  Kept by the
-- writer, before each commit, for the files the batch wrote.
ALTER TABLE files ADD COLUMN sidecar_id INTEGER REFERENCES files(id);
-- What the file's meta row holds from its sidecar rather than its own
-- content: bit 1, the date (date_taken, date_tz, date_source); bit 2, the
-- position (gps_lat, gps_lon, gps_alt_m).  Lent only where the file has
-- none of its own, and taken back when the sidecar goes or changes.
ALTER TABLE meta ADD COLUMN lent INTEGER NOT NULL DEFAULT 0;

-- The lookups of sidecars in a directory.
CREATE INDEX files_sidecars ON files (dir_id, name) WHERE media = 'sidecar' AND state <> 'missing';
CREATE INDEX files_with_sidecar ON files (dir_id) WHERE sidecar_id IS NOT NULL;
CREATE INDEX files_by_sidecar ON files (sidecar_id) WHERE sidecar_id IS NOT NULL;

-- Files read before this version whose metadata photoidx can now read
-- (RAW, HEIF, PNG, WebP, video, sidecars, including the XMP sidecars
-- that opened with "<?xml" and were typed 'other'; JPEGs without a date,
-- which may have one in XMP) are read again by the next scan.  Not a file
-- whose verification found its content changed ('mismatch'): reading it
-- would replace the MD5 it had with the damaged content's.
UPDATE files SET recheck = 1
WHERE state <> 'missing' AND md5 IS NOT NULL AND verify_state IS NOT 'mismatch'
  AND (media IN ('raw', 'video', 'sidecar')
       OR (media = 'image' AND mime <> 'image/jpeg')
       OR (media = 'other' AND lower(name) LIKE '%.xmp')
       OR (mime = 'image/jpeg' AND NOT EXISTS
           (SELECT 1 FROM meta m WHERE m.file_id = files.id AND m.date_taken IS NOT NULL)));

-- file_info, as in 0002, plus duration_s, osdb_hash and sidecar_id.
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
    m.date_taken, m.date_tz, m.date_source,
    m.make, m.model, m.lens,
    m.exposure_s, m.fnumber, m.iso, m.focal_mm, m.orientation,
    m.width, m.height,
    m.gps_lat, m.gps_lon, m.gps_alt_m,
    m.duration_s                          AS duration_s,
    m.osdb_hash                           AS osdb_hash,
    f.sidecar_id                          AS sidecar_id
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN meta m ON m.file_id = f.id;
