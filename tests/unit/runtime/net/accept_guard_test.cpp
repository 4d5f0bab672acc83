// accept_guard_test.cpp - tests of what keeps the listeners of a launch over
// several hosts serving under a flood (net/accept_guard.hpp): the channel
// listener and the rendezvous let an honest peer in past connections that
// never speak, back off instead of spinning when descriptors run out, and
// take them up again once descriptors free.
#include "net/accept_guard.hpp"
#include "net/rendezvous.hpp"
#include "net/socket.hpp"
#include "net/tcp_setup.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cg::NetStatus;
using cg::TcpChannelSpec;

const cg::detail::Secret& launch_secret() {
  static const cg::detail::Secret secret = cg::detail::Secret::generate();
  return secret;
}

cg::Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }

// A connection to `to` that says nothing.
cg::detail::UniqueFd silent_connection(const cg::Endpoint& to) {
  cg::detail::UniqueFd fd;
  std::string error;
  EXPECT_EQ(cg::detail::connect_tcp(to, in(5s), fd, error), NetStatus::ok) << error;
  return fd;
}

// This process's CPU time (every thread), in seconds.
double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// As `ulimit -n 1024`, with every descriptor in use: until release(), an
// accept() fails with EMFILE.
class DescriptorsExhausted {
public:
  DescriptorsExhausted() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = std::min<rlim_t>(1024, saved_.rlim_cur);
    ::setrlimit(RLIMIT_NOFILE, &limit);
    fds_.reserve(1024);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0)
      fds_.push_back(null);
    for (int fd; null >= 0 && (fd = ::fcntl(null, F_DUPFD_CLOEXEC, 0)) >= 0;)
      fds_.push_back(fd);
  }
  ~DescriptorsExhausted() { release(); }
  void release() {
    for (int fd : fds_)
      ::close(fd);
    fds_.clear();
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  std::size_t held() const { return fds_.size(); }

private:
  rlimit saved_{};
  std::vector<int> fds_;
};

// How many descriptors this process has open.
std::size_t open_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

// Waits (up to 10 s) until this process has more than `before` descriptors
// open: a thread just started has made the ones it needs.
bool more_descriptors_than(std::size_t before) {
  for (const auto until = Clock::now() + 10s; Clock::now() < until;
       std::this_thread::sleep_for(1ms)) {
    if (open_descriptors() > before)
      return true;
  }
  return false;
}

// A socket made now, connected later (when no descriptor may be left to make it).
struct LateConnection {
  LateConnection() : fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {}
  void connect(const cg::Endpoint& to) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(to.port);
    ::inet_pton(AF_INET, to.host.c_str(), &address.sin_addr);
    const int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
    EXPECT_TRUE(rc == 0 || errno == EINPROGRESS) << cg::detail::errno_text(errno);
  }
  cg::detail::UniqueFd fd;
};

// ---- The channel listener ------------------------------------------------------

TEST(ListenerFlood, SixtyFourSilentConnectionsKeepNoWriterOut) {
  cg::TcpChannelListener listener;
  ASSERT_EQ(listener.listen(launch_secret(), {"127.0.0.1", 0}), NetStatus::ok) << listener.error();
  const TcpChannelSpec spec{"g", "c1", "a", "b", ""};
  std::vector<cg::TcpReader> readers;
  NetStatus accepted = NetStatus::system_error;
  std::thread accepting([&] { accepted = listener.accept({&spec, 1}, readers, in(10s)); });
  std::vector<cg::detail::UniqueFd> silent;
  for (int i = 0; i < 64; ++i)
    silent.push_back(silent_connection(listener.endpoint()));
  // All 64 accepted, and silent for longer than a newcomer's grace: the
  // writer takes the oldest one's place.
  std::this_thread::sleep_for(1100ms);
  cg::TcpWriter writer;
  std::string error;
  EXPECT_EQ(cg::connect_channel(listener.endpoint(), spec, launch_secret(), in(5s), writer, error),
            NetStatus::ok)
      << error;
  accepting.join();
  EXPECT_EQ(accepted, NetStatus::ok) << listener.error();
  const std::vector<std::string>& said = listener.rejections();
  EXPECT_EQ(std::count_if(said.begin(), said.end(),
                          [](const std::string& r) {
                            return r.find(": shed unauthenticated") != std::string::npos;
                          }),
            1)
      << "the oldest silent connection was not shed for the writer";
}

TEST(ListenerFlood, OutOfDescriptorsItBacksOffInsteadOfSpinningAndAcceptsOnceTheyFree) {
  cg::TcpChannelListener listener;
  ASSERT_EQ(listener.listen(launch_secret(), {"127.0.0.1", 0}), NetStatus::ok) << listener.error();
  const TcpChannelSpec spec{"g", "c1", "a", "b", ""};
  std::vector<cg::TcpReader> readers;
  NetStatus accepted = NetStatus::system_error;
  LateConnection late;
  const std::size_t before = open_descriptors();
  std::thread accepting([&] { accepted = listener.accept({&spec, 1}, readers, in(15s)); });
  // accept() makes its wake-up descriptor first: descriptors run out only
  // once it has, or a slow start of its thread would fail on its own.
  EXPECT_TRUE(more_descriptors_than(before)) << listener.error();
  double spent = 0;
  {
    DescriptorsExhausted exhausted;
    ASSERT_GT(exhausted.held(), 0u);
    late.connect(listener.endpoint()); // waits to be accepted: there is no descriptor for it
    std::this_thread::sleep_for(100ms);
    const double before = cpu_seconds();
    std::this_thread::sleep_for(1s);
    spent = cpu_seconds() - before;
  }
  EXPECT_LT(spent, 0.1) << "the listener spun: " << spent << " s of CPU in 1 s";
  cg::TcpWriter writer;
  std::string error;
  EXPECT_EQ(cg::connect_channel(listener.endpoint(), spec, launch_secret(), in(5s), writer, error),
            NetStatus::ok)
      << error;
  accepting.join();
  EXPECT_EQ(accepted, NetStatus::ok) << listener.error();
}

// ---- The rendezvous ---------------------------------------------------------------

struct Rendezvous {
  Rendezvous() {
    EXPECT_EQ(server.start({.graph = "g",
                            .actors = {"a"},
                            .listen = {"127.0.0.1", 0},
                            .secret = launch_secret(),
                            .on_rejected = [](const std::string&) {}}),
              NetStatus::ok)
        << server.error();
  }
  // Whether an honest client gets in and publishes.
  bool serves() {
    cg::RendezvousClient client;
    return client.connect(server.endpoint(), "g", launch_secret(), in(5s)) == NetStatus::ok &&
           client.publish("a", {"10.0.0.1", 1}, in(5s)) == NetStatus::ok;
  }
  cg::RendezvousServer server;
};

// The first line the server sends on `fd` (its challenge), read within `wait`.
std::string first_line(int fd, std::chrono::milliseconds wait) {
  std::string line;
  char c = 0;
  std::string error;
  while (cg::detail::receive_exact(fd, &c, 1, in(wait), error) == NetStatus::ok && c != '\n')
    line += c;
  return line;
}

// Whether the server closes `fd` within `wait` (after what it sent already).
bool closed_within(int fd, std::chrono::milliseconds wait) {
  char c = 0;
  std::string error;
  NetStatus status = NetStatus::ok;
  while ((status = cg::detail::receive_exact(fd, &c, 1, in(wait), error)) == NetStatus::ok) {
  }
  return status == NetStatus::closed;
}

TEST(RendezvousFlood, SixtyFourSilentConnectionsKeepNoClientOut) {
  Rendezvous r;
  std::vector<cg::detail::UniqueFd> silent;
  for (int i = 0; i < 64; ++i)
    silent.push_back(silent_connection(r.server.endpoint()));
  EXPECT_TRUE(r.serves());
}

TEST(RendezvousFlood, PastTheBoundOfAnAddressItsOldestSilentConnectionIsShedForANewcomer) {
  Rendezvous r;
  std::vector<cg::detail::UniqueFd> silent;
  for (int i = 0; i < 200; ++i) // past the 128 of one address: let in, all within their grace
    silent.push_back(silent_connection(r.server.endpoint()));
  std::this_thread::sleep_for(1100ms);
  EXPECT_TRUE(r.serves());
  EXPECT_EQ(first_line(silent.front().get(), 1s).rfind("CHALLENGE ", 0), 0u);
  EXPECT_TRUE(closed_within(silent.front().get(), 1s)) << "the oldest was not shed";
  EXPECT_EQ(first_line(silent.back().get(), 1s).rfind("CHALLENGE ", 0), 0u);
  EXPECT_FALSE(closed_within(silent.back().get(), 100ms)) << "the newest was shed";
  const std::vector<std::string> said = r.server.rejections();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find(": shed unauthenticated after "), std::string::npos) << said[0];
}

TEST(RendezvousFlood, OutOfDescriptorsItBacksOffInsteadOfSpinningAndChallengesOnceTheyFree) {
  Rendezvous r;
  LateConnection late;
  double spent = 0;
  {
    DescriptorsExhausted exhausted;
    ASSERT_GT(exhausted.held(), 0u);
    late.connect(r.server.endpoint());
    std::this_thread::sleep_for(100ms);
    const double before = cpu_seconds();
    std::this_thread::sleep_for(1s);
    spent = cpu_seconds() - before;
  }
  EXPECT_LT(spent, 0.1) << "the rendezvous spun: " << spent << " s of CPU in 1 s";
  EXPECT_EQ(first_line(late.fd.get(), 1s).rfind("CHALLENGE ", 0), 0u)
      << "the client waiting when descriptors ran out got no challenge once they freed";
  EXPECT_TRUE(r.serves());
}

// ---- The policies -------------------------------------------------------------

using cg::detail::GuardClock;
using cg::detail::PendingConnection;

const cg::detail::PendingLimits limits{
    .total = 4, .per_address = 2, .hard_total = 6, .grace = std::chrono::seconds(1)};

TEST(Shedding, ANewcomerWithinTheBoundsShedsNobody) {
  const auto now = GuardClock::now();
  const PendingConnection pending[] = {{"10.0.0.1", now - 5s}, {"10.0.0.2", now - 5s}};
  EXPECT_EQ(cg::detail::connection_to_shed(pending, "10.0.0.3", limits, now), std::nullopt);
}

TEST(Shedding, PastTheBoundOfAnAddressItsOldestGoesNotAnotherAddresss) {
  const auto now = GuardClock::now();
  const PendingConnection pending[] = {
      {"10.0.0.9", now - 9s}, {"10.0.0.1", now - 5s}, {"10.0.0.1", now - 4s}};
  EXPECT_EQ(cg::detail::connection_to_shed(pending, "10.0.0.1", limits, now), 1u);
}

TEST(Shedding, PastTheTotalTheOldestOfAllGoes) {
  const auto now = GuardClock::now();
  const PendingConnection pending[] = {{"10.0.0.1", now - 9s},
                                       {"10.0.0.2", now - 5s},
                                       {"10.0.0.3", now - 4s},
                                       {"10.0.0.4", now - 3s}};
  EXPECT_EQ(cg::detail::connection_to_shed(pending, "10.0.0.5", limits, now), 0u);
}

TEST(Shedding, ConnectionsWithinTheirGraceStayUntilTheHardBound) {
  const auto now = GuardClock::now();
  std::vector<PendingConnection> pending(4, {"10.0.0.1", now - 100ms});
  pending[0].address = "10.0.0.2";
  pending[1].address = "10.0.0.3";
  EXPECT_EQ(cg::detail::connection_to_shed(pending, "10.0.0.4", limits, now), std::nullopt)
      << "a burst of honest peers is let in over the bound";
  pending.push_back({"10.0.0.5", now});
  pending.push_back({"10.0.0.6", now});
  EXPECT_EQ(cg::detail::connection_to_shed(pending, "10.0.0.7", limits, now), 0u);
}

TEST(RejectionLog, TheFirstFiveOfASecondAreSaidAndTheRestSummedUpOnceTheSecondIsOver) {
  cg::detail::RejectionLog log;
  const auto start = GuardClock::now();
  std::vector<bool> said;
  for (int i = 0; i < 1000; ++i) {
    const std::string address = i % 2 == 0 ? "10.0.0.1" : "10.0.0.2";
    const std::string reason =
        i % 10 == 9 ? "authentication failed (not a HELLO)" : "closed before it authenticated";
    said.push_back(
        log.add(address, reason, "connection " + std::to_string(i), start + 1ms * i / 10));
  }
  EXPECT_EQ(std::count(said.begin(), said.end(), true), 5);
  EXPECT_EQ(log.said(), (std::vector<std::string>{"connection 0", "connection 1", "connection 2",
                                                  "connection 3", "connection 4"}));
  EXPECT_EQ(log.summary(start + 999ms), std::nullopt) << "not before the second is over";
  EXPECT_EQ(log.next_summary(), start + 1s);
  EXPECT_EQ(log.summary(start + 1s),
            "995 more connections from 2 addresses in the last 1.0 s (895 closed before it "
            "authenticated, 100 authentication failed (not a HELLO))");
  EXPECT_EQ(log.summary(start + 5s), std::nullopt) << "said once";
  EXPECT_EQ(log.next_summary(), GuardClock::time_point::max());
  EXPECT_EQ(log.total(), 1000u);
  // A new second: said one by one again.
  EXPECT_TRUE(log.add("10.0.0.3", "closed before it authenticated", "connection 1000", start + 3s));
}

TEST(RejectionLog, MemoryStaysBoundedWhateverTheStrangersSend) {
  cg::detail::RejectionLog log;
  const auto start = GuardClock::now();
  for (int i = 0; i < 100'000; ++i) {
    // Every reason and address different, as a stranger could make them.
    log.add("10." + std::to_string(i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
                std::to_string(i % 256),
            "protocol '" + std::to_string(i) + std::string(100, 'x') + "' is not ours",
            "connection " + std::to_string(i), start);
  }
  EXPECT_EQ(log.said().size(), 5u);
  const std::optional<std::string> summary = log.summary(start, true);
  ASSERT_TRUE(summary.has_value());
  EXPECT_EQ(summary->rfind("99995 more connections from 256+ addresses in the last 0.0 s (", 0), 0u)
      << *summary;
  EXPECT_LT(summary->size(), 1200u) << "eight reasons of at most 80 characters, and the rest";
  EXPECT_NE(summary->find("99987 other reasons, 1 protocol '"), std::string::npos) << *summary;
}

TEST(AcceptBackoff, OutOfDescriptorsTheListenerPausesForThePause) {
  cg::detail::UniqueFd listener;
  cg::Endpoint bound;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, listener, bound, error), NetStatus::ok);
  LateConnection late;
  cg::detail::AcceptBackoff backoff(50ms);
  {
    DescriptorsExhausted exhausted;
    late.connect(bound);
    std::this_thread::sleep_for(50ms);
    const auto before = GuardClock::now();
    EXPECT_EQ(backoff.accept(listener.get()), -1);
    EXPECT_EQ(backoff.exhaustions(), 1u);
    EXPECT_EQ(backoff.last_error(), EMFILE);
    EXPECT_TRUE(backoff.paused(GuardClock::now()));
    EXPECT_GE(backoff.resume_at() - before, 50ms);
    EXPECT_EQ(backoff.accept(listener.get()), -1) << "paused: not even tried";
    EXPECT_EQ(backoff.exhaustions(), 1u);
  }
  std::this_thread::sleep_for(60ms);
  EXPECT_FALSE(backoff.paused(GuardClock::now()));
  const cg::detail::UniqueFd accepted(backoff.accept(listener.get()));
  EXPECT_TRUE(accepted) << "the connection that waited is taken once a descriptor frees";
}

TEST(ListenerFlood, InterruptEndsAnAcceptAndTheConnectionsOfTheSetUpAtOnce) {
  cg::TcpChannelListener listener;
  ASSERT_EQ(listener.listen(launch_secret(), {"127.0.0.1", 0}), NetStatus::ok) << listener.error();
  // A reader that never answers: the connection waits for its challenge.
  cg::detail::UniqueFd mute;
  cg::Endpoint mute_at;
  std::string error;
  ASSERT_EQ(cg::detail::listen_tcp({"127.0.0.1", 0}, mute, mute_at, error), NetStatus::ok);
  const TcpChannelSpec in_spec{"g", "c1", "a", "b", ""};
  const cg::TcpOutgoing out[] = {{{"g", "c2", "b", "c", ""}, mute_at}};
  cg::TcpChannels channels;
  NetStatus status = NetStatus::ok;
  const auto start = Clock::now();
  std::thread setting_up([&] {
    status = cg::set_up_channels(listener, {&in_spec, 1}, out, in(20s), channels);
  });
  std::this_thread::sleep_for(200ms);
  const auto interrupted = Clock::now();
  listener.interrupt();
  setting_up.join();
  EXPECT_LT(Clock::now() - interrupted, 500ms) << "the set-up went on after interrupt()";
  EXPECT_GE(interrupted - start, 200ms);
  EXPECT_NE(status, NetStatus::ok);
  EXPECT_NE(status, NetStatus::timeout) << channels.error;
}

} // namespace
