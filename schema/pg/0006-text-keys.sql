-- PostgreSQL schema version 6: titles and captions found in any case, as
-- SQLite's 0010 (read it for why and for the invariant): a case-folded key
-- beside each title and caption, filled for the rows already there by
-- photoidx in the migration's transaction, and the view of each file's
-- keys as they count for it.

ALTER TABLE meta
    ADD COLUMN title_key text,          -- title, case-folded (Unicode)
    ADD COLUMN caption_key text;        -- caption, case-folded (Unicode)

CREATE VIEW file_text_keys AS
SELECT f.id AS file_id,
       coalesce(s.title_key, m.title_key)     AS title_key,
       coalesce(s.caption_key, m.caption_key) AS caption_key
FROM files f
LEFT JOIN meta m ON m.file_id = f.id
LEFT JOIN meta s ON s.file_id = f.sidecar_id;
