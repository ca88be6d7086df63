/* gpu_bcast.cu - broadcast on device-heap buffers from the host (issue 16): shmem_broadcastmem and
 * shmem_TYPE_broadcast (blocking: the GPU kernel, then the completion) and shmemx_broadcastmem_on_stream /
 * shmemx_TYPE_broadcast_on_stream (enqueued; complete when the stream is), on SHMEM_TEAM_WORLD and on a split team
 * (even PEs, stride 2), from every root, aligned and unaligned sizes, in place on the root; every member's dest (the
 * root's included, spec 9.9.6) holds the root's source, the bytes around it and every non-member's buffer are
 * untouched. Needs no concurrent kernels (without MPS the runtime completes on the host). */
#include "gpu_test.h"

enum { F_MEM, F_INT, F_MEM_STREAM, F_LONG_STREAM, NFORMS };
static const char *const form_name[] = {"shmem_broadcastmem", "shmem_int_broadcast", "shmemx_broadcastmem_on_stream",
                                        "shmemx_long_broadcast_on_stream"};

static void bcast(int form, shmem_team_t team, char *dest, const char *source, size_t nbytes, int root,
                  gpuStream_t s) {
  switch (form) {
  case F_MEM: shmem_broadcastmem(team, dest, source, nbytes, root); break;
  case F_INT: shmem_int_broadcast(team, (int *)dest, (const int *)source, nbytes / sizeof(int), root); break;
  case F_MEM_STREAM: shmemx_broadcastmem_on_stream(team, dest, source, nbytes, root, s); break;
  default:
    shmemx_long_broadcast_on_stream(team, (long *)dest, (const long *)source, nbytes / sizeof(long), root, s);
    break;
  }
  if (form >= F_MEM_STREAM) GPU_OK(gpuStreamSynchronize(s));
}

int main(void) {
  t_start("gpu_bcast");
  shmem_team_t even = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (t_npes + 1) / 2, NULL, 0, &even);
  struct { shmem_team_t team; const char *name; int roots; } teams[] = {
    {SHMEM_TEAM_WORLD, "SHMEM_TEAM_WORLD", t_npes}, {even, "even PEs", (t_npes + 1) / 2}};
  gpuStream_t s;
  GPU_OK(gpuStreamCreate(&s));
  const size_t cap = (1 << 20) + 256, pad = 64;
  char *src = (char *)t_dmalloc(cap), *dst = (char *)t_dmalloc(cap), *h = (char *)malloc(cap);
  const size_t sizes[] = {8, 1000, 4096, (1 << 20) + 8}; /* multiples of 8: every typed form takes them */
  int round = 0;
  for (int ti = 0; ti < 2; ti++) {
    shmem_team_t team = teams[ti].team;
    const int r = team == SHMEM_TEAM_INVALID ? -1 : shmem_team_my_pe(team);
    for (int form = 0; form < NFORMS; form++)
      for (int root = 0; root < teams[ti].roots; root++)
        for (size_t nbytes : sizes)
          for (int inplace = 0; inplace < 2; inplace++, round++) {
            const int wroot = ti == 0 ? root : 2 * root; /* the root's world PE */
            char *d = dst + pad;
            for (size_t i = 0; i < nbytes; i++) h[i] = (char)t_pat(t_me, i, round);
            GPU_OK(gpuMemset(dst, T_POISON, cap));
            /* in place: the members' source is their dest (a non-member's dest must stay untouched) */
            GPU_OK(gpuMemcpy(inplace && r >= 0 ? d : src + pad, h, nbytes, gpuMemcpyDefault));
            GPU_OK(gpuDeviceSynchronize());
            shmem_barrier_all();
            if (r >= 0) bcast(form, team, d, inplace ? d : src + pad, nbytes, root, s); /* in place: (dest, dest) */
            shmem_barrier_all();
            GPU_OK(gpuMemcpy(h, dst, cap, gpuMemcpyDefault));
            size_t wrong = 0, outside = 0;
            for (size_t i = 0; i < cap; i++) {
              const bool in = r >= 0 && i >= pad && i < pad + nbytes;
              if (in) wrong += h[i] != (char)t_pat(wroot, i - pad, round);
              else outside += h[i] != (char)T_POISON;
            }
            CHECK(wrong == 0 && outside == 0, "%s(%s, %zu bytes, root %d%s), team rank %d: %zu wrong bytes of dest, "
                  "%zu bytes changed outside it", form_name[form], teams[ti].name, nbytes, root,
                  inplace ? ", in place" : "", r, wrong, outside);
          }
  }
  if (t_me == 0) printf("gpu_bcast: %d rounds\n", round);
  if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
  GPU_OK(gpuStreamDestroy(s));
  free(h);
  return t_finish("gpu_bcast");
}
