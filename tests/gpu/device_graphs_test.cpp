// device_graphs_test.cpp - .gpus(n) placement, device tensor transports and NCCL
// selected at launch, end to end.
//
// Without a GPU (here, and on CI) the placement and the cpu direction run for
// real; the cuda direction and NCCL check the errors a machine without a
// device gives; the GPU tests skip, saying so (gpu_skip.hpp: only where the
// machine has no device; CUDA failing or NCCL not loading beside a device
// fails them).
#include "device_graphs.cg.hpp"
#include "gpu_skip.hpp"
#include "leftovers.hpp"
#include "tensor/pinned_mappings.hpp"

#include <cg/device.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using DeviceGraphs = cg_test::NoLeftovers;

// The CUDA_VISIBLE_DEVICES this test process runs with, as Placed::visible says it.
std::string drivers_visible_devices() {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  return value ? value : "<unset>";
}

cg::Tensor floats(std::vector<float> values) {
  cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i)
    t.data<float>()[i] = values[i];
  return t;
}

std::vector<float> values(const cg::Tensor& t) {
  EXPECT_EQ(t.device(), cg::device::cpu);
  return {t.data<float>(), t.data<float>() + t.numel()};
}

TEST_F(DeviceGraphs, EachActorProcessSeesTheNextOfTheDriversDevices) {
  CG_SKIP_IN_THREADS_MODE();
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0", "1", "2"};
  auto graph = cg::launch<&gpu_placement>(options);
  // a takes 0, b the next two, c none (it inherits the driver's), d wraps round to 0.
  EXPECT_EQ(graph.execute(0).get(), std::make_tuple(std::string("0"), std::string("1,2"),
                                                    drivers_visible_devices(), std::string("0")));
}

TEST_F(DeviceGraphs, EachActorProcessReachedOverTcpSeesItsDevicesToo) {
  // TCP forced: every actor in a process of its own, started by the driver
  // on its host (in either mode), with the devices it would have otherwise.
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0", "1", "2"};
  options.tcp_everywhere = true;
  auto graph = cg::launch<&gpu_placement>(options);
  EXPECT_EQ(graph.execute(0).get(), std::make_tuple(std::string("0"), std::string("1,2"),
                                                    drivers_visible_devices(), std::string("0")));
}

TEST_F(DeviceGraphs, ActorThreadsShareTheDriversVisibleDevices) {
  // Threads mode: one process, one environment; the devices are still checked.
  cg::LaunchOptions options;
  options.mode = cg::Mode::threads;
  options.cuda_devices = std::vector<std::string>{"0", "1", "2"};
  auto graph = cg::launch<&gpu_placement>(options);
  std::string driver = drivers_visible_devices();
  EXPECT_EQ(graph.execute(0).get(), std::make_tuple(driver, driver, driver, driver));
}

TEST_F(DeviceGraphs, DeviceUuidsFromTheOptionsArePassedThrough) {
  CG_SKIP_IN_THREADS_MODE();
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"GPU-aa", "GPU-bb"};
  auto graph = cg::launch<&gpu_placement>(options);
  EXPECT_EQ(graph.execute(0).get(),
            std::make_tuple(std::string("GPU-aa"), std::string("GPU-bb,GPU-aa"),
                            drivers_visible_devices(), std::string("GPU-bb")));
}

TEST_F(DeviceGraphs, AnActorAskingForAGpuWhereThereIsNoneIsALaunchError) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{};
  try {
    auto graph = cg::launch<&gpu_placement>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "graph 'gpu_placement': actor 'a' asks for 1 GPU (.gpus(1)) and the driver has no "
              "CUDA device to give (set cg::LaunchOptions::cuda_devices or CUDA_VISIBLE_DEVICES)");
  }
}

TEST_F(DeviceGraphs, AnActorAskingForMoreGpusThanThereAreIsALaunchError) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"3"};
  try {
    auto graph = cg::launch<&gpu_placement>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "graph 'gpu_placement': actor 'b' asks for 2 GPUs (.gpus(2)), more than the 1 the "
              "driver has (3)");
  }
}

TEST_F(DeviceGraphs, DriversCudaVisibleDevicesAreTheDefaultList) {
  CG_SKIP_IN_THREADS_MODE();
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string restore = saved ? saved : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "5, 7", 1);
  EXPECT_EQ(cg::launch_cuda_devices({}), (std::vector<std::string>{"5", "7"}));
  {
    auto graph = cg::launch<&gpu_placement>();
    EXPECT_EQ(graph.execute(0).get(), std::make_tuple(std::string("5"), std::string("7,5"),
                                                      std::string("5, 7"), std::string("7")));
  }
  if (saved)
    ::setenv("CUDA_VISIBLE_DEVICES", restore.c_str(), 1);
  else
    ::unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST_F(DeviceGraphs, CpuTransportDeliversHostTensorsToActorsAndDriver) {
  auto graph = cg::launch<&to_cpu>();
  auto [where, t] = graph.execute(3).get();
  EXPECT_EQ(where, "cpu [3, 4, 5]");
  EXPECT_EQ(values(t), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(std::get<0>(graph.execute(1).get()), "cpu [1]");
}

TEST_F(DeviceGraphs, CudaTransportWithoutADeviceIsTheReadingTasksError) {
  CG_SKIP_WITH_GPU();
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0"};
  auto graph = cg::launch<&to_cuda>(options);
  for (int round = 0; round < 2; ++round) { // the graph stays usable
    try {
      graph.execute(floats({1, 2, 3})).get();
      FAIL() << "expected cg::TaskError";
    } catch (const cg::TaskError& e) {
      EXPECT_EQ(e.actor(), "q");
      EXPECT_EQ(e.method(), "where");
      EXPECT_EQ(e.exception_type(), "cg::TensorError");
      EXPECT_EQ(e.message(),
                std::string("cannot copy float32[3] on cpu to cuda:0 (channel 0): this process "
                            "has no CUDA device") +
                    (cg::built_with_cuda() ? "" : " (the runtime was built without CUDA)"));
    }
  }
}

// 16 MiB tensors go through overflow buffers (a slot of 64 KiB).
cg::LaunchOptions through_overflow_buffers() {
  cg::LaunchOptions options;
  options.slot_bytes = 64 * 1024;
  options.max_in_flight = 2;
  return options;
}

// In threads mode the actor pinned its overflow buffers in this process
// since `before`: at least one, and CUDA refused none.
void expect_pinned_since(const cg::detail::PinnedCounts& before) {
  if (!cg_test::threads_mode())
    return;
  const cg::detail::PinnedCounts after = cg::detail::pinned_counts();
  EXPECT_GE(after.pinned, before.pinned + 1) << "no overflow buffer was pinned";
  EXPECT_EQ(after.refused, before.refused) << "CUDA refused to pin an overflow buffer";
}

TEST_F(DeviceGraphs, CudaTransportDeliversTheDriversTensorOnTheGpu) {
  CG_SKIP_WITHOUT_GPU();
  auto graph = cg::launch<&to_cuda>();
  EXPECT_EQ(graph.execute(floats({1, 2, 3})).get(), "cuda:0 [1, 2, 3]");
}

TEST_F(DeviceGraphs, LargeTensorsReachTheGpuExactlyThroughPinnedOverflowBuffers) {
  CG_SKIP_WITHOUT_GPU();
  const cg::LaunchOptions options = through_overflow_buffers();
  const cg::detail::PinnedCounts before = cg::detail::pinned_counts();
  auto graph = cg::launch<&large_to_cuda>(options);
  constexpr std::int64_t n = 4 << 20;
  // Other contents each time, in the same buffers: no copy may read stale data.
  for (int round = 0; round < 4; ++round) {
    cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      t.data<float>()[i] = static_cast<float>((i + round) % 1000);
      sum += (i + round) % 1000;
    }
    EXPECT_EQ(graph.execute(t).get(),
              "cuda:0 " + std::to_string(n) + " elements, sum " + std::to_string(sum))
        << "round " << round;
  }
  expect_pinned_since(before);
}

// The same, made in place (graph.input_tensor()): execute() copies nothing,
// and the actor's copy to the GPU reads the elements where they were written,
// in the pinned overflow buffer.
TEST_F(DeviceGraphs, LargeTensorsMadeInPlaceReachTheGpuExactly) {
  CG_SKIP_WITHOUT_GPU();
  const cg::LaunchOptions options = through_overflow_buffers();
  const cg::detail::PinnedCounts before = cg::detail::pinned_counts();
  auto graph = cg::launch<&large_to_cuda>(options);
  constexpr std::int64_t n = 4 << 20;
  // Two in flight at a time (max_in_flight), each in a buffer of its own.
  std::vector<cg::Ref<std::string>> refs;
  std::vector<std::int64_t> sums;
  for (int round = 0; round < 4; ++round) {
    cg::Tensor t = graph.input_tensor(cg::DType::float32, {n});
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      t.data<float>()[i] = static_cast<float>((i + 3 * round) % 1000);
      sum += (i + 3 * round) % 1000;
    }
    refs.push_back(graph.execute(t));
    sums.push_back(sum);
    if (round % 2 == 1) {
      for (int r = round - 1; r <= round; ++r)
        EXPECT_EQ(refs[r].get(),
                  "cuda:0 " + std::to_string(n) + " elements, sum " + std::to_string(sums[r]))
            << "round " << r;
    }
  }
  expect_pinned_since(before);
}

TEST_F(DeviceGraphs, LargeTensorsFromTheGpuReachTheHostExactlyThroughPinnedOverflowBuffers) {
  CG_SKIP_WITHOUT_GPU();
  const cg::LaunchOptions options = through_overflow_buffers();
  const cg::detail::PinnedCounts before = cg::detail::pinned_counts();
  auto graph = cg::launch<&large_from_cuda>(options);
  // Other contents each time, in the same buffers: no copy may leave stale data.
  for (int round = 0; round < 4; ++round) {
    const int n = (4 << 20) + round;
    const cg::Tensor t = graph.execute(n).get();
    ASSERT_EQ(t.numel(), n) << "round " << round;
    const std::vector<float> got = values(t);
    std::int64_t wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += got[i] != static_cast<float>(n + i);
    EXPECT_EQ(wrong, 0) << "round " << round << ": elements that differ";
  }
  expect_pinned_since(before);
}

// Each execution queues 5 ms of GPU work and returns at once; the driver
// keeps max_in_flight (2) executions going. An actor running unbounded would
// start execution i with almost no step done; bounded, it starts it once the
// GPU has done every step up to i - 2 (its event was recorded after them).
TEST_F(DeviceGraphs, AnActorRunsAtMostMaxInFlightExecutionsAheadOfItsGpu) {
  CG_SKIP_WITHOUT_GPU();
  cg::LaunchOptions options;
  options.max_in_flight = 2;
  auto graph = cg::launch<&gpu_steps>(options);
  constexpr std::int64_t kExecutions = 30;
  std::vector<cg::Ref<std::int64_t>> refs;
  std::vector<std::int64_t> done_before(kExecutions);
  for (std::int64_t i = 0; i < kExecutions; ++i) {
    if (i >= 2)
      done_before[i - 2] = refs[i - 2].get();
    refs.push_back(graph.execute(i));
  }
  done_before[kExecutions - 2] = refs[kExecutions - 2].get();
  done_before[kExecutions - 1] = refs[kExecutions - 1].get();
  for (std::int64_t i = 0; i < kExecutions; ++i)
    EXPECT_GE(done_before[i], i - 1)
        << "execution " << i << " began " << i - done_before[i] << " steps ahead of the GPU";
}

TEST_F(DeviceGraphs, SingleRankAllreduceOverTheHostCommunicatorComesBackToTheHost) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0"};
  auto graph = cg::launch<&single_rank_allreduce>(options);
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{3, 4, 5}));
}

TEST_F(DeviceGraphs, NcclWithoutACudaDeviceIsALaunchError) {
  CG_SKIP_WITH_GPU();
  cg::LaunchOptions options;
  options.communicator = cg::CommunicatorKind::nccl;
  options.cuda_devices = std::vector<std::string>{"0"};
  try {
    auto graph = cg::launch<&single_rank_allreduce>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()),
              cg::built_with_cuda()
                  ? "graph 'single_rank_allreduce': cg::CommunicatorKind::nccl needs a CUDA "
                    "device, and this machine has none (use cg::CommunicatorKind::host)"
                  : "graph 'single_rank_allreduce': cg::CommunicatorKind::nccl needs a CUDA "
                    "device, and this runtime was built without CUDA (configure with "
                    "-DCG_WITH_CUDA=ON, or use cg::CommunicatorKind::host)");
  }
}

// One rank's allreduce over NCCL, launched with `options`.
void expect_single_rank_allreduce_over_nccl(cg::LaunchOptions options) {
  options.communicator = cg::CommunicatorKind::nccl;
  auto graph = cg::launch<&single_rank_allreduce>(options);
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values(graph.execute(2).get()), (std::vector<float>{2, 3}));
}

// An NCCL edge between two ranks, launched with `options`.
void expect_nccl_edge_between_two_ranks(cg::LaunchOptions options) {
  options.communicator = cg::CommunicatorKind::nccl;
  auto graph = cg::launch<&two_gpu_pipeline>(options);
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{6, 8, 10}));
  EXPECT_EQ(values(graph.execute(1).get()), (std::vector<float>{2}));
}

// NCCL ranks sharing the GPU "0", whatever the machine has: each actor
// process claims an NCCL host identity of its own (nccl_ranks_share_gpus).
// Threads mode refuses such ranks in the driver's process (gpu_test.cpp), so
// the actors run as processes in either run of the suite: of their own
// (processes mode), or reached over TCP or started by host commands.
cg::LaunchOptions sharing_one_gpu(cg::LaunchOptions options = {}) {
  options.communicator = cg::CommunicatorKind::nccl;
  options.nccl_ranks_share_gpus = true;
  options.cuda_devices = std::vector<std::string>{"0"};
  options.start_timeout = std::chrono::seconds(60);
  if (!options.tcp_everywhere && options.host_commands.empty())
    options.mode = cg::Mode::processes;
  return options;
}

TEST_F(DeviceGraphs, SingleRankAllreduceOverNcclOnOneGpu) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  expect_single_rank_allreduce_over_nccl({});
}

TEST_F(DeviceGraphs, NcclEdgeBetweenTwoRanksSharingOneGpuDeliversExactValues) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  expect_nccl_edge_between_two_ranks(sharing_one_gpu());
}

// TCP forced: the rank runs in a process that shares no memory with the
// driver, as on another host. Its group lives in that process's segment,
// and (over NCCL) the group's id reaches it through the rendezvous.
TEST_F(DeviceGraphs, SingleRankAllreduceInAProcessReachedOverTcp) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0"};
  options.tcp_everywhere = true;
  auto graph = cg::launch<&single_rank_allreduce>(options);
  EXPECT_EQ(graph.channel_transports(),
            std::vector<std::string>(graph.channel_transports().size(), "tcp"));
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{3, 4, 5}));
}

TEST_F(DeviceGraphs, SingleRankAllreduceOverNcclInAProcessReachedOverTcp) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  expect_single_rank_allreduce_over_nccl(options);
}

TEST_F(DeviceGraphs, NcclEdgeBetweenRanksSharingOneGpuInProcessesReachedOverTcp) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  cg::LaunchOptions options;
  options.tcp_everywhere = true;
  expect_nccl_edge_between_two_ranks(sharing_one_gpu(options));
}

// Ranks on two hosts, whose processes host commands start here (over
// loopback: no second machine needed), sharing this machine's GPU.
class NcclOnTwoHosts : public cg_test::NoLeftovers {
protected:
  cg::LaunchOptions on_hosts_1_and_2() {
    path_ = "/tmp/cg-nccl-placement-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path_) << "a 1\nb 2\n";
    cg::LaunchOptions options;
    options.placement = path_;
    options.host_commands[1] = {"sh", "-c", "exec \"$@\"", "sh"};
    options.host_commands[2] = {"sh", "-c", "exec \"$@\"", "sh"};
    return sharing_one_gpu(options);
  }
  void TearDown() override {
    std::remove(path_.c_str());
    NoLeftovers::TearDown();
  }
  std::string path_;
};

TEST_F(NcclOnTwoHosts, NcclEdgeBetweenRanksOfTwoHostsSharingOneGpuDeliversExactValues) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  expect_nccl_edge_between_two_ranks(on_hosts_1_and_2());
}

// Three ranks on one GPU, collective by collective; every value exact
// (integers in float32).
TEST_F(DeviceGraphs, AllreduceAllgatherAndReducescatterOfThreeRanksSharingOneGpu) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  auto graph = cg::launch<&three_rank_collectives>(sharing_one_gpu());
  for (int round = 0; round < 2; ++round) {
    auto [sum, gathered, s0, s1, s2] = graph.execute(2).get();
    EXPECT_EQ(values(sum), (std::vector<float>{6, 60}));
    EXPECT_EQ(values(gathered), (std::vector<float>{12, 120, 12, 120, 6, 60}));
    EXPECT_EQ(values(s0), (std::vector<float>{36, 360}));
    EXPECT_EQ(values(s1), (std::vector<float>{36, 360}));
    EXPECT_EQ(values(s2), (std::vector<float>{18, 180}));
  }
  auto [sum, gathered, s0, s1, s2] = graph.execute(1).get();
  EXPECT_EQ(values(sum), (std::vector<float>{6}));
  EXPECT_EQ(values(gathered), (std::vector<float>{12, 12, 6}));
  EXPECT_EQ(values(s2), (std::vector<float>{18}));
}

TEST_F(DeviceGraphs, OneRanksTensorReachesTwoRanksSharingOneGpu) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  auto graph = cg::launch<&nccl_broadcast>(sharing_one_gpu());
  EXPECT_EQ(graph.execute(3).get(), std::make_tuple("cuda:0 [3, 4, 5]", "cuda:0 [3, 4, 5]"));
  EXPECT_EQ(graph.execute(1).get(), std::make_tuple("cuda:0 [1]", "cuda:0 [1]"));
}

// A rank killed between executions: the other two enter the next allreduce
// and wait in NCCL for it. get() names the dead rank within 5 s; the
// driver's abort watchdog releases the waiting ranks (ncclCommAbort), so
// they exit by themselves and teardown is bounded; NoLeftovers checks that
// nothing is left running.
TEST_F(DeviceGraphs, ARankKilledInACollectiveOnASharedGpuIsNamedAndItsPeersAreReleased) {
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  std::chrono::steady_clock::duration reported{}, torn_down{};
  {
    auto graph = cg::launch<&three_rank_collectives>(sharing_one_gpu());
    EXPECT_EQ(values(std::get<0>(graph.execute(1).get())), (std::vector<float>{6}));
    int w0 = 0;
    for (int pid : cg_test::child_pids())
      if (cg_test::actor_of(pid) == "w0")
        w0 = pid;
    ASSERT_NE(w0, 0) << "no actor process runs w0";
    ::kill(w0, SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    try {
      graph.execute(1).get();
      ADD_FAILURE() << "expected cg::ActorDiedError";
    } catch (const cg::ActorDiedError& e) {
      EXPECT_EQ(e.actor(), "w0") << e.what();
    }
    reported = std::chrono::steady_clock::now() - start;
    EXPECT_LT(reported, std::chrono::seconds(5));
    const auto tearing = std::chrono::steady_clock::now();
    graph.teardown();
    torn_down = std::chrono::steady_clock::now() - tearing;
  }
  // Teardown gives actor processes 2 s before it kills them: ranks still
  // held in NCCL would take that long.
  EXPECT_LT(torn_down, std::chrono::seconds(2))
      << "the ranks waiting in the allreduce were not released: teardown killed them";
  std::cout << "NCCL ranks sharing one GPU: a rank killed in an allreduce was reported in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(reported).count()
            << " ms; teardown took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(torn_down).count() << " ms"
            << std::endl;
}

TEST_F(DeviceGraphs, TwoGpuPipelineRunsOverTheHostCommunicatorWithoutGpus) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"0", "1"};
  auto graph = cg::launch<&two_gpu_pipeline>(options);
  EXPECT_EQ(values(graph.execute(3).get()), (std::vector<float>{6, 8, 10}));
}

} // namespace
