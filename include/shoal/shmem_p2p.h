/* shoal/shmem_p2p.h - part of <shmem.h>; include <shmem.h> instead. */
#ifndef SHOAL_SHMEM_P2P_H
#define SHOAL_SHMEM_P2P_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
