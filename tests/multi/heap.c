/* heap.c - symmetric heap management (spec 9.3) and the setup queries (spec 9.2).
 *
 * Usage: heap NPES HEAPBYTES   (run with SHMEM_SYMMETRIC_SIZE=HEAPBYTES; oshrun -n NPES)
 * Checks: init_thread/query_thread levels, version/name (also before init), my_pe/n_pes; malloc/calloc/align/realloc/
 * free/malloc_with_hints return the same offsets on every PE (gathered and compared) and honour alignment; malloc(0),
 * calloc overflow and bad alignments return NULL; exhaustion returns NULL and the heap recovers after free; realloc
 * keeps contents when it grows in place, when it moves and when it shrinks; shmem_ptr, shmem_addr_accessible and
 * shmem_pe_accessible answer correctly for heap, static, stack and private addresses. */
#include "test_common.h"

#include <limits.h>
#include <shmemx.h>

#define MAXREC 64
static int me, npes, right, left;
static long offs[MAXREC]; /* offsets of this PE's allocations from the first one */
static int nrec;
static char *origin;
static long table[16][MAXREC]; /* static: gathered offsets of every PE */
static int static_var[4];

static void record(void *p) {
  if (nrec < MAXREC) offs[nrec++] = p ? (long)((char *)p - origin) : -1;
}

/* Writes 'me + salt' into the first int of p on the right neighbour and checks what the left one wrote: proves that
 * the address is the same object on every PE. */
static void check_symmetric(void *p, int salt, const char *what) {
  shmem_int_p((int *)p, me * 1000 + salt, right);
  shmem_barrier_all();
  CHECK(*(int *)p == left * 1000 + salt, "%s: PE %d's put landed elsewhere (%d)", what, left, *(int *)p);
  shmem_barrier_all();
}

static void test_setup(int want_npes) {
  CHECK(npes == want_npes, "shmem_n_pes() = %d, want %d", npes, want_npes);
  CHECK(me >= 0 && me < npes, "shmem_my_pe() = %d", me);
  /* One node (oshrun): every PE; over hosts or SHOAL_NODE_PES runs: a part of them, this one among them. */
  CHECK(shmemx_local_n_pes() >= 1 && shmemx_local_n_pes() <= npes && shmemx_local_pe() >= 0 &&
        shmemx_local_pe() < shmemx_local_n_pes() && (shmemx_local_n_pes() < npes || shmemx_local_pe() == me),
        "local pe %d of %d", shmemx_local_pe(), shmemx_local_n_pes());
  /* Every PE writes its number into its slot everywhere: each number appears exactly once. */
  int *slots = shmem_calloc((size_t)npes, sizeof(int));
  CHECK(slots != NULL, "calloc of %d slots failed", npes);
  for (int p = 0; p < npes; p++) shmem_int_p(&slots[me], me + 1, p);
  shmem_barrier_all();
  for (int p = 0; p < npes; p++) CHECK(slots[p] == p + 1, "slot %d = %d: PE numbers are not distinct", p, slots[p]);
  shmem_free(slots);
  int prov = -1;
  shmem_query_thread(&prov);
  CHECK(prov == SHMEM_THREAD_MULTIPLE, "query_thread: %d, want SHMEM_THREAD_MULTIPLE", prov);
  shmem_init(); /* a second init is a no-op */
  CHECK(shmem_my_pe() == me && shmem_n_pes() == npes, "state changed by a second shmem_init");
}

static void test_alloc_sym(void) {
  origin = shmem_malloc(1);
  CHECK(origin != NULL, "malloc(1) returned NULL");
  record(origin);
  CHECK((uintptr_t)origin % 64 == 0, "malloc(1) = %p is not 64-byte aligned", (void *)origin);
  CHECK(shmem_malloc(0) == NULL, "malloc(0) is not NULL");
  CHECK(shmem_calloc(0, 8) == NULL && shmem_calloc(8, 0) == NULL, "calloc of 0 bytes is not NULL");
  CHECK(shmem_calloc(SIZE_MAX / 2, 4) == NULL, "calloc whose size overflows is not NULL");
  CHECK(shmem_align(3, 64) == NULL && shmem_align(0, 64) == NULL && shmem_align(48, 64) == NULL,
        "shmem_align with an alignment that is not a power of two is not NULL");
  CHECK(shmem_align(64, 0) == NULL, "shmem_align(64, 0) is not NULL");
  /* Odd sizes, each symmetric. */
  static const size_t odd[] = {1, 3, 63, 65, 1000, 4097, 12345};
  void *keep[8];
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
    keep[i] = shmem_malloc(odd[i]);
    CHECK(keep[i] && (uintptr_t)keep[i] % 64 == 0, "malloc(%zu) = %p", odd[i], keep[i]);
    record(keep[i]);
    if (keep[i] && odd[i] >= sizeof(int)) check_symmetric(keep[i], (int)i, "malloc");
  }
  /* Alignment: every power of two up to 4 MiB. */
  for (size_t al = 1; al <= ((size_t)4 << 20); al <<= 1) {
    void *p = shmem_align(al, 100);
    CHECK(p && (uintptr_t)p % al == 0, "shmem_align(%zu, 100) = %p is not aligned", al, p);
    record(p);
    if (p) check_symmetric(p, (int)al, "shmem_align");
    shmem_free(p);
  }
  void *h = shmem_malloc_with_hints(200, 0);
  CHECK(h && (uintptr_t)h % 64 == 0, "malloc_with_hints(200, 0) = %p", h);
  record(h);
  shmem_free(h);
  /* free, then the same size again: first fit returns the same block. */
  shmem_free(keep[2]);
  void *again = shmem_malloc(odd[2]);
  CHECK(again == keep[2], "malloc after free: %p, want the freed %p", again, keep[2]);
  record(again);
  /* calloc zeroes memory that held something else. */
  char *junk = shmem_malloc(8192);
  CHECK(junk != NULL, "malloc(8192) failed");
  memset(junk, POISON, 8192);
  shmem_free(junk);
  unsigned char *z = shmem_calloc(1024, 8);
  CHECK(z == (unsigned char *)junk, "calloc did not reuse the freed block (%p vs %p)", (void *)z, (void *)junk);
  record(z);
  long nz = 0;
  for (int i = 0; z && i < 8192; i++) nz += z[i] != 0;
  CHECK(nz == 0, "calloc(1024, 8): %ld bytes not zero", nz);
  shmem_free(z);
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) shmem_free(keep[i]);
  shmem_free(NULL); /* a no-op, but collective */
}

static void test_realloc(void) {
  unsigned char *p = shmem_malloc(100);
  for (int i = 0; i < 100; i++) p[i] = test_pat_byte(me, (size_t)i, 1);
  record(p);
  /* Grow in place (the heap after p is free). */
  unsigned char *q = shmem_realloc(p, 200);
  CHECK(q == p, "realloc(p, 200) moved (%p -> %p) although the space after p is free", (void *)p, (void *)q);
  record(q);
  for (int i = 100; i < 200; i++) q[i] = test_pat_byte(me, (size_t)i, 1);
  void *blocker = shmem_malloc(64);
  record(blocker);
  /* Grow with a used neighbour: moves, contents kept. */
  unsigned char *r = shmem_realloc(q, 5000);
  CHECK(r && r != q, "realloc(q, 5000) = %p with a blocker after q", (void *)r);
  record(r);
  long bad = 0;
  for (int i = 0; r && i < 200; i++) bad += r[i] != test_pat_byte(me, (size_t)i, 1);
  CHECK(bad == 0, "realloc (moved): %ld of 200 bytes changed", bad);
  if (r) check_symmetric(r + 4096, 7, "realloc (moved)");
  if (r) r[4096] = 0;
  /* Shrink: same address, prefix kept. */
  unsigned char *s = shmem_realloc(r, 50);
  CHECK(s == r, "realloc shrink moved (%p -> %p)", (void *)r, (void *)s);
  record(s);
  bad = 0;
  for (int i = 0; s && i < 50; i++) bad += s[i] != test_pat_byte(me, (size_t)i, 1);
  CHECK(bad == 0, "realloc (shrink): %ld of 50 bytes changed", bad);
  /* Too large: NULL, and the block is untouched. */
  size_t total = 0, largest = 0;
  shmemx_heap_info(&total, &largest);
  unsigned char *t = shmem_realloc(s, total + 1);
  CHECK(t == NULL, "realloc beyond the heap size returned %p", (void *)t);
  bad = 0;
  for (int i = 0; i < 50; i++) bad += s[i] != test_pat_byte(me, (size_t)i, 1);
  CHECK(bad == 0, "failed realloc changed %ld bytes of the block", bad);
  /* NULL acts as malloc, size 0 as free. */
  void *m = shmem_realloc(NULL, 64);
  CHECK(m != NULL && (uintptr_t)m % 64 == 0, "realloc(NULL, 64) = %p", m);
  record(m);
  CHECK(shmem_realloc(m, 0) == NULL, "realloc(m, 0) is not NULL");
  shmem_free(s);
  shmem_free(blocker);
}

static void test_exhaustion(size_t heap) {
  size_t total = 0, largest = 0;
  shmemx_heap_info(&total, &largest);
  CHECK(total == heap, "heap_info total %zu, want SHMEM_SYMMETRIC_SIZE %zu", total, heap);
  CHECK(largest > heap / 2 && largest <= heap, "largest free block %zu of %zu (the heap should be nearly empty)",
        largest, heap);
  CHECK(shmem_align((size_t)2 << 30, 64) == NULL, "shmem_align beyond 1 GiB is not NULL");
  CHECK(shmem_malloc(heap + 1) == NULL, "malloc(heap + 1) is not NULL");
  CHECK(shmem_malloc(SIZE_MAX) == NULL, "malloc(SIZE_MAX) is not NULL");
  /* Fill with 1/8 of the heap at a time until NULL. */
  void *blk[16];
  int nb = 0;
  while (nb < 16 && (blk[nb] = shmem_malloc(heap / 8)) != NULL) nb++;
  CHECK(nb == (int)(largest / (heap / 8)), "%d blocks of heap/8 fit in a largest free block of %zu", nb, largest);
  CHECK(shmem_malloc(heap / 8) == NULL, "malloc after exhaustion is not NULL");
  for (int i = 0; i < nb; i++) record(blk[i]);
  for (int i = nb - 1; i >= 0; i--) shmem_free(blk[i]);
  /* All free again, coalesced: a block of nearly the whole heap fits. */
  void *all = shmem_malloc(largest - 64); /* the largest block may start off a 64-byte boundary */
  CHECK(all != NULL, "malloc(%zu) after freeing everything failed", largest - 64);
  record(all);
  shmem_free(all);
}

static void test_access(void) {
  int stack_var = 0;
  int *priv = malloc(sizeof(int));
  int *p = shmem_malloc(64);
  for (int pe = 0; pe < npes; pe++) {
    CHECK(shmem_pe_accessible(pe) == 1, "pe_accessible(%d) != 1", pe);
    CHECK(shmem_addr_accessible(p, pe) == 1, "addr_accessible(heap, %d) != 1", pe);
    CHECK(shmem_addr_accessible(static_var, pe) == 1, "addr_accessible(static, %d) != 1", pe);
    CHECK(shmem_addr_accessible(&stack_var, pe) == 0, "addr_accessible(stack, %d) != 0", pe);
    CHECK(shmem_addr_accessible(priv, pe) == 0, "addr_accessible(malloc, %d) != 0", pe);
    /* Load/store reaches exactly the PEs of SHMEM_TEAM_SHARED (this node's, unless SHOAL_TRANSPORT=ofi). */
    int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
    CHECK((shmem_ptr(p, pe) != NULL) == shared, "shmem_ptr(heap, %d) is %p, PE %s SHMEM_TEAM_SHARED", pe,
          shmem_ptr(p, pe), shared ? "in" : "not in");
    CHECK((shmem_ptr(static_var, pe) != NULL) == shared, "shmem_ptr(static, %d) is %p, PE %s SHMEM_TEAM_SHARED", pe,
          shmem_ptr(static_var, pe), shared ? "in" : "not in");
    CHECK(shmem_ptr(&stack_var, pe) == NULL, "shmem_ptr(stack, %d) is not NULL", pe);
    CHECK(shmem_ptr(priv, pe) == NULL, "shmem_ptr(malloc, %d) is not NULL", pe);
  }
  static const int bad_pes[] = {-1, INT_MIN, INT_MAX};
  for (size_t i = 0; i < 3; i++) {
    CHECK(shmem_pe_accessible(bad_pes[i]) == 0, "pe_accessible(%d) != 0", bad_pes[i]);
    CHECK(shmem_addr_accessible(p, bad_pes[i]) == 0, "addr_accessible(p, %d) != 0", bad_pes[i]);
    CHECK(shmem_ptr(p, bad_pes[i]) == NULL, "shmem_ptr(p, %d) != NULL", bad_pes[i]);
  }
  CHECK(shmem_pe_accessible(npes) == 0 && shmem_addr_accessible(p, npes) == 0 && shmem_ptr(p, npes) == NULL,
        "PE npes is accessible");
  CHECK(shmem_ptr(p, me) == p && shmem_ptr(static_var, me) == static_var, "shmem_ptr(x, me) != x");
  /* Stores through shmem_ptr reach the peer's object, heap and static. */
  p[0] = -1;
  static_var[1] = -1;
  shmem_barrier_all();
  /* (Where the neighbours are not load/store reachable, SHOAL_TRANSPORT=ofi, a put does the same.) */
  int *rp = shmem_ptr(&p[0], right), *rs = shmem_ptr(&static_var[1], right);
  if (rp) *rp = me + 10;
  else shmem_int_p(&p[0], me + 10, right);
  if (rs) *rs = me + 20;
  else shmem_int_p(&static_var[1], me + 20, right);
  shmem_barrier_all();
  CHECK(p[0] == left + 10, "store through shmem_ptr(heap): %d, want %d", p[0], left + 10);
  CHECK(static_var[1] == left + 20, "store through shmem_ptr(static): %d, want %d", static_var[1], left + 20);
  shmem_free(p);
  free(priv);
}

int main(int argc, char **argv) {
  test_name = "heap";
  if (argc != 3) {
    fprintf(stderr, "usage: heap NPES HEAPBYTES\n");
    return 2;
  }
  /* Queries that are valid before init. */
  int major = -1, minor = -1;
  char name[SHMEM_MAX_NAME_LEN];
  memset(name, POISON, sizeof name);
  shmem_info_get_version(&major, &minor);
  shmem_info_get_name(name);
  int prov = -1;
  int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &prov);
  me = shmem_my_pe();
  npes = shmem_n_pes();
  right = (me + 1) % npes;
  left = (me + npes - 1) % npes;
  CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION && major == 1 && minor == 5,
        "info_get_version: %d.%d", major, minor);
  CHECK(memchr(name, 0, sizeof name) && !strcmp(name, SHMEM_VENDOR_STRING) && !strcmp(name, "Shoal"),
        "info_get_name: \"%.20s\"", name);
  CHECK(rc == 0 && prov == SHMEM_THREAD_MULTIPLE, "init_thread: rc %d, provided %d", rc, prov);
  test_setup(atoi(argv[1]));
  test_alloc_sym();
  test_realloc();
  test_exhaustion((size_t)strtoull(argv[2], NULL, 0));
  test_access();
  /* Every PE made the same allocations: gather the offset lists on every PE and compare them. */
  CHECK(npes <= 16, "too many PEs for the table");
  for (int p = 0; p < npes && npes <= 16; p++) shmem_long_put(table[me], offs, MAXREC, p);
  shmem_barrier_all();
  for (int p = 0; p < npes && npes <= 16; p++)
    for (int i = 0; i < nrec; i++)
      CHECK(table[p][i] == offs[i], "allocation %d: offset %ld on PE %d, %ld here", i, table[p][i], p, offs[i]);
  CHECK(nrec > 30, "only %d allocations recorded", nrec);
  return test_finish();
}
