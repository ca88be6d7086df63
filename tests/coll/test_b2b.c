/*
 * test_b2b.c - back-to-back collectives into the same dest with no barrier between calls (issue 13 item 8): each PE
 * reads its dest right after every call returns, and no PE may find another call's data there. 200 calls of each
 * collective, per-call distinct data, team forms on SHMEM_TEAM_WORLD and on a split team (every PE but PE 0), and
 * the active-set forms (two pSync arrays used in turn, as the 1.4 rules ask), at a small and a large size (so that
 * the automatic choice takes its small- and its large-message algorithm). The last PE is slow: every SLOW_EVERY
 * calls it sleeps between the return and its check, which is when a fast PE that writes the next call's data into
 * other PEs' dest without waiting for them would be caught. Exit status 1 on any mismatch, naming the call whose
 * data was found.
 */
#define _DEFAULT_SOURCE
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls per form: fewer where a PE is reached over the network (SHOAL_TRANSPORT=ofi, other nodes), same checks. */
static int CALLS = 200;
#define SLOW_EVERY 4
#define SMALL 16
#define LARGE 12000 /* longs: 96000 B, above every push limit */

static int me, npes, errors, form_errors, slow;
static long *src, *dst;
static long pSync[2][SHMEM_SYNC_SIZE], pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + LARGE];

/* Element i of PE p's contribution (block b) in call c: every call, PE, block and element differ. */
static long val(int c, int p, int b, long i) { return ((long)(c + 1) << 40) + ((long)p << 28) + ((long)b << 20) + i; }

static void pause_if_slow(int c) {
  if (slow && c % SLOW_EVERY == 0) usleep(1000);
}

static void check(const char *what, int c, long i, long got, long want) {
  if (got == want) return;
  errors++;
  if (form_errors++ >= 2) return; /* a few lines per collective: every call still runs on every PE */
  long gc = (got >> 40) - 1; /* the call whose data this is, if any */
  char from[32] = "";
  if (gc >= 0 && gc < CALLS && gc != c) snprintf(from, sizeof from, " (call %ld's data)", gc);
  fprintf(stderr, "test_b2b: PE %d: %s, call %d: dest[%ld] = %#lx, want %#lx%s\n", me, what, c, i, (unsigned long)got,
          (unsigned long)want, from);
}

/* The collectives of one team of n PEs where this PE is r (world PE = wstart + r * wstride), ne elements. */
static void run_team(const char *tname, shmem_team_t team, int aset, int wstart, int logst, int n, int r, size_t ne) {
  char what[96];
  for (int form = 0; form < 7; form++) {
    static const char *names[] = {"broadcast", "fcollect", "collect", "alltoall", "alltoalls", "sum_reduce",
                                  "max_reduce"};
    snprintf(what, sizeof what, "%s %s (%d PEs, %zu elements)", tname, names[form], n, ne);
    form_errors = 0;
    for (int c = 0; c < CALLS; c++) {
      int root = c / 2 % n; /* the same root twice in a row, then the next */
      long *ps = pSync[c & 1];
      size_t mine = form == 2 ? ne - (size_t)((r + c) % 3) : ne; /* collect: sizes differ by PE and call */
      long fill = (long)ne * (form == 3 ? n : 1); /* alltoall: a block for each PE */
      for (long i = 0; i < fill; i++) src[i] = val(c, r, (int)(i / (long)ne), i % (long)ne);
      switch (form) {
      case 0:
        if (!aset) {
          shmem_long_broadcast(team, dst, src, ne, root);
        } else {
          shmem_broadcast64(dst, src, ne, root, wstart, logst, n, ps);
          if (r == root) memcpy(dst, src, ne * sizeof(long)); /* the active-set root's dest is not written */
        }
        break;
      case 1:
        if (!aset) shmem_long_fcollect(team, dst, src, ne);
        else shmem_fcollect64(dst, src, ne, wstart, logst, n, ps);
        break;
      case 2:
        if (!aset) shmem_long_collect(team, dst, src, mine);
        else shmem_collect64(dst, src, mine, wstart, logst, n, ps);
        break;
      case 3:
        if (!aset) shmem_long_alltoall(team, dst, src, ne);
        else shmem_alltoall64(dst, src, ne, wstart, logst, n, ps);
        break;
      case 4: /* dest stride 2, source stride 3: element j of block b is src[3 (b ne + j)] */
        for (long i = 0; i < (long)ne * n; i++) src[3 * i] = val(c, r, (int)(i / (long)ne), i % (long)ne);
        if (!aset) shmem_long_alltoalls(team, dst, src, 2, 3, ne);
        else shmem_alltoalls64(dst, src, 2, 3, ne, wstart, logst, n, ps);
        break;
      case 5:
        if (!aset) shmem_long_sum_reduce(team, dst, src, ne);
        else shmem_long_sum_to_all(dst, src, (int)ne, wstart, logst, n, pWrk, ps);
        break;
      default:
        if (!aset) shmem_long_max_reduce(team, dst, src, ne);
        else shmem_long_max_to_all(dst, src, (int)ne, wstart, logst, n, pWrk, ps);
        break;
      }
      pause_if_slow(c);
      switch (form) {
      case 0:
        for (long i = 0; i < (long)ne; i++) check(what, c, i, dst[i], val(c, root, 0, i));
        break;
      case 1:
        for (long i = 0; i < (long)ne * n; i++) check(what, c, i, dst[i], val(c, (int)(i / (long)ne), 0, i % (long)ne));
        break;
      case 2: {
        long o = 0;
        for (int p = 0; p < n; p++)
          for (long j = 0; j < (long)ne - (p + c) % 3; j++, o++) check(what, c, o, dst[o], val(c, p, 0, j));
        break;
      }
      case 3:
        for (long i = 0; i < (long)ne * n; i++) check(what, c, i, dst[i], val(c, (int)(i / (long)ne), r, i % (long)ne));
        break;
      case 4:
        for (long i = 0; i < (long)ne * n; i++)
          check(what, c, 2 * i, dst[2 * i], val(c, (int)(i / (long)ne), r, i % (long)ne));
        break;
      case 5:
        for (long i = 0; i < (long)ne; i++) {
          long want = 0;
          for (int p = 0; p < n; p++) want += val(c, p, 0, i);
          check(what, c, i, dst[i], want);
        }
        break;
      default:
        for (long i = 0; i < (long)ne; i++) check(what, c, i, dst[i], val(c, n - 1, 0, i));
        break;
      }
    }
    if (form_errors) fprintf(stderr, "test_b2b: PE %d: %s: FAILED (%d wrong elements)\n", me, what, form_errors);
    /* The next form starts together (not needed for safety: it keeps the forms apart). */
    if (aset) shmem_barrier_all();
    else shmem_team_sync(team);
  }
}

int main(void) {
  for (int k = 0; k < SHMEM_SYNC_SIZE; k++) pSync[0][k] = pSync[1][k] = SHMEM_SYNC_VALUE;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  for (int p = 0; p < npes; p++)
    if (!shmem_ptr(&pSync[0][0], p)) CALLS = 12;
  slow = npes > 1 && me == npes - 1;
  src = shmem_malloc(sizeof(long) * LARGE * (size_t)npes * 3);
  dst = shmem_malloc(sizeof(long) * LARGE * (size_t)npes * 2);
  if (!src || !dst) {
    fprintf(stderr, "test_b2b: PE %d: out of symmetric memory\n", me);
    return 1;
  }
  shmem_team_t sub = SHMEM_TEAM_INVALID; /* every PE but PE 0 */
  if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &sub);
  static const size_t sizes[] = {SMALL, LARGE};
  for (int s = 0; s < 2; s++) {
    run_team("world", SHMEM_TEAM_WORLD, 0, 0, 0, npes, me, sizes[s]);
    if (sub != SHMEM_TEAM_INVALID) run_team("split", sub, 0, 1, 0, npes - 1, shmem_team_my_pe(sub), sizes[s]);
    shmem_barrier_all();
    run_team("active set", SHMEM_TEAM_INVALID, 1, 0, 0, npes, me, sizes[s]);
    shmem_barrier_all();
  }
  static long bad, any_bad; /* symmetric: every PE learns whether any PE failed, and all exit 1 */
  bad = errors;
  shmem_long_max_reduce(SHMEM_TEAM_WORLD, &any_bad, &bad, 1);
  if (any_bad) {
    if (me == 0) fprintf(stderr, "test_b2b: %d PEs: FAILED\n", npes);
    shmem_finalize();
    return 1;
  }
  if (sub != SHMEM_TEAM_INVALID) shmem_team_destroy(sub);
  if (me == 0) printf("test_b2b: %d PEs: ok\n", npes);
  shmem_finalize();
  return 0;
}
