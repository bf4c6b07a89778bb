-- 0005: volumes (issue 14).  A library on an external disk, a camera card
-- or a NAS share keeps its records wherever it is mounted: every directory
-- belongs to a volume, named by its file system's UUID (else its label,
-- else its mount source), and is stored as the volume plus its path
-- relative to the volume's root.  dirs.path stays the full path, at the
-- mount point where the volume was last seen; photoidx rewrites it when
-- the volume turns up elsewhere, and writes one 'remounted' change then.
--
-- The tables that change their keys (roots, dirs) or constraints
-- (changes) are made anew and their rows copied, ids kept (the SQLite
-- procedure for altering a table; photoidx runs migrations with
-- foreign_keys off).  The rows of directories and roots made before this
-- version have no volume yet: the first writer to open the catalog places
-- them (see store.c, place_legacy()) on the volume mounted where they are,
-- without reading a file.  Applied in one transaction.  Never edit once
-- released.

-- SQLite checks every view when a table is altered: drop them first.
DROP VIEW duplicates;
DROP VIEW photos;
DROP VIEW file_info;

-- One row per volume ever seen.  (kind, ident) is its identity:
--   'uuid'   ident = the file system's UUID as blkid prints it (FAT: its
--            serial, "1234-ABCD"), with ":subvolid=N" for a btrfs subvolume;
--   'label'  ident = its label (a file system without a UUID);
--   'source' ident = the mount source of a network or FUSE file system
--            ("server:/export", "user@host:/path", "//server/share");
--   'mount'  ident = "TYPE:SOURCE:MOUNTPOINT" for one with none of these
--            (tmpfs, overlay): it is the same volume only at that place.
-- Invariant: is_online is 1 exactly when the last writer to look (at the
-- start of each run, and each pass of a watch) found it mounted; its
-- mount_point, mount_root and dev are then where it was found.
CREATE TABLE volumes (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('uuid', 'label', 'source', 'mount')),
    ident         TEXT NOT NULL,
    uuid          TEXT,                -- the UUID alone, when kind is 'uuid'
    label         TEXT,                -- the file system label, when it has one
    fstype        TEXT,                -- 'ext4', 'vfat', 'fuse.sshfs', 'nfs4' ...
    source        TEXT,                -- the mount source last seen ('/dev/sdb1')
    mount_point,                       -- where it was last seen mounted (bytes, as paths)
    mount_root    TEXT NOT NULL DEFAULT '', -- the part of it mounted there, relative
                                       -- to its root ('' for all of it: a bind
                                       -- mount of a subdirectory shows less)
    dev           INTEGER,             -- st_dev where it was last seen
    is_online     INTEGER NOT NULL DEFAULT 1, -- 1 mounted at the last look, 0 offline
    first_seen_at INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL,    -- the last look that found it mounted
    last_scan_at  INTEGER,             -- end of the last run that walked a root on it
    UNIQUE (kind, ident)
);

-- The roots, as volume + path relative to its root; `path` is the full
-- path at the volume's last mount point.  volume_id and rel_path are NULL
-- only for a root of an older catalog not yet placed.
CREATE TABLE roots_new (
    id            INTEGER PRIMARY KEY,
    volume_id     INTEGER REFERENCES volumes(id),
    rel_path,                          -- relative to the volume's root ('' for it)
    path          NOT NULL,            -- absolute, canonical, where it was last seen
    first_scan_at INTEGER NOT NULL,
    last_scan_at  INTEGER,
    UNIQUE (volume_id, rel_path)
);
INSERT INTO roots_new (id, path, first_scan_at, last_scan_at)
    SELECT id, path, first_scan_at, last_scan_at FROM roots;
DROP TABLE roots;
ALTER TABLE roots_new RENAME TO roots;

-- Directories: (volume_id, rel_path) is the identity and is unique; path
-- is no longer unique (an offline card's directories keep their paths
-- while another card is mounted at the same place).
CREATE TABLE dirs_new (
    id             INTEGER PRIMARY KEY,
    parent_id      INTEGER REFERENCES dirs(id),
    volume_id      INTEGER REFERENCES volumes(id),
    rel_path,                          -- relative to the volume's root, bytes as path
    path           NOT NULL,           -- absolute, at the volume's last mount point
    dev            INTEGER,
    ino            INTEGER,
    mtime_ns       INTEGER,
    ctime_ns       INTEGER,
    state          TEXT NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'error', 'missing')),
    error          TEXT,
    scanned_at     INTEGER,
    listed_scan_id INTEGER REFERENCES scans(id),
    fsid           INTEGER,
    UNIQUE (volume_id, rel_path)
);
INSERT INTO dirs_new (id, parent_id, path, dev, ino, mtime_ns, ctime_ns, state, error, scanned_at,
                      listed_scan_id, fsid)
    SELECT id, parent_id, path, dev, ino, mtime_ns, ctime_ns, state, error, scanned_at,
           listed_scan_id, fsid FROM dirs;
DROP TABLE dirs;
ALTER TABLE dirs_new RENAME TO dirs;
CREATE INDEX dirs_by_path ON dirs (path);
CREATE INDEX dirs_by_parent ON dirs (parent_id);

-- The change log gains the volumes' own entries, which name no file:
--   'remounted'  the volume was found at a new mount point or device
--                (old_path, new_path: the mount points);
--   'offline'    found not mounted (old_path: where it was);
--   'online'     found mounted again where it was (new_path);
-- and 'forgotten': `photoidx forget` removed the file's row (old_path:
-- its path; file_id names the row that is gone).
-- seq values are kept, and the AUTOINCREMENT counter with them.
CREATE TABLE changes_new (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    scan_id   INTEGER REFERENCES scans(id),
    file_id   INTEGER,                 -- NULL for a volume's entry
    volume_id INTEGER REFERENCES volumes(id), -- set for a volume's entry
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('added', 'changed', 'moved', 'missing', 'restored',
                                            'remounted', 'offline', 'online', 'forgotten')),
    old_path,
    new_path,
    old_md5   BLOB,
    new_md5   BLOB,
    old_size  INTEGER,
    new_size  INTEGER
);
INSERT INTO changes_new (seq, scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5,
                         old_size, new_size)
    SELECT seq, scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5, old_size, new_size
    FROM changes;
CREATE TABLE temp.seq_kept AS SELECT seq FROM sqlite_sequence WHERE name = 'changes';
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM temp.seq_kept), 0))
    WHERE name = 'changes';
DROP TABLE temp.seq_kept;
CREATE INDEX changes_by_file ON changes (file_id);

-- file_info, as in 0003, with state 'offline' for the files of a volume
-- found not mounted (files.state keeps what the file was: 'ok' or
-- 'error'), and three columns at the end: volume (volumes.ident),
-- volume_label, rel_path (relative to the volume's root).
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
         ELSE CAST(CAST(d.rel_path AS TEXT) || '/' || f.name AS BLOB) END AS rel_path
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN volumes v ON v.id = d.volume_id
LEFT JOIN meta m ON m.file_id = f.id;

-- photos, as in 0004 (offline photos included: a front end shows them,
-- and their state says where they are), plus volume and rel_path.
CREATE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id, volume, rel_path
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

-- duplicates, as in 0004, among the files not missing: the copies on an
-- offline volume count (they exist, on a disk not plugged in); `state`
-- says which are offline and `volume` where each is.
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
