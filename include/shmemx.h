/*
 * shmemx.h - Shoal extensions to OpenSHMEM 1.5 (names shmemx_* / SHMEMX_*). Includes <shmem.h>.
 */
#ifndef SHMEMX_H
#define SHMEMX_H
#include <shmem.h>
#ifdef __cplusplus
extern "C" {
#endif

/** Node-local rank of this PE in [0, shmemx_local_n_pes()) (as NVSHMEM's NVSHMEMX_TEAM_NODE rank). */
int shmemx_local_pe(void);
/** Number of PEs on this node. */
int shmemx_local_n_pes(void);
/** Bytes of the symmetric heap: total (SHMEM_SYMMETRIC_SIZE) and still free (largest block) on this PE. */
void shmemx_heap_info(size_t *total, size_t *free_largest);

#ifdef __cplusplus
}
#endif
#endif
