# photoidx: a photo and media catalog indexer.  See README.md.
#
#   make                 build ./photoidx
#   make check           unit and CLI tests (TAP; ends with "N passed, N failed")
#   make check SANITIZE=1   the same tests on an AddressSanitizer + UBSan build
#   make check-pg        the CLI tests with every catalog on PostgreSQL
#   make check-valgrind  the same tests with photoidx under valgrind
#   make stress          the kill -9 test with 200 trials, concurrency, hostile input
#   make bench           benchmarks (never part of check)
#   make install         into $(PREFIX) (default /usr/local)
#   make WITH_PG=0       a SQLite-only photoidx, without libpq

VERSION = 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=

PKGS = glib-2.0 gio-2.0 sqlite3 libcrypto blkid liburing libjpeg libpng libwebp libheif zlib
# PostgreSQL catalogs need libpq: WITH_PG=0 (the default where libpq's
# pkg-config file is missing) builds a SQLite-only photoidx (db-nopg.c in
# place of db-pg.c)
WITH_PG ?= $(shell pkg-config --exists libpq && echo 1 || echo 0)
ifeq ($(WITH_PG),1)
PKGS += libpq
NOT_BUILT = src/db-nopg.c
else
NOT_BUILT = src/db-pg.c
endif
CC ?= cc
CFLAGS ?= -O2 -g
PIX_CFLAGS = -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -DPIX_VERSION=\"$(VERSION)\" \
	-iquote src $(shell pkg-config --cflags $(PKGS)) -pthread
LIBS = $(shell pkg-config --libs $(PKGS)) -pthread -lm

ifeq ($(SANITIZE),1)
BUILD = build-san
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
BUILD = build
endif

SRC = $(filter-out $(NOT_BUILT),$(wildcard src/*.c))
OBJ = $(SRC:src/%.c=$(BUILD)/%.o) $(BUILD)/schema.o $(BUILD)/schema-fresh.o $(BUILD)/schema-pg.o
LIB_OBJ = $(filter-out $(BUILD)/main.o $(BUILD)/cmd-%.o,$(OBJ))
BIN = $(BUILD)/photoidx

all: photoidx

photoidx: $(BIN)
ifneq ($(SANITIZE),1)
	cp $(BIN) photoidx
endif

$(BIN): $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ) $(LIBS)

# each object depends on the headers it includes (-MMD writes them to
# .d); an object without its .d (built before) is built again, which the
# .d files' being named targets (not intermediate files) makes happen
DEPS = $(SRC:src/%.c=$(BUILD)/%.d)
$(BUILD)/%.o: src/%.c $(BUILD)/%.d | $(BUILD)
	$(CC) $(CFLAGS) $(PIX_CFLAGS) -MMD -MP -c -o $@ $<

$(DEPS):
-include $(wildcard $(DEPS) $(BUILD)/tests/*.d)

$(BUILD)/schema.c: schema/embed.sh $(wildcard schema/[0-9]*.sql) | $(BUILD)
	sh schema/embed.sh $(sort $(wildcard schema/[0-9]*.sql)) > $@.tmp && mv $@.tmp $@

# a new catalog's schema in one go: what the migrations make, found at
# build time by applying them (schema/fresh.c)
$(BUILD)/schema-fresh-gen: schema/fresh.c | $(BUILD)
	$(CC) $(CFLAGS) -Wall -Wextra -o $@ $< $(shell pkg-config --cflags --libs sqlite3)

$(BUILD)/schema-fresh.c: $(BUILD)/schema-fresh-gen $(wildcard schema/[0-9]*.sql) | $(BUILD)
	$(BUILD)/schema-fresh-gen $(sort $(wildcard schema/[0-9]*.sql)) > $@.tmp && mv $@.tmp $@

$(BUILD)/schema-fresh.o: $(BUILD)/schema-fresh.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/schema-pg.c: schema/embed.sh $(wildcard schema/pg/[0-9]*.sql) | $(BUILD)
	NAME=pix_schema_pg sh schema/embed.sh $(sort $(wildcard schema/pg/[0-9]*.sql)) > $@.tmp && mv $@.tmp $@

$(BUILD)/schema-pg.o: $(BUILD)/schema-pg.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/schema.o: $(BUILD)/schema.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)/tests

# --- tests ---------------------------------------------------------------

# Every tests/unit/test-NAME.c is a unit test; each links what it uses of
# the library objects (everything but main and the commands).
UNIT_TESTS = $(patsubst tests/unit/test-%.c,%,$(wildcard tests/unit/test-*.c))
UNIT_BINS = $(UNIT_TESTS:%=$(BUILD)/tests/test-%)
TOOLS = $(BUILD)/tests/mkfixture

# the library objects in an archive: a test links only what it uses
LIB = $(BUILD)/libphotoidx.a
$(LIB): $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $(LIB_OBJ)

$(BUILD)/tests/test-%: tests/unit/test-%.c $(LIB) | $(BUILD)
	$(CC) $(CFLAGS) $(PIX_CFLAGS) -MMD -MP -Itests/unit -o $@ $< $(LIB) $(LDFLAGS) $(LIBS)

$(BUILD)/tests/mkfixture: tests/tools/mkfixture.c | $(BUILD)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -o $@ $< $(LDFLAGS) -lm

# what every test pass is told: the photoidx it tests (the build's own, not
# ./photoidx, which only plain "make" copies), the fixture tool, the build
TEST_ENV = PHOTOIDX=$(CURDIR)/$(BIN) MKFIXTURE=$(CURDIR)/$(TOOLS) BUILD_DIR=$(CURDIR)/$(BUILD) \
	SANITIZE=$(SANITIZE)

check: $(BIN) $(UNIT_BINS) $(TOOLS)
	@$(TEST_ENV) sh tests/run-tests.sh $(UNIT_BINS) tests/cli/t[0-9]*.sh

# make check-pg: the CLI tests again, each script's catalogs on a
# PostgreSQL cluster of its own (PIX_TEST_BACKEND=pg, tests/cli/lib.sh);
# the unit tests do not touch a catalog backend.
check-pg: $(BIN) $(TOOLS)
	@$(TEST_ENV) PIX_TEST_BACKEND=pg sh tests/run-tests.sh tests/cli/t[0-9]*.sh

# make check-valgrind: the CLI tests with every photoidx they run through
# px under valgrind; an error or a definite leak fails the test.  (The unit
# tests' hostile loops take hours under valgrind: SANITIZE=1 covers them.)
check-valgrind: $(BIN) $(TOOLS)
	@$(TEST_ENV) PIX_TEST_VALGRIND=1 sh tests/run-tests.sh tests/cli/t[0-9]*.sh

# make stress: the kill -9 test with PIX_KILL_TRIALS trials (default 200)
# and the other tests of what must survive concurrency and hostile input.
PIX_KILL_TRIALS ?= 200
stress: $(BIN) $(TOOLS)
	@$(TEST_ENV) PIX_KILL_TRIALS=$(PIX_KILL_TRIALS) sh tests/run-tests.sh $(wildcard tests/cli/t1006-*.sh tests/cli/t1016-*.sh tests/cli/t1017-*.sh tests/cli/t1018-*.sh)

# --- fuzzing (never part of check): see fuzz/README -----------------------

-include fuzz/fuzz.mk

# --- benchmarks (never part of check) -------------------------------------

# bench/readlimit.c: the read limit photoidx is measured against
$(BUILD)/bench/readlimit: bench/readlimit.c | $(BUILD)
	mkdir -p $(BUILD)/bench
	$(CC) -O2 -std=gnu11 -Wall -Wextra -pthread -o $@ $<

# bench/phash-eval.c: the perceptual hashes compared on the variant corpus
$(BUILD)/bench/phash-eval: bench/phash-eval.c src/phash.c src/phash.h | $(BUILD)
	mkdir -p $(BUILD)/bench
	$(CC) -O2 -std=gnu11 -Wall -Wextra -iquote src $(shell pkg-config --cflags glib-2.0) -o $@ bench/phash-eval.c \
		src/phash.c $(shell pkg-config --libs glib-2.0)

bench: $(BIN) $(TOOLS) $(BUILD)/bench/readlimit $(BUILD)/bench/phash-eval
	PHOTOIDX=$(CURDIR)/$(BIN) MKFIXTURE=$(CURDIR)/$(TOOLS) READLIMIT=$(CURDIR)/$(BUILD)/bench/readlimit \
		PHASH_EVAL=$(CURDIR)/$(BUILD)/bench/phash-eval sh bench/run.sh

# --- install ---------------------------------------------------------------

install: photoidx
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 photoidx $(DESTDIR)$(PREFIX)/bin/photoidx
	install -m 644 doc/photoidx.1 $(DESTDIR)$(PREFIX)/share/man/man1/photoidx.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 contrib/bash-completion/photoidx $(DESTDIR)$(PREFIX)/share/bash-completion/completions/photoidx

clean:
	rm -rf build build-san build-fuzz photoidx

.PHONY: all photoidx check check-pg check-valgrind stress bench install clean
.DELETE_ON_ERROR:
