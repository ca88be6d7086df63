/* ctx.h - internal interface of the context module (ctx.c). Never installed. */
#ifndef SHOAL_CTX_H
#define SHOAL_CTX_H
#include "shoal.h"

/* Create a context on team with options (SHMEM_CTX_* bits); the teams module's shmem_team_create_ctx calls this.
 * Returns 0 and sets *ctx; returns non-zero and sets *ctx = SHMEM_CTX_INVALID when team is SHMEM_TEAM_INVALID,
 * options has unknown bits, or memory is exhausted. Thread safe. Context objects are never reused, so a destroyed
 * handle stays detectably invalid (SHOAL_CHECK_CTX). */
int shoal_ctx_create_team(shmem_team_t team, long options, shmem_ctx_t *ctx);

/* Destroy every shareable context made on team, as shmem_team_destroy must (spec 1.5); private ones are the user's
 * to destroy first. Thread safe. */
void shoal_ctx_destroy_team(shmem_team_t team);

/* At shmem_finalize, before its barrier: destroys every shareable context (spec 1.5), which completes its
 * operations, and completes those of private contexts left alive (their endpoints close with the transport). */
void shoal_ctx_fini(void);

/* Slow path of shoal_ctx_pe: translation through the teams module, fatal for a PE outside the team. */
int shoal_ctx_pe_slow(const char *routine, shmem_ctx_t ctx, int pe);

/* The world PE number of pe given to an operation on ctx (checked live): a context made on a team takes PE numbers
 * of that team (spec 9.4). SHMEM_CTX_DEFAULT and contexts on SHMEM_TEAM_WORLD: pe itself, one compare. */
static inline int shoal_ctx_pe(const char *routine, shmem_ctx_t ctx, int pe) {
  if (SHOAL_LIKELY(ctx == &shoal_ctx_default_obj || ctx->team == SHMEM_TEAM_WORLD)) return pe;
  return shoal_ctx_pe_slow(routine, ctx, pe);
}

#endif
