/*
 * test_reduce.c - every reduction of the specification's tables: shmem_TYPENAME_OP_reduce for every team type and
 * operation (on SHMEM_TEAM_WORLD and on a reversed odd-PE team; 1, 3 and 1000 elements, out of place and in place)
 * and shmem_TYPENAME_OP_to_all for every active-set type and operation (three active sets; pSync must come back all
 * SHMEM_SYNC_VALUE). Inputs are small integers (exact in every type), the reference is computed on each PE in team
 * order with the same operator; every element is compared. Exit status 1 on any mismatch.
 */
#include <complex.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXE 1000
static int me, npes, errors, calls;
static char *S, *D;
static long pSync[SHMEM_REDUCE_SYNC_SIZE], pSync2[SHMEM_REDUCE_SYNC_SIZE], pBar[SHMEM_BARRIER_SYNC_SIZE];
static long double _Complex pWrk[MAXE / 2 + SHMEM_REDUCE_MIN_WRKDATA_SIZE]; /* large enough for every type */

#define IS_SIGNED(T) ((T)-1 < (T)1)
/* A complex value with imaginary part im for the complex types, the real part alone otherwise. */
#define MK(T, re, im)                                                                                                 \
  ((T)((re) + _Generic((T)0, double _Complex: (double)(im) * I, float _Complex: (float)(im) * I, default: 0)))
/* Input of world PE w at index i for each operation: results stay small and exact. */
#define VAL_and(T, w, i) ((T)(0x7F & ~(1 << (((w) + (i)) % 7))))
#define VAL_or(T, w, i) ((T)(1 << (((w) * 3 + (i)) % 7)))
#define VAL_xor(T, w, i) ((T)((((w) * 37 + (i) * 11) ^ ((i) << 3)) & 0x7F))
#define VAL_max(T, w, i) ((T)((((w) * 7 + (i) * 3) % 23) - (IS_SIGNED(T) ? 11 : 0)))
#define VAL_min(T, w, i) ((T)((((w) * 5 + (i) * 13) % 29) - (IS_SIGNED(T) ? 14 : 0)))
#define VAL_sum(T, w, i) MK(T, ((w) * 3 + (i)) % 11, ((w) + 2 * (i)) % 5)
#define VAL_prod(T, w, i) MK(T, 1 + (((w) + (i)) % 3 == 0), ((w) + (i)) % 4 == 1)
#define OP_and(a, b) ((a) & (b))
#define OP_or(a, b) ((a) | (b))
#define OP_xor(a, b) ((a) ^ (b))
#define OP_max(a, b) ((a) > (b) ? (a) : (b))
#define OP_min(a, b) ((a) < (b) ? (a) : (b))
#define OP_sum(a, b) ((a) + (b))
#define OP_prod(a, b) ((a) * (b))

static void fail(const char *routine, const char *where, size_t ne, size_t i, int inplace) {
  if (errors++ < 10)
    fprintf(stderr, "PE %d: %s on %s, nreduce %zu%s: element %zu wrong\n", me, routine, where, ne,
            inplace ? " (in place)" : "", i);
}

/* Check dest (ne elements) against the reduction over members w0 + j * ws, j < n. */
#define DEF_CHECK(T, N, OP)                                                                                           \
  static void check_##N##_##OP(const char *routine, const char *where, T *dest, size_t ne, int w0, int ws, int n,     \
                               int inplace) {                                                                         \
    for (size_t i = 0; i < ne; i++) {                                                                                 \
      T want = VAL_##OP(T, w0, (int)i);                                                                               \
      for (int j = 1; j < n; j++) want = (T)OP_##OP(want, VAL_##OP(T, w0 + j * ws, (int)i));                          \
      if (dest[i] != want) fail(routine, where, ne, i, inplace);                                                      \
    }                                                                                                                  \
  }
SHOAL_REDUCE_ALL(DEF_CHECK)
SHOAL_TOALL_BITWISE_TYPES(DEF_CHECK, and)
SHOAL_TOALL_BITWISE_TYPES(DEF_CHECK, or)
SHOAL_TOALL_BITWISE_TYPES(DEF_CHECK, xor)

/* Team form: every member fills its source, reduces, checks. */
#define DEF_TEAM(T, N, OP)                                                                                            \
  static void team_##N##_##OP(shmem_team_t t, const char *where, size_t ne, int inplace) {                            \
    T *src = (T *)S, *dst = inplace ? src : (T *)D;                                                                   \
    int n = shmem_team_n_pes(t), w0 = shmem_team_translate_pe(t, 0, SHMEM_TEAM_WORLD);                               \
    int ws = n > 1 ? shmem_team_translate_pe(t, 1, SHMEM_TEAM_WORLD) - w0 : 1;                                       \
    if (!inplace) memset(dst, 0xA5, ne * sizeof(T));                                                                  \
    for (size_t i = 0; i < ne; i++) src[i] = VAL_##OP(T, me, (int)i);                                                 \
    shmem_##N##_##OP##_reduce(t, dst, src, ne);                                                                       \
    check_##N##_##OP("shmem_" #N "_" #OP "_reduce", where, dst, ne, w0, ws, n, inplace);                             \
    calls++;                                                                                                           \
  }
SHOAL_REDUCE_ALL(DEF_TEAM)

/* Active-set form: two calls back to back on one pSync (out of place, in place), again on pSync2, then a barrier
 * and the check that both pSyncs are back to SHMEM_SYNC_VALUE. */
#define DEF_ASET(T, N, OP)                                                                                            \
  static void aset_##N##_##OP(int start, int logs, int size, size_t ne) {                                             \
    T *src = (T *)S, *dst = (T *)D;                                                                                    \
    for (int pass = 0; pass < 2; pass++) {                                                                            \
      memset(dst, 0xA5, ne * sizeof(T));                                                                              \
      for (size_t i = 0; i < ne; i++) src[i] = VAL_##OP(T, me, (int)i);                                               \
      shmem_##N##_##OP##_to_all(dst, src, (int)ne, start, logs, size, (T *)pWrk, pass ? pSync2 : pSync);\
      check_##N##_##OP("shmem_" #N "_" #OP "_to_all", "an active set", dst, ne, start, 1 << logs, size, 0);           \
      shmem_##N##_##OP##_to_all(src, src, (int)ne, start, logs, size, (T *)pWrk, pass ? pSync2 : pSync);             \
      check_##N##_##OP("shmem_" #N "_" #OP "_to_all", "an active set", src, ne, start, 1 << logs, size, 1);           \
    }                                                                                                                  \
    shmem_barrier(start, logs, size, pBar);                                                                           \
    for (int k = 0; k < SHMEM_REDUCE_SYNC_SIZE; k++)                                                                  \
      if (pSync[k] != SHMEM_SYNC_VALUE || pSync2[k] != SHMEM_SYNC_VALUE) {                                            \
        fail("shmem_" #N "_" #OP "_to_all", "pSync not restored", ne, (size_t)k, 0);                                 \
        break;                                                                                                         \
      }                                                                                                                \
    shmem_barrier(start, logs, size, pBar); /* checked before anyone signals into pSync again */                      \
    calls += 4;                                                                                                        \
  }
SHOAL_TOALL_ALL(DEF_ASET)

static void run_team(shmem_team_t t, const char *where) {
  static const size_t sizes[] = {1, 3, MAXE};
  if (t == SHMEM_TEAM_INVALID) return;
  for (int s = 0; s < 3; s++)
    for (int inplace = 0; inplace < 2; inplace++) {
#define CALL_TEAM(T, N, OP) team_##N##_##OP(t, where, sizes[s], inplace);
      SHOAL_REDUCE_ALL(CALL_TEAM)
    }
}

/* The C11 generic forms pick the routine of the element type. */
static void run_generic(void) {
  static unsigned u[4], ur[4];
  static int32_t x[4], xr[4];
  static double _Complex z[2], zr[2];
  static short h[4], hr[4 * 64], ha[4 * 64], hc[4 * 64], hs[8 * 64];
  int n = npes;
  size_t ne = 4;
  for (int i = 0; i < 4; i++) u[i] = 1u << ((me + i) % 32), x[i] = me * 3 + i, h[i] = (short)(me * 10 + i);
  z[0] = me + 1.0 * I, z[1] = 2.0;
  shmem_or_reduce(SHMEM_TEAM_WORLD, ur, u, 4);
  shmem_xor_reduce(SHMEM_TEAM_WORLD, xr, x, 4);
  shmem_prod_reduce(SHMEM_TEAM_WORLD, zr, z, 2);
  shmem_fcollect(SHMEM_TEAM_WORLD, hr, h, 4);
  shmem_alltoall(SHMEM_TEAM_WORLD, ha, hr, 1); /* hr is complete here on this PE only: alltoall reads only it */
  shmem_collect(SHMEM_TEAM_WORLD, hc, h, (size_t)(me % 2 + 1));
  shmem_alltoalls(SHMEM_TEAM_WORLD, hs, hr, 2, 1, 1); /* element p of my hr to PE p, at hs[2 * me] there */
  for (int i = 0; i < 4; i++) {
    unsigned wu = 0;
    int32_t wx = 0;
    for (int p = 0; p < n; p++) wu |= 1u << ((p + i) % 32), wx ^= p * 3 + i;
    if (ur[i] != wu || xr[i] != wx) fail("shmem_or_reduce/shmem_xor_reduce (generic)", "WORLD", ne, (size_t)i, 0);
  }
  double _Complex wz0 = 1, wz1 = 1;
  for (int p = 0; p < n; p++) wz0 *= p + 1.0 * I, wz1 *= 2.0;
  if (zr[0] != wz0 || zr[1] != wz1) fail("shmem_prod_reduce (generic, complexd)", "WORLD", 2, 0, 0);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 4; i++)
      if (hr[p * 4 + i] != (short)(p * 10 + i)) fail("shmem_fcollect (generic)", "WORLD", ne, (size_t)(p * 4 + i), 0);
  for (int p = 0; p < n; p++) /* PE p sent its hr[me], which is my hr[me] too (fcollect gave everyone the same) */
    if (ha[p] != hr[me] || hs[2 * p] != hr[me]) fail("shmem_alltoall[s] (generic)", "WORLD", 1, (size_t)p, 0);
  for (int p = 0, o = 0; p < n; p++)
    for (int i = 0; i < p % 2 + 1; i++, o++)
      if (hc[o] != (short)(p * 10 + i)) fail("shmem_collect (generic)", "WORLD", 2, (size_t)o, 0);
  shmem_barrier_all();
}

static void run_aset(int start, int logs, int size) {
  int d = me - start;
  if (size < 1 || d < 0 || d % (1 << logs) || d / (1 << logs) >= size) return; /* not a member */
  static const size_t sizes[] = {1, 7, MAXE};
  for (int s = 0; s < 3; s++) {
#define CALL_ASET(T, N, OP) aset_##N##_##OP(start, logs, size, sizes[s]);
    SHOAL_TOALL_ALL(CALL_ASET)
  }
}

int main(void) {
  for (int k = 0; k < SHMEM_REDUCE_SYNC_SIZE; k++) pSync[k] = pSync2[k] = SHMEM_SYNC_VALUE;
  for (int k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++) pBar[k] = SHMEM_SYNC_VALUE;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  S = shmem_malloc(MAXE * sizeof(long double _Complex));
  D = shmem_malloc(MAXE * sizeof(long double _Complex));
  shmem_team_t odd; /* odd PEs, highest first */
  int top = (npes - 1) | 1;
  if (top >= npes) top -= 2;
  if (!S || !D || shmem_team_split_strided(SHMEM_TEAM_WORLD, top < 0 ? 0 : top, -2, top < 0 ? 1 : (top + 1) / 2,
                                           NULL, 0, &odd)) {
    fprintf(stderr, "PE %d: setup failed\n", me);
    shmem_global_exit(2);
  }
  run_generic();
  run_team(SHMEM_TEAM_WORLD, "WORLD");
  run_team(odd, "odd PEs reversed");
  shmem_barrier_all();
  run_aset(0, 0, npes);
  shmem_barrier_all();
  run_aset(0, 1, (npes + 1) / 2);
  shmem_barrier_all();
  run_aset(1, 0, npes - 1);
  shmem_barrier_all();
  if (errors) {
    fprintf(stderr, "PE %d: %d mismatches in %d reductions\n", me, errors, calls);
    shmem_global_exit(1);
  }
  if (me == 0) printf("test_reduce: %d PEs: %d reductions on PE 0 correct\n", npes, calls);
  shmem_finalize();
  return 0;
}
