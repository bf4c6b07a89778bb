-- 0008: a stand-in, in this branch only, for the near-duplicates
-- migration another branch adds as 0008 (it adds to `thumbs` and a view
-- of its own): migrations are numbered without gaps (schema/embed.sh),
-- and 0009 (the photographer's metadata) is written to follow that one.
-- When both branches are merged, this file goes: two files numbered 0008
-- fail the build (embed.sh), so it cannot be forgotten.
SELECT 1;
