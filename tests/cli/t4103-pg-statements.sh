#!/bin/sh
# Every statement of the store's table prepares on PostgreSQL as on
# SQLite (the unit test /store/every-statement-prepares-pg, given a fresh
# database of a throwaway cluster): a dialect mistake fails here, not at
# the first run that reaches the statement.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/pg-lib.sh"
pg_own_cluster

test_expect_success 'every statement of the table prepares on PostgreSQL, for a writer and a reader' '
	uri=$(pg_db statements) &&
	PIX_TEST_PG_URI=$uri "$REPO/build/tests/test-store" --tap --verbose -p /store/every-statement-prepares-pg >out 2>&1 ||
		{ cat out; false; } &&
	cat out &&
	grep -q "^ok 1 /store/every-statement-prepares-pg$" out &&
	grep -q "statements prepared on postgresql://" out
'

test_done
