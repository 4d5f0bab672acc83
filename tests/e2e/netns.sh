#!/usr/bin/env bash
# netns.sh — two network namespaces joined by a veth pair: two "hosts" on one machine.
#
# Usage: tests/e2e/netns.sh up|down|status
#   up      creates cgtest-a (10.77.0.1/24 on cgtest-va) and cgtest-b (10.77.0.2/24
#           on cgtest-vb), joined by a veth pair, loopback up in both. Idempotent:
#           a complete pair is left as it is, a partial one is rebuilt.
#   down    deletes both namespaces (and with them the veth pair). Idempotent.
#   status  exits 0 when the pair is up, 1 when not.
# Exits 77 (the "skipped" code of ctest and automake) with a message on stderr
# when not run as root or when `ip netns` is unavailable or not permitted.
#
# Only the two namespaces it creates are touched: the veth pair is created
# inside cgtest-a and its peer moved straight into cgtest-b, so no interface
# or address ever appears in the caller's namespace.
set -euo pipefail

readonly ns_a=cgtest-a ns_b=cgtest-b
readonly dev_a=cgtest-va dev_b=cgtest-vb
readonly addr_a=10.77.0.1/24 addr_b=10.77.0.2/24

skip() { echo "netns.sh: $*" >&2; exit 77; }

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }

exists() { [[ -e /var/run/netns/$1 ]] || [[ -e /run/netns/$1 ]]; }

is_up() {
  exists "$ns_a" && exists "$ns_b" &&
    ip -n "$ns_a" -4 addr show dev "$dev_a" 2>/dev/null | grep -q "inet ${addr_a} " &&
    ip -n "$ns_b" -4 addr show dev "$dev_b" 2>/dev/null | grep -q "inet ${addr_b} " &&
    ip -n "$ns_a" link show dev "$dev_a" 2>/dev/null | grep -q "state UP" &&
    ip -n "$ns_b" link show dev "$dev_b" 2>/dev/null | grep -q "state UP"
}

down() {
  local ns
  for ns in "$ns_a" "$ns_b"; do
    if exists "$ns"; then ip netns delete "$ns"; fi
  done
}

up() {
  if is_up; then return 0; fi
  down
  ip netns add "$ns_a" 2>/dev/null || skip "cannot create network namespaces here (ip netns add failed)"
  if ! ip netns add "$ns_b"; then down; skip "cannot create network namespaces here (ip netns add failed)"; fi
  if ! ip -n "$ns_a" link add "$dev_a" type veth peer name "$dev_b" netns "$ns_b"; then
    down
    skip "cannot create a veth pair here"
  fi
  ip -n "$ns_a" addr add "$addr_a" dev "$dev_a"
  ip -n "$ns_b" addr add "$addr_b" dev "$dev_b"
  ip -n "$ns_a" link set lo up
  ip -n "$ns_b" link set lo up
  ip -n "$ns_a" link set "$dev_a" up
  ip -n "$ns_b" link set "$dev_b" up
  # The link takes a moment to come up (carrier on both ends).
  local i
  for i in $(seq 50); do
    if is_up; then return 0; fi
    sleep 0.1
  done
  down
  echo "netns.sh: the veth pair did not come up" >&2
  exit 1
}

command="${1:-}"
case "$command" in
  up|down|status) ;;
  -h|--help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac

[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "needs the ip command (iproute2)"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available"

# One caller at a time (tests and benchmarks may run concurrently).
lock=/run/lock/cgtest-netns.lock
[[ -d /run/lock ]] || lock=/tmp/cgtest-netns.lock
exec 9>"$lock"
flock 9

case "$command" in
  up) up ;;
  down) down ;;
  status) is_up ;;
esac
