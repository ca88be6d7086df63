/* test_gpu_unit.c - the backend-independent parts of the GPU module (Check, one process, no GPU needed): the ops
 * table filling (stubs return SHOAL_ERR_NOSYS, a table of another size is refused), the co-residency limit, PEs per
 * GPU from the bus ids, the internal area layout, and the host-only path of a singleton job: device hints fall back
 * to the host heap, the _on_stream routines act as their host forms, the device state is refused. */
#include "coll_core.h"
#include "heap_gpu.h"

#include <check.h>
#include <stdlib.h>

START_TEST(ops_fill_stubs) {
  shoal_gpu_ops_t o;
  ck_assert_int_eq(shoal_gpu_ops_fill(&o, &shoal_gpu_none_ops), SHOAL_OK);
  int n = -1;
  ck_assert_int_eq(o.device_count(&n), SHOAL_OK);
  ck_assert_int_eq(n, 0);
  void *p = NULL;
  ck_assert_int_eq(o.mem_alloc(&p, 64), SHOAL_ERR_NOSYS);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(o.barrier_on_stream(NULL), SHOAL_ERR_NOSYS);
  ck_assert_int_eq(o.amo(NULL, 0, 8, 0, 0, NULL, NULL, NULL), SHOAL_ERR_NOSYS);
  ck_assert_str_eq(o.name, "none");
  shoal_gpu_ops_t bad = shoal_gpu_none_ops;
  bad.size = sizeof bad - 8;
  ck_assert_int_eq(shoal_gpu_ops_fill(&o, &bad), SHOAL_ERR_INVAL);
  ck_assert_int_eq(shoal_gpu_ops_fill(&o, NULL), SHOAL_ERR_INVAL);
#if SHOAL_HAVE_CUDA
  ck_assert_int_eq(shoal_gpu_ops_fill(&o, &shoal_gpu_cuda_ops), SHOAL_OK);
  ck_assert_str_eq(o.name, "cuda");
  ck_assert_ptr_nonnull(o.ipc_open);
#endif
#if SHOAL_HAVE_HIP
  shoal_gpu_ops_t none;
  ck_assert_int_eq(shoal_gpu_ops_fill(&none, &shoal_gpu_none_ops), SHOAL_OK);
  ck_assert_int_eq(shoal_gpu_ops_fill(&o, &shoal_gpu_hip_ops), SHOAL_OK);
  /* the runtime's kernels are wired (libshoal_hip_kernels.so), not the stubs; without libamdhip64 and that library
   * (this host) they answer NOSYS, so that the runtime falls back as before */
  ck_assert_ptr_ne((void *)o.amo, (void *)none.amo);
  ck_assert_ptr_ne((void *)o.barrier_on_stream, (void *)none.barrier_on_stream);
  ck_assert_ptr_ne((void *)o.kernels_setup, (void *)none.kernels_setup);
  ck_assert_int_eq(o.amo(NULL, 0, 8, 0, 0, NULL, NULL, NULL), SHOAL_ERR_NOSYS);
  ck_assert_int_eq(o.barrier_on_stream(NULL), SHOAL_ERR_NOSYS);
#endif
}
END_TEST

START_TEST(coresident) {
  ck_assert_int_eq(shoal_gpu_coresident_limit(2, 132, 1), 264);
  ck_assert_int_eq(shoal_gpu_coresident_limit(2, 132, 8), 33);
  ck_assert_int_eq(shoal_gpu_coresident_limit(1, 132, 3), 44);
  ck_assert_int_eq(shoal_gpu_coresident_limit(1, 4, 8), 0); /* fewer SMs than sharers: nothing fits */
  ck_assert_int_eq(shoal_gpu_coresident_limit(4, 100, 0), 400);
  ck_assert_int_eq(shoal_gpu_coresident_limit(0, 132, 1), 0);
  ck_assert_int_eq(shoal_gpu_coresident_limit(2, -1, 1), 0);
}
END_TEST

START_TEST(sharing) {
  char ids[5][16] = {"0000:1b:00.0", "0000:1b:00.0", "0000:3d:00.0", "0000:1b:00.0", "0000:3d:00.0"};
  ck_assert_int_eq(shoal_gpu_count_sharing(&ids[0][0], 16, 5, 0), 3);
  ck_assert_int_eq(shoal_gpu_count_sharing(&ids[0][0], 16, 5, 2), 2);
  ck_assert_int_eq(shoal_gpu_count_sharing(&ids[0][0], 16, 1, 0), 1);
}
END_TEST

START_TEST(layout) {
  shoal_gpu_layout_t l;
  ck_assert_int_eq(shoal_gpu_layout_make(0, &l), SHOAL_ERR_INVAL);
  ck_assert_int_eq(shoal_gpu_layout_make(1, NULL), SHOAL_ERR_INVAL);
  for (int n = 1; n <= 4096; n *= 2) {
    ck_assert_int_eq(shoal_gpu_layout_make(n, &l), SHOAL_OK);
    size_t offs[] = {l.bar_flags, l.bar_epoch, l.grid_bar, l.amo_scratch, l.teams, l.peer_delta};
    for (size_t i = 0; i < 6; i++) {
      ck_assert_uint_eq(offs[i] % 128, 0); /* own GPU cache lines */
      size_t gap = i == 1 ? SHMEMX_DEVICE_BAR_ROUNDS * 128 : i == 5 ? SHOAL_TEAM_POOL * 16 : 8;
      if (i) ck_assert_uint_ge(offs[i], offs[i - 1] + gap);
    }
    ck_assert_uint_ge(l.total, l.peer_delta + (size_t)n * 8);
    ck_assert_uint_eq(l.total % 65536, 0);
  }
}
END_TEST

/* A singleton job on a host without a GPU (CI): everything works on host memory. */
START_TEST(host_only) {
  setenv("SHOAL_HEAP", "device", 1); /* asked for, but there is no GPU: a warning and the host heap */
  shmem_init();
  if (shmemx_gpu_available()) { /* a GPU host: the host-only path is not reachable */
    shmem_finalize();
    return;
  }
  ck_assert_int_eq(shoal_gpu_kind, SHOAL_GPU_NONE);
  ck_assert_int_eq(shmemx_gpu_device(), -1);
  shmemx_device_state_t st;
  ck_assert_int_eq(shmemx_device_state_get(&st, sizeof st), -1);
  size_t total = 1, largest = 1;
  shmemx_device_heap_info(&total, &largest);
  ck_assert_uint_eq(total, 0);
  ck_assert_uint_eq(largest, 0);
  char *a = shmem_malloc_with_hints(1000, SHMEMX_MALLOC_DEVICE), *b = shmem_malloc(1000);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_ptr_eq(shmem_ptr(a, 0), a); /* host memory */
  ck_assert(!shoal_gpu_heap_owns(a));
  char src[1000], dst[1000];
  for (int i = 0; i < 1000; i++) src[i] = (char)(i * 7);
  shmemx_putmem_on_stream(a, src, sizeof src, 0, NULL);
  shmemx_quiet_on_stream(NULL);
  shmemx_barrier_all_on_stream(NULL);
  memset(dst, 0, sizeof dst);
  shmemx_getmem_on_stream(dst, a, sizeof dst, 0, NULL);
  ck_assert_mem_eq(dst, src, sizeof src);
  ck_assert_ptr_null(shoal_gpu_heap_alloc("test", 64, 64));
  ck_assert_int_eq(shoal_gpu_amo("test", a, SHOAL_GPU_AMO_ADD, 8, 1, 0, NULL, 0), SHOAL_ERR_INVAL);
  unsigned g[3] = {1, 1, 1};
  ck_assert_int_eq(shoal_gpu_collective_launch("test", NULL, g, g, NULL, 0, NULL), SHOAL_ERR_NOSYS);
  shmem_free(b);
  shmem_free(a);
  shmem_finalize();
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu");
  TCase *t = tcase_create("pure");
  tcase_add_test(t, ops_fill_stubs);
  tcase_add_test(t, coresident);
  tcase_add_test(t, sharing);
  tcase_add_test(t, layout);
  suite_add_tcase(s, t);
  TCase *h = tcase_create("host_only");
  tcase_add_test(h, host_only);
  tcase_set_timeout(h, 60);
  suite_add_tcase(s, h);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
