/* gpu_teams.cu - team handles in device code (issue 14): SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, SHMEM_TEAM_INVALID and
 * a team split on the host, passed to a kernel as a shmem_team_t: shmem_team_my_pe, shmem_team_n_pes and
 * shmem_team_translate_pe in the kernel must give what the host calls give (a destroyed team: -1). Then the usage of
 * <shoal/shmem_coll_device.cuh>: shmemx_fcollectmem_block / shmemx_alltoallmem_block(SHMEM_TEAM_WORLD, ...) in a
 * kernel, values checked. The block collectives need every PE's kernel running at once: at 1 PE always, at more
 * only with the argument `forms` (scripts/gpu-tests.sh passes it under MPS). */
#include "gpu_test.h"
#include <shoal/shmem_coll_device.cuh>

enum { Q = 12 };
__global__ void k_teams(shmem_team_t world_from_host, shmem_team_t split, int *out) {
  out[0] = shmem_team_my_pe(SHMEM_TEAM_WORLD);
  out[1] = shmem_team_n_pes(SHMEM_TEAM_WORLD);
  out[2] = shmem_team_my_pe(SHMEM_TEAM_SHARED);
  out[3] = shmem_team_n_pes(SHMEM_TEAM_SHARED);
  out[4] = shmem_team_my_pe(split);
  out[5] = shmem_team_n_pes(split);
  out[6] = shmem_team_translate_pe(split, 0, SHMEM_TEAM_WORLD);
  out[7] = shmem_team_translate_pe(SHMEM_TEAM_WORLD, shmem_my_pe(), split);
  out[8] = SHMEM_TEAM_WORLD == world_from_host && SHMEM_TEAM_SHARED != SHMEM_TEAM_WORLD;
  out[9] = shmem_team_my_pe(SHMEM_TEAM_INVALID);
  out[10] = shmem_team_n_pes(SHMEM_TEAM_INVALID);
  out[11] = shmem_team_translate_pe(SHMEM_TEAM_WORLD, shmem_n_pes(), SHMEM_TEAM_WORLD); /* out of range */
}

__global__ void k_forms(int op, char *dest, const char *source, size_t nelems) {
  if (blockIdx.x) return; /* ONE block per PE */
  if (op)
    shmemx_alltoallmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);
  else
    shmemx_fcollectmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);
}

static void host_expect(shmem_team_t split, int *e) {
  e[0] = shmem_team_my_pe(SHMEM_TEAM_WORLD);
  e[1] = shmem_team_n_pes(SHMEM_TEAM_WORLD);
  e[2] = shmem_team_my_pe(SHMEM_TEAM_SHARED);
  e[3] = shmem_team_n_pes(SHMEM_TEAM_SHARED);
  e[4] = shmem_team_my_pe(split);
  e[5] = shmem_team_n_pes(split);
  e[6] = shmem_team_translate_pe(split, 0, SHMEM_TEAM_WORLD);
  e[7] = shmem_team_translate_pe(SHMEM_TEAM_WORLD, t_me, split);
  e[8] = 1;
  e[9] = e[10] = e[11] = -1;
}

static void check_teams(shmem_team_t split, int *dout, const char *what) {
  int got[Q], exp[Q];
  host_expect(split, exp);
  GPU_OK(gpuMemset(dout, 0x55, Q * sizeof(int)));
  LAUNCH_SYNC(k_teams<<<1, 1>>>(SHMEM_TEAM_WORLD, split, dout));
  GPU_OK(gpuMemcpy(got, dout, sizeof got, gpuMemcpyDefault));
  for (int i = 0; i < Q; i++)
    CHECK(got[i] == exp[i], "%s: query %d in the kernel gave %d, the host %d", what, i, got[i], exp[i]);
}

int main(int argc, char **argv) {
  t_start("gpu_teams");
  int *dout = NULL;
  GPU_OK(gpuMalloc((void **)&dout, Q * sizeof(int)));
  int start = t_npes > 1 ? 1 : 0, size = (t_npes - start + 1) / 2; /* odd PEs (or PE 0 alone) */
  shmem_team_t split = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &split);
  check_teams(split, dout, "split team");
  shmem_team_t split2 = SHMEM_TEAM_INVALID; /* a second one: another slot of the device table */
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, t_npes, NULL, 0, &split2);
  check_teams(split2, dout, "copy of WORLD");
  shmem_team_t old = split;
  shmem_team_destroy(split);
  shmem_barrier_all();
  int got[Q];
  LAUNCH_SYNC(k_teams<<<1, 1>>>(SHMEM_TEAM_WORLD, old, dout));
  GPU_OK(gpuMemcpy(got, dout, sizeof got, gpuMemcpyDefault));
  CHECK(got[4] == -1 && got[5] == -1, "a destroyed team in the kernel: my_pe %d, n_pes %d, expected -1, -1", got[4],
        got[5]);
  shmem_team_destroy(split2);

  bool forms = t_npes == 1 || (argc > 1 && !strcmp(argv[1], "forms"));
  const size_t n = 1000; /* bytes per PE */
  char *src = (char *)t_dmalloc(n * t_npes), *dst = (char *)t_dmalloc(n * t_npes);
  char *h = (char *)malloc(n * t_npes);
  for (int op = 0; forms && op < 2; op++) {
    for (size_t i = 0; i < n * t_npes; i++) h[i] = (char)t_pat(t_me, i, op);
    GPU_OK(gpuMemcpy(src, h, n * t_npes, gpuMemcpyDefault));
    GPU_OK(gpuMemset(dst, T_POISON, n * t_npes));
    GPU_OK(gpuDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_SYNC(k_forms<<<1, 256>>>(op, dst, src, n));
    shmem_barrier_all();
    GPU_OK(gpuMemcpy(h, dst, n * t_npes, gpuMemcpyDefault));
    int wrong = 0;
    for (int r = 0; r < t_npes; r++)
      for (size_t i = 0; i < n; i++) /* fcollect: r's first n bytes; alltoall: r's block number t_me */
        wrong += h[r * n + i] != (char)t_pat(r, (op ? (size_t)t_me * n : 0) + i, op);
    CHECK(wrong == 0, "%s_block(SHMEM_TEAM_WORLD): %d wrong bytes of %zu", op ? "shmemx_alltoallmem" :
          "shmemx_fcollectmem", wrong, n * t_npes);
  }
  if (t_me == 0) printf("gpu_teams: device collectives %s\n", forms ? "checked" : "not run (no `forms` argument)");
  free(h);
  return t_finish("gpu_teams");
}
