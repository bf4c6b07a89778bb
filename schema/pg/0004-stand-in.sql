-- PostgreSQL schema version 4: a stand-in, in this branch only, for the
-- near-duplicates migration another branch adds as version 4 (it adds to
-- `thumbs` and a view of its own): migrations are numbered without gaps
-- (schema/embed.sh), and version 5 (the photographer's metadata) is
-- written to follow that one.  When both branches are merged, this file
-- goes: two files numbered 0004 fail the build (embed.sh).
SELECT 1;
