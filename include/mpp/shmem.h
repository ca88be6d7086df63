/* mpp/shmem.h - the header's older location, which SGI SHMEM, Sandia OpenSHMEM and Open MPI's OSHMEM install and
 * older programs include as <mpp/shmem.h>: the same API as <shmem.h>. */
#ifndef SHOAL_MPP_SHMEM_H
#define SHOAL_MPP_SHMEM_H
#include <shmem.h>
#endif
