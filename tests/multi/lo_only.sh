#!/bin/sh
# lo_only.sh CMD ARGS... - runs CMD in a network namespace of its own whose only interface is lo (up), so that a test
# that names a wrong interface on purpose reaches nothing but 127.0.0.1, whatever libfabric falls back to. Exits 77
# (a skip) with one line where no namespace can be made (not root, a container that forbids it).
command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 ||
  { echo "lo_only.sh: skipped: no unshare or ip command"; exit 77; }
unshare -n true 2>/dev/null || { echo "lo_only.sh: skipped: cannot make a network namespace here"; exit 77; }
exec unshare -n sh -c 'ip link set lo up || exit 1; exec "$@"' sh "$@"
