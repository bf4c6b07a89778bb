-- 0010: titles and captions found in any case (issue 28's --text).
--
-- SQLite's LIKE folds ASCII letters only and PostgreSQL's ILIKE folds by
-- the server's locale, so "ærø" found "ÆRØ" on one backend and not on the
-- other, and neither found "Straße" for "STRASSE".  Each title and
-- caption now has a key beside it, folded by photoidx (Unicode case
-- folding, as the keys of `keywords` and `people` are), and --text
-- compares the folded word with the keys, on either backend.
--
-- Invariant: title_key is NULL exactly when title is, and is then the
-- case-folded title; the same for caption_key and caption.  The upgrade
-- fills them for the rows already there from the stored texts (photoidx
-- does it in the migration's transaction: no file is read).

ALTER TABLE meta ADD COLUMN title_key TEXT;       -- title, case-folded (Unicode)
ALTER TABLE meta ADD COLUMN caption_key TEXT;     -- caption, case-folded (Unicode)

-- Each file's title and caption keys as they count for it: its sidecar's
-- where the sidecar gives the field, else its own (as file_info's title
-- and caption).
CREATE VIEW file_text_keys AS
SELECT f.id AS file_id,
       coalesce(s.title_key, m.title_key)     AS title_key,
       coalesce(s.caption_key, m.caption_key) AS caption_key
FROM files f
LEFT JOIN meta m ON m.file_id = f.id
LEFT JOIN meta s ON s.file_id = f.sidecar_id;
