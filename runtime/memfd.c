/* memfd.c - the memory files of the symmetric spaces (declared in shoal.h): made and sealed here, checked and mapped
 * from every peer of the node. The host heap (init.c) and the static data (static.c) both share theirs this way; a
 * file of its own so that static.c does not reach into init.c, which calls it. */
#include "shoal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int shoal_memfd_create(const char *name, size_t len) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, (off_t)len) || fcntl(fd, F_ADD_SEALS, SHOAL_MEMFD_SEALS)) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

const char *shoal_memfd_unfit(int fd, size_t len) {
  struct stat st;
  if (fd < 0) return "it sent no descriptor";
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) return "its descriptor is not a memory file";
  if ((uint64_t)st.st_size != (uint64_t)len) return "its descriptor has the wrong size";
  /* at least our seals (a kernel with vm.memfd_noexec adds F_SEAL_EXEC), and nothing that would stop our writes */
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & SHOAL_MEMFD_SEALS) != SHOAL_MEMFD_SEALS || (seals & (F_SEAL_WRITE | SHOAL_SEAL_FUTURE_WRITE)))
    return "its descriptor is not a memfd sealed against resizing";
  return NULL;
}

shoal_status_t shoal_memfd_share(int fd, size_t len, char **peer, char *why, size_t whylen) {
  int n = shoal_g.npes, *fds = calloc((size_t)n, sizeof *fds);
  uint64_t *tags = calloc((size_t)n, sizeof *tags);
  shoal_status_t rc = fds && tags ? shoal_boot_fd_allgather(&shoal_g.boot, fd, len, fds, tags) : SHOAL_ERR_NOMEM;
  if (rc) snprintf(why, whylen, "the node's descriptor exchange failed");
  for (int i = 0; !rc && i < shoal_g.boot.local_size; i++) {
    int p = shoal_g.boot.local[i];
    if (p == shoal_g.me) continue;
    const char *bad = tags[p] != len ? "it announced another size" : shoal_memfd_unfit(fds[p], len);
    char *m = bad ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fds[p], 0);
    if (m == MAP_FAILED) {
      snprintf(why, whylen, "PE %d: %s", p, bad ? bad : strerror(errno));
      rc = SHOAL_ERR_IO;
      for (int j = 0; j < i; j++)
        if (shoal_g.boot.local[j] != shoal_g.me) munmap(peer[shoal_g.boot.local[j]], len), peer[shoal_g.boot.local[j]] = NULL;
      break;
    }
    peer[p] = m;
  }
  for (int p = 0; fds && p < n; p++)
    if (fds[p] >= 0) close(fds[p]); /* the mappings keep the memory */
  free(fds);
  free(tags);
  return rc;
}
