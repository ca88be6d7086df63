/* state.c - the PE's state (shoal_g) and what the layers above set into the runtime at init (the predefined team
 * handles, the team hooks), alone in a file: the leaves of the runtime (address translation, logging) read it, and
 * must not pull init.c's set-up (bootstrap, heaps, transports) into every program that links them. */
#include "shoal.h"

shoal_state_t shoal_g = {.boot = {.fd = -1}}; /* fd 0 would be stdin */

/* The predefined teams' handles: stored here, below the teams module (collectives/team.c) that makes the teams and
 * sets them at init, because the runtime compares with WORLD on the RMA path (ctx.h, shoal_ctx_pe). */
shmem_team_t SHMEM_TEAM_WORLD = SHMEM_TEAM_INVALID;
shmem_team_t SHMEM_TEAM_SHARED = SHMEM_TEAM_INVALID;

int (*shoal_team_translate_hook)(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int (*shoal_team_n_pes_hook)(shmem_team_t team);
