// device.cpp - device names, and whether this process has CUDA devices at all.
//
// Built in both configurations: without CUDA (CG_HAVE_CUDA undefined) every
// query answers "none", so callers need no #ifdef to skip GPU work. With
// CUDA, "none" is judged from evidence (tensor/cuda_presence.hpp): a GPU
// machine whose CUDA fails must not pass for one without a GPU.
#include <cg/device.hpp>

#include "tensor/cuda_presence.hpp"

#if defined(CG_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <dirent.h>

#include <algorithm>
#include <cstdlib>

namespace cg {
namespace detail {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& name : names)
    all += (all.empty() ? "" : ", ") + name;
  return all;
}

} // namespace

CudaDevices judge_cuda_devices(const CudaFacts& facts) {
  const bool nodes = !facts.device_nodes.empty();
  if (facts.answer == CudaAnswer::devices && facts.count > 0)
    return CudaDevices{.count = facts.count, .error = "", .none_because = ""};
  const std::string said = facts.answer == CudaAnswer::devices
                               ? std::string("cudaGetDeviceCount found 0 devices")
                               : "cudaGetDeviceCount says " + facts.cuda_error;
  const bool absence = facts.answer != CudaAnswer::error;
  if (absence && !nodes) {
    return CudaDevices{.count = 0,
                       .error = "",
                       .none_because =
                           "no CUDA device: this machine has no /dev/nvidia* node, and " + said};
  }
  // The driver's nodes are there, but this process was given none of them.
  if (absence && facts.answer != CudaAnswer::no_driver && facts.visible_devices) {
    return CudaDevices{.count = 0,
                       .error = "",
                       .none_because = "no CUDA device for this process: CUDA_VISIBLE_DEVICES='" +
                                       *facts.visible_devices + "' leaves it none of this " +
                                       "machine's (" + joined(facts.device_nodes) + "), and " +
                                       said};
  }
  std::string error = facts.answer == CudaAnswer::devices
                          ? said
                          : "cudaGetDeviceCount failed with " + facts.cuda_error;
  if (nodes)
    error += " on a machine with a CUDA device (" + joined(facts.device_nodes) + ")";
  return CudaDevices{.count = 0, .error = error, .none_because = ""};
}

std::vector<std::string> cuda_device_nodes(const std::string& dev) {
  std::vector<std::string> nodes;
  DIR* dir = ::opendir(dev.c_str());
  if (dir == nullptr)
    return nodes;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("nvidia", 0) == 0)
      nodes.push_back(dev + "/" + name);
  }
  ::closedir(dir);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

} // namespace detail

std::string to_string(const Device& d) {
  if (d.kind == DeviceKind::cpu)
    return "cpu";
  return "cuda:" + std::to_string(d.index);
}

bool built_with_cuda() noexcept {
#if defined(CG_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

namespace {

CudaDevices ask_cuda() {
#if defined(CG_HAVE_CUDA)
  detail::CudaFacts facts;
  facts.device_nodes = detail::cuda_device_nodes();
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    facts.visible_devices = visible;
  const cudaError_t result = cudaGetDeviceCount(&facts.count);
  if (result == cudaSuccess) {
    facts.answer = detail::CudaAnswer::devices;
  } else {
    (void)cudaGetLastError(); // clear it, so that later CUDA calls do not report it
    facts.answer = result == cudaErrorNoDevice ? detail::CudaAnswer::no_device
                   : result == cudaErrorInsufficientDriver || result == cudaErrorStubLibrary
                       ? detail::CudaAnswer::no_driver
                       : detail::CudaAnswer::error;
    facts.count = 0;
    facts.cuda_error =
        std::string(cudaGetErrorName(result)) + " (" + cudaGetErrorString(result) + ")";
  }
  return detail::judge_cuda_devices(facts);
#else
  return CudaDevices{.count = 0, .error = "", .none_because = "the runtime was built without CUDA"};
#endif
}

} // namespace

const CudaDevices& cuda_devices() noexcept {
  static const CudaDevices devices = ask_cuda();
  return devices;
}

int cuda_device_count() noexcept { return cuda_devices().count; }

} // namespace cg
