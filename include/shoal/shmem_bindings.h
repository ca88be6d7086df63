/* shoal/shmem_bindings.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * What Shoal implements, said in the words of language bindings that look for it by macro (docs/python.md).
 * shmem4py (the OpenSHMEM binding for Python) recognizes SOS, OSHMEM, OSSS, OSHMPI and Cray by their own header
 * macros; for any other implementation it tests one macro per optional feature of OpenSHMEM 1.5 (teams, contexts'
 * SHMEM_CTX_INVALID, shmem_malloc_with_hints, non-blocking AMOs, put-with-signal, the team collectives and
 * reductions, the wait/test-many routines, shmem_pcontrol) and supplies a stand-in for each one it finds missing.
 * Such a stand-in is a second definition of a routine that <shmem.h> already declares, so the binding would not
 * compile. Shoal implements every one of them, and says so here: shmem4py then builds and runs unchanged (with
 * OSHCC=oshcc), calling Shoal's routines, and Shoal still names itself "Shoal" (SHMEM_VENDOR_STRING), never another
 * vendor. Define SHOAL_NO_BINDING_FEATURES before including <shmem.h> to leave these names out.
 */
#ifndef SHOAL_SHMEM_BINDINGS_H
#define SHOAL_SHMEM_BINDINGS_H
#ifndef SHOAL_NO_BINDING_FEATURES
#define PySHMEM_HAVE_shmem_malloc_with_hints 1
#define PySHMEM_HAVE_shmem_team_t 1
#define PySHMEM_HAVE_SHMEM_CTX_INVALID 1
#define PySHMEM_HAVE_shmem_amo_nbi 1
#define PySHMEM_HAVE_shmem_put_signal 1
#define PySHMEM_HAVE_shmem_signal_fetch 1
#define PySHMEM_HAVE_shmem_signal_wait_until 1
#define PySHMEM_HAVE_shmem_broadcast 1
#define PySHMEM_HAVE_shmem_collect 1
#define PySHMEM_HAVE_shmem_fcollect 1
#define PySHMEM_HAVE_shmem_alltoall 1
#define PySHMEM_HAVE_shmem_alltoalls 1
#define PySHMEM_HAVE_shmem_TYPENAME_alltoalls 1 /* the same feature, as earlier shmem4py releases name it */
#define PySHMEM_HAVE_shmem_broadcastmem 1
#define PySHMEM_HAVE_shmem_collectmem 1
#define PySHMEM_HAVE_shmem_fcollectmem 1
#define PySHMEM_HAVE_shmem_alltoallmem 1
#define PySHMEM_HAVE_shmem_alltoallsmem 1
#define PySHMEM_HAVE_shmem_reduce 1
#define PySHMEM_HAVE_shmem_OP_reduce 1          /* likewise */
#define PySHMEM_HAVE_shmem_wait_test_many 1
#define PySHMEM_HAVE_shmem_pcontrol 1
#endif
#endif
