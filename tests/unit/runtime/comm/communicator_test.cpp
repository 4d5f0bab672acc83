// communicator_test.cpp - tests of HostCommunicator (and NcclCommunicator where a GPU exists).
//
// HostCommunicator stands in for NCCL wherever there is no GPU, so it is
// tested as the runtime uses it: ranks as threads of one process and as
// fork()ed processes sharing a memfd segment. Values are checked exactly;
// mismatches, missing ranks and aborts must end in an error naming the rank
// and the call, never in a hang or a silent truncation.
//
// One file, about 810 lines: every test runs its ranks through the same
// fixtures, as threads and as fork()ed processes, defined once at its top.
#include <cg/host_communicator.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
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
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../../gpu/gpu_skip.hpp"
#include "shm/shm.hpp"
#if defined(CG_HAVE_CUDA)
#include <cg/nccl_communicator.hpp>
#include <cuda_runtime_api.h>
#endif

namespace {

using namespace std::chrono_literals;
using Shape = std::vector<std::int64_t>;

// A group in an anonymous shared segment, as the driver would make it.
struct TestGroup {
  explicit TestGroup(int ranks, std::size_t max_message_bytes = 4096)
      : segment(cg::SharedSegment::create_anonymous(
            "test-group", cg::host_group_footprint(cg::HostGroupConfig{ranks, max_message_bytes}))),
        group(
            cg::HostGroup::create(segment.data(), cg::HostGroupConfig{ranks, max_message_bytes})) {}
  cg::SharedSegment segment;
  cg::HostGroup group;
};

template <class T> cg::Tensor tensor_of(const Shape& shape, const std::vector<T>& values) {
  cg::Tensor t = cg::Tensor::empty(cg::dtype_of<T>, shape);
  if (static_cast<std::size_t>(t.numel()) != values.size())
    throw std::logic_error("tensor_of: wrong value count");
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

template <class T> std::vector<T> values_of(const cg::Tensor& t) {
  const cg::Tensor c = t.contiguous();
  const T* p = c.data<T>();
  std::vector<T> out;
  for (std::int64_t i = 0; i < c.numel(); ++i)
    out.push_back(p[i]);
  return out;
}

// Throws (for the thread or the child process to report) unless equal.
template <class T>
void expect_values(const cg::Tensor& t, const std::vector<T>& expected, const std::string& what) {
  if (values_of<T>(t) != expected)
    throw std::runtime_error(what + ": wrong values");
}

// Runs body(comm) for every rank on its own thread; returns each rank's
// exception message ("" when it returned normally).
std::vector<std::string> run_threads(cg::HostGroup group, int ranks,
                                     std::chrono::milliseconds timeout,
                                     const std::function<void(cg::HostCommunicator&)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        cg::HostCommunicator comm(group, r);
        comm.set_timeout(timeout);
        body(comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  return errors;
}

// Runs body(comm) as ranks 1..ranks-1 in fork()ed children and as rank 0
// here; returns the children's exit codes (0: body returned; 10: it threw,
// the message on stderr). Children are killed and reaped whatever happens.
class ForkedRanks {
public:
  ForkedRanks(cg::HostGroup group, int ranks,
              const std::function<void(cg::HostCommunicator&)>& body) {
    for (int r = 1; r < ranks; ++r) {
      const pid_t pid = fork();
      if (pid < 0)
        throw std::runtime_error("fork failed");
      if (pid == 0) {
        int code = 0;
        try {
          cg::HostCommunicator comm(group, r);
          comm.set_timeout(20s);
          body(comm);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "rank %d: %s\n", r, e.what());
          code = 10;
        }
        _exit(code);
      }
      pids_.push_back(pid);
    }
  }
  ~ForkedRanks() {
    for (const pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  ForkedRanks(const ForkedRanks&) = delete;
  ForkedRanks& operator=(const ForkedRanks&) = delete;

  // Waits for every child; their exit codes (or 128 + signal).
  std::vector<int> wait() {
    std::vector<int> codes;
    for (const pid_t pid : pids_) {
      int status = 0;
      waitpid(pid, &status, 0);
      codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    pids_.clear();
    return codes;
  }

private:
  std::vector<pid_t> pids_;
};

// The same exchange for threads and processes, any number of ranks: send
// and recv around a ring, allreduce sum and max, allgather, reducescatter.
void exchange_everything(cg::HostCommunicator& comm) {
  const int r = comm.rank();
  const int n = comm.size();
  // Rank r sends [r, r + 0.5] to r + 1; even ranks send first.
  cg::Tensor out = tensor_of<float>({2}, {float(r), r + 0.5f});
  cg::Tensor in = cg::Tensor::zeros(cg::DType::float32, {2});
  const int next = (r + 1) % n;
  const int prev = (r + n - 1) % n;
  if (r % 2 == 0) {
    comm.send(out, next);
    comm.recv(in, prev);
  } else {
    comm.recv(in, prev);
    comm.send(out, next);
  }
  expect_values<float>(in, {float(prev), prev + 0.5f}, "recv");

  const std::int64_t ranks_sum = n * (n + 1) / 2; // 1 + 2 + ... + n
  cg::Tensor sum = tensor_of<std::int64_t>({2, 2}, {r + 1, 10 * (r + 1), -r, 1000});
  comm.allreduce(sum, cg::ReduceOp::sum);
  expect_values<std::int64_t>(sum, {ranks_sum, 10 * ranks_sum, n - ranks_sum, 1000 * n},
                              "allreduce(sum)");

  cg::Tensor max = tensor_of<double>({3}, {double(r), -double(r), r == 1 ? 7.5 : 0.25});
  comm.allreduce(max, cg::ReduceOp::max);
  expect_values<double>(max, {double(n - 1), 0.0, 7.5}, "allreduce(max)");

  cg::Tensor piece = tensor_of<std::int32_t>({2}, {r, 100 + r});
  cg::Tensor gathered = cg::Tensor::zeros(cg::DType::int32, {n, 2});
  comm.allgather(piece, gathered);
  std::vector<std::int32_t> all;
  for (int k = 0; k < n; ++k) {
    all.push_back(k);
    all.push_back(100 + k);
  }
  expect_values<std::int32_t>(gathered, all, "allgather");

  // Element k of every rank's input is r + k; summed over ranks, n * k + n(n-1)/2.
  std::vector<float> whole_values;
  for (int k = 0; k < 2 * n; ++k)
    whole_values.push_back(float(r + k));
  cg::Tensor whole = tensor_of<float>({2 * n}, whole_values);
  cg::Tensor mine = cg::Tensor::zeros(cg::DType::float32, {2});
  comm.reducescatter(whole, mine, cg::ReduceOp::sum);
  const float base = float(n * (n - 1) / 2);
  expect_values<float>(mine, {n * 2.0f * r + base, n * (2.0f * r + 1) + base},
                       "reducescatter(sum)");
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

cg::CommErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const cg::CommunicatorError& e) {
    return e.kind();
  }
  throw std::logic_error("no CommunicatorError thrown");
}

TEST(HostCommunicator, FootprintAndValidityOfGroupMemory) {
  EXPECT_EQ(cg::host_group_footprint(cg::HostGroupConfig{0, 64}), 0u);
  const std::size_t two = cg::host_group_footprint(cg::HostGroupConfig{2, 100});
  EXPECT_EQ(two % 64, 0u);
  EXPECT_GT(cg::host_group_footprint(cg::HostGroupConfig{3, 100}), two);
  cg::SharedSegment zeros = cg::SharedSegment::create_anonymous("not-a-group", 4096);
  EXPECT_FALSE(cg::HostGroup::attach(zeros.data()).valid());
  EXPECT_EQ(message_of([&] { cg::HostCommunicator(cg::HostGroup::attach(zeros.data()), 0); }),
            "cg: HostCommunicator: the memory holds no valid HostGroup");
  EXPECT_FALSE(
      cg::HostGroup::create(static_cast<char*>(zeros.data()) + 8, cg::HostGroupConfig{1, 8})
          .valid())
      << "misaligned";
  TestGroup g(2, 100);
  EXPECT_TRUE(cg::HostGroup::attach(g.segment.data()).valid());
  EXPECT_EQ(g.group.config().ranks, 2);
  EXPECT_EQ(g.group.config().max_message_bytes, 100u);
  EXPECT_EQ(message_of([&] { cg::HostCommunicator(g.group, 2); }),
            "cg: HostCommunicator: rank 2 is not in a group of 2");
}

TEST(HostCommunicator, ThreadsExchangeExactValuesThroughEveryOperation) {
  TestGroup g(3);
  const std::vector<std::string> errors = run_threads(g.group, 3, 20s, exchange_everything);
  EXPECT_EQ(errors, (std::vector<std::string>{"", "", ""}));
}

TEST(HostCommunicator, ForkedProcessesExchangeExactValuesThroughEveryOperation) {
  TestGroup g(3); // created before fork(): the children share the mapping
  ForkedRanks children(g.group, 3, exchange_everything);
  cg::HostCommunicator comm(g.group, 0);
  comm.set_timeout(20s);
  EXPECT_NO_THROW(exchange_everything(comm));
  EXPECT_EQ(children.wait(), (std::vector<int>{0, 0}))
      << "child exit codes (10: it threw, see stderr)";
}

TEST(HostCommunicator, ChildMappingTheSegmentAnewFromItsDescriptorJoinsTheGroup) {
  // What an exec()ed actor does with the descriptor it inherits (here a
  // fork()ed child's copy of it): adopt it, which maps the segment anew.
  TestGroup g(2);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 0;
    try {
      cg::SharedSegment mine = cg::SharedSegment::adopt(::dup(g.segment.fd()));
      if (mine.data() == g.segment.data())
        _exit(12);
      const cg::HostGroup group = cg::HostGroup::attach(mine.data());
      if (!group.valid())
        _exit(11);
      cg::HostCommunicator comm(group, 1);
      comm.set_timeout(20s);
      cg::Tensor t = cg::Tensor::zeros(cg::DType::uint8, {3});
      comm.recv(t, 0);
      expect_values<std::uint8_t>(t, {7, 8, 9}, "recv");
      comm.allreduce(t, cg::ReduceOp::product);
      expect_values<std::uint8_t>(t, {14, 16, 14}, "allreduce(product)");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 10;
    }
    _exit(code);
  }
  cg::HostCommunicator comm(g.group, 0);
  comm.set_timeout(20s);
  comm.send(tensor_of<std::uint8_t>({3}, {7, 8, 9}), 1);
  cg::Tensor t = tensor_of<std::uint8_t>({3}, {2, 2, 30});
  comm.allreduce(t, cg::ReduceOp::product);
  EXPECT_EQ(values_of<std::uint8_t>(t), (std::vector<std::uint8_t>{14, 16, 14}))
      << "uint8 products wrap: 9 * 30 = 270";
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(HostCommunicator, ManyMessagesInARowArriveInOrderAndStridedTensorsTravel) {
  TestGroup g(2);
  const std::vector<std::string> errors =
      run_threads(g.group, 2, 20s, [](cg::HostCommunicator& comm) {
        for (int i = 0; i < 200; ++i) {
          if (comm.rank() == 0) {
            comm.send(tensor_of<std::int32_t>({1}, {i}), 1);
          } else {
            cg::Tensor t = cg::Tensor::zeros(cg::DType::int32, {1});
            comm.recv(t, 0);
            expect_values<std::int32_t>(t, {i}, "message " + std::to_string(i));
          }
        }
        // A transposed view sent, received into a transposed view.
        float storage[2][3] = {{1, 2, 3}, {4, 5, 6}};
        cg::Tensor view = cg::Tensor::from_blob(storage, cg::DType::float32, {3, 2}, {1, 3});
        if (comm.rank() == 0) {
          comm.send(view, 1);
        } else {
          float target[2][3] = {};
          cg::Tensor into = cg::Tensor::from_blob(target, cg::DType::float32, {3, 2}, {1, 3});
          comm.recv(into, 0);
          expect_values<float>(into, {1, 4, 2, 5, 3, 6}, "strided recv");
          if (target[1][0] != 4 || target[0][2] != 3)
            throw std::runtime_error("strided recv: wrong layout");
        }
        comm.allreduce(view, cg::ReduceOp::sum);
        expect_values<float>(view, {2, 8, 4, 10, 6, 12}, "strided allreduce");
      });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
}

TEST(HostCommunicator, ReductionsGiveExactValuesForEveryDtype) {
  TestGroup g(2);
  const std::vector<std::string> errors =
      run_threads(g.group, 2, 20s, [](cg::HostCommunicator& comm) {
        const bool first = comm.rank() == 0;
        cg::Tensor f16 = tensor_of<cg::Half>(
            {2}, {cg::to_half(first ? 0.5f : 0.25f), cg::to_half(first ? -1.0f : 3.0f)});
        comm.allreduce(f16, cg::ReduceOp::sum);
        expect_values<cg::Half>(f16, {cg::to_half(0.75f), cg::to_half(2.0f)}, "float16 sum");
        cg::Tensor bf16 = tensor_of<cg::BFloat16>({1}, {cg::to_bfloat16(first ? 3.0f : 5.0f)});
        comm.allreduce(bf16, cg::ReduceOp::avg);
        expect_values<cg::BFloat16>(bf16, {cg::to_bfloat16(4.0f)}, "bfloat16 avg");
        cg::Tensor f32 = tensor_of<float>({2}, {first ? 1.5f : -2.0f, first ? 4.0f : 0.5f});
        comm.allreduce(f32, cg::ReduceOp::product);
        expect_values<float>(f32, {-3.0f, 2.0f}, "float32 product");
        cg::Tensor i8 =
            tensor_of<std::int8_t>({2}, {100, static_cast<std::int8_t>(first ? -5 : 3)});
        comm.allreduce(i8, cg::ReduceOp::sum);
        expect_values<std::int8_t>(i8, {-56, -2}, "int8 sum wraps");
        cg::Tensor i32 = tensor_of<std::int32_t>({2}, {first ? 7 : -7, first ? 2 : 3});
        comm.allreduce(i32, cg::ReduceOp::min);
        expect_values<std::int32_t>(i32, {-7, 2}, "int32 min");
        cg::Tensor i64 = tensor_of<std::int64_t>({1}, {first ? 7 : 8});
        comm.allreduce(i64, cg::ReduceOp::avg);
        expect_values<std::int64_t>(i64, {7}, "int64 avg truncates");
        cg::Tensor any = tensor_of<bool>({3}, {first, false, true});
        cg::Tensor all = tensor_of<bool>({3}, {first, false, true});
        comm.allreduce(any, cg::ReduceOp::max);
        expect_values<bool>(any, {true, false, true}, "bool max is or");
        comm.allreduce(all, cg::ReduceOp::min);
        expect_values<bool>(all, {false, false, true}, "bool min is and");
      });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
}

TEST(HostCommunicator, MismatchedShapeIsReportedToBothSidesAndTheGroupStaysUsable) {
  TestGroup g(2);
  const std::vector<std::string> errors =
      run_threads(g.group, 2, 20s, [](cg::HostCommunicator& comm) {
        if (comm.rank() == 0) {
          comm.send(cg::Tensor::zeros(cg::DType::float32, {3}), 1);
        } else {
          cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {4});
          comm.recv(t, 0);
        }
      });
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "cg: HostCommunicator rank 0 of 2: send to rank 1: rank 1 expected "
                        "float32[4], got float32[3]",
                        "cg: HostCommunicator rank 1 of 2: recv from rank 0: expected float32[4], "
                        "rank 0 sent float32[3]",
                    }));
  const std::vector<std::string> dtype_errors =
      run_threads(g.group, 2, 20s, [](cg::HostCommunicator& comm) {
        if (comm.rank() == 0) {
          comm.send(cg::Tensor::zeros(cg::DType::int64, {2}), 1);
        } else {
          cg::Tensor t = cg::Tensor::zeros(cg::DType::float64, {2});
          const cg::CommErrorKind kind = kind_of([&] { comm.recv(t, 0); });
          if (kind != cg::CommErrorKind::mismatch)
            throw std::runtime_error("not a mismatch");
        }
      });
  EXPECT_EQ(
      dtype_errors[0],
      "cg: HostCommunicator rank 0 of 2: send to rank 1: rank 1 expected float64[2], got int64[2]");
  EXPECT_EQ(dtype_errors[1], "");
  EXPECT_FALSE(g.group.aborted());
  EXPECT_EQ(run_threads(g.group, 2, 20s, exchange_everything), (std::vector<std::string>{"", ""}));
}

TEST(HostCommunicator, CollectiveWithMismatchedInputsFailsOnEveryRankWithoutWaiting) {
  TestGroup g(3);
  const std::vector<std::string> errors =
      run_threads(g.group, 3, 20s, [](cg::HostCommunicator& comm) {
        cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {comm.rank() == 2 ? 5 : 4});
        comm.allreduce(t, cg::ReduceOp::sum);
      });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(errors[r],
              "cg: HostCommunicator rank " + std::to_string(r) +
                  " of 3: allreduce(sum): rank 0's input is float32[4], rank 2's is float32[5]");
  }
  const std::vector<std::string> ops =
      run_threads(g.group, 2 + 1, 20s, [](cg::HostCommunicator& comm) {
        cg::Tensor t = cg::Tensor::zeros(cg::DType::int32, {2});
        comm.allreduce(t, comm.rank() == 1 ? cg::ReduceOp::max : cg::ReduceOp::sum);
      });
  EXPECT_EQ(ops[1], "cg: HostCommunicator rank 1 of 3: allreduce(max): rank 0 called "
                    "allreduce(sum), rank 1 called "
                    "allreduce(max)");
  const std::vector<std::string> invalid =
      run_threads(g.group, 3, 20s, [](cg::HostCommunicator& comm) {
        cg::Tensor in = cg::Tensor::zeros(cg::DType::int32, {2});
        cg::Tensor out = cg::Tensor::zeros(cg::DType::int32, {comm.rank() == 1 ? 5 : 6});
        comm.allgather(in, out);
      });
  EXPECT_EQ(
      invalid[0],
      "cg: HostCommunicator rank 0 of 3: allgather: rank 1: the output int32[5] on cpu must have "
      "the dtype and 3 times the elements of the input int32[2] on cpu");
  EXPECT_EQ(
      invalid[1],
      "cg: HostCommunicator rank 1 of 3: allgather: the output int32[5] on cpu must have the dtype "
      "and 3 times the elements of the input int32[2] on cpu");
  EXPECT_FALSE(g.group.aborted()) << "every rank saw the same verdict: the group is still in step";
  EXPECT_EQ(run_threads(g.group, 3, 20s, exchange_everything),
            (std::vector<std::string>{"", "", ""}));
}

TEST(HostCommunicator, InvalidCallsAreRefusedWithoutWaiting) {
  TestGroup g(2, 16);
  cg::HostCommunicator comm(g.group, 0);
  comm.set_timeout(std::chrono::hours(1)); // a wait would hang the test
  const cg::Tensor small = cg::Tensor::zeros(cg::DType::float32, {2});
  EXPECT_EQ(message_of([&] { comm.send(small, 0); }),
            "cg: HostCommunicator rank 0 of 2: send to rank 0: a rank cannot send to or receive "
            "from itself");
  EXPECT_EQ(message_of([&] { comm.send(small, 2); }),
            "cg: HostCommunicator rank 0 of 2: send to rank 2: no rank 2 in a group of 2");
  EXPECT_EQ(message_of([&] { comm.send(cg::Tensor::zeros(cg::DType::float32, {5}), 1); }),
            "cg: HostCommunicator rank 0 of 2: send to rank 1: the tensor float32[5] on cpu has 20 "
            "bytes, more than the "
            "group's max_message_bytes (16)");
  static float stand_in[2];
  cg::Tensor gpu = cg::Tensor::from_blob(stand_in, cg::DType::float32, {2}, {}, cg::device::cuda);
  EXPECT_EQ(message_of([&] { comm.recv(gpu, 1); }),
            "cg: HostCommunicator rank 0 of 2: recv from rank 1: the tensor is on cuda:0: "
            "HostCommunicator moves host "
            "tensors (use NcclCommunicator for CUDA tensors)");
  EXPECT_EQ(kind_of([&] { comm.send(cg::Tensor(), 1); }), cg::CommErrorKind::invalid);
  EXPECT_FALSE(g.group.aborted());
}

TEST(HostCommunicator, RankThatNeverShowsUpIsATimeoutNotAHang) {
  TestGroup g(3);
  cg::HostCommunicator comm(g.group, 0);
  comm.set_timeout(200ms);
  cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {2});

  // Point to point: the group stays usable.
  EXPECT_EQ(message_of([&] { comm.recv(t, 1); }),
            "cg: HostCommunicator rank 0 of 3: recv from rank 1: nothing arrived from rank 1 "
            "within 200 ms");
  EXPECT_EQ(
      message_of([&] { comm.send(t, 2); }),
      "cg: HostCommunicator rank 0 of 3: send to rank 2: rank 2 did not receive within 200 ms");
  EXPECT_FALSE(g.group.aborted());
  cg::HostCommunicator late(g.group, 2);
  late.set_timeout(100ms);
  EXPECT_EQ(kind_of([&] { late.recv(t, 0); }), cg::CommErrorKind::timeout)
      << "the timed-out send was withdrawn";

  // A collective: the barrier is broken, so the group is aborted.
  EXPECT_EQ(
      message_of([&] { comm.allreduce(t, cg::ReduceOp::sum); }),
      "cg: HostCommunicator rank 0 of 3: allreduce(sum): ranks 1, 2 do not arrive within 200 ms");
  EXPECT_TRUE(g.group.aborted());
  EXPECT_EQ(message_of([&] { late.send(t, 1); }),
            "cg: HostCommunicator rank 2 of 3: send to rank 1: the group was aborted: cg: "
            "HostCommunicator rank 0 of 3: "
            "allreduce(sum): ranks 1, 2 do not arrive within 200 ms");
}

TEST(HostCommunicator, CollectiveTimeoutNamesTheMissingRankAndAbortsTheGroupForTheOthers) {
  TestGroup g(2);
  cg::HostCommunicator comm(g.group, 0);
  comm.set_timeout(200ms);
  cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {2});
  EXPECT_EQ(message_of([&] { comm.allgather(t, t); }),
            "cg: HostCommunicator rank 0 of 2: allgather: rank 1 did not arrive within 200 ms")
      << "even with invalid arguments a rank waits for the others, so that all fail together";
  EXPECT_TRUE(g.group.aborted());
  EXPECT_EQ(g.group.abort_reason(),
            "cg: HostCommunicator rank 0 of 2: allgather: rank 1 did not arrive within 200 ms");
  cg::HostCommunicator other(g.group, 1);
  EXPECT_EQ(kind_of([&] { other.allreduce(t, cg::ReduceOp::sum); }), cg::CommErrorKind::aborted);
}

TEST(HostCommunicator, AbortWakesABlockedRecvInAnotherThread) {
  TestGroup g(2);
  std::string error;
  cg::CommErrorKind kind = cg::CommErrorKind::invalid;
  std::thread blocked([&] {
    cg::HostCommunicator comm(g.group, 1);
    comm.set_timeout(std::chrono::hours(1));
    cg::Tensor t = cg::Tensor::zeros(cg::DType::int8, {1});
    try {
      comm.recv(t, 0);
    } catch (const cg::CommunicatorError& e) {
      error = e.what();
      kind = e.kind();
    }
  });
  std::this_thread::sleep_for(100ms); // let it reach the futex sleep
  g.group.abort("actor b died");
  blocked.join();
  EXPECT_EQ(kind, cg::CommErrorKind::aborted);
  EXPECT_EQ(
      error,
      "cg: HostCommunicator rank 1 of 2: recv from rank 0: the group was aborted: actor b died");
  g.group.abort("a second reason");
  EXPECT_EQ(g.group.abort_reason(), "actor b died") << "the first reason is kept";
}

TEST(HostCommunicator, AbortWakesABlockedRecvInAnotherProcess) {
  TestGroup g(2);
  ForkedRanks child(g.group, 2, [](cg::HostCommunicator& comm) {
    comm.set_timeout(std::chrono::hours(1));
    cg::Tensor t = cg::Tensor::zeros(cg::DType::int8, {1});
    if (kind_of([&] { comm.recv(t, 0); }) != cg::CommErrorKind::aborted)
      throw std::runtime_error("not aborted");
  });
  std::this_thread::sleep_for(100ms);
  g.group.abort("driver: actor died");
  EXPECT_EQ(child.wait(), (std::vector<int>{0}));
}

// --- NCCL that does not load (any machine with a CUDA build) ---

#if defined(CG_HAVE_CUDA)
// NcclCommunicator::load_error() with CG_NCCL_LIBRARY=`library`, in a
// fork()ed child: a process that loaded NCCL keeps it, a child loads afresh.
std::string nccl_load_error_with(const std::string& library) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    ::setenv("CG_NCCL_LIBRARY", library.c_str(), 1);
    const std::string error = cg::NcclCommunicator::load_error();
    const bool written =
        ::write(fds[1], error.data(), error.size()) == static_cast<ssize_t>(error.size());
    _exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  std::string error;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    error.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the child that loads NCCL did not exit cleanly");
  return error;
}

// A GPU test that needs NCCL fails, quoting these, where a device is present
// (gpu_skip.hpp); they are the loader's words and the runtime's, exactly.
TEST(NcclCommunicator, AMissingLibraryIsALoadErrorQuotingTheLoader) {
  EXPECT_EQ(nccl_load_error_with("/nonexistent/libnccl.so.2"),
            "cg: NCCL could not be loaded (/nonexistent/libnccl.so.2: cannot open shared object "
            "file: No such file or directory): install NCCL, or set CG_NCCL_LIBRARY to the path "
            "of libnccl.so.2 (e.g. the one in site-packages/nvidia/nccl/lib)");
}

TEST(NcclCommunicator, AFileThatIsNoLibraryIsALoadErrorQuotingTheLoader) {
  const std::string path = ::testing::TempDir() + "not-a-library.so";
  {
    std::ofstream file(path);
    file << std::string(200, 'x'); // longer than an ELF header, so that its magic is read
  }
  const std::string error = nccl_load_error_with(path);
  std::remove(path.c_str());
  EXPECT_EQ(error, "cg: NCCL could not be loaded (" + path +
                       ": invalid ELF header): install NCCL, or set CG_NCCL_LIBRARY to the path "
                       "of libnccl.so.2 (e.g. the one in site-packages/nvidia/nccl/lib)");
}

TEST(NcclCommunicator, ALibraryThatIsNotNcclIsALoadErrorNamingTheMissingSymbol) {
  EXPECT_EQ(nccl_load_error_with("libz.so.1"),
            "cg: libz.so.1 has no symbol ncclGetVersion: NCCL 2.x is required");
}

TEST(NcclCommunicator, WithADevicePresentANcclThatDoesNotLoadFailsTheTestQuotingWhy) {
  const cg::CudaDevices one_gpu{.count = 1, .error = "", .none_because = ""};
  const cg_test::GpuDecision decision =
      cg_test::decide_gpu_test(one_gpu, 1, nccl_load_error_with("libz.so.1"));
  EXPECT_EQ(decision.verdict, cg_test::GpuVerdict::fail);
  EXPECT_EQ(decision.why, "NCCL cannot be loaded, and this process has 1 CUDA device(s): cg: "
                          "libz.so.1 has no symbol ncclGetVersion: NCCL 2.x is required");
}
#endif

// --- NCCL (GPU machines only) ---

TEST(NcclCommunicator, LibraryLoadsAndReportsAVersion) {
#if defined(CG_HAVE_CUDA)
  if (!cg::NcclCommunicator::available())
    CG_SKIP_WITHOUT_GPUS_AND_NCCL(1); // NCCL is wanted only beside a GPU
  EXPECT_GE(cg::NcclCommunicator::version(), 20000);
#else
  GTEST_SKIP() << "no CUDA device: the runtime is built without CUDA";
#endif
}

TEST(NcclCommunicator, OneRankCollectivesOnOneGpuGiveExactValues) {
#if defined(CG_HAVE_CUDA)
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  cg::NcclCommunicator comm(cg::NcclCommunicator::make_unique_id(), 1, 0, 0);
  comm.set_timeout(30s);
  comm.warm_up();
  cg::Tensor t = tensor_of<float>({3}, {1.5f, -2.0f, 4.0f}).to(cg::device::cuda);
  comm.allreduce(t, cg::ReduceOp::sum);
  cg::Tensor gathered = cg::Tensor::zeros(cg::DType::float32, {3}, cg::device::cuda);
  comm.allgather(t, gathered);
  cg::Tensor scattered = cg::Tensor::zeros(cg::DType::float32, {3}, cg::device::cuda);
  comm.reducescatter(gathered, scattered, cg::ReduceOp::max);
  comm.synchronize();
  EXPECT_EQ(values_of<float>(scattered.to(cg::device::cpu)),
            (std::vector<float>{1.5f, -2.0f, 4.0f}));
  cg::Tensor host = tensor_of<float>({1}, {1.0f});
  EXPECT_EQ(kind_of([&] { comm.allreduce(host, cg::ReduceOp::sum); }), cg::CommErrorKind::invalid)
      << "host tensors are refused";
#else
  GTEST_SKIP() << "no CUDA device: the runtime is built without CUDA";
#endif
}

// NCCL gives its operations no deadline: a rank whose peer never comes
// waits in the GPU for good. Here the communicator's stream is held by a host
// function instead, as such a peer would hold it; synchronize() must give up
// after timeout(), abort the communicator (ncclCommAbort, never
// ncclCommDestroy, which would wait for the stream), refuse what
// comes after, and let the communicator go at once.
TEST(NcclCommunicator, AStreamThatNeverFinishesTimesOutAbortsAndLetsGo) {
#if defined(CG_HAVE_CUDA)
  CG_SKIP_WITHOUT_GPUS_AND_NCCL(1);
  std::atomic<bool> release{false};
  // Lets the stream go after 10 s whatever happens, so that a failure here
  // cannot hang the suite.
  std::thread releaser([&] {
    for (int i = 0; i < 1000 && !release.load(); ++i)
      std::this_thread::sleep_for(10ms);
    release = true;
  });
  auto comm =
      std::make_unique<cg::NcclCommunicator>(cg::NcclCommunicator::make_unique_id(), 1, 0, 0);
  comm->set_timeout(200ms);
  comm->warm_up();
  ASSERT_EQ(cudaLaunchHostFunc(
                comm->stream(),
                [](void* flag) {
                  while (!static_cast<std::atomic<bool>*>(flag)->load())
                    std::this_thread::sleep_for(1ms);
                },
                &release),
            cudaSuccess);
  cg::Tensor t = tensor_of<float>({2}, {1.0f, 2.0f}).to(cg::device::cuda);
  comm->allreduce(t, cg::ReduceOp::sum);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of([&] { comm->synchronize(); }), cg::CommErrorKind::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "synchronize() outwaited its timeout";
  EXPECT_EQ(kind_of([&] { comm->allreduce(t, cg::ReduceOp::sum); }), cg::CommErrorKind::aborted);
  const auto destroying = std::chrono::steady_clock::now();
  comm.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - destroying, 2s)
      << "destroying an aborted communicator waited for its stream";
  release = true;
  releaser.join();
  (void)cudaDeviceSynchronize(); // the host function and what queued behind it
#else
  GTEST_SKIP() << "no CUDA device: the runtime is built without CUDA";
#endif
}

#if defined(CG_HAVE_CUDA)
// One rank of TwoRanksSharingOneGpuSendReceiveAndAllreduce, in a process of
// its own: joins the group, allreduces {rank + 1, 10}, and rank 0 sends the
// sum to rank 1; the values are checked here, the exit status says how it went.
void run_nccl_rank(int rank, const std::string& id_hex) {
  cg::NcclUniqueId id;
  ASSERT_EQ(id_hex.size(), 2 * id.bytes.size());
  for (std::size_t i = 0; i < id.bytes.size(); ++i)
    id.bytes[i] = static_cast<char>(std::stoi(id_hex.substr(2 * i, 2), nullptr, 16));
  try {
    cg::NcclCommunicator comm(id, 2, rank, 0);
    comm.set_timeout(30s);
    cg::Tensor t = tensor_of<std::int32_t>({2}, {rank + 1, 10}).to(cg::device::cuda);
    comm.allreduce(t, cg::ReduceOp::sum);
    cg::Tensor got = cg::Tensor::zeros(cg::DType::int32, {2}, cg::device::cuda);
    if (rank == 0)
      comm.send(t, 1);
    else
      comm.recv(got, 0);
    comm.synchronize();
    expect_values<std::int32_t>(t.to(cg::device::cpu), {3, 20}, "allreduce");
    if (rank == 1)
      expect_values<std::int32_t>(got.to(cg::device::cpu), {3, 20}, "recv");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << rank << ": " << e.what();
  }
}
#endif

// Two ranks on one GPU: NCCL joins them only when their processes claim
// hosts of their own (NCCL_HOSTID), and one process has one identity, so
// each rank is this test run again in a process of its own (a fork of a
// process that has used CUDA must not use CUDA: exec gives it its own).
TEST(NcclCommunicator, TwoRanksSharingOneGpuSendReceiveAndAllreduce) {
#if defined(CG_HAVE_CUDA)
  if (const char* rank = std::getenv("CG_TEST_NCCL_RANK")) {
    run_nccl_rank(std::atoi(rank), std::getenv("CG_TEST_NCCL_ID"));
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
  const std::string filter =
      "--gtest_filter=NcclCommunicator.TwoRanksSharingOneGpuSendReceiveAndAllreduce";
  std::vector<pid_t> ranks;
  std::vector<std::string> logs;
  for (int r = 0; r < 2; ++r) {
    logs.push_back(::testing::TempDir() + "nccl-rank-" + std::to_string(::getpid()) + "-" +
                   std::to_string(r) + ".log");
    // Made before fork(): the child only opens its log and execs.
    std::vector<std::string> env{"CG_TEST_NCCL_RANK=" + std::to_string(r),
                                 "CG_TEST_NCCL_ID=" + id_hex,
                                 "NCCL_HOSTID=cg-test-rank-" + std::to_string(r)};
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "NCCL_HOSTID=", 12) != 0)
        env.emplace_back(*e);
    std::vector<char*> envp;
    for (std::string& e : env)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string color = "--gtest_color=no";
    std::vector<char*> argv{const_cast<char*>(self.c_str()), const_cast<char*>(filter.c_str()),
                            color.data(), nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Its output goes to its log: its "[ OK ]" lines are not this run's.
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
  const auto deadline = std::chrono::steady_clock::now() + 60s;
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
