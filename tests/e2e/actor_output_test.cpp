// actor_output_test.cpp - what actors print reaches the driver's terminal
// tagged with who said it (processes mode), or a log file per actor; and
// CG_LOG tells what launch does.
#include "../support/captured_output.hpp"
#include "../support/scoped_env.hpp"
#include "e2e_graphs.cg.hpp"
#include "leftovers.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ActorOutput = cg_test::NoLeftovers;
using LaunchLog = cg_test::NoLeftovers;
using cg_test::CapturedOutput;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A line an actor printed, "<text> <pid>", with the tag the driver gave it
// (processes mode) or none (threads mode: the actors' pid is ours).
struct Said {
  std::string actor; // "" untagged
  std::string text;
};

// Splits `line` into its tag and text, checking that the tag's pid (if any)
// is the pid the actor printed, or ours when untagged.
Said said(const std::string& line) {
  static const std::regex tagged(R"(\((\w+) pid=(\d+)\) (.*) (\d+))");
  static const std::regex untagged(R"((.*) (\d+))");
  std::smatch m;
  if (std::regex_match(line, m, tagged)) {
    EXPECT_EQ(m[2], m[4]) << "tagged with another process's pid: " << line;
    return {m[1], m[3]};
  }
  if (std::regex_match(line, m, untagged)) {
    EXPECT_EQ(m[2].str(), std::to_string(::getpid())) << line;
    return {"", m[1]};
  }
  ADD_FAILURE() << "not a line an actor printed: '" << line << "'";
  return {};
}

TEST_F(ActorOutput, EachActorsLinesAreTaggedWithItsNameAndPid) {
  CapturedOutput out(1);
  CapturedOutput err(2);
  {
    auto graph = cg::launch<&talkers>();
    EXPECT_EQ(graph.execute(2).get(), std::make_tuple(2, 2));
  }
  const std::vector<std::string> spoken = {"constructed in", "line 0 of 2 from", "line 1 of 2 from",
                                           "destroyed in"};
  std::map<std::string, std::vector<std::string>> by_actor;
  for (const std::string& line : cg_test::lines_of(out.text())) {
    const Said s = said(line);
    by_actor[s.actor].push_back(s.text);
  }
  std::map<std::string, std::vector<std::string>> warnings;
  for (const std::string& line : cg_test::lines_of(err.text())) {
    const Said s = said(line);
    warnings[s.actor].push_back(s.text);
  }
  if (cg_test::threads_mode()) {
    // One process: the actors' output is the driver's, untagged.
    ASSERT_EQ(by_actor.size(), 1u);
    EXPECT_EQ(by_actor[""].size(), 2 * spoken.size());
    EXPECT_EQ(warnings[""], (std::vector<std::string>{"a warning from", "a warning from"}));
  } else {
    EXPECT_EQ(by_actor["a"], spoken);
    EXPECT_EQ(by_actor["b"], spoken);
    EXPECT_EQ(by_actor.size(), 2u);
    EXPECT_EQ(warnings["a"], std::vector<std::string>{"a warning from"});
    EXPECT_EQ(warnings["b"], std::vector<std::string>{"a warning from"});
    EXPECT_EQ(warnings.size(), 2u);
  }
}

TEST_F(ActorOutput, LongLinesOfTwoActorsNeverMix) {
  CapturedOutput out(1);
  const int count = 300;
  const int width = 5000;
  {
    auto graph = cg::launch<&shouters>();
    EXPECT_EQ(graph.execute(count, width).get(), std::make_tuple(count, count));
  }
  static const std::regex shouted(R"((\(\w+ pid=(\d+)\) )?(\d+):(=+):(\d+))");
  int shouts = 0;
  for (const std::string& line : cg_test::lines_of(out.text())) {
    if (line.find("structed in") != std::string::npos ||
        line.find("destroyed in") != std::string::npos)
      continue;
    std::smatch m;
    if (!std::regex_match(line, m, shouted) || m[4].length() != width || m[3] != m[5] ||
        (m[1].matched && m[2] != m[3])) {
      ADD_FAILURE() << "a torn or mixed line: '" << line.substr(0, 60) << "...'";
      continue;
    }
    ++shouts;
  }
  EXPECT_EQ(shouts, 2 * count);
}

TEST_F(ActorOutput, AnUnfinishedLineArrivesWhenTheActorEnds) {
  CapturedOutput out(1); // what it says when constructed and destroyed: not checked here
  CapturedOutput err(2);
  int pid = 0;
  {
    auto graph = cg::launch<&mumbler>();
    EXPECT_EQ(graph.execute(7).get(), 7);
    if (!cg_test::threads_mode())
      pid = cg_test::child_pids().at(0);
  }
  if (cg_test::threads_mode())
    EXPECT_EQ(err.text(), "unfinished 7");
  else
    EXPECT_EQ(err.text(), "(a pid=" + std::to_string(pid) + ") unfinished 7\n");
}

TEST_F(ActorOutput, ALogDirectoryHoldsEachActorsOutputInsteadOfTheTerminal) {
  const std::filesystem::path logs =
      std::filesystem::temp_directory_path() / ("cg-logs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(logs);
  CapturedOutput out(1);
  CapturedOutput err(2);
  {
    cg::LaunchOptions options;
    options.actor_logs = (logs / "made").string(); // made by launch
    auto graph = cg::launch<&talkers>(options);
    EXPECT_EQ(graph.execute(1).get(), std::make_tuple(1, 1));
  }
  {
    // The environment's directory, where the options give none.
    cg_test::ScopedEnv env("CG_ACTOR_LOGS", (logs / "from-env").c_str());
    auto graph = cg::launch<&mumbler>();
    EXPECT_EQ(graph.execute(3).get(), 3);
  }
  const std::string terminal = out.text() + err.text();
  if (cg_test::threads_mode()) {
    // Actor threads write to the driver's descriptors: no files.
    EXPECT_FALSE(std::filesystem::exists(logs / "made" / "talkers.a.log"));
    EXPECT_NE(terminal.find("a warning from"), std::string::npos);
  } else {
    EXPECT_EQ(terminal, "");
    for (const char* actor : {"a", "b"}) {
      std::vector<Said> got;
      for (const std::string& line :
           cg_test::lines_of(read_file(logs / "made" / ("talkers." + std::string(actor) + ".log"))))
        got.push_back({"", line.substr(0, line.rfind(' '))});
      ASSERT_EQ(got.size(), 4u) << actor;
      EXPECT_EQ(got[0].text, "constructed in");
      EXPECT_EQ(got[1].text, "line 0 of 1 from");
      EXPECT_EQ(got[2].text, "a warning from");
      EXPECT_EQ(got[3].text, "destroyed in");
    }
    EXPECT_EQ(read_file(logs / "from-env" / "mumbler.a.log").substr(0, 15), "constructed in ");
    EXPECT_NE(read_file(logs / "from-env" / "mumbler.a.log").find("unfinished 3"),
              std::string::npos);
  }
  std::filesystem::remove_all(logs);
}

TEST_F(ActorOutput, AskedNotToTagActorsWriteToTheTerminalThemselves) {
  CapturedOutput out(1);
  CapturedOutput err(2);
  {
    cg::LaunchOptions options;
    options.tag_actor_output = false;
    auto graph = cg::launch<&mumbler>(options);
    EXPECT_EQ(graph.execute(5).get(), 5);
  }
  EXPECT_EQ(err.text(), "unfinished 5");
  static const std::regex untagged(R"((constructed|destroyed) in \d+)");
  for (const std::string& line : cg_test::lines_of(out.text()))
    EXPECT_TRUE(std::regex_match(line, untagged)) << line;
}

TEST_F(ActorOutput, ALogDirectoryThatCannotBeMadeIsALaunchError) {
  cg::LaunchOptions options;
  options.actor_logs = "/proc/self/no/such/place";
  try {
    cg::launch<&mumbler>(options);
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot make the actor log directory "
                                          "'/proc/self/no/such/place' of graph 'mumbler': ",
                                          0),
              0u)
        << e.what();
  }
}

TEST_F(LaunchLog, IsSilentByDefault) {
  cg_test::ScopedEnv quiet("CG_LOG", nullptr);
  CapturedOutput err(2);
  {
    auto graph = cg::launch<&adder>();
    EXPECT_EQ(graph.execute(1).get(), 3);
  }
  EXPECT_EQ(err.text(), "");
}

// CG_LOG's lines for graph adder, without their times.
std::vector<std::string> logged(const char* level) {
  cg_test::ScopedEnv env("CG_LOG", level);
  CapturedOutput err(2);
  {
    auto graph = cg::launch<&adder>();
    EXPECT_EQ(graph.execute(1).get(), 3);
  }
  static const std::regex line(R"(cg: graph 'adder' \+\d+\.\d ms: (.*))");
  static const std::regex pid(R"(pid \d+)");
  std::vector<std::string> out;
  for (const std::string& text : cg_test::lines_of(err.text())) {
    std::smatch m;
    if (!std::regex_match(text, m, line)) {
      ADD_FAILURE() << "not a log line: " << text;
      continue;
    }
    std::string what = std::regex_replace(m[1].str(), pid, "pid N");
    out.push_back(what.substr(0, what.rfind("torn down in", 0) == 0 ? 12 : what.size()));
  }
  return out;
}

TEST_F(LaunchLog, InfoTellsEachStepOfLaunchAndTeardown) {
  const bool threads = cg_test::threads_mode();
  const std::string mode = threads ? "threads" : "processes";
  const std::vector<std::string> info = logged("info");
  ASSERT_EQ(info.size(), 4u);
  EXPECT_EQ(info[0].rfind("launching in " + mode +
                              " mode: 2 actors, 3 channels of 10 slots of "
                              "65536 bytes; segment of ",
                          0),
            0u)
      << info[0];
  EXPECT_EQ(info[1], threads ? "started 2 actor threads: a, b"
                             : "started 2 actor processes: a (pid N), b (pid N)");
  EXPECT_EQ(info[2], "ready: every actor has started");
  EXPECT_EQ(info[3], "torn down in");
}

TEST_F(LaunchLog, DebugAlsoTellsEachProcessAndChannel) {
  const std::vector<std::string> debug = logged("debug");
  std::vector<std::string> expected;
  if (!cg_test::threads_mode())
    expected = {"started a as pid N", "started b as pid N"};
  expected.insert(expected.end(), {"channel 0 (input #0): driver -> a over shm",
                                   "channel 1 (a.add_one): a -> b over shm",
                                   "channel 2 (b.add_one): b -> driver over shm"});
  std::vector<std::string> got;
  for (const std::string& line : debug)
    if (line.rfind("started ", 0) == 0 && line.find(" as pid ") != std::string::npos)
      got.push_back(line);
    else if (line.rfind("channel ", 0) == 0)
      got.push_back(line);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(debug.size(), 4 + expected.size());
}

TEST_F(LaunchLog, AnUnknownLevelIsALaunchError) {
  cg_test::ScopedEnv env("CG_LOG", "loud");
  try {
    cg::launch<&adder>();
    FAIL() << "expected cg::LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(), "CG_LOG='loud' is not a log level: use info or debug (unset: silent)");
  }
}

} // namespace
