/* shoal/shmem_deprecated.h - part of <shmem.h>; include <shmem.h> instead. */
#ifndef SHOAL_SHMEM_DEPRECATED_H
#define SHOAL_SHMEM_DEPRECATED_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
