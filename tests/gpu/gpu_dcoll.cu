/* gpu_dcoll.cu - the device-side collectives on any team (issue 16): shmemx_fcollectmem_block,
 * shmemx_alltoallmem_block, shmemx_broadcastmem_block / shmemx_int_broadcast_block (every root) on SHMEM_TEAM_WORLD,
 * SHMEM_TEAM_SHARED and a split team (even PEs, stride 2), values checked on the members and the non-members' dest
 * untouched; then the team barriers in kernels (shmem_team_sync, shmemx_team_sync_warp/_block, shmemx_barrier,
 * shmemx_barrier_warp/_block) on the split team and on WORLD: a value one member stores into every other member's
 * variable before the barrier is seen by each of them after it, for every writer in turn.
 *
 *   gpu_dcoll [forms]        the collectives need every member's kernel running at once: at 1 PE always, at more only
 *                            with `forms` (scripts/gpu-tests.sh passes it under MPS)
 *   gpu_dcoll badteam|badroot   a block collective on SHMEM_TEAM_INVALID / PE_root out of range: the kernel stops
 *                            with one line (shoal: PE n: shmemx_fcollectmem_block: team ... / ...: PE_root ...)
 * Then the block reductions on the same teams: long sum, double max, unsigned int xor of 9001 elements (three of the
 * far path's tiles), each also in place (dest == source), with a block size that differs between PEs (128, 256 or
 * 512 threads); then, in one kernel, a reduction and right after it an fcollect into the same dest (no barrier
 * between: the reduction's last stores must not land after the fcollect's), every element checked.
 * Every PE its own node (SHOAL_NODE_PES=1 over ofi; scripts/gpu-tests.sh's far runs): the same checks, the
 * collectives, reductions and barriers reaching the other members through the proxy (issue 31). */
#include "gpu_test.h"
#include <shoal/shmem_coll_device.cuh>

enum { OP_FCOLLECT, OP_ALLTOALL, OP_BCAST, OP_BCAST_INT };
static const char *const op_name[] = {"shmemx_fcollectmem_block", "shmemx_alltoallmem_block",
                                      "shmemx_broadcastmem_block", "shmemx_int_broadcast_block"};

__global__ void k_coll(int op, shmem_team_t team, char *dest, const char *source, size_t nbytes, int root) {
  if (blockIdx.x) return; /* ONE block per PE */
  switch (op) {
  case OP_FCOLLECT: shmemx_fcollectmem_block(team, dest, source, nbytes); break;
  case OP_ALLTOALL: shmemx_alltoallmem_block(team, dest, source, nbytes); break;
  case OP_BCAST: shmemx_broadcastmem_block(team, dest, source, nbytes, root); break;
  default: shmemx_int_broadcast_block(team, (int *)dest, (const int *)source, nbytes / sizeof(int), root); break;
  }
}

enum { F_SYNC, F_SYNC_WARP, F_SYNC_BLOCK, F_BAR, F_BAR_WARP, F_BAR_BLOCK, NFORMS };
static const char *const form_name[] = {"shmem_team_sync", "shmemx_team_sync_warp", "shmemx_team_sync_block",
                                        "shmemx_barrier", "shmemx_barrier_warp", "shmemx_barrier_block"};
__device__ void team_bar(int form, shmem_team_t team) {
  const bool t0 = threadIdx.x == 0, w0 = threadIdx.x < (unsigned)warpSize;
  switch (form) {
  case F_SYNC: if (t0) shmem_team_sync(team); break;
  case F_SYNC_WARP: if (w0) shmemx_team_sync_warp(team); break;
  case F_SYNC_BLOCK: shmemx_team_sync_block(team); break;
  case F_BAR: if (t0) shmemx_barrier(team); break;
  case F_BAR_WARP: if (w0) shmemx_barrier_warp(team); break;
  default: shmemx_barrier_block(team); break;
  }
  __syncthreads();
}
/* Round r: member r % n stores 1000 r + 7 into var on every other member, barrier, every other member reads it. */
__global__ void k_bar(int form, shmem_team_t team, int *var, int rounds, int *seen) {
  const int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
  for (int r = 0; r < rounds; r++) {
    if (threadIdx.x == 0 && me == r % n)
      for (int m = 0; m < n; m++)
        if (m != me) shmem_int_p(var, 1000 * r + 7, shmem_team_translate_pe(team, m, SHMEM_TEAM_WORLD));
    team_bar(form, team);
    if (threadIdx.x == 0) seen[r] = me == r % n ? 1000 * r + 7 : *(volatile int *)var;
    team_bar(form, team); /* the next round's stores after every read */
  }
}

__global__ void k_bad(int mode, char *dest, const char *source) {
  if (mode == 0) shmemx_fcollectmem_block(SHMEM_TEAM_INVALID, dest, source, 16);
  else shmemx_broadcastmem_block(SHMEM_TEAM_WORLD, dest, source, 16, shmem_n_pes());
}

enum { R_LONG_SUM, R_DOUBLE_MAX, R_UINT_XOR, NRED };
static const char *const red_name[] = {"shmemx_long_sum_reduce_block", "shmemx_double_max_reduce_block",
                                       "shmemx_uint_xor_reduce_block"};
__global__ void k_red(int op, shmem_team_t team, void *dest, const void *source, size_t n) {
  if (blockIdx.x) return;
  switch (op) {
  case R_LONG_SUM: shmemx_long_sum_reduce_block(team, (long *)dest, (const long *)source, n); break;
  case R_DOUBLE_MAX: shmemx_double_max_reduce_block(team, (double *)dest, (const double *)source, n); break;
  default: shmemx_uint_xor_reduce_block(team, (unsigned *)dest, (const unsigned *)source, n); break;
  }
}
__global__ void k_redcoll(shmem_team_t team, char *dest, const long *source, size_t n, const char *fsrc, size_t nb) {
  if (blockIdx.x) return;
  shmemx_long_sum_reduce_block(team, (long *)dest, source, n);
  shmemx_fcollectmem_block(team, dest, fsrc, nb);
}
/* element i of world PE pe's source, as the op's type's bits in a long (exact in a double) */
static long red_in(int op, int pe, size_t i) {
  return op == R_LONG_SUM ? (long)pe * 100003 + (long)i : op == R_DOUBLE_MAX ? ((long)i * 7 + pe * 13) % 1000 - 500
                                                                              : (long)((pe + 1) * 2654435761u ^ i);
}

/* Expected byte i of member r's dest (n members, nb bytes per block): source patterns of t_pat(world pe, index, op). */
static char expect(int op, int r, size_t i, size_t nb, int root, const int *world) {
  if (op == OP_FCOLLECT) return (char)t_pat(world[i / nb], i % nb, op);
  if (op == OP_ALLTOALL) return (char)t_pat(world[i / nb], (size_t)r * nb + i % nb, op);
  return (char)t_pat(world[root], i, op);
}

/* GPU_DCOLL_TRACE=1: each PE names each step on stderr before it (where a run that hangs stopped) */
static bool trace;
#define STEP(...)                                                                                                      \
  do {                                                                                                                 \
    if (trace) {                                                                                                       \
      fprintf(stderr, "gpu_dcoll: PE %d: ", t_me);                                                                     \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  t_start("gpu_dcoll");
  trace = getenv("GPU_DCOLL_TRACE") != NULL;
  if (argc > 1 && (!strcmp(argv[1], "badteam") || !strcmp(argv[1], "badroot"))) {
    char *b = (char *)t_dmalloc(64 * t_npes);
    LAUNCH_SYNC(k_bad<<<1, 32>>>(!strcmp(argv[1], "badroot"), b, b + 32 * t_npes));
    return t_finish("gpu_dcoll"); /* not reached: the kernel traps */
  }
  const bool forms = t_npes == 1 || (argc > 1 && !strcmp(argv[1], "forms"));
  shmem_team_t even = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (t_npes + 1) / 2, NULL, 0, &even);
  struct { shmem_team_t team; const char *name; } teams[] = {
    {SHMEM_TEAM_WORLD, "SHMEM_TEAM_WORLD"}, {SHMEM_TEAM_SHARED, "SHMEM_TEAM_SHARED"}, {even, "even PEs"}};
  /* bytes per block: 1024 (16-byte path) and 1000 at offset 4 (byte path); int multiples for the typed form */
  const size_t nb = 1000, cap = 1024 * (size_t)t_npes + 64;
  char *src = (char *)t_dmalloc(cap), *dst = (char *)t_dmalloc(cap), *h = (char *)malloc(cap);
  int *team_n = (int *)shmem_malloc(2 * sizeof(int)), *team_nmax = team_n + 1;
  for (int ti = 0; forms && ti < 3; ti++) {
    shmem_team_t team = teams[ti].team;
    /* every PE takes part in the host barriers; members of team also in the kernel */
    const int n = team == SHMEM_TEAM_INVALID ? 0 : shmem_team_n_pes(team), r = team == SHMEM_TEAM_INVALID ? -1 :
                  shmem_team_my_pe(team);
    int world[4096];
    for (int m = 0; m < n; m++) world[m] = shmem_team_translate_pe(team, m, SHMEM_TEAM_WORLD);
    /* The same on every PE, so that the host barriers below match: SHMEM_TEAM_SHARED's size differs between nodes of
     * different sizes (nodes of two at 5 PEs: 2, 2, 1), so every PE loops over the largest team's roots, and a member
     * of a smaller team only meets the others' barriers for a root it does not have. */
    *team_n = n;
    shmem_int_max_reduce(SHMEM_TEAM_WORLD, team_nmax, team_n, 1);
    const int roots = ti == 2 ? (t_npes + 1) / 2 : *team_nmax;
    for (int op = 0; op < 4; op++)
      for (int root = 0; root < (op >= OP_BCAST ? roots : 1); root++)
        for (int shift = 0; shift < 2; shift++) { /* 16-byte aligned source and dest, then both off by 4 */
          if (r >= 0 && root >= n) { /* no such root in this PE's team (SHARED on a smaller node) */
            shmem_barrier_all();
            shmem_barrier_all();
            continue;
          }
          const size_t off = shift ? 4 : 0, nbytes = shift ? nb : 1024;
          const size_t srcn = op == OP_ALLTOALL ? nbytes * (n ? n : 1) : nbytes;
          const size_t dstn = op >= OP_BCAST ? nbytes : nbytes * (n ? n : 1);
          for (size_t i = 0; i < srcn; i++) h[i] = (char)t_pat(t_me, i, op);
          GPU_OK(gpuMemcpy(src + off, h, srcn, gpuMemcpyDefault));
          GPU_OK(gpuMemset(dst, T_POISON, cap));
          GPU_OK(gpuDeviceSynchronize());
          shmem_barrier_all();
          STEP("%s(%s) root %d shift %d", op_name[op], teams[ti].name, root, shift);
          if (r >= 0) LAUNCH_SYNC(k_coll<<<1, 256>>>(op, team, dst + off, src + off, nbytes, root));
          shmem_barrier_all();
          GPU_OK(gpuMemcpy(h, dst, cap, gpuMemcpyDefault));
          int wrong = 0, past = 0;
          if (r >= 0)
            for (size_t i = 0; i < dstn; i++) wrong += h[off + i] != expect(op, r, i, nbytes, root, world);
          for (size_t i = 0; i < cap; i++) /* outside the result (everything on a non-member) stays poisoned */
            if (r < 0 || i < off || i >= off + dstn) past += h[i] != (char)T_POISON;
          CHECK(wrong == 0 && past == 0, "%s(%s, %zu bytes, root %d, shift %zu), team rank %d: %d wrong bytes, %d "
                "bytes changed outside dest", op_name[op], teams[ti].name, nbytes, root, off, r, wrong, past);
        }
  }
  /* block reductions: every team, three types and ops, out of place and in place */
  enum { RN = 9001 };
  char *rs = (char *)t_dmalloc(RN * 8), *rd = (char *)t_dmalloc(RN * 8), *rh = (char *)malloc(RN * 8);
  for (int ti = 0; forms && ti < 3; ti++) {
    shmem_team_t team = teams[ti].team;
    const int n = team == SHMEM_TEAM_INVALID ? 0 : shmem_team_n_pes(team);
    for (int op = 0; op < NRED; op++)
      for (int inplace = 0; inplace < 2; inplace++) {
        const size_t es = op == R_UINT_XOR ? 4 : 8;
        for (size_t i = 0; i < RN; i++) {
          const long v = red_in(op, t_me, i);
          if (op == R_LONG_SUM) ((long *)rh)[i] = v;
          else if (op == R_DOUBLE_MAX) ((double *)rh)[i] = (double)v;
          else ((unsigned *)rh)[i] = (unsigned)v;
        }
        GPU_OK(gpuMemcpy(rs, rh, RN * es, gpuMemcpyDefault));
        GPU_OK(gpuMemset(rd, T_POISON, RN * 8));
        GPU_OK(gpuDeviceSynchronize());
        shmem_barrier_all();
        char *out = inplace ? rs : rd;
        STEP("%s(%s) %s", red_name[op], teams[ti].name, inplace ? "in place" : "out of place");
        if (n) LAUNCH_SYNC(k_red<<<1, 128 << (t_me % 3)>>>(op, team, out, rs, RN));
        shmem_barrier_all();
        if (!n) continue;
        GPU_OK(gpuMemcpy(rh, out, RN * es, gpuMemcpyDefault));
        int wrong = 0;
        size_t first = 0;
        for (size_t i = 0; i < RN; i++) {
          long want = 0;
          for (int m = 0; m < n; m++) {
            const long v = red_in(op, shmem_team_translate_pe(team, m, SHMEM_TEAM_WORLD), i);
            want = op == R_LONG_SUM ? want + v : op == R_DOUBLE_MAX ? (m == 0 || v > want ? v : want) : (m ? want ^ v : v);
          }
          const bool ok = op == R_LONG_SUM ? ((long *)rh)[i] == want
                        : op == R_DOUBLE_MAX ? ((double *)rh)[i] == (double)want : ((unsigned *)rh)[i] == (unsigned)want;
          if (!ok && !wrong++) first = i;
        }
        CHECK(wrong == 0, "%s(%s, %d elements, %s): %d wrong elements, the first at %zu", red_name[op],
              teams[ti].name, (int)RN, inplace ? "in place" : "out of place", wrong, first);
      }
    /* a reduction, then at once an fcollect of 1024 bytes per member into the same dest */
    for (size_t i = 0; i < RN; i++) ((long *)rh)[i] = red_in(R_LONG_SUM, t_me, i);
    GPU_OK(gpuMemcpy(rs, rh, RN * 8, gpuMemcpyDefault));
    for (size_t i = 0; i < 1024; i++) h[i] = (char)t_pat(t_me, i, 9);
    GPU_OK(gpuMemcpy(src, h, 1024, gpuMemcpyDefault));
    GPU_OK(gpuMemset(rd, T_POISON, RN * 8));
    GPU_OK(gpuDeviceSynchronize());
    shmem_barrier_all();
    STEP("reduce then fcollect (%s)", teams[ti].name);
    if (n) LAUNCH_SYNC(k_redcoll<<<1, 128 << (t_me % 3)>>>(team, rd, (const long *)rs, RN, src, 1024));
    shmem_barrier_all();
    if (!n) continue;
    GPU_OK(gpuMemcpy(rh, rd, RN * 8, gpuMemcpyDefault));
    int wrong = 0;
    for (size_t b = 0; b < (size_t)n * 1024; b++)
      wrong += rh[b] != (char)t_pat(shmem_team_translate_pe(team, (int)(b / 1024), SHMEM_TEAM_WORLD), b % 1024, 9);
    for (size_t i = (size_t)n * 1024 / 8; i < RN; i++) {
      long want = 0;
      for (int m = 0; m < n; m++) want += red_in(R_LONG_SUM, shmem_team_translate_pe(team, m, SHMEM_TEAM_WORLD), i);
      wrong += ((long *)rh)[i] != want;
    }
    CHECK(wrong == 0, "shmemx_long_sum_reduce_block then shmemx_fcollectmem_block into one dest (%s): %d wrong "
          "bytes or elements", teams[ti].name, wrong);
  }
  /* team barriers: on the split team (its members only) and on WORLD */
  int *var = (int *)t_dmalloc(sizeof(int)), *seen = NULL;
  enum { ROUNDS = 9 };
  GPU_OK(gpuMalloc((void **)&seen, ROUNDS * sizeof(int)));
  for (int ti = 2; forms && ti >= 0; ti -= 2) { /* the split team, then WORLD */
    shmem_team_t team = teams[ti].team;
    const char *tname = teams[ti].name;
    for (int f = 0; f < NFORMS; f++) {
      GPU_OK(gpuMemset(var, 0, sizeof(int)));
      GPU_OK(gpuMemset(seen, 0, ROUNDS * sizeof(int)));
      GPU_OK(gpuDeviceSynchronize());
      shmem_barrier_all();
      STEP("%s(%s)", form_name[f], tname);
      if (team != SHMEM_TEAM_INVALID) LAUNCH_SYNC(k_bar<<<1, 64>>>(f, team, var, ROUNDS, seen));
      shmem_barrier_all();
      int got[ROUNDS];
      GPU_OK(gpuMemcpy(got, seen, sizeof got, gpuMemcpyDefault));
      for (int r = 0; team != SHMEM_TEAM_INVALID && r < ROUNDS; r++)
        CHECK(got[r] == 1000 * r + 7, "%s(%s): round %d: team rank %d saw %d after the barrier, not %d",
              form_name[f], tname, r, shmem_team_my_pe(team), got[r], 1000 * r + 7);
    }
  }
  if (t_me == 0) printf("gpu_dcoll: device collectives and team barriers %s\n", forms ? "checked" : "not run (no `forms`)");
  if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
  free(h);
  return t_finish("gpu_dcoll");
}
