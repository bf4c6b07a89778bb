# fuzz/fuzz.mk: libFuzzer targets, one per metadata parser (see
# fuzz/README.md).  Included by the Makefile; never part of `make check`.
#
#   make fuzz-build                 build every target into build-fuzz/
#   make fuzz                       ... and run each for FUZZ_SECONDS (60)
#   make fuzz FUZZ_TARGETS="png riff" FUZZ_SECONDS=600
#   make fuzz-seeds                 only (re)build the seed corpora
#   make fuzz-clean                 remove build-fuzz/ (corpora and crashes too)
#
# The project's library objects (src/*.c but main.c, cmd-*.c and store.c)
# are built again with clang and the sanitizers into build-fuzz/obj/ and
# archived, so a target links only the objects it needs.

FUZZ_CC ?= clang
FUZZ_BUILD = build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)

# one per parser, the whole PixMetaParser, and the thumbnail maker's glue
# around each decoder (fuzz/fuzz.h)
FUZZ_TARGETS ?= jpeg tiff bmff png riff raf mrw crw x3f xmp meta thumbjpeg thumbpng thumbwebp thumbheif thumbraw

# The library objects, less the store (SQLite), which no parser reaches:
# it is not fuzzed, and its build must not stand in the way of those that
# are.
FUZZ_SRC = $(filter-out src/main.c src/cmd-%.c src/store.c,$(wildcard src/*.c))
FUZZ_OBJ = $(FUZZ_SRC:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build fuzz-seeds
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_TARGETS)

fuzz-seeds: $(FUZZ_BUILD)/mkseeds $(TOOLS)
	@FUZZ_BUILD=$(FUZZ_BUILD) MKFIXTURE=$(CURDIR)/$(TOOLS) sh fuzz/seeds.sh $(FUZZ_TARGETS)

$(FUZZ_BUILD)/fuzz-%: fuzz/fuzz-%.c fuzz/fuzz.h $(FUZZ_BUILD)/libpix.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PIX_CFLAGS) -o $@ $< $(FUZZ_BUILD)/libpix.a $(LIBS)

$(FUZZ_BUILD)/libpix.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJ)

$(FUZZ_BUILD)/obj/%.o: src/%.c src/*.h | $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PIX_CFLAGS) -c -o $@ $<

# hand-made seeds for formats without samples (plain cc: not fuzzed)
$(FUZZ_BUILD)/mkseeds: fuzz/mkseeds.c | $(FUZZ_BUILD)/obj
	$(CC) -O1 -std=gnu11 -Wall -Wextra -o $@ $<

$(FUZZ_BUILD)/obj:
	mkdir -p $@

fuzz-clean:
	rm -rf $(FUZZ_BUILD)

.PHONY: fuzz fuzz-build fuzz-seeds fuzz-clean
