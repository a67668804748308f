#!/bin/bash
# torch-ocl on an NVIDIA GPU, beside PyTorch's CUDA eager, in one prepared run.
#
# For a machine that has NVIDIA's driver (which ships libnvidia-opencl.so.1)
# and a CUDA build of torch, and can download nothing: the OpenCL headers and
# ICD loader come as Debian packages in $DEBS, made beforehand with
#   apt-get download ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers clinfo
# They are unpacked under /tmp (never over /), and NVIDIA's OpenCL driver is
# registered with the loader through OCL_ICD_VENDORS.
#
# Steps, each under its own time limit inside one overall deadline (the
# machine is lent for minutes), each logged, the next one skipped only when
# it needs what failed:
#   1. OpenCL: unpack, register NVIDIA's ICD, clinfo
#   2. build torch-ocl against the machine's own torch (Release, all cores)
#   3. smoke: results on ocl:0 against the CPU for GEMM, conv, SDPA, bf16
#   4. python -m torch_ocl.bench --devices cuda:0,ocl:0 --baseline cuda:0:
#      the micro suite, then the model suite (same model, batch, precision)
#      (CUDA's suites run in a child process without torch_ocl: PyTorch has
#      one accelerator per process; torch_ocl/_accelerators.py says why)
#   5. the demo, 3 steps, on a cold and then a warm program cache
#   6. test files on ocl:0, each in its own process, with the time left
# Results in $OUT: benchmarks_gpu.md/.json, tests.txt (per-file results), log.txt.
#
#   OUT=/tmp/out DEBS=.gpu/debs tools/gpu_bench.sh [seconds, default 540]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-out}
DEBS=${DEBS:-.gpu/debs}
PY=${PY:-python3}
PRICE=${PRICE:-3.50}   # USD per GPU-hour, stated in the report (both columns run on the same GPU)
budget=${1:-540}
start=$(date +%s)
deadline=$((start + budget))
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1

log() { echo "[gpu_bench +$(( $(date +%s) - start ))s] $*"; }
left() { echo $(( deadline - $(date +%s) )); }
# stage NAME CAP CMD...: run CMD under min(CAP, time left); returns its status
stage() {
  local name=$1 cap=$2; shift 2
  local t; t=$(left); [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 15 ]; then log "$name: skipped, ${t}s left"; return 99; fi
  log "$name: start (limit ${t}s)"
  timeout -k 5 "$t" "$@"; local rc=$?
  log "$name: rc=$rc"
  return $rc
}

# 1. OpenCL
root=/tmp/oclroot
mkdir -p "$root/vendors"
for f in "$DEBS"/*.deb; do dpkg -x "$f" "$root"; done
nvlib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1 /{print $NF; exit}')
[ -z "$nvlib" ] && nvlib=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
if [ -z "$nvlib" ]; then log "no libnvidia-opencl.so.1 on this machine: NVIDIA's OpenCL driver is missing"; exit 2; fi
echo "$nvlib" > "$root/vendors/nvidia.icd"
export OCL_ICD_VENDORS=$root/vendors
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log "NVIDIA OpenCL driver: $nvlib"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
"$root/usr/bin/clinfo" | grep -E "Platform Name|Device Name|Device Version|Driver Version|Max compute|Global memory size|Local memory size|Extensions" | head -12 | cut -c1-300
$PY -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
$PY -c "import sysconfig, os; h = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); print('Python.h', os.path.exists(h), h)"

# 2. build against the machine's torch
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
stage build 360 $PY -m pip install -q --no-build-isolation --no-deps \
  -C cmake.define.OpenCL_INCLUDE_DIR="$root/usr/include" \
  -C cmake.define.OpenCL_LIBRARY="$root/usr/lib/x86_64-linux-gnu/libOpenCL.so" . || {
  log "build failed"; exit 3; }
export TORCH_OCL_CACHE_DIR=/tmp/tocl-cache   # a cold program cache, known location

# The C++ runtime the extension was built and runs with. On the first GPU run
# (torch 2.11 image, g++ 13) every C++ error message that formats an integer
# crashed in std::ostream inside _C (docs/benchmarks_gpu.md): these lines are
# what that diagnosis needs.
so=$($PY -c "import glob, os, importlib.util as u; d = u.find_spec('torch_ocl').submodule_search_locations[0]; print(glob.glob(os.path.join(d, '_C*.so'))[0])")
log "c++: $(c++ --version | head -1); flags in env: $(env | grep -E '^(CFLAGS|CXXFLAGS|LDFLAGS|CMAKE_ARGS|SKBUILD)' | tr '\n' ' ')"
log "iostream/locale code defined inside _C: $(nm -C --defined-only "$so" | grep -c -E 'std::(basic_ostream|codecvt|locale|num_put)')"
ldd "$so" | grep -E "stdc|gcc_s"
$PY -c "import torch_ocl; print('libstdc++ mapped:', sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libstdc++' in l}))"
$PY -c "import torch, torch_ocl
try:
    torch.mm(torch.ones(2, 3, device='ocl'), torch.ones(4, 5, device='ocl'))
except RuntimeError as e:
    print('error message with integers: ok:', str(e)[:80])"
log "error-message check: rc=$?"

# 3. smoke
# With CUDA present, `import torch` alone must not load torch_ocl (it would
# break CUDA autograd); CUDA backward must work; `import torch_ocl` warns.
$PY -c "import torch; print('import torch loads ocl:', hasattr(torch, 'ocl')); \
x = torch.randn(4, 4, device='cuda', requires_grad=True); (x * 2).sum().backward(); print('cuda backward ok')"
stage smoke 60 $PY - <<'EOF' || { log "smoke failed"; }
import time, torch, torch.nn.functional as F
import torch_ocl
print("ocl devices:", torch.ocl.device_count(), torch.ocl.get_device_properties(0))
torch.manual_seed(0)
def check(name, f, *args, tol=1e-3):
    t0 = time.time()
    ref = f(*[a.double() if a.is_floating_point() else a for a in args])
    got = f(*[a.to("ocl") for a in args]).cpu()
    err = ((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    print(f"{name:28s} rel.err {err:.2e} {'ok' if err < tol else 'MISMATCH'} ({time.time() - t0:.1f}s incl. build)")
a, b = torch.randn(512, 384), torch.randn(384, 256)
check("mm fp32", torch.mm, a, b)
check("conv2d 3x3", lambda x, w: F.conv2d(x, w, padding=1), torch.randn(2, 16, 32, 32), torch.randn(32, 16, 3, 3))
q = torch.randn(2, 4, 128, 64)
check("sdpa causal", lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True), q)
check("softmax", lambda x: x.softmax(-1), torch.randn(64, 1000))
check("layer_norm", lambda x: F.layer_norm(x, (256,)), torch.randn(64, 256))
x = torch.randn(256, 256)
got = (x.bfloat16().to("ocl") @ x.bfloat16().to("ocl")).float().cpu()
ref = (x.bfloat16().float() @ x.bfloat16().float())
print("mm bf16 rel.err", ((got - ref).abs().max() / ref.abs().max()).item())
EOF

# a diagnosis script of the caller's, if any, on the built package
[ -n "${GPU_EXTRA:-}" ] && stage extra 150 env PY="$PY" bash "$GPU_EXTRA"

# 4. benchmarks: cuda:0 (PyTorch eager) beside ocl:0 (torch-ocl, NVIDIA OpenCL)
title="NVIDIA GPU: torch-ocl on NVIDIA's OpenCL driver beside PyTorch's CUDA eager"
stage bench 240 $PY -m torch_ocl.bench --devices cuda:0,ocl:0 --baseline cuda:0 --suite micro,models \
  --price "cuda:0=$PRICE,ocl:0=$PRICE" --out "$OUT/benchmarks_gpu" --title "$title"
rm -f "$OUT/benchmarks_gpu.png"

# 5. the demo, 3 steps, on a cold program cache and then on the warm one: the
# difference is (about) the cold first step's kernel builds
rm -rf /tmp/tocl-cache-demo
for c in cold warm; do
  t0=$(date +%s.%N)
  stage demo-$c 60 env TORCH_OCL_CACHE_DIR=/tmp/tocl-cache-demo $PY examples/train_gpt.py --preset demo --steps 3
  log "demo-$c: $($PY -c "print(round($(date +%s.%N) - $t0, 1))") s wall"
done

# 6. tests on ocl:0: each file in its own process (a crash ends one file),
# eight at a time, one summary line per file in tests.txt
run_file() {
  local f=$1 r
  r=$(timeout -k 5 120 $PY -m pytest -q -p no:cacheprovider "$f" 2>&1)
  echo "== $f rc=$? :: $(echo "$r" | tail -1)"
  echo "$r" | grep -E "^(FAILED|ERROR)|Fatal Python error|Segmentation" | head -20
}
export -f run_file; export PY
stage tests 200 bash -c 'ls tests/python/test_*.py | grep -v -E "test_(hf_models|models_sweep|soak|stress_threads|serving|examples|opinfo|fuzz|distributed)" \
  | xargs -P 8 -I{} bash -c "run_file {}"' > "$OUT/tests.txt"
grep "^==" "$OUT/tests.txt" | sort
log "done"
