// cg_bench.cpp - our figures beside baselines measured in the same run.
//
//   scripts/bench            (builds, then runs this)
//   cg_bench [--quick] [--json FILE]
//
// Prints one table: case, our median, the baseline and its median, the
// ratio, and the target from DESIGN.md §7. Baselines: OpenMPI over shared
// memory (mpi_baseline, started with mpirun), a hand-written ZeroMQ chain
// (zmq_chain), one memcpy. Every figure is a median of many repetitions;
// absolute times on a shared machine are noise, ratios much less so.
#include "bench_graphs.cg.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string name;
  double ours = 0;
  std::string baseline;        // what we compare with
  double theirs = 0;           // 0: no baseline measured
  std::string unit;            // "us", "GB/s", "exec/s", "s"
  bool higherIsBetter = false;
  std::string target;
  bool met = true;
};

double medianOf(std::vector<double> samples) {
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// Median wall time of `body` in microseconds, after a warm-up.
double medianMicros(int iterations, const std::function<void()>& body) {
  for (int i = 0; i < std::max(10, iterations / 10); ++i)
    body();
  std::vector<double> samples;
  samples.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    body();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return medianOf(samples);
}

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[256];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe.get()))
    out += buffer;
  return out;
}

// Runs a baseline program and returns its `median_ns=` in microseconds (0 if it failed).
double baselineMicros(const std::string& command) {
  std::string out = run(command + " 2>&1");
  auto at = out.find("median_ns=");
  if (at == std::string::npos) {
    std::fprintf(stderr, "baseline failed: %s\n%s\n", command.c_str(), out.c_str());
    return 0;
  }
  return std::strtod(out.c_str() + at + 10, nullptr) / 1000.0;
}

std::string mpirun(int ranks, const std::string& args) {
  // vader: OpenMPI's shared-memory transport, the fair comparison.
  return "mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np " +
         std::to_string(ranks) + " " CG_MPI_BASELINE " " + args;
}

std::string machineFacts() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
}

std::string format(double value, const std::string& unit) {
  char text[64];
  if (value == 0)
    return "-";
  if (unit == "exec/s")
    std::snprintf(text, sizeof text, "%.0f %s", value, unit.c_str());
  else if (value >= 100)
    std::snprintf(text, sizeof text, "%.0f %s", value, unit.c_str());
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, unit.c_str());
  return text;
}

double ratioOf(const Row& row) { return row.theirs == 0 ? 0 : row.ours / row.theirs; }

void printTable(const std::vector<Row>& rows) {
  std::printf("\n%s\n\n", machineFacts().c_str());
  std::printf("%-32s %14s  %-26s %14s %8s  %-28s\n", "case", "ours (median)", "baseline",
              "baseline", "ratio", "target");
  std::printf("%s\n", std::string(130, '-').c_str());
  for (const Row& row : rows) {
    char ratio[32] = "-";
    if (row.theirs != 0)
      std::snprintf(ratio, sizeof ratio, "%.2fx", ratioOf(row));
    std::printf("%-32s %14s  %-26s %14s %8s  %-28s%s\n", row.name.c_str(),
                format(row.ours, row.unit).c_str(), row.baseline.c_str(),
                format(row.theirs, row.unit).c_str(), ratio, row.target.c_str(),
                row.target.empty() ? "" : (row.met ? "  met" : "  MISSED"));
  }
}

void writeJson(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "{\n  \"machine\": \"" << machineFacts() << "\",\n  \"cases\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    out << "    {\"case\": \"" << row.name << "\", \"ours\": " << row.ours << ", \"unit\": \""
        << row.unit << "\", \"baseline\": \"" << row.baseline << "\", \"theirs\": " << row.theirs
        << ", \"ratio\": " << ratioOf(row) << ", \"target\": \"" << row.target
        << "\", \"met\": " << (row.met ? "true" : "false") << "}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

// Latency against a baseline, target "ours <= limit x theirs".
Row latencyRow(std::string name, double ours, std::string baseline, double theirs,
               double limit = 0) {
  Row row{std::move(name), ours, std::move(baseline), theirs, "us", false, "", true};
  if (limit > 0) {
    char target[64];
    std::snprintf(target, sizeof target, "<= %.1fx %s", limit, row.baseline.c_str());
    row.target = target;
    row.met = theirs > 0 && ours <= limit * theirs;
  }
  return row;
}

double cgcSeconds(int actors) {
  std::string dir = "/tmp/cg-bench-cgc-" + std::to_string(getpid());
  std::string source = dir + "/generated.cg.cpp";
  std::system(("mkdir -p " + dir).c_str());
  std::ofstream(source) << "#include <cg/cg.hpp>\n"
                           "struct CG_ACTOR Stage { int step(int x) { return x + 1; } };\n"
                           "CG_GRAPH void generated(cg::GraphBuilder& g) {\n"
                           "  auto v = g.input<int>();\n"
                           "  for (int i = 0; i < "
                        << actors
                        << "; ++i)\n"
                           "    v = g.actor<Stage>(cg::indexed_name(\"s\", i)).bind<&Stage::step>(v);\n"
                           "  g.output(v);\n}\n";
  std::string command = "'" CG_CGC "' " + source + " -o " + dir + "/out -- -I" CG_RUNTIME_INCLUDE;
  std::vector<double> samples;
  for (int i = 0; i < 3; ++i) {
    auto start = Clock::now();
    if (std::system((command + " > /dev/null").c_str()) != 0)
      return 0;
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::system(("rm -rf " + dir).c_str());
  return medianOf(samples);
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string json = "bench-results.json";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
  }
  const int n = quick ? 2000 : 20000;
  std::vector<Row> rows;
  std::uint64_t word = 42;

  std::printf("measuring (n=%d per case)...\n", n);
  cg::LaunchOptions threads;
  threads.mode = cg::Mode::threads;
  {
    const double mpi = baselineMicros(mpirun(2, "pingpong 8 " + std::to_string(n)));
    auto graph = cg::launch<&round_trip>();
    double ours = medianMicros(n, [&] { graph.execute(word).get(); });
    rows.push_back(latencyRow("round trip driver->a->driver 8 B", ours, "OpenMPI ping-pong", mpi,
                              1.2));
    graph.teardown();
    auto threaded = cg::launch<&round_trip>(threads);
    ours = medianMicros(n, [&] { threaded.execute(word).get(); });
    rows.push_back(latencyRow("  same, threads mode", ours, "OpenMPI ping-pong", mpi, 1.2));
  }
  {
    const double mpi = baselineMicros(mpirun(3, "ring " + std::to_string(n)));
    double threaded = 0;
    {
      auto graph = cg::launch<&chain>(threads);
      threaded = medianMicros(n, [&] { graph.execute(word).get(); });
    }
    auto graph = cg::launch<&chain>();
    double ours = medianMicros(n, [&] { graph.execute(word).get(); });
    rows.push_back(latencyRow("chain driver->a->b->driver 8 B", ours, "OpenMPI 3-rank ring", mpi,
                              1.2));
    rows.push_back(latencyRow("  same, threads mode", threaded, "OpenMPI 3-rank ring", mpi, 1.2));
    rows.push_back(latencyRow("chain driver->a->b->driver 8 B", ours, "ZeroMQ ipc:// by hand",
                              baselineMicros(CG_ZMQ_CHAIN " " + std::to_string(n))));

    // Pipelined: keep max_in_flight executions in flight, count completions.
    const int total = quick ? 20000 : 200000;
    std::vector<cg::Ref<std::uint64_t>> inFlight;
    auto start = Clock::now();
    int submitted = 0;
    for (; submitted < 8; ++submitted)
      inFlight.push_back(graph.execute(word));
    for (int done = 0; done < total; ++done) {
      inFlight[done % 8].get();
      if (submitted < total + 8)
        inFlight[done % 8] = graph.execute(word), ++submitted;
    }
    for (int i = 0; i < 8; ++i)
      inFlight[(total + i) % 8].get();
    double rate = total / std::chrono::duration<double>(Clock::now() - start).count();
    rows.push_back({"pipelined chain, 8 in flight", rate, "", 0, "exec/s", true, ">= 500000 exec/s",
                    rate >= 500000});
  }
  for (int fan : {1, 2, 4}) {
    double ours = 0;
    if (fan == 1) {
      auto graph = cg::launch<&fanout1>();
      ours = medianMicros(n / 2, [&] { graph.execute(word).get(); });
    } else if (fan == 2) {
      auto graph = cg::launch<&fanout2>();
      ours = medianMicros(n / 2, [&] { graph.execute(word).get(); });
    } else {
      auto graph = cg::launch<&fanout4>();
      ours = medianMicros(n / 2, [&] { graph.execute(word).get(); });
    }
    rows.push_back(latencyRow("fan-out 1->" + std::to_string(fan) + "->driver 8 B", ours,
                              "OpenMPI send/recv",
                              baselineMicros(mpirun(fan + 1, "fanout " + std::to_string(n / 2)))));
  }
  {
    cg::LaunchOptions options;
    options.max_in_flight = 1;  // default slots: large payloads go through overflow buffers
    auto graph = cg::launch<&payload_hop>(options);
    for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 10, std::size_t{64} << 10,
                              std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{64} << 20}) {
      int iterations = bytes >= (std::size_t{16} << 20) ? (quick ? 5 : 20) : n / 10;
      std::vector<std::uint8_t> payload(bytes, 7);
      double ours = medianMicros(iterations, [&] { graph.execute(payload).get(); });
      std::string label = bytes >= (1u << 20)   ? std::to_string(bytes >> 20) + " MiB"
                          : bytes >= (1u << 10) ? std::to_string(bytes >> 10) + " KiB"
                                                : std::to_string(bytes) + " B";
      double mpi = baselineMicros(mpirun(2, "hop " + std::to_string(bytes) + " " +
                                               std::to_string(iterations)));
      rows.push_back(latencyRow("one hop " + label, ours, "OpenMPI send + 8 B reply", mpi));
      if (bytes == (std::size_t{64} << 20)) {
        std::vector<std::uint8_t> copy(bytes);
        double memcpyMicros = medianMicros(iterations, [&] {
          std::memcpy(copy.data(), payload.data(), bytes);
          asm volatile("" : : "r"(copy.data()) : "memory");
        });
        double oursBandwidth = bytes / ours / 1e3;
        double memcpyBandwidth = bytes / memcpyMicros / 1e3;
        rows.push_back({"one hop 64 MiB bandwidth", oursBandwidth, "one memcpy", memcpyBandwidth,
                        "GB/s", true, ">= 0.8x memcpy", oursBandwidth >= 0.8 * memcpyBandwidth});
      }
    }
  }
  for (int actors : {10, 100, 1000}) {
    double seconds = cgcSeconds(actors);
    Row row{"cgc, " + std::to_string(actors) + " actors/tasks", seconds, "", 0, "s", false, "",
            true};
    if (actors == 1000) {
      row.target = "< 1 s";
      row.met = seconds > 0 && seconds < 1;
    }
    rows.push_back(row);
  }

  printTable(rows);
  writeJson(rows, json);
  std::printf("\nraw figures: %s\n", json.c_str());
}
