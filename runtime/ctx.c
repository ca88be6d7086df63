/* ctx.c - communication contexts (spec 9.4).
 *
 * On one node every operation completes before it returns, so a context carries no resources: it is a small object
 * holding its options and team, and its magic while it is live. A destroyed context keeps its memory (never freed,
 * never reused) with magic 0, so every later use of the stale handle is caught by SHOAL_CHECK_CTX with a one-line
 * error. (A context costs one small allocation for the life of the process.) */
#include "ctx.h"

#include <stdlib.h>

/* The teams module (team.c) translates team PE numbers; weak, so that this module links without it. (Declared here
 * too, as the spec has them, for builds where shmem_teams.h does not yet declare them.) */
#pragma GCC visibility push(default)
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_n_pes(shmem_team_t team);
#pragma GCC visibility pop
#pragma weak shmem_team_translate_pe
#pragma weak shmem_team_n_pes

int shoal_ctx_pe_slow(const char *routine, shmem_ctx_t ctx, int pe) {
  if (!shmem_team_translate_pe) return pe;
  int w = shmem_team_translate_pe(ctx->team, pe, SHMEM_TEAM_WORLD);
  if (w < 0)
    shoal_fatal(routine, "pe %d out of range [0, %d) of the team of ctx %p", pe,
                shmem_team_n_pes ? shmem_team_n_pes(ctx->team) : -1, (void *)ctx);
  return w;
}

#define SHOAL_CTX_OPTIONS (SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE)

static int ctx_new(shmem_team_t team, long options, shmem_ctx_t *ctx) {
  *ctx = SHMEM_CTX_INVALID;
  if (options & ~SHOAL_CTX_OPTIONS) {
    if (shoal_env.debug) shoal_warn("shmem_ctx_create: options %#lx has unknown bits", (unsigned long)options);
    return -1;
  }
  struct shoal_ctx *c = malloc(sizeof *c);
  if (!c) return -1;
  *c = (struct shoal_ctx){.options = options, .team = team};
  __atomic_store_n(&c->magic, SHOAL_CTX_MAGIC, __ATOMIC_RELEASE);
  *ctx = c;
  return 0;
}

int shoal_ctx_create_team(shmem_team_t team, long options, shmem_ctx_t *ctx) {
  if (team == SHMEM_TEAM_INVALID) {
    *ctx = SHMEM_CTX_INVALID;
    return -1;
  }
  return ctx_new(team, options, ctx);
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_create");
  if (!ctx) shoal_fatal("shmem_ctx_create", "ctx is NULL");
  return ctx_new(SHMEM_TEAM_WORLD, options, ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_destroy");
  if (ctx == SHMEM_CTX_INVALID) return;
  SHOAL_CHECK_CTX("shmem_ctx_destroy", ctx);
  if (ctx == &shoal_ctx_default_obj) shoal_fatal("shmem_ctx_destroy", "SHMEM_CTX_DEFAULT cannot be destroyed");
  shmem_ctx_quiet(ctx);
  __atomic_store_n(&ctx->magic, 0, __ATOMIC_RELEASE);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team) {
  SHOAL_CHECK_INIT("shmem_ctx_get_team");
  if (!team) shoal_fatal("shmem_ctx_get_team", "team is NULL");
  if (ctx == SHMEM_CTX_INVALID) {
    *team = SHMEM_TEAM_INVALID;
    return -1;
  }
  SHOAL_CHECK_CTX("shmem_ctx_get_team", ctx);
  *team = ctx == &shoal_ctx_default_obj ? SHMEM_TEAM_WORLD : ctx->team;
  return 0;
}
