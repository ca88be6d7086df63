/* init.c - shmem_init, shmem_init_thread, shmem_finalize and start_pes (spec 9.2): the one place that wires the layers
 * (docs/design/modules.md). It runs the runtime's set-up, then the collectives' (teams, the device heap with the
 * collectives' area, the GPU collectives), and registers in between the hooks through which the runtime reaches
 * the layer above it without calling up; shmem_finalize takes them down in reverse. Every step, its order and its
 * message are those of the single init.c this was split from. */
#include "shoal.h"
#include "ctx.h"          /* shoal_ctx_fini */
#include "heap_gpu.h"     /* the device heap: shoal_gpu_init, _announce, _fini, and its two registrations */
#include "proxy.h"        /* the device proxy: shoal_proxy_init, _fini */
#include "team.h"         /* shoal_team_init, _fini, _gpu_fill */
#include "gpu/coll_gpu.h" /* shoal_coll_gpu_area_bytes, _init, _fini */

#include <stdlib.h>

static void at_exit_finalize(int status, void *arg) {
  /* A program that returns from main without shmem_finalize still finalizes (every PE does, so it is collective).
   * One that exits with a failure status must not wait in that barrier for PEs that never come: oshrun stops them. */
  if (shoal_g.state == 1 && status == 0) shmem_finalize();
}

/* Idempotent while running; fatal after shmem_finalize (no re-initialization). requested: a SHMEM_THREAD_* level,
 * checked by the caller. */
static void init_common(const char *routine, int requested) {
  if (shoal_g.state == 1) return;
  if (shoal_g.state == 2) shoal_fatal(routine, "called after shmem_finalize (re-initialization is not supported)");
  shoal_init_mark(NULL);
  shoal_rt_init(routine, requested); /* from here RMA works (shoal_g.state 1): the steps below may use it */
  if (shoal_team_init()) shoal_fatal(routine, "team setup failed");
  shoal_init_mark("teams");
  /* Upward hooks: the runtime's barrier with shmem_barrier_all's meaning, and contexts' team PE numbers. */
  shoal_barrier_all_hook = shmem_barrier_all;
  shoal_team_translate_hook = shmem_team_translate_pe;
  shoal_team_n_pes_hook = shmem_team_n_pes;
  /* The device heap is laid out with the GPU collectives' area, and learns the teams made so far. */
  shoal_gpu_area_reserve(shoal_coll_gpu_area_bytes);
  shoal_gpu_teams_hook = shoal_team_gpu_fill;
  if (shoal_gpu_init()) shoal_fatal(routine, "GPU setup failed");
  if (shoal_coll_gpu_init()) /* once the device heap is up (a no-op without one) */
    shoal_warn("shmem_init: GPU collectives not set up: fcollect/alltoall on device buffers will be refused");
  shoal_proxy_init(routine); /* a PE of another node in the device state: its queue, before the units are filled */
  shoal_gpu_announce(routine);
  shoal_init_mark("device heap, GPU collectives");
  shoal_rt_init_end();
  static bool registered;
  if (!registered) on_exit(at_exit_finalize, NULL);
  registered = true;
  shoal_barrier_world();
  shoal_init_mark("last barrier");
}

void shmem_init(void) { init_common("shmem_init", SHMEM_THREAD_SINGLE); }

/* The deprecated name (spec 1.5 Annex): npes is ignored, as the specification allows. */
void start_pes(int npes) { shmem_init(); }

int shmem_init_thread(int requested, int *provided) {
  if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
    shoal_fatal("shmem_init_thread", "requested %d is not a SHMEM_THREAD_* level", requested);
  init_common("shmem_init_thread", requested);
  if (provided) *provided = shoal_g.thread_level;
  return 0;
}

/* A no-op unless running; collective. The hooks stay registered (a later call finds shoal_g.state 2 first). */
void shmem_finalize(void) {
  if (shoal_g.state != 1) return;
  shoal_proxy_fini(); /* kernels done, the device proxy's requests served and complete, before contexts go */
  shoal_ctx_fini(); /* contexts' operations between nodes complete before the barrier (it covers the default's) */
  shmem_barrier_all();
  shoal_coll_gpu_fini(); /* before the device heap it signals in goes */
  shoal_gpu_fini();
  shoal_team_fini();
  shoal_rt_fini();
}
