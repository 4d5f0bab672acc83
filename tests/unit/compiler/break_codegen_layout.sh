#!/usr/bin/env bash
# break_codegen_layout.sh [<build dir>] [<work dir>] - shows that the tests of
# the spec tables' form, of where comments go and of the communicators fail
# against a cgc that writes them otherwise.
#
# Each case compiles a broken copy of one compiler source and links
# codegen_tests or compiler_tests from the build folder's objects with it
# ahead of the library (tests/support/break_support.sh), then runs the tests
# it must fail. Against the tests as built they must pass. The cases:
#   positional rows     ChannelSpec rows without field names
#   host written        an actor's host written when it is the default 0
#   gpus written        an actor's gpus written when it is the default 0
#   communicators       GraphSpec::communicators written for a graph without
#                       groups (its default)
#   tcp written         tcp_everywhere written when it is false
#   capacity left out   GraphSpec::max_in_flight left out when cgc checked
#                       the schedule with another than the default
#   names indented      the rows of the COMPUTE name tables, which codegen
#                       lays out, indented otherwise than the formatter would
#   comments beside     comments kept beside rows too wide for them
#   ranks lost          every actor rank 0 of each group
#   name unlike text    a group named otherwise than schedule.txt names it
# Needs the build's codegen_tests and compiler_tests built and nothing
# rebuilding them meanwhile (take the build lock). Nothing in the build
# folder changes.
set -uo pipefail
source "$(dirname "$0")/../../support/break_support.sh"
break_setup "$@"

spec=Codegen.TheSpecTablesHaveOneRowPerActorAndChannelWithAlignedComments
host=Codegen.AnActorOnAnotherHostCarriesItsHostInItsRow
rows=Codegen.ACudaIpcChannelAndAnActorWithGpusSaySoInTheirRowsAlone
graph=Codegen.TheGraphSpecNamesEachFieldAndLeavesOutThoseAtTheirDefaults
wide=Codegen.ATableTooWideForTheColumnLimitIsLaidOutByTheFormatter
above=Layout.CommentsStayBesideTheirLinesWhileEveryOneFitsAndGoAboveThemOnceOneDoesNot
ranks=Groups.EachActorKnowsItsRankInEveryGroupItIsIn
spread=Groups.AnNcclEdgeRanksItsWriterFirstThenItsReadersBySlot
names=Groups.EachGroupHasItsActorsByRankAndTheNameScheduleTxtGivesIt
text=Schedule.TheTextShowsEachChannelsTransportAndEachCollectiveRank
nccl=Codegen.AnNcclEdgeIsACommunicatorNamedInTheHeaderAndTakenByBothEnds
capacity=Codegen.TheGraphSpecCarriesTheCapacityTheScheduleWasCheckedWith
large=Codegen.ALargeGraphsSmallDeclarationsAreLaidOutAsTheFormatterWouldWithAWideOneAmongThem
break_expect "codegen_tests as built pass" 0 "$build/tests/unit/codegen_tests" \
  --gtest_filter="$spec:$host:$rows:$graph:$wide:$above:$nccl:$capacity:$large"
break_expect "compiler_tests as built pass" 0 "$build/tests/unit/compiler_tests" \
  --gtest_filter="$ranks:$spread:$names:$text"

# breaks <case> <program> <source> <old> <new> <test>...: <source> with old
# (there once) replaced by new, <program> linked over it and run on the
# tests, each of which must fail.
breaks() {
  local what=$1 program=$2 source=$3 old=$4 new=$5
  shift 5
  local filter
  filter=$(IFS=:; echo "$*")
  break_relink "tests/unit/$program" "$work/${what// /_}" "$source" "$old" "$new" || exit 1
  break_expect "$what: the tests fail" 1 "$work/${what// /_}" --gtest_filter="$filter"
  break_failed "$what: the tests fail" "$@"
}

codegen=compiler/codegen/Codegen.cpp
breaks "positional rows" codegen_tests $codegen \
  'fillInline("channel_spec.hpp.tpl", fmt::arg("writer", channel.writer),' \
  'fmt::format(fmt::runtime("{{{writer}, {graph_id}_r{channel}{fields}}},"), fmt::arg("writer", channel.writer),' \
  "$spec"
breaks "host written" codegen_tests $codegen 'if (actor.host != 0)' 'if (true)' "$host"
breaks "gpus written" codegen_tests $codegen 'if (actor.gpus != 0)' 'if (true)' "$rows"
breaks "communicators" codegen_tests $codegen \
  'std::string communicatorSpecs, specCommunicators;' \
  'std::string communicatorSpecs, specCommunicators = "    .communicators = {},\n";' "$graph"
breaks "tcp written" codegen_tests $codegen \
  'fill("spec_tcp_everywhere.hpp.tpl") : ""' \
  'fill("spec_tcp_everywhere.hpp.tpl") : "    .tcp_everywhere = false,\n"' "$graph"
breaks "capacity left out" codegen_tests $codegen \
  'if (capacity == cg::detail::kDefaultLaunchGeometry.max_in_flight)' 'if (true)' "$capacity"
breaks "names indented" codegen_tests $codegen \
  '          rows += fill(
              "compute_name.hpp.tpl",' '          rows += "  " + fill(
              "compute_name.hpp.tpl",' \
  "$large" "$graph"
breaks "comments beside" codegen_tests compiler/codegen/Layout.cpp \
  'if (trailing)' 'if (trailing || true)' "$wide" "$above"
breaks "ranks lost" compiler_tests compiler/schedule/Groups.cpp \
  'push_back({g, rank})' 'push_back({g, 0})' "$ranks" "$spread"
breaks "name unlike text" compiler_tests compiler/schedule/Groups.cpp \
  'fmt::format("nccl c{}", group.source)' 'fmt::format("nccl {}", group.source)' "$names" "$text"

break_verdict "each spec table, comment and communicator written otherwise made its test fail"
