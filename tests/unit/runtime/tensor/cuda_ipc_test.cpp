// cuda_ipc_test.cpp - the CUDA IPC transport below the graph: its message, its ports without a
// device, and (on a GPU machine, through the bundle) its buffers in one process.
#include "tensor/cuda_ipc.hpp"
#include <cg/actor.hpp>

#include "../../../gpu/gpu_skip.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// A channel of `max_in_flight` slots in heap memory (threads of one process).
struct MemoryChannel {
  explicit MemoryChannel(std::uint32_t max_in_flight, std::uint32_t slot_bytes = 4096)
      : config{max_in_flight, slot_bytes, 1},
        memory(std::aligned_alloc(64, cg::channel_footprint(config)), &std::free),
        channel(cg::Channel::create(memory.get(), config)) {}
  cg::ChannelConfig config;
  std::unique_ptr<void, decltype(&std::free)> memory;
  cg::Channel channel;
};

cg::Tensor ramp(int n, float start) {
  cg::Tensor t = cg::Tensor::empty(cg::DType::float32, {n});
  for (int i = 0; i < n; ++i)
    t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

TEST(CudaIpcBlock, RoundTripsEveryField) {
  cg::detail::CudaIpcBlock block;
  block.writer_pid = 4242;
  block.device = 3;
  block.generation = 7;
  block.bytes = 4096;
  block.pointer = 0x7f0012345000;
  block.event = 0x55aa;
  for (std::size_t i = 0; i < 64; ++i) {
    block.memory_handle[i] = static_cast<std::byte>(i);
    block.event_handle[i] = static_cast<std::byte>(255 - i);
  }
  std::vector<std::byte> bytes(cg::encoded_size(block));
  cg::Encoder encoder(bytes);
  cg::encode(encoder, block);
  ASSERT_EQ(encoder.written(), cg::Codec<cg::detail::CudaIpcBlock>::kBytes);
  const auto back = cg::decode_all<cg::detail::CudaIpcBlock>(bytes);
  EXPECT_EQ(back.writer_pid, 4242u);
  EXPECT_EQ(back.device, 3);
  EXPECT_EQ(back.generation, 7u);
  EXPECT_EQ(back.bytes, 4096u);
  EXPECT_EQ(back.pointer, 0x7f0012345000u);
  EXPECT_EQ(back.event, 0x55aau);
  EXPECT_EQ(back.memory_handle, block.memory_handle);
  EXPECT_EQ(back.event_handle, block.event_handle);
  bytes.pop_back();
  EXPECT_THROW(cg::decode_all<cg::detail::CudaIpcBlock>(bytes), cg::DecodeError);
}

// A writer's message reaches a reader that has no device: the reading task's
// error, and the channel stays in step.
// Publishes a value message: a float32[n] tensor's header, `carrier` and
// then a CudaIpcBlock (device_buffer) or `elements` bytes.
void publish_tensor(cg::ChannelWriter& writer, int n, std::uint8_t carrier,
                    std::size_t elements = 0) {
  const cg::detail::TensorHeader header{true, cg::DType::float32, {n}};
  const bool block =
      carrier == static_cast<std::uint8_t>(cg::detail::CudaIpcCarrier::device_buffer);
  std::span<std::byte> payload;
  const std::size_t bytes = cg::encoded_size(header) + 1 +
                            (block ? cg::Codec<cg::detail::CudaIpcBlock>::kBytes : elements);
  ASSERT_EQ(writer.acquire(bytes, payload, cg::Deadline::max()), cg::ChannelStatus::ok);
  cg::Encoder encoder(payload);
  cg::encode(encoder, header);
  cg::encode(encoder, carrier);
  if (block)
    cg::encode(encoder, cg::detail::CudaIpcBlock{});
  else
    std::memset(encoder.reserve(elements).data(), 0, elements);
  writer.publish(cg::MessageKind::value, encoder.written());
}

constexpr auto kDeviceBuffer = static_cast<std::uint8_t>(cg::detail::CudaIpcCarrier::device_buffer);
constexpr auto kInMessage = static_cast<std::uint8_t>(cg::detail::CudaIpcCarrier::in_message);

TEST(CudaIpcPorts, AReaderWithoutADeviceGetsTheReadingTasksError) {
  CG_SKIP_WITH_GPU();
  MemoryChannel memory(2);
  cg::ChannelWriter writer(memory.channel);
  publish_tensor(writer, 3, kDeviceBuffer);
  publish_tensor(writer, 5, kInMessage, 5 * sizeof(float));
  cg::CudaIpcInputPort port(cg::ChannelReader(memory.channel, 0), 7, 2, 0, cg::Overlap::on, "b",
                            "consume");
  for (int n : {3, 5}) {
    cg::Result<cg::Tensor> got;
    ASSERT_TRUE(port.read(got));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().actor, "b");
    EXPECT_EQ(got.error().method, "consume");
    EXPECT_EQ(got.error().exception_type, "cg::TensorError");
    EXPECT_EQ(got.error().message,
              "cannot receive float32[" + std::to_string(n) +
                  "] over cuda_ipc (channel 7): this process has no CUDA device" +
                  (cg::built_with_cuda() ? "" : " (the runtime was built without CUDA)"));
  }
}

// A carrier byte no writer sends is the reading task's error (the reader
// cannot know where the elements are), and the channel stays in step.
TEST(CudaIpcPorts, ACarrierNoWriterSendsIsTheReadingTasksErrorAndTheNextMessageIsRead) {
  MemoryChannel memory(2);
  cg::ChannelWriter writer(memory.channel);
  publish_tensor(writer, 3, 7, 12);
  std::span<std::byte> nothing;
  ASSERT_EQ(writer.acquire(0, nothing, cg::Deadline::max()), cg::ChannelStatus::ok);
  writer.publish(cg::MessageKind::value, 0); // not even a header
  cg::CudaIpcInputPort port(cg::ChannelReader(memory.channel, 0), 7, 2, 0, cg::Overlap::off, "b",
                            "consume");
  cg::Result<cg::Tensor> got;
  ASSERT_TRUE(port.read(got));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().actor, "b");
  EXPECT_EQ(got.error().exception_type, "cg::DecodeError");
  EXPECT_EQ(got.error().message, "channel 7 holds a value that cannot be decoded: cg: a cuda_ipc "
                                 "message says its elements are in place 7, which no writer sends");
  ASSERT_TRUE(port.read(got));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().exception_type, "cg::DecodeError");
  EXPECT_EQ(got.error().message.rfind("channel 7 holds a value that cannot be decoded: ", 0), 0u)
      << got.error().message;
}

TEST(CudaIpcPorts, AWriterWithoutADeviceSendsItsTasksErrorAndAnUndefinedTensorAsIs) {
  CG_SKIP_WITH_GPU();
  MemoryChannel memory(2);
  cg::CudaIpcOutputPort port(cg::ChannelWriter(memory.channel), 4, 2, 4096, 0, "a", "make");
  ASSERT_TRUE(port.write(cg::Result<cg::Tensor>(ramp(2, 0))));
  ASSERT_TRUE(port.write(cg::Result<cg::Tensor>(cg::Tensor{})));
  cg::CudaIpcInputPort reader(cg::ChannelReader(memory.channel, 0), 4, 2, 0, cg::Overlap::off, "b",
                              "consume");
  cg::Result<cg::Tensor> got;
  ASSERT_TRUE(reader.read(got));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().actor, "a");
  EXPECT_EQ(got.error().message,
            std::string("cannot send float32[2] on cpu over cuda_ipc (channel 4): this process "
                        "has no CUDA device") +
                (cg::built_with_cuda() ? "" : " (the runtime was built without CUDA)"));
  ASSERT_TRUE(reader.read(got));
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got.value().defined());
}

// --- on a GPU machine ---

// Writer and reader ports in one process (the threads-mode path: plain
// pointers), with and without overlap, through buffers that grow.
TEST(CudaIpcPorts, TensorsCrossOnTheGpuWithAndWithoutOverlap) {
  CG_SKIP_WITHOUT_GPU();
  for (cg::Overlap overlap : {cg::Overlap::off, cg::Overlap::on}) {
    MemoryChannel memory(2);
    cg::CudaIpcOutputPort writer(cg::ChannelWriter(memory.channel), 0, 2, 4096, 0, "a", "make");
    cg::CudaIpcInputPort reader(cg::ChannelReader(memory.channel, 0), 0, 2, 0, overlap, "b",
                                "consume");
    for (int n : {4, 1, 3000, 2, 100000, 7}) {
      const cg::Tensor sent = ramp(n, static_cast<float>(n)).to(cg::device::cuda);
      ASSERT_TRUE(writer.write(cg::Result<cg::Tensor>(sent)));
      cg::Result<cg::Tensor> got;
      ASSERT_TRUE(reader.read(got));
      ASSERT_TRUE(got.ok()) << got.error().message;
      ASSERT_EQ(got.value().device(), cg::device::cuda);
      const cg::Tensor back = got.value().to(cg::device::cpu); // waits for the copy
      ASSERT_EQ(back.shape(), (std::vector<std::int64_t>{n}));
      for (int i = 0; i < n; i += std::max(1, n / 50))
        ASSERT_EQ(back.data<float>()[i], static_cast<float>(n + i)) << "n = " << n;
    }
  }
}

// Tensors of at most kInMessageBytes that fit the slot travel in the message
// (carrier in_message, the elements after it); larger ones, or ones the slot
// cannot hold, in the slot's device buffer. Both arrive exactly.
TEST(CudaIpcPorts, SmallTensorsTravelInTheMessageLargerOnesInTheSlotsDeviceBuffer) {
  CG_SKIP_WITHOUT_GPU();
  constexpr int kLimit = static_cast<int>(cg::detail::kInMessageBytes / sizeof(float));
  struct Case {
    int n;
    std::uint32_t slot_bytes;
    std::uint8_t carrier;
  };
  for (const Case c : {Case{4, 4096, kInMessage}, Case{kLimit, 65536, kInMessage},
                       Case{kLimit + 1, 65536, kDeviceBuffer}, Case{kLimit, 4096, kDeviceBuffer}}) {
    MemoryChannel memory(2, c.slot_bytes);
    cg::CudaIpcOutputPort writer(cg::ChannelWriter(memory.channel), 0, 2, c.slot_bytes, 0, "a",
                                 "make");
    const cg::Tensor sent = ramp(c.n, 1.0f).to(cg::device::cuda);
    ASSERT_TRUE(writer.write(cg::Result<cg::Tensor>(sent)));
    ASSERT_TRUE(writer.write(cg::Result<cg::Tensor>(sent)));
    cg::ChannelReader raw(memory.channel, 0);
    cg::ChannelReader::Message message;
    ASSERT_EQ(raw.acquire(message, cg::Deadline::max()), cg::ChannelStatus::ok);
    cg::Decoder decoder(message.payload);
    (void)cg::decode<cg::detail::TensorHeader>(decoder);
    EXPECT_EQ(cg::decode<std::uint8_t>(decoder), c.carrier) << "n = " << c.n;
    EXPECT_EQ(decoder.remaining(), c.carrier == kInMessage
                                       ? c.n * sizeof(float)
                                       : cg::Codec<cg::detail::CudaIpcBlock>::kBytes);
    raw.release();
    cg::CudaIpcInputPort reader(cg::ChannelReader(memory.channel, 0), 0, 2, 0, cg::Overlap::off,
                                "b", "consume");
    cg::Result<cg::Tensor> got;
    ASSERT_TRUE(reader.read(got));
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(got.value().device(), cg::device::cuda);
    const cg::Tensor back = got.value().to(cg::device::cpu);
    ASSERT_EQ(back.numel(), c.n);
    for (int i = 0; i < c.n; ++i)
      ASSERT_EQ(back.data<float>()[i], 1.0f + static_cast<float>(i)) << "n = " << c.n;
  }
}

} // namespace
