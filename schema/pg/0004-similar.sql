-- PostgreSQL schema version 4 (issue 27): perceptual hashes beside the
-- thumbnails, as SQLite's 0008-similar.sql (its comments hold for both).
ALTER TABLE thumbs ADD COLUMN phash bigint;
ALTER TABLE thumbs ADD COLUMN phash_weak integer;
ALTER TABLE thumbs ADD COLUMN phash_version integer;

CREATE INDEX thumbs_by_phash_version ON thumbs (phash_version);

CREATE VIEW file_phash AS
SELECT
    f.id                                AS id,
    t.phash                             AS phash,
    lpad(to_hex(t.phash), 16, '0')      AS phash_hex,
    t.phash_weak                        AS phash_weak,
    t.phash_version                     AS phash_version
FROM files f
JOIN thumbs t ON t.md5 = f.md5 AND t.size = f.size
WHERE t.phash IS NOT NULL;
