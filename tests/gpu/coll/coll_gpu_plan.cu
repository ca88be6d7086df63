/*
 * coll_gpu_plan.cu - host-side checks of the GPU collective launcher (no GPU needed, runs in CI): argument validation
 * with its messages, automatic G / tile / grid choices, the 16-byte or byte path, and kernel naming.
 */
#include <stdio.h>
#include <string.h>

#include "coll_gpu.h"

static int failures;
#define EXPECT(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      failures++;                                                                                                      \
      printf("FAIL line %d: %s: ", __LINE__, #cond);                                                                   \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
    }                                                                                                                  \
  } while (0)

static char *const fake_table[8] = {0};
static shoal_coll_gpu_sync_t fake_sync;

static shoal_coll_gpu_args_t base_args(int op, int npes, size_t nbytes) {
  shoal_coll_gpu_args_t a;
  memset(&a, 0, sizeof a);
  a.op = op;
  a.me = 0;
  a.npes = npes;
  a.peer_base = fake_table;
  a.dst_off = 4096;
  a.src = (const void *)(uintptr_t)0x10000;
  a.nbytes = nbytes;
  a.sync = &fake_sync;
  a.wait = 1;
  a.cfg.sms = 132;
  return a;
}

static void expect_bad(shoal_coll_gpu_args_t a, const char *msg) {
  char err[256] = "";
  int rc = shoal_coll_gpu_launch(&a, NULL, err, sizeof err);
  EXPECT(rc == -3, "rc %d for '%s'", rc, msg);
  EXPECT(strstr(err, msg) != NULL, "message '%s' lacks '%s'", err, msg);
  EXPECT(!strncmp(err, "shoal_coll_gpu_launch: ", 23), "message '%s' does not name the routine", err);
}

static void expect_name(shoal_coll_gpu_args_t a, const char *name) {
  char buf[64];
  shoal_coll_gpu_kernel_name(&a, buf, sizeof buf);
  EXPECT(!strcmp(buf, name), "kernel %s, expected %s", buf, name);
}

int main(void) {
  shoal_coll_gpu_args_t a;
  /* validation */
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.cfg.group = 3; expect_bad(a, "G: not 1, 2, 4 or 8");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.cfg.tile = 24; expect_bad(a, "tile: not a multiple of 16");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.me = 4; expect_bad(a, "me: out of range");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.me = -1; expect_bad(a, "me: out of range");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 0, 4096); expect_bad(a, "npes: out of range");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 1025, 4096); expect_bad(a, "npes: out of range");
  a = base_args(3, 4, 4096); expect_bad(a, "op: not fcollect (0), alltoall (1) or broadcast (2)");
  a = base_args(SHOAL_COLL_GPU_BCAST, 4, 4096); a.root = 4; expect_bad(a, "root: out of range [0, npes)");
  a = base_args(SHOAL_COLL_GPU_BCAST, 4, 4096); a.root = -1; expect_bad(a, "root: out of range [0, npes)");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.variant = 7; expect_bad(a, "variant: not hoisted");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.src = NULL; expect_bad(a, "peer_base/src: NULL");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.sync = NULL; expect_bad(a, "sync: NULL with wait = 1");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.sms = -2; expect_bad(a, "sms: negative");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.pipe = 3; expect_bad(a, "pipe: not auto (0), off (1) or on (2)");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.scope = 2; expect_bad(a, "scope: not auto (0) or sys (1)");
  /* nothing to move: returns 0 without touching a GPU */
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 0);
  EXPECT(shoal_coll_gpu_launch(&a, NULL, NULL, 0) == 0, "nbytes 0 is a no-op");

  /* kernel choice */
  expect_name(base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096), "fcollect_hoisted_w4_g4_v16");
  expect_name(base_args(SHOAL_COLL_GPU_BCAST, 4, 4096), "bcast_hoisted_w4_g4_v16"); /* fcollect's G */
  expect_name(base_args(SHOAL_COLL_GPU_FCOLLECT, 8, 4096), "fcollect_hoisted_w8_g8_v16");
  expect_name(base_args(SHOAL_COLL_GPU_ALLTOALL, 8, 4096), "alltoall_hoisted_w8_g2_v16_pipe");
  expect_name(base_args(SHOAL_COLL_GPU_FCOLLECT, 5, 4096), "fcollect_hoisted_wgen_g4_v16");
  expect_name(base_args(SHOAL_COLL_GPU_FCOLLECT, 1, 4096), "fcollect_hoisted_wgen_g4_v16");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 2, 4096); a.cfg.group = 8; expect_name(a, "fcollect_hoisted_w2_g2_v16");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.variant = SHOAL_COLL_GPU_NAIVE; a.cfg.group = 1;
  expect_name(a, "alltoall_naive_w4_g1_v16_pipe");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.cfg.pipe = SHOAL_COLL_GPU_PIPE_ON;
  expect_name(a, "fcollect_hoisted_w4_g4_v16_pipe");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.group = 4; /* auto: no pipelining (it would spill) */
  expect_name(a, "alltoall_hoisted_w4_g4_v16");
  a.cfg.pipe = SHOAL_COLL_GPU_PIPE_ON; expect_name(a, "alltoall_hoisted_w4_g4_v16_pipe");
  expect_name(base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4097), "fcollect_hoisted_w4_g1_v1");     /* odd size */
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.dst_off = 4100; expect_name(a, "fcollect_hoisted_w4_g1_v1");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096); a.src = (const void *)(uintptr_t)0x10008;
  expect_name(a, "fcollect_hoisted_w4_g1_v1");

  /* grid and tile */
  shoal_coll_gpu_cfg_t c;
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 1 << 20); a.cfg.sms = 10;
  int grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 10 && c.tile == 16384 && c.sms == 10 && c.group == 4, "grid %d tile %zu sms %d G %d", grid, c.tile,
         c.sms, c.group);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 4096);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 1 && c.tile == 4096, "4 KiB: one 4 KiB tile: grid %d tile %zu", grid, c.tile);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 100000);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 8 && c.tile == 12512, "100000 B in 8 tiles of 12512 B: grid %d tile %zu", grid, c.tile);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 256 << 10);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 8 && c.tile == 32768 && c.pdl == SHOAL_COLL_GPU_PDL_ON, "256 KiB: 8 tiles, PDL: grid %d tile %zu pdl %d",
         grid, c.tile, c.pdl);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, (256 << 10) + 16);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 65 && c.tile == 4096 && c.pdl == SHOAL_COLL_GPU_PDL_OFF, "256 KiB + 16: grid %d tile %zu pdl %d", grid,
         c.tile, c.pdl);
  /* up to 16 KiB one block, completed with one fence and launched with programmatic dependent launch; larger grids of
   * at most 8 blocks keep the dependent launch, then neither */
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 16384);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 1 && c.tile == 16384 && c.small == SHOAL_COLL_GPU_SMALL_ON && c.pdl == SHOAL_COLL_GPU_PDL_ON,
         "16 KiB: one block, small completion, PDL: grid %d tile %zu small %d pdl %d", grid, c.tile, c.small, c.pdl);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 16400);
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 8 && c.tile == 2064 && c.small == SHOAL_COLL_GPU_SMALL_OFF && c.pdl == SHOAL_COLL_GPU_PDL_ON,
         "16400 B: 8 blocks, grid completion, PDL: grid %d tile %zu small %d pdl %d", grid, c.tile, c.small, c.pdl);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 36864); a.cfg.tile = 4096;
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 9 && c.pdl == SHOAL_COLL_GPU_PDL_OFF, "36 KiB in 4 KiB tiles: 9 blocks, no PDL: grid %d pdl %d", grid,
         c.pdl);
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.small = SHOAL_COLL_GPU_SMALL_OFF; a.cfg.pdl = SHOAL_COLL_GPU_PDL_OFF;
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 1 && c.small == SHOAL_COLL_GPU_SMALL_OFF && c.pdl == SHOAL_COLL_GPU_PDL_OFF,
         "small and pdl off: grid %d small %d pdl %d", grid, c.small, c.pdl);
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.small = 3; expect_bad(a, "small: not auto (0), off (1) or on (2)");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096); a.cfg.pdl = -1; expect_bad(a, "pdl: not auto (0), off (1) or on (2)");
  a = base_args(SHOAL_COLL_GPU_BCAST, 4, 100000); /* the root (me 0) walks the tiles, the others only complete */
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 8, "broadcast root, 100000 B: grid %d", grid);
  a.root = 2;
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 1, "broadcast non-root: grid %d, expected 1", grid);
  /* automatic tile: nbytes / 64 up to 32 KiB, then nbytes / 512 up to 512 KiB */
  const size_t sz[] = {(size_t)1 << 20, (size_t)4 << 20, (size_t)16 << 20, (size_t)64 << 20, (size_t)256 << 20,
                       (size_t)1 << 30, (size_t)4 << 30};
  const size_t want[] = {16384, 32768, 32768, 131072, 524288, 524288, 524288};
  for (int i = 0; i < 7; i++) {
    a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, sz[i]);
    grid = shoal_coll_gpu_resolve(&a, &c);
    EXPECT(c.tile == want[i] && grid == 132 - (i == 0) * 68 - (i == 1) * 4, "%zu B: tile %zu grid %d", sz[i], c.tile,
           grid);
  }
  /* pipelining, automatic: fcollect only with two chunks per block or more; alltoall unless G >= 4 */
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, (size_t)4 << 20);
  expect_name(a, "fcollect_hoisted_w4_g4_v16");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, (size_t)16 << 20);
  expect_name(a, "fcollect_hoisted_w4_g4_v16_pipe");
  a = base_args(SHOAL_COLL_GPU_ALLTOALL, 4, 4096);
  expect_name(a, "alltoall_hoisted_w4_g2_v16_pipe");
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 1000); a.cfg.tile = 16;
  grid = shoal_coll_gpu_resolve(&a, &c);
  EXPECT(grid == 63 && c.tile == 16, "1000 B in 16 B tiles: grid %d", grid);
  a = base_args(SHOAL_COLL_GPU_FCOLLECT, 4, 0);
  EXPECT(shoal_coll_gpu_resolve(&a, &c) == 1, "nbytes 0: one block");

  printf("coll_gpu_plan: %s (%d failures)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
