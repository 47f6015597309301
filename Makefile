# SPDX-License-Identifier: Apache-2.0
# Entry points. `make test` and `make demo` install their own dependencies
# (Debian 12, as root), build, and run; each prints the wall time of its
# phases (tests/phase.sh) and, at the end, all of them in a table.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# Sanitizer builds (cmake/RocenetSanitizers.cmake): ASan+UBSan for the unit
# tests, the integration tests labelled `sanitize` and the fuzz seed replays
# (`make test-asan`); TSan for the daemon's threading tests
# (tests/sanitizers/). `make test` runs both after the plain suite;
# `make test-sanitize` runs just them.
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan
# `make test` and `make demo` build unity builds (the sources of a target
# compiled in batches of 8: the templates they share are compiled once per
# batch, not once per source, which halves a build). `make build`, the
# developer's, compiles every source on its own, so each is still seen to
# compile by itself. The sanitizer trees are built by clang (two fifths less
# CPU than GCC 12 for the same instrumented tree), the plain tree, as
# shipped, by GCC: two compilers' warnings are errors.
UNITY ?= OFF
SANITIZER_CXX ?= clang++
SANITIZER_UNITY ?= ON
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
# The integration tests mostly wait (tests/integration/CMakeLists.txt): three
# at a time per core, two under ASan, whose daemons work harder.
INTEGRATION_JOBS ?= $(shell echo $$(( $(JOBS) * 3 )))
ASAN_INTEGRATION_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
# The Go programs (go.mod) and the end-to-end tests' Kubernetes
# components share one module and build cache.
# A user who is not root builds with a cache of their own.
ROCENET_CACHE ?= $(if $(filter 0,$(shell id -u)),/var/cache/rocenet,$(HOME)/.cache/rocenet)
export ROCENET_CACHE
export GOMODCACHE ?= $(ROCENET_CACHE)/go/mod
export GOCACHE ?= $(ROCENET_CACHE)/go/build
# Runs one timed phase: $(PHASE) "name" -- command...
PHASE_LOG ?= $(CURDIR)/$(BUILD_DIR)/phases.txt
PHASE = PHASE_LOG=$(PHASE_LOG) bash $(CURDIR)/tests/phase.sh run
# What `make demo` starts: the daemon, the CLI, the CNI plugin, the device
# plugin and the kubelet stand-in it allocates from.
DEMO_TARGETS = rocenetd rocectl rocenet rocenet-device-plugin rocenet-kubelet-peer

.PHONY: all deps test-deps demo-deps check-deps check build configure test unit integration \
	demo clean bench-fleet bench-triage image \
	test-sanitize test-asan test-tsan build-asan build-tsan

all: build

deps:
	bash packaging/debian-deps.sh build

test-deps:
	bash packaging/debian-deps.sh test

demo-deps:
	bash packaging/debian-deps.sh demo

check-deps:
	bash packaging/debian-deps.sh check

# Format and lint, in seconds (tests/lint/check.sh): clang-format, gofmt,
# go vet, staticcheck, ruff, shellcheck. `tests/lint/check.sh --fix`
# rewrites what the formatters and ruff can.
check: check-deps
	bash tests/lint/check.sh

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(CXX_FLAGS)" -DROCENET_UNIT_TESTS=$(UNIT_TESTS) \
		-DCMAKE_UNITY_BUILD=$(UNITY)

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test, each in the build where it tells the most, after the format
# and lint checks (seconds; `make check` alone):
#  1. the normal build, as shipped (its unit tests are not built), and helm
#     built from its Go module before the integration tests (which render
#     the Helm chart with it), so that its build does not compete with
#     them for the cores: the
#     integration tests (root, network namespaces, real lldpd; SKIPPED when
#     they cannot create namespaces), the tree checks, benchmark smoke runs
#     and the fuzz seed replays; the tests on Debian's own kernel under
#     qemu (tests/vm/, alone: a guest under emulation needs the cores); then
#     the end-to-end tests (tests/k8s/): etcd, Kubernetes, containerd,
#     Multus, CRI-O and the training operators built from their Go modules
#     first, in a phase of their own (cached in $ROCENET_CACHE; about 20
#     minutes on 2 cores where none is cached, kept out of the tests'
#     timeout), then rocenet's image built from its
#     Containerfile and deployed on single-node and three-node clusters; the fleet
#     tests (label fleet): rocenet-controller and the reporter's policy on
#     the real kube-apiserver (envtest), and the fleet and hold benchmarks
#     at 64 kwok nodes (`make bench-fleet`: 512); the reach benchmark (label triage):
#     rocectl diag reach over a simulated fabric of 32 nodes with planted
#     faults (`make bench-triage`: 512);
#  2. the daemon's threading tests under TSan;
#  3. everything built with ASan+UBSan: every unit test, the integration
#     tests labelled `sanitize` (the ones that feed rocenet hostile input or
#     stop it midway), and 15 s of each libFuzzer target.
test:
	@mkdir -p $(BUILD_DIR) && PHASE_LOG=$(PHASE_LOG) bash tests/phase.sh start
	@$(PHASE) "packages" -- $(MAKE) --no-print-directory test-deps
	@$(PHASE) "checks: format and lint" -- bash tests/lint/check.sh
	@$(PHASE) "build: plain (GCC, unity)" -- sh -c \
		'$(MAKE) --no-print-directory configure UNIT_TESTS=OFF UNITY=ON && cmake --build $(BUILD_DIR) -j $(JOBS)'
	@$(PHASE) "build: helm, for the packaging tests (Go module proxy, cached)" -- sh -c \
		'if command -v go >/dev/null; then bash tests/k8s/components.sh "" helm; fi'
	@$(PHASE) "tests: integration (plain)" -- \
		sh -c 'cd $(BUILD_DIR) && ctest --output-on-failure -j $(INTEGRATION_JOBS) --timeout 600 -L integration'
	@$(PHASE) "tests: checks, benchmark smoke, fuzz replays (plain)" -- \
		sh -c 'cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600 -LE "integration|e2e|vm|fleet|triage"'
	@$(PHASE) "tests: real kernel in qemu (Debian's kernel package, cached)" -- \
		sh -c 'cd $(BUILD_DIR) && rm -f vm-figures.txt && ctest --output-on-failure -L "^vm$$" && \
		if [ -s vm-figures.txt ]; then echo "Figures (vm-figures.txt):"; cat vm-figures.txt; fi'
	@$(PHASE) "build: Kubernetes components (Go module proxy, cached)" -- sh -c \
		'if command -v go >/dev/null; then bash tests/k8s/components.sh >/dev/null; fi'
	@$(PHASE) "tests: end-to-end on Kubernetes (image, clusters)" -- \
		sh -c 'cd $(BUILD_DIR) && rm -f e2e-figures.txt && ctest --output-on-failure -L "^e2e$$" && \
		if [ -s e2e-figures.txt ]; then echo "Figures (e2e-figures.txt):"; cat e2e-figures.txt; fi'
	@$(PHASE) "tests: fleet (controller, policy, 64-node benchmark on a real API server)" -- \
		sh -c 'cd $(BUILD_DIR) && rm -f fleet-figures.txt && ctest --output-on-failure -L "^fleet$$" && \
		if [ -s fleet-figures.txt ]; then echo "Figures (fleet-figures.txt):"; cat fleet-figures.txt; fi'
	@$(PHASE) "tests: triage (32-node simulated fabric)" -- \
		sh -c 'cd $(BUILD_DIR) && rm -f triage-figures.txt && ctest --output-on-failure -L "^triage$$" && \
		if [ -s triage-figures.txt ]; then echo "Figures (triage-figures.txt):"; cat triage-figures.txt; fi'
	@$(PHASE) "build: TSan (clang)" -- $(MAKE) --no-print-directory build-tsan
	@$(PHASE) "tests: TSan" -- sh -c 'cd $(TSAN_BUILD_DIR) && ctest --output-on-failure -L tsan'
	@$(PHASE) "build: ASan+UBSan (clang, unity)" -- $(MAKE) --no-print-directory build-asan
	@$(PHASE) "tests: unit (ASan+UBSan)" -- sh -c 'cd $(ASAN_BUILD_DIR) && \
		$(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -L "^unit$$"'
	@$(PHASE) "tests: integration, sanitize set (ASan+UBSan)" -- sh -c 'cd $(ASAN_BUILD_DIR) && \
		$(SANITIZER_ENV) ctest --output-on-failure -j $(ASAN_INTEGRATION_JOBS) --timeout 900 -L "^sanitize$$"'
	@$(PHASE) "tests: libFuzzer, 15 s each (ASan+UBSan)" -- sh -c 'cd $(ASAN_BUILD_DIR) && \
		ctest --output-on-failure -j $(JOBS) -L "^libfuzzer$$"'
	@PHASE_LOG=$(PHASE_LOG) bash tests/phase.sh summary

test-sanitize: test-asan test-tsan

# The sanitizer trees. Benchmarks and the integration tests that measure
# time or memory (load_test) are left out of the ASan run: instrumented,
# their figures mean nothing. So are the packaging tests, which check files.
build-asan: test-deps
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_COMPILER=$(SANITIZER_CXX) -DCMAKE_UNITY_BUILD=$(SANITIZER_UNITY) \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZER_CXX_FLAGS)" -DROCENET_SANITIZE=address,undefined \
		-DROCENET_GO=OFF
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 \
		-L '^(unit|sanitize|libfuzzer)$$'

build-tsan: test-deps
	cmake -S . -B $(TSAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_COMPILER=$(SANITIZER_CXX) \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZER_CXX_FLAGS)" -DROCENET_SANITIZE=thread -DROCENET_GO=OFF
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target tsan_event_loop_test tsan_daemon_watch_test

test-tsan: build-tsan
	cd $(TSAN_BUILD_DIR) && ctest --output-on-failure -L tsan

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit -j $(JOBS)

integration: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -L integration

# The fleet benchmark at 512 nodes (tests/fleet/fleet_bench.py; make test
# runs it at 64 as fleet.bench_64): 512 kwok Nodes and 512 node reporters
# on a real kube-apiserver and etcd, with rocenet-controller, in phases
# long enough for the heartbeats' rate (BENCH_FLEET_ARGS). Prints every
# figure beside its goal, also kept in $(BUILD_DIR)/fleet-figures.txt.
# Root and Go; about 6 minutes on 2 cores, 5 of them the phases. Then the
# hold benchmark (tests/fleet/hold_bench.py; make test runs it at 64 as
# fleet.hold_64): an invasive triage over 512 kwok Nodes, the time until
# every node is held and the run starts, beside its goal of 30 s. Then the
# rollout benchmark (tests/fleet/rollout_bench.py; make test: 64): a node
# policy's MTU change over 512 kwok Nodes in waves, beside its goals.
BENCH_FLEET_ARGS ?= --nodes 512 --steady 120 --flap 60 --settle 30 --rail-down 40 --rail-up 40
bench-fleet:
	@test -f $(BUILD_DIR)/build.ninja || $(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) --target rocenet-controller
	rm -f $(BUILD_DIR)/fleet-figures.txt
	ROCENET_BUILD_DIR=$(CURDIR)/$(BUILD_DIR) /usr/bin/python3 tests/fleet/fleet_bench.py $(BENCH_FLEET_ARGS)
	ROCENET_BUILD_DIR=$(CURDIR)/$(BUILD_DIR) /usr/bin/python3 tests/fleet/hold_bench.py --nodes 512
	ROCENET_BUILD_DIR=$(CURDIR)/$(BUILD_DIR) /usr/bin/python3 tests/fleet/rollout_bench.py --nodes 512

# The reach benchmark at 512 nodes (tests/triage/triage_bench.py; make test
# runs it at 32 as triage.bench_32): 512 nodes x 2 rails of the simulated
# fabric, 32 nodes a leaf switch, each node running rocenetd and
# rocenet-diagd (1,024 daemons); rocectl diag reach from node 0, healthy and
# then with a fault of every kind it names (a cut cable, a dead port, a lossy
# port, a link and an uplink with a smaller MTU, a leaf down, an uplink
# down, a node's rocenet-diagd stopped); then the all-reduce bisection over
# 64 of the nodes, five times. Prints the set-up time, the daemons' and the
# fabric's memory, the run's wall time, the coordinator's peak RSS, the
# result's size, the plan's probes and whether each fault was named, beside
# the goals; also kept in $(BUILD_DIR)/triage-figures.txt. Root, lldpd and
# iptables; about 90 s on 2 cores, and about 4 GiB of memory.
BENCH_TRIAGE_ARGS ?= --nodes 512 --nodes-per-leaf 32 --bisect-runs 5
bench-triage:
	@test -f $(BUILD_DIR)/build.ninja || $(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) --target rocenetd rocenet-diagd rocectl triage_plan_figures
	rm -f $(BUILD_DIR)/triage-figures.txt
	ROCENET_BUILD_DIR=$(CURDIR)/$(BUILD_DIR) /usr/bin/python3 tests/triage/triage_bench.py $(BENCH_TRIAGE_ARGS)

# rocenet's container image wholly from source, as it ships
# (packaging/container/Containerfile, with podman; tests/k8s/image.sh), as
# the OCI archive $(BUILD_DIR)/rocenet-image.tar, tagged
# localhost/rocenet:$(IMAGE_TAG). The end-to-end tests build the same image
# with the build tree's C++ programs in place of its build stage.
IMAGE_TAG ?= $(shell sed -n 's/^project.rocenet VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
image: test-deps
	@mkdir -p $(BUILD_DIR)
	bash tests/k8s/image.sh $(BUILD_DIR)/rocenet-image.tar $(IMAGE_TAG)

# The daemon on the simulated fabric: builds only what the demo starts.
demo:
	@mkdir -p $(BUILD_DIR) && PHASE_LOG=$(PHASE_LOG) bash tests/phase.sh start
	@$(PHASE) "packages" -- $(MAKE) --no-print-directory demo-deps
	@$(PHASE) "build: the demo's programs" -- sh -c '$(MAKE) --no-print-directory configure UNITY=ON && \
		cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)'
	@PHASE_LOG=$(PHASE_LOG) bash tests/phase.sh summary
	bash tests/sim/demo.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
