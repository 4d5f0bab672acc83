#!/usr/bin/env bash
# run.sh - runs every GPU test and benchmark of this bundle (made by scripts/gpu-bundle).
#
#   bash run.sh        on the GPU machine; OUT=<dir> also writes <dir>/gpu-summary.txt
#                      and each program's full output to <dir>/gpu-logs/
#
# The summary lists the tests passed, failed and skipped by name, what NCCL
# said of two ranks on one GPU, and every figure gpu_bench printed. Exit
# status 1 if a test failed or a program did not finish; 0 otherwise. On a
# machine without a CUDA device it says "no GPU: ..." and exits 0.
# NCCL is loaded from CG_NCCL_LIBRARY, else from the nvidia-nccl-cu13 wheel
# of python3, else as libnccl.so.2 (the NCCL tests skip, saying so, without it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/bin
logs=${OUT:+$OUT/gpu-logs}
logs=${logs:-$(mktemp -d)}
mkdir -p "$logs"
summary=$logs/summary.txt
: >"$summary"
say() { printf '%s\n' "$*" >>"$summary"; }
finish() {
  [[ -n ${OUT:-} ]] && cp "$summary" "$OUT/gpu-summary.txt"
  cat "$summary"
  exit "$1"
}

devices=$("$bin/gpu_bench" --count-devices 2>/dev/null || echo 0)
if [[ $devices == 0 ]]; then
  say "no GPU: the runtime finds no CUDA device on this machine (cudaGetDeviceCount); nothing was run"
  finish 0
fi

if [[ -z ${CG_NCCL_LIBRARY:-} ]]; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null)
  if [[ -n $wheel && -f $wheel/lib/libnccl.so.2 ]]; then
    export CG_NCCL_LIBRARY=$wheel/lib/libnccl.so.2
  fi
fi
say "# GPU bundle run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "devices: $devices; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
say "NCCL: ${CG_NCCL_LIBRARY:-libnccl.so.2, wherever the dynamic loader finds it}"

failed_runs=0
passed=() failed=() skipped=()
# run_suite <label> <program> [VAR=value...]: a GoogleTest program, by name.
run_suite() {
  local label=$1 program=$2
  shift 2
  local log=$logs/$label.log
  env "$@" timeout 240 "$bin/$program" --gtest_color=no >"$log" 2>&1
  local status=$?
  if ((status == 124)); then
    say "TIMEOUT: $label did not finish in 240 s (see $log)"
    failed_runs=$((failed_runs + 1))
  fi
  local name
  while read -r name; do passed+=("$label: $name"); done < <(sed -n 's/^\[       OK \] \([^ ]*\) (.*/\1/p' "$log")
  while read -r name; do failed+=("$label: $name"); done < <(sed -n 's/^\[  FAILED  \] \([^ ]*\) (.*/\1/p' "$log")
  while read -r name; do skipped+=("$label: $name"); done < <(sed -n 's/^\[  SKIPPED \] \([^ ]*\) (.*/\1/p' "$log")
  if ((status != 0 && status != 124)) && ! grep -q '^\[  FAILED  \]' "$log"; then
    say "CRASHED: $label exited with status $status (see $log)"
    failed_runs=$((failed_runs + 1))
  fi
  grep -h '^NCCL refused' "$log" | sed "s/^/$label: /" >>"$logs/nccl.txt"
}

run_suite device device_tests
run_suite device.threads device_tests CG_MODE=threads
run_suite gpu gpu_tests
run_suite gpu.threads gpu_tests CG_MODE=threads

timeout 300 "$bin/gpu_bench" >"$logs/gpu_bench.log" 2>&1
bench_status=$?
if ((bench_status != 0)); then
  say "FAILED: gpu_bench exited with status $bench_status (see $logs/gpu_bench.log)"
  failed_runs=$((failed_runs + 1))
fi

say ""
say "## tests: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
for t in "${failed[@]}"; do say "FAILED   $t"; done
for t in "${skipped[@]}"; do say "skipped  $t"; done
for t in "${passed[@]}"; do say "passed   $t"; done
say ""
say "## NCCL, two ranks on one GPU"
if [[ -s $logs/nccl.txt ]]; then cat "$logs/nccl.txt" >>"$summary"; else say "(not run)"; fi
say ""
say "## figures (gpu_bench)"
cat "$logs/gpu_bench.log" >>"$summary"

if ((${#failed[@]} > 0 || failed_runs > 0)); then
  finish 1
fi
finish 0
