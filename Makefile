# SPDX-License-Identifier: Apache-2.0
# Entry points. `make test` and `make demo` install their own dependencies
# (Debian 12, as root), build, and run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# Sanitizer builds (cmake/RocenetSanitizers.cmake): ASan+UBSan for the unit
# tests, the integration tests labelled `sanitize` and the fuzz seed replays
# (`make test-asan`); TSan for the daemon's threading tests
# (tests/sanitizers/). `make test` runs both after the plain suite;
# `make test-sanitize` runs just them.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
# -O1 -g1 (line tables for the reports) builds in about 60 % of the time of
# -O2 -g, and keeps assertions on.
SANITIZER_CXX_FLAGS ?= -O1 -g1
# The normal build: optimised as shipped, with line tables only (-g1: enough
# for backtraces and perf, and a fifth less build time than -g).
CXX_FLAGS ?= -O2 -g1 -DNDEBUG
# Whether the normal build builds and registers the unit tests (`make test`
# turns it off there: it runs them in the ASan+UBSan tree instead).
UNIT_TESTS ?= ON
# Every finding stops the program with a non-zero status, so the test that
# triggered it fails (UBSan is also compiled with -fno-sanitize-recover).
SANITIZER_ENV = ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0

.PHONY: all deps test-deps build test unit integration demo clean test-sanitize test-asan test-tsan

all: build

deps:
	bash packaging/debian-deps.sh build

test-deps:
	bash packaging/debian-deps.sh test

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(CXX_FLAGS)" -DROCENET_UNIT_TESTS=$(UNIT_TESTS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test, each in the build where it tells the most:
#  1. the normal build, as shipped (its unit tests are not built): the
#     integration tests (root, network namespaces, real lldpd; SKIPPED when
#     they cannot create namespaces), the tree checks, benchmark smoke runs,
#     the fuzz seed replays and 15 s of each fuzzer (clang, ASan+UBSan);
#  2. the daemon's threading tests under TSan;
#  3. everything built with ASan+UBSan: every unit test, and the integration
#     tests labelled `sanitize`, the ones that feed rocenet hostile input or
#     stop it midway.
test: test-deps
	$(MAKE) build UNIT_TESTS=OFF
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600
	$(MAKE) test-tsan
	$(MAKE) test-asan

test-sanitize: test-asan test-tsan

# The unit tests, the integration tests labelled `sanitize` and the fuzz seed
# replays, built with ASan+UBSan. Benchmarks and the integration tests that
# measure time or memory (load_test) are left out: instrumented, their
# figures mean nothing. So are the packaging tests, which check files, and
# the libFuzzer runs (fuzz.*), which clang builds with ASan+UBSan whatever
# the tree.
test-asan: test-deps
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZER_CXX_FLAGS)" -DROCENET_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	cd $(ASAN_BUILD_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -L '^(unit|sanitize)$$'

test-tsan: test-deps
	cmake -S . -B $(TSAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZER_CXX_FLAGS)" -DROCENET_SANITIZE=thread
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target tsan_event_loop_test tsan_daemon_watch_test
	cd $(TSAN_BUILD_DIR) && ctest --output-on-failure -L tsan

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit -j $(JOBS)

integration: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -L integration

# The daemon on the simulated fabric, then `rocectl ports`.
demo: test-deps build
	bash tests/sim/demo.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
