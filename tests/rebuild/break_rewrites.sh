#!/usr/bin/env bash
# break_rewrites.sh [<cgc>] [<work dir>] - shows that rewrites_test.sh fails
# against a cgc that rewrites what it need not.
#
# Each case wraps the real cgc in a script that runs it and then breaks its
# output, and passes only if the steps named fail (and every step passes
# against the cgc as built):
#   always   every output written again, bytes unchanged (a cgc without
#            write-if-changed)                         twice, constant, comment
#   whole    the actor header includes the graph source instead of its
#            #includes (the programs take the whole source, as a cgc that
#            does not look for the classes' headers)   twice, constant, comment
# Run by hand: tests/rebuild/break_rewrites.sh build/compiler/tool/cgc
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cgc=$(realpath "${1:-$repo/build/compiler/tool/cgc}")
work=${2:-$(mktemp -d)}
mkdir -p "$work"
test=$repo/tests/rebuild/rewrites_test.sh
failures=0

# wrapper <case>: a cgc that runs the real one into a folder of its own, and
# copies its output into the -o folder broken so.
wrapper() {
  local file=$work/cgc-$1
  cat >"$file" <<EOF
#!/usr/bin/env bash
args=("\$@")
for ((i = 0; i < \${#args[@]}; ++i)); do
  if [[ \${args[i]} == -o ]]; then
    out=\${args[i + 1]}
    args[i + 1]=\$out.unbroken
  fi
done
mkdir -p "\$out" # the depfile goes there
"$cgc" "\${args[@]}" || exit \$?
for f in "\$out.unbroken"/*; do
  name=\${f##*/}
  case $1 in
    always) cp "\$f" "\$out/\$name" ;; # every time, changed or not
    whole)
      if [[ \$name == *.actors.hpp ]]; then
        awk '/^#pragma once/ { print; print ""; print "#include \"words.cg.cpp\""; skip = 1; next }
             /^#include <cg\/codecs.hpp>/ { print ""; skip = 0 }
             !skip' "\$f" >"\$out/\$name.new"
      else
        cp "\$f" "\$out/\$name.new"
      fi
      # Written only when it changes, as cgc writes: the layout is what breaks.
      if cmp -s "\$out/\$name.new" "\$out/\$name"; then
        rm "\$out/\$name.new"
      else
        mv "\$out/\$name.new" "\$out/\$name"
      fi ;;
  esac
done
EOF
  chmod +x "$file"
  echo "$file"
}

run() { bash "$test" "$1" "$2" "$repo/examples/word_stats" "$repo/runtime/include" "$work/run" 2>&1; }

for step in twice constant comment class; do
  if ! output=$(run "$step" "$cgc"); then
    echo "break_rewrites: $step fails against the cgc as built: $output"
    failures=$((failures + 1))
  fi
done
for case in always whole; do
  broken=$(wrapper "$case")
  for step in twice constant comment; do
    if output=$(run "$step" "$broken"); then
      echo "break_rewrites: $case: $step passed against the broken cgc"
      failures=$((failures + 1))
    else
      echo "break_rewrites: $case: $step fails as it should: ${output##*$'\n'}"
    fi
  done
done
if ((failures)); then
  echo "break_rewrites: $failures case(s) did not go as they should"
  exit 1
fi
echo "break_rewrites: every case fails as it should"
