#!/bin/sh
# lo_only.sh [--veth] CMD ARGS... - runs CMD in a network namespace of its own whose only interface is lo (up), so
# that a test that names a wrong interface on purpose reaches nothing but 127.0.0.1, whatever libfabric falls back
# to. --veth adds a veth pair inside that namespace (v0 with 10.213.250.1/24, the range of tests/mpirun/netns.sh,
# and v1), an interface other than lo for a provider to take by mistake; it reaches nothing outside. Exits 77 (a
# skip) with one line where no namespace or pair can be made (not root, a container that forbids it).
command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 ||
  { echo "lo_only.sh: skipped: no unshare or ip command"; exit 77; }
unshare -n true 2>/dev/null || { echo "lo_only.sh: skipped: cannot make a network namespace here"; exit 77; }
if [ "$1" = --veth ]; then
  shift
  unshare -n sh -c 'ip link add v0 type veth peer name v1' 2>/dev/null ||
    { echo "lo_only.sh: skipped: cannot make a veth pair here"; exit 77; }
  exec unshare -n sh -c 'ip link set lo up && ip link add v0 type veth peer name v1 &&
    ip addr add 10.213.250.1/24 dev v0 && ip link set v0 up && ip link set v1 up || exit 1; exec "$@"' sh "$@"
fi
exec unshare -n sh -c 'ip link set lo up || exit 1; exec "$@"' sh "$@"
