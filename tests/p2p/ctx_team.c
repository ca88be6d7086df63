/* ctx_team.c - a context made on a team (shmem_team_create_ctx) takes team PE numbers in AMOs and put-with-signal:
 * the odd-numbered world PEs form a team in reverse order, and team PE i of the context must reach world PE
 * 2 * (n - 1 - i) + 1 (RMA too: p, g, putmem on the context). shmem_ctx_get_team returns that team; a team PE out of range stops the job (fatal.c). */
#include "ptest.h"

static int counter[64];   /* counter[w]: AMOs meant for world PE w, counted on world PE w */
static uint64_t sig;
static long data;

static long rmaslot[256], ident; /* RMA through the team context: slot[w] written by world PE w; ident = world PE */

int main(void) {
  shmem_init();
  ptest_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  ident = me;
  shmem_barrier_all();
  int nodd = npes / 2;
  shmem_team_t odd = SHMEM_TEAM_INVALID;
  /* members: the odd world PEs, last first (stride -2) */
  int rc = nodd ? shmem_team_split_strided(SHMEM_TEAM_WORLD, 2 * nodd - 1, nodd > 1 ? -2 : 1, nodd, NULL, 0, &odd) : 0;
  CHECK(rc == 0, "split_strided returned %d", rc);
  if (odd != SHMEM_TEAM_INVALID) {
    shmem_ctx_t ctx;
    CHECK(shmem_team_create_ctx(odd, 0, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "team_create_ctx");
    shmem_team_t t = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(ctx, &t) == 0 && t == odd, "ctx_get_team on a team context");
    for (int i = 0; i < nodd; i++) {
      int world = 2 * (nodd - 1 - i) + 1;
      shmem_ctx_int_atomic_add(ctx, &counter[world], i + 1, i); /* team PE i */
      long v = 100 + i;
      shmem_ctx_putmem_signal(ctx, &data, &v, sizeof v, &sig, 1, SHMEM_SIGNAL_ADD, i);
      shmem_ctx_long_p(ctx, &rmaslot[me], 1000 + me, i);
      long w = shmem_ctx_long_g(ctx, &ident, i), got = -1;
      CHECK(w == world, "ctx_long_g from team PE %d: world PE %ld, want %d", i, w, world);
      shmem_ctx_getmem(ctx, &got, &ident, sizeof got, i);
      CHECK(got == world, "ctx_getmem from team PE %d: world PE %ld, want %d", i, got, world);
    }
    shmem_ctx_quiet(ctx);
    int tme = shmem_team_my_pe(odd);
    shmem_uint64_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)nodd);
    CHECK(data == 100 + tme, "put_signal on the team context: data %ld, want %d", data, 100 + tme);
    shmem_ctx_destroy(ctx);
  }
  shmem_barrier_all();
  for (int w = 0; w < npes && w < 256; w++) {
    long rwant = (me % 2 && me < 2 * nodd && w % 2 && w < 2 * nodd) ? 1000 + w : 0;
    CHECK(rmaslot[w] == rwant, "world PE %d: rmaslot[%d] = %ld, want %ld", me, w, rmaslot[w], rwant);
  }
  int want = me % 2 && me < 2 * nodd ? nodd * (shmem_team_my_pe(odd) + 1) : 0;
  CHECK(counter[me] == want, "world PE %d: counter %d, want %d", me, counter[me], want);
  if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);
  return ptest_finish("ctx_team");
}
