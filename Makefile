# Thin wrapper over CMake. `make` builds, `make test` builds and runs every test,
# `make run` starts the simulator, `make test-asan` runs the tests under ASan+UBSan.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo -G Ninja)

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin

.PHONY: install
.PHONY: all deps build test test-asan test-tsan fuzz format format-check lint bench run clean mcu test-mcu

all: build

deps:
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(BUILD_ASAN)/CMakeCache.txt: | deps
	@cmake -S . -B $(BUILD_ASAN) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DK32_SANITIZE=ON >/dev/null

test-asan: deps $(BUILD_ASAN)/CMakeCache.txt
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	@cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS) -LE no-asan

$(BUILD_TSAN)/CMakeCache.txt: | deps
	@cmake -S . -B $(BUILD_TSAN) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DK32_TSAN=ON >/dev/null

# ThreadSanitizer run of the tests labelled "threads" (kobj stress, platform tasks, ...).
# Only those tests' executables are built, which keeps CI short.
test-tsan: deps $(BUILD_TSAN)/CMakeCache.txt
	@cmake --build $(BUILD_TSAN) -j $(JOBS) --target $$(scripts/ctest-targets.sh $(BUILD_TSAN) threads)
	@cd $(BUILD_TSAN) && ctest --output-on-failure -j $(JOBS) -L threads

# libFuzzer targets built with clang, each run FUZZ_SECONDS (default 20) on its seed corpus.
fuzz: deps
	@scripts/fuzz.sh build-fuzz

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	@clang-format -i $(FORMAT_FILES)

format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format-check: $(words $(FORMAT_FILES)) files clean"

lint: deps
	@scripts/lint.sh

# The board-sized build (scripts/mcu.sh): every portable library cross-compiled for a
# Cortex-M4F per board profile with -Werror, cJSON/http-parser/mbedTLS cross-compiled from
# Debian's source packages, the board images linked whole, the size table in
# build-mcu/size.md checked against each board's RAM plan and each task's stack (and a check
# that an image made to outgrow its board fails). test-mcu runs the bench pod's six kernels
# and the three driver pods under qemu-system-arm and compares checksums and readings with
# the host build's.
mcu: deps
	@scripts/mcu.sh build build-mcu
	@scripts/mcu.sh budget-selftest build-mcu

test-mcu: deps
	@scripts/mcu.sh test build-mcu

bench: build
	@scripts/bench.sh $(BUILD)

# make run ARGS="--port 6444 --pod-port 7100": ARGS go to kube32-sim (see README).
run: build
	@scripts/run.sh $(BUILD) $(ARGS)

# make install [PREFIX=/usr/local] [DESTDIR=...]: the tools into $(BINDIR).
install: build
	@install -d "$(DESTDIR)$(BINDIR)"
	@for t in kube32-cli kube32-sim kube32-server kube32-wasm; do \
		if [ -x "$(BUILD)/cmd/$$t/$$t" ]; then \
			install -m 755 "$(BUILD)/cmd/$$t/$$t" "$(DESTDIR)$(BINDIR)/$$t" && \
			echo "installed $(DESTDIR)$(BINDIR)/$$t"; \
		else echo "make install: $$t was not built (a missing dependency?); skipped" >&2; fi; \
	done

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) build-fuzz build-mcu
