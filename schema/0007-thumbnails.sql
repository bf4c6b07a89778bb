-- 0007: thumbnails, by content (issue 26).  `photoidx scan --thumbnails`
-- makes them from the same read as the MD5 and the metadata; a file
-- whose content has one (same MD5 and size) is never decoded for it
-- again, wherever that content is moved, copied or plugged in.
--
-- Invariants:
--  * one row per content (md5, size) that a scan with thumbnails read;
--    either `note` is NULL and both renditions are there, or `note` says
--    why none could be made and they are NULL;
--  * renditions are baseline JPEGs in the image's stored pixel order
--    (EXIF orientation not applied: meta.orientation says how to show
--    them), never larger than the image;
--  * a row no file refers to (by md5 and size) is deleted when the last
--    such file changes or is forgotten.
CREATE TABLE thumbs (
    md5            BLOB NOT NULL,      -- 16 bytes: the content's MD5 (files.md5)
    size           INTEGER NOT NULL,   -- the content's size in bytes (files.size)
    version        INTEGER NOT NULL,   -- the maker's version: a note of an older one is tried again
    source         TEXT,               -- what it was made from: 'jpeg' (a DCT-scaled decode of the image)
    note           TEXT,               -- why there is no thumbnail, or NULL
    large_width    INTEGER,            -- the 256 px rendition (freedesktop "large")
    large_height   INTEGER,
    large_jpeg     BLOB,
    xlarge_width   INTEGER,            -- the 512 px rendition (freedesktop "x-large")
    xlarge_height  INTEGER,
    xlarge_jpeg    BLOB,
    made_at        INTEGER NOT NULL,   -- unix seconds
    PRIMARY KEY (md5, size)
) WITHOUT ROWID;

-- For front ends: each file's thumbnails, by the file's id and path.
CREATE VIEW file_thumbnails AS
SELECT
    fi.id            AS id,
    fi.path          AS path,
    fi.orientation   AS orientation,
    t.large_width    AS large_width,
    t.large_height   AS large_height,
    t.large_jpeg     AS large_jpeg,
    t.xlarge_width   AS xlarge_width,
    t.xlarge_height  AS xlarge_height,
    t.xlarge_jpeg    AS xlarge_jpeg,
    t.source         AS source
FROM file_info fi
JOIN files f ON f.id = fi.id
JOIN thumbs t ON t.md5 = f.md5 AND t.size = f.size
WHERE t.note IS NULL;
