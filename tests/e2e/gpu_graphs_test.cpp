// gpu_graphs_test.cpp - NCCL edges and collectives end to end, over the host communicator.
#include "e2e_gpu_graphs.cg.hpp"
#include "leftovers.hpp"

#include <cg/device.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

using GpuGraphs = cg_test::NoLeftovers;

std::vector<float> values(const cg::Tensor& t) {
  EXPECT_EQ(t.dtype(), cg::DType::float32);
  return {t.data<float>(), t.data<float>() + t.numel()};
}

TEST_F(GpuGraphs, PipelineWithAnNcclEdgeDeliversExactValues) {
  auto graph = cg::launch<&nccl_pipeline>();
  cg::Tensor t = graph.execute(3).get();
  EXPECT_EQ(t.shape(), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(values(t), (std::vector<float>{6, 8, 10}));
  EXPECT_EQ(values(graph.execute(1).get()), (std::vector<float>{2}));
}

TEST_F(GpuGraphs, PipelineKeepsSeveralExecutionsInFlight) {
  auto graph = cg::launch<&nccl_pipeline>();
  std::vector<cg::Ref<cg::Tensor>> refs;
  for (int n = 1; n <= 8; ++n)
    refs.push_back(graph.execute(n));
  for (int n = 1; n <= 8; ++n) {
    std::vector<float> expected;
    for (int i = 0; i < n; ++i)
      expected.push_back(2.0f * static_cast<float>(n + i));
    EXPECT_EQ(values(refs[static_cast<std::size_t>(n - 1)].get()), expected);
  }
}

TEST_F(GpuGraphs, ExceptionWhoseOnlyOutputGoesOverNcclReachesGetAsTaskError) {
  auto graph = cg::launch<&nccl_pipeline>();
  try {
    graph.execute(-1).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "a");
    EXPECT_EQ(e.method(), "make");
    EXPECT_EQ(e.exception_type(), "std::invalid_argument");
    EXPECT_EQ(e.message(), "cannot make a tensor of -1 elements");
  }
  EXPECT_EQ(values(graph.execute(2).get()), (std::vector<float>{4, 6}));
}

TEST_F(GpuGraphs, OneFOneBPipelineOfTwoStagesAndTwoMicrobatches) {
  auto graph = cg::launch<&one_f_one_b>();
  auto [g0, g1] = graph.execute(0, 5).get();
  EXPECT_EQ(values(g0), (std::vector<float>{12, 15}));
  EXPECT_EQ(values(g1), (std::vector<float>{27, 30}));
  auto [h0, h1] = graph.execute(1, 2).get();
  EXPECT_EQ(values(h0), (std::vector<float>{15, 18}));
  EXPECT_EQ(values(h1), (std::vector<float>{18, 21}));
}

TEST_F(GpuGraphs, ThreeSendersToOneReceiverOverNccl) {
  auto graph = cg::launch<&three_senders>();
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{6, 60, 600}));
  try {
    graph.execute(-3).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "s2");
    EXPECT_EQ(e.method(), "contribution");
    EXPECT_EQ(e.message(), "rank 2 has no contribution");
  }
  EXPECT_EQ(values(graph.execute(1).get()), (std::vector<float>{6}));
}

TEST_F(GpuGraphs, AllreduceAllgatherAndReducescatterGiveExactValues) {
  auto graph = cg::launch<&collectives>();
  auto [sum, gathered, s0, s1, s2] = graph.execute(2).get();
  // Contributions [1, 10], [2, 20], [3, 30].
  EXPECT_EQ(values(sum), (std::vector<float>{6, 60}));
  // w0 and w1 double their sums, w2 does not; gathered in rank order.
  EXPECT_EQ(gathered.shape(), (std::vector<std::int64_t>{6}));
  EXPECT_EQ(values(gathered), (std::vector<float>{12, 120, 12, 120, 6, 60}));
  // Three equal inputs summed, rank r keeping the r-th third.
  EXPECT_EQ(values(s0), (std::vector<float>{36, 360}));
  EXPECT_EQ(values(s1), (std::vector<float>{36, 360}));
  EXPECT_EQ(values(s2), (std::vector<float>{18, 180}));
}

TEST_F(GpuGraphs, OneFailedRankGivesItsErrorToEveryRankOfTheCollective) {
  auto graph = cg::launch<&collectives>();
  // Rank 1 throws; all outputs, from every rank, carry its error.
  auto ref = graph.execute(-2);
  try {
    ref.get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "w1");
    EXPECT_EQ(e.method(), "contribution");
    EXPECT_EQ(e.exception_type(), "std::runtime_error");
    EXPECT_EQ(e.message(), "rank 1 has no contribution");
  }
  auto [sum, gathered, s0, s1, s2] = graph.execute(1).get();
  EXPECT_EQ(values(sum), (std::vector<float>{6}));
  EXPECT_EQ(values(s2), (std::vector<float>{18}));
}

TEST_F(GpuGraphs, KilledRankIsReportedWhileItsPeersWaitInTheCollective) {
  CG_SKIP_IN_THREADS_MODE();
  auto graph = cg::launch<&collectives>();
  EXPECT_EQ(values(std::get<0>(graph.execute(1).get())), (std::vector<float>{6}));
  std::vector<int> actors = cg_test::child_pids();
  ASSERT_EQ(actors.size(), 3u);
  ::kill(actors[0], SIGKILL);
  // The other two ranks enter the allreduce and wait for the dead one until
  // the driver aborts the group.
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(graph.execute(1).get(), cg::ActorDiedError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// Launch says why there is no device for NCCL: none in the build, none on
// the machine, or CUDA failing (quoted, as cg::cuda_devices() has it).
TEST_F(GpuGraphs, NcclCommunicatorWithoutAUsableCudaDeviceIsALaunchErrorSayingWhy) {
  const cg::CudaDevices& cuda = cg::cuda_devices();
  if (cuda.count > 0)
    GTEST_SKIP() << "this machine has " << cuda.count << " CUDA device(s): this test is for one "
                 << "without a usable one";
  const std::string refused =
      "graph 'nccl_pipeline': cg::CommunicatorKind::nccl needs a CUDA device, and ";
  const std::string why =
      !cg::built_with_cuda() ? "this runtime was built without CUDA (configure with "
                               "-DCG_WITH_CUDA=ON, or use cg::CommunicatorKind::host)"
      : !cuda.error.empty()  ? "CUDA fails on this machine: " + cuda.error
                             : "this machine has none (use cg::CommunicatorKind::host)";
  cg::LaunchOptions options;
  options.communicator = cg::CommunicatorKind::nccl;
  try {
    auto graph = cg::launch<&nccl_pipeline>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), refused + why);
  }
}

// Without a list in the options or CUDA_VISIBLE_DEVICES, actors with
// .gpus(n) are given CUDA's devices; where CUDA fails, launch says so rather
// than that there are none.
TEST_F(GpuGraphs, TheDriversDefaultDevicesAreCudasOrALaunchErrorQuotingItsFailure) {
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> restore =
      saved ? std::optional<std::string>(saved) : std::nullopt;
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  const cg::CudaDevices& cuda = cg::cuda_devices();
  try {
    const std::vector<std::string> devices = cg::launch_cuda_devices({});
    EXPECT_EQ(cuda.error, "") << "launch_cuda_devices() listed devices where CUDA fails";
    std::vector<std::string> expected;
    for (int i = 0; i < cuda.count; ++i)
      expected.push_back(std::to_string(i));
    EXPECT_EQ(devices, expected);
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "the driver cannot list its CUDA devices for actors with "
                                     ".gpus(n): CUDA fails on this machine: " +
                                         cuda.error);
    EXPECT_NE(cuda.error, "");
  }
  if (restore)
    ::setenv("CUDA_VISIBLE_DEVICES", restore->c_str(), 1);
}

// ---- Communicator groups on other hosts ------------------------------------

// What launch() of `Graph` with `options` throws as cg::LaunchError.
template <auto Graph> std::string launch_error(const cg::LaunchOptions& options) {
  try {
    cg::launch<Graph>(options);
  } catch (const cg::LaunchError& e) {
    return e.what();
  }
  return "(launched)";
}

// Actors placed on host 1, whose process a host command starts here (over
// loopback: no second machine needed). Its segment holds the groups.
class GroupsOnAnotherHost : public cg_test::NoLeftovers {
protected:
  cg::LaunchOptions placed(const std::string& placement) {
    path_ = "/tmp/cg-groups-placement-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path_) << placement;
    cg::LaunchOptions options;
    options.placement = path_;
    options.host_commands[1] = {"sh", "-c", "exec \"$@\"", "sh"};
    return options;
  }
  void TearDown() override {
    std::remove(path_.c_str());
    NoLeftovers::TearDown();
  }
  std::string path_;
};

TEST_F(GroupsOnAnotherHost, CollectivesOfRanksOnAnotherHostGiveExactValuesAndErrors) {
  auto graph = cg::launch<&collectives>(placed("w0 1\nw1 1\nw2 1\n"));
  auto [sum, gathered, s0, s1, s2] = graph.execute(2).get();
  EXPECT_EQ(values(sum), (std::vector<float>{6, 60}));
  EXPECT_EQ(values(gathered), (std::vector<float>{12, 120, 12, 120, 6, 60}));
  EXPECT_EQ(values(s0), (std::vector<float>{36, 360}));
  EXPECT_EQ(values(s2), (std::vector<float>{18, 180}));
  try {
    graph.execute(-2).get();
    FAIL() << "expected cg::TaskError";
  } catch (const cg::TaskError& e) {
    EXPECT_EQ(e.actor(), "w1");
    EXPECT_EQ(e.message(), "rank 1 has no contribution");
  }
  EXPECT_EQ(values(std::get<0>(graph.execute(1).get())), (std::vector<float>{6}));
}

TEST_F(GroupsOnAnotherHost, AnNcclEdgeBetweenActorsOfAnotherHostDeliversExactValues) {
  auto graph = cg::launch<&nccl_pipeline>(placed("a 1\nb 1\n"));
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{6, 8, 10}));
  std::vector<cg::Ref<cg::Tensor>> refs;
  for (int n = 1; n <= 6; ++n)
    refs.push_back(graph.execute(n));
  for (int n = 1; n <= 6; ++n)
    EXPECT_EQ(refs[static_cast<std::size_t>(n - 1)].get().numel(), n);
}

TEST_F(GroupsOnAnotherHost, RanksWaitingInACollectiveOnAnotherHostWakeWhenTheGraphStops) {
  CG_SKIP_IN_THREADS_MODE(); // x is killed: it must be a process
  auto start = std::chrono::steady_clock::now();
  {
    auto graph = cg::launch<&fed_collective>(placed("w0 1\nw1 1\nw2 1\n"));
    auto [s0, s1, s2] = graph.execute(1).get(); // [2] + [2] + [3]
    EXPECT_EQ(values(s0), (std::vector<float>{7}));
    EXPECT_EQ(values(s2), (std::vector<float>{7}));
    // x is the one actor in a process of its own: its arguments name it alone.
    int x = 0;
    for (int pid : cg_test::child_pids()) {
      std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
      std::string args((std::istreambuf_iterator<char>(cmdline)), {});
      if (args.find(std::string("fed_collective\0x\0", 17)) != std::string::npos)
        x = pid;
    }
    ASSERT_NE(x, 0);
    ::kill(x, SIGKILL);
    // w1 and w2 enter the allreduce and wait there for w0, who waits for x.
    EXPECT_THROW(graph.execute(1).get(), cg::ActorDiedError);
    start = std::chrono::steady_clock::now();
  }
  // Host 1's process aborted its groups and exited by itself: the driver
  // gives actor processes 2 s before it kills them.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
}

TEST_F(GroupsOnAnotherHost, AHostCommunicatorGroupAcrossProcessesIsALaunchErrorSayingWhy) {
  EXPECT_EQ(launch_error<&nccl_pipeline>(placed("b 1\n")),
            "graph 'nccl_pipeline': communicator group 0 (actors a, b) joins processes that "
            "share no memory ('a' shares the driver's memory, 'b' runs in the process of host "
            "1): cg::CommunicatorKind::host moves tensors through shared memory; use "
            "cg::CommunicatorKind::nccl, or place the group's actors together");
  cg::LaunchOptions forced;
  forced.tcp_everywhere = true; // every actor in a process of its own
  EXPECT_EQ(launch_error<&collectives>(forced),
            "graph 'collectives': communicator group 0 (actors w0, w1, w2) joins processes "
            "that share no memory ('w0' runs in a process of its own, 'w1' runs in a process "
            "of its own): cg::CommunicatorKind::host moves tensors through shared memory; use "
            "cg::CommunicatorKind::nccl, or place the group's actors together");
}

} // namespace
