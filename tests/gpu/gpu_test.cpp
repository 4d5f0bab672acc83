// gpu_test.cpp - CUDA IPC edges end to end, and NCCL ranks on one GPU: refused, or sharing it.
//
// Built twice: gpu_tests, and gpu_tests_overlapped over the same graphs
// compiled with --overlap-gpu-communication (copies on the readers'
// communication streams, slots released a read later).
//
// With a CUDA device the values are checked; without one (here, and on CI)
// the tests check what each end reports, and those needing a GPU skip,
// saying so. scripts/gpu-bundle runs them on GPU machines, in both modes.
#include GPU_GRAPHS_HEADER // gpu_graphs.cg.cpp, built as is or with overlap (CMakeLists.txt)
#include "gpu_skip.hpp"
#include "leftovers.hpp"

#include <cg/device.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using CudaIpc = cg_test::NoLeftovers;

using cg_test::have_cuda_device;

std::vector<float> values(const cg::Tensor& t) {
  EXPECT_EQ(t.dtype(), cg::DType::float32);
  EXPECT_EQ(t.device(), cg::device::cpu);
  return {t.data<float>(), t.data<float>() + t.numel()};
}

// What Doubler::twice returns for Maker::make(n): 2n, 2n + 2, ...
std::vector<float> doubled_ramp(int n) {
  std::vector<float> expected;
  for (int i = 0; i < n; ++i)
    expected.push_back(2.0f * static_cast<float>(n + i));
  return expected;
}

TEST_F(CudaIpc, PipelineDeliversExactValuesOnTheReadersGpu) {
  CG_SKIP_WITHOUT_GPU();
  auto graph = cg::launch<&ipc_pipeline>();
  EXPECT_EQ(values(graph.execute(3).get()), doubled_ramp(3));
  EXPECT_EQ(values(graph.execute(1).get()), doubled_ramp(1));
  // Larger than a tensor that travels in the message: the slot's device buffer.
  EXPECT_EQ(values(graph.execute(5000).get()), doubled_ramp(5000));
}

TEST_F(CudaIpc, SizesThatGrowAndShrinkWithExecutionsInFlight) {
  CG_SKIP_WITHOUT_GPU();
  cg::LaunchOptions options;
  options.max_in_flight = 4;
  auto graph = cg::launch<&ipc_pipeline>(options);
  // Slot buffers are replaced by larger ones (a new generation the readers
  // open again) and reused for smaller tensors.
  const std::vector<int> sizes = {1, 1000, 5, 1 << 20, 3, 70000, 0, 2, 1 << 18, 1};
  // Executions go in windows of max_in_flight, each window's sizes shifted
  // by one from the last, so every slot sees each size sooner or later.
  for (int round = 0; round < 3; ++round) {
    for (std::size_t first = round; first < sizes.size() + round; first += options.max_in_flight) {
      std::vector<std::pair<int, cg::Ref<cg::Tensor>>> refs;
      for (std::size_t i = first; i < first + options.max_in_flight; ++i) {
        const int n = sizes[i % sizes.size()];
        refs.emplace_back(n, graph.execute(n));
      }
      for (auto& [n, ref] : refs)
        EXPECT_EQ(values(ref.get()), doubled_ramp(n)) << "n = " << n;
    }
  }
}

// With a profile, each CUDA IPC copy is timed on the GPU by CUDA events and
// shown on its actor's GPU track: a's copy into the slot (GPU WRITE), then
// b's copy out of it (GPU READ), which waits for a's event, so it starts
// after a's ends (the two actors' clocks are anchored apart: a few us).
TEST_F(CudaIpc, AProfileTimesEachCopyOnTheGpuTracksOfItsActors) {
  CG_SKIP_WITHOUT_GPU();
  const std::string path = "/tmp/cg-gpu-profile-" + std::to_string(::getpid()) + ".json";
  cg::LaunchOptions options;
  options.profile = path;
  constexpr int kExecutions = 5, kElements = 1 << 16;
  {
    auto graph = cg::launch<&ipc_pipeline>(options);
    for (int i = 0; i < kExecutions; ++i)
      EXPECT_EQ(values(graph.execute(kElements).get()), doubled_ramp(kElements));
  } // torn down: the profile is written
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::map<int, std::string> tracks;
  for (const nlohmann::json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tracks[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
  std::map<std::pair<std::string, int>, nlohmann::json> copies; // (track, execution)
  for (const nlohmann::json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "device")
      copies[{tracks[e["tid"].get<int>()], e["args"]["execution"].get<int>()}] = e;
  EXPECT_EQ(copies.size(), 2u * kExecutions);
  for (int e = 0; e < kExecutions; ++e) {
    auto out = copies.find({"a (GPU)", e}), back = copies.find({"b (GPU)", e});
    ASSERT_NE(out, copies.end()) << "no GPU WRITE in execution " << e;
    ASSERT_NE(back, copies.end()) << "no GPU READ in execution " << e;
    EXPECT_EQ(out->second["name"].get<std::string>().rfind("GPU WRITE c", 0), 0u);
    EXPECT_EQ(back->second["name"].get<std::string>().rfind("GPU READ c", 0), 0u);
    EXPECT_EQ(out->second["args"]["bytes"], 4 * kElements);
    EXPECT_EQ(back->second["args"]["bytes"], 4 * kElements);
    EXPECT_GT(out->second["dur"].get<double>(), 0.0);
    EXPECT_GT(back->second["dur"].get<double>(), 0.0);
    const double written = out->second["ts"].get<double>() + out->second["dur"].get<double>();
    EXPECT_GE(back->second["ts"].get<double>(), written - 50.0)
        << "execution " << e << ": b's copy began before a's ended";
  }
  std::remove(path.c_str());
}

TEST_F(CudaIpc, OneBufferReadByTwoActors) {
  CG_SKIP_WITHOUT_GPU();
  auto graph = cg::launch<&ipc_fanout>();
  for (int n : {4, 2, 100, 5000}) { // the last through the slot's device buffer
    auto [twice, where] = graph.execute(n).get();
    EXPECT_EQ(values(twice), doubled_ramp(n));
    EXPECT_EQ(where, "float32[" + std::to_string(n) + "] on cuda:0");
  }
}

TEST_F(CudaIpc, WithoutADeviceTheWritingTaskReportsIt) {
  CG_SKIP_WITH_GPU();
  auto graph = cg::launch<&ipc_pipeline>();
  try {
    graph.execute(3).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.method(), "make");
    EXPECT_EQ(e.exception_type(), "cg::TensorError");
    EXPECT_EQ(e.message(),
              std::string("cannot send float32[3] on cpu over cuda_ipc (channel 1): this process "
                          "has no CUDA device") +
                  (cg::built_with_cuda() ? "" : " (the runtime was built without CUDA)"));
  }
}

TEST_F(CudaIpc, AnExceptionUpstreamReachesGetAndTheGraphGoesOn) {
  auto graph = cg::launch<&ipc_pipeline>();
  try {
    graph.execute(-1).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.method(), "make");
    EXPECT_EQ(e.exception_type(), "std::invalid_argument");
    EXPECT_EQ(e.message(), "cannot make a tensor of -1 elements");
  }
  if (have_cuda_device()) {
    EXPECT_EQ(values(graph.execute(2).get()), doubled_ramp(2));
  }
}

TEST_F(CudaIpc, AnUndefinedTensorNeedsNoDevice) {
  auto graph = cg::launch<&ipc_undefined>();
  EXPECT_EQ(graph.execute(1).get(), "undefined");
  EXPECT_EQ(graph.execute(2).get(), "undefined");
}

using NcclOnOneGpu = cg_test::NoLeftovers;

// nccl_one_gpu's ranks a and b both work on the driver's first GPU: NCCL
// refuses such a group ("Duplicate GPU detected"), so launch() refuses it
// first, before any process starts NCCL, naming both ranks and the way out
// (without a device, it says there is none: GpuGraphs in tests/e2e). Threads
// mode refuses it however launched: its actors share one process, which
// NCCL knows by one host identity.
TEST_F(NcclOnOneGpu, TwoRanksOnOneGpuAreALaunchErrorNamingBothAndTheOption) {
  CG_SKIP_WITHOUT_GPU();
  cg::LaunchOptions options;
  options.communicator = cg::CommunicatorKind::nccl;
  const std::string pair = "graph 'nccl_one_gpu': actors 'a' and 'b', ranks 0 and 1 of NCCL "
                           "communicator group 0, both run on GPU 0 of host 0";
  try {
    auto graph = cg::launch<&nccl_one_gpu>(options);
    ADD_FAILURE() << "launched two ranks on one GPU";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()),
              cg_test::threads_mode()
                  ? pair + " in the driver's process (threads mode): NCCL refuses two ranks of "
                           "a group on one GPU unless their processes claim hosts of their own, "
                           "and one process has one NCCL host identity; launch in processes "
                           "mode (cg::LaunchOptions::mode, CG_MODE=processes), or give each rank "
                           "a GPU of its own"
                  : pair + ": NCCL refuses two ranks of a group on one GPU; set "
                           "cg::LaunchOptions::nccl_ranks_share_gpus (or CG_NCCL_SHARE_GPUS=1) "
                           "to give each actor process an NCCL host identity of its own, or give "
                           "each rank a GPU of its own");
  }
  EXPECT_EQ(cg_test::child_pids(), std::vector<int>{}) << "an actor process was started";
}

// With the option on, each rank's process claims a host of its own
// (NCCL_HOSTID) and NCCL joins them over its network transport: a's tensor,
// made on the GPU, reaches b on the same GPU exactly, in the message and
// beyond a slot. Threads mode refuses such ranks (above): the test launches
// processes in either run of the suite.
TEST_F(NcclOnOneGpu, TwoRanksSharingOneGpuWithTheOptionDeliverExactValues) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  cg::LaunchOptions options;
  options.mode = cg::Mode::processes;
  options.communicator = cg::CommunicatorKind::nccl;
  options.nccl_ranks_share_gpus = true;
  options.start_timeout = std::chrono::seconds(60);
  auto graph = cg::launch<&nccl_one_gpu>(options);
  EXPECT_EQ(values(graph.execute(3).get()), doubled_ramp(3));
  EXPECT_EQ(values(graph.execute(5000).get()), doubled_ramp(5000));
  EXPECT_EQ(values(graph.execute(1).get()), doubled_ramp(1));
  std::cout << "NCCL ranks sharing one GPU: " << cg_test::child_pids().size()
            << " actor processes, each with an NCCL host identity of its own, gave exact values"
            << std::endl;
}

} // namespace
