// multihost_driver.cpp - a driver program for graph 'multihost' to run as rank 0
// under mpirun or srun (tests/e2e/multihost_test.cpp runs it through the
// recipe `cgc --emit=mpirun` wrote). Prints what it got; exits 0 when every
// result is the expected one.
#include "e2e_multihost_tcp.cg.hpp"

#include <cstdio>
#include <string>

int main() {
  try {
    cg::LaunchOptions options;
    options.start_timeout = std::chrono::seconds(60);
    auto graph = cg::launch<&multihost>(options);
    auto [yc, yb, where] = graph.execute(5, "driver").get();
    std::string transports;
    for (const std::string& t : graph.channel_transports())
      transports += (transports.empty() ? "" : ",") + t;
    std::printf("results %lld %lld\ntransports %s\n", static_cast<long long>(yc),
                static_cast<long long>(yb), transports.c_str());
    std::string error;
    try {
      graph.execute(-1, "x").get();
    } catch (const cg::TaskError& e) {
      error = e.actor() + "." + e.method() + ": " + e.message();
    }
    std::printf("error %s\n", error.c_str());
    const bool ok = yc == 116 && yb == 16 && error == "a.add: negative input -1";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multihost_driver: %s\n", e.what());
    return 1;
  }
}
