// accept_guard.cpp - shedding, accept back-off and the rejection log (see net/accept_guard.hpp).
#include "net/accept_guard.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace cg::detail {

std::optional<std::size_t> connection_to_shed(std::span<const PendingConnection> pending,
                                              std::string_view address, const PendingLimits& limits,
                                              GuardClock::time_point now) {
  std::optional<std::size_t> oldest_here;
  std::size_t here = 0;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (pending[i].address != address)
      continue;
    if (!oldest_here)
      oldest_here = i;
    ++here;
  }
  std::optional<std::size_t> shed;
  if (here >= limits.per_address)
    shed = oldest_here;
  else if (pending.size() >= limits.total && !pending.empty())
    shed = 0;
  if (!shed)
    return std::nullopt;
  const bool in_grace = now - pending[*shed].since < limits.grace;
  if (in_grace && pending.size() < limits.hard_total)
    return std::nullopt;
  if (in_grace) // at the hard bound: whatever is oldest goes, young or not
    return std::size_t{0};
  return shed;
}

int AcceptBackoff::accept(int listener) noexcept {
  if (paused(GuardClock::now()))
    return -1;
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd >= 0)
    return fd;
  const int error = errno;
  if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
    // The connection stays in the backlog, the listener readable: polling it
    // again at once would spin until a descriptor frees.
    ++exhaustions_;
    last_error_ = error;
    resume_at_ = GuardClock::now() + pause_;
  }
  return -1; // EAGAIN: none waits; ECONNABORTED, EINTR: the next poll says
}

bool RejectionLog::add(std::string_view address, std::string_view reason, std::string what,
                       GuardClock::time_point now) {
  ++total_;
  if (!started_ || (counted_ == 0 && now - window_ >= limits_.interval)) {
    started_ = true;
    window_ = now;
    said_in_window_ = 0;
  }
  if (counted_ == 0 && said_in_window_ < limits_.said_per_interval) {
    ++said_in_window_;
    if (said_.size() < limits_.kept)
      said_.push_back(std::move(what));
    return true;
  }
  if (counted_ == 0)
    counted_since_ = now;
  ++counted_;
  // A reason may quote what the stranger sent: counted by its first words.
  std::string key(reason.substr(0, 80));
  if (reasons_.find(key) == reasons_.end() && reasons_.size() >= limits_.reasons)
    key = "other reasons";
  ++reasons_[key];
  if (addresses_.size() < limits_.addresses)
    addresses_.insert(std::string(address));
  else if (addresses_.find(std::string(address)) == addresses_.end())
    addresses_overflowed_ = true;
  return false;
}

GuardClock::time_point RejectionLog::next_summary() const noexcept {
  return counted_ == 0 ? GuardClock::time_point::max() : window_ + limits_.interval;
}

std::optional<std::string> RejectionLog::summary(GuardClock::time_point now, bool final) {
  if (counted_ == 0 || (!final && now < next_summary()))
    return std::nullopt;
  const double seconds = std::chrono::duration<double>(now - window_).count();
  char span[32];
  std::snprintf(span, sizeof span, "%.1f", seconds);
  const std::size_t addresses = addresses_.size();
  std::string text = std::to_string(counted_) + " more connection" + (counted_ == 1 ? "" : "s") +
                     " from " + std::to_string(addresses) + (addresses_overflowed_ ? "+" : "") +
                     " address" + (addresses == 1 && !addresses_overflowed_ ? "" : "es") +
                     " in the last " + span + " s (";
  // Most frequent reason first.
  std::vector<std::pair<std::string, std::uint64_t>> reasons(reasons_.begin(), reasons_.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < reasons.size(); ++i)
    text += (i == 0 ? "" : ", ") + std::to_string(reasons[i].second) + " " + reasons[i].first;
  text += ")";
  counted_ = 0;
  reasons_.clear();
  addresses_.clear();
  addresses_overflowed_ = false;
  window_ = now;
  said_in_window_ = 0;
  return text;
}

} // namespace cg::detail
