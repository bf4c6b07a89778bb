-- pg-compat.sql: test-only functions in every PostgreSQL catalog a CLI
-- test makes under PIX_TEST_BACKEND=pg (pg-catalogs.sh), so that the
-- tests' own SQL, written in SQLite's words, reads the same on both
-- backends.  photoidx itself never calls them; they are not part of the
-- catalog (doc/schema.md).  A test that needs what SQLite alone has
-- (typeof, PRAGMA) says so with test_sqlite_only.

-- hex(X): upper-case hex of the bytes, as SQLite's
CREATE FUNCTION hex(b bytea) RETURNS text IMMUTABLE STRICT LANGUAGE sql
    AS $$ SELECT upper(encode(b, 'hex')) $$;
CREATE FUNCTION hex(t text) RETURNS text IMMUTABLE STRICT LANGUAGE sql
    AS $$ SELECT upper(encode(convert_to(t, 'UTF8'), 'hex')) $$;

-- group_concat(X [, SEP]): as SQLite's (NULLs skipped, ',' by default)
CREATE FUNCTION pixtest_concat(acc text, v text, sep text) RETURNS text IMMUTABLE LANGUAGE sql
    AS $$ SELECT CASE WHEN v IS NULL THEN acc WHEN acc IS NULL THEN v ELSE acc || sep || v END $$;
CREATE FUNCTION pixtest_concat(acc text, v text) RETURNS text IMMUTABLE LANGUAGE sql
    AS $$ SELECT pixtest_concat(acc, v, ',') $$;
CREATE AGGREGATE group_concat(text) (SFUNC = pixtest_concat, STYPE = text);
CREATE AGGREGATE group_concat(text, text) (SFUNC = pixtest_concat, STYPE = text);
