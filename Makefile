# leaselua: developer and CI entry points (GNU make).
#   make build        install what is missing, configure and build (build/)
#   make check        build, ctest, luacheck, busted specs against Azurite
#   make check-asan   ASan+UBSan build in build-asan/, ctest
#   make demo         build, then the handoff demo against a fresh Azurite
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= 2
FORMAT_FILES := $(wildcard core/*.[ch] bindings/*.[ch] tests/*.[ch])
LUA_DIRS := $(wildcard scripts spec bindings)

.PHONY: deps build check lint specs check-asan demo bench clean format format-check

deps:
	tools/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_DIR) -j$(JOBS)

check: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure
	$(MAKE) --no-print-directory lint
	BUILD_DIR=$(BUILD_DIR) tools/run-specs.sh

lint:
	@if [ -n "$$(find $(LUA_DIRS) -name '*.lua' -print -quit 2>/dev/null)" ]; then \
	  echo "luacheck $(LUA_DIRS)"; luacheck --config .luacheckrc $(LUA_DIRS); \
	else echo "luacheck: no .lua files yet"; fi

specs:
	BUILD_DIR=$(BUILD_DIR) tools/run-specs.sh

check-asan: deps
	cmake -S . -B $(ASAN_DIR) -DLEASELUA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_DIR) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_DIR) --output-on-failure

demo: build
	BUILD_DIR=$(BUILD_DIR) tools/demo.sh

bench:
	@echo "benchmarks: see bench/ (not yet implemented)"

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)

format:
	$(if $(FORMAT_FILES),clang-format -i $(FORMAT_FILES),@echo "format: no C files")

format-check:
	$(if $(FORMAT_FILES),clang-format --dry-run --Werror $(FORMAT_FILES),@echo "format-check: no C files")
