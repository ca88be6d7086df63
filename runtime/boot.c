/* boot.c - the PE side of the bootstrap: rank and size from oshrun's environment, and an all-gather/barrier over its
 * Unix socket. Without oshrun's environment the program is a 1-PE job (as every OpenSHMEM allows). */
#include "shoal.h"
#include "boot_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int env_int(const char *name, int *out) {
  const char *s = getenv(name);
  long v;
  if (!s || shoal_env_parse_long(s, &v) || v < 0 || v > 1 << 24) return SHOAL_ERR_INVAL;
  *out = (int)v;
  return SHOAL_OK;
}

static shoal_status_t io_all(int fd, void *buf, size_t len, bool wr) {
  char *p = buf;
  while (len) {
    ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SHOAL_ERR_IO;
    p += n;
    len -= (size_t)n;
  }
  return SHOAL_OK;
}

static shoal_status_t send_msg(shoal_boot_t *b, uint32_t type, int64_t arg, const void *data, size_t len) {
  shoal_boot_msg_t m = {.type = type, .rank = b->rank, .arg = arg, .len = len};
  if (io_all(b->fd, &m, sizeof m, true)) return SHOAL_ERR_IO;
  return len ? io_all(b->fd, (void *)data, len, true) : SHOAL_OK;
}

shoal_status_t shoal_boot_init(shoal_boot_t *b) {
  shoal_boot_t nb = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .fd = -1, .launcher = 0};
  const char *addr = getenv(SHOAL_BOOT_ENV_ADDR);
  if (!addr) {
    *b = nb;
    SHOAL_DEBUG(SHOAL_SUB_BOOT, "no %s: running as a 1-PE job", SHOAL_BOOT_ENV_ADDR);
    return SHOAL_OK;
  }
  if (env_int(SHOAL_BOOT_ENV_RANK, &nb.rank) || env_int(SHOAL_BOOT_ENV_SIZE, &nb.size) ||
      env_int(SHOAL_BOOT_ENV_LOCAL_RANK, &nb.local_rank) || env_int(SHOAL_BOOT_ENV_LOCAL_SIZE, &nb.local_size) ||
      nb.size < 1 || nb.rank >= nb.size) {
    shoal_warn("shmem_init: bad bootstrap environment (SHOAL_RANK/SHOAL_SIZE) from oshrun");
    return SHOAL_ERR_INVAL;
  }
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t alen = strlen(addr);
  if (alen + 1 > sizeof sa.sun_path) return SHOAL_ERR_INVAL;
  memcpy(sa.sun_path + 1, addr, alen); /* abstract namespace: leading NUL */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return SHOAL_ERR_IO;
  if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + alen))) {
    shoal_warn("shmem_init: cannot reach oshrun at @%s: %s", addr, strerror(errno));
    close(fd);
    return SHOAL_ERR_IO;
  }
  nb.fd = fd;
  nb.launcher = getppid();
  if (send_msg(&nb, SHOAL_BOOT_HELLO, getpid(), NULL, 0)) {
    close(fd);
    return SHOAL_ERR_IO;
  }
  *b = nb;
  SHOAL_DEBUG(SHOAL_SUB_BOOT, "rank %d of %d (local %d of %d) connected to oshrun", b->rank, b->size, b->local_rank,
              b->local_size);
  return SHOAL_OK;
}

shoal_status_t shoal_boot_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  if (b->fd < 0) {
    if (len) memmove(out, in, len);
    return SHOAL_OK;
  }
  shoal_boot_msg_t m;
  if (send_msg(b, SHOAL_BOOT_ALLGATHER, 0, in, len) || io_all(b->fd, &m, sizeof m, false) ||
      m.len != (uint64_t)len * (uint64_t)b->size)
    return SHOAL_ERR_IO;
  return len ? io_all(b->fd, out, m.len, false) : SHOAL_OK;
}

shoal_status_t shoal_boot_barrier(shoal_boot_t *b) { return shoal_boot_allgather(b, NULL, NULL, 0); }

void shoal_boot_abort(shoal_boot_t *b, int status) {
  if (b->fd >= 0) send_msg(b, SHOAL_BOOT_ABORT, status, NULL, 0);
}

void shoal_boot_fini(shoal_boot_t *b) {
  if (b->fd < 0) return;
  send_msg(b, SHOAL_BOOT_FINI, 0, NULL, 0);
  close(b->fd);
  b->fd = -1;
}
