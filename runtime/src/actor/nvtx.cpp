// nvtx.cpp - NVTX ranges in the domain "cg" (see cg/detail/nvtx.hpp).
#include <cg/detail/nvtx.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(CG_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace cg::detail {
namespace {

bool asked_for() {
  const char* value = std::getenv("CG_NVTX");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

#if defined(CG_HAVE_NVTX)
// Made on first use; NVTX loads the tool named by NVTX_INJECTION64_PATH
// (Nsight Systems sets it) at its first call, or makes every call a no-op.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t made = nvtxDomainCreateA("cg");
  return made;
}
#endif

} // namespace

// Read at each actor's attach, not cached: a process may launch graphs with
// and without it.
bool nvtx_enabled() noexcept {
#if defined(CG_HAVE_NVTX)
  return asked_for();
#else
  static const bool enabled = [] {
    if (asked_for())
      std::fputs("cg: CG_NVTX=1 asks for NVTX ranges, but this runtime was built without NVTX "
                 "(it comes with the CUDA toolkit: configure with -DCG_WITH_CUDA=ON)\n",
                 stderr);
    return false;
  }();
  return enabled;
#endif
}

#if defined(CG_HAVE_NVTX)
void nvtx_push(const char* name) noexcept {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &attributes);
}

void nvtx_pop() noexcept { nvtxDomainRangePop(domain()); }
#else
void nvtx_push(const char*) noexcept {}
void nvtx_pop() noexcept {}
#endif

} // namespace cg::detail
