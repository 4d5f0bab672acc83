// cg/nccl_communicator.hpp - A Communicator over NCCL, for CUDA tensors (CUDA builds only).
//
//   // The group's creator, once:
//   cg::NcclUniqueId id = cg::NcclCommunicator::make_unique_id();
//   // ... hand `id` (128 plain bytes) to every rank, e.g. through a channel ...
//   // Each rank, in its own process, on its own GPU:
//   cg::NcclCommunicator comm(id, /*size=*/2, rank, /*cuda_device=*/rank);
//   comm.warm_up();                                   // connections made here
//   comm.allreduce(t, cg::ReduceOp::sum);             // enqueued on comm.stream()
//   comm.synchronize();                               // waits, at most timeout()
//
// NCCL is loaded with dlopen at first use, so programs have no link-time
// dependency on it: CG_NCCL_LIBRARY (a path) if set, else libnccl.so.2 from
// the loader's search path. Where NCCL comes inside a Python wheel, point
// CG_NCCL_LIBRARY at .../site-packages/nvidia/nccl/lib/libnccl.so.2. If it
// cannot be loaded, every call throws CommunicatorError{backend} saying so.
// The CUDA runtime is linked statically for the same reason.
//
// Calls check their tensors (on this communicator's device, contiguous, the
// counts the collective needs) and enqueue the NCCL operation on stream()
// (the one given, or one of its own); they return before the GPU is done.
// Each operation is ordered after the work queued so far on the legacy
// default stream (an event stream() waits for), where kernels launched
// without a stream computed its tensors and where their memory is given
// back (tensor/cuda_memory.cpp); the GPU keeps computing meanwhile.
// synchronize() waits for the stream, polling NCCL's asynchronous error, and
// aborts the communicator when timeout() passes. NCCL itself cannot check
// that a recv's dtype and shape are the sender's: only the element count
// travels, so the caller (the schedule) must pair them right.
// bool tensors travel as uint8 and reduce with min, max and product only.
//
// Construction calls ncclCommInitRank, which waits until every rank has
// called it (NCCL gives it no deadline). abort() may be called from any
// thread (ncclCommAbort) to unblock a rank stuck in NCCL; the communicator
// can then only be destroyed. abort() (and so synchronize() past its
// deadline, and the destructor) returns within about a second even when
// NCCL's abort waits for a stream that other work holds: that abort then
// finishes on a thread of its own.
#pragma once

#if !defined(CG_HAVE_CUDA)
#error "cg/nccl_communicator.hpp needs a runtime built with CUDA (configure with -DCG_WITH_CUDA=ON)"
#endif

#include <cg/communicator.hpp>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct CUstream_st; // cudaStream_t is CUstream_st*
struct CUevent_st;  // cudaEvent_t is CUevent_st*

namespace cg {

/// ncclUniqueId: opaque bytes that identify one group while it forms.
struct NcclUniqueId {
  std::array<char, 128> bytes{};
};

class NcclCommunicator final : public Communicator {
public:
  /// ncclGetUniqueId. Throws CommunicatorError{backend} if NCCL cannot be loaded or fails.
  static NcclUniqueId make_unique_id();

  /// NCCL's version as it encodes it (e.g. 22703 for 2.27.3); throws like make_unique_id.
  static int version();

  /// "" when the NCCL library can be loaded (and has every symbol used);
  /// otherwise why not, as make_unique_id would throw it: the loader's words
  /// (no such file, not a library, ...) or the symbol the library lacks.
  static std::string load_error();

  /// load_error().empty().
  static bool available() noexcept;

  /// Joins the group `id` as `rank` of `size` on CUDA device `cuda_device`;
  /// `stream` null makes a non-blocking stream of its own. Throws
  /// CommunicatorError{invalid} for a bad rank or size, {backend} for NCCL
  /// or CUDA failures. NCCL refuses a group with two ranks on one GPU as
  /// "invalid usage"; that error names the refusal (NCCL's "Duplicate GPU
  /// detected") and quotes NCCL's last error where it keeps one.
  NcclCommunicator(const NcclUniqueId& id, int size, int rank, int cuda_device,
                   CUstream_st* stream = nullptr);
  /// ncclCommAbort (nothing more after an abort), never ncclCommDestroy: the
  /// latter waits for the peers, and hangs for good when one of them is gone.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  int cuda_device() const noexcept { return device_; }
  CUstream_st* stream() const noexcept { return stream_; }
  void* cuda_stream() const noexcept override { return stream_; }

  void send(const Tensor& t, int peer) override;
  void recv(Tensor& t, int peer) override;
  void allreduce(Tensor& t, ReduceOp op) override;
  void allgather(const Tensor& in, Tensor& out) override;
  void reducescatter(const Tensor& in, Tensor& out, ReduceOp op) override;
  /// recv() into a new contiguous tensor of `dtype` and `shape` on
  /// cuda_device(), made from its memory pool in stream()'s order, so that
  /// the receive waits for nothing on the legacy default stream and runs
  /// while kernels queued there compute (cgc --overlap-gpu-communication).
  /// The caller orders the receive's readers after it (an event); its memory
  /// goes back in the legacy default stream's order, as any tensor's.
  Tensor recv_new(DType dtype, const std::vector<std::int64_t>& shape, int peer);
  void synchronize() override;
  void abort(std::string_view reason) noexcept override;

  /// A one-element allreduce, synchronized: NCCL sets up its connections
  /// here rather than in the first real call.
  void warm_up();

private:
  void check(const Tensor& t, const char* role, const std::string& call) const;
  void check_alive(const std::string& call) const;
  [[noreturn]] void fail(CommErrorKind kind, const std::string& call,
                         const std::string& detail) const;
  // Makes stream() wait for the legacy default stream's work so far.
  void after_default_stream(const std::string& call);
  void enqueued(int result, const std::string& call);

  void* comm_ = nullptr; // ncclComm_t
  CUstream_st* stream_ = nullptr;
  bool own_stream_ = false;
  CUevent_st* default_stream_done_ = nullptr; // for after_default_stream()
  int size_ = 0;
  int rank_ = 0;
  int device_ = 0;
  static constexpr std::chrono::milliseconds kAbortWait{1000}; // see abort()
  std::atomic<bool> aborted_{false};
  // Set by abort()'s thread once ncclCommAbort returned (shared: it may
  // outlive the communicator).
  std::shared_ptr<std::atomic<bool>> abort_finished_ = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex abort_mutex_; // guards abort_reason_
  std::string abort_reason_;
};

} // namespace cg
