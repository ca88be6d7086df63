/* team.c - predefined teams (placeholder until the teams module lands). */
#include "shoal.h"

shmem_team_t SHMEM_TEAM_WORLD = SHMEM_TEAM_INVALID;
shmem_team_t SHMEM_TEAM_SHARED = SHMEM_TEAM_INVALID;

shoal_status_t shoal_team_init(void) { return SHOAL_OK; }
void shoal_team_fini(void) {}
