# leaselua: developer and CI entry points (GNU make).
#   make build        install what is missing, configure and build (build/)
#   make check        build, ctest, luacheck, busted specs against Azurite
#   make check-asan   ASan+UBSan build in build-asan/, ctest, the replay specs and
#                     the hostile-value sweep (tools/asan-specs.sh), and the
#                     allocation-failure sweep at a stride (FAILALLOC_STRIDE)
#   make failalloc    the whole allocation-failure sweep under ASan+UBSan
#                     (every N; docs/RELIABILITY.md)
#   make demo         build, then the handoff demo against a fresh Azurite
#   make fixtures     re-record fixtures/emulator from a fresh Azurite, regenerate
#                     fixtures/documented, then replay them all offline
#   make bench        build, then the benchmarks against the peers, then qualify and
#                     compare over 1,000 bundles (docs/PERFORMANCE.md)
#   make drills       fault, crash and bad-input drills; tables for docs/RELIABILITY.md
#   make fuzz-smoke   every libFuzzer target FUZZ_SECONDS (default 20) s (clang)
#   make valgrind     memcheck on a replayed main handoff and its verify
#   make deb          a Debian package (CPack) in build-deb/
#   make check-packaging  Debug, Release, RelWithDebInfo and Debian-flag builds
#                     with -Werror and their C tests; the .deb installed into a
#                     scratch root and run from there; luarocks make (CI)
#   make dist         leaselua-VERSION.tar.gz from the checkout (git archive)
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= 2
# -Werror is on in CI and off by default (a packager's compiler may warn
# where ours does not): WERROR=ON make build turns it on by hand.
WERROR ?= $(if $(CI),ON,OFF)
VERSION := $(shell grep -m1 -o 'leaselua VERSION [0-9.]*' CMakeLists.txt | cut -d' ' -f3)
FORMAT_FILES := $(wildcard core/*/*.[ch] core/*/include/*.h bindings/*.[ch] tests/*.[ch] tests/layers/*.c tests/fuzz/*.c bench/*.c)
# every shell script in the tree, for shellcheck (deps installs it); listed
# when lint expands it, not at every make
SHELL_FILES = $(shell git ls-files '*.sh' .ci/run tools/emulator/start tools/emulator/stop 2>/dev/null)
LUA_DIRS := $(wildcard scripts spec bindings tests examples bench)

.PHONY: deps build check lint specs check-asan asan-build demo bench clean format format-check
.PHONY: fixtures
.PHONY: drills fuzz-smoke valgrind failalloc deb check-packaging dist

deps:
	tools/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEASELUA_WERROR=$(WERROR)
	cmake --build $(BUILD_DIR) -j$(JOBS)

check: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure
	$(MAKE) --no-print-directory lint
	BUILD_DIR=$(BUILD_DIR) tools/run-specs.sh

lint:
	@if [ -n "$$(find $(LUA_DIRS) -name '*.lua' -print -quit 2>/dev/null)" ]; then \
	  echo "luacheck $(LUA_DIRS)"; luacheck --config .luacheckrc $(LUA_DIRS); \
	else echo "luacheck: no .lua files yet"; fi
	@if [ -z "$(SHELL_FILES)" ]; then echo "shellcheck: no git checkout, shell scripts not listed"; \
	elif command -v shellcheck >/dev/null; then \
	  echo "shellcheck -x ($(words $(SHELL_FILES)) scripts)"; shellcheck -x $(SHELL_FILES); \
	else echo "shellcheck: not installed (make deps), shell scripts not checked"; fi

specs:
	BUILD_DIR=$(BUILD_DIR) tools/run-specs.sh

# The ASan build also carries the allocation-failure hooks (a test build:
# LEASELUA_FAILALLOC is never on in build/ or a release).
asan-build: deps
	cmake -S . -B $(ASAN_DIR) -DLEASELUA_SANITIZE=ON -DLEASELUA_FAILALLOC=ON -DLEASELUA_WERROR=$(WERROR) \
	  -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_DIR) -j$(JOBS)

# CI runs every FAILALLOC_STRIDE-th allocation point from an offset drawn
# afresh each run (printed, to reproduce); `make failalloc` runs them all.
FAILALLOC_STRIDE ?= 41
check-asan: asan-build
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_DIR) --output-on-failure
	BUILD_DIR=$(ASAN_DIR) tools/asan-specs.sh
	BUILD_DIR=$(ASAN_DIR) tools/failalloc.sh --stride $(FAILALLOC_STRIDE) --offset random

failalloc: asan-build
	BUILD_DIR=$(ASAN_DIR) tools/failalloc.sh

demo: build
	BUILD_DIR=$(BUILD_DIR) tools/demo.sh

fixtures: build
	BUILD_DIR=$(BUILD_DIR) tools/record-fixtures.sh

# Benchmarks against the peers (curl, the JS SDK) on a fresh Azurite:
# BENCH_QUICK=1 for a short run. They measure; no figure fails the build.
bench: build
	BUILD_DIR=$(BUILD_DIR) bench/run.sh
	BUILD_DIR=$(BUILD_DIR) bench/qualify.sh

# Fault proxy drills, crash drills and the bad input table (docs/RELIABILITY.md).
drills: build
	BUILD_DIR=$(BUILD_DIR) tools/faultproxy/drills.sh

FUZZ_SECONDS ?= 20
fuzz-smoke: deps
	tools/fuzz.sh smoke $(FUZZ_SECONDS)

valgrind: build
	BUILD_DIR=$(BUILD_DIR) tools/valgrind-handoff.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)

format:
	$(if $(FORMAT_FILES),clang-format -i $(FORMAT_FILES),@echo "format: no C files")

format-check:
	$(if $(FORMAT_FILES),clang-format --dry-run --Werror $(FORMAT_FILES),@echo "format-check: no C files")

deb: deps
	tools/packaging.sh deb

check-packaging: deps
	tools/packaging.sh all

dist:
	git archive --format=tar.gz --prefix=leaselua-$(VERSION)/ -o leaselua-$(VERSION).tar.gz HEAD
	@echo "leaselua-$(VERSION).tar.gz"
