/* shoal/shmem_coll.h - part of <shmem.h>; include <shmem.h> instead. */
#ifndef SHOAL_SHMEM_COLL_H
#define SHOAL_SHMEM_COLL_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
