# Thin wrapper over CMake.  `make check` is what CI runs (.ci/run).

BUILD       ?= build
ASAN_BUILD  ?= build-asan
TSAN_BUILD  ?= build-tsan
FUZZ_BUILD  ?= build-fuzz
JOBS        ?= $(shell nproc)
FUZZ_SECONDS ?= 300
CHECK_FUZZ_SECONDS ?= 10
CTEST = ctest --output-on-failure -j$(JOBS) --test-dir

.PHONY: all build deps install check test asan asan-check tsan tsan-check fuzz-build fuzz fuzz-smoke lab-check lab-check-if-possible demo bench bench-lab clean

all: build

deps:
	@./scripts/install-deps

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j$(JOBS)

# Install like any C library: the shared library (SONAME librpcrdma.so.0),
# librpcrdma.a, the headers under include/rpcrdma/, librpcrdma.pc, the CMake
# package (find_package(rpcrdma)), the tools and their man pages.
#   make install PREFIX=/usr/local DESTDIR=/tmp/stage
PREFIX  ?= /usr/local
DESTDIR ?=
install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

test: build
	$(CTEST) $(BUILD)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j$(JOBS)

asan-check: asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	$(CTEST) $(ASAN_BUILD) -E '^fuzz/'

# ThreadSanitizer over the tests where threads share the library's state:
# worker loops, rpcrdma_server_inflight() from another thread, nconnect,
# the backchannel, provider handoff between threads, two loops, the count
# of queued replies the workers share (max_queued_total).
TSAN_TESTS = ^rpc/(tcp|rdma)/(workers|nconnect|two_threads|bound_conns_evict_workers|bound_queued_total|bound_recv_total|bound_read_budget|bound_kept_replies)|^xprt/e2e_|^provider/ofi/handoff
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRPCRDMA_TSAN=ON
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target rpc_suite xprt_e2e_test provider_suite

tsan-check: tsan
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	$(CTEST) $(TSAN_BUILD) -R '$(TSAN_TESTS)'

fuzz-build: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	  -DRPCRDMA_FUZZ=ON -DRPCRDMA_FUZZ_SECONDS=$(SECONDS_PER_TARGET)
	cmake --build $(FUZZ_BUILD) -j$(JOBS)

# Short bounded fuzzing, part of `make check`.
fuzz-smoke:
	$(MAKE) fuzz-build SECONDS_PER_TARGET=$(CHECK_FUZZ_SECONDS)
	$(CTEST) $(FUZZ_BUILD) -R '^fuzz/'

# Longer fuzzing: FUZZ_SECONDS per target.
fuzz:
	$(MAKE) fuzz-build SECONDS_PER_TARGET=$(FUZZ_SECONDS)
	$(CTEST) $(FUZZ_BUILD) -R '^fuzz/'

# The RDMA lab: a qemu guest with Soft-RoCE and the kernel's NFS/RDMA
# (tests/lab/README.md).  `make check` runs it where the machine can and
# says exactly why not otherwise.
lab-check: build
	tests/lab/lab-check

lab-check-if-possible:
	@if tests/lab/can-run; then $(MAKE) lab-check; fi

check: test asan-check tsan-check fuzz-smoke lab-check-if-possible
	@echo "make check: all test suites passed"

# The README's first command: install what is missing (as root), build, and
# run the demo over the software provider on loopback.  On an RDMA device:
#   make demo DEMO_ARGS="--provider verbs --addr <address of the device>"
DEMO_ARGS ?=
demo: build
	./$(BUILD)/tools/rpcrdma-demo $(DEMO_ARGS)

# Performance: the fixed suite on loopback over ofi, ours against the raw
# provider and libtirpc in the same run (bench/README.md).  Results in
# bench/results/<date>.{json,md,png}.
BENCH_ARGS ?=
bench: build
	bench/run-suite $(BUILD) $(BENCH_ARGS)

# The same over verbs on Soft-RoCE in the lab guest, and NFSv3: our client
# (one connection, and nconnect) and the kernel's against the kernel's
# nfsd, the kernel's client against rpcrdma-nfsd on both rxe devices
# (bench/lab-run).
bench-lab: build
	bench/run-lab $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
