/* log.c - one-line errors and level-checked debug output, prefixed with host, pid and PE. */
#include "shoal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

unsigned shoal_log_mask;
/* How a fatal error stops the whole job (shoal_fatal, after its line): the bootstrap sets it when it comes up
 * (shoal_boot_init), so that log.c, which boot.c uses, calls nothing of boot.c. NULL until then: this PE only exits. */
void (*shoal_log_abort_hook)(int status);

static const struct { const char *name; unsigned bit; } subsys_names[] = {
  {"boot", SHOAL_SUB_BOOT}, {"topo", SHOAL_SUB_TOPO}, {"heap", SHOAL_SUB_HEAP}, {"shm", SHOAL_SUB_SHM},
  {"ofi", SHOAL_SUB_OFI},   {"gpu", SHOAL_SUB_GPU},   {"coll", SHOAL_SUB_COLL}, {"all", SHOAL_SUB_ALL},
};

shoal_status_t shoal_log_parse_subsys(const char *s, unsigned *mask, const char **bad, size_t *badlen) {
  unsigned m = 0;
  while (*s) {
    size_t n = strcspn(s, ",");
    if (n) {
      size_t i;
      for (i = 0; i < sizeof subsys_names / sizeof subsys_names[0]; i++)
        if (strlen(subsys_names[i].name) == n && !strncmp(s, subsys_names[i].name, n)) break;
      if (i == sizeof subsys_names / sizeof subsys_names[0]) {
        if (bad) *bad = s;
        if (badlen) *badlen = n;
        return SHOAL_ERR_INVAL;
      }
      m |= subsys_names[i].bit;
    }
    s += n + (s[n] == ',');
  }
  *mask = m;
  return SHOAL_OK;
}

/* Before the bootstrap is up (environment errors), the rank oshrun gave is still known from the environment. */
static int pe_for_log(void) {
  if (shoal_g.state || shoal_g.boot.size) return shoal_g.state ? shoal_g.me : shoal_g.boot.rank;
  const char *r = getenv("SHOAL_RANK");
  return r ? atoi(r) : 0;
}

void shoal_log_debug_(enum shoal_subsys sub, const char *fmt, ...) {
  char host[64] = "?", line[1024];
  gethostname(host, sizeof host);
  const char *name = "?";
  for (size_t i = 0; i < sizeof subsys_names / sizeof subsys_names[0]; i++)
    if (subsys_names[i].bit == (unsigned)sub) name = subsys_names[i].name;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "shoal[%s:%d PE %d %s]: %s\n", host, (int)getpid(), pe_for_log(), name, line);
}

/* Init's steps timed (SHMEM_DEBUG=1 SHOAL_DEBUG_SUBSYS=boot): where a slow start goes, per PE (issue 29). */
void shoal_init_mark(const char *step) {
  static double t0, last;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
  if (!step) {
    t0 = last = now;
    return;
  }
  SHOAL_DEBUG(SHOAL_SUB_BOOT, "init: %s %.1f ms (%.1f ms since shmem_init began)", step, now - last, now - t0);
  last = now;
}

void shoal_warn(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "shoal: PE %d: %s\n", pe_for_log(), line);
}

_Noreturn void shoal_fatal(const char *routine, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* One write so that lines of several PEs do not interleave. */
  char out[1200];
  int n = snprintf(out, sizeof out, "shoal: PE %d: %s: %s\n", pe_for_log(), routine, line);
  if (n < 0) n = 0;
  if (n >= (int)sizeof out) { /* truncated: end with the newline, and write no NUL */
    n = sizeof out - 1;
    out[n - 1] = '\n';
  }
  fflush(stdout);
  if (write(2, out, (size_t)n) < 0) { /* nothing more to do */ }
  if (shoal_log_abort_hook) shoal_log_abort_hook(1);
  _exit(1);
}

_Noreturn void shoal_check_init_fail(const char *routine) {
  shoal_fatal(routine, shoal_g.state == 0 ? "called before shmem_init" : "called after shmem_finalize");
}
