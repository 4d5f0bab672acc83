#!/usr/bin/env bash
# cuda_failure_test.sh <failing libcuda.so.1's folder> <runtime_tests> <e2e_gpu_tests>
#                      <overlap_example> - where CUDA fails, nothing passes for a
# machine without a GPU.
#
# The programs run with a libcuda.so.1 every call of which fails
# (failing_cuda_driver.c) first on the loader's path: a GPU machine whose
# CUDA is broken, made on any machine with the CUDA toolkit. Then
#   - every unit test that needs a GPU, or its absence, fails quoting CUDA's
#     error, and none skips;
#   - launch refuses NCCL, and the devices for .gpus(n), quoting it
#     (the e2e tests of that pass);
#   - overlap_example exits 1 quoting it, instead of "nothing to run".
set -uo pipefail
driver=$1 runtime_tests=$2 e2e_gpu_tests=$3 overlap_example=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset CUDA_VISIBLE_DEVICES
# CUDA's words as cg::cuda_devices() quotes them; a machine with device
# nodes adds which ones.
quote='CUDA fails on this machine: cudaGetDeviceCount failed with cudaErrorUnknown (unknown error)'
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

need_a_gpu_or_none=(
  Tensor.CudaMemoryWithoutCudaIsAClearError
  Tensor.CudaTensorRoundTripsThroughDeviceMemory
  CudaIpcPorts.AReaderWithoutADeviceGetsTheReadingTasksError
  CudaIpcPorts.AWriterWithoutADeviceSendsItsTasksErrorAndAnUndefinedTensorAsIs
  CudaIpcPorts.TensorsCrossOnTheGpuWithAndWithoutOverlap
  CudaIpcPorts.SmallTensorsTravelInTheMessageLargerOnesInTheSlotsDeviceBuffer
  GpuRunAhead.TheEndOfAnExecutionWaitsForTheGpuWorkOfTheOneDepthMinusOneBefore
  GpuRunAhead.WithoutADeviceItSaysWhyAndStops
  NcclCommunicator.OneRankCollectivesOnOneGpuGiveExactValues
  NcclCommunicator.AStreamThatNeverFinishesTimesOutAbortsAndLetsGo
  NcclCommunicator.TwoRanksSharingOneGpuSendReceiveAndAllreduce
)
"$runtime_tests" --gtest_filter="$(IFS=:; echo "${need_a_gpu_or_none[*]}")" >"$work/unit.log" 2>&1
for test in "${need_a_gpu_or_none[@]}"; do
  grep -qF "[  FAILED  ] $test (" "$work/unit.log" || fail "$test did not fail"
done
# starts_with <text> <file>: how many lines of file begin with text.
starts_with() { awk -v text="$1" 'index($0, text) == 1' "$2" | wc -l; }
quoted=$(starts_with "$quote" "$work/unit.log")
((quoted == ${#need_a_gpu_or_none[@]})) ||
  fail "$quoted of ${#need_a_gpu_or_none[@]} unit test failures quote '$quote'"
! grep -q '^\[  SKIPPED \]' "$work/unit.log" || fail "unit tests skipped where CUDA fails"

launch_tests=(
  GpuGraphs.NcclCommunicatorWithoutAUsableCudaDeviceIsALaunchErrorSayingWhy
  GpuGraphs.TheDriversDefaultDevicesAreCudasOrALaunchErrorQuotingItsFailure
)
"$e2e_gpu_tests" --gtest_filter="$(IFS=:; echo "${launch_tests[*]}")" >"$work/e2e.log" 2>&1 ||
  fail "launch's e2e tests failed where CUDA fails"
grep -qF "[  PASSED  ] ${#launch_tests[@]} tests." "$work/e2e.log" ||
  fail "not all ${#launch_tests[@]} of launch's e2e tests ran and passed"

"$overlap_example" --executions 1 >"$work/overlap.out" 2>"$work/overlap.err"
status=$?
((status == 1)) || fail "overlap_example exited $status, not 1"
(($(starts_with "overlap_gpu_communication=False: $quote" "$work/overlap.err") == 1)) ||
  fail "overlap_example did not quote CUDA's failure"
[[ ! -s $work/overlap.out ]] || fail "overlap_example printed '$(head -1 "$work/overlap.out")'"

if ((failures > 0)); then
  for log in unit.log e2e.log overlap.err; do
    echo "--- $log"
    tail -40 "$work/$log"
  done
  exit 1
fi
echo "PASS: where CUDA fails, the GPU tests fail quoting it and launch and overlap_example say so"
