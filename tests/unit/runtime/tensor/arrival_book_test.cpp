// arrival_book_test.cpp - which tensors a task waits for after an overlapped
// receive (tensor/arrival_book.hpp), the ordering rule of each mode, and the
// per-thread book on a GPU where there is one (tensor/arrivals.hpp).
#include "tensor/arrival_book.hpp"
#include "tensor/arrivals.hpp"

#include <cg/device.hpp>
#include <cg/tensor.hpp>

#include "../../../gpu/gpu_skip.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using cg::detail::Arrival;
using cg::detail::ArrivalBook;
using cg::detail::SendHolds;

// Made-up events: the book never looks inside them.
void* event(int n) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 + n)); }

TEST(TransferOrder, WithoutOverlapTheHostWaitsForTheTransferAfterTheComputeQueuedBeforeIt) {
  constexpr cg::detail::TransferOrder order = cg::detail::transfer_order(false);
  EXPECT_TRUE(order.host_waits);
  EXPECT_TRUE(order.transfer_waits_for_compute);
  EXPECT_FALSE(order.compute_waits_on_gpu);
}

TEST(TransferOrder, WithOverlapOnlyTheGpuWaitsAndTheTransferDoesNotWaitForEarlierCompute) {
  constexpr cg::detail::TransferOrder order = cg::detail::transfer_order(true);
  EXPECT_FALSE(order.host_waits);
  EXPECT_FALSE(order.transfer_waits_for_compute);
  EXPECT_TRUE(order.compute_waits_on_gpu);
}

// Two values read ahead of two computes: the first compute waits for the
// first transfer only, which is what lets the second run beside it.
TEST(ArrivalBook, AUseWaitsForItsOwnTensorOnlyNotForOthersReadAhead) {
  ArrivalBook book;
  int first = 0, second = 0;
  book.expect(&first, {event(1), 0});
  book.expect(&second, {event(2), 0});
  EXPECT_EQ(book.take(&first), (std::vector<Arrival>{{event(1), 0}}));
  EXPECT_EQ(book.size(), 1u);
  EXPECT_EQ(book.take(&second), (std::vector<Arrival>{{event(2), 0}}));
  EXPECT_TRUE(book.empty());
}

TEST(ArrivalBook, ASecondUseOfATensorWaitsForNothingMore) {
  ArrivalBook book;
  int storage = 0;
  book.expect(&storage, {event(1), 3});
  EXPECT_EQ(book.take(&storage).size(), 1u);
  EXPECT_TRUE(book.take(&storage).empty());
}

TEST(ArrivalBook, ATensorNeverBookedWaitsForNothingAndLeavesTheBookAsItWas) {
  ArrivalBook book;
  int booked = 0, other = 0;
  book.expect(&booked, {event(1), 0});
  EXPECT_TRUE(book.take(&other).empty());
  EXPECT_EQ(book.size(), 1u);
}

// Memory given back and made again can come back at the same address within
// one execution: its use then waits for both transfers, oldest first (more
// waiting than needed, never less).
TEST(ArrivalBook, AStorageBookedTwiceIsWaitedForOnBothOldestFirst) {
  ArrivalBook book;
  int storage = 0, other = 0;
  book.expect(&storage, {event(1), 0});
  book.expect(&other, {event(2), 1});
  book.expect(&storage, {event(3), 0});
  EXPECT_EQ(book.take(&storage), (std::vector<Arrival>{{event(1), 0}, {event(3), 0}}));
  EXPECT_EQ(book.take_all(), (std::vector<Arrival>{{event(2), 1}}));
}

// The end of an execution: what no task used (skipped for an upstream
// error) is still waited for before its memory goes back to the pool.
TEST(ArrivalBook, TheEndOfAnExecutionTakesEverythingLeftOldestFirst) {
  ArrivalBook book;
  int a = 0, b = 0, c = 0;
  book.expect(&a, {event(1), 0});
  book.expect(&b, {event(2), 0});
  book.expect(&c, {event(3), 1});
  (void)book.take(&b);
  EXPECT_EQ(book.take_all(), (std::vector<Arrival>{{event(1), 0}, {event(3), 1}}));
  EXPECT_TRUE(book.empty());
  EXPECT_TRUE(book.take_all().empty());
}

// Sends on different streams finish in any order: each tensor goes as soon
// as its own send is done, and not before.
TEST(SendHolds, ASentTensorIsKeptUntilItsOwnSendIsDoneWhateverOrderSendsFinishIn) {
  SendHolds<std::shared_ptr<int>> holds;
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  const std::weak_ptr<int> first_alive = first, second_alive = second;
  holds.hold(std::move(first), {event(1), 0});
  holds.hold(std::move(second), {event(2), 1});
  std::set<void*> done;
  auto finished = [&](const Arrival& a) { return done.count(a.event) == 1; };
  EXPECT_TRUE(holds.release_done(finished).empty());
  EXPECT_FALSE(first_alive.expired());
  EXPECT_FALSE(second_alive.expired());
  done.insert(event(2));
  EXPECT_EQ(holds.release_done(finished), (std::vector<Arrival>{{event(2), 1}}));
  EXPECT_TRUE(second_alive.expired());
  EXPECT_FALSE(first_alive.expired());
  EXPECT_EQ(holds.size(), 1u);
  done.insert(event(1));
  EXPECT_EQ(holds.release_done(finished), (std::vector<Arrival>{{event(1), 0}}));
  EXPECT_TRUE(first_alive.expired());
  EXPECT_TRUE(holds.empty());
}

// Without overlap nothing is booked, and a task's inputs wait for nothing:
// the default path finds an empty book, on any machine.
TEST(Arrivals, AnInputNobodyBookedWaitsForNothing) {
  cg::Tensor host = cg::Tensor::zeros(cg::DType::float32, {4});
  cg::detail::await_arrival(host);
  cg::detail::await_arrival(cg::Tensor{});
  cg::detail::await_all_arrivals();
  EXPECT_EQ(cg::detail::arrivals_pending(), 0u);
}

// On a GPU: a tensor booked after the work on the legacy default stream is
// waited for once by its use; the book is the calling thread's alone.
TEST(Arrivals, ABookedTensorIsWaitedForOnceAndOnlyByItsOwnThread) {
  CG_SKIP_WITHOUT_GPU();
  const cg::Device gpu{cg::DeviceKind::cuda, 0};
  cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {256}, gpu);
  cg::detail::expect_arrival(t, nullptr); // the legacy default stream itself
  EXPECT_EQ(cg::detail::arrivals_pending(), 1u);
  std::size_t seen_elsewhere = 99;
  std::thread([&] { seen_elsewhere = cg::detail::arrivals_pending(); }).join();
  EXPECT_EQ(seen_elsewhere, 0u);
  cg::detail::await_arrival(t);
  EXPECT_EQ(cg::detail::arrivals_pending(), 0u);
  cg::detail::expect_arrival(t, nullptr);
  cg::detail::await_all_arrivals();
  EXPECT_EQ(cg::detail::arrivals_pending(), 0u);
  EXPECT_EQ(t.to(cg::device::cpu).data<float>()[255], 0.0f);
}

// On a GPU: a sent tensor is kept while its send may run, and let go once
// the stream has passed it (the copy back waits for the legacy stream).
TEST(Arrivals, ASentTensorIsKeptUntilTheStreamHasPassedItsSend) {
  CG_SKIP_WITHOUT_GPU();
  const cg::Device gpu{cg::DeviceKind::cuda, 0};
  const std::size_t before = cg::detail::sends_held();
  {
    cg::Tensor t = cg::Tensor::zeros(cg::DType::float32, {256}, gpu);
    cg::detail::hold_until_sent(t, nullptr); // the legacy default stream itself
    EXPECT_EQ(cg::detail::sends_held(), before + 1);
    EXPECT_EQ(t.to(cg::device::cpu).data<float>()[0], 0.0f); // the stream is past the event
  }
  cg::detail::await_all_arrivals();
  EXPECT_EQ(cg::detail::sends_held(), 0u);
}

// Without a device, booking fails with CUDA's reason and books nothing.
TEST(Arrivals, BookingWithoutADeviceSaysWhyAndBooksNothing) {
  CG_SKIP_WITH_GPU();
  const cg::Tensor host = cg::Tensor::zeros(cg::DType::float32, {4});
  try {
    cg::detail::expect_arrival(host, nullptr);
    FAIL() << "booked without a device";
  } catch (const cg::TensorError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cg: overlapped transfer: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(cg::detail::arrivals_pending(), 0u);
}

} // namespace
