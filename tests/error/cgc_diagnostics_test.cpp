// cgc_diagnostics_test.cpp - How cgc's diagnostics are written: colours when
// asked or on a terminal (never under NO_COLOR), and JSON for tools.
// What they say is checked by the error tests (CheckDiagnostics.cmake).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

struct Outcome {
  int status;
  std::string output; // stdout and stderr
};

Outcome run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// cgc on a source that is not marked CG_ACTOR, with `options`.
std::string cgc(const std::string& options) {
  return "'" CG_CGC "' '" CG_ERRORS "/class_not_marked_actor.cg.cpp' -o '" CG_OUT "' " + options +
         " -- -I'" CG_RUNTIME_INCLUDE "'";
}

const std::string kBoldRedError = "\x1b[0;1;31merror: ";

TEST(Diagnostics, ColouredOnlyWhenAskedOrOnATerminalWithoutNoColor) {
  Outcome asked = run(cgc("-fcolor-diagnostics"));
  EXPECT_EQ(asked.status, 1);
  EXPECT_NE(asked.output.find(kBoldRedError), std::string::npos) << asked.output;

  Outcome refused = run(cgc("-fno-color-diagnostics"));
  EXPECT_EQ(refused.output.find('\x1b'), std::string::npos) << refused.output;
  Outcome piped = run(cgc(""));
  EXPECT_EQ(piped.output.find('\x1b'), std::string::npos) << piped.output;

  // On a terminal (script gives cgc one), colours unless NO_COLOR says no.
  Outcome terminal = run("script -qec \"" + cgc("") + "\" /dev/null");
  EXPECT_NE(terminal.output.find(kBoldRedError), std::string::npos) << terminal.output;
  Outcome noColor = run("NO_COLOR=1 script -qec \"" + cgc("") + "\" /dev/null");
  EXPECT_EQ(noColor.output.find('\x1b'), std::string::npos) << noColor.output;
  EXPECT_NE(noColor.output.find("error: class 'Echo' is used as an actor"), std::string::npos)
      << noColor.output;
}

TEST(Diagnostics, JsonHasEveryDiagnosticWithItsRangesNotesAndFixIts) {
  Outcome json = run(cgc("--diagnostics-format=json"));
  EXPECT_EQ(json.status, 1);
  nlohmann::json diagnostics = nlohmann::json::parse(json.output);
  ASSERT_EQ(diagnostics.size(), 1u) << json.output;
  const nlohmann::json& error = diagnostics[0];
  EXPECT_EQ(error["severity"], "error");
  EXPECT_EQ(error["file"], CG_ERRORS "/class_not_marked_actor.cg.cpp");
  EXPECT_EQ(error["line"], 11);
  EXPECT_EQ(error["column"], 26);
  EXPECT_EQ(error["message"], "class 'Echo' is used as an actor but is not marked CG_ACTOR");
  ASSERT_EQ(error["notes"].size(), 1u);
  const nlohmann::json& note = error["notes"][0];
  EXPECT_EQ(note["message"], "mark 'Echo' CG_ACTOR where it is declared");
  EXPECT_EQ(note["line"], 6);
  ASSERT_EQ(note["fixits"].size(), 1u);
  EXPECT_EQ(note["fixits"][0]["code"], "CG_ACTOR ");
  EXPECT_EQ(note["fixits"][0]["insertion"], true);
  EXPECT_EQ(note["fixits"][0]["range"]["begin"]["line"], 6);
  EXPECT_EQ(note["fixits"][0]["range"]["begin"]["column"], 8);
}

TEST(Diagnostics, JsonOfASourceWithoutProblemsIsAnEmptyArray) {
  Outcome json = run("'" CG_CGC "' '" CG_EXAMPLES "/quickstart/quickstart.cg.cpp' -o '" CG_OUT
                     "' --diagnostics-format=json -- -I'" CG_RUNTIME_INCLUDE "' -I'" CG_EXAMPLES
                     "/quickstart'");
  EXPECT_EQ(json.status, 0) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output), nlohmann::json::array());
}

} // namespace
