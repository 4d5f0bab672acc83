#!/usr/bin/env bash
# run_sh_test.sh <run.sh> - run.sh says "no GPU" only on a machine without
# one, and fails before running anything where gpu_bench cannot count the
# devices or its count disagrees with the driver's nodes or nvidia-smi.
#
# Each case runs a copy of run.sh beside a gpu_bench of its own (a script
# that answers --count-devices as told, or crashes), with an nvidia-smi of
# its own first on PATH and CG_GPU_DEV_DIR standing for /dev.
set -uo pipefail
run_sh=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# check <name> <expected status> <expected first line> <gpu_bench body> <nvidia-smi -L output|-> [device node...]
check() {
  local name=$1 want_status=$2 want_line=$3 bench=$4 smi=$5
  shift 5
  local dir=$work/$name
  mkdir -p "$dir/bundle/bin" "$dir/path" "$dir/dev" "$dir/out"
  cp "$run_sh" "$dir/bundle/run.sh"
  printf '#!/usr/bin/env bash\n%s\n' "$bench" >"$dir/bundle/bin/gpu_bench"
  chmod +x "$dir/bundle/bin/gpu_bench"
  # "-": an nvidia-smi that lists no GPU, as on a machine with the tools but no device.
  printf '#!/usr/bin/env bash\n[[ $1 == -L ]] && printf "%%s" %q\n' "${smi/#-/}" >"$dir/path/nvidia-smi"
  chmod +x "$dir/path/nvidia-smi"
  local node
  for node in "$@"; do : >"$dir/dev/$node"; done
  local output status
  output=$(env -u CUDA_VISIBLE_DEVICES PATH="$dir/path:$PATH" CG_GPU_DEV_DIR="$dir/dev" \
    OUT="$dir/out" bash "$dir/bundle/run.sh" 2>&1)
  status=$?
  local line=${output%%$'\n'*}
  if [[ $status != "$want_status" || $line != "$want_line" ]]; then
    echo "FAIL: $name: status $status, first line '$line'; expected status $want_status, '$want_line'"
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

check no-gpu 0 \
  "no GPU: no /dev/nvidia* node, nvidia-smi lists none, and the runtime finds no CUDA device (cudaGetDeviceCount); nothing was run" \
  'echo 0' -
check gpu-bench-crashes 1 \
  "FAILED: gpu_bench --count-devices exited with status 139 and printed '': " \
  'kill -SEGV $$' -
check gpu-bench-reports-a-cuda-error 1 \
  "FAILED: gpu_bench --count-devices exited with status 1 and printed '': gpu_bench: cudaGetDeviceCount failed with cudaErrorUnknown (unknown error) on a machine with a CUDA device (/dev/nvidia0)" \
  'echo "gpu_bench: cudaGetDeviceCount failed with cudaErrorUnknown (unknown error) on a machine with a CUDA device (/dev/nvidia0)" >&2; exit 1' \
  - nvidia0
check no-device-found-beside-device-nodes 1 \
  "FAILED: the runtime finds no CUDA device on a machine with one (device nodes: $work/no-device-found-beside-device-nodes/dev/nvidia0 $work/no-device-found-beside-device-nodes/dev/nvidiactl; nvidia-smi -L lists 0)" \
  'echo 0' - nvidia0 nvidiactl
check no-device-found-where-nvidia-smi-lists-one 1 \
  "FAILED: the runtime finds no CUDA device on a machine with one (device nodes: none; nvidia-smi -L lists 1)" \
  'echo 0' $'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n'
check count-disagrees-with-nvidia-smi 1 \
  "FAILED: the runtime finds 1 CUDA device(s), and nvidia-smi -L lists 2 GPU(s)" \
  'echo 1' $'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n' \
  nvidia0 nvidia1 nvidiactl

if ((failures > 0)); then
  echo "$failures case(s) of run.sh's GPU detection failed"
  exit 1
fi
echo "PASS: run.sh's GPU detection"
