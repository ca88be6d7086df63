#!/bin/sh
# netns.sh - one Shoal job over two simulated hosts: network namespaces joined by a veth pair that this script makes
# (each end named shoal0, 10.213.K.1 and 10.213.K.2/24; nothing else is reachable from them), each with its own host
# name. mpirun starts in the first; its daemon for the second host starts through an "rsh agent" that enters the
# second namespace (no ssh). The PEs of each host share memory, and reach the other host's PEs through libfabric
# on shoal0: Shoal's transport between nodes, with PMIx (mpirun's) as the bootstrap. The provider is the one Shoal
# picks by itself (net), as a user's job gets it; NETNS_PROVIDER=tcp names tcp;ofi_rxm instead.
#
#   netns.sh N PROG ARGS...   N PEs on each host (N,M: N on the first, M on the second)
#   netns.sh --probe          exit 0 if namespaces can be made here, else 77
# NETNS_MAP_BY=node deals the ranks round robin over the two hosts (mpirun --map-by node: a host's PEs are not
# consecutive ranks); by default the first host gets ranks 0..N-1.
# NETNS_PAUSE_DIR=DIR (for a driver that strikes the job, tests/mpirun/fault.py): the script writes the names of the
# two namespaces to DIR/names ("A B", before mpirun starts), and once mpirun has exited, its status to DIR/status; it
# then waits (at most 120 s) for DIR/go to exist before it removes the namespaces, so that the driver can look into
# them (ip netns pids) first.
# Both simulated hosts are this machine, so mpirun binds each host's first PE to the same core (its daemon sees a
# whole machine): the PEs of both hosts would share one core and every operation wait for the other's time slice
# (get 0.6-2 ms, the netns suite minutes longer). So binding is off (--bind-to none): each PE on a core of its own, as
# on two real hosts (get 26 us).
# Exits 77 (a skip) with one line where namespaces cannot be made (not root, no ip command, a container that forbids
# them), or without Open MPI's mpirun or PMIx (MPIRUN_SH_HAVE_PMIX, as for mpirun.sh). Everything is removed on exit.
set -u
skip() { echo "netns.sh: skipped: $*"; exit 77; }
[ "${MPIRUN_SH_HAVE_PMIX-}" = 1 ] || skip "this Shoal was built without PMIx"
command -v mpirun >/dev/null 2>&1 && mpirun --version 2>/dev/null | grep -q 'Open MPI' || skip "no Open MPI mpirun"
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || skip "no ip or unshare command"

tag=$$
a=shoalA$tag b=shoalB$tag
k=$(( tag % 250 + 1 ))
cleanup() {
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null # the veth pair goes with its namespaces
  rm -rf "/etc/netns/$a" "/etc/netns/$b" "${agent-}"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
ip netns add "$a" 2>/dev/null && ip netns add "$b" 2>/dev/null || skip "cannot create network namespaces here"
ip link add "sa$tag" type veth peer name "sb$tag" || skip "cannot create a veth pair here"
ip link set "sa$tag" netns "$a" && ip link set "sb$tag" netns "$b" || exit 1
for side in "$a:sa$tag:1" "$b:sb$tag:2"; do
  ns=${side%%:*} rest=${side#*:}
  dev=${rest%%:*} host=${rest#*:}
  # The launcher's own connections (mpirun to its daemon) notice a dead link only when TCP gives up: after
  # tcp_retries2 retransmissions (15, a quarter of an hour, by default) or keepalive's probes when idle. A cluster
  # that wants a lost link to end a job in seconds sets both (docs/launching.md); each namespace has its own.
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=3 2>/dev/null
  ip -n "$ns" link set "$dev" name shoal0 &&
    ip -n "$ns" addr add "10.213.$k.$host/24" dev shoal0 &&
    ip -n "$ns" link set shoal0 up && ip -n "$ns" link set lo up || exit 1
  # ip netns exec bind-mounts /etc/netns/NS/* over /etc: each host resolves both names to their shoal0 addresses
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n10.213.%s.1 shoal-a%s\n10.213.%s.2 shoal-b%s\n' "$k" "$tag" "$k" "$tag" \
    >"/etc/netns/$ns/hosts"
done
[ "${1-}" = --probe ] && exit 0
if [ $# -lt 2 ]; then
  echo "usage: netns.sh N[,M] PROG ARGS... | netns.sh --probe" >&2
  exit 2
fi
na=${1%,*} nb=${1#*,}
shift
# The rsh agent: "agent HOST COMMAND..." runs COMMAND as ssh would (through a shell) inside the second host.
agent=$(mktemp /tmp/shoal-netns-agent.XXXXXX)
cat >"$agent" <<EOF
#!/bin/sh
shift
exec ip netns exec $b unshare --uts sh -c "hostname shoal-b$tag; exec \$*"
EOF
chmod 700 "$agent"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The daemon of the second host does not pass mpirun's environment on: forward Shoal's variables (and the paths).
fwd="-x PATH"
[ -n "${LD_LIBRARY_PATH-}" ] && fwd="$fwd -x LD_LIBRARY_PATH"
for v in $(env | sed -n 's/^\(SHMEM_[A-Z_]*\|SHOAL_[A-Z_]*\|SMA_[A-Z_]*\)=.*/\1/p'); do fwd="$fwd -x $v"; done
prov= # NETNS_PROVIDER=tcp: tcp;ofi_rxm; unset: the provider Shoal picks by itself (net), as a user's job gets
[ -n "${NETNS_PROVIDER-}" ] && prov="-x FI_PROVIDER=$NETNS_PROVIDER -x SHOAL_OFI_PROVIDER=$NETNS_PROVIDER"
run_job() {
  ip netns exec "$a" unshare --uts sh -c 'hostname "$0"; exec "$@"' "shoal-a$tag" \
    mpirun --host "shoal-a$tag:$na,shoal-b$tag:$nb" -np $((na + nb)) ${NETNS_MAP_BY:+--map-by "$NETNS_MAP_BY"} \
    --mca plm_rsh_agent "$agent" \
    --mca plm_rsh_no_tree_spawn 1 --bind-to none --mca oob_tcp_if_include shoal0 --mca btl self,vader,tcp \
  --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3 \
    --mca btl_tcp_if_include shoal0 --timeout "${MPIRUN_SH_TIMEOUT:-200}" \
    -x FI_TCP_IFACE=shoal0 -x FI_NET_IFACE=shoal0 $prov $fwd "$@"
}
[ -n "${NETNS_PAUSE_DIR-}" ] || { run_job "$@"; exit; }
# (in the background, stdin is /dev/null and SIGINT is ignored by mpirun: the driver ends it with SIGTERM or SIGKILL)
echo "$a $b" >"$NETNS_PAUSE_DIR/names.tmp" && mv "$NETNS_PAUSE_DIR/names.tmp" "$NETNS_PAUSE_DIR/names"
run_job "$@" &
wait $!
rc=$?
echo "$rc" >"$NETNS_PAUSE_DIR/status.tmp" && mv "$NETNS_PAUSE_DIR/status.tmp" "$NETNS_PAUSE_DIR/status"
i=0
while [ ! -e "$NETNS_PAUSE_DIR/go" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
exit "$rc"
