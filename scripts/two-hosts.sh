#!/usr/bin/env bash
# Two hosts on one machine, as CI runs them (`bin/weft test` calls this; about a minute): two network namespaces
# joined by a veth pair (interface weft0 in each, 10.77.0.1/24 and 10.77.0.2/24), each with its own host name, one
# Open MPI rank in each, over TCP only (btl tcp,self on weft0), mpirun on the first host reaching the second through
# scripts/netns-rsh.sh as its rsh agent. Across them it checks that
#   1. each rank runs on its own host, and the agent hands the far host a fresh environment (so that 3 can fail);
#   2. the parity programs print what they print on fake ranks;
#   3. `bin/weft run` forwards WEFT_* variables: rank 1, on the far host, sees WEFT_DEBUG=1;
#   4. the examples compute their answers.
# MPICH is not run here: over UCX's tcp transport (between the namespaces, or UCX_TLS=tcp on one host) its
# MPI_Finalize hangs in one Java run in three to six (never in 40 runs of a C program), which CI cannot afford.
# Needs root, network namespaces, unshare and Open MPI; without one of them it says why and skips (exit 0).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WEFT="$ROOT/bin/weft"
AGENT="$ROOT/scripts/netns-rsh.sh"
TEST_CLASSES="$ROOT/backends/target/test-classes"
A="weft-a-$$" B="weft-b-$$"
STEP_TIMEOUT=180

skip() { echo "two hosts: skipped: $*"; exit 0; }
fail() { echo "two hosts: FAILED: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) is not installed"
command -v mpirun.openmpi >/dev/null 2>&1 || skip "mpirun.openmpi (openmpi-bin) is not installed"
[[ -d "$TEST_CLASSES" ]] || skip "$TEST_CLASSES is missing (build the tests first)"

WORK="$(mktemp -d)"
cleanup() {
  local ns pid
  for ns in "$A" "$B"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

ip netns add "$A" 2>"$WORK/err" || skip "this machine forbids network namespaces (ip netns add: $(cat "$WORK/err"))"
ip netns add "$B"
ip link add "wfa$$" type veth peer name "wfb$$" || skip "this machine forbids veth pairs"
ip link set "wfa$$" netns "$A"
ip link set "wfb$$" netns "$B"
ip -n "$A" link set "wfa$$" name weft0
ip -n "$B" link set "wfb$$" name weft0
ip -n "$A" addr add 10.77.0.1/24 dev weft0
ip -n "$B" addr add 10.77.0.2/24 dev weft0
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; ip -n "$ns" link set weft0 up; done
ip netns exec "$A" unshare --uts true 2>"$WORK/err" \
  || skip "this machine forbids UTS namespaces (unshare: $(cat "$WORK/err"))"

printf '%s slots=1\n%s slots=1\n' "$A" "$B" > "$WORK/hostfile"
# Open MPI's settings for the pair: the host file, the agent, TCP on weft0 only.
OPENMPI_ENV=(OMPI_MCA_orte_default_hostfile="$WORK/hostfile" OMPI_MCA_plm_rsh_agent="$AGENT"
  OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=weft0 OMPI_MCA_oob_tcp_if_include=weft0)

# Runs a command on the first host, with Open MPI's settings; killed after STEP_TIMEOUT seconds.
on_first_host() {
  timeout -k 10 "$STEP_TIMEOUT" ip netns exec "$A" unshare --uts sh -c "hostname $A && exec \"\$@\"" sh \
    env "${OPENMPI_ENV[@]}" "$@"
}

# 1. Placement, and no variable leaking through the agent: WEFT_PROBE, set and not forwarded, reaches rank 0 only.
if ! placed=$(WEFT_PROBE=set on_first_host OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun.openmpi -np 2 sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname)${WEFT_PROBE:+ probe}"' 2>&1); then
  fail "mpirun across the hosts: $placed"
fi
expected="0 $A probe"$'\n'"1 $B"
[[ "$(sort <<<"$placed")" == "$expected" ]] || fail "mpirun placed ranks: expected
$expected
got
$placed"
echo "two hosts: rank 0 on $A, rank 1 on $B (weft0: 10.77.0.1, 10.77.0.2, TCP only); the agent leaks no variables"

# The parity programs on two fake ranks, the reference.
"$WEFT" run -np 2 --comm fake -cp "$TEST_CLASSES" dev.weft.it.mpi.ParityPrograms "$WORK" >/dev/null 2>&1 \
  || fail "the parity programs on fake ranks"
mkdir "$WORK/fake"
mv "$WORK"/rank-*.txt "$WORK/fake"

# 2 and 3. The parity programs across the hosts, compared with fake ranks; WEFT_DEBUG=1 makes each rank name the
# library once, so rank 1 names it only if the variable was forwarded.
start=$SECONDS
mkdir "$WORK/mpi"
if ! on_first_host WEFT_DEBUG=1 OMPI_MCA_rmaps_base_display_map=1 "$WEFT" run -np 2 --mpi openmpi \
    -cp "$TEST_CLASSES" dev.weft.it.mpi.ParityPrograms "$WORK/mpi" >"$WORK/parity.log" 2>&1; then
  cat "$WORK/parity.log" >&2
  fail "the parity programs across the hosts"
fi
grep -A1 "Data for node: $B" "$WORK/parity.log" | grep -q "Process rank: 1" || fail "rank 1 did not run on $B"
for r in 0 1; do
  diff -u "$WORK/fake/rank-$r.txt" "$WORK/mpi/rank-$r.txt" >&2 || fail "rank $r printed other lines than fake ranks"
done
# The ranks' stderr interleaves within lines (a printf leaves in pieces), so count the library's description, which
# leaves in one piece, not whole lines.
(($(grep -o 'libmpi\.so\.40 (Open MPI' "$WORK/parity.log" | wc -l) == 2)) \
  || fail "WEFT_DEBUG=1 did not reach rank 1: $(grep 'libmpi\.so\.40 (' "$WORK/parity.log")"
echo "two hosts: parity programs match fake ranks ($(wc -l <"$WORK/mpi/rank-1.txt") lines per rank," \
  "$((SECONDS - start)) s); WEFT_DEBUG reached rank 1 on $B"

# 4. The examples.
for ex in Pi Ring Heat DataParallel; do
  out=$(on_first_host "$WEFT" run -np 2 --mpi openmpi "$ex" 2>&1) || { echo "$out" >&2; fail "$ex across the hosts"; }
  echo "two hosts: $ex: $(tail -n1 <<<"$out")"
done
echo "two hosts: all checks passed in $SECONDS s"
