# photoidx: a photo and media catalog indexer.  See README.md.
#
#   make                 build ./photoidx
#   make check           unit and CLI tests (TAP; ends with "N passed, N failed")
#   make check SANITIZE=1   the same tests on an AddressSanitizer + UBSan build
#   make bench           benchmarks (never part of check)
#   make install         into $(PREFIX) (default /usr/local)

VERSION = 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=

PKGS = glib-2.0 libexif sqlite3 libcrypto
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

SRC = $(wildcard src/*.c)
OBJ = $(SRC:src/%.c=$(BUILD)/%.o) $(BUILD)/schema.o
LIB_OBJ = $(filter-out $(BUILD)/main.o $(BUILD)/cmd-%.o,$(OBJ))
BIN = $(BUILD)/photoidx

all: photoidx

photoidx: $(BIN)
ifneq ($(SANITIZE),1)
	cp $(BIN) photoidx
endif

$(BIN): $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ) $(LIBS)

$(BUILD)/%.o: src/%.c src/*.h | $(BUILD)
	$(CC) $(CFLAGS) $(PIX_CFLAGS) -c -o $@ $<

$(BUILD)/schema.c: schema/embed.sh $(wildcard schema/[0-9]*.sql) | $(BUILD)
	sh schema/embed.sh $(sort $(wildcard schema/[0-9]*.sql)) > $@.tmp && mv $@.tmp $@

$(BUILD)/schema.o: $(BUILD)/schema.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)/tests

# --- tests ---------------------------------------------------------------

# Each unit test links its module and what it cannot do without.
UNIT_TESTS = queue log path walk store meta exif tiff md5 read sched
unit_deps_queue = queue item path log
unit_deps_log = log
unit_deps_path = path
unit_deps_walk = walk queue item path log
unit_deps_store = store queue item path log schema
unit_deps_meta = meta meta-jpeg exif tiff item path log
unit_deps_exif = exif item path log
unit_deps_tiff = tiff log
unit_deps_md5 = md5-lanes hash meta meta-jpeg exif tiff read queue item path log
unit_deps_read = read hash md5-lanes meta meta-jpeg exif tiff queue item path log
unit_deps_sched = sched item path log queue
UNIT_BINS = $(UNIT_TESTS:%=$(BUILD)/tests/test-%)
TOOLS = $(BUILD)/tests/mkfixture

$(BUILD)/tests/test-%: tests/unit/test-%.c tests/unit/testlib.h $(LIB_OBJ) | $(BUILD)
	$(CC) $(CFLAGS) $(PIX_CFLAGS) -Itests/unit -o $@ $< $(foreach d,$(unit_deps_$*),$(BUILD)/$(d).o) $(LDFLAGS) $(LIBS)

$(BUILD)/tests/mkfixture: tests/tools/mkfixture.c | $(BUILD)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -o $@ $< $(LDFLAGS) -lm

check: $(BIN) $(UNIT_BINS) $(TOOLS)
	@PHOTOIDX=$(CURDIR)/$(BIN) MKFIXTURE=$(CURDIR)/$(TOOLS) BUILD_DIR=$(CURDIR)/$(BUILD) \
	  SANITIZE=$(SANITIZE) sh tests/run-tests.sh $(UNIT_BINS) tests/cli/t[0-9]*.sh

# --- benchmarks (never part of check) -------------------------------------

bench: $(BIN) $(TOOLS)
	PHOTOIDX=$(CURDIR)/$(BIN) MKFIXTURE=$(CURDIR)/$(TOOLS) sh bench/run.sh

# --- install ---------------------------------------------------------------

install: photoidx
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 photoidx $(DESTDIR)$(PREFIX)/bin/photoidx
	install -m 644 doc/photoidx.1 $(DESTDIR)$(PREFIX)/share/man/man1/photoidx.1

clean:
	rm -rf build build-san photoidx

.PHONY: all photoidx check bench install clean
.DELETE_ON_ERROR:
