/* shoal/shmem_teams.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * Teams (spec 9.4). A team is an ordered subset of the PEs; its members are numbered 0 .. n-1. SHMEM_TEAM_WORLD holds
 * every PE; SHMEM_TEAM_SHARED every PE that shares memory with the caller (on one node: every PE). Both are valid
 * from shmem_init to shmem_finalize and cannot be destroyed. Team handles are local: the same team has a different
 * handle value on every PE.
 *
 * Limit: a team takes one of 30 team slots, chosen so that teams with a common member never share one (teams with
 * disjoint members may); a split that finds no free slot returns nonzero on every PE of the parent team (with
 * SHMEM_DEBUG=1, PE 0 of the parent prints why). Destroying a team frees its slot.
 *
 * Threads: collectives on different teams may run in different threads at once; team creation and destruction
 * (and SHMEM_DEBUG's argument checks) expect one thread at a time per PE.
 *
 * Errors: SHMEM_TEAM_INVALID gives -1 / NULL / nonzero where the specification says so (my_pe, n_pes,
 * translate_pe, get_config, team_ptr, the splits, create_ctx) and is fatal for collectives. A destroyed or garbage
 * handle is always fatal: "shoal: PE <me>: <routine>: team ...: <reason>" (a handle is checked against this PE's
 * table of team objects before it is read, so any value gives the message, never a crash).
 */
#ifndef SHOAL_SHMEM_TEAMS_H
#define SHOAL_SHMEM_TEAMS_H
#ifdef __cplusplus
extern "C" {
#endif

/** This PE's number in team, in [0, shmem_team_n_pes(team)); -1 for SHMEM_TEAM_INVALID (spec 9.4.1). */
int shmem_team_my_pe(shmem_team_t team);
/** Number of PEs in team, >= 1; -1 for SHMEM_TEAM_INVALID (spec 9.4.2). */
int shmem_team_n_pes(shmem_team_t team);
/** Copies the team's configuration fields selected by config_mask (SHMEM_TEAM_NUM_CONTEXTS) into *config.
 *  Returns 0, or nonzero for SHMEM_TEAM_INVALID or a NULL config (spec 9.4.3). */
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
/** src_pe's number (a PE number of src_team) in dest_team; -1 if it is not a member of both, if src_pe is out of
 *  range, or if either team is SHMEM_TEAM_INVALID (spec 9.4.4). */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/** Collective over parent_team: the new team holds parent PEs start, start + stride, ... (size of them; stride may
 *  be negative, or 0 with size 1). Members get the new handle, other parent PEs SHMEM_TEAM_INVALID. Returns 0 on
 *  every parent PE; nonzero (and SHMEM_TEAM_INVALID) on every parent PE for an invalid triplet, a parent that is
 *  SHMEM_TEAM_INVALID, or no free team slot. config/config_mask: SHMEM_TEAM_NUM_CONTEXTS (spec 9.4.5). */
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
/** Collective over parent_team: PE p of the parent has coordinates (p % xrange, p / xrange); xaxis_team gets the
 *  PEs of the caller's row (same y), yaxis_team those of its column (same x). An xrange above the parent's size is
 *  taken as that size. Returns 0, or nonzero (both handles SHMEM_TEAM_INVALID) for xrange < 1, an invalid parent or
 *  no free team slots (spec 9.4.6). */
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
/** Collective over team: release it; the handle becomes invalid (using it afterwards is fatal). SHMEM_TEAM_INVALID
 *  is a no-op; a predefined team is fatal (spec 9.4.7). */
void shmem_team_destroy(shmem_team_t team);
/** A context on team: RMA and AMO on it take team PE numbers. Returns 0 and sets *ctx, or nonzero and
 *  SHMEM_CTX_INVALID (SHMEM_TEAM_INVALID, or no resources) (spec 9.4.8). */
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
/** Local load/store pointer to dest on team PE pe, or NULL if not mapped here, pe is out of range or team is
 *  SHMEM_TEAM_INVALID (spec 9.4.9). */
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

#ifdef __cplusplus
}
#endif
#endif
