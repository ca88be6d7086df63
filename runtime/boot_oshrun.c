/* boot_oshrun.c - the bootstrap of a PE started by oshrun: rank and size from its environment, all-gathers and
 * barriers through oshrun's Unix socket (boot_proto.h says how oshrun checks who connects). */
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

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static shoal_status_t oshrun_init(shoal_boot_t *b) {
  const char *addr = getenv(SHOAL_BOOT_ENV_ADDR), *hex = getenv(SHOAL_BOOT_ENV_SECRET);
  unsigned char secret[SHOAL_BOOT_SECRET_LEN];
  bool good = hex && strlen(hex) == 2 * SHOAL_BOOT_SECRET_LEN;
  for (int i = 0; good && i < SHOAL_BOOT_SECRET_LEN; i++) {
    int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
    good = hi >= 0 && lo >= 0;
    secret[i] = (unsigned char)(hi << 4 | lo);
  }
  if (!good || env_int(SHOAL_BOOT_ENV_RANK, &b->rank) || env_int(SHOAL_BOOT_ENV_SIZE, &b->size) ||
      env_int(SHOAL_BOOT_ENV_LOCAL_RANK, &b->local_rank) || env_int(SHOAL_BOOT_ENV_LOCAL_SIZE, &b->local_size) ||
      b->size < 1 || b->rank >= b->size || b->local_size != b->size || b->local_rank != b->rank) {
    shoal_warn("shmem_init: bad bootstrap environment from oshrun (%s, %s, SHOAL_RANK, SHOAL_SIZE)",
               SHOAL_BOOT_ENV_ADDR, SHOAL_BOOT_ENV_SECRET);
    return SHOAL_ERR_INVAL;
  }
  /* Nobody this PE starts needs the secret: a child program runs as a job of its own (boot.c). */
  unsetenv(SHOAL_BOOT_ENV_SECRET);
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
  /* The listener must be oshrun, our parent or an ancestor's process of our uid: not a stranger's socket. */
  struct ucred cr;
  socklen_t crl = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) || cr.uid != geteuid()) {
    shoal_warn("shmem_init: the bootstrap socket @%s belongs to uid %d, not to this job's user: refused", addr,
               (int)cr.uid);
    close(fd);
    return SHOAL_ERR_IO;
  }
  b->fd = fd;
  b->local = calloc((size_t)b->size, sizeof *b->local);
  if (!b->local || send_msg(b, SHOAL_BOOT_HELLO, getpid(), secret, sizeof secret)) {
    close(fd);
    b->fd = -1;
    free(b->local);
    b->local = NULL;
    return SHOAL_ERR_IO;
  }
  for (int p = 0; p < b->size; p++) b->local[p] = p; /* oshrun starts every PE on its own node */
  return SHOAL_OK;
}

static shoal_status_t oshrun_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  shoal_boot_msg_t m;
  if (send_msg(b, SHOAL_BOOT_ALLGATHER, 0, in, len) || io_all(b->fd, &m, sizeof m, false) ||
      m.type != SHOAL_BOOT_ALLGATHER || m.len != (uint64_t)len * (uint64_t)b->size)
    return SHOAL_ERR_IO;
  return len ? io_all(b->fd, out, m.len, false) : SHOAL_OK;
}

static shoal_status_t oshrun_barrier(shoal_boot_t *b) { return oshrun_allgather(b, NULL, NULL, 0); }

static void oshrun_abort(shoal_boot_t *b, int status, const char *msg) {
  if (b->fd >= 0) send_msg(b, SHOAL_BOOT_ABORT, status, NULL, 0);
}

static void oshrun_fini(shoal_boot_t *b) {
  if (b->fd < 0) return;
  send_msg(b, SHOAL_BOOT_FINI, 0, NULL, 0);
  close(b->fd);
  b->fd = -1;
}

const shoal_boot_ops_t shoal_boot_oshrun_ops = {
  .size = sizeof(shoal_boot_ops_t), .name = "oshrun", .init = oshrun_init, .allgather = oshrun_allgather,
  .barrier = oshrun_barrier, .abort = oshrun_abort, .fini = oshrun_fini,
};
