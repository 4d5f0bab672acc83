#!/usr/bin/env bash
# ray_microbench_test.sh - ray_microbench, run briefly, prints its six rows
# (three patterns, processes and threads) and its three floors, each with
# positive figures and three runs, and refuses a bad argument with its usage.
#
#   ray_microbench_test.sh <ray_microbench>              the check, on the program
#   ray_microbench_test.sh --self-test <ray_microbench>  the check rejects broken
#       output: a row missing, a figure of 0, a run short, a failed exit, a
#       program that takes a bad argument, and the program on a machine out of
#       file descriptors (its runtime cannot make a channel there)
set -uo pipefail

patterns=("single actor" "scatter-gather 4" "chain of 4")
rays=(20931 8897 5738)
usage='usage: ray_microbench [--rounds N] [--calls N] (N >= 1)'

# check_table <status> <output>: prints what is wrong; status 1 if anything is.
check_table() {
  local status=$1 output=$2 wrong=0 i mode figure='[1-9][0-9]*' ratio='[0-9]+\.[0-9]+x'
  if [[ $status != 0 ]]; then
    echo "exited with status $status"
    wrong=1
  fi
  for i in "${!patterns[@]}"; do
    for mode in processes threads; do
      # ours, Ray's, x Ray, floor, x floor, the verdict, then three runs
      local row="^${patterns[i]} +$mode +$figure +${rays[i]} +$ratio +$figure +$ratio +(met|MISSED) \(.*\) +$figure $figure $figure( +unstable)?$"
      if ! grep -Eq "$row" <<<"$output"; then
        echo "no row for ${patterns[i]}, $mode, with figures"
        wrong=1
      fi
    done
    # the floor, Ray's, x Ray, the cores bound (or none), then three runs
    local floor="^${patterns[i]} +fork\+shm +$figure +${rays[i]} +$ratio +(none|[0-9]+(,[0-9]+)+) +$figure $figure $figure( +unstable)?$"
    if ! grep -Eq "$floor" <<<"$output"; then
      echo "no floor row for ${patterns[i]} with figures"
      wrong=1
    fi
  done
  return $wrong
}

# check_usage <program>: a bad argument is refused with the usage, status 2.
check_usage() {
  local program=$1 wrong=0 args said status
  for args in "--calls 0" "--rounds" "--calls 12x" "--frobnicate 3"; do
    # shellcheck disable=SC2086 # the arguments split on purpose
    said=$("$program" $args 2>&1 >/dev/null)
    status=$?
    if [[ $status != 2 || $said != "$usage" ]]; then
      echo "'$args': status $status, said '$said'; expected status 2 and '$usage'"
      wrong=1
    fi
  done
  return $wrong
}

# check <program>: the whole check, on one program.
check() {
  local program=$1 output status
  output=$("$program" --rounds 3 --calls 200 2>&1)
  status=$?
  check_table "$status" "$output" && check_usage "$program"
}

if [[ ${1:-} != --self-test ]]; then
  if ! check "$1"; then
    echo "FAIL: ray_microbench, above; it printed:" >&2
    "$1" --rounds 3 --calls 200 >&2
    exit 1
  fi
  echo "PASS"
  exit 0
fi

program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# rejects <name> <status> <output>: the table check must refuse it.
rejects() {
  if check_table "$2" "$3" >"$work/said"; then
    echo "FAIL: the check passed $1"
    failures=$((failures + 1))
  else
    echo "ok: rejects $1: $(head -1 "$work/said")"
  fi
}

good=$("$program" --rounds 3 --calls 200 2>&1)
status=$?
if ! check_table "$status" "$good"; then
  echo "FAIL: the check refuses the program's own output, so its refusals below prove nothing" >&2
  exit 1
fi
rejects "a missing row" 0 "$(grep -v '^chain of 4 *threads' <<<"$good")"
rejects "a missing floor" 0 "$(grep -v '^scatter-gather 4 *fork' <<<"$good")"
rejects "a figure of 0" 0 "$(sed -E '0,/^single actor +processes/s/^(single actor +processes +)[0-9]+/\10/' <<<"$good")"
rejects "a floor of 0" 0 "$(sed -E 's/^(chain of 4 +fork\+shm +)[0-9]+/\10/' <<<"$good")"
rejects "two runs where three were asked" 0 "$(sed -E '/^single actor +threads/s/ [0-9]+( +unstable)?$//' <<<"$good")"
rejects "a failed exit" 1 "$good"

printf '#!/usr/bin/env bash\nexit 0\n' >"$work/takes_anything"
chmod +x "$work/takes_anything"
if check_usage "$work/takes_anything" >/dev/null; then
  echo "FAIL: the check passed a program that takes any argument"
  failures=$((failures + 1))
else
  echo "ok: rejects a program that takes any argument"
fi

# A runtime that cannot make its channels: out of file descriptors.
starved=$(ulimit -n 12 && "$program" --rounds 3 --calls 200 2>&1)
status=$?
rejects "the program out of file descriptors (status $status)" "$status" "$starved"

((failures == 0)) || exit 1
echo "PASS"
