#!/bin/sh
# mpirun.sh - run a Shoal program as one job under Open MPI's mpirun (Shoal's PMIx bootstrap).
#
#   mpirun.sh N PROG ARGS...     mpirun -np N PROG ARGS..., on loopback and shared memory only, with --timeout
#   mpirun.sh --probe            exit 0 if a run could happen, else 77 (below)
#
# Exits 77 (meson's "skip") with a one-line reason when mpirun is not on PATH, is not Open MPI's, or when Shoal was
# built without PMIx: meson passes MPIRUN_SH_HAVE_PMIX (conf SHOAL_HAVE_PMIX, 0 or 1). MPIRUN_SH_TIMEOUT: mpirun's
# --timeout in seconds (default 80: a hang fails with mpirun's message, before meson's own timeout).
# Open MPI is kept to this machine: BTLs self and vader (shared memory), its out-of-band channel on lo only.
case "${MPIRUN_SH_HAVE_PMIX-}" in
  1) ;;
  0) echo "mpirun.sh: skipped: this Shoal was built without PMIx (SHOAL_HAVE_PMIX 0), so mpirun cannot start its PEs"
     exit 77 ;;
  *) echo "mpirun.sh: MPIRUN_SH_HAVE_PMIX must be 0 or 1 (meson sets it from SHOAL_HAVE_PMIX), got '${MPIRUN_SH_HAVE_PMIX-}'" >&2
     exit 2 ;;
esac
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpirun.sh: skipped: mpirun is not on PATH"
  exit 77
fi
if ! mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
  echo "mpirun.sh: skipped: $(command -v mpirun) is not Open MPI's mpirun (its options differ)"
  exit 77
fi
[ "${1-}" = --probe ] && exit 0
if [ $# -lt 2 ]; then
  echo "usage: mpirun.sh N PROG ARGS... | mpirun.sh --probe" >&2
  exit 2
fi
n=$1
shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun --oversubscribe -np "$n" --mca btl self,vader --mca oob_tcp_if_include lo \
  --timeout "${MPIRUN_SH_TIMEOUT:-80}" "$@"
