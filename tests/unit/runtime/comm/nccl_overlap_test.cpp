// nccl_overlap_test.cpp - an overlapped NCCL receive (NcclCommunicator::recv_new) runs while
// the legacy default stream, where the actor's compute runs, is still busy.
//
// Two ranks on one GPU, each in a process of its own with an NCCL host
// identity of its own (NCCL_HOSTID): this test run again as each rank (a fork
// of a process that has used CUDA must not use CUDA: exec gives it its own).
// Rank 1 holds its legacy default stream with a host function until its
// receive is done: a receive that waited for that stream would never finish,
// and synchronize() times out instead.
#include "../../../gpu/gpu_skip.hpp"

#include <cg/device.hpp>
#include <cg/tensor.hpp>
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#include <cuda_runtime_api.h>
#endif

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kCount = 1 << 20; // 4 MiB of float32

#if defined(CG_HAVE_CUDA)
// A host function on the legacy default stream that holds it until `*open`.
void hold(void* open) {
  while (!static_cast<std::atomic<bool>*>(open)->load())
    std::this_thread::sleep_for(1ms);
}

// One rank, in a process of its own: rank 0 sends 0, 1, 2, ...; rank 1
// receives with recv_new while its legacy default stream is held.
void run_rank(int rank, const std::string& id_hex) {
  cg::NcclUniqueId id;
  ASSERT_EQ(id_hex.size(), 2 * id.bytes.size());
  for (std::size_t i = 0; i < id.bytes.size(); ++i)
    id.bytes[i] = static_cast<char>(std::stoi(id_hex.substr(2 * i, 2), nullptr, 16));
  cg::NcclCommunicator comm(id, 2, rank, 0);
  comm.set_timeout(8s);
  // NCCL connects two ranks at their first send and receive, and that set-up
  // may wait for the legacy default stream: connect before holding it, so that
  // what is measured is the receive alone.
  if (rank == 0) {
    comm.send(cg::Tensor::empty(cg::DType::float32, {1}).to(cg::device::cuda), 1);
  } else {
    (void)comm.recv_new(cg::DType::float32, {1}, 0);
  }
  comm.synchronize();
  if (rank == 0) {
    cg::Tensor ramp = cg::Tensor::empty(cg::DType::float32, {kCount});
    for (std::int64_t i = 0; i < kCount; ++i)
      ramp.data<float>()[i] = static_cast<float>(i);
    comm.send(ramp.to(cg::device::cuda), 1);
    comm.synchronize();
    return;
  }
  std::atomic<bool> open{false};
  ASSERT_EQ(cudaLaunchHostFunc(cudaStreamLegacy, hold, &open), cudaSuccess);
  try {
    cg::Tensor got = comm.recv_new(cg::DType::float32, {kCount}, 0);
    EXPECT_EQ(got.shape(), std::vector<std::int64_t>{kCount});
    EXPECT_EQ(got.device(), (cg::Device{cg::DeviceKind::cuda, 0}));
    comm.synchronize(); // the communicator's stream only: the legacy one is still held
    open = true;
    const cg::Tensor host = got.to(cg::device::cpu); // after the legacy stream
    for (std::int64_t i = 0; i < kCount; ++i)
      if (host.data<float>()[i] != static_cast<float>(i)) {
        ADD_FAILURE() << "element " << i << " is " << host.data<float>()[i];
        break;
      }
  } catch (const std::exception& e) {
    open = true;
    ADD_FAILURE() << "rank 1: " << e.what();
  }
  (void)cudaDeviceSynchronize();
}
#endif

TEST(NcclOverlap, AReceiveIntoANewTensorRunsWhileTheLegacyDefaultStreamIsBusy) {
#if defined(CG_HAVE_CUDA)
  if (const char* rank = std::getenv("CG_TEST_NCCL_OVERLAP_RANK")) {
    run_rank(std::atoi(rank), std::getenv("CG_TEST_NCCL_OVERLAP_ID"));
    return;
  }
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  const cg::NcclUniqueId id = cg::NcclCommunicator::make_unique_id();
  std::string id_hex;
  for (char byte : id.bytes) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(byte));
    id_hex += two;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter =
      "--gtest_filter=NcclOverlap.AReceiveIntoANewTensorRunsWhileTheLegacyDefaultStreamIsBusy";
  std::string color = "--gtest_color=no";
  std::vector<pid_t> ranks;
  std::vector<std::string> logs;
  for (int r = 0; r < 2; ++r) {
    logs.push_back(::testing::TempDir() + "nccl-overlap-" + std::to_string(::getpid()) + "-" +
                   std::to_string(r) + ".log");
    // Made before fork(): the child only opens its log and execs.
    std::vector<std::string> env{"CG_TEST_NCCL_OVERLAP_RANK=" + std::to_string(r),
                                 "CG_TEST_NCCL_OVERLAP_ID=" + id_hex,
                                 "NCCL_HOSTID=cg-overlap-test-rank-" + std::to_string(r)};
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "NCCL_HOSTID=", 12) != 0)
        env.emplace_back(*e);
    std::vector<char*> envp;
    for (std::string& e : env)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<char*> argv{const_cast<char*>(self.c_str()), filter.data(), color.data(), nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int log = ::open(logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        ::dup2(log, 1);
        ::dup2(log, 2);
      }
      ::execve(self.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    ASSERT_GT(pid, 0);
    ranks.push_back(pid);
  }
  // Within the bundle's 25 s for the whole suite: NCCL's start-up and one
  // timeout of the communicator (8 s) fit.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    int status = 0;
    while (::waitpid(ranks[r], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(ranks[r], SIGKILL);
        ::waitpid(ranks[r], &status, 0);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    std::ifstream log(logs[r]);
    const std::string output((std::istreambuf_iterator<char>(log)), {});
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "rank " << r << " did not pass (status " << status << "):\n"
        << output;
    std::remove(logs[r].c_str());
  }
#else
  GTEST_SKIP() << "no CUDA device: the runtime is built without CUDA";
#endif
}

} // namespace
