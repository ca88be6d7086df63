/* ctx_threads.c - contexts and SHMEM_THREAD_MULTIPLE: several pthreads per PE create their own contexts (every option
 * combination), run AMOs, puts and put-with-signal on them and on the default context at the same time, and destroy
 * them. Totals must be exact. Also: ctx_create/destroy/get_team/quiet/fence semantics (invalid options,
 * SHMEM_CTX_INVALID), and the spec's two context examples, written with pthreads instead of OpenMP: a task counter
 * drained with per-thread private contexts, and a library keeping one context per thread in thread-local storage. */
#include "ptest.h"

#include <pthread.h>

#define NT 4       /* threads per PE */
/* AMOs per thread and target: fewer where a peer is reached over the network (each a round trip). */
static int ITER = 2000;
#define SLOT 512   /* bytes each thread puts into each PE */
static int me, npes;
static long s_count;                 /* AMO target on every PE */
static uint64_t s_sig;               /* put-with-signal adds 1 per thread and sender */
static unsigned char s_slots[4][NT][SLOT];

static const long opts[NT] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE,
                              SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE};

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(opts[t], &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "thread %d: ctx_create", t);
  shmem_team_t team = SHMEM_TEAM_INVALID;
  CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "thread %d: ctx_get_team", t);
  unsigned char src[SLOT];
  for (int i = 0; i < SLOT; i++) src[i] = (unsigned char)(me * 16 + t * 3 + i);
  for (int k = 0; k < npes; k++) {
    int pe = (me + k) % npes;
    long last = -1;
    for (int i = 0; i < ITER; i++) {
      long v = i % 2 ? shmem_ctx_long_atomic_fetch_inc(ctx, &s_count, pe)
                     : shmem_atomic_fetch_add(ctx, &s_count, 1L, pe);
      CHECK(v > last, "thread %d: fetch_inc went back from %ld to %ld", t, last, v);
      last = v;
      if (i % 8 == 0) shmem_long_atomic_add(&s_count, 1, pe); /* the default context, concurrently */
    }
    shmem_ctx_putmem_signal_nbi(ctx, s_slots[me][t], src, SLOT, &s_sig, 1, SHMEM_SIGNAL_ADD, pe);
  }
  shmem_ctx_quiet(ctx);
  shmem_ctx_destroy(ctx);
  return NULL;
}

/* ---- spec example 1 (shmem_ctx.c): a task counter on every PE, drained by private per-thread contexts ---- */
#define NTASKS 1024
static long task_cntr;
static long total_done;

static void *task_worker(void *arg) {
  long *done = arg;
  shmem_ctx_t ctx;
  if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx)) shmem_global_exit(2);
  int task_pe = me, pes_done = 0;
  while (pes_done < npes) { /* all tasks of this PE first, then help the next one */
    long task = shmem_atomic_fetch_inc(ctx, &task_cntr, task_pe);
    while (task < NTASKS) {
      ++*done;
      task = shmem_atomic_fetch_inc(ctx, &task_cntr, task_pe);
    }
    pes_done++;
    task_pe = (task_pe + 1) % npes;
  }
  shmem_ctx_destroy(ctx);
  return NULL;
}

/* ---- spec example 2 (shmem_ctx_invalid.c): a library with one context per thread, DEFAULT as fallback ---- */
static _Thread_local shmem_ctx_t thread_ctx = SHMEM_CTX_INVALID;
static void lib_thread_register(void) {
  if (thread_ctx == SHMEM_CTX_INVALID)
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &thread_ctx) && shmem_ctx_create(0, &thread_ctx))
      thread_ctx = SHMEM_CTX_DEFAULT;
}
static void lib_thread_unregister(void) {
  if (thread_ctx != SHMEM_CTX_DEFAULT) {
    shmem_ctx_destroy(thread_ctx);
    thread_ctx = SHMEM_CTX_INVALID;
  }
}
#define LIB_COUNT 1024
static int *lib_dst[4];
static void *lib_worker(void *arg) {
  int t = (int)(intptr_t)arg;
  lib_thread_register();
  int *src = malloc(LIB_COUNT * sizeof(int));
  for (int j = 0; j < LIB_COUNT; j++) src[j] = (me << 10) + j;
  for (int pe = t; pe < npes; pe += NT) /* threads share the PEs out, as the example's omp for does */
    shmem_ctx_putmem(thread_ctx, lib_dst[me], src, LIB_COUNT * sizeof(int), pe);
  free(src);
  lib_thread_unregister();
  return NULL;
}

int main(void) {
  int provided = -1;
  if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided)) return 1;
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  {
    long *probe = shmem_malloc(sizeof(long));
    for (int p = 0; p < npes; p++)
      if (!shmem_ptr(probe, p)) ITER = 96; /* a multiple of 8: the add every 8th iteration */
    shmem_free(probe);
  }
  if (npes > 4) {
    shmem_finalize();
    return 77;
  }
  CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
  int q = -1;
  shmem_query_thread(&q);
  CHECK(q == SHMEM_THREAD_MULTIPLE, "query_thread %d", q);

  /* ---- semantics on this thread ---- */
  shmem_ctx_t c = (shmem_ctx_t)1;
  CHECK(shmem_ctx_create(1L << 20, &c) != 0 && c == SHMEM_CTX_INVALID, "unknown options must fail with INVALID");
  shmem_team_t team = (shmem_team_t)1;
  CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID, "get_team(INVALID)");
  CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD, "get_team(DEFAULT)");
  shmem_ctx_destroy(SHMEM_CTX_INVALID); /* a no-op */
  shmem_ctx_quiet(SHMEM_CTX_INVALID);   /* no-ops too (spec 1.5 9.11), on the handle a failed create leaves */
  shmem_ctx_fence(SHMEM_CTX_INVALID);
  shmem_ctx_quiet(c);
  shmem_ctx_fence(c);
  shmem_ctx_t many[64];
  for (int i = 0; i < 64; i++) CHECK(shmem_ctx_create(i % 8 == 7 ? 0 : (long)(i % 8), &many[i]) == 0, "create %d", i);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < i; j++) CHECK(many[i] != many[j], "contexts %d and %d share a handle", i, j);
  for (int i = 0; i < 64; i++) shmem_ctx_destroy(many[i]);
  shmem_ctx_t fresh;
  CHECK(shmem_ctx_create(0, &fresh) == 0, "create after destroy");
  for (int i = 0; i < 64; i++) CHECK(fresh != many[i], "a destroyed context's handle was reused");
  shmem_ctx_destroy(fresh);
  shmem_barrier_all();

  /* ---- concurrent threads ---- */
  pthread_t th[NT];
  for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  shmem_uint64_wait_until(&s_sig, SHMEM_CMP_EQ, (uint64_t)(npes * NT));
  shmem_barrier_all();
  long want = (long)npes * NT * (ITER + ITER / 8);
  CHECK(s_count == want, "count %ld, want %ld", s_count, want);
  for (int p = 0; p < npes; p++)
    for (int t = 0; t < NT; t++)
      for (int i = 0; i < SLOT; i++)
        if (s_slots[p][t][i] != (unsigned char)(p * 16 + t * 3 + i)) {
          CHECK(0, "slot of PE %d thread %d byte %d", p, t, i);
          break;
        }

  /* ---- spec example 1 ---- */
  shmem_barrier_all();
  long done[NT] = {0}, mine = 0;
  for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, task_worker, &done[t]);
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; t++) mine += done[t];
  shmem_long_atomic_add(&total_done, mine, 0);
  shmem_barrier_all();
  if (me == 0) CHECK(total_done == (long)NTASKS * npes, "tasks done %ld, want %ld", total_done, (long)NTASKS * npes);

  /* ---- spec example 2 ---- */
  for (int p = 0; p < npes; p++) lib_dst[p] = shmem_calloc(LIB_COUNT, sizeof(int));
  for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, lib_worker, (void *)(intptr_t)t);
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  shmem_barrier_all();
  for (int p = 0; p < npes; p++)
    for (int j = 0; j < LIB_COUNT; j++)
      if (lib_dst[p][j] != (p << 10) + j) {
        CHECK(0, "library example: lib_dst[%d][%d] = %d", p, j, lib_dst[p][j]);
        break;
      }
  for (int p = npes - 1; p >= 0; p--) shmem_free(lib_dst[p]);
  return ptest_finish("ctx_threads");
}
