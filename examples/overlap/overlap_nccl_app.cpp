// overlap_nccl_app.cpp - runs the NCCL overlap graphs (overlap_nccl.cg.cpp) on one GPU and says
// what overlap gains, beside the serial sum of the parts.
//
//   overlap_nccl_example [--graph one|pipeline] [--executions K] [--in-flight F]
//                        [--products P] [--against PROGRAM]
//   overlap_nccl_example_overlapped [...]   compiled with --overlap-gpu-communication
//
// --graph one (the default): each execution sends four 64 MiB tensors and
// multiplies each as it arrives, one execution at a time. --graph pipeline:
// two stages, --in-flight executions (default 4) submitted before the oldest
// is waited for. Each result is checked.
//
// The parts are measured first, in this run: a transfer (executions that
// multiply nothing) and a product (the driver's own, on the same GPU). P,
// unless given, is chosen so that a tensor's products take as long as its
// transfer (the pipeline: each stage half as long). The serial sum is what
// one execution costs when nothing overlaps: the transfers plus every product.
//
// --against PROGRAM runs PROGRAM (the other build of this file) with the
// same graph, executions and P, reads its duration, and judges the ratio by
// tests/bench/targets.def ("overlap": one execution, "overlap_in_flight":
// the pipeline). Run overlapped --against plain: both measured in one run.
//
// The two ranks share the GPU: the program sets CG_NCCL_SHARE_GPUS=1 (each
// actor process its own NCCL host identity) unless the environment says
// otherwise. Without a CUDA device it says so and exits 0; where CUDA fails
// it quotes the failure and exits 1.
#include OVERLAP_NCCL_HEADER

#include "../../tests/bench/targets.hpp"
#include "gpu_math.hpp"

#include <cg/device.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

constexpr std::int64_t kN = 5792; // 64 MiB of float16: the graphs' n
constexpr int kTensorsPerExecution = 4;

struct Options {
  std::string graph = "one";
  int executions = 10;
  int in_flight = 0; // 0: the graph's default
  int products = -1; // -1: chosen from the parts
  std::string against;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether every result of an execution is the tensor of `value`s it was sent.
bool right(const Arrived& a, int value) {
  return a.first == static_cast<float>(value) && a.shape == std::vector<std::int64_t>{kN, kN} &&
         a.dtype == "float16";
}

// Whether an execution's results (one, or a tuple of them) are all right.
template <class R> bool all_right(const R& results, int value) {
  if constexpr (std::is_same_v<R, Arrived>)
    return right(results, value);
  else
    return std::apply([&](const auto&... a) { return (right(a, value) && ...); }, results);
}

// `executions` executions of `graph` with `products` products, `in_flight`
// submitted ahead; seconds from the first submission to the last result.
// Throws std::runtime_error on a wrong result.
template <class Graph> double run(Graph& graph, int executions, int in_flight, int products) {
  const auto start = std::chrono::steady_clock::now();
  std::deque<decltype(graph.execute(0, 0))> pending;
  for (int submitted = 0, checked = 0; checked < executions;) {
    if (submitted < executions && static_cast<int>(pending.size()) < in_flight) {
      pending.push_back(graph.execute(submitted++, products));
      continue;
    }
    const auto results = pending.front().get();
    pending.pop_front();
    if (!all_right(results, checked))
      throw std::runtime_error("execution " + std::to_string(checked) + ": wrong result");
    ++checked;
  }
  return seconds_since(start);
}

// Seconds per product of an n x n float16 tensor with itself, on the
// driver's GPU (the one the actors share): the median of five rounds of ten.
double product_seconds() {
  cg::Tensor a = overlap::filled(kN, 1.0f);
  cg::Tensor out = cg::Tensor::empty(a.dtype(), a.shape(), a.device());
  overlap::square(a, out); // cuBLAS loaded and warm
  (void)overlap::first_element(out);
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i)
      overlap::square(a, out);
    (void)overlap::first_element(out); // waits for them
    rounds.push_back(seconds_since(start) / 10);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

// The duration PROGRAM prints for the same work ("duration=<s> s"); 0 when
// it fails or prints none.
double duration_of(const std::string& program, const Options& o, int products, int in_flight) {
  const std::string command = "'" + program + "' --graph " + o.graph + " --executions " +
                              std::to_string(o.executions) + " --in-flight " +
                              std::to_string(in_flight) + " --products " + std::to_string(products);
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return 0;
  double seconds = 0;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::fputs(line, stdout); // its own lines, as it printed them
    if (const char* at = std::strstr(line, "duration="))
      seconds = std::atof(at + std::strlen("duration="));
  }
  return ::pclose(pipe) == 0 ? seconds : 0;
}

// What a measured run did, for the other build to do the same.
struct Measured {
  double seconds = 0;
  int products = 0;
  int in_flight = 0;
};

template <class Graph> Measured measure(Graph& graph, const Options& o) {
  const bool pipeline = o.graph == "pipeline";
  Measured m;
  m.in_flight = o.in_flight > 0 ? o.in_flight : (pipeline ? 4 : 1);
  // Per execution: four transfers (the pipeline: one), then each product.
  const int transfers = pipeline ? 1 : kTensorsPerExecution;
  const int products_per_tensor = pipeline ? 2 : 1; // the pipeline multiplies in both stages
  (void)run(graph, 2, 1, 1);                        // warm-up: buffers, cuBLAS, NCCL's connections
  m.products = o.products;
  if (m.products < 0) {
    const double transfer = run(graph, 3, 1, 0) / 3 / transfers;
    const double product = product_seconds();
    m.products =
        std::max(1, static_cast<int>(std::lround(transfer / product / products_per_tensor)));
    std::printf("parts: a 64 MiB transfer %.2f ms, a product %.3f ms: %d products per tensor "
                "and stage\n",
                transfer * 1e3, product * 1e3, m.products);
    const double serial = transfers * (transfer + products_per_tensor * m.products * product);
    std::printf("serial sum of the parts: %.2f ms per execution\n", serial * 1e3);
  }
  m.seconds = run(graph, o.executions, m.in_flight, m.products);
  std::printf("nccl %s, overlap_gpu_communication=%s: duration=%.4f s for %d executions, %d in "
              "flight (%.2f ms each)\n",
              o.graph.c_str(), OVERLAP_NAME, m.seconds, o.executions, m.in_flight,
              m.seconds / o.executions * 1e3);
  std::fflush(stdout);
  return m;
}

// Runs the other build on the same work, once this one's graph is gone, and
// judges the ratio.
int compare(const Options& o, const Measured& ours) {
  const double theirs = duration_of(o.against, o, ours.products, ours.in_flight);
  if (theirs <= 0) {
    std::fprintf(stderr, "overlap_nccl: %s gave no duration\n", o.against.c_str());
    return 1;
  }
  // Speeds, executions per second: ours must be the limit times theirs.
  const cg_bench::Target& target =
      cg_bench::target(o.graph == "pipeline" ? "overlap_in_flight" : "overlap");
  const cg_bench::Verdict verdict = cg_bench::judge(target, 1 / ours.seconds, 1 / theirs);
  std::printf("nccl %s: overlap_gpu_communication=%s %.2fx as fast as %s (target %s: %s)\n",
              o.graph.c_str(), OVERLAP_NAME, theirs / ours.seconds, o.against.c_str(),
              cg_bench::describe(target).c_str(), cg_bench::word(verdict));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--graph") == 0 && has_value)
      o.graph = argv[++i];
    else if (std::strcmp(argv[i], "--executions") == 0 && has_value)
      o.executions = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--in-flight") == 0 && has_value)
      o.in_flight = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--products") == 0 && has_value)
      o.products = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--against") == 0 && has_value)
      o.against = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--graph one|pipeline] [--executions K] [--in-flight F] "
                   "[--products P] [--against PROGRAM]\n",
                   argv[0]);
      return 2;
    }
  }
  if ((o.graph != "one" && o.graph != "pipeline") || o.executions < 1 || o.in_flight < 0 ||
      o.in_flight > 8 || o.products < -1) {
    std::fprintf(stderr, "overlap_nccl: --graph is one or pipeline, --executions at least 1, "
                         "--in-flight 1 to 8, --products 0 or more\n");
    return 2;
  }
  // A GPU whose CUDA fails is no machine without a GPU: that is an error.
  const cg::CudaDevices& cuda = cg::cuda_devices();
  if (!cuda.error.empty()) {
    std::fprintf(stderr,
                 "overlap_nccl (overlap_gpu_communication=%s): CUDA fails on this machine: %s\n",
                 OVERLAP_NAME, cuda.error.c_str());
    return 1;
  }
  if (cuda.count == 0) {
    std::printf(
        "overlap_nccl (overlap_gpu_communication=%s): no CUDA device; nothing to run (%s)\n",
        OVERLAP_NAME, cuda.none_because.c_str());
    return 0;
  }
  ::setenv("CG_NCCL_SHARE_GPUS", "1", 0); // the two ranks on one GPU
  try {
    cg::LaunchOptions options;
    options.max_in_flight = 8; // --in-flight up to 8
    options.get_timeout = std::chrono::minutes(2);
    options.communicator = cg::CommunicatorKind::nccl;
    Measured measured;
    if (o.graph == "one") {
      auto graph = cg::launch<&nccl_overlap_graph>(options);
      measured = measure(graph, o);
    } else {
      auto graph = cg::launch<&nccl_pipeline_graph>(options);
      measured = measure(graph, o);
    }
    return o.against.empty() ? 0 : compare(o, measured);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap_nccl: %s\n", e.what());
    return 1;
  }
}
