#!/usr/bin/env bash
# break_gpu_checks.sh [<work dir>] - shows that the checks of "a GPU present
# means GPU tests run or fail" fail against a runtime that hides a GPU.
#
# Each case breaks a copy of one piece as it once was, runs the tests of that
# piece against it, and passes only if they fail (and pass unbroken):
#   device.cpp      any CUDA failure counted as "no device"   device_test.cpp
#   gpu_skip.hpp    a CUDA failure or NCCL load error skipped  gpu_skip_test.cpp
#   run.sh          a gpu_bench that crashes read as "no GPU"  run_sh_test.sh
# Built with c++ here (no build folder needed): CUDA's toolkit and GoogleTest.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work/src/tensor" "$work/gpu"
cuda=${CUDA_HOME:-/usr/local/cuda}
failures=0

# build <name> <device.cpp> <gpu_skip.hpp's folder>: the tests over those.
build() {
  c++ -std=c++20 -O0 -DCG_HAVE_CUDA=1 -I"$cuda/include" -I"$repo/runtime/include" \
    -I"$repo/runtime/src" -I"$3" "$2" "$repo/tests/unit/runtime/tensor/device_test.cpp" \
    "$3/gpu_skip_test.cpp" -o "$work/$1" "$cuda/lib64/libcudart_static.a" -lgtest -lgtest_main \
    -ldl -lrt -lpthread
}
# expect <what> <status: 0 passes, 1 fails> <command...>
expect() {
  local what=$1 want=$2
  shift 2
  "$@" >"$work/last.log" 2>&1
  local status=$?
  if [[ $want == 0 && $status != 0 || $want == 1 && $status == 0 ]]; then
    echo "FAIL: $what (status $status; see $work/last.log)"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}
# breaks <from> <to> <old> <new>: a copy with old replaced by new; an error if old is gone.
breaks() {
  python3 - "$@" <<'PY'
import sys
src, dst, old, new = sys.argv[1:5]
s = open(src).read()
if old not in s:
    sys.exit("break_gpu_checks: '" + old + "' is no longer in " + src)
open(dst, "w").write(s.replace(old, new))
PY
}

cp "$repo/tests/gpu/gpu_skip.hpp" "$repo/tests/gpu/gpu_skip_test.cpp" "$work/gpu/"
build intact "$repo/runtime/src/tensor/device.cpp" "$work/gpu" || exit 1
expect "the tests pass against the runtime as it is" 0 "$work/intact"

breaks "$repo/runtime/src/tensor/device.cpp" "$work/src/tensor/device.cpp" \
  'const bool absence = facts.answer != CudaAnswer::error;' 'const bool absence = true;' || exit 1
breaks "$work/src/tensor/device.cpp" "$work/src/tensor/device.cpp" \
  'if (absence && !nodes) {' 'if (absence) {' || exit 1
build device "$work/src/tensor/device.cpp" "$work/gpu" || exit 1
expect "device_test fails where any CUDA failure counts as no device" 1 "$work/device"

mkdir -p "$work/skip-src"
cp "$repo/tests/gpu/gpu_skip_test.cpp" "$work/skip-src/"
breaks "$repo/tests/gpu/gpu_skip.hpp" "$work/skip-src/gpu_skip.hpp" \
  'return {GpuVerdict::fail, "CUDA fails on this machine: " + cuda.error};' \
  'return {GpuVerdict::skip, "CUDA fails on this machine: " + cuda.error};' || exit 1
breaks "$work/skip-src/gpu_skip.hpp" "$work/skip-src/gpu_skip.hpp" \
  'return {GpuVerdict::fail, "NCCL cannot be loaded' 'return {GpuVerdict::skip, "NCCL cannot be loaded' || exit 1
build skip "$repo/runtime/src/tensor/device.cpp" "$work/skip-src" || exit 1
expect "gpu_skip_test fails where a CUDA failure or an NCCL load error skips" 1 "$work/skip"

# run.sh's detection as it once was: whatever gpu_bench does, a failure is "0".
python3 - "$repo/tests/gpu/run.sh" "$work/run.sh" <<'PY' || exit 1
import sys
s = open(sys.argv[1]).read()
start, end = s.index("# Whether this machine has a GPU"), s.index("# wheel_library")
old = '''devices=$("$bin/gpu_bench" --count-devices 2>/dev/null || echo 0)
if [[ $devices == 0 ]]; then
  say "no GPU: the runtime finds no CUDA device on this machine (cudaGetDeviceCount); nothing was run"
  finish 0
fi

'''
open(sys.argv[2], "w").write(s[:start] + old + s[end:])
PY
expect "run_sh_test passes against run.sh as it is" 0 "$repo/tests/gpu/run_sh_test.sh" "$repo/tests/gpu/run.sh"
expect "run_sh_test fails where a crash of gpu_bench reads as no GPU" 1 \
  "$repo/tests/gpu/run_sh_test.sh" "$work/run.sh"

((failures == 0)) && echo "PASS: every broken piece made its tests fail"
((failures == 0))
