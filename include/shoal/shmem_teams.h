/* shoal/shmem_teams.h - part of <shmem.h>; include <shmem.h> instead. */
#ifndef SHOAL_SHMEM_TEAMS_H
#define SHOAL_SHMEM_TEAMS_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
