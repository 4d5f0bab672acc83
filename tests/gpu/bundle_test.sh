#!/usr/bin/env bash
# bundle_test.sh <repo> <cgc> <work> - scripts/gpu-bundle builds a bundle that
# stays under 64 MiB, needs no library of ours or of our Debian packages, and
# whose run.sh says "no GPU" on a machine without one (and passes on one with).
set -euo pipefail
repo=$1 cgc=$2 work=$3
# A run killed after it moved the build aside left it there.
[[ -d $work/build.away && ! -d $work/build ]] && mv "$work/build.away" "$work/build"
rm -rf "$work/bundle" "$work/out"
CG_CGC=$cgc CG_GPU_BUNDLE_BUILD=$work/build "$repo/scripts/gpu-bundle" "$work/bundle"

size=$(du -sb "$work/bundle" | cut -f1)
if ((size > 64 * 1024 * 1024)); then
  echo "FAIL: the bundle holds $size bytes, over 64 MiB" >&2
  exit 1
fi
for program in run.sh bin/runtime_tests bin/device_tests bin/device_graphs_actors bin/gpu_tests \
  bin/gpu_graphs_actors bin/gpu_tests_overlapped bin/gpu_graphs_overlapped_actors bin/gpu_bench bin/gpu_bench_graphs_actors bin/overlap_example \
  bin/overlap_plain_actors bin/overlap_example_overlapped bin/overlap_overlapped_actors \
  bin/overlap_nccl_example bin/overlap_nccl_plain_actors bin/overlap_nccl_example_overlapped \
  bin/overlap_nccl_overlapped_actors \
  bin/profile_cost_bench bin/profile_cost_graphs_actors bin/ray_microbench \
  bin/ray_microbench_graphs_actors; do
  [[ -x $work/bundle/$program ]] || { echo "FAIL: no $program in the bundle" >&2; exit 1; }
done
# A GPU machine has glibc and the NVIDIA driver, nothing of ours: every other
# library is linked in (NCCL is dlopen()ed).
for program in "$work"/bundle/bin/*; do
  extra=$(ldd "$program" | awk '{print $1}' |
    grep -v -E '^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|lib(c|m|dl|rt|pthread)\.so)' || true)
  if [[ -n $extra ]]; then
    echo "FAIL: $program needs $extra" >&2
    exit 1
  fi
done

# On a GPU machine the build that made the bundle is not there: from here on
# it is not here either, so each driver must find its actors beside it.
mv "$work/build" "$work/build.away"
trap 'mv "$work/build.away" "$work/build"' EXIT

# The programs run.sh runs for the machine's cores, not its GPU: they work here too.
costs=$("$work/bundle/bin/profile_cost_bench" --rounds 1 --executions 1000 --long-executions 100)
[[ $costs == *"pipelined chain, threads "*" profiled "*"chain of 50 us, threads "*" profiled "* ]] || {
  echo "FAIL: profile_cost_bench printed no threads-mode rows: $costs" >&2
  exit 1
}
"$repo/tests/bench/ray_microbench_test.sh" "$work/bundle/bin/ray_microbench" >"$work/ray.log" 2>&1 || {
  cat "$work/ray.log" >&2
  echo "FAIL: the bundle's ray_microbench, without the build beside it" >&2
  exit 1
}

# Also in threads mode, where actors reached over TCP run in processes (these
# tests need no GPU).
CG_MODE=threads "$work/bundle/bin/device_tests" --gtest_filter='*ReachedOverTcp*' >"$work/moved.log" 2>&1 || {
  cat "$work/moved.log" >&2
  echo "FAIL: the bundle's device_tests, threads mode, without the build beside them" >&2
  exit 1
}

mkdir -p "$work/out"
set +e
output=$(OUT=$work/out bash "$work/bundle/run.sh")
status=$?
set -e
echo "$output"
[[ -f $work/out/gpu-summary.txt ]] || { echo "FAIL: run.sh wrote no \$OUT/gpu-summary.txt" >&2; exit 1; }
if [[ $("$work/bundle/bin/gpu_bench" --count-devices) == 0 ]]; then
  [[ $status == 0 && $output == "no GPU: "* ]] || {
    echo "FAIL: without a GPU run.sh must say 'no GPU: ...' and exit 0 (status $status)" >&2
    exit 1
  }
else
  [[ $status == 0 ]] || { echo "FAIL: run.sh on this GPU machine: status $status" >&2; exit 1; }
fi
echo "PASS: bundle of $((size / 1024)) KiB"
