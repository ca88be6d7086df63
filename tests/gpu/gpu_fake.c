/* gpu_fake.c - the device heap (runtime/heap_gpu.c) on any machine: a fake backend whose "device memory" is a memfd
 * mapped by every PE (IPC handle = pid and descriptor, or the descriptor itself sent over the bootstrap's sockets:
 * the share_* slots, SHOAL_GPU_HEAP_MAP=vmm, the default), copies are memcpy and AMOs host atomics. It checks
 * what the real backends rely on: the device heap exchange and peer table (state deltas reach each peer's heap),
 * allocation routing (SHMEMX_MALLOC_DEVICE, SHOAL_HEAP=device), exhaustion, host RMA through the space's put/get
 * (contiguous, strided, typed), the _on_stream forms, the barrier fallback, host AMOs, calloc/realloc/free, and the
 * GPU collectives' per-team state set up at a split (issue 16). */
#include "coll_core.h"
#include "heap_gpu.h"

#include "gpu_fake_backend.h"

static int fails, me;

#define N 10007

/* A device-API unit registered without nvcc (issue 32): fills declared in C, as the headers declare theirs. Mode
 * unit_legacy[_late]: through shmemx_device_state_register (programs built with the older headers), before shmem_init
 * or after it; unit_required: through shmemx_device_unit_register with flags 0, on the PEs FAKE_UNIT_PES names
 * (all when unset). FAKE_FILL_FAIL: the fills fail. Prints what the PE saw, if shmem_init returned. */
static int fills;
static int legacy_fill(void) { return fills++, getenv("FAKE_FILL_FAIL") ? -1 : 0; }
static int why_fill(char *why, size_t len) {
  fills++;
  if (!getenv("FAKE_FILL_FAIL")) return 0;
  snprintf(why, len, "fake fill failed");
  return -1;
}
static int unit_mode(const char *mode) {
  bool late = !strcmp(mode, "unit_legacy_late"), req = !strcmp(mode, "unit_required");
  int rc = 0;
  if (req && (!getenv("FAKE_UNIT_PES") || pe_listed("FAKE_UNIT_PES"))) rc = shmemx_device_unit_register(why_fill, 0);
  else if (!req && !late) rc = shmemx_device_state_register(legacy_fill);
  shmem_init();
  if (late) rc = shmemx_device_state_register(legacy_fill);
  printf("gpu_fake: PE %d: %s: register %d, gpu %d, %d fill(s)\n", shmem_my_pe(), mode, rc, shmemx_gpu_available(),
         fills);
  shmem_finalize();
  return 0;
}

int main(int argc, char **argv) {
  setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "16M", 1);
  shoal_gpu_test_backend = &fake;
  if (argc > 1 && !strncmp(argv[1], "unit_", 5)) return unit_mode(argv[1]);
  shmem_init();
  me = shmem_my_pe();
  int n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
  const char *hk = getenv("SHOAL_HEAP");
  bool dev_default = hk && !strcmp(hk, "device");
  CHECK(shmemx_gpu_available() == 1, "fake GPU not in use");
  const char *hm = getenv("SHOAL_GPU_HEAP_MAP");
  const int want_share = !(hm && !strcmp(hm, "ipc")); /* auto and vmm: the descriptor path */
  CHECK(share_allocs == want_share, "SHOAL_GPU_HEAP_MAP=%s: %d share_alloc calls", hm ? hm : "(unset)", share_allocs);
  /* IPC handles when asked, or (auto) when sharing by descriptor failed */
  const int want_ipc = !want_share || getenv("FAKE_SHARE_ALLOC_FAIL") != NULL;
  CHECK(ipc_gets == want_ipc, "%d ipc_get calls, expected %d", ipc_gets, want_ipc);
  size_t total, largest;
  shmemx_device_heap_info(&total, &largest);
  CHECK(total == (size_t)16 << 20 && largest == total, "heap %zu / %zu", total, largest);

  unsigned char *d = shmem_malloc_with_hints(N, SHMEMX_MALLOC_DEVICE), *h = shmem_malloc(N);
  CHECK(shoal_gpu_heap_owns(d), "SHMEMX_MALLOC_DEVICE gave %p outside the device heap", (void *)d);
  /* Bad input (must stop with a one-line error): collectives that would store into device memory from the CPU. */
  if (argc > 1 && !strcmp(argv[1], "mixed_fcollect")) shmem_fcollectmem(SHMEM_TEAM_WORLD, d, h, 8);
  if (argc > 1 && !strcmp(argv[1], "bcast_device")) shmem_broadcastmem(SHMEM_TEAM_WORLD, d, d + N / 2, 8, 0);
  if (argc > 1 && !strcmp(argv[1], "mixed_bcast")) shmem_broadcastmem(SHMEM_TEAM_WORLD, d, h, 8, 0);
  if (argc > 1 && !strcmp(argv[1], "bcast_root")) shmem_broadcastmem(SHMEM_TEAM_WORLD, d, d + N / 2, 8, n);
  if (argc > 1 && !strcmp(argv[1], "bcast_stream_root"))
    shmemx_broadcastmem_on_stream(SHMEM_TEAM_WORLD, d, d + N / 2, 8, -1, NULL);
  if (argc > 1 && !strcmp(argv[1], "bcast_stream_mixed"))
    shmemx_int_broadcast_on_stream(SHMEM_TEAM_WORLD, (int *)h, (int *)d, 2, 0, NULL);
  if (argc > 1 && !strcmp(argv[1], "reduce_device")) shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)h, (long *)d, 4);
  /* reductions on device buffers (issue 16): the GPU path's argument checks, before any kernel */
  if (argc > 1 && !strcmp(argv[1], "reduce_mixed_stream"))
    shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, (float *)d, (float *)h, 4, NULL);
  if (argc > 1 && !strcmp(argv[1], "reduce_ldbl"))
    shmem_longdouble_max_reduce(SHMEM_TEAM_WORLD, (long double *)d, (long double *)(d + N / 2), 2);
  if (argc > 1 && !strcmp(argv[1], "reduce_overlap")) shmem_int_sum_reduce(SHMEM_TEAM_WORLD, (int *)d, (int *)d + 1, 8);
  if (argc > 1 && !strcmp(argv[1], "reduce_past_end"))
    shmemx_half_sum_reduce_on_stream(SHMEM_TEAM_WORLD, (shmemx_half_t *)d, (shmemx_half_t *)d, total, NULL);
  if (argc > 1 && !strcmp(argv[1], "reduce_misaligned"))
    shmem_double_sum_reduce(SHMEM_TEAM_WORLD, (double *)d, (double *)(d + 68), 4);
  if (argc > 1 && !strcmp(argv[1], "reduce_no_kernels")) /* a good call: the fake GPU cannot launch (or no kernels) */
    shmem_double_sum_reduce(SHMEM_TEAM_WORLD, (double *)d, (double *)(d + 64), 4);
  if (argc > 1 && !strcmp(argv[1], "alltoalls_device")) shmem_alltoallsmem(SHMEM_TEAM_WORLD, d, d + N / 2, 2, 1, 4);
  if (argc > 1 && !strcmp(argv[1], "fetch_device")) /* the fetched value would be stored by the CPU into device memory */
    shmem_long_atomic_fetch_nbi((long *)d, (long *)h, next);
  if (argc > 1) {
    fprintf(stderr, "gpu_fake: mode %s was not refused\n", argv[1]);
    return 1;
  }
  CHECK(shoal_gpu_heap_owns(h) == dev_default, "shmem_malloc with SHOAL_HEAP=%s", hk ? hk : "(unset)");
  CHECK(shmem_ptr(d, next) == NULL, "shmem_ptr of device memory");

  /* the device state: heap_base + delta[p] is p's heap mapped here, where p's writes land */
  shmemx_device_state_t st;
  CHECK(shmemx_device_state_get(&st, sizeof st) == 0, "state");
  CHECK(st.n_pes == n && st.my_pe == me && st.pes_per_gpu == n, "state PE %d/%d, %d per GPU", st.my_pe, st.n_pes,
        st.pes_per_gpu);
  CHECK((char *)d >= st.heap_base && (char *)d + N <= st.heap_base + st.heap_size, "d outside state heap");
  CHECK(st.peer_delta && !memcmp(st.peer_delta, st.delta, sizeof(int64_t) * (size_t)n), "device copy of the table");
  memset(d, me + 1, N); /* our "device" memory is host memory here */
  shmem_barrier_all();
  for (int p = 0; p < n; p++) {
    unsigned char *q = d + st.delta[p];
    int bad = 0;
    for (int i = 0; i < N; i++) bad += q[i] != p + 1;
    CHECK(!bad, "delta[%d] does not reach PE %d's heap (%d bytes)", p, p, bad);
  }
  shmem_barrier_all();

  /* The GPU collectives' team state (issue 16) is set up when a team is created, not at its first collective: a split
   * team's slot has its members' heap bases (by team rank), clean flag rows and epochs, and kernels find the slot from
   * the handle; a destroyed team's slot, dirtied, is clean again for the next team on it. */
  shmemx_coll_device_info_t ci;
#ifndef SHOAL_HAVE_COLL_GPU
#define SHOAL_HAVE_COLL_GPU 0
#endif
  /* a build without the kernels (no nvcc: -Dcuda=disabled) has no GPU collective state to check */
  const int have_ci = shmemx_coll_device_info(&ci, sizeof ci) == 0;
  CHECK(have_ci || !SHOAL_HAVE_COLL_GPU, "shmemx_coll_device_info");
  for (int round = 0; have_ci && round < 2; round++) {
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even);
    CHECK((me % 2 == 0) == (even != SHMEM_TEAM_INVALID), "split: PE %d's handle", me);
    if (even != SHMEM_TEAM_INVALID) {
      const shoal_team_t *t = (const shoal_team_t *)even;
      const int slot = ci.team_slot[t - shoal_team_pool];
      CHECK(slot == t->slot, "round %d: team_slot %d, the team's slot %d", round, slot, t->slot);
      for (int r = 0; r < t->size; r++)
        CHECK(ci.table[(size_t)slot * n + r] == st.heap_base + st.delta[2 * r], "round %d: slot %d table[%d]", round,
              slot, r);
      const uint64_t *row = (const uint64_t *)(st.heap_base + ci.flag_off) + (size_t)slot * n;
      const uint64_t *bar = (const uint64_t *)(st.heap_base + ci.bar_off) + (size_t)slot * SHMEMX_DEVICE_BAR_ROUNDS;
      const uint64_t *sync = (const uint64_t *)((char *)ci.sync + (size_t)slot * ci.sync_size);
      int dirty = 0;
      for (int r = 0; r < n; r++) dirty += row[r] != 0;
      for (int k = 0; k < SHMEMX_DEVICE_BAR_ROUNDS; k++) dirty += bar[k] != 0;
      dirty += sync[0] != 0 || sync[1] != 0 || ci.bar_epoch[slot] != 0;
      CHECK(!dirty, "round %d: slot %d: %d flags or counters not zero at the team's creation", round, slot, dirty);
      /* what kernels of a first team would leave behind */
      memset((void *)row, 0x5a, (size_t)n * 8);
      memset((void *)bar, 0x5a, SHMEMX_DEVICE_BAR_ROUNDS * 8);
      memset((void *)sync, 0x5a, ci.sync_size);
      ci.bar_epoch[slot] = 77;
      shmem_team_destroy(even);
    }
  }

  /* host RMA through the space */
  unsigned char src[N], out[N];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 7 + me);
  shmem_putmem(d, src, N, next);
  shmem_barrier_all();
  int bad = 0;
  for (int i = 0; i < N; i++) bad += d[i] != (unsigned char)(i * 7 + prev);
  CHECK(!bad, "putmem into device memory: %d bytes", bad);
  shmem_getmem(out, d, N, next);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != (unsigned char)(i * 7 + me);
  CHECK(!bad, "getmem from device memory: %d bytes", bad);
  long *dl = shmem_malloc_with_hints(sizeof(long) * 100, SHMEMX_MALLOC_DEVICE), lv[50];
  for (int i = 0; i < 50; i++) lv[i] = me * 1000 + i;
  shmem_long_iput(dl, lv, 2, 1, 50, next);
  shmem_long_p(&dl[1], -me, next);
  shmem_barrier_all();
  bad = 0;
  for (int i = 0; i < 50; i++) bad += shmem_long_g(&dl[2 * i], me) != prev * 1000 + i;
  CHECK(!bad && dl[1] == -prev, "long iput / p into device memory: %d wrong, dl[1] %ld", bad, dl[1]);

  /* _on_stream: device -> peer's host heap and back; barrier without a kernel falls back to the host barrier */
  if (!dev_default) {
    memset(h, 0, N);
    shmem_barrier_all();
    shmemx_putmem_on_stream(h, d, N, next, NULL);
    shmemx_quiet_on_stream(NULL);
    shmemx_barrier_all_on_stream(NULL);
    bad = 0; /* h on us holds prev's d, which holds prev-1's pattern */
    int pp = (prev + n - 1) % n;
    for (int i = 0; i < N; i++) bad += h[i] != (unsigned char)(i * 7 + pp);
    CHECK(!bad, "putmem_on_stream device -> host heap: %d bytes", bad);
  }
  memset(out, 0, N);
  shmemx_getmem_on_stream(out, d, N, next, NULL);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != (unsigned char)(i * 7 + me);
  CHECK(!bad, "getmem_on_stream: %d bytes", bad);
  shmem_barrier_all();

  /* host AMOs */
  uint64_t *ctr = shmem_malloc_with_hints(16, SHMEMX_MALLOC_DEVICE), old;
  ctr[0] = ctr[1] = 0;
  shmem_barrier_all();
  for (int i = 0; i < 100; i++) CHECK(!shoal_gpu_amo("t", ctr, SHOAL_GPU_AMO_ADD, 8, 1, 0, &old, 0), "amo");
  CHECK(!shoal_gpu_amo("t", &ctr[1], SHOAL_GPU_AMO_ADD, 4, 2, 0, &old, next), "amo 4");
  CHECK(shoal_gpu_amo("t", h, SHOAL_GPU_AMO_ADD, 8, 1, 0, &old, 0) == (dev_default ? SHOAL_OK : SHOAL_ERR_INVAL),
        "amo on the host heap must be refused");
  CHECK(shoal_gpu_amo("t", (char *)ctr + 2, SHOAL_GPU_AMO_ADD, 4, 1, 0, &old, 0) == SHOAL_ERR_INVAL, "misaligned");
  shmem_barrier_all();
  if (me == 0) CHECK(ctr[0] == 100u * n, "amo total %llu", (unsigned long long)ctr[0]);
  CHECK((uint32_t)ctr[1] == 2, "4-byte amo from PE %d: %u", prev, (unsigned)ctr[1]);

  /* the AMO routines on device-heap objects reach the backend (amo.c's device path): counted calls, right values */
  long *la = shmem_malloc_with_hints(8 * sizeof(long), SHMEMX_MALLOC_DEVICE);
  CHECK(shoal_gpu_heap_owns(la), "AMO objects not on the device heap");
  memset(la, 0, 8 * sizeof(long));
  shmem_barrier_all();
  const int calls0 = amo_calls;
  unsigned long seen = 0;
  for (int i = 0; i < 50; i++) seen |= 1UL << shmem_long_atomic_fetch_inc(&la[0], 0) % 64; /* distinct old values */
  shmem_long_atomic_add(&la[1], me + 1, next);
  shmem_ctx_long_atomic_add(SHMEM_CTX_DEFAULT, &la[1], 10, next);
  shmem_int_atomic_set((int *)&la[2], 7 + me, me);
  int iv = shmem_int_atomic_swap((int *)&la[2], 40, me);
  CHECK(iv == 7 + me, "int swap returned %d, expected %d", iv, 7 + me);
  CHECK(shmem_int_atomic_compare_swap((int *)&la[2], 40, 41, me) == 40, "compare_swap (match)");
  CHECK(shmem_int_atomic_compare_swap((int *)&la[2], 40, 99, me) == 41, "compare_swap (no match)");
  CHECK(shmem_int_atomic_fetch((int *)&la[2], me) == 41, "int fetch");
  shmem_double_atomic_set((double *)&la[3], 2.5, me);
  CHECK(shmem_double_atomic_fetch((double *)&la[3], me) == 2.5, "double set/fetch");
  CHECK(shmem_double_atomic_swap((double *)&la[3], -1.25, me) == 2.5, "double swap");
  shmem_uint64_atomic_set((uint64_t *)&la[4], 0xF0F0, me);
  CHECK(shmem_uint64_atomic_fetch_and((uint64_t *)&la[4], 0xFF00, me) == 0xF0F0, "fetch_and");
  shmem_uint64_atomic_or((uint64_t *)&la[4], 0x000F, me);
  uint64_t fx = 0;
  shmem_uint64_atomic_fetch_xor_nbi(&fx, (uint64_t *)&la[4], 0xFFFF, me);
  CHECK(fx == 0xF00F, "or, then fetch_xor_nbi: %#llx", (unsigned long long)fx);
  long fl = -1;
  shmem_long_atomic_fetch_add_nbi(&fl, &la[5], 5, me);
  shmem_long_atomic_fetch_nbi(&fl, &la[5], me);
  CHECK(fl == 5, "fetch_add_nbi then fetch_nbi: %ld", fl);
  CHECK(amo_calls - calls0 == 50 + 2 + 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1,
        "%d backend AMO calls, expected 66", amo_calls - calls0);
  shmem_barrier_all();
  if (me == 0) CHECK(la[0] == 50L * n, "fetch_inc total %ld, expected %ld", la[0], 50L * n);
  CHECK(la[1] == prev + 1 + 10, "add from PE %d: %ld", prev, la[1]);
  CHECK(la[4] == (0xF00F ^ 0xFFFF), "xor result %#lx", (unsigned long)la[4]);
  CHECK(n > 1 || seen == (1UL << 50) - 1, "fetch_inc old values not distinct on 1 PE");
  shmem_barrier_all();
  shmem_free(la);

  /* exhaustion, calloc, realloc, free */
  CHECK(shmem_malloc_with_hints((size_t)17 << 20, SHMEMX_MALLOC_DEVICE) == NULL, "17 MiB from 16");
  CHECK(shmem_malloc_with_hints(SIZE_MAX / 2, SHMEMX_MALLOC_DEVICE) == NULL, "SIZE_MAX / 2");
  CHECK(shmem_malloc_with_hints(0, SHMEMX_MALLOC_DEVICE) == NULL, "size 0");
  void *big = shmem_malloc_with_hints((size_t)8 << 20, SHMEMX_MALLOC_DEVICE);
  CHECK(big != NULL, "8 MiB");
  CHECK(shmem_malloc_with_hints((size_t)8 << 20, SHMEMX_MALLOC_DEVICE) == NULL, "second 8 MiB with less free");
  shmem_free(big);
  if (dev_default) {
    unsigned char *z = shmem_calloc(N, 1);
    bad = 0;
    for (int i = 0; i < N; i++) bad += z[i];
    CHECK(shoal_gpu_heap_owns(z) && !bad, "calloc on the device heap");
    shmem_free(z);
  }
  unsigned char *r = shmem_realloc(d, 3 * N);
  CHECK(r && shoal_gpu_heap_owns(r), "realloc");
  bad = 0;
  for (int i = 0; i < N; i++) bad += r[i] != (unsigned char)(i * 7 + prev);
  CHECK(!bad, "realloc lost %d bytes", bad);
  shmem_free(r);
  shmem_free(ctr);
  shmem_free(dl);
  shmem_free(h);
  shmemx_device_heap_info(&total, &largest);
  CHECK(largest == total, "everything freed: largest %zu of %zu", largest, total);
  if (me == 0)
    printf("gpu_fake: %s with %d PEs%s\n", fails ? "FAIL" : "PASS", n, dev_default ? " (SHOAL_HEAP=device)" : "");
  shmem_finalize();
  return fails ? 1 : 0;
}
