#!/usr/bin/env bash
# break_codecs.sh [<build dir>] [<work dir>] - shows that the checks of the
# standard containers' codecs (serialize_test.cpp, Codecs.*) fail against
# codecs broken as below.
#
# Each case copies runtime/include with cg/codecs.hpp broken one way,
# compiles serialize_test.cpp against the copy as the build compiles it,
# and passes only if the named test fails (and passes against the headers
# as they are):
#   a variant index past the alternatives taken as 0   AVariantIndexPastItsAlternatives...
#   a set's duplicate element dropped silently          SetsRoundTripAndADuplicate...
#   a deque decoded back to front                       DequesRoundTripInOrder,
#                                                       NestedStandardTypesRoundTrip
#   a duration sent as a double                         ADurationGoesAsItsCount
#   a valueless variant sized as if it held its first   AValuelessVariantRefuses...
# Needs a build folder with a compile database (build/compile_commands.json).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
failures=0

# run_case <name> <python replacement: old new> <gtest filter>: 0 when the filter fails.
# With no replacement, the headers as they are: 0 when the filter passes.
run_case() {
  local name=$1 old=$2 new=$3 filter=$4
  rm -rf "$work/$name" && mkdir -p "$work/$name"
  cp -r "$repo/runtime/include/cg" "$work/$name/cg"
  if [ -n "$old" ]; then
    python3 - "$work/$name/cg/codecs.hpp" "$old" "$new" <<'PY' || return 2
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if text.count(old) != 1:
    sys.exit("break_codecs.sh: the code to break is not in cg/codecs.hpp once: " + old)
open(path, "w").write(text.replace(old, new))
PY
  fi
  python3 - "$build" "$work/$name" "$work/$name/serialize_test.o" <<'PY' || return 2
import json, shlex, subprocess, sys
build, include, obj = sys.argv[1:4]
entry = [e for e in json.load(open(build + "/compile_commands.json"))
         if e["file"].endswith("tests/unit/runtime/cg/serialize_test.cpp")][0]
args = shlex.split(entry["command"])
args[args.index("-o") + 1] = obj
args = [a for a in args if not a.startswith(("-MD", "-MF", "-MT"))]
args.insert(1, "-I" + include)  # ahead of runtime/include
sys.exit(subprocess.run(args, cwd=entry["directory"]).returncode)
PY
  c++ "$work/$name/serialize_test.o" -o "$work/$name/serialize_test" -lgtest -lgtest_main -pthread ||
    return 2
  "$work/$name/serialize_test" --gtest_filter="$filter" > "$work/$name/out.txt" 2>&1
  local rc=$?
  if [ -z "$old" ]; then
    [ $rc -eq 0 ] && return 0
  else
    [ $rc -ne 0 ] && grep -q '^\[  FAILED  \] Codecs\.' "$work/$name/out.txt" && return 0
  fi
  cat "$work/$name/out.txt"
  return 1
}

check() {
  if run_case "$@"; then
    echo "ok: $1"
  else
    echo "NOT SHOWN: $1 ($work/$1)"
    failures=$((failures + 1))
  fi
}

check as-built "" "" 'Codecs.*'
check variant-index \
  'if (index >= sizeof...(T))' 'if (index >= sizeof...(T) && (index = 0) != 0)' \
  'Codecs.AVariantIndexPastItsAlternativesIsADecodeError'
check set-duplicates \
  'if (!s.insert(cg::decode<K>(d)).second)' 'if (!s.insert(cg::decode<K>(d)).second && false)' \
  'Codecs.SetsRoundTripAndADuplicateElementIsADecodeError'
check deque-order 'q.push_back(cg::decode<T>(d));' 'q.push_front(cg::decode<T>(d));' \
  'Codecs.DequesRoundTripInOrder:Codecs.NestedStandardTypesRoundTrip'
check duration-as-double \
  'static void encode(Encoder& e, const Duration& v) { cg::encode(e, v.count()); }' \
  'static void encode(Encoder& e, const Duration& v) { cg::encode(e, double(v.count())); }' \
  'Codecs.ADurationGoesAsItsCount'
check valueless-variant \
  'if (v.valueless_by_exception())' 'if (v.valueless_by_exception() && false)' \
  'Codecs.AValuelessVariantRefusesToBeSizedRatherThanSendNothing'

[ $failures -eq 0 ] && echo "every codec check fails against its broken codec"
exit $((failures != 0))
