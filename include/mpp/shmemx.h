/* mpp/shmemx.h - <shmemx.h> (Shoal's extensions, with <shmem.h>) at the older location, as <mpp/shmem.h>. */
#ifndef SHOAL_MPP_SHMEMX_H
#define SHOAL_MPP_SHMEMX_H
#include <shmemx.h>
#endif
