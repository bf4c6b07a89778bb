-- photoidx catalog, schema version 2: `photoidx verify` results on files,
-- what `scan --quick` and moves across file systems need on directories,
-- and the verify columns in `file_info`.
--
-- Applied in one transaction after 0001.  Never edit once released.

-- When `photoidx verify` last read the file and compared it with `md5`,
-- and what it found.  A scan that reads the file again (it changed) clears
-- them: the new MD5 is as fresh as a verification.
ALTER TABLE files ADD COLUMN verified_at INTEGER;
ALTER TABLE files ADD COLUMN verify_state TEXT
    CHECK (verify_state IN ('ok', 'mismatch', 'unreadable'));
    -- 'ok':         the content still has the stored MD5
    -- 'mismatch':   the content changed while size and mtime did not
    --               (bit rot, or an edit that kept the times); md5 keeps
    --               the MD5 the file had, verify_md5 the one found
    -- 'unreadable': reading it failed (verify_error says why)
ALTER TABLE files ADD COLUMN verify_md5 BLOB;   -- 'mismatch': the MD5 verify found
ALTER TABLE files ADD COLUMN verify_error TEXT; -- 'unreadable': the error

-- verify's order: the files verified longest ago first (a file never
-- verified counts from when it was hashed; at the same second, never
-- verified first).
CREATE INDEX files_by_verify ON files
    (coalesce(verified_at, hashed_at, 0), verified_at IS NOT NULL, id)
    WHERE state <> 'missing' AND md5 IS NOT NULL;

-- The run that last listed the directory completely: `scan --quick`
-- trusts a directory's recorded times only when that run finished
-- (state 'done'), and only when the directory's mtime is older than that
-- run's start by two seconds.
ALTER TABLE dirs ADD COLUMN listed_scan_id INTEGER REFERENCES scans(id);
-- statfs f_fsid of the directory's file system when listed (a 64-bit
-- integer; NULL if unknown).  With st_dev, it tells a disk that is still
-- mounted from another disk mounted at the same place with the same
-- device number (removable disks reuse them).
ALTER TABLE dirs ADD COLUMN fsid INTEGER;

-- `scan --quick` descends into the known subdirectories of a directory
-- it does not list again.
CREATE INDEX dirs_by_parent ON dirs (parent_id);

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
    m.gps_lat, m.gps_lon, m.gps_alt_m
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN meta m ON m.file_id = f.id;
