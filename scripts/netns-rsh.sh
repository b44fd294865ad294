#!/bin/sh
# Open MPI's rsh agent for scripts/two-hosts.sh. `netns-rsh.sh HOST COMMAND...` runs COMMAND, a shell command
# line as ssh takes it, on the pretend host HOST: in the network namespace named HOST, with HOST as its host name
# and, as ssh would give it, a fresh environment (PATH and HOME only), so variables reach the far rank only when
# the launcher forwards them.
set -eu
host="$1"
shift
exec env -i PATH="$PATH" HOME="$HOME" ip netns exec "$host" unshare --uts sh -c "hostname $host && exec $*"
