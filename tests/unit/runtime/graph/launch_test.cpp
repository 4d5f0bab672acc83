// launch_test.cpp - tests of the decisions cg::launch() makes before it starts
// anything (graph/launch.hpp): options, the actor executable, GPUs, placement,
// and how actor processes share a GPU.
#include "../../../support/scoped_env.hpp"
#include "graph/launch.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;

int run_nothing(cg::ActorProcess&) { return 0; }

// a (host 0, 1 GPU), b (host 1), c (host 0, 2 GPUs); one collective of a and c.
constexpr std::array<cg::detail::ActorSpec, 3> kActors{{
    {"a", &run_nothing, 0, 1},
    {"b", &run_nothing, 1, 0},
    {"c", &run_nothing, 0, 2},
}};
constexpr std::array<std::uint32_t, 2> kRanks{0, 2};
constexpr std::array<cg::detail::CommunicatorSpec, 1> kGroups{{{kRanks}}};
constexpr cg::detail::GraphSpec kSpec{"launch_test", kActors, {}, {}, {}, kGroups};

using cg_test::ScopedEnv;

std::string launch_error(auto&& step) {
  try {
    step();
  } catch (const cg::LaunchError& e) {
    return e.what();
  }
  return "(no LaunchError)";
}

TEST(Launch, OptionsNoGraphCanLaunchWithAreRefusedByName) {
  cg::LaunchOptions none_in_flight;
  none_in_flight.max_in_flight = 0;
  EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kSpec, none_in_flight); }),
            "cg::LaunchOptions::max_in_flight must be at least 1");
  for (const std::chrono::milliseconds silence : {0ms, 3'600'001ms}) {
    cg::LaunchOptions partition;
    partition.partition_timeout = silence;
    EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kSpec, partition); }),
              "cg::LaunchOptions::partition_timeout must be from 1 ms to 1 hour");
  }
  EXPECT_EQ(cg::LaunchOptions{}.partition_timeout, 5s);
  cg::LaunchOptions small_slots;
  small_slots.slot_bytes = 255;
  EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kSpec, small_slots); }),
            "cg::LaunchOptions::slot_bytes must be at least 256");
  cg::LaunchOptions no_group_bytes;
  no_group_bytes.communicator_bytes = 0;
  EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kSpec, no_group_bytes); }),
            "cg::LaunchOptions::communicator_bytes must be at least 1");
  EXPECT_NO_THROW(cg::detail::check_launch_options(kSpec, {}));
}

// The schedule's freedom from deadlock was checked with the spec's capacity
// (cgc --max-in-flight); more executions in flight than that are refused.
TEST(Launch, MoreExecutionsInFlightThanTheScheduleWasCheckedWithAreRefused) {
  static constexpr cg::detail::GraphSpec kFour{"four", kActors, {}, {}, {}, kGroups, false, {}, 4};
  cg::LaunchOptions five;
  five.max_in_flight = 5;
  EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kFour, five); }),
            "graph 'four': cg::LaunchOptions::max_in_flight is 5, more than the 4 its schedule "
            "was checked free of deadlock with; compile it with cgc --max-in-flight=5 or more");
  cg::LaunchOptions four;
  four.max_in_flight = 4;
  EXPECT_NO_THROW(cg::detail::check_launch_options(kFour, four));
  // A spec that names none was checked with the default options' capacity.
  EXPECT_EQ(kSpec.max_in_flight, cg::LaunchOptions{}.max_in_flight);
  cg::LaunchOptions eleven;
  eleven.max_in_flight = 11;
  EXPECT_EQ(launch_error([&] { cg::detail::check_launch_options(kSpec, eleven); }),
            "graph 'launch_test': cg::LaunchOptions::max_in_flight is 11, more than the 10 its "
            "schedule was checked free of deadlock with; compile it with cgc --max-in-flight=11 "
            "or more");
}

TEST(Launch, TheActorExecutableMustExistOnlyWhereTheDriverStartsProcesses) {
  EXPECT_EQ(launch_error([] { cg::detail::actor_executable(kSpec, true, {}, "/nonexistent/x"); }),
            "actor executable '/nonexistent/x' of graph 'launch_test' is missing or not "
            "executable; build it, or set cg::LaunchOptions::actor_host");
  EXPECT_EQ(cg::detail::actor_executable(kSpec, false, {}, "/nonexistent/x"), "/nonexistent/x");
  cg::LaunchOptions given;
  given.actor_host = "/bin/true";
  EXPECT_EQ(cg::detail::actor_executable(kSpec, true, given, "/nonexistent/x"), "/bin/true");
}

TEST(Launch, AMovedActorExecutableIsFoundBesideTheRunningProgram) {
  // This test's own executable stands in for an actor executable that was
  // built elsewhere and copied beside the driver.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string name = std::filesystem::path(self).filename().string();
  EXPECT_EQ(cg::detail::actor_executable(kSpec, true, {}, "/moved/away/" + name), self);
}

TEST(Launch, ACudaIpcChannelMustStayOnTheDriversHost) {
  static constexpr std::array<int, 1> kToC{2};
  static constexpr std::array<cg::detail::ChannelSpec, 1> kIpc{{{0, kToC, true}}};
  static constexpr cg::detail::GraphSpec kIpcSpec{"ipc", kActors, kIpc, {}, {}, {}};
  cg::detail::ActorPlacement placement;
  placement.hosts = {0, 1, 0};
  placement.local = {true, false, true};
  EXPECT_NO_THROW(cg::detail::check_cuda_ipc_placement(kIpcSpec, placement));
  placement.hosts = {0, 1, 2};
  placement.local = {true, false, false};
  EXPECT_EQ(launch_error([&] { cg::detail::check_cuda_ipc_placement(kIpcSpec, placement); }),
            "graph 'ipc': channel 0 carries a cuda_ipc tensor of 'a', but actor 'c' runs on host "
            "2: CUDA IPC joins processes of the driver's host only; place them there or use "
            "transport nccl");
  placement.hosts = {0, 1, 0};
  placement.tcp = true;
  EXPECT_EQ(launch_error([&] { cg::detail::check_cuda_ipc_placement(kIpcSpec, placement); }),
            "graph 'ipc': channel 0 carries a cuda_ipc tensor of 'a', but actor 'c' is reached "
            "over TCP (TCP is forced): CUDA IPC joins processes of the driver's host only; place "
            "them there or use transport nccl");
}

TEST(Launch, ActorsTakeTheNextOfTheDriversGpusInActorOrder) {
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"3", "5", "7"};
  const auto devices = cg::detail::assign_cuda_devices(kSpec, options);
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0], (std::vector<std::string>{"3"}));
  EXPECT_TRUE(devices[1].empty());
  EXPECT_EQ(devices[2], (std::vector<std::string>{"5", "7"}));

  options.cuda_devices = std::vector<std::string>{"0"};
  EXPECT_NE(launch_error([&] {
              cg::detail::assign_cuda_devices(kSpec, options);
            }).find("more than the 1 the driver has (0)"),
            std::string::npos);
}

TEST(Launch, ActorsOnHostZeroShareTheDriversSegmentUnlessTcpIsForced) {
  ScopedEnv transport("CG_TRANSPORT", nullptr);
  ScopedEnv placement_file("CG_PLACEMENT", nullptr);
  cg::detail::ActorPlacement placement = cg::detail::place_actors(kSpec, {});
  EXPECT_EQ(placement.hosts, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(placement.local, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(placement.local_count, 2u);
  EXPECT_EQ(placement.remote_count, 1u);
  EXPECT_FALSE(placement.tcp);

  ScopedEnv tcp("CG_TRANSPORT", "tcp");
  placement = cg::detail::place_actors(kSpec, {});
  EXPECT_TRUE(placement.tcp);
  EXPECT_EQ(placement.local, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(placement.remote_count, 3u);
}

TEST(Launch, APlacementFileMovesActorsAndABadTransportIsRefused) {
  ScopedEnv transport("CG_TRANSPORT", nullptr);
  const std::string file = ::testing::TempDir() + "launch_test.placement";
  std::ofstream(file) << "# a comment\nb 0\nc 2\n";
  cg::LaunchOptions options;
  options.placement = file;
  const cg::detail::ActorPlacement placement = cg::detail::place_actors(kSpec, options);
  EXPECT_EQ(placement.hosts, (std::vector<std::uint32_t>{0, 0, 2}));
  EXPECT_EQ(placement.local, (std::vector<bool>{true, true, false}));

  ScopedEnv bad("CG_TRANSPORT", "carrier-pigeon");
  EXPECT_EQ(launch_error([] { cg::detail::place_actors(kSpec, {}); }),
            "the environment variable CG_TRANSPORT is 'carrier-pigeon'; it must be 'tcp' or "
            "'shm' (or unset)");
}

// "{graph}" in CG_PLACEMENT (or LaunchOptions::placement) is the graph's
// name, as in CG_PROFILE: one variable for a program of several graphs.
TEST(Launch, GraphInAPlacementPathIsTheGraphsName) {
  ScopedEnv transport("CG_TRANSPORT", nullptr);
  const std::string file = ::testing::TempDir() + "launch_test.graph.placement";
  std::ofstream(file) << "a 3\n";
  ScopedEnv from_env("CG_PLACEMENT", (::testing::TempDir() + "{graph}.graph.placement").c_str());
  EXPECT_EQ(cg::detail::place_actors(kSpec, {}).hosts, (std::vector<std::uint32_t>{3, 1, 0}));
  cg::LaunchOptions options;
  options.placement = ::testing::TempDir() + "{graph}.missing.{graph}";
  EXPECT_EQ(launch_error([&] { cg::detail::place_actors(kSpec, options); }),
            "placement file '" + ::testing::TempDir() +
                "launch_test.missing.launch_test' cannot be read");
  std::remove(file.c_str());
}

TEST(Launch, APlacementFileThatNeverEndsIsRefusedBeforeItIsRead) {
  cg::LaunchOptions options;
  options.placement = "/dev/zero";
  EXPECT_EQ(launch_error([&] { cg::detail::place_actors(kSpec, options); }),
            "placement file '/dev/zero' is not a regular file (a directory, a pipe or a device); "
            "it should hold one '<actor> <host>' line per actor");
}

TEST(Launch, APlacementFileOverItsBoundIsRefused) {
  const std::string path = ::testing::TempDir() + "placement_too_large.txt";
  {
    std::ofstream file(path, std::ios::binary);
    file << std::string(1048577, '#');
  }
  cg::LaunchOptions options;
  options.placement = path;
  EXPECT_EQ(launch_error([&] { cg::detail::place_actors(kSpec, options); }),
            "placement file '" + path +
                "' is larger than 1048576 bytes; it should hold one '<actor> <host>' line per "
                "actor");
  std::remove(path.c_str());
}

// ---- Actors sharing a GPU --------------------------------------------------

// r0, r1, r2: one NCCL group of three ranks; none asks for GPUs.
constexpr std::array<cg::detail::ActorSpec, 3> kRankActors{{
    {"r0", &run_nothing, 0, 0},
    {"r1", &run_nothing, 0, 0},
    {"r2", &run_nothing, 0, 0},
}};
constexpr std::array<std::uint32_t, 3> kThreeRanks{0, 1, 2};
constexpr std::array<cg::detail::CommunicatorSpec, 1> kThreeRankGroup{{{kThreeRanks}}};
constexpr cg::detail::GraphSpec kRanksSpec{"ranks", kRankActors, {}, {}, {}, kThreeRankGroup};

// Every actor on `hosts`, in the driver's segment where on host 0.
cg::detail::ActorPlacement placed_on(std::vector<std::uint32_t> hosts) {
  cg::detail::ActorPlacement placement;
  for (std::uint32_t host : hosts) {
    placement.local.push_back(host == 0);
    (host == 0 ? placement.local_count : placement.remote_count)++;
  }
  placement.hosts = std::move(hosts);
  return placement;
}

cg::LaunchOptions over_nccl() {
  cg::LaunchOptions options;
  options.communicator = cg::CommunicatorKind::nccl;
  return options;
}

const std::vector<std::string> kFirstTwoShareGpu0{"0", "0", "1"};

TEST(Launch, TwoRanksOfAGroupOnOneGpuAreRefusedNamingBothTheGpuAndTheOption) {
  EXPECT_EQ(launch_error([] {
              cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), kFirstTwoShareGpu0,
                                        cg::Mode::processes, over_nccl(), false, "node7");
            }),
            "graph 'ranks': actors 'r0' and 'r1', ranks 0 and 1 of NCCL communicator group 0, "
            "both run on GPU 0 of host 0: NCCL refuses two ranks of a group on one GPU; set "
            "cg::LaunchOptions::nccl_ranks_share_gpus (or CG_NCCL_SHARE_GPUS=1) to give each "
            "actor process an NCCL host identity of its own, or give each rank a GPU of its own");
}

TEST(Launch, RanksSharingAGpuGetHostIdentitiesOfTheirOwnAndTheOthersKeepTheHosts) {
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), kFirstTwoShareGpu0,
                                      cg::Mode::processes, over_nccl(), true, "node7"),
            (std::vector<std::string>{"node7-cg-r0", "node7-cg-r1", ""}));
  // All three on one GPU: three identities, one per process.
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), {"0", "0", "0"},
                                      cg::Mode::processes, over_nccl(), true, "node7"),
            (std::vector<std::string>{"node7-cg-r0", "node7-cg-r1", "node7-cg-r2"}));
  // Processes reached over TCP on the driver's host are told apart alike.
  cg::detail::ActorPlacement tcp = placed_on({0, 0, 0});
  tcp.tcp = true;
  tcp.local = {false, false, false};
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, tcp, {"0", "1", "1"}, cg::Mode::threads,
                                      over_nccl(), true, "node7"),
            (std::vector<std::string>{"", "node7-cg-r1", "node7-cg-r2"}));
}

TEST(Launch, RanksOnGpusOfTheirOwnOrOnOtherHostsOrOverTheHostCommunicatorNeedNoIdentity) {
  const std::vector<std::string> none(3);
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), {"0", "1", "2"},
                                      cg::Mode::processes, over_nccl(), false, "node7"),
            none);
  // GPU 0 of host 0 and GPU 0 of host 1 are two GPUs, unless the hosts are
  // one machine: with the option, their ranks are told apart too.
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 1, 2}), {"0", "0", "0"},
                                      cg::Mode::processes, over_nccl(), false, "node7"),
            none);
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 1, 2}), {"0", "0", "0"},
                                      cg::Mode::processes, over_nccl(), true, "node7"),
            (std::vector<std::string>{"node7-cg-r0", "node7-cg-r1", "node7-cg-r2"}));
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), {"0", "0", "0"},
                                      cg::Mode::processes, {}, false, "node7"),
            none);
}

TEST(Launch, RanksSharingAGpuInOneProcessAreRefusedEvenWithTheOption) {
  EXPECT_EQ(launch_error([] {
              cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 0}), {"0", "1", "1"},
                                        cg::Mode::threads, over_nccl(), true, "node7");
            }),
            "graph 'ranks': actors 'r1' and 'r2', ranks 1 and 2 of NCCL communicator group 0, "
            "both run on GPU 1 of host 0 in the driver's process (threads mode): NCCL refuses "
            "two ranks of a group on one GPU unless their processes claim hosts of their own, "
            "and one process has one NCCL host identity; launch in processes mode "
            "(cg::LaunchOptions::mode, CG_MODE=processes), or give each rank a GPU of its own");
  // A host command starts one process for all of its host's actors.
  cg::LaunchOptions host_command = over_nccl();
  host_command.host_commands[1] = {"ssh", "node8"};
  EXPECT_EQ(launch_error([&] {
              cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 1, 1}), {"0", "0", "0"},
                                        cg::Mode::processes, host_command, true, "node7");
            }),
            "graph 'ranks': actors 'r1' and 'r2', ranks 1 and 2 of NCCL communicator group 0, "
            "both run on GPU 0 of host 1 in the one process of host 1: NCCL refuses two ranks "
            "of a group on one GPU unless their processes claim hosts of their own, and one "
            "process has one NCCL host identity; place them on hosts of their own, or give each "
            "rank a GPU of its own");
  // One rank in that process, one in another: the process has an identity.
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({0, 0, 1}), {"0", "1", "1"},
                                      cg::Mode::processes, host_command, true, "node7"),
            (std::vector<std::string>{"", "node7-cg-r1", "node7-cg-host1"}));
  EXPECT_EQ(cg::detail::nccl_host_ids(kRanksSpec, placed_on({1, 0, 1}), {"0", "0", "1"},
                                      cg::Mode::processes, host_command, true, "node7"),
            (std::vector<std::string>{"node7-cg-host1", "node7-cg-r1", "node7-cg-host1"}))
      << "r0 in host 1's process and r1 in its own both work on a GPU 0";
}

TEST(Launch, TheSharingOptionIsOnByItsFieldOrTheEnvironmentAndOffByDefault) {
  ScopedEnv unset(cg::detail::nccl_share_gpus_variable, nullptr);
  EXPECT_FALSE(cg::detail::nccl_ranks_share_gpus({}));
  cg::LaunchOptions on;
  on.nccl_ranks_share_gpus = true;
  EXPECT_TRUE(cg::detail::nccl_ranks_share_gpus(on));
  {
    ScopedEnv one("CG_NCCL_SHARE_GPUS", "1");
    EXPECT_TRUE(cg::detail::nccl_ranks_share_gpus({}));
  }
  {
    ScopedEnv zero("CG_NCCL_SHARE_GPUS", "0");
    EXPECT_FALSE(cg::detail::nccl_ranks_share_gpus({}));
  }
  ScopedEnv yes("CG_NCCL_SHARE_GPUS", "yes");
  EXPECT_EQ(launch_error([] { cg::detail::nccl_ranks_share_gpus({}); }),
            "the environment variable CG_NCCL_SHARE_GPUS is 'yes'; it must be '1' or '0' (or "
            "unset)");
}

TEST(Launch, AnActorWithoutGpusWorksOnTheDriversFirstDevice) {
  const std::vector<std::vector<std::string>> devices{{}, {"5", "7"}, {}};
  cg::LaunchOptions options;
  options.cuda_devices = std::vector<std::string>{"3", "5", "7"};
  EXPECT_EQ(cg::detail::working_gpus(devices, options), (std::vector<std::string>{"3", "5", "3"}));
  {
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", "GPU-1234,2");
    EXPECT_EQ(cg::detail::working_gpus(devices, {}),
              (std::vector<std::string>{"GPU-1234", "5", "GPU-1234"}));
  }
  ScopedEnv unset("CUDA_VISIBLE_DEVICES", nullptr);
  EXPECT_EQ(cg::detail::working_gpus(devices, {}), (std::vector<std::string>{"0", "5", "0"}));
}

TEST(Launch, MpsRunsWhereItsPipeDirectoryHoldsTheControlPipe) {
  const std::string directory = ::testing::TempDir() + "launch_test_mps";
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  EXPECT_FALSE(cg::detail::mps_running(directory.c_str()));
  std::ofstream(directory + "/control") << "";
  EXPECT_TRUE(cg::detail::mps_running(directory.c_str()));
  EXPECT_FALSE(cg::detail::mps_running((directory + "/missing").c_str()));
  std::filesystem::remove_all(directory);
}

// a -cuda_ipc-> b, c (c uses no GPU); d asks for a GPU.
constexpr std::array<cg::detail::ActorSpec, 4> kIpcActors{{
    {"a", &run_nothing, 0, 0},
    {"b", &run_nothing, 0, 0},
    {"c", &run_nothing, 0, 0},
    {"d", &run_nothing, 0, 1},
}};
constexpr std::array<int, 1> kToB{1};
constexpr std::array<cg::detail::ChannelSpec, 1> kIpcToB{{{0, kToB, true}}};
constexpr cg::detail::GraphSpec kSharingSpec{"sharing", kIpcActors, kIpcToB, {}, {}, {}};

TEST(Launch, ActorProcessesSharingAGpuWithoutMpsAreToldTheCostAndTheWaysOut) {
  const std::vector<std::string> gpus{"0", "0", "0", "0"};
  EXPECT_EQ(cg::detail::gpu_sharing_notice(kSharingSpec, placed_on({0, 0, 0, 0}), gpus,
                                           cg::Mode::processes, {}, false),
            "cg: graph 'sharing': actor processes 'a', 'b' and 'd' share GPU 0, and NVIDIA MPS "
            "is not running: processes take turns on a GPU they share (a 16-byte tensor passed "
            "between two actors on an H100: 526 us p50 without MPS, 37 us under it); start MPS "
            "(nvidia-cuda-mps-control -d) or run the actors as threads (cg::LaunchOptions::mode, "
            "CG_MODE=threads)");
  EXPECT_EQ(cg::detail::gpu_sharing_notice(kSharingSpec, placed_on({0, 0, 0, 0}), gpus,
                                           cg::Mode::processes, {}, true),
            "")
      << "under MPS";
  EXPECT_EQ(cg::detail::gpu_sharing_notice(kSharingSpec, placed_on({0, 0, 0, 0}), gpus,
                                           cg::Mode::threads, {}, false),
            "")
      << "threads share one CUDA context";
  EXPECT_EQ(cg::detail::gpu_sharing_notice(kSharingSpec, placed_on({0, 0, 0, 0}),
                                           {"0", "1", "0", "2"}, cg::Mode::processes, {}, false),
            "")
      << "one GPU user per GPU (c uses none)";
  EXPECT_EQ(cg::detail::gpu_sharing_notice(kSharingSpec, placed_on({0, 0, 1, 1}), gpus,
                                           cg::Mode::processes, {}, false),
            "cg: graph 'sharing': actor processes 'a' and 'b' share GPU 0, and NVIDIA MPS is not "
            "running: processes take turns on a GPU they share (a 16-byte tensor passed between "
            "two actors on an H100: 526 us p50 without MPS, 37 us under it); start MPS "
            "(nvidia-cuda-mps-control -d) or run the actors as threads (cg::LaunchOptions::mode, "
            "CG_MODE=threads)")
      << "d runs on another host";
}

} // namespace
