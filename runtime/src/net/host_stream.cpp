#include "net/host_stream.hpp"

#include <cstdarg>
#include <cstdio>

namespace cg::detail {

ChannelStatus HostWriter::fail(ChannelStatus status, TcpFault fault, const char* format,
                               ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error_, sizeof error_, format, args);
  va_end(args);
  fault_ = fault;
  pending_ = false;
  const bool nothing_sent = status == ChannelStatus::too_large ||
                            (status == ChannelStatus::timeout && fault == TcpFault::none);
  if (!nothing_sent)
    broken_ = true;
  return status;
}

ChannelStatus HostWriter::refuse_overlapping_start(std::uint64_t frame) noexcept {
  return fail(ChannelStatus::closed, TcpFault::connection_error,
              "frame %llu: started while the one before it was still being sent",
              static_cast<unsigned long long>(frame));
}

ChannelStatus HostReader::fail(ChannelStatus status, TcpFault fault, const char* format,
                               ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error_, sizeof error_, format, args);
  va_end(args);
  return fail(status, fault);
}

ChannelStatus HostReader::fail(ChannelStatus status, TcpFault fault) noexcept {
  fault_ = fault;
  failed_ = status;
  return status;
}

} // namespace cg::detail
