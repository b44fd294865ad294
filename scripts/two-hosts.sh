#!/usr/bin/env bash
# Two hosts on one machine, as CI runs them (`bin/weft test` calls this; about a minute):
#   two network namespaces joined by a veth pair (10.77.0.1/24 and 10.77.0.2/24), each its own host name, one
#   Open MPI rank in each, over TCP only (btl tcp,self on the veth), mpirun on the first host and the second
#   reached through scripts/netns-rsh.sh as its rsh agent. Across them it checks that
#   1. each rank runs on its own host and the agent hands the far host a fresh environment (so 3 can fail);
#   2. the parity programs print what they print on fake ranks;
#   3. `bin/weft run` forwards WEFT_* variables: rank 1, on the far host, sees WEFT_DEBUG=1;
#   4. the examples compute their answers.
# Needs root, network namespaces, unshare and Open MPI; without one of them it says why and skips (exit 0).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WEFT="$ROOT/bin/weft"
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
ip -n "$A" addr add 10.77.0.1/24 dev "wfa$$"
ip -n "$B" addr add 10.77.0.2/24 dev "wfb$$"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "wfa$$" up
ip -n "$B" link set "wfb$$" up
ip netns exec "$A" unshare --uts true 2>"$WORK/err" || skip "this machine forbids UTS namespaces (unshare: $(cat "$WORK/err"))"

printf '%s slots=1\n%s slots=1\n' "$A" "$B" > "$WORK/hostfile"

# Runs a command on the first host, with Open MPI set up for the pair: the hostfile, the agent, TCP on the veth.
on_first_host() {
  env OMPI_MCA_orte_default_hostfile="$WORK/hostfile" OMPI_MCA_plm_rsh_agent="$ROOT/scripts/netns-rsh.sh" \
    OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=10.77.0.0/24 OMPI_MCA_oob_tcp_if_include=10.77.0.0/24 \
    timeout "$STEP_TIMEOUT" ip netns exec "$A" unshare --uts sh -c "hostname $A && exec \"\$@\"" sh "$@"
}

# 1. Placement, and no environment leaking through the agent.
if ! placed=$(WEFT_PROBE=set on_first_host mpirun.openmpi --allow-run-as-root -np 2 \
    sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname) probe=${WEFT_PROBE:-unset}"' 2>&1); then
  fail "mpirun across the hosts: $placed"
fi
expected="0 $A probe=set
1 $B probe=unset"
[[ "$(sort <<<"$placed")" == "$expected" ]] || fail "expected
$expected
got
$placed"
echo "two hosts: rank 0 on $A, rank 1 on $B (10.77.0.1, 10.77.0.2 over a veth pair, TCP only)"

# 2 and 3. The parity programs across the hosts, compared with fake ranks; rank 1 logs only if WEFT_DEBUG came.
"$WEFT" run -np 2 --comm fake -cp "$TEST_CLASSES" dev.weft.it.mpi.ParityPrograms "$WORK" >/dev/null 2>&1 \
  || fail "the parity programs on fake ranks"
mkdir "$WORK/fake" "$WORK/mpi"
mv "$WORK"/rank-*.txt "$WORK/fake"
start=$SECONDS
if ! WEFT_DEBUG=1 OMPI_MCA_rmaps_base_display_map=1 on_first_host "$WEFT" run -np 2 --mpi openmpi -cp "$TEST_CLASSES" \
    dev.weft.it.mpi.ParityPrograms "$WORK/mpi" >"$WORK/parity.log" 2>&1; then
  cat "$WORK/parity.log" >&2
  fail "the parity programs across the hosts"
fi
for r in 0 1; do
  diff -u "$WORK/fake/rank-$r.txt" "$WORK/mpi/rank-$r.txt" >&2 || fail "rank $r printed other lines than on fake ranks"
done
grep -A1 "Data for node: $B" "$WORK/parity.log" | grep -q "Process rank: 1" || fail "rank 1 did not run on $B"
# Each rank's WEFT_DEBUG=1 names the library once; the ranks' writes may interleave within lines.
(($(grep -o '| MPI libmpi\.so\.40' "$WORK/parity.log" | wc -l) == 2)) \
  || fail "WEFT_DEBUG=1 did not reach rank 1: $(grep '| MPI libmpi' "$WORK/parity.log")"
echo "two hosts: parity programs match fake ranks ($(wc -l <"$WORK/mpi/rank-1.txt") lines per rank," \
  "$((SECONDS - start)) s); WEFT_DEBUG reached rank 1 on $B"

# 4. The examples.
for ex in Pi Ring Heat DataParallel; do
  out=$(on_first_host "$WEFT" run -np 2 --mpi openmpi "$ex" 2>&1) || { echo "$out" >&2; fail "$ex across the hosts"; }
  echo "two hosts: $ex: $(tail -n1 <<<"$out")"
done
echo "two hosts: all checks passed in $SECONDS s"
