// zmq_chain.cpp - the chain driver -> a -> b -> driver written by hand with
// ZeroMQ ipc:// sockets: what a team builds without a graph compiler.
//
//   zmq_chain <iterations>      prints `median_ns=<n>`
#include <zmq.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string endpoint(const char* name) {
  return "ipc:///tmp/cg-zmq-" + std::to_string(getpid()) + "-" + name;
}

// One stage: receive 8 bytes on `in`, send them on `out`, until told to stop.
// The last stage binds its input, so the stage before can connect to it.
[[noreturn]] void relay(const std::string& in, bool bindInput, const std::string& out) {
  void* context = zmq_ctx_new();
  void* pull = zmq_socket(context, ZMQ_PULL);
  void* push = zmq_socket(context, ZMQ_PUSH);
  if (bindInput)
    zmq_bind(pull, in.c_str());
  else
    zmq_connect(pull, in.c_str());
  zmq_connect(push, out.c_str());
  std::uint64_t word = 0;
  while (zmq_recv(pull, &word, sizeof word, 0) == sizeof word) {
    zmq_send(push, &word, sizeof word, 0);
    if (word == UINT64_MAX)
      break;
  }
  zmq_close(pull);
  zmq_close(push);
  zmq_ctx_term(context);
  std::_Exit(0);
}

} // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 10000;
  std::string toA = endpoint("a"), toB = endpoint("b"), toDriver = endpoint("driver");
  void* context = zmq_ctx_new();
  void* push = zmq_socket(context, ZMQ_PUSH);
  void* pull = zmq_socket(context, ZMQ_PULL);
  zmq_bind(push, toA.c_str());
  zmq_bind(pull, toDriver.c_str());
  pid_t b = fork();
  if (b == 0)
    relay(toB, /*bindInput=*/true, toDriver);
  pid_t a = fork();
  if (a == 0)
    relay(toA, /*bindInput=*/false, toB);

  std::vector<double> samples;
  int warmup = std::max(10, iterations / 10);
  for (int i = 0; i < warmup + iterations; ++i) {
    std::uint64_t word = static_cast<std::uint64_t>(i);
    auto start = std::chrono::steady_clock::now();
    zmq_send(push, &word, sizeof word, 0);
    zmq_recv(pull, &word, sizeof word, 0);
    if (i >= warmup)
      samples.push_back(
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
              .count());
  }
  std::uint64_t stop = UINT64_MAX;
  zmq_send(push, &stop, sizeof stop, 0);
  zmq_recv(pull, &stop, sizeof stop, 0);
  waitpid(a, nullptr, 0);
  waitpid(b, nullptr, 0);
  zmq_close(push);
  zmq_close(pull);
  zmq_ctx_term(context);
  for (const std::string& path : {toA, toB, toDriver})
    unlink(path.substr(std::string("ipc://").size()).c_str());
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  std::printf("median_ns=%.0f\n", samples[samples.size() / 2]);
}
