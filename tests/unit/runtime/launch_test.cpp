// launch_test.cpp - tests of the decisions cg::launch() makes before it starts
// anything (graph/launch.hpp): options, the actor executable, GPUs, placement.
#include "../../support/scoped_env.hpp"
#include "graph/launch.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
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

TEST(Launch, APlacementFileThatNeverEndsIsRefused) {
  cg::LaunchOptions options;
  options.placement = "/dev/zero";
  EXPECT_EQ(launch_error([&] { cg::detail::place_actors(kSpec, options); }),
            "placement file '/dev/zero' is larger than 1048576 bytes; it should hold one "
            "'<actor> <host>' line per actor");
}

} // namespace
