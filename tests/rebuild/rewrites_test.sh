#!/usr/bin/env bash
# rewrites_test.sh - what cgc rewrites when it runs again, so that a build
# recompiles only what an edit changes (tests/rebuild/CMakeLists.txt).
#
# Usage: rewrites_test.sh <step> <cgc> <examples/word_stats> <runtime include dir> <work dir>
# Each step copies examples/word_stats (actor classes in stages.hpp, the graph
# alone in words.cg.cpp), runs cgc on it as add_compiled_graph() does, and
# compares every output's mtime and contents before and after:
#   twice     the same input again: no file is written
#   constant  a bind's constant in the graph function edited: the one program
#             that passes it, the shard that includes it (its digest there),
#             the graph's IR and its schedule text change; the actor header,
#             the driver header, the other programs and shards stay as they are
#   comment   a comment line above the graph function: the files that quote
#             source lines change, and the shards of the programs among them;
#             the actor header, the empty shards, the driver library source
#             and the actor host stay as they are
#   class     a struct declared in the graph source: the actor header
#             includes the source whole and says why
# A file counts as rewritten when its mtime or its contents change.
set -euo pipefail
step=$1 cgc=$2 example=$3 include=$4 work=$5/$1
src=$work/src
out=$work/build/word_stats.cg

fail() {
  echo "rewrites_test $step: $*" >&2
  exit 1
}

rm -rf "$work" && mkdir -p "$src"
cp "$example/words.cg.cpp" "$example/stages.hpp" "$src/"

generate() {
  "$cgc" "$src/words.cg.cpp" -o "$out" --target word_stats --include-source-as words.cg.cpp \
    --actor-shards=8 --depfile "$out/word_stats.d" -- "-I$include" "-I$src" \
    >"$work/cgc.log" 2>&1 || { cat "$work/cgc.log" >&2; fail "cgc failed"; }
}

# One line per output: name, mtime (ns), contents' hash.
snapshot() {
  local file
  for file in "$out"/*; do
    printf '%s %s %s\n' "${file##*/}" "$(stat -c %.9Y "$file")" "$(sha256sum <"$file" | cut -c1-16)"
  done
}

# The names of the outputs whose line differs between two snapshots.
rewritten() {
  join <(sort <<<"$1") <(sort <<<"$2") | awk '$2 != $4 || $3 != $5 { print $1 }' | sort | xargs
}

# Fails unless `$1` (rewritten names) is exactly `$2`.
expect_rewritten() {
  [[ $1 == "$2" ]] || fail "rewritten: '$1'; expected: '$2'"
}

generate
before=$(snapshot)
sleep 0.05 # a rewrite now has another mtime
case "$step" in
  twice)
    generate
    expect_rewritten "$(rewritten "$before" "$(snapshot)")" ""
    ;;
  constant)
    sed -i 's/(counts, "top words")/(counts, "most used")/' "$src/words.cg.cpp"
    grep -q '"most used"' "$src/words.cg.cpp" || fail "the edit did not apply"
    generate
    expect_rewritten "$(rewritten "$before" "$(snapshot)")" \
      "word_stats.actors.2.cpp word_stats.ir.json word_stats.schedule.txt word_stats.word_stats.report.cpp"
    grep -qF 'actor.top_words(cg::pass(v2), std::string("most used"))' "$out/word_stats.word_stats.report.cpp" ||
      fail "the report program does not pass the new constant"
    ;;
  comment)
    sed -i 's|^CG_GRAPH void word_stats|// The graph.\n&|' "$src/words.cg.cpp"
    generate
    expect_rewritten "$(rewritten "$before" "$(snapshot)")" \
      "word_stats.actors.0.cpp word_stats.actors.1.cpp word_stats.actors.2.cpp word_stats.cg.hpp word_stats.dot word_stats.ir.json word_stats.schedule.json word_stats.schedule.txt word_stats.word_stats.counter.cpp word_stats.word_stats.report.cpp word_stats.word_stats.tokenizer.cpp"
    ;;
  class)
    sed -i 's|^CG_GRAPH void word_stats|struct Unused {};\n\n&|' "$src/words.cg.cpp"
    generate
    line=$(grep -n '^struct Unused' "$src/words.cg.cpp" | cut -d: -f1)
    grep -qxF "// All of words.cg.cpp, as it declares struct 'Unused' (words.cg.cpp:$line): an edit to it" \
      "$out/word_stats.actors.hpp" || fail "the actor header does not say why it includes the source:
$(cat "$out/word_stats.actors.hpp")"
    grep -qxF '#include "words.cg.cpp"' "$out/word_stats.actors.hpp" ||
      fail "the actor header does not include the source"
    ;;
  *) fail "no such step" ;;
esac

# Whatever the step, the programs take the actor classes from the actor
# header, and with the classes in stages.hpp it does not include the source.
for program in "$out"/word_stats.word_stats.*.cpp; do
  grep -qxF '#include "word_stats.actors.hpp"' "$program" ||
    fail "${program##*/} does not include word_stats.actors.hpp"
done
if [[ $step != class ]]; then
  grep -qxF '#include "stages.hpp"' "$out/word_stats.actors.hpp" ||
    fail "the actor header does not include stages.hpp"
  if grep -q 'words.cg.cpp"' "$out/word_stats.actors.hpp"; then
    fail "the actor header includes the graph source"
  fi
fi
echo "rewrites_test $step: passed"
