// nvtx_test.cpp - CG_NVTX=1 makes each READ, COMPUTE and WRITE of each actor an NVTX range,
// as a profiler's tool sees them (tests/support/nvtx_recorder.cpp stands in for Nsight Systems).
#include "../support/scoped_env.hpp"
#include "e2e_quickstart.cg.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Each thread's outermost ranges, in order, from the recorder's log; every
// range must close on the thread that opened it.
std::map<std::string, std::vector<std::string>> ranges_by_thread(const std::string& path) {
  std::map<std::string, std::vector<std::string>> outermost;
  std::map<std::string, int> depth;
  std::ifstream log(path);
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    std::string pid, tid, what;
    fields >> pid >> tid >> what;
    const std::string thread = pid + "/" + tid;
    if (what == "push") {
      std::string name;
      std::getline(fields >> std::ws, name);
      if (depth[thread]++ == 0)
        outermost[thread].push_back(name);
    } else {
      EXPECT_EQ(what, "pop") << line;
      EXPECT_GT(depth[thread]--, 0) << "a pop without a push on " << thread;
    }
  }
  for (const auto& [thread, open] : depth)
    EXPECT_EQ(open, 0) << "ranges left open on " << thread;
  return outermost;
}

} // namespace

#if defined(CG_NVTX_RECORDER)
TEST(Nvtx, EachOperationOfEachActorIsARangeNamedAsTheTraceNamesIt) {
  const std::string log = std::filesystem::temp_directory_path() /
                          ("cg-nvtx-test-" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  cg_test::ScopedEnv tool("NVTX_INJECTION64_PATH", CG_NVTX_RECORDER);
  cg_test::ScopedEnv written("CG_TEST_NVTX_LOG", log.c_str());
  {
    cg_test::ScopedEnv off("CG_NVTX", nullptr);
    auto graph = cg::launch<&pipeline>();
    EXPECT_EQ(graph.execute("off").get(), "off");
  }
  EXPECT_FALSE(std::filesystem::exists(log)) << "ranges without CG_NVTX=1";

  {
    cg_test::ScopedEnv on("CG_NVTX", "1");
    auto graph = cg::launch<&pipeline>();
    for (const char* word : {"a", "b", "c"})
      EXPECT_EQ(graph.execute(word).get(), word);
  } // teardown: each actor's last READ ends with the closed channel
  std::map<std::string, std::vector<std::string>> expected;
  auto three_executions = [](const std::string& read, const std::string& task,
                             const std::string& write) {
    std::vector<std::string> ops;
    for (int i = 0; i < 3; ++i)
      ops.insert(ops.end(), {read, task, write});
    ops.push_back(read);
    return ops;
  };
  const std::vector<std::vector<std::string>> wanted = {
      three_executions("READ c0 (input #0)", "first.echo", "WRITE c1 (first.echo)"),
      three_executions("READ c1 (first.echo)", "second.echo", "WRITE c2 (second.echo)"),
      three_executions("READ c2 (second.echo)", "third.echo", "WRITE c3 (third.echo)")};
  std::vector<std::vector<std::string>> seen;
  for (const auto& [thread, ranges] : ranges_by_thread(log))
    seen.push_back(ranges);
  std::sort(seen.begin(), seen.end()); // threads in any order; READ c0 < c1 < c2
  EXPECT_EQ(seen, wanted) << "one thread per actor, each with its operations in schedule order";
  std::filesystem::remove(log);
}
#else
TEST(Nvtx, EachOperationOfEachActorIsARangeNamedAsTheTraceNamesIt) {
  GTEST_SKIP() << "this runtime is built without NVTX (it comes with the CUDA toolkit)";
}
#endif
