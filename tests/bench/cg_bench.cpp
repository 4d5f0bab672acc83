// cg_bench.cpp - our figures beside baselines measured in the same run.
//
//   scripts/bench            (builds, then runs this)
//   cg_bench [--quick] [--json FILE]
//   cg_bench --cgc-only [--quick] [--cgc-case ACTORS:TASKS]... [--unrolled]
//            [--no-prelude-cache]
//
//   cg_bench --targets       every performance target, and which benchmark judges it
//
// Prints one table: case, our median, the baseline and its median, the
// ratio, and the project's target (targets.def) with "met" or "MISSED"
// beside each row that has one (profile_cost_bench: only the rows of what
// recording a profile costs). Baselines: OpenMPI over shared
// memory (mpi_baseline, started with mpirun), a hand-written ZeroMQ chain
// (zmq_chain), one memcpy. Every figure is a median of many repetitions;
// absolute times on a shared machine are noise, ratios much less so.
//
// The cgc cases compile a generated graph source of T tasks over A actors
// (a chain that moves to the next actor at every task: one channel per task)
// into a fresh directory, end to end, and print the median run's phases
// (cgc --time-phases) under the table. --cgc-only runs just those, for the
// sizes given (default 10:10, 100:1000, 1000:1000, 1000:10000); --unrolled
// writes the graph as one statement per bind instead of a loop. cgc keeps
// <cg/cg.hpp> precompiled beside its output (the first run of a case builds
// it); --no-prelude-cache has it parse the header every time.
#include "bench_graphs.cg.hpp"
#include "profile_cost.hpp"
#include "targets.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string name;
  double ours = 0;
  std::string baseline;                     // what we compare with
  double theirs = 0;                        // 0: no baseline measured
  std::string unit;                         // "us", "GB/s", "exec/s", "s"
  const cg_bench::Target* target = nullptr; // targets.def; none for a row shown for context
};

cg_bench::Verdict verdictOf(const Row& row) {
  return cg_bench::judge(*row.target, row.ours, row.theirs);
}

std::string targetOf(const Row& row) { return row.target ? cg_bench::describe(*row.target) : ""; }

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

// Medians of two bodies timed alternately, so that a change in the machine's
// load while they run weighs on both alike.
std::pair<double, double> interleavedMedianMicros(int iterations,
                                                  const std::function<void()>& first,
                                                  const std::function<void()>& second) {
  for (int i = 0; i < std::max(3, iterations / 10); ++i)
    first(), second();
  std::vector<double> a, b;
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    first();
    auto middle = Clock::now();
    second();
    a.push_back(std::chrono::duration<double, std::micro>(middle - start).count());
    b.push_back(std::chrono::duration<double, std::micro>(Clock::now() - middle).count());
  }
  return {medianOf(a), medianOf(b)};
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

// OpenMPI binds each rank to a core of its own when there are enough cores
// (its default), and binds nobody when oversubscribed; `binding` overrides.
std::string mpirun(int ranks, const std::string& args, const std::string& binding = "") {
  // vader: OpenMPI's shared-memory transport, the fair comparison.
  return "mpirun --allow-run-as-root --oversubscribe --mca btl self,vader " +
         (binding.empty() ? std::string() : "--bind-to " + binding + " ") + "-np " +
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
                format(row.theirs, row.unit).c_str(), ratio, targetOf(row).c_str(),
                row.target ? (std::string("  ") + cg_bench::word(verdictOf(row))).c_str() : "");
  }
}

// Under the table: how many rows met their target, and which did not (an
// indented row named with the row above it).
void printVerdicts(const std::vector<Row>& rows) {
  int met = 0, missed = 0, unjudged = 0;
  std::string above, which;
  for (const Row& row : rows) {
    const bool indented = row.name.rfind("  ", 0) == 0;
    const std::string name = indented ? above + " (" + row.name.substr(2) + ")" : row.name;
    if (!indented)
      above = row.name;
    if (!row.target)
      continue;
    switch (verdictOf(row)) {
    case cg_bench::Verdict::met:
      ++met;
      break;
    case cg_bench::Verdict::missed:
      which += (missed++ ? "; " : "") + name;
      break;
    case cg_bench::Verdict::unjudged:
      ++unjudged;
      break;
    }
  }
  std::printf("\ntargets (tests/bench/targets.def): %d met, %d MISSED%s%s\n", met, missed,
              missed ? ": " : "", which.c_str());
  if (unjudged > 0)
    std::printf("%d rows not judged: their baseline failed to run (see above)\n", unjudged);
}

void writeJson(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "{\n  \"machine\": \"" << machineFacts() << "\",\n  \"cases\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    out << "    {\"case\": \"" << row.name << "\", \"ours\": " << row.ours << ", \"unit\": \""
        << row.unit << "\", \"baseline\": \"" << row.baseline << "\", \"theirs\": " << row.theirs
        << ", \"ratio\": " << ratioOf(row) << ", \"target\": \"" << targetOf(row)
        << "\", \"verdict\": \"" << (row.target ? cg_bench::word(verdictOf(row)) : "") << "\"}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

// Latency against a baseline, judged by the target named `target` (none: "").
Row latencyRow(std::string name, double ours, std::string baseline, double theirs,
               std::string_view target = "") {
  return {std::move(name), ours, std::move(baseline),
          theirs,          "us", target.empty() ? nullptr : &cg_bench::target(target)};
}

// A graph source of `tasks` tasks over `actors` actors: task t runs on actor
// t % actors and reads task t - 1's result. As a loop (how a large graph is
// written), or unrolled (one line per bind: what a generator would emit).
std::string generatedGraph(int actors, int tasks, bool unrolled) {
  std::ostringstream out;
  out << "// " << tasks << " tasks over " << actors << " actors, generated by cg_bench.\n"
      << "#include <cg/cg.hpp>\n#include <vector>\n\n"
      << "struct CG_ACTOR Stage {\n  int step(int x) { return x + 1; }\n};\n\n"
      << "CG_GRAPH void generated(cg::GraphBuilder& g) {\n";
  if (unrolled) {
    for (int a = 0; a < actors; ++a)
      out << "  auto s" << a << " = g.actor<Stage>(\"s" << a << "\");\n";
    out << "  auto v = g.input<int>();\n";
    for (int t = 0; t < tasks; ++t)
      out << "  v = s" << t % actors << ".bind<&Stage::step>(v);\n";
  } else {
    out << "  std::vector<cg::Actor<Stage>> actors;\n"
        << "  for (int a = 0; a < " << actors << "; ++a)\n"
        << "    actors.push_back(g.actor<Stage>(cg::indexed_name(\"s\", a)));\n"
        << "  auto v = g.input<int>();\n"
        << "  for (int t = 0; t < " << tasks << "; ++t)\n"
        << "    v = actors[t % " << actors << "].bind<&Stage::step>(v);\n";
  }
  out << "  g.output(v);\n}\n";
  return out.str();
}

struct CgcRun {
  double seconds = 0; // 0: cgc failed
  std::string phases; // the median run's --time-phases lines
};

// cgc end to end on a generated graph, into a new output directory each time
// (removed only after the last run: deleting a thousand files just before
// creating as many slows the creation down): the median of `samples` runs.
CgcRun cgcRun(int actors, int tasks, bool unrolled, bool prelude, int samples) {
  std::string dir = "/tmp/cg-bench-cgc-" + std::to_string(getpid());
  std::string source = dir + "/generated.cg.cpp";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::ofstream(source) << generatedGraph(actors, tasks, unrolled);
  std::vector<std::pair<double, std::string>> runs;
  for (int i = 0; i < samples; ++i) {
    std::string command = "'" CG_CGC "' " + source + " -o " + dir + "/out" + std::to_string(i) +
                          (prelude ? "" : " --no-prelude-cache") +
                          " --time-phases -- -I" CG_RUNTIME_INCLUDE " 2>&1 >/dev/null";
    auto start = Clock::now();
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    std::string printed;
    char buffer[256];
    while (pipe && std::fgets(buffer, sizeof buffer, pipe.get()))
      printed += buffer;
    int status = pipe ? pclose(pipe.release()) : -1;
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (status != 0) {
      std::fprintf(stderr, "cgc failed on %d tasks / %d actors:\n%s\n", tasks, actors,
                   printed.c_str());
      std::system(("rm -rf " + dir).c_str());
      return {};
    }
    runs.emplace_back(seconds, printed);
  }
  std::system(("rm -rf " + dir).c_str());
  std::sort(runs.begin(), runs.end());
  const auto& median = runs[runs.size() / 2];
  return {median.first, median.second};
}

std::string countLabel(int n) {
  return n >= 1000 && n % 1000 == 0 ? std::to_string(n / 1000) + "k" : std::to_string(n);
}

// The cgc rows, and their phases for under the table.
void cgcRows(const std::vector<std::pair<int, int>>& cases, bool unrolled, bool prelude,
             int samples, std::vector<Row>& rows, std::string& phases) {
  for (auto [actors, tasks] : cases) {
    CgcRun run = cgcRun(actors, tasks, unrolled, prelude, samples);
    std::string name = "cgc, " + countLabel(tasks) + " tasks / " + countLabel(actors) + " actors";
    // The targets are for 1,000 and 10,000 tasks; other sizes are shown for the trend.
    const char* target = tasks == 10000 ? "cgc_10k" : tasks == 1000 ? "cgc_1k" : nullptr;
    rows.push_back({name, run.seconds, "", 0, "s", target ? &cg_bench::target(target) : nullptr});
    phases += "\n" + name + (unrolled ? " (unrolled source)" : "") +
              (prelude ? "" : " (no prelude cache)") + ", median run:\n" + run.phases;
  }
}

// Pipelined: 8 executions in flight, with and without a profile
// (profile_cost.hpp), to show what watching costs.
void profileCostRows(const cg::LaunchOptions& bound, const cg::LaunchOptions& threads, int rounds,
                     int total, std::vector<Row>& rows) {
  for (const cg::LaunchOptions* options : {&bound, &threads}) {
    const cg_bench::ProfileCost cost = cg_bench::profile_cost<&chain>(*options, rounds, total);
    rows.push_back({options == &bound ? "pipelined chain, 8 in flight" : "  same, threads mode",
                    cost.plain, "", 0, "exec/s", &cg_bench::target("pipelined")});
    rows.push_back({options == &bound ? "  same, profiled" : "  same, threads mode, profiled",
                    cost.profiled, "the same, not profiled", cost.plain, "exec/s",
                    &cg_bench::target("profile_full")});
  }
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false, cgcOnly = false, unrolled = false, prelude = true, listTargets = false;
  std::string json = "bench-results.json";
  std::vector<std::pair<int, int>> cgcCases; // actors, tasks
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
    else if (std::strcmp(argv[i], "--targets") == 0)
      listTargets = true;
    else if (std::strcmp(argv[i], "--cgc-only") == 0)
      cgcOnly = true;
    else if (std::strcmp(argv[i], "--unrolled") == 0)
      unrolled = true;
    else if (std::strcmp(argv[i], "--no-prelude-cache") == 0)
      prelude = false;
    else if (std::strcmp(argv[i], "--cgc-case") == 0 && i + 1 < argc) {
      int actors = 0, tasks = 0;
      if (std::sscanf(argv[++i], "%d:%d", &actors, &tasks) != 2 || actors < 1 || tasks < 1) {
        std::fprintf(stderr, "cg_bench: --cgc-case takes ACTORS:TASKS, both positive\n");
        return 2;
      }
      cgcCases.emplace_back(actors, tasks);
    } else {
      std::fprintf(stderr, "cg_bench: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (listTargets) {
    cg_bench::print_targets();
    return 0;
  }
  if (cgcCases.empty())
    cgcCases = {{10, 10}, {100, 1000}, {1000, 1000}, {1000, 10000}};
  const int cgcSamples = quick ? 1 : 3;
  const int n = quick ? 2000 : 20000;
  std::vector<Row> rows;
  std::string cgcPhases;
  std::uint64_t word = 42;
  if (cgcOnly) {
    cgcRows(cgcCases, unrolled, prelude, cgcSamples, rows, cgcPhases);
    printTable(rows);
    printVerdicts(rows);
    std::printf("%s", cgcPhases.c_str());
    return 0;
  }

  std::printf("measuring (n=%d per case)...\n", n);
  // Like mpirun, every case binds the driver and each actor to a core of its
  // own when there are enough cores, and nobody when there are not (the
  // 3-process chain on 2 cores); the round trip is also shown unbound.
  cg::LaunchOptions bound;
  bound.cpu_binding = cg::CpuBinding::cores;
  cg::LaunchOptions threads = bound;
  threads.mode = cg::Mode::threads;
  {
    // OpenMPI binds its two ranks to cores by default; we bind when asked
    // (LaunchOptions::cpu_binding): both are shown, each against OpenMPI with
    // the same binding. The dev machine (a VM) is bimodal itself: a run of
    // either side lands at ~0.4 or ~1 us. So the sides are measured in
    // alternating rounds and the median of the rounds' medians is shown.
    std::string boundNote;
    auto measure = [&](cg::LaunchOptions options) {
      auto graph = cg::launch<&round_trip>(options);
      if (options.cpu_binding && graph.bound_cpus().empty())
        boundNote = " (1 CPU: none)";
      return medianMicros(n, [&] { graph.execute(word).get(); });
    };
    cg::LaunchOptions unboundThreads;
    unboundThreads.mode = cg::Mode::threads;
    const int rounds = quick ? 1 : 5;
    std::vector<double> mpiBoundRounds, mpiUnboundRounds, boundRounds, boundThreadsRounds,
        unboundRounds, unboundThreadsRounds;
    for (int round = 0; round < rounds; ++round) {
      mpiBoundRounds.push_back(baselineMicros(mpirun(2, "pingpong 8 " + std::to_string(n))));
      boundRounds.push_back(measure(bound));
      boundThreadsRounds.push_back(measure(threads));
      mpiUnboundRounds.push_back(
          baselineMicros(mpirun(2, "pingpong 8 " + std::to_string(n), "none")));
      unboundRounds.push_back(measure({}));
      unboundThreadsRounds.push_back(measure(unboundThreads));
    }
    const double mpiBound = medianOf(mpiBoundRounds), mpiUnbound = medianOf(mpiUnboundRounds);
    const double oursBound = medianOf(boundRounds), oursBoundThreads = medianOf(boundThreadsRounds);
    const double oursUnbound = medianOf(unboundRounds);
    const double oursUnboundThreads = medianOf(unboundThreadsRounds);
    rows.push_back(latencyRow("round trip 8 B, bound" + boundNote, oursBound,
                              "OpenMPI ping-pong, bound", mpiBound, "round_trip"));
    rows.push_back(latencyRow("  same, threads mode", oursBoundThreads, "OpenMPI ping-pong, bound",
                              mpiBound, "round_trip"));
    rows.push_back(latencyRow("round trip 8 B, not bound", oursUnbound,
                              "OpenMPI ping-pong, unbound", mpiUnbound, "round_trip"));
    rows.push_back(latencyRow("  same, threads mode", oursUnboundThreads,
                              "OpenMPI ping-pong, unbound", mpiUnbound, "round_trip"));

    // The same graph driven from Python (cg/python.hpp), against this C++
    // driver, both unbound, in alternating rounds: what Python adds.
    for (const char* mode : {"processes", "threads"}) {
      cg::LaunchOptions options;
      options.mode = std::string(mode) == "threads" ? cg::Mode::threads : cg::Mode::processes;
      std::vector<double> pythonRounds, cppRounds;
      for (int round = 0; round < rounds; ++round) {
        pythonRounds.push_back(
            baselineMicros(std::string(CG_PYTHON_ROUND_TRIP " ") + mode + " " + std::to_string(n)));
        cppRounds.push_back(measure(options));
      }
      const double python = medianOf(pythonRounds), cpp = medianOf(cppRounds);
      rows.push_back({std::string(mode) == "threads" ? "  same, threads mode"
                                                     : "round trip 8 B, Python driver",
                      python, "the C++ driver", cpp, "us", &cg_bench::target("python_round_trip")});
    }
  }
  {
    // Alternating rounds, as for the round trip.
    std::vector<double> mpiRounds, oursRounds, threadedRounds;
    for (int round = 0; round < (quick ? 1 : 5); ++round) {
      mpiRounds.push_back(baselineMicros(mpirun(3, "ring " + std::to_string(n))));
      for (auto [options, out] :
           {std::pair{&bound, &oursRounds}, std::pair{&threads, &threadedRounds}}) {
        auto graph = cg::launch<&chain>(*options);
        out->push_back(medianMicros(n, [&] { graph.execute(word).get(); }));
      }
    }
    const double mpi = medianOf(mpiRounds), ours = medianOf(oursRounds);
    const double threaded = medianOf(threadedRounds);
    rows.push_back(
        latencyRow("chain driver->a->b->driver 8 B", ours, "OpenMPI 3-rank ring", mpi, "chain"));
    rows.push_back(
        latencyRow("  same, threads mode", threaded, "OpenMPI 3-rank ring", mpi, "chain"));
    rows.push_back(latencyRow("chain driver->a->b->driver 8 B", ours, "ZeroMQ ipc:// by hand",
                              baselineMicros(CG_ZMQ_CHAIN " " + std::to_string(n))));
  }
  profileCostRows(bound, threads, quick ? 1 : 3, quick ? 20000 : 200000, rows);
  for (int fan : {1, 2, 4}) {
    const double mpi = baselineMicros(mpirun(fan + 1, "fanout " + std::to_string(n / 2)));
    for (const cg::LaunchOptions* options : {&bound, &threads}) {
      auto time = [&](auto graph) {
        return medianMicros(n / 2, [&] { graph.execute(word).get(); });
      };
      const double ours = fan == 1   ? time(cg::launch<&fanout1>(*options))
                          : fan == 2 ? time(cg::launch<&fanout2>(*options))
                                     : time(cg::launch<&fanout4>(*options));
      rows.push_back(latencyRow(options == &bound
                                    ? "fan-out 1->" + std::to_string(fan) + "->driver 8 B"
                                    : "  same, threads mode",
                                ours, "OpenMPI send/recv", mpi, "fan_out"));
    }
  }
  {
    // One mode after the other: a graph launched from a thread another graph
    // bound would see that thread's one CPU.
    const std::vector<std::size_t> sizes = {std::size_t{8},        std::size_t{1} << 10,
                                            std::size_t{64} << 10, std::size_t{1} << 20,
                                            std::size_t{16} << 20, std::size_t{64} << 20};
    auto iterationsFor = [&](std::size_t bytes) {
      return bytes >= (std::size_t{16} << 20) ? (quick ? 5 : 40) : n / 10;
    };
    std::map<std::size_t, double> mpi;
    for (std::size_t bytes : sizes)
      mpi[bytes] = baselineMicros(
          mpirun(2, "hop " + std::to_string(bytes) + " " + std::to_string(iterationsFor(bytes))));
    // Per mode and size: the hop's median, and at 64 MiB its bandwidth and memcpy's.
    std::map<std::pair<bool, std::size_t>, double> hop;
    double bandwidth[2] = {}, memcpyBandwidth[2] = {};
    double inPlaceBandwidth[2] = {}, inPlaceMemcpy[2] = {}; // a tensor made in place
    double echo[2] = {}, echoCopy[2] = {}; // 64 MiB by value there and back; a vector copied
    constexpr std::size_t echoBytes = std::size_t{64} << 20;
    for (bool processes : {true, false}) {
      cg::LaunchOptions options = processes ? bound : threads;
      options.max_in_flight = 1; // default slots: large payloads go through overflow buffers
      {
        // The payload by value, both ways: a copy out of the channel on each
        // side beyond the span path, whose hop does not copy it out. The
        // copy is into a new vector, as a by-value result must be: the
        // driver's process is the user's, its allocator left as it is, so
        // that vector's pages are faulted in afresh each time (an actor
        // process keeps its heap for the next execution).
        auto graph = cg::launch<&payload_echo>(options);
        std::vector<std::uint8_t> payload(echoBytes, 7);
        std::tie(echo[processes], echoCopy[processes]) = interleavedMedianMicros(
            iterationsFor(echoBytes), [&] { (void)graph.execute(payload).get(); },
            [&] {
              std::vector<std::uint8_t> copy(payload.begin(), payload.end());
              asm volatile("" : : "r"(copy.data()) : "memory");
            });
      }
      {
        // 64 MiB made where the input channel carries it and read where it
        // arrives: the hop moves no bytes at all. Written before the clock
        // starts, as the memcpy's source is.
        auto graph = cg::launch<&tensor_hop>(options);
        std::vector<std::uint8_t> copy(echoBytes), source(echoBytes, 7);
        std::vector<double> hops, copies;
        const int iterations = iterationsFor(echoBytes);
        for (int i = -std::max(3, iterations / 10); i < iterations; ++i) {
          cg::Tensor made =
              graph.input_tensor(cg::DType::uint8, {static_cast<std::int64_t>(echoBytes)});
          std::memset(made.data_ptr(), 7, echoBytes);
          const auto start = Clock::now();
          (void)graph.execute(made).get();
          const auto middle = Clock::now();
          std::memcpy(copy.data(), source.data(), echoBytes);
          asm volatile("" : : "r"(copy.data()) : "memory");
          if (i < 0)
            continue; // warming up
          hops.push_back(std::chrono::duration<double, std::micro>(middle - start).count());
          copies.push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - middle).count());
        }
        const double ours = medianOf(hops), copying = medianOf(copies);
        inPlaceBandwidth[processes] = echoBytes / ours / 1e3;
        inPlaceMemcpy[processes] = echoBytes / copying / 1e3;
      }
      auto graph = cg::launch<&payload_hop>(options);
      for (std::size_t bytes : sizes) {
        const int iterations = iterationsFor(bytes);
        std::vector<std::uint8_t> payload(bytes, 7);
        hop[{processes, bytes}] = medianMicros(iterations, [&] { graph.execute(payload).get(); });
        if (bytes != (std::size_t{64} << 20))
          continue;
        // The hop and the memcpy alternate, so that both see the same machine.
        std::vector<std::uint8_t> copy(bytes);
        const auto [ours, copying] = interleavedMedianMicros(
            iterations, [&] { graph.execute(payload).get(); },
            [&] {
              std::memcpy(copy.data(), payload.data(), bytes);
              asm volatile("" : : "r"(copy.data()) : "memory");
            });
        bandwidth[processes] = bytes / ours / 1e3;
        memcpyBandwidth[processes] = bytes / copying / 1e3;
      }
    }
    for (std::size_t bytes : sizes) {
      std::string label = bytes >= (1u << 20)   ? std::to_string(bytes >> 20) + " MiB"
                          : bytes >= (1u << 10) ? std::to_string(bytes >> 10) + " KiB"
                                                : std::to_string(bytes) + " B";
      // The target is for small messages; the larger ones are shown for the trend.
      const char* target = bytes <= (1u << 10) ? "small_hop" : "";
      for (bool processes : {true, false})
        rows.push_back(latencyRow(processes ? "one hop " + label : "  same, threads mode",
                                  hop[{processes, bytes}], "OpenMPI send + 8 B reply", mpi[bytes],
                                  target));
    }
    for (bool processes : {true, false})
      rows.push_back({processes ? "one hop 64 MiB bandwidth" : "  same, threads mode",
                      bandwidth[processes], "one memcpy", memcpyBandwidth[processes], "GB/s",
                      &cg_bench::target("large_hop")});
    for (bool processes : {true, false})
      rows.push_back({processes ? "one hop 64 MiB made in place" : "  same, threads mode",
                      inPlaceBandwidth[processes], "one memcpy", inPlaceMemcpy[processes], "GB/s",
                      &cg_bench::target("large_hop")});
    // By value: at most one copy per hop more than the span path.
    for (bool processes : {true, false})
      rows.push_back(
          latencyRow(processes ? "64 MiB there and back by value" : "  same, threads mode",
                     echo[processes], "2 x (span hop + vector copy)",
                     2 * (hop[{processes, echoBytes}] + echoCopy[processes]), "large_by_value"));
  }
  cgcRows(cgcCases, unrolled, prelude, cgcSamples, rows, cgcPhases);

  printTable(rows);
  printVerdicts(rows);
  std::printf("%s", cgcPhases.c_str());
  writeJson(rows, json);
  std::printf("\nraw figures: %s\n", json.c_str());
}
