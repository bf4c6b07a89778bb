-- photoidx catalog, schema version 1: roots, directories, files, metadata,
-- scans and the change log, plus the `file_info` view for front ends.
--
-- Applied by photoidx in one transaction, after which PRAGMA user_version
-- is 1.  Never edit this file once released: a change to the schema is a
-- new numbered file.  doc/schema.md documents every table, view and column.
--
-- Conventions (invariants every writer keeps):
--  * Paths and names are the exact bytes the kernel gave.  They are stored
--    as TEXT when the bytes are valid UTF-8 and as BLOB otherwise, so a
--    client never receives invalid UTF-8 in a TEXT value.  The columns have
--    no declared type, so SQLite keeps whichever was bound.
--  * *_ns columns are nanoseconds since the Unix epoch; *_at columns are
--    seconds since the Unix epoch (UTC).
--  * A file row is never deleted by a scan: a vanished file becomes
--    state 'missing'.

-- The paths given to `photoidx scan` / `watch`.
CREATE TABLE roots (
    id            INTEGER PRIMARY KEY,
    path          NOT NULL UNIQUE,     -- absolute, canonical (symlinks resolved)
    first_scan_at INTEGER NOT NULL,    -- when a scan first walked it
    last_scan_at  INTEGER              -- end of the last scan that walked all of it
);

-- Every directory a scan listed (or tried to).
CREATE TABLE dirs (
    id         INTEGER PRIMARY KEY,
    parent_id  INTEGER REFERENCES dirs(id),  -- NULL for a scan root
    path       NOT NULL UNIQUE,              -- absolute, no trailing slash
    dev        INTEGER,                      -- st_dev when last listed
    ino        INTEGER,                      -- st_ino when last listed
    mtime_ns   INTEGER,                      -- directory mtime when last listed
    ctime_ns   INTEGER,
    state      TEXT NOT NULL DEFAULT 'ok'
               CHECK (state IN ('ok', 'error', 'missing')),
    error      TEXT,                         -- why it could not be listed (state 'error')
    scanned_at INTEGER                       -- when a scan last listed it
);

-- One row per file path ever indexed.  Invariants:
--  * (dir_id, name) is unique: one row per path.
--  * state 'ok': md5 is the MD5 of the content that had this dev, ino,
--    size and mtime.
--  * state 'error': `error` says what went wrong; md5 is NULL when the
--    content could not be read (the next scan tries again), and set when
--    only the metadata was bad (truncated image, corrupt EXIF).
--  * state 'missing': the path was gone (lstat said ENOENT) at missing_since;
--    the other columns describe the file as it was last seen.
CREATE TABLE files (
    id            INTEGER PRIMARY KEY,
    dir_id        INTEGER NOT NULL REFERENCES dirs(id),
    name          NOT NULL,              -- entry name in the directory
    dev           INTEGER NOT NULL,      -- st_dev
    ino           INTEGER NOT NULL,      -- st_ino
    mode          INTEGER NOT NULL,      -- st_mode (type and permissions)
    size          INTEGER NOT NULL,      -- bytes
    mtime_ns      INTEGER NOT NULL,
    ctime_ns      INTEGER NOT NULL,
    md5           BLOB,                  -- 16 bytes; hex in file_info.md5
    mime          TEXT,                  -- media type from the content, e.g. 'image/jpeg'
    media         TEXT,                  -- 'image', 'raw', 'video', 'sidecar', 'other'
    state         TEXT NOT NULL CHECK (state IN ('ok', 'error', 'missing')),
    error         TEXT,                  -- what went wrong (state 'error')
    recheck       INTEGER NOT NULL DEFAULT 0, -- 1: mtime was within a second of
                                         -- the read, so the next scan reads it
                                         -- again even if nothing seems changed
    first_seen_at INTEGER NOT NULL,      -- when a scan first found the path
    changed_at    INTEGER NOT NULL,      -- when a scan last found it new or different
    hashed_at     INTEGER,               -- when md5 was computed
    missing_since INTEGER,               -- when it was found gone (state 'missing')
    UNIQUE (dir_id, name)
);
CREATE INDEX files_by_inode ON files (dev, ino);
CREATE INDEX files_by_md5 ON files (md5);

-- Metadata read from the file's content; one row per file that has any.
-- Unknown values are NULL.
CREATE TABLE meta (
    file_id     INTEGER PRIMARY KEY REFERENCES files(id),
    date_taken  TEXT,    -- 'YYYY-MM-DDTHH:MM:SS[.fff]', the camera's local time
    date_tz     TEXT,    -- '+HH:MM' / '-HH:MM' offset of date_taken, when recorded
    date_source TEXT,    -- tag it came from: 'DateTimeOriginal', 'CreateDate', 'ModifyDate'
    make        TEXT,
    model       TEXT,
    lens        TEXT,
    exposure_s  REAL,    -- exposure time, seconds
    fnumber     REAL,
    iso         INTEGER,
    focal_mm    REAL,    -- focal length, millimetres (not 35 mm equivalent)
    orientation INTEGER, -- EXIF orientation 1..8
    width       INTEGER, -- pixel width of the image itself (JPEG SOF), not EXIF's claim
    height      INTEGER,
    gps_lat     REAL,    -- signed decimal degrees, north positive
    gps_lon     REAL,    -- signed decimal degrees, east positive
    gps_alt_m   REAL     -- metres above sea level, negative below
);
CREATE INDEX meta_by_date ON meta (date_taken);

-- One row per run of `photoidx scan` (and later watch / verify).
CREATE TABLE scans (
    id          INTEGER PRIMARY KEY,
    command     TEXT NOT NULL,           -- 'scan'
    roots       TEXT NOT NULL,           -- the roots, one per line (display form)
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    state       TEXT NOT NULL CHECK (state IN ('running', 'done', 'interrupted', 'failed', 'killed')),
                                         -- 'killed': found still 'running' by a later run
    n_dirs      INTEGER, n_new INTEGER, n_changed INTEGER, n_moved INTEGER,
    n_missing   INTEGER, n_unchanged INTEGER, n_errors INTEGER,
    bytes_read  INTEGER,                 -- bytes of file data read
    exit_status INTEGER
);

-- The change log: what a front end reads to sync ("what changed since N").
-- seq only grows and is never reused.  A row is written in the same
-- transaction as the change to `files` it describes.
CREATE TABLE changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    scan_id  INTEGER REFERENCES scans(id),
    file_id  INTEGER NOT NULL REFERENCES files(id),
    at       INTEGER NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('added', 'changed', 'moved', 'missing', 'restored')),
                       -- 'restored': a missing file found again at its path
    old_path,          -- 'moved': the path before (full, bytes as in dirs.path)
    new_path,          -- 'moved': the path after
    old_md5  BLOB,     -- 'changed', 'restored': the content's MD5 before
    new_md5  BLOB,     -- 'added', 'changed', 'restored': the MD5 after (NULL if unreadable)
    old_size INTEGER,
    new_size INTEGER
);
CREATE INDEX changes_by_file ON changes (file_id);

-- One row per file with its full path and metadata: the interface for
-- front ends and scripts.  `path` is TEXT when the bytes are valid UTF-8,
-- BLOB otherwise (as the tables store them).
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
    m.date_taken, m.date_tz, m.date_source,
    m.make, m.model, m.lens,
    m.exposure_s, m.fnumber, m.iso, m.focal_mm, m.orientation,
    m.width, m.height,
    m.gps_lat, m.gps_lon, m.gps_alt_m
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN meta m ON m.file_id = f.id;
