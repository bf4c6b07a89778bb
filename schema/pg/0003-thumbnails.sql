-- PostgreSQL schema version 3 (issue 26): thumbnails, by content, as in
-- SQLite's 0007-thumbnails.sql (its comments hold for both).  In the
-- shared catalog, so that every host's front end sees every host's
-- thumbnails, and a content one host decoded is never decoded by another.
CREATE TABLE thumbs (
    md5            bytea NOT NULL,
    size           bigint NOT NULL,
    version        integer NOT NULL,
    source         text,
    note           text,
    large_width    integer,
    large_height   integer,
    large_jpeg     bytea,
    xlarge_width   integer,
    xlarge_height  integer,
    xlarge_jpeg    bytea,
    made_at        bigint NOT NULL,
    PRIMARY KEY (md5, size)
);
-- the JPEGs are compressed already
ALTER TABLE thumbs ALTER COLUMN large_jpeg SET STORAGE EXTERNAL;
ALTER TABLE thumbs ALTER COLUMN xlarge_jpeg SET STORAGE EXTERNAL;

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
