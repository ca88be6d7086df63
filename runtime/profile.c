/* profile.c - shmem_pcontrol, the profiling interface's one routine (spec 1.5 annex).
 *
 * The rest of the interface is made at build time (runtime/gen_pshmem.py): every library source is compiled with
 * shoal_pshmem_names.h (#pragma redefine_extname shmem_X pshmem_X), so the library defines and calls the pshmem_X
 * symbols, and the link makes shmem_X a weak alias of each. */
#include "shoal.h"

/* A program calls shmem_pcontrol unconditionally and a tool that wraps it sees the level; without a tool there is
 * nothing to control, so every level (0 off, 1 default, 2 flush, others tool-defined) returns at once. */
void shmem_pcontrol(const int level, ...) { (void)level; }
