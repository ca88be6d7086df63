/* static.c - the program's data and bss segments as symmetric objects (spec 3.1: global and static variables).
 *
 * At init the executable's writable segment is moved, in place and with its contents, onto a memfd mapped at the
 * same address (MAP_FIXED|MAP_SHARED); every PE of the node then maps every peer's memfd, exactly as for the heap.
 * Variables keep their addresses, loads and stores stay plain, AMOs on static variables are real atomics, and with
 * ASLR/PIE (segments at different addresses in every PE) translation is still one add through the cached delta.
 * A process that forks after shmem_init shares these pages with its child (as it does the heap). */
#include "shoal.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct { uintptr_t lo, hi, relro_hi; bool found; } seg_t;

static int find_main(struct dl_phdr_info *info, size_t size, void *arg) {
  seg_t *s = arg;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && ph->p_memsz) {
      if (!s->found || lo < s->lo) s->lo = lo;
      if (!s->found || hi > s->hi) s->hi = hi;
      s->found = true;
    } else if (ph->p_type == PT_GNU_RELRO) {
      s->relro_hi = hi;
    }
  }
  return 1; /* the first object is the executable */
}

static ptrdiff_t *static_delta;
static char **static_peer;
static size_t *static_lim; /* [npes] the space's lim: len for PEs mapped here, else 0; always allocated */
static size_t static_len;

/* Returns SHOAL_OK also when the OS refuses: then static data is simply not symmetric (said once). */
shoal_status_t shoal_static_init(void) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  seg_t s = {0};
  dl_iterate_phdr(find_main, &s);
  uintptr_t lo = 0, hi = 0;
  const char *why = NULL;
  int fd = -1;
  if (s.found) {
    lo = s.lo & ~(page - 1);
    if (s.relro_hi > lo && s.relro_hi <= s.hi) lo = s.relro_hi & ~(page - 1); /* read-only after relocation */
    hi = (s.hi + page - 1) & ~(page - 1);
  }
  size_t len = hi - lo;
  if (!s.found || !len) {
    why = "no writable segment found in the executable";
  } else if ((fd = shoal_memfd_create("shoal-static", len)) < 0 ||
             /* the raw system call: the segment is copied whole, redzones that sanitizers poison included */
             syscall(SYS_pwrite64, fd, (void *)lo, len, (off_t)0) != (long)len) {
    why = strerror(errno);
  } else if (mmap((void *)lo, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    why = strerror(errno); /* the original private mapping is still in place */
  }
  /* Every PE reports, so that all agree whether static data is symmetric. */
  uint64_t mine = why ? 0 : len;
  int n = shoal_g.npes;
  uint64_t *all = calloc((size_t)n, sizeof mine);
  static_delta = calloc((size_t)n, sizeof *static_delta);
  static_peer = calloc((size_t)n, sizeof *static_peer);
  static_lim = calloc((size_t)n, sizeof *static_lim);
  if (!all || !static_delta || !static_peer || !static_lim ||
      shoal_boot_allgather(&shoal_g.boot, &mine, all, sizeof mine))
    return SHOAL_ERR_NOMEM;
  shoal_g.space[SHOAL_SPACE_STATIC].lim = static_lim; /* read inline by rma.c and amo.h even when size is 0 */
  for (int p = 0; p < n && !why; p++)
    if (all[p] != len) why = all[p] ? "PEs run different executables (data segments differ in size)"
                                    : "another PE could not share them";
  char whybuf[200];
  bool share = shoal_env_choice("SHOAL_TRANSPORT") != 2; /* SHOAL_TRANSPORT=ofi: peers are not mapped */
  if (share && shoal_memfd_share(why ? -1 : fd, len, static_peer, whybuf, sizeof whybuf) && !why) why = whybuf;
  static_peer[shoal_g.me] = (char *)lo;
  for (int p = 0; p < n && !why; p++)
    if (static_peer[p]) static_delta[p] = static_peer[p] - (char *)lo, static_lim[p] = len;
  /* Agree: if any PE failed, nobody uses static data as symmetric. */
  int ok = !why, *oks = calloc((size_t)n, sizeof(int));
  if (!oks || shoal_boot_allgather(&shoal_g.boot, &ok, oks, sizeof ok)) return SHOAL_ERR_NOMEM;
  for (int p = 0; p < n; p++) ok &= oks[p];
  free(oks);
  free(all);
  if (fd >= 0) close(fd);
  if (!ok) {
    for (int p = 0; p < n; p++)
      if (p != shoal_g.me && static_peer[p]) munmap(static_peer[p], len), static_peer[p] = NULL;
    memset(static_lim, 0, (size_t)n * sizeof *static_lim);
    if (shoal_g.me == 0 || why)
      shoal_warn("shmem_init: global and static variables are not symmetric here (%s); use the symmetric heap",
                 why ? why : "another PE could not share them");
    return SHOAL_OK;
  }
  static_len = len;
  shoal_g.space[SHOAL_SPACE_STATIC] = (shoal_space_t){
      .name = "static data", .base = lo, .size = len, .delta = static_delta, .lim = static_lim};
  SHOAL_DEBUG(SHOAL_SUB_HEAP, "static data %p, %zu bytes, shared with %d PEs", (void *)lo, len, n);
  return SHOAL_OK;
}

void shoal_static_fini(void) {
  for (int p = 0; static_len && p < shoal_g.npes; p++)
    if (p != shoal_g.me && static_peer[p]) munmap(static_peer[p], static_len);
  /* The own segment stays mapped (it is the program's data); it becomes private to this process again in effect. */
  free(static_delta);
  free(static_peer);
  free(static_lim);
  static_delta = NULL;
  static_peer = NULL;
  static_lim = NULL;
  static_len = 0;
  memset(&shoal_g.space[SHOAL_SPACE_STATIC], 0, sizeof(shoal_space_t));
}
