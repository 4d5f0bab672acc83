#!/usr/bin/env bash
# break_codegen_overlap.sh [<build dir>] [<work dir>] - shows that
# Codegen.WithOverlapBothEndsOfAnNcclEdgeAreToldToOverlap fails against a
# cgc whose NCCL ports are not told of overlap.
#
# Each case compiles a broken copy of compiler/codegen/Codegen.cpp and links
# codegen_tests from the build folder's objects with it ahead of
# libcg_codegen.a (tests/support/break_support.sh), then runs the test: it
# must fail. Against codegen_tests as built it must pass. The cases:
#   reader not told   nccl_input gets no cg::Overlap::on
#   writer not told   nccl_output gets no cg::Overlap::on
# Needs the build's codegen_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../support/break_support.sh"
break_setup "$@"

test=Codegen.WithOverlapBothEndsOfAnNcclEdgeAreToldToOverlap
break_as_built tests/unit/codegen_tests "$test"

# breaks <case> <old> <new>: Codegen.cpp with old (there once) replaced by
# new, codegen_tests linked over it and run.
breaks() {
  break_relink tests/unit/codegen_tests "$work/$1" compiler/codegen/Codegen.cpp "$2" "$3" ||
    exit 1
  break_expect "$1 not told: $test fails" 1 "$work/$1" --gtest_filter="$test"
  break_failed "$1 not told: $test fails" "$test"
}

breaks reader 'readerSlot(channel, actor), ncclGroup(c), overlap)' \
  'readerSlot(channel, actor), ncclGroup(c), "")'
breaks writer 'c, method, ncclGroup(c), overlap)' 'c, method, ncclGroup(c), "")'

break_verdict "each end of an NCCL edge not told of overlap made the test fail"
