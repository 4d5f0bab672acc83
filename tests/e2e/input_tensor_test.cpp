// input_tensor_test.cpp - a graph's tensor inputs made in place: graph.input_tensor()
// gives a host tensor in the input channel's memory, and execute() hands it over
// without copying its elements (cg::detail::GraphRuntime::input_tensor).
//
// Graph 'tensors' (graphs.cg.cpp): actor a doubles each float32 element.
// Graph 'tensor_total': actor a sums them, reading them in place.
#include "../support/scoped_env.hpp"
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using InputTensors = cg_test::NoLeftovers;

// A float32 input tensor of `n` elements made in place, holding
// first, first + 1, ... (exact in float up to 2^24).
cg::Tensor counting_from(cg::Graph<&tensors>& graph, std::int64_t n, float first) {
  cg::Tensor t = graph.input_tensor(cg::DType::float32, {n});
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < n; ++i)
    p[i] = first + static_cast<float>(i);
  return t;
}

// The elements of a doubled counting_from(n, first), checked one by one;
// "" when they are all right, else the first that is not.
std::string check_doubled(const cg::Tensor& t, std::int64_t n, float first) {
  if (t.shape() != std::vector<std::int64_t>{n})
    return "shape " + t.describe();
  const float* p = t.data<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    if (p[i] != 2 * (first + static_cast<float>(i)))
      return "element " + std::to_string(i) + " is " + std::to_string(p[i]);
  }
  return "";
}

// Small tensors live in a slot, large ones (over 64 KiB) in an overflow
// buffer; each of ten executions in flight keeps its own.
TEST_F(InputTensors, TensorsMadeInPlaceArriveExactlyWithTenInFlight) {
  auto graph = cg::launch<&tensors>();
  for (const std::int64_t n : {std::int64_t{5}, std::int64_t{1} << 22}) {
    std::vector<cg::Ref<cg::Tensor>> refs;
    for (int e = 0; e < 10; ++e) {
      const cg::Tensor t = counting_from(graph, n, static_cast<float>(1000 * e));
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 64, 0u);
      EXPECT_FALSE(t.owns_memory());
      refs.push_back(graph.execute(t));
    }
    for (int e = 0; e < 10; ++e)
      EXPECT_EQ(check_doubled(refs[e].get(), n, static_cast<float>(1000 * e)), "")
          << n << " elements, execution " << e;
  }
}

TEST_F(InputTensors, ASecondTensorForAnInputBeforeExecuteIsRefused) {
  auto graph = cg::launch<&tensors>();
  const cg::Tensor first = counting_from(graph, 3, 1);
  try {
    (void)graph.input_tensor(cg::DType::float32, {3});
    FAIL() << "a second tensor was made for input #0";
  } catch (const cg::Error& e) {
    EXPECT_STREQ(e.what(), "input #0 of graph 'tensors' already has a tensor from "
                           "input_tensor() that no execute() has taken: the next execute() "
                           "takes it (and one tensor per input waits at a time)");
  }
  EXPECT_EQ(check_doubled(graph.execute(first).get(), 3, 1), "");
  // Taken: the next one may be made.
  EXPECT_EQ(check_doubled(graph.execute(counting_from(graph, 4, 7)).get(), 4, 7), "");
}

// execute() takes the slot input_tensor() held whatever it is given: another
// tensor's elements are copied into it, and arrive.
TEST_F(InputTensors, ExecuteGivenAnotherTensorSendsThatOne) {
  auto graph = cg::launch<&tensors>();
  (void)counting_from(graph, 1 << 20, 5);
  cg::Tensor other = cg::Tensor::empty(cg::DType::float32, {2});
  other.data<float>()[0] = 10;
  other.data<float>()[1] = 11;
  EXPECT_EQ(check_doubled(graph.execute(other).get(), 2, 10), "");
  EXPECT_EQ(check_doubled(graph.execute(counting_from(graph, 1 << 20, 3)).get(), 1 << 20, 3), "");
}

TEST_F(InputTensors, ABadShapeIsATensorErrorAndTakesNoSlot) {
  auto graph = cg::launch<&tensors>();
  try {
    (void)graph.input_tensor(cg::DType::float32, {2, -1});
    FAIL() << "a negative extent was accepted";
  } catch (const cg::TensorError& e) {
    EXPECT_STREQ(e.what(), "cg: an input tensor: negative extent in shape [2, -1]");
  }
  try {
    (void)graph.input_tensor(cg::DType::float64, {INT64_MAX / 4, 8});
    FAIL() << "an overflowing size was accepted";
  } catch (const cg::TensorError& e) {
    EXPECT_STREQ(e.what(), "cg: an input tensor: float64[2305843009213693951, 8] is too large");
  }
  EXPECT_EQ(check_doubled(graph.execute(counting_from(graph, 2, 0)).get(), 2, 0), "");
}

// A tensor larger than the memory the system has left is refused before
// any of it is reserved (the kernel's OOM killer would otherwise choose
// whom to kill), and the input stays usable.
TEST_F(InputTensors, ATensorLargerThanTheMemoryLeftIsRefusedAndTakesNoSlot) {
  auto graph = cg::launch<&tensors>();
  try {
    (void)graph.input_tensor(cg::DType::float32, {std::int64_t{1} << 40}); // 4 TiB
    FAIL() << "a 4 TiB tensor was made";
  } catch (const cg::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "input #0 of graph 'tensors': float32 tensor of " +
                  std::to_string((std::uint64_t{4} << 40) + 64) +
                  " bytes: no shared-memory buffer that large could be allocated");
  }
  EXPECT_EQ(check_doubled(graph.execute(counting_from(graph, 2, 0)).get(), 2, 0), "");
}

TEST_F(InputTensors, AfterTeardownNoTensorIsMade) {
  auto graph = cg::launch<&tensors>();
  graph.teardown();
  EXPECT_THROW((void)graph.input_tensor(cg::DType::float32, {3}), cg::ChannelClosedError);
}

// Which bytes of which file `address` is mapped from (/proc/self/maps): its
// inode and the offset in the file; {0, 0} for memory no file backs.
std::pair<std::uint64_t, std::uint64_t> file_bytes_at(std::uintptr_t address) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::uintptr_t start = 0, end = 0;
    char dash = 0;
    std::string perms, device;
    std::uint64_t offset = 0, inode = 0;
    fields >> std::hex >> start >> dash >> end >> perms >> offset >> device >> std::dec >> inode;
    if (address >= start && address < end)
      return inode == 0 ? std::pair<std::uint64_t, std::uint64_t>{0, 0}
                        : std::pair{inode, offset + (address - start)};
  }
  return {0, 0};
}

// Graph 'tensor_total': a method taking a cg::TensorView sums the elements
// where they arrived. In threads mode that is where the caller wrote them:
// no copy from input_tensor() to the method, however large the tensor (a
// slot's bytes at the same address; an overflow buffer's through a mapping
// of the reader's own, so the same bytes of the same file).
TEST_F(InputTensors, AMethodTakingATensorViewReadsTheElementsWhereTheCallerWroteThem) {
  const bool threads = cg::launch_mode({}) == cg::Mode::threads;
  auto graph = cg::launch<&tensor_total>();
  for (const std::int64_t n : {std::int64_t{5}, std::int64_t{1} << 22}) {
    cg::Tensor t = graph.input_tensor(cg::DType::float32, {n});
    for (std::int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = static_cast<float>(i % 1000);
    double expected = 0;
    for (std::int64_t i = 0; i < n; ++i)
      expected += static_cast<double>(i % 1000);
    const auto written = reinterpret_cast<std::uintptr_t>(t.data_ptr());
    auto [sum, where] = graph.execute(t).get();
    EXPECT_EQ(sum, expected) << n << " elements";
    EXPECT_EQ(where % 64, 0u) << n << " elements";
    if (threads && n <= 5)
      EXPECT_EQ(where, written) << n << " elements: the method read a copy";
    if (threads && n > 5) {
      EXPECT_NE(file_bytes_at(written).first, 0u) << "an overflow buffer is a file";
      EXPECT_EQ(file_bytes_at(where), file_bytes_at(written))
          << n << " elements: the method read a copy";
    }
  }
  // A tensor of the caller's own is copied once, into the channel, and read
  // there: the method sees its elements, not where the caller has them.
  cg::Tensor own = cg::Tensor::zeros(cg::DType::float32, {3});
  own.data<float>()[1] = 2.5f;
  auto [sum, where] = graph.execute(own).get();
  EXPECT_EQ(sum, 2.5);
  EXPECT_NE(where, reinterpret_cast<std::uintptr_t>(own.data_ptr()));
}

// An actor reached over the network gets the elements from where the caller
// wrote them: the frame leaves from the input channel's memory.
TEST_F(InputTensors, TensorsMadeInPlaceCrossTheNetworkToo) {
#if CG_HAVE_UCX
  const std::vector<const char*> transports = {"tcp", "ucx"};
#else
  const std::vector<const char*> transports = {"tcp"};
#endif
  for (const char* transport : transports) {
    const cg_test::ScopedEnv host_transport("CG_HOST_TRANSPORT", transport);
    cg::LaunchOptions options;
    options.tcp_everywhere = true;
    auto graph = cg::launch<&tensors>(options);
    ASSERT_EQ(graph.channel_transports(), (std::vector<std::string>{transport, transport}));
    std::vector<cg::Ref<cg::Tensor>> refs;
    for (int e = 0; e < 4; ++e)
      refs.push_back(graph.execute(counting_from(graph, 1 << 20, static_cast<float>(e))));
    for (int e = 0; e < 4; ++e)
      EXPECT_EQ(check_doubled(refs[e].get(), 1 << 20, static_cast<float>(e)), "")
          << transport << ", execution " << e;
  }
}

} // namespace
