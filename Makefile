# sluice — top-level Makefile (GNU make). No configure step.
#
#   make                 build libsluice.a and ./sluice (in $(BUILD)/, symlinked to ./sluice)
#   make test            unit tests (cmocka) + end-to-end CLI tests
#   make check-asan      the same tests in an ASan+UBSan build (build-asan/)
#   make check-valgrind  the unit tests under valgrind memcheck
#   make bench           benchmarks side by side with peer tools (bench/*.sh)
#   make fuzz            libFuzzer targets with clang (build-fuzz/)
#   make fuzz-seeds      each fuzz target over its shipped seeds under ASan+UBSan (clang; part of check-asan)
#   make format-check    every .c/.h/.cu/.cuh file is formatted as .clang-format says
#   make format          reformat them (FILES="a.c b.h" for some only)
#   make demo            installs dependencies if needed, builds, runs examples/demo.sh
#   make install PREFIX=/usr/local   binary, man pages, libsluice.a, the public headers
#                        (include/sluice/, sluice.h names them) and sluice.pc (pkg-config)
#   make CUDA=1          also build the CUDA backend (auto when nvcc is on PATH)
#   make cuda-check      SASS for every listed GPU architecture is in the objects
#   make test-cuda       GPU tests against the CPU backend (needs a GPU; skipped otherwise)
#   make bench-cuda      GPU benchmark (needs a GPU)
#
# Sources are discovered: every .c in a module folder goes into libsluice.a, every
# cli/*.c into the binary, every tests/unit/test_*.c becomes one cmocka test program,
# every tests/cli/*.sh is an end-to-end test, every tests/fuzz/fuzz_*.c a fuzz target.
# A module may add flags or targets in its own <module>/module.mk.

# The version lives in sluice.h (SLUICE_VERSION_STRING).
VERSION := $(shell sed -n 's/^\#define SLUICE_VERSION_STRING "\(.*\)"$$/\1/p' sluice.h)
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BUILD   ?= build
CC      ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

MODULES := base stream text tokenize dna audio shard model kernels dedup
WARN    := -Wall -Wextra -Werror
OPT     ?= -O2
CSTD    := -std=c17 -D_GNU_SOURCE
# The tree itself uses the whole API: sluice.h's stable set and the rest,
# which a program outside opts into with SLUICE_UNSTABLE_API (docs/api.md).
CFLAGS_ALL = $(CSTD) $(OPT) -g $(WARN) -fopenmp -I. -DSLUICE_UNSTABLE_API -DSLUICE_VERSION='"$(VERSION)"' $(EXTRA_CFLAGS)
LDLIBS_ALL = -lzstd -lsnappy -lbrotlidec -llz4 -larchive -lpcre2-8 -lsndfile -lsoxr -lxxhash -lz -llzma -lbz2 -lm -lpthread -ldl $(EXTRA_LDLIBS)
LDFLAGS_ALL = -fopenmp $(EXTRA_LDFLAGS)

ifeq ($(SAN),1)
CFLAGS_ALL  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS_ALL += -fsanitize=address,undefined
CUDA := 0
endif

# --- CUDA (optional) ------------------------------------------------------
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(CUDA),)
CUDA := $(if $(NVCC),1,0)
endif

LIB_SRC := $(sort $(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
CLI_SRC := $(sort $(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_SUPPORT_SRC := $(sort $(wildcard tests/unit/support*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT_SRC:%.c=$(BUILD)/%.o)
CLI_TESTS := $(sort $(wildcard tests/cli/*.sh))

# Module fragments may append to LIB_OBJ, LDLIBS_ALL, CUDA objects, bench or fuzz rules.
-include $(wildcard $(addsuffix /module.mk,$(MODULES)) kernels/cuda/cuda.mk)

.PHONY: all test unit-test cli-test check-asan fuzz-seeds check-valgrind bench fuzz demo install clean deps-check help format format-check
all: deps-check $(BUILD)/sluice sluice

help:
	@sed -n '2,/^$$/p' Makefile | sed -n 's/^# \{0,1\}//p'

# Tell the user how to get missing headers instead of failing in the compiler.
DEP_HEADERS := zstd.h snappy-c.h brotli/decode.h lz4.h archive.h pcre2.h cmocka.h cblas.h sndfile.h soxr.h xxhash.h zlib.h lzma.h bzlib.h unicode/unorm2.h
deps-check:
	@missing=""; for h in $(DEP_HEADERS); do \
	  printf '#include <stddef.h>\n#include <stdarg.h>\n#include <setjmp.h>\n#include <stdint.h>\n#define PCRE2_CODE_UNIT_WIDTH 8\n#include <%s>\n' $$h \
	    | $(CC) -E -I/usr/include/openblas -x c - >/dev/null 2>&1 || missing="$$missing $$h"; done; \
	if [ -n "$$missing" ]; then \
	  echo "sluice: missing development headers:$$missing" >&2; \
	  echo "sluice: run 'scripts/install-deps' (as root) to install them, then 'make' again" >&2; \
	  exit 1; fi

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I/usr/include/openblas -MMD -MP -c $< -o $@

$(BUILD)/libsluice.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/sluice: $(CLI_OBJ) $(BUILD)/libsluice.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libsluice.a $(LDLIBS_ALL)

# ./sluice points at the default build for convenience.
sluice: $(BUILD)/sluice
	@if [ "$(BUILD)" = build ]; then ln -sf build/sluice sluice; fi

$(BUILD)/tests/test_%: tests/unit/test_%.c $(TEST_SUPPORT_OBJ) $(BUILD)/libsluice.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I/usr/include/openblas -MMD -MP -o $@ $< $(TEST_SUPPORT_OBJ) $(BUILD)/libsluice.a $(LDFLAGS_ALL) $(LDLIBS_ALL) -lcmocka -lopenblas

test: deps-check unit-test cli-test
	@echo "make test: all tests passed ($(BUILD))"

unit-test: $(UNIT_BIN) $(BUILD)/sluice
	@fail=0; for t in $(UNIT_BIN); do \
	  echo "== $$t"; SLUICE_SRC=$(CURDIR) SLUICE_BIN=$(CURDIR)/$(BUILD)/sluice $$t || fail=1; done; \
	  [ $$fail -eq 0 ] || { echo "unit tests FAILED" >&2; exit 1; }

cli-test: $(BUILD)/sluice
	@SLUICE_BIN=$(CURDIR)/$(BUILD)/sluice SLUICE_SRC=$(CURDIR) tests/cli/run.sh $(CLI_TESTS)

# check-asan also runs every fuzz target (clang: its UBSan checks more than
# gcc's, e.g. arithmetic on a NULL pointer) over its shipped seeds.
check-asan:
	$(MAKE) BUILD=build-asan SAN=1 CUDA=0 test
	$(MAKE) fuzz-seeds

# Each fuzz target once over each of its seeds (tests/fuzz/corpus/<name>/), halting on any report;
# a target without seeds fails it (a new fuzz target comes with a few).
fuzz-seeds: fuzz
	@fail=0; for f in $(FUZZ_BIN); do n=$$(basename $$f); c=tests/fuzz/corpus/$${n#fuzz_}; \
	  [ -d $$c ] || { echo "$$n: no seeds in $$c" >&2; fail=1; continue; }; \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 SLUICE_SRC=$(CURDIR) $$f -runs=0 $$c >build-fuzz/$$n.seeds.log 2>&1 \
	    && ! grep -q 'runtime error' build-fuzz/$$n.seeds.log \
	    && echo "  SEEDS $$n: $$(ls $$c | wc -l) clean" \
	    || { echo "  SEEDS $$n: FAILED" >&2; grep -m5 -B2 -A10 'runtime error\|ERROR' build-fuzz/$$n.seeds.log >&2; fail=1; }; done; \
	  [ $$fail -eq 0 ] || { echo "fuzz seeds FAILED" >&2; exit 1; }

# Unit tests under valgrind memcheck (definite leaks and memory errors fail).
check-valgrind: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do echo "== valgrind $$t"; \
	  SLUICE_SRC=$(CURDIR) SLUICE_BIN=$(CURDIR)/$(BUILD)/sluice OMP_NUM_THREADS=2 \
	  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite $$t >/dev/null 2>$(BUILD)/valgrind.log \
	  || { cat $(BUILD)/valgrind.log | tail -40; fail=1; }; done; [ $$fail -eq 0 ] && echo "valgrind: clean"

bench: $(BUILD)/sluice
	@for b in $(sort $(wildcard bench/*.sh)); do echo "== $$b"; SLUICE_BIN=$(CURDIR)/$(BUILD)/sluice $$b || exit 1; done

# --- fuzzing (clang + libFuzzer) -------------------------------------------
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang CUDA=0 EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" WARN="-Wall -Wextra -Werror -Wno-unused-command-line-argument -Wno-pass-failed" fuzz-bins
fuzz-bins: $(BUILD)/libsluice.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); echo "  FUZZ $$n"; \
	  $(CC) $(CFLAGS_ALL) -I/usr/include/openblas -fsanitize=fuzzer,address,undefined -o $(BUILD)/$$n $$f $(BUILD)/libsluice.a $(LDLIBS_ALL) -fopenmp || exit 1; done
	@echo "fuzz targets in $(BUILD)/: run e.g. $(BUILD)/fuzz_json -max_total_time=60 tests/fuzz/corpus/json"

# --- formatting (clang-format with the repository's .clang-format) ---------
CLANG_FORMAT ?= clang-format
# Every C, header and CUDA file under version control (or, outside a git
# checkout, in the source folders).
FORMAT_FILES = $(or $(FILES),$(shell git ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null),\
  $(shell find $(MODULES) cli tests bench -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' | sort))
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "make format-check: $(CLANG_FORMAT) not found (scripts/install-deps installs clang-format)" >&2; exit 1; }
	@n=0; bad=""; for f in $(FORMAT_FILES); do n=$$((n+1)); \
	  $(CLANG_FORMAT) --style=file "$$f" | cmp -s - "$$f" || bad="$$bad $$f"; done; \
	if [ -n "$$bad" ]; then echo "make format-check: these files differ from what $(CLANG_FORMAT) makes of them (make format FILES=...):" >&2; \
	  for f in $$bad; do echo "  $$f" >&2; done; echo "make format-check: $$(echo $$bad | wc -w) of $$n files not formatted" >&2; exit 1; fi; \
	echo "make format-check: $$n files formatted as .clang-format says"

format:
	$(CLANG_FORMAT) --style=file -i $(FORMAT_FILES)

demo:
	@command -v dpkg-query >/dev/null && ! $(MAKE) -s deps-check >/dev/null 2>&1 && scripts/install-deps || true
	$(MAKE) all
	examples/demo.sh

# Public headers: those sluice.h includes. Installed under include/sluice/
# with their includes rewritten to <sluice/...>; a public header that
# includes an internal one stops the install.
PUBLIC_HEADERS := $(shell sed -n 's/^\#include "\(.*\)"$$/\1/p' sluice.h)
install: all
	@for h in $(PUBLIC_HEADERS); do for i in $$(sed -n 's/^#include "\(.*\)"$$/\1/p' $$h); do \
	  case " $(PUBLIC_HEADERS) " in *" $$i "*) ;; *) echo "make install: public header $$h includes $$i, which sluice.h does not list" >&2; exit 1;; esac; \
	done; done
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(INCLUDEDIR)/sluice
	install -m 755 $(BUILD)/sluice $(DESTDIR)$(PREFIX)/bin/sluice
	install -m 644 $(BUILD)/libsluice.a $(DESTDIR)$(LIBDIR)/libsluice.a
	@for m in $(wildcard docs/man/*.1); do install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/; done
	@for h in sluice.h $(PUBLIC_HEADERS); do d=$(DESTDIR)$(INCLUDEDIR)/sluice/$$(dirname $$h); install -d $$d && \
	  sed 's|^#include "\(.*\)"$$|#include <sluice/\1>|' $$h > $$d/$$(basename $$h) && chmod 644 $$d/$$(basename $$h) || exit 1; done
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' 'Name: sluice' \
	  'Description: data preparation for long-context pretraining: read, tokenize, pack, shard, score' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lsluice $(strip $(LDFLAGS_ALL) $(LDLIBS_ALL))' > $(DESTDIR)$(LIBDIR)/pkgconfig/sluice.pc
	@echo "installed sluice $(VERSION) under $(DESTDIR)$(PREFIX) ($(words $(PUBLIC_HEADERS)) public headers, sluice.pc)"

clean:
	rm -rf build build-asan build-fuzz sluice

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_BIN:=.d)
