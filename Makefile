# Entry points. `make test` and `make demo` install their own dependencies
# (Debian 12, as root), build, and run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps test-deps build test unit integration demo clean

all: build

deps:
	bash packaging/debian-deps.sh build

test-deps:
	bash packaging/debian-deps.sh test

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test: unit, integration (root, network namespaces, real lldpd) and
# benchmark smoke runs. Integration tests report SKIPPED when they cannot
# create namespaces.
test: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit -j $(JOBS)

integration: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -L integration

# The daemon on the simulated fabric, then `rocectl ports`.
demo: test-deps build
	bash tests/sim/demo.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
