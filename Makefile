# Entry points. `make test` and `make demo` install their own dependencies
# (Debian 12, as root), build, and run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# Sanitizer builds (cmake/RocenetSanitizers.cmake): ASan+UBSan for every
# unit, integration and fuzz test (`make test-asan`); TSan for the daemon's
# threading tests (tests/sanitizers/), which `make test` runs after the normal
# suite. `make test-sanitize` runs both.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
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
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test: unit, integration (root, network namespaces, real lldpd),
# benchmark smoke runs and 15 s of each fuzzer (clang, ASan+UBSan), then the
# threading tests under TSan. Integration tests report SKIPPED when they
# cannot create namespaces. The whole suite under ASan+UBSan is
# `make test-asan`, not part of this run yet.
test: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600
	$(MAKE) test-tsan

test-sanitize: test-asan test-tsan

# Unit, integration and fuzz smoke tests built with ASan+UBSan (benchmarks
# are left out: their timings mean nothing instrumented).
test-asan: test-deps
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROCENET_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	cd $(ASAN_BUILD_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -LE bench

test-tsan: test-deps
	cmake -S . -B $(TSAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROCENET_SANITIZE=thread
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target tsan_event_loop_test
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
