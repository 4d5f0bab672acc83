#!/usr/bin/env bash
# break_cuda_failure_checks.sh [<build dir>] - shows that cuda_failure_test.sh
# fails against programs that take a CUDA failure for a machine without a GPU.
#
# Each case compiles a broken copy of one source with the build's own command
# (compile_commands.json), links the programs over it with the build's own
# link command (ninja -t commands) into a folder of its own, and runs
# cuda_failure_test.sh against them: it must fail, saying what broke. Against
# the programs as built it must pass. The cases, each as the code once was:
#   tensor/device.cpp  any CUDA failure counted as no device     every GPU test skips
#   tensor_test.cpp    a GPU test skipping on cuda_device_count() it skips
#   graph/launch.cpp   NCCL refused as "this machine has none"   launch's e2e test fails
#   graph/launch.cpp   no devices for .gpus(n), not CUDA's error launch's e2e test fails
#   overlap_app.cpp    "nothing to run" where CUDA fails          overlap_example exits 0
# Needs the build's runtime_tests, e2e_gpu_tests, overlap_example and
# failing_cuda_driver built, and nothing rebuilding them meanwhile (take the
# build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
driver=$build/tests/gpu/failing_cuda_driver
programs=(tests/unit/runtime_tests tests/e2e/e2e_gpu_tests examples/overlap/overlap_example)
failures=0

# breaks <file> <old> <new> [<old> <new>...]: a copy of file under $work with each old replaced.
breaks() {
  python3 - "$work" "$@" <<'PY'
import os, sys
work, path, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if old not in text:
        sys.exit("break_cuda_failure_checks: '" + old + "' is no longer in " + path)
    text = text.replace(old, new)
open(os.path.join(work, os.path.basename(path)), "w").write(text)
PY
}

# compile <source> <its broken copy> <object>: the build's command for source, on the copy;
# its quoted includes still found beside the source.
compile() {
  python3 - "$build" "$@" <<'PY'
import json, os, shlex, subprocess, sys
build, source, copy, obj = sys.argv[1:5]
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    args = shlex.split(entry["command"])
    if entry["file"] != source:
        continue
    # overlap_app.cpp is built twice: overlap_example is the plain one.
    if source.endswith("overlap_app.cpp") and "/overlap_example.dir/" not in entry["command"]:
        continue
    args[args.index("-o") + 1] = obj
    args[args.index("-c") + 1] = copy
    args[1:1] = ["-iquote", os.path.dirname(source)]
    sys.exit(subprocess.call(args, cwd=entry["directory"]))
sys.exit("break_cuda_failure_checks: no compile command for " + source)
PY
}

# link <case> <object in the build or "runtime"> <broken object>: every program
# linked into $work/<case>, the build's object (or, for "runtime", the
# runtime library's own copy) replaced by the broken one.
link() {
  local case=$1 replaced=$2 broken=$3 program command
  mkdir -p "$work/$case"
  for program in "${programs[@]}"; do
    command=$(ninja -C "$build" -t commands "$program" | tail -1)
    command=${command#: && }
    command=${command%% && cd *}
    command=${command%% && :*}
    command=${command/ -o $program / -o $work/$case/$(basename "$program") }
    if [[ $replaced == runtime ]]; then
      command=${command/ runtime\/libcg_runtime.a / $broken runtime/libcg_runtime.a }
    else
      command=${command/ $replaced / $broken }
    fi
    (cd "$build" && eval "$command") || return 1
  done
}

# expect_failure <case> <what cuda_failure_test.sh must say> [<what its logs must show>]
expect_failure() {
  local case=$1 said=$2 shown=${3:-}
  "$repo/tests/gpu/cuda_failure_test.sh" "$driver" "$work/$case/runtime_tests" \
    "$work/$case/e2e_gpu_tests" "$work/$case/overlap_example" >"$work/$case.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -qxF "$said" "$work/$case.log" &&
    { [[ -z $shown ]] || grep -qF "$shown" "$work/$case.log"; }; then
    echo "ok: $case: cuda_failure_test.sh fails, saying '$said'"
  else
    echo "FAIL: $case: cuda_failure_test.sh exited $status without '$said' (and '$shown'):"
    head -20 "$work/$case.log"
    failures=$((failures + 1))
  fi
}

if "$repo/tests/gpu/cuda_failure_test.sh" "$driver" "$build/${programs[0]}" \
  "$build/${programs[1]}" "$build/${programs[2]}" >"$work/intact.log" 2>&1; then
  echo "ok: cuda_failure_test.sh passes against the programs as built"
else
  echo "FAIL: cuda_failure_test.sh fails against the programs as built:"
  cat "$work/intact.log"
  exit 1
fi

source=$repo/runtime/src/tensor/device.cpp
breaks "$source" 'const bool absence = facts.answer != CudaAnswer::error;' \
  'const bool absence = true;' 'if (absence && !nodes) {' 'if (absence) {' || exit 1
compile "$source" "$work/device.cpp" "$work/device.o" || exit 1
link device runtime "$work/device.o" || exit 1
expect_failure device "FAIL: unit tests skipped where CUDA fails"

source=$repo/tests/unit/runtime/tensor/tensor_test.cpp
breaks "$source" 'CG_SKIP_WITHOUT_GPU();
  float v[2][3]' 'if (cg::cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  float v[2][3]' || exit 1
compile "$source" "$work/tensor_test.cpp" "$work/tensor_test.o" || exit 1
link tensor_test tests/unit/CMakeFiles/runtime_tests.dir/runtime/tensor/tensor_test.cpp.o \
  "$work/tensor_test.o" || exit 1
expect_failure tensor_test "FAIL: Tensor.CudaTensorRoundTripsThroughDeviceMemory did not fail"

source=$repo/runtime/src/graph/launch.cpp
breaks "$source" 'if (!cuda.error.empty())
    throw LaunchError(refused + "and CUDA fails on this machine: " + cuda.error);' '' || exit 1
compile "$source" "$work/launch.cpp" "$work/launch.o" || exit 1
link launch runtime "$work/launch.o" || exit 1
expect_failure launch "FAIL: launch's e2e tests failed where CUDA fails" \
  "this machine has none (use cg::CommunicatorKind::host)"

breaks "$source" 'if (!cuda.error.empty())
    throw LaunchError("the driver cannot list' 'if (false)
    throw LaunchError("the driver cannot list' || exit 1
compile "$source" "$work/launch.cpp" "$work/launch_devices.o" || exit 1
link launch_devices runtime "$work/launch_devices.o" || exit 1
expect_failure launch_devices "FAIL: launch's e2e tests failed where CUDA fails" \
  "launch_cuda_devices() listed devices where CUDA fails"

source=$repo/examples/overlap/overlap_app.cpp
breaks "$source" 'if (!cuda.error.empty()) {' 'if (false) {' || exit 1
compile "$source" "$work/overlap_app.cpp" "$work/overlap_app.o" || exit 1
link overlap examples/overlap/CMakeFiles/overlap_example.dir/overlap_app.cpp.o \
  "$work/overlap_app.o" || exit 1
expect_failure overlap "FAIL: overlap_example exited 0, not 1"

((failures == 0)) && echo "PASS: every broken piece made cuda_failure_test.sh fail"
((failures == 0))
