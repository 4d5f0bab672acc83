#!/usr/bin/env bash
# run.sh - runs every GPU test and benchmark of this bundle (made by scripts/gpu-bundle).
#
#   bash run.sh        on the GPU machine; OUT=<dir> also writes <dir>/gpu-summary.txt
#                      and each program's full output to <dir>/gpu-logs/
#
# The summary lists the tests passed, failed and skipped by name (and how
# many skipped for want of a second GPU: none should), the NCCL tests of
# ranks sharing one GPU, launch's notice of actor processes sharing a GPU
# without MPS, the CUDA IPC hops beside their bare two-process floor, every
# figure gpu_bench printed (actor processes, then actor threads) and the
# overlap example's durations (as is and with --overlap-gpu-communication,
# twice each, then two executions in flight), the overlap example over NCCL
# between two ranks on one GPU (one execution, then a pipeline; overlapped
# against as is, with the serial sum of its parts), and all of these again under
# NVIDIA MPS where it can be started; what recording a profile costs
# (profile_cost_bench) and Ray Compiled Graph's microbenchmark beside a bare
# floor (ray_microbench), which need no GPU but cores: this machine has them.
# Exit status 1 if a test failed or a program did not finish; 0 otherwise.
# Each program has a time limit, 15.2 minutes in all. On a machine
# without a GPU (no /dev/nvidia* node, no GPU nvidia-smi lists, none the
# runtime finds) it says "no GPU: ..." and exits 0; where these disagree, or
# gpu_bench cannot count the devices, it fails before running anything.
# NCCL is loaded from CG_NCCL_LIBRARY, else from python3's nvidia-nccl-cu13
# wheel, else as libnccl.so.2 (the NCCL tests fail, quoting the loader, without it);
# cuBLAS from CG_CUBLAS_LIBRARY, the nvidia-cublas wheel, or the CUDA toolkit.
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

# Whether this machine has a GPU: the driver's device nodes and nvidia-smi
# say so beside the runtime, so that a runtime that cannot reach a GPU fails
# here instead of passing for a machine without one. CG_GPU_DEV_DIR stands
# for /dev (run_sh_test.sh, with a gpu_bench and an nvidia-smi of its own).
dev=${CG_GPU_DEV_DIR:-/dev}
nodes=$(compgen -G "$dev/nvidia*" | LC_ALL=C sort | tr '\n' ' ')
nodes=${nodes% }
smi_gpus='' smi_list=''
if command -v nvidia-smi >/dev/null; then
  if ! smi_list=$(nvidia-smi -L 2>&1); then
    say "FAILED: nvidia-smi -L: $smi_list"
    finish 1
  fi
  smi_gpus=$(grep -c '^GPU ' <<<"$smi_list")
fi
devices=$("$bin/gpu_bench" --count-devices 2>"$logs/count-devices.log")
status=$?
if ((status != 0)) || [[ ! $devices =~ ^[0-9]+$ ]]; then
  say "FAILED: gpu_bench --count-devices exited with status $status and printed '$devices': $(cat "$logs/count-devices.log")"
  finish 1
fi
if [[ $devices == 0 && -z $nodes && ${smi_gpus:-0} == 0 ]]; then
  smi_said='is missing'
  [[ -n $smi_gpus ]] && smi_said='lists none'
  say "no GPU: no /dev/nvidia* node, nvidia-smi $smi_said, and the runtime finds no CUDA device (cudaGetDeviceCount); nothing was run"
  finish 0
fi
if [[ $devices == 0 ]]; then
  say "FAILED: the runtime finds no CUDA device on a machine with one (device nodes: ${nodes:-none}; nvidia-smi -L lists ${smi_gpus:-nothing, it is missing})"
  finish 1
fi
# CUDA_VISIBLE_DEVICES and MIG instances make CUDA's devices differ from nvidia-smi's GPUs.
if [[ -n $smi_gpus && -z ${CUDA_VISIBLE_DEVICES+set} ]] && ! grep -q '^ *MIG ' <<<"$smi_list" &&
  ((smi_gpus != devices)); then
  say "FAILED: the runtime finds $devices CUDA device(s), and nvidia-smi -L lists $smi_gpus GPU(s)"
  finish 1
fi

# wheel_library <package> <file>: the file in python3's NVIDIA wheel, if any.
wheel_library() {
  local dir
  dir=$(python3 -c 'import importlib, sys; print(list(importlib.import_module(sys.argv[1]).__path__)[0])' "$1" 2>/dev/null) || return 0
  [[ -f $dir/lib/$2 ]] && echo "$dir/lib/$2"
}
: "${CG_NCCL_LIBRARY:=$(wheel_library nvidia.nccl libnccl.so.2)}"
: "${CG_CUBLAS_LIBRARY:=$(wheel_library nvidia.cublas libcublas.so.13)}"
[[ -z $CG_CUBLAS_LIBRARY && -f /usr/local/cuda/lib64/libcublas.so.13 ]] &&
  CG_CUBLAS_LIBRARY=/usr/local/cuda/lib64/libcublas.so.13
export CG_NCCL_LIBRARY CG_CUBLAS_LIBRARY
say "# GPU bundle run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "devices: $devices; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
say "NCCL: ${CG_NCCL_LIBRARY:-libnccl.so.2, wherever the dynamic loader finds it}"
say "cuBLAS: ${CG_CUBLAS_LIBRARY:-libcublas.so.13, wherever the dynamic loader finds it}"

failed_runs=0
passed=() failed=() skipped=()
# run_suite <label> <program> [VAR=value...]: a GoogleTest program, by name.
# suite_seconds=N before it: a time limit other than 25 s.
run_suite() {
  local label=$1 program=$2 limit=${suite_seconds:-25}
  shift 2
  local log=$logs/$label.log
  env "$@" timeout "$limit" "$bin/$program" --gtest_color=no >"$log" 2>&1
  local status=$?
  if ((status == 124)); then
    say "TIMEOUT: $label did not finish in $limit s (see $log)"
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
  grep -h -e '^NCCL ranks sharing one GPU' -e 'NCCL WARN' "$log" | sed "s/^/$label: /" >>"$logs/nccl.txt"
  grep -h 'NVIDIA MPS is not running' "$log" | sed "s/^/$label: /" >>"$logs/mps-notice.txt"
  grep -h -o 'this test needs [0-9]* CUDA devices, and this process has [0-9]*' "$log" \
    >>"$logs/wanting-gpus.txt"
}

# NCCL's start-up, and its two-rank tests over sockets: more time than 25 s.
suite_seconds=60 run_suite runtime runtime_tests 'GTEST_FILTER=CudaIpc*:NcclCommunicator.*:NcclOverlap.*:Arrivals.*:Tensor*:GpuRunAhead.*'
# The NCCL tests of ranks sharing one GPU start two and three ranks over
# NCCL's sockets, each joining in a second or so: more time.
suite_seconds=60 run_suite device device_tests
suite_seconds=60 run_suite device.threads device_tests CG_MODE=threads
# NCCL_DEBUG=WARN: NCCL's own words, should ranks sharing one GPU fail to join.
suite_seconds=40 run_suite gpu gpu_tests NCCL_DEBUG=WARN
suite_seconds=40 run_suite gpu.threads gpu_tests CG_MODE=threads NCCL_DEBUG=WARN
run_suite overlapped gpu_tests_overlapped
run_suite overlapped.threads gpu_tests_overlapped CG_MODE=threads

# run_program <label> <seconds> <program> [args...]: one that prints figures.
run_program() {
  local label=$1 seconds=$2
  shift 2
  timeout "$seconds" "$@" >"$logs/$label.log" 2>&1
  local status=$?
  if ((status != 0)); then
    say "FAILED: $label exited with status $status (see $logs/$label.log)"
    failed_runs=$((failed_runs + 1))
  fi
}
# overlap_runs <label>: Ray's overlap example, as is and with
# --overlap-gpu-communication, twice each, then with two executions in flight.
overlap_runs() {
  local label=$1 stats=''
  for round in 1 2; do
    run_program $label.$round 15 "$bin/overlap_example" --executions 30 $stats
    run_program $label.overlapped.$round 15 "$bin/overlap_example_overlapped" --executions 30 $stats
    stats=--stats # the second round says where the time went
  done
  run_program $label.pipelined 12 "$bin/overlap_example" --executions 30 --in-flight 2
  run_program $label.overlapped.pipelined 12 "$bin/overlap_example_overlapped" --executions 30 \
    --in-flight 2
}
# overlap_nccl_runs <label>: the overlap example over NCCL, two ranks on one
# GPU: one execution at a time, then the two-stage pipeline with four in
# flight; each overlapped build runs the plain one on the same work and
# judges the ratio by targets.def.
overlap_nccl_runs() {
  local label=$1
  run_program $label.nccl 60 "$bin/overlap_nccl_example_overlapped" --graph one --executions 8 \
    --against "$bin/overlap_nccl_example"
  run_program $label.nccl.pipeline 60 "$bin/overlap_nccl_example_overlapped" --graph pipeline \
    --executions 16 --in-flight 4 --against "$bin/overlap_nccl_example"
}
# Not GPU work: this machine has a core for the driver and each actor.
run_program profile_cost 30 "$bin/profile_cost_bench" --rounds 5 --executions 100000 \
  --long-executions 20000
run_program ray_microbench 60 "$bin/ray_microbench"
run_program gpu_bench 45 "$bin/gpu_bench"
run_program gpu_bench.threads 30 env CG_MODE=threads "$bin/gpu_bench"
overlap_runs overlap
overlap_nccl_runs overlap

# Actor processes sharing one GPU take turns on it (the GPU switches between
# their CUDA contexts) unless NVIDIA's Multi-Process Service runs: then their
# work shares the GPU at once. Where MPS can be started here and is not
# running, the figures are measured again under it, and it is stopped after.
mps=no
if command -v nvidia-cuda-mps-control >/dev/null && ! pgrep -x nvidia-cuda-mps >/dev/null 2>&1 &&
  [[ -z ${CUDA_MPS_PIPE_DIRECTORY:-} ]]; then
  CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$logs/mps-log
  export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    mps=yes
    run_program gpu_bench.mps 45 "$bin/gpu_bench"
    overlap_runs overlap.mps
    overlap_nccl_runs overlap.mps
    echo quit | nvidia-cuda-mps-control
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

say ""
say "## tests: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
for t in "${failed[@]}"; do say "FAILED   $t"; done
for t in "${skipped[@]}"; do say "skipped  $t"; done
for t in "${passed[@]}"; do say "passed   $t"; done
say "tests skipped for want of a second GPU: $(cat "$logs/wanting-gpus.txt" 2>/dev/null | grep -c .)"
say ""
say "## NCCL ranks sharing one GPU (an NCCL_HOSTID per actor process; refused without the option)"
for t in "${failed[@]}" "${skipped[@]}" "${passed[@]}"; do
  [[ $t =~ SharingOneGpu|RanksOnOneGpu|OnASharedGpu ]] || continue
  for f in "${failed[@]}"; do [[ $f == "$t" ]] && say "FAILED   $t" && continue 2; done
  for k in "${skipped[@]}"; do [[ $k == "$t" ]] && say "skipped  $t" && continue 2; done
  say "passed   $t"
done
if [[ -s $logs/nccl.txt ]]; then cat "$logs/nccl.txt" >>"$summary"; else say "(nothing said)"; fi
say ""
say "## actor processes sharing a GPU without MPS: launch's notice (once per program)"
if [[ -s $logs/mps-notice.txt ]]; then sort -u "$logs/mps-notice.txt" >>"$summary"; else say "(not said)"; fi
say ""
say "## CUDA IPC hops beside their floor, a bare two-process CUDA IPC hop (target gpu_ipc_hop)"
for log in gpu_bench gpu_bench.threads gpu_bench.mps; do
  [[ -f $logs/$log.log ]] || continue
  say "$log:"
  grep -e '^bare two-process CUDA IPC hop' -e 'bare CUDA IPC hop 16 B' "$logs/$log.log" >>"$summary"
done
say ""
say "## figures (gpu_bench), each actor process with its own CUDA context"
cat "$logs/gpu_bench.log" >>"$summary"
say ""
say "## figures (gpu_bench), threads mode: the actors are threads of the driver, one CUDA context"
cat "$logs/gpu_bench.threads.log" >>"$summary"
say ""
say "## what recording a profile costs (profile_cost_bench), on this machine's cores"
cat "$logs/profile_cost.log" >>"$summary"
say ""
say "## Ray Compiled Graph's microbenchmark (ray_microbench), on this machine's cores, beside a bare floor"
cat "$logs/ray_microbench.log" >>"$summary"
say ""
say "## the overlap example (3 senders, 1 receiver, 10000 x 10000 float16, cuBLAS)"
cat "$logs"/overlap.[0-9].log "$logs"/overlap.overlapped.[0-9].log "$logs"/overlap.pipelined.log \
  "$logs"/overlap.overlapped.pipelined.log >>"$summary"
say ""
say "## the overlap example over NCCL (2 ranks on one GPU, 5792 x 5792 float16, cuBLAS): one execution, then a pipeline"
cat "$logs"/overlap.nccl.log "$logs"/overlap.nccl.pipeline.log >>"$summary"
say ""
if [[ $mps == yes ]]; then
  say "## under MPS (nvidia-cuda-mps-control -d): gpu_bench, then the overlap example, then over NCCL"
  cat "$logs/gpu_bench.mps.log" "$logs"/overlap.mps.[0-9].log "$logs"/overlap.mps.overlapped.[0-9].log \
    "$logs"/overlap.mps.pipelined.log "$logs"/overlap.mps.overlapped.pipelined.log \
    "$logs"/overlap.mps.nccl.log "$logs"/overlap.mps.nccl.pipeline.log >>"$summary"
else
  say "## under MPS: not measured (nvidia-cuda-mps-control is missing, or MPS runs already)"
fi

if ((${#failed[@]} > 0 || failed_runs > 0)); then
  finish 1
fi
finish 0
