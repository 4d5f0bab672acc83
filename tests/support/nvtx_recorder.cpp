// nvtx_recorder.cpp - a tool NVTX loads as Nsight Systems' is loaded (NVTX_INJECTION64_PATH),
// writing each range of the domain API it sees to a file, for the NVTX test.
//
// NVTX calls InitializeInjectionNvtx2 at a process's first NVTX call; the tool
// fills in the functions it wants in NVTX's function tables. This one takes
// nvtxDomainRangePushEx and nvtxDomainRangePop and appends
// "<pid> <tid> push <message>" and "<pid> <tid> pop" lines to the file
// CG_TEST_NVTX_LOG names, one write() per line (O_APPEND: the lines of
// several processes do not mix).
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int log_file = -1;

void append(const std::string& what) {
  const std::string line =
      std::to_string(::getpid()) + " " + std::to_string(::syscall(SYS_gettid)) + " " + what + "\n";
  [[maybe_unused]] ssize_t n = ::write(log_file, line.data(), line.size());
}

int NVTX_API range_push(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
  const bool ascii = attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII;
  append(std::string("push ") + (ascii ? attributes->message.ascii : "<not ascii>"));
  return 0;
}

int NVTX_API range_pop(nvtxDomainHandle_t) {
  append("pop");
  return 0;
}

} // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const char* path = std::getenv("CG_TEST_NVTX_LOG");
  if (path == nullptr)
    return 0;
  log_file = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (log_file < 0 || callbacks == nullptr ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size <= NVTX_CBID_CORE2_DomainRangePop)
    return 0;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&range_push);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&range_pop);
  return 1;
}
