/*
 * test_sync.c - both forms of shmem_sync (spec 1.5 9.9.4): shmem_sync(team), the C11 one-argument form (returns 0),
 * and the deprecated shmem_sync(PE_start, logPE_stride, PE_size, pSync), selected by argument count.
 *
 * Each round every member writes a value for the round into its slot on every member, quiets, syncs, and then
 * reads every member's slot: a sync that let a PE through before the others arrived shows a stale value. Slots
 * alternate between two arrays, so round r + 2 overwrites round r only after the sync of round r + 1, which every
 * reader of round r has reached. Forms: SHMEM_TEAM_WORLD, a split team (the even PEs), the active set of all PEs,
 * the active set of the even PEs (logPE_stride 1), and the deprecated routine through a function pointer.
 */
#include <shmem.h>
#include <stdio.h>

#define ROUNDS 100
#define MAXPE 64

static long slot[2][MAXPE];
static long pSync[2][SHMEM_SYNC_SIZE];
static int me, npes, fails;

static long val(int form, int r, int pe) { return ((long)form << 40) + ((long)r << 16) + pe; }

/* members: world PEs start + i * stride, i < size (this PE among them). sync(form) synchronizes them. */
static void rounds(int form, int start, int stride, int size, void (*sync)(int form)) {
  for (int r = 0; r < ROUNDS; r++) {
    long *s = slot[r & 1];
    for (int i = 0; i < size; i++) shmem_long_p(&s[me], val(form, r, me), start + i * stride);
    shmem_quiet();
    sync(form);
    for (int i = 0; i < size; i++) {
      int pe = start + i * stride;
      if (s[pe] != val(form, r, pe) && fails++ < 10)
        fprintf(stderr, "test_sync: PE %d: form %d round %d: slot of PE %d holds %#lx, want %#lx\n", me, form, r, pe,
                (unsigned long)s[pe], (unsigned long)val(form, r, pe));
    }
  }
}

static shmem_team_t even;
static void (*deprecated)(int, int, int, long *) = shmem_sync; /* no parentheses: the routine, not the macro */

static void sync_form(int form) {
  int rc = 0;
  switch (form) {
  case 0: rc = shmem_sync(SHMEM_TEAM_WORLD); break;
  case 1: rc = shmem_sync(even); break;
  case 2: shmem_sync(0, 0, npes, pSync[0]); break;
  case 3: shmem_sync(0, 1, (npes + 1) / 2, pSync[1]); break;
  case 4: deprecated(0, 0, npes, pSync[0]); break;
  }
  if (rc != 0 && fails++ < 10) fprintf(stderr, "test_sync: PE %d: form %d: shmem_sync returned %d\n", me, form, rc);
}

int main(void) {
  for (int k = 0; k < SHMEM_SYNC_SIZE; k++) pSync[0][k] = pSync[1][k] = SHMEM_SYNC_VALUE;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > MAXPE) return 77;
  if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even)) return 3;
  shmem_barrier_all();
  rounds(0, 0, 1, npes, sync_form);
  shmem_barrier_all();
  if (me % 2 == 0) rounds(1, 0, 2, (npes + 1) / 2, sync_form);
  shmem_barrier_all();
  rounds(2, 0, 1, npes, sync_form);
  shmem_barrier_all();
  if (me % 2 == 0) rounds(3, 0, 2, (npes + 1) / 2, sync_form);
  shmem_barrier_all();
  rounds(4, 0, 1, npes, sync_form);
  shmem_barrier_all();
  for (int k = 0; k < SHMEM_SYNC_SIZE; k++)
    if ((pSync[0][k] != SHMEM_SYNC_VALUE || pSync[1][k] != SHMEM_SYNC_VALUE) && fails++ < 10)
      fprintf(stderr, "test_sync: PE %d: pSync[.][%d] not back to SHMEM_SYNC_VALUE\n", me, k);
  shmem_team_destroy(even);
  shmem_finalize();
  if (!fails && me == 0) printf("test_sync: OK (%d PEs)\n", npes);
  return fails ? 1 : 0;
}
