# torch-ocl: two commands do everything on a fresh Debian 12 machine.
#   make demo   install, build, train a small GPT-style model on the ocl device
#   make test   install, build, run the C tests (ctest) and Python tests (pytest)
# Every step leaves a stamp in .stamps/ so a second run skips work already done.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMPS := .stamps
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= $(shell nproc)
# OpenCL driver for CPUs (PoCL), ICD loader, headers, and the build toolchain.
APT_PACKAGES := pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo ccache \
                cmake g++ make python3-venv python3-dev
SOURCES := $(shell find include runtime kernels adapter python cmake -type f -not -name '*.pyc') \
           CMakeLists.txt pyproject.toml
C_BUILD := build/c
# Two PoCL devices so multi-device paths are tested on one CPU.
export CCACHE_BASEDIR := $(CURDIR)
# Worktrees and clean clones share cache entries: with -g, ccache would
# otherwise hash the build directory into every key and miss.
export CCACHE_NOHASHDIR := 1
TEST_ENV := POCL_DEVICES="pthread pthread"

.PHONY: demo test test-vllm bench-serving test-distributed pytest-distributed-slow tsan-ci serve test-serving pytest-distributed setup install ctest pytest sanitize tsan fuzz soak cl-live conformance models bench docs parity clean kernel-profile

demo: install
	$(VPY) examples/train_gpt.py --preset demo

test: install ctest pytest pytest-distributed

setup: $(STAMPS)/pip

install: $(STAMPS)/install

$(STAMPS)/apt:
	@mkdir -p $(STAMPS)
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@touch $@

$(VPY): | $(STAMPS)/apt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

$(STAMPS)/pip: requirements.txt | $(VPY)
	$(VPY) -m pip install -q -r requirements.txt
	@touch $@

# pip install . builds the C runtime, the C++ adapter and the extension with
# CMake (scikit-build-core). No build isolation: the build must see the
# pinned torch, and must not download another one.
$(STAMPS)/install: $(STAMPS)/pip $(SOURCES)
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(VPY) -m pip install -q --no-build-isolation --no-deps .
	@touch $@

$(C_BUILD)/build.ninja: CMakeLists.txt $(STAMPS)/pip
	$(VENV)/bin/cmake -S . -B $(C_BUILD) -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja)

ctest: $(C_BUILD)/build.ninja
	$(VENV)/bin/cmake --build $(C_BUILD) -j $(JOBS)
	cd $(C_BUILD) && ctest --output-on-failure -j 1

# A generated kernel (fused eager's merged graphs, reduction prologues) that fails to build is a
# code generator bug: TORCH_OCL_STRICT_BUILDS=1 makes it an error instead of a silent fallback.
STRICT_BUILDS := TORCH_OCL_STRICT_BUILDS=1

# One worker per core: a cold run is mostly PoCL compiling kernels, one at a time per process.
# The whole suite runs in both eager modes: strict, then fused (the default). The strict run
# is also the guard run: every device block has canaries (TORCH_OCL_GUARD=1) and a test fails
# if a kernel wrote outside its buffers (tests/python/conftest.py).
pytest: install
	$(TEST_ENV) $(STRICT_BUILDS) TORCH_OCL_EAGER=strict TORCH_OCL_GUARD=1 $(VPY) -m pytest -q -n $(JOBS) tests/python
	$(TEST_ENV) $(STRICT_BUILDS) TORCH_OCL_EAGER=fused $(VPY) -m pytest -q -n $(JOBS) tests/python

# Distributed tests (tests/distributed): real process groups of spawned ranks
# over loopback, rank r on ocl:r. Four PoCL devices for the 2x2 meshes.
# `make test` runs the configurations not marked slow (once, in the default
# eager mode); `make test-distributed` runs every one. CI runs `make test`
# and then only the slow ones (pytest-distributed-slow), so together it
# covers test-distributed without running the fast ones twice.
DIST_ENV := POCL_DEVICES="pthread pthread pthread pthread" GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1
pytest-distributed: install
	$(DIST_ENV) $(STRICT_BUILDS) $(VPY) -m pytest -q -n $(JOBS) -m "not slow" tests/distributed

test-distributed: install
	$(DIST_ENV) $(STRICT_BUILDS) $(VPY) -m pytest -q -n $(JOBS) tests/distributed

pytest-distributed-slow: install
	$(DIST_ENV) $(STRICT_BUILDS) $(VPY) -m pytest -q -n $(JOBS) -m slow tests/distributed

# An OpenAI-compatible server on ocl:0 (transformers serve, continuous batching, KV cache
# sized from the device) at http://127.0.0.1:8000/v1. With no model it serves a tiny chat
# model built offline; SERVE_ARGS passes a model folder or other options
# (python -m torch_ocl serve --help).
serve: install
	$(VPY) -m torch_ocl serve $(SERVE_ARGS)

# The whole serving matrix (Llama/Qwen2/Gemma x float32/bfloat16/float16 x plain/continuous
# batching); make test runs one model per mode.
test-serving: install
	$(TEST_ENV) TORCH_OCL_SLOW=1 $(VPY) -m pytest -q -n $(JOBS) tests/python/test_serving.py

# vLLM on ocl (opt-in, not part of `make test`): the vllm-ocl plugin (vllm-ocl/) and its
# tests. vLLM 0.34.0 pins torch==2.14.0 and transformers<5.23, against this project's torch
# 2.14.1 and transformers 5.24, so pip cannot install it into .venv. .venv-vllm is a second
# venv that sees .venv's packages through a .pth file (torch, torch_ocl, transformers are
# used from .venv, never reinstalled), and gets vLLM with --no-deps plus vLLM's other
# dependencies pinned in vllm-ocl/requirements-vllm.txt (also --no-deps); what it installs
# itself shadows .venv's copy inside .venv-vllm only (fastapi < 0.137 for vLLM). The plugin
# is installed editable, so changing its code needs no reinstall.
VLLM_VENV := .venv-vllm
VLLM_PY := $(VLLM_VENV)/bin/python
VLLM_VERSION := 0.34.0

# Order-only on install: rebuilding torch_ocl changes .venv in place, which .venv-vllm sees.
$(STAMPS)/vllm-venv: | $(STAMPS)/install
	rm -rf $(VLLM_VENV)
	$$($(VPY) -c 'import sys; print(sys._base_executable)') -m venv $(VLLM_VENV)
	main=$$($(VPY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	own=$$($(VLLM_PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	echo "import site; site.addsitedir('$$(readlink -f $$main)')" > $$own/_torch_ocl_main_env.pth
	$(VLLM_PY) -c 'import torch, torch_ocl; print("vllm venv: torch", torch.__version__, "from", torch.__file__)'
	@touch $@

$(STAMPS)/vllm-deps: vllm-ocl/requirements-vllm.txt $(STAMPS)/vllm-venv
	$(VLLM_PY) -m pip install -q --no-deps vllm==$(VLLM_VERSION)
	$(VLLM_PY) -m pip install -q --no-deps -r vllm-ocl/requirements-vllm.txt
	@touch $@

$(STAMPS)/vllm-ocl: vllm-ocl/pyproject.toml $(STAMPS)/vllm-deps
	$(VLLM_PY) -m pip install -q --no-deps --no-build-isolation -e vllm-ocl
	@touch $@

test-vllm: $(STAMPS)/vllm-ocl
	$(TEST_ENV) $(VLLM_PY) -m pytest -q vllm-ocl/tests

# The C runtime and its tests under AddressSanitizer + UndefinedBehaviorSanitizer.
# (Leak checking is off: the OpenCL driver keeps process-lifetime allocations.)
sanitize: $(STAMPS)/pip
	$(VENV)/bin/cmake -S . -B build/sanitize -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DTOCL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	$(VENV)/bin/cmake --build build/sanitize -j $(JOBS)
	cd build/sanitize && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j 1

# The C runtime and its tests under ThreadSanitizer (tests/c/tsan.supp: empty, for reports
# inside the uninstrumented OpenCL driver). ~35 min on the shared 2-core machine; each test
# may take 1,200 s (test_sort took 264 s under TSan there).
tsan: $(STAMPS)/pip
	$(VENV)/bin/cmake -S . -B build/tsan -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DTOCL_TSAN=ON -DCMAKE_BUILD_TYPE=Debug
	$(VENV)/bin/cmake --build build/tsan -j $(JOBS)
	cd build/tsan && $(TEST_ENV) TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/c/tsan.supp" \
	  ctest --output-on-failure -j 1 --timeout 1200

# The C tests that run threads (allocator, program cache and its builder, streams, the guard,
# fusion's background builds, two threads on one fused stream) under ThreadSanitizer: the
# part of `make tsan` CI runs (about 1 min on 2 cores; the whole of `make tsan` takes ~35 min).
TSAN_CI_TESTS := test_(mem|mem_threads|mem_guard|program|program_disk|program_race|stream|fusion|fusion_threads|device|trace)$$
tsan-ci: $(STAMPS)/pip
	$(VENV)/bin/cmake -S . -B build/tsan -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DTOCL_TSAN=ON -DCMAKE_BUILD_TYPE=Debug
	$(VENV)/bin/cmake --build build/tsan -j $(JOBS)
	cd build/tsan && $(TEST_ENV) TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/c/tsan.supp" \
	  ctest --output-on-failure -j 1 --timeout 1200 -R '$(TSAN_CI_TESTS)'

# The whole OpInfo database on ocl vs CPU -> docs/coverage.md and docs/coverage.json.
conformance: install
	$(TEST_ENV) $(VPY) tools/conformance_contracts.py --quiet --markdown docs/coverage_contracts.md --json docs/coverage_contracts.json
	$(TEST_ENV) $(VPY) tools/conformance_errors.py --json docs/coverage_errors.json
	$(TEST_ENV) $(VPY) tools/conformance.py --markdown docs/coverage.md --json docs/coverage.json --contracts docs/coverage_contracts.json \
	  --errors docs/coverage_errors.json

# torchvision and Hugging Face transformers models on ocl vs CPU -> docs/models.md and docs/models.json.
models: install
	$(TEST_ENV) $(VPY) tools/models_sweep.py --markdown docs/models.md --json docs/models.json

# The benchmark: every device side by side -> docs/benchmarks.md/.json/.png.
# Two PoCL devices so the distributed rows have two ranks; the device
# columns are the CPU and ocl:0.
bench: install
	$(TEST_ENV) $(VPY) -m torch_ocl.bench --devices cpu,ocl:0 --out docs/benchmarks \
	  --title "Development machine: PoCL on the CPU beside PyTorch CPU"

# The serving suite alone (paged-attention decode, continuous batching; a few minutes)
# -> docs/benchmarks_serving.md/.json/.png; `make bench` runs it among the rest.
bench-serving: install
	$(TEST_ENV) $(VPY) -m torch_ocl.bench --devices cpu,ocl:0 --suite serving --out docs/benchmarks_serving \
	  --title "Serving: PoCL on the CPU beside PyTorch CPU"

# Generated docs that need no long run.
docs: install parity
	$(VPY) -m torch_ocl ops --markdown > docs/native_ops.md

# torch.cuda names in torch.ocl, and every torch.accelerator callable run on ocl -> docs/parity.md/.json.
parity: install
	$(TEST_ENV) $(VPY) -m torch_ocl parity --markdown docs/parity.md --json docs/parity.json

# Fused eager fuzzed against strict mode and the CPU for as long as asked (docs/fuzzing.md):
#   make fuzz FUZZ_SECONDS=3600 FUZZ_SEED=1000000
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 1000000
fuzz: install
	$(TEST_ENV) $(VPY) -m torch_ocl.fuzz --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

# The GPT example trained for 10,000 steps; memory and OpenCL objects must stay flat
# -> docs/soak.md/.json/.png. SOAK_STEPS for a shorter run.
SOAK_STEPS ?= 10000
soak: install build/cl_live.so
	LD_PRELOAD=$(abspath build/cl_live.so) $(TEST_ENV) $(VPY) tools/soak.py --steps $(SOAK_STEPS) --out docs/soak

# OpenCL objects a process holds (see tools/cl_live.c).
cl-live: build/cl_live.so
build/cl_live.so: tools/cl_live.c $(STAMPS)/apt
	mkdir -p build && cc -shared -fPIC -O2 -Wall -o $@ $< -ldl

# Device time per OpenCL kernel, for any program (see tools/kernel_profile.c).
kernel-profile: build/kernel_profile.so
build/kernel_profile.so: tools/kernel_profile.c $(STAMPS)/apt
	mkdir -p build && cc -shared -fPIC -O2 -Wall -o $@ $< -ldl -lOpenCL

clean:
	rm -rf build $(STAMPS) *.egg-info
