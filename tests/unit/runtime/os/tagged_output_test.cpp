// tagged_output_test.cpp - children's output relayed line by line, tagged.
//
// The children are /bin/sh scripts; the driver's descriptors 1 and 2 are
// captured (tests/support/captured_output.hpp) while the relay runs.
#include "os/process.hpp"
#include "os/tagged_output.hpp"

#include "../../../support/captured_output.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using cg::detail::Clock;
using cg::detail::TaggedOutput;
using cg_test::CapturedOutput;

// Starts `script` under /bin/sh with its output going through `output`, tagged `tag`.
cg::ChildProcess start(TaggedOutput& output, const std::string& script, const std::string& tag) {
  const TaggedOutput::WriteEnds ends = output.open_pipes();
  cg::ChildProcess child =
      cg::ChildProcess::spawn("/bin/sh", {"-c", script}, {},
                              {.standard_output = ends.output, .standard_error = ends.error});
  output.adopt(tag);
  return child;
}

TEST(TaggedOutput, EachLineReachesTheMatchingDescriptorTagged) {
  CapturedOutput out(1);
  CapturedOutput err(2);
  {
    TaggedOutput output;
    cg::ChildProcess a = start(output, "echo one; echo oops >&2; echo two", "a pid=1");
    cg::ChildProcess b = start(output, "printf 'x\\n\\ny\\n'", "b host=2");
    output.start();
    ASSERT_TRUE(a.wait_for(10s));
    ASSERT_TRUE(b.wait_for(10s));
    output.finish(Clock::now() + 10s);
  }
  const std::vector<std::string> stdout_lines = cg_test::lines_of(out.text());
  const std::vector<std::string> a_lines = {"(a pid=1) one", "(a pid=1) two"};
  const std::vector<std::string> b_lines = {"(b host=2) x", "(b host=2) ", "(b host=2) y"};
  std::vector<std::string> from_a, from_b;
  for (const std::string& line : stdout_lines)
    (line.rfind("(a ", 0) == 0 ? from_a : from_b).push_back(line);
  EXPECT_EQ(from_a, a_lines);
  EXPECT_EQ(from_b, b_lines);
  EXPECT_EQ(err.text(), "(a pid=1) oops\n");
}

TEST(TaggedOutput, AnUnfinishedLastLineIsEndedWhenTheChildEnds) {
  CapturedOutput err(2);
  {
    TaggedOutput output;
    cg::ChildProcess child = start(output, "printf 'no newline' >&2", "a pid=1");
    output.start();
    ASSERT_TRUE(child.wait_for(10s));
    output.finish(Clock::now() + 10s);
  }
  EXPECT_EQ(err.text(), "(a pid=1) no newline\n");
}

TEST(TaggedOutput, ALineLongerThanTheLimitArrivesInTaggedPieces) {
  CapturedOutput out(1);
  const std::size_t length = TaggedOutput::max_line * 2 + 100;
  {
    TaggedOutput output;
    cg::ChildProcess child = start(
        output, "head -c " + std::to_string(length) + " /dev/zero | tr '\\0' x; echo", "a pid=1");
    output.start();
    ASSERT_TRUE(child.wait_for(10s));
    output.finish(Clock::now() + 10s);
  }
  const std::vector<std::string> got = cg_test::lines_of(out.text());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "(a pid=1) " + std::string(TaggedOutput::max_line, 'x'));
  EXPECT_EQ(got[1], "(a pid=1) " + std::string(TaggedOutput::max_line, 'x'));
  EXPECT_EQ(got[2], "(a pid=1) " + std::string(100, 'x'));
}

TEST(TaggedOutput, ManyLinesOfTwoChildrenNeverMix) {
  CapturedOutput out(1);
  const std::string line_a(3000, 'a');
  const std::string line_b(3000, 'b');
  {
    TaggedOutput output;
    const std::string loop = "i=0; while [ $i -lt 500 ]; do echo ";
    cg::ChildProcess a = start(output, loop + line_a + "; i=$((i+1)); done", "a pid=1");
    cg::ChildProcess b = start(output, loop + line_b + "; i=$((i+1)); done", "b pid=2");
    output.start();
    ASSERT_TRUE(a.wait_for(30s));
    ASSERT_TRUE(b.wait_for(30s));
    output.finish(Clock::now() + 10s);
  }
  int from_a = 0, from_b = 0;
  for (const std::string& line : cg_test::lines_of(out.text())) {
    if (line == "(a pid=1) " + line_a)
      ++from_a;
    else if (line == "(b pid=2) " + line_b)
      ++from_b;
    else
      ADD_FAILURE() << "a mixed line: " << line.substr(0, 40) << "...";
  }
  EXPECT_EQ(from_a, 500);
  EXPECT_EQ(from_b, 500);
}

TEST(TaggedOutput, AGrandchildHoldingThePipeDelaysFinishOnlyUntilTheDeadline) {
  CapturedOutput out(1);
  Clock::time_point before;
  {
    TaggedOutput output;
    // The shell exits at once; the sleep it leaves behind keeps the pipe open.
    cg::ChildProcess child = start(output, "echo parting words; sleep 3 &", "a pid=1");
    output.start();
    ASSERT_TRUE(child.wait_for(10s));
    before = Clock::now();
    output.finish(Clock::now() + 300ms);
  }
  EXPECT_LT(Clock::now() - before, 2s);
  EXPECT_EQ(out.text(), "(a pid=1) parting words\n");
}

TEST(TaggedOutput, ADriverWhoseOutputIsClosedLivesOn) {
  int sink[2];
  ASSERT_EQ(::pipe2(sink, O_CLOEXEC), 0);
  ::close(sink[0]); // writes to sink[1] now fail with EPIPE (and raise SIGPIPE)
  const int saved = ::dup(1);
  ::dup2(sink[1], 1);
  {
    TaggedOutput output;
    cg::ChildProcess child = start(output, "echo into the void; echo more", "a pid=1");
    output.start();
    ASSERT_TRUE(child.wait_for(10s));
    output.finish(Clock::now() + 10s);
  }
  ::dup2(saved, 1);
  ::close(saved);
  ::close(sink[1]);
  SUCCEED() << "SIGPIPE would have ended this test program";
}

TEST(TaggedOutput, LastWordsAreAChildsLastLineOnStandardError) {
  CapturedOutput out(1);
  CapturedOutput err(2);
  TaggedOutput output;
  const TaggedOutput::WriteEnds first = output.open_pipes();
  cg::ChildProcess talker = cg::ChildProcess::spawn(
      "/bin/sh", {"-c", "echo early >&2; echo on stdout; printf 'last words  \\n' >&2; exit 3"}, {},
      {.standard_output = first.output, .standard_error = first.error});
  const std::size_t talker_id = output.adopt("a pid=1");
  const TaggedOutput::WriteEnds second = output.open_pipes();
  cg::ChildProcess quiet = cg::ChildProcess::spawn(
      "/bin/true", {}, {}, {.standard_output = second.output, .standard_error = second.error});
  const std::size_t quiet_id = output.adopt("b pid=2");
  output.start();
  ASSERT_TRUE(talker.wait_for(10s));
  ASSERT_TRUE(quiet.wait_for(10s));
  EXPECT_EQ(output.last_words(talker_id, Clock::now() + 10s), "last words");
  EXPECT_EQ(output.last_words(quiet_id, Clock::now() + 10s), "");
  EXPECT_EQ(output.last_words(7, Clock::now() + 10s), "") << "no such child";
  output.finish(Clock::now() + 10s);
  EXPECT_EQ(err.text(), "(a pid=1) early\n(a pid=1) last words  \n");
}

TEST(TaggedOutput, WhatAChildWroteBeforeStartIsNotLost) {
  CapturedOutput out(1);
  {
    TaggedOutput output;
    cg::ChildProcess child = start(output, "echo early", "a pid=1");
    ASSERT_TRUE(child.wait_for(10s));
    // Never started (launch failed before): the destructor still drains.
  }
  EXPECT_EQ(out.text(), "(a pid=1) early\n");
}

} // namespace
