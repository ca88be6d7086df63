/* shoal/shmem_amo.h - part of <shmem.h>; include <shmem.h> instead. */
#ifndef SHOAL_SHMEM_AMO_H
#define SHOAL_SHMEM_AMO_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
