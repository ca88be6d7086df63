/* ctx.c - communication contexts (spec 9.4).
 *
 * On one node every operation completes before it returns, so a context carries no resources there: it is a small
 * object holding its options and team, and its magic while it is live. Where the transport between nodes runs, a
 * context also gets an endpoint of its own there (ctx->tl), so that shmem_ctx_quiet waits for that context's
 * operations only and a private context's operations take no lock (as SOS gives each context a transmit context).
 * A destroyed context keeps its memory (never freed, never reused) with magic 0, so every later use of the stale
 * handle is caught by SHOAL_CHECK_CTX with a one-line error. (A context costs one small allocation for the life of
 * the process.) Live contexts are kept on a list so that shmem_team_destroy can destroy those made on the team. */
#include "ctx.h"
#include "comm.h"

#include <pthread.h>
#include <stdlib.h>

/* The teams module (collectives/team.c) translates team PE numbers, through the hooks it registers at init (shoal.h):
 * the runtime does not call up into it. */
int shoal_ctx_pe_slow(const char *routine, shmem_ctx_t ctx, int pe) {
  if (!shoal_team_translate_hook) return pe;
  int w = shoal_team_translate_hook(ctx->team, pe, SHMEM_TEAM_WORLD);
  if (w < 0)
    shoal_fatal(routine, "pe %d out of range [0, %d) of the team of ctx %p", pe,
                shoal_team_n_pes_hook ? shoal_team_n_pes_hook(ctx->team) : -1, (void *)ctx);
  return w;
}

#define SHOAL_CTX_OPTIONS (SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE)

/* The list lives here rather than in struct shoal_ctx, which the inline fast paths share. */
struct ctx_node {
  struct shoal_ctx c; /* first: a shmem_ctx_t points at it */
  struct ctx_node *prev, *next; /* NULL once off the list */
};
static struct ctx_node live = {.prev = &live, .next = &live};
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER; /* contexts are created and destroyed by any thread */

/* Caller holds live_lock. Returns the context's endpoint between nodes (NULL if it has none, or if the context was
 * already killed: a racing destroy, the user's error, keeps the list sound and frees the endpoint once). */
static void *ctx_kill(struct ctx_node *n) {
  if (!n->next) return NULL;
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = NULL;
  __atomic_store_n(&n->c.magic, 0, __ATOMIC_RELEASE);
  void *tl = n->c.tl;
  n->c.tl = NULL;
  return tl;
}

static int ctx_new(shmem_team_t team, long options, shmem_ctx_t *ctx) {
  *ctx = SHMEM_CTX_INVALID;
  if (options & ~SHOAL_CTX_OPTIONS) {
    if (shoal_env.debug) shoal_warn("shmem_ctx_create: options %#lx has unknown bits", (unsigned long)options);
    return -1;
  }
  struct ctx_node *n = malloc(sizeof *n);
  if (!n) return -1;
  *n = (struct ctx_node){.c = {.options = options, .team = team,
                               /* private and serialized: one thread at a time by contract, no lock */
                               .tl = shoal_comm_ctx_create(!(options & (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED)))}};
  pthread_mutex_lock(&live_lock);
  n->prev = live.prev;
  n->next = &live;
  live.prev->next = n;
  live.prev = n;
  __atomic_store_n(&n->c.magic, SHOAL_CTX_MAGIC, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&live_lock);
  *ctx = &n->c;
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
  pthread_mutex_lock(&live_lock);
  void *tl = ctx_kill((struct ctx_node *)ctx);
  pthread_mutex_unlock(&live_lock);
  shoal_comm_ctx_destroy(tl); /* after the kill: a racing use of the stale handle fails its check, not here */
}

void shoal_ctx_destroy_team(shmem_team_t team) {
  shmem_quiet(); /* the implicit quiet of shmem_ctx_destroy, once for all of them (their own endpoints below) */
  pthread_mutex_lock(&live_lock);
  for (struct ctx_node *n = live.next, *next; n != &live; n = next) {
    next = n->next;
    /* A private context belongs to its thread, which must have destroyed it already (spec 1.5): leave it alone. */
    if (n->c.team == team && !(n->c.options & SHMEM_CTX_PRIVATE)) shoal_comm_ctx_destroy(ctx_kill(n));
  }
  pthread_mutex_unlock(&live_lock);
}

void shoal_ctx_fini(void) {
  pthread_mutex_lock(&live_lock);
  for (struct ctx_node *n = live.next, *next; n != &live; n = next) {
    next = n->next;
    if (!(n->c.options & SHMEM_CTX_PRIVATE))
      shoal_comm_ctx_destroy(ctx_kill(n)); /* completes its operations first */
    else if (n->c.tl) /* the thread's to destroy (spec 1.5); its operations must land before the last barrier */
      shoal_comm_quiet("shmem_finalize", n->c.tl);
  }
  pthread_mutex_unlock(&live_lock);
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
