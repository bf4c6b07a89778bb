-- 0008: perceptual hashes of the thumbnails, for `photoidx dups
-- --similar` (issue 27).  Kept beside the thumbnail, by content: a copy,
-- a move or a re-plugged disk never computes one again.  Computed from
-- the 256 px rendition's pixels as the thumbnail is made; for a row made
-- before this migration, the next `scan --thumbnails` decodes its stored
-- rendition (not the file).
--
-- Invariants:
--  * phash_version is NULL only on rows this migration found (or rows of
--    a later migration that retires a version): a scan with thumbnails
--    computes theirs; every row photoidx writes has it;
--  * a row with a note has no hash (phash NULL): the note says why there
--    is no rendition to hash;
--  * phash and phash_weak are both NULL or both set.
ALTER TABLE thumbs ADD COLUMN phash INTEGER;          -- the 64 bits of the DCT hash (two's complement), or a weak hash's digest
ALTER TABLE thumbs ADD COLUMN phash_weak INTEGER;     -- 1: weak (a tiny or nearly uniform image): phash is a digest of large_jpeg, equal only for the same rendition
ALTER TABLE thumbs ADD COLUMN phash_version INTEGER;  -- the version of the hash (PIX_PHASH_VERSION) that computed it, or tried and found no rendition

-- the rows whose hash a scan with thumbnails computes: found by this
-- index, not by reading every row's renditions
CREATE INDEX thumbs_by_phash_version ON thumbs (phash_version);

-- For front ends: each file's perceptual hash, by the file's id (join
-- file_info on id for its path and state).
CREATE VIEW file_phash AS
SELECT
    f.id                        AS id,
    t.phash                     AS phash,
    printf('%016x', t.phash)    AS phash_hex,
    t.phash_weak                AS phash_weak,
    t.phash_version             AS phash_version
FROM files f
JOIN thumbs t ON t.md5 = f.md5 AND t.size = f.size
WHERE t.phash IS NOT NULL;
