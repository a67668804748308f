#!/bin/bash
# Build the runtime, C tests and Python extension into build/<name> and lay
# out an importable package in build/<name>/pkg, without touching the
# installed package. Several people can each use their own <name> at once.
#   tools/dev_build.sh <name>
#   PYTHONPATH=build/<name>/pkg .venv/bin/python -m pytest tests/python/...
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: tools/dev_build.sh <name>}
dir=build/$name
export CCACHE_BASEDIR=$PWD
if [ ! -f "$dir/build.ninja" ]; then
  .venv/bin/cmake -S . -B "$dir" -G Ninja -DCMAKE_MAKE_PROGRAM="$PWD/.venv/bin/ninja" \
    -DTOCL_BUILD_ADAPTER=ON -DTOCL_BUILD_TESTS=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
fi
.venv/bin/cmake --build "$dir" -j "$(nproc)"
mkdir -p "$dir/pkg/torch_ocl"
for f in python/torch_ocl/*; do case "$f" in *.so|*__pycache__) ;; *) ln -sfn "$PWD/$f" "$dir/pkg/torch_ocl/";; esac; done
cp -f "$dir"/adapter/_C*.so "$dir/pkg/torch_ocl/"
echo "built $dir; run with PYTHONPATH=$dir/pkg"
