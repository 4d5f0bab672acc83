// cg/detail/nvtx.hpp - NVTX ranges around each operation of an actor, for Nsight Systems
// (CG_NVTX=1).
//
// With CG_NVTX=1 in the environment of the driver (actor processes inherit
// it), every READ, COMPUTE and WRITE of every actor, collectives and device
// transfers included, is an NVTX range in the domain "cg", named as the
// profile's trace names it ("READ c1 (first.echo)", "second.echo", "WRITE c2
// (second.echo)"), so Nsight Systems (`nsys profile`) shows the graph's
// operations beside the kernels they launched. A port holds its range's
// name, or null when NVTX is off: a range that is off costs one test of a
// pointer. NVTX comes with the CUDA toolkit (header-only); a runtime built
// without it says so once on stderr when CG_NVTX=1 asks for it.
#pragma once

namespace cg::detail {

/// Whether CG_NVTX=1 asked for ranges and this runtime can make them (read
/// from the environment at each call).
bool nvtx_enabled() noexcept;

/// Opens a range named `name` on the calling thread / closes the innermost.
void nvtx_push(const char* name) noexcept;
void nvtx_pop() noexcept;

/// A range for one scope; a null name makes none.
class NvtxRange {
public:
  explicit NvtxRange(const char* name) noexcept : name_(name) {
    if (name_ != nullptr)
      nvtx_push(name_);
  }
  ~NvtxRange() {
    if (name_ != nullptr)
      nvtx_pop();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

private:
  const char* name_;
};

} // namespace cg::detail
