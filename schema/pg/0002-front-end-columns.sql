-- PostgreSQL schema version 2 (issue 25): front ends see the columns
-- SQLite's catalog has, any path a kernel accepts can be indexed, and a
-- volume's label, identity and mount source are kept as their bytes.
--
-- Why:
--  * In version 1 the views gave path, name, dir and rel_path as bytea:
--    a query written for SQLite (WHERE name LIKE '%.jpg', ORDER BY path,
--    the README's) failed or compared bytes with text.  Now they are text,
--    as on SQLite: the exact name where it is valid UTF-8, else its display
--    form, pix_display(), which is what `photoidx ls --json` prints for
--    such a name (log.c's pix_quote(): a byte that is not part of a UTF-8
--    character, a C1 control and an ASCII control as \xNN, '\' as '\\',
--    newline, tab and carriage return as \n, \t, \r).  The exact bytes are
--    in path_bytes, name_bytes, dir_bytes and rel_path_bytes (and
--    volume_bytes, volume_label_bytes), after SQLite's columns.
--    path_text, name_text, dir_text and rel_path_text (NULL where not
--    UTF-8) stay at the very end, for front ends written for version 1.
--    photoidx itself reads the *_bytes columns, or the tables.
--  * A btree index entry holds at most 2704 bytes: a directory whose
--    rel_path was longer (paths go to PATH_MAX, 4096, and longer) failed
--    its scan on UNIQUE (volume_id, rel_path).  The identities of dirs
--    and roots, and of volumes (a 'mount' ident holds a mount point), are
--    now unique on the SHA-256 of the path: photoidx looks a row up by
--    `sha256(rel_path) = sha256($1) AND rel_path = $1`, and its upserts
--    name the index's columns (ON CONFLICT (volume_id, sha256(rel_path))).
--    Two paths with one SHA-256 would be taken for one directory; none is
--    known.  dirs_by_path is on the path's first 1024 bytes, which serve
--    its equality and range lookups alike (a longer path is compared in
--    full after the index).
--  * volumes.ident, label and source were text, which a UTF8 database
--    refuses where the bytes are not UTF-8 (a FAT or ext4 label of a
--    Latin-1 camera, a FUSE or tmpfs mount source): they are bytea now,
--    as paths are, and the views show them as text with pix_display().
--
-- The views are made anew (their columns change type, which CREATE OR
-- REPLACE VIEW cannot do): a view of a front end's own built on them must
-- be dropped before, and made again after, the upgrade.

-- The display form of bytes that are not valid UTF-8, as pix_quote() in
-- src/log.c makes it (the two must change together).
CREATE FUNCTION pix_quote(b bytea) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    out text := '';
    n integer := length(b);
    i integer := 0;
    c integer;
    c1 integer;
    len integer;
    ok boolean;
BEGIN
    WHILE i < n LOOP
        c := get_byte(b, i);
        IF c >= 128 THEN
            -- one valid UTF-8 character (no overlong form, surrogate or
            -- code point above U+10FFFF) is kept; any other byte escaped
            len := CASE WHEN c BETWEEN 194 AND 223 THEN 2 WHEN c BETWEEN 224 AND 239 THEN 3
                        WHEN c BETWEEN 240 AND 244 THEN 4 ELSE 0 END;
            ok := len > 0 AND i + len <= n;
            IF ok THEN
                c1 := get_byte(b, i + 1);
                ok := CASE c WHEN 224 THEN c1 BETWEEN 160 AND 191
                             WHEN 237 THEN c1 BETWEEN 128 AND 159
                             WHEN 240 THEN c1 BETWEEN 144 AND 191
                             WHEN 244 THEN c1 BETWEEN 128 AND 143
                             ELSE c1 BETWEEN 128 AND 191 END;
                FOR k IN 2 .. len - 1 LOOP
                    ok := ok AND get_byte(b, i + k) BETWEEN 128 AND 191;
                END LOOP;
            END IF;
            IF NOT ok THEN
                out := out || '\x' || lpad(to_hex(c), 2, '0');
                len := 1;
            ELSIF c = 194 AND c1 <= 159 THEN
                -- U+0080..U+009F: C1 controls drive terminals too
                out := out || '\x' || to_hex(c) || '\x' || to_hex(c1);
            ELSE
                out := out || convert_from(substring(b FROM i + 1 FOR len), 'UTF8');
            END IF;
            i := i + len;
        ELSE
            out := out || CASE WHEN c = 92 THEN '\\' WHEN c = 10 THEN '\n' WHEN c = 9 THEN '\t'
                               WHEN c = 13 THEN '\r'
                               WHEN c < 32 OR c = 127 THEN '\x' || lpad(to_hex(c), 2, '0')
                               ELSE chr(c) END;
            i := i + 1;
        END IF;
    END LOOP;
    RETURN out;
END
$$;

-- A path, name or label as text: itself where valid UTF-8, else
-- pix_quote()'s display form.  Never NULL for bytes that are not.
CREATE FUNCTION pix_display(b bytea) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
    -- no byte above 0x7f ('escape' writes them as \2NN and \3NN): ASCII,
    -- without the cost of the block below (a subtransaction)
    IF encode(b, 'escape') !~ '\\[23]' THEN
        RETURN convert_from(b, 'UTF8');
    END IF;
    BEGIN
        RETURN convert_from(b, 'UTF8');
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        RETURN pix_quote(b);
    END;
END
$$;

DROP VIEW duplicates;
DROP VIEW photos;
DROP VIEW file_info;

-- identities on the SHA-256 of the path (see the header)
ALTER TABLE roots DROP CONSTRAINT roots_volume_id_rel_path_key;
CREATE UNIQUE INDEX roots_by_volume_path ON roots (volume_id, sha256(rel_path));
ALTER TABLE dirs DROP CONSTRAINT dirs_volume_id_rel_path_key;
CREATE UNIQUE INDEX dirs_by_volume_path ON dirs (volume_id, sha256(rel_path));
DROP INDEX dirs_by_path;
CREATE INDEX dirs_by_path ON dirs (substring(path FROM 1 FOR 1024));

-- a volume's names as their bytes (see the header)
ALTER TABLE volumes DROP CONSTRAINT volumes_kind_ident_key;
ALTER TABLE volumes
    ALTER COLUMN ident TYPE bytea USING convert_to(ident, 'UTF8'),
    ALTER COLUMN label TYPE bytea USING convert_to(label, 'UTF8'),
    ALTER COLUMN source TYPE bytea USING convert_to(source, 'UTF8');
CREATE UNIQUE INDEX volumes_by_ident ON volumes (kind, sha256(ident));

-- One row per file with its full path and metadata: the interface for
-- front ends and scripts, SQLite's columns in SQLite's order, then the
-- exact bytes of the six that are bytes, then version 1's *_text columns.
-- state is 'offline' for the files of a volume found not mounted
-- (files.state keeps what the file was).  path, name, dir, rel_path,
-- volume and volume_label are text: pix_display() of the bytes.
CREATE VIEW file_info AS
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
       pix_text(i.rel_path_bytes) AS rel_path_text
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
    m.gps_time, m.gps_direction, m.gps_direction_ref, m.description
FROM files f
JOIN dirs d ON d.id = f.dir_id
LEFT JOIN volumes v ON v.id = d.volume_id
LEFT JOIN meta m ON m.file_id = f.id
) i;

-- Every image, RAW file and video present on disk (state 'ok', 'offline',
-- or 'error' when only its content is damaged and its MD5 is known or it
-- could not be read at all), with its metadata.  Sidecars and other files
-- are not in it; missing files neither (file_info has them).  SQLite's
-- columns, then the exact bytes, then version 1's *_text columns.
CREATE VIEW photos AS
SELECT id, path, name, dir, size, mtime_ns, md5, mime, media, state, error,
       date_taken, date_tz, date_source, make, model, lens,
       exposure_s, fnumber, iso, focal_mm, orientation, width, height,
       gps_lat, gps_lon, gps_alt_m, duration_s, sidecar_id, volume, rel_path,
       aperture, exposure_program, metering_mode, flash,
       gps_time, gps_direction, gps_direction_ref, description,
       path_bytes, name_bytes, dir_bytes, rel_path_bytes, volume_bytes,
       path_text, name_text, dir_text, rel_path_text
FROM file_info
WHERE media IN ('image', 'raw', 'video') AND state <> 'missing';

-- Files present on disk (or on an offline volume), not empty, whose MD5
-- another such file has: one row per file, `copies` the number of paths
-- with that content and `distinct_files` the number of distinct files
-- among them (hard links to one inode count once).  Removing all but one
-- copy of each group frees size * (distinct_files - 1) bytes.  path and
-- volume are text as in file_info; path_bytes and volume_bytes the bytes;
-- path_text, at the end, version 1's (NULL where not UTF-8).
CREATE VIEW duplicates AS
WITH cand AS (
    -- the MD5s found twice or more, from files_by_md5 alone
    SELECT md5 AS c_md5 FROM files WHERE md5 IS NOT NULL GROUP BY md5 HAVING count(*) > 1
), grp AS (
    -- of those, the groups still twice or more among present, non-empty files
    SELECT md5 AS g_md5, count(*) AS copies,
           count(DISTINCT dev::text || ':' || ino::text) AS distinct_files
    FROM files
    WHERE md5 IN (SELECT c_md5 FROM cand) AND state <> 'missing' AND size > 0
    GROUP BY md5 HAVING count(*) > 1
)
SELECT encode(f.md5, 'hex') AS md5, f.size AS size, g.copies AS copies, g.distinct_files AS distinct_files,
       f.id AS id, i.path AS path, i.state AS state, i.volume AS volume,
       i.path_bytes AS path_bytes, i.volume_bytes AS volume_bytes, i.path_text AS path_text
FROM grp g
JOIN files f ON f.md5 = g.g_md5 AND f.state <> 'missing' AND f.size > 0
JOIN file_info i ON i.id = f.id;
