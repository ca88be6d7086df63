/* boot_node.c - descriptors between the PEs of one node (heap, static data and device heap memfds/handles).
 *
 * The node's leader (its lowest rank) listens on an abstract SOCK_SEQPACKET socket with a random name; the name, a
 * random secret and every PE's pid go through the launcher's bootstrap, which only this job's PEs can take part in.
 * Before anything is read from a connection the leader checks its SO_PEERCRED: this user's uid and the pid of a PE
 * of this node that has not connected yet; then the PE's hello must carry the secret and its rank. A PE checks the
 * leader's pid and uid the same way before it sends a descriptor. A round: every PE sends its descriptor to the
 * leader (SCM_RIGHTS), which sends each PE every other PE's. Reads never block (poll with a deadline), and nothing a
 * stranger sends is read: its connection is closed when accepted. */
#include "shoal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NODE_MAGIC 0x53484e44u /* "SHND" */
#define NODE_TIMEOUT_S 60.0
enum { REC_HELLO = 1, REC_FD = 2, REC_NOFD = 3 };

typedef struct node_rec {
  uint32_t magic, round;
  int32_t rank, kind;
  uint64_t tag;
  unsigned char secret[16];
} node_rec_t;

typedef struct node_info {
  int64_t pid;
  char name[48];
  unsigned char secret[16];
} node_info_t;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static socklen_t node_addr(const char *name, struct sockaddr_un *a) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  size_t l = strlen(name);
  memcpy(a->sun_path + 1, name, l);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
}

static int leader(const shoal_boot_t *b) { return b->local[0]; }

/* Index in local[] of the PE with this pid that has no connection yet, or -1. */
static int local_by_pid(const shoal_boot_t *b, pid_t pid) {
  for (int i = 1; i < b->local_size; i++)
    if (b->pids[b->local[i]] == pid && b->node_conn[i] < 0) return i;
  return -1;
}

static bool peer_is(int fd, pid_t pid, pid_t *got_pid, uid_t *got_uid) {
  struct ucred cr = {0};
  socklen_t l = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l)) return false;
  *got_pid = cr.pid, *got_uid = cr.uid;
  return cr.uid == geteuid() && (pid < 0 || cr.pid == pid);
}

static void refused(const char *what, pid_t pid, uid_t uid) {
  static int said;
  if (said++ < 3) /* a flood of strangers must not flood the job's output */
    shoal_warn("shmem_init: node socket: refused a connection from pid %d, uid %d (%s)", (int)pid, (int)uid, what);
}

shoal_status_t shoal_boot_node_init(shoal_boot_t *b) {
  int n = b->size, me = b->rank;
  b->node_listen = b->node_fd = -1;
  b->pids = calloc((size_t)n, sizeof *b->pids);
  node_info_t mine = {.pid = getpid()}, *all = calloc((size_t)n, sizeof *all);
  shoal_status_t rc = SHOAL_ERR_NOMEM;
  if (!b->pids || !all) goto out;
  if (b->local_size > 1 && me == leader(b)) {
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd ||
        getrandom(mine.secret, sizeof mine.secret, 0) != (ssize_t)sizeof mine.secret) {
      shoal_warn("shmem_init: getrandom: %s", strerror(errno));
      rc = SHOAL_ERR_IO;
      goto out;
    }
    int l = snprintf(mine.name, sizeof mine.name, "shoal-node-");
    for (size_t i = 0; i < sizeof rnd; i++) l += snprintf(mine.name + l, sizeof mine.name - (size_t)l, "%02x", rnd[i]);
    struct sockaddr_un a;
    socklen_t al = node_addr(mine.name, &a);
    b->node_listen = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    b->node_conn = malloc((size_t)b->local_size * sizeof *b->node_conn);
    if (b->node_listen < 0 || !b->node_conn || bind(b->node_listen, (struct sockaddr *)&a, al) ||
        listen(b->node_listen, SOMAXCONN)) {
      shoal_warn("shmem_init: node socket @%s: %s", mine.name, strerror(errno));
      rc = SHOAL_ERR_IO;
      goto out;
    }
    for (int i = 0; i < b->local_size; i++) b->node_conn[i] = -1;
  }
  if ((rc = b->ops->allgather(b, &mine, all, sizeof mine))) goto out;
  for (int i = 0; i < b->local_size; i++) b->pids[b->local[i]] = (pid_t)all[b->local[i]].pid;
  memcpy(b->node_name, all[leader(b)].name, sizeof b->node_name);
  b->node_name[sizeof b->node_name - 1] = 0;
  memcpy(b->node_secret, all[leader(b)].secret, sizeof b->node_secret);
  rc = SHOAL_OK;
out:
  free(all);
  if (rc) shoal_boot_node_close(b);
  return rc;
}

void shoal_boot_node_close(shoal_boot_t *b) {
  if (b->node_listen >= 0) close(b->node_listen);
  if (b->node_fd >= 0) close(b->node_fd);
  for (int i = 0; b->node_conn && i < b->local_size; i++)
    if (b->node_conn[i] >= 0) close(b->node_conn[i]);
  free(b->node_conn);
  b->node_conn = NULL;
  b->node_listen = b->node_fd = -1;
}


/* Wait until fd is ready for events, or the deadline. */
static bool wait_fd(int fd, short events, double deadline) {
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) return false;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

static bool send_rec(int fd, const node_rec_t *r, int pass, double deadline) {
  union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct iovec iov = {(void *)r, sizeof *r};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  if (pass >= 0) {
    m.msg_control = ctl.b;
    m.msg_controllen = sizeof ctl.b;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pass, sizeof pass);
  }
  for (;;) {
    if (sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof *r) return true;
    if ((errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || !wait_fd(fd, POLLOUT, deadline)) return false;
  }
}

/* One record and at most one descriptor (*fd, else -1). 1 got one, 0 nothing yet, -1 closed or malformed. */
static int recv_rec(int fd, node_rec_t *r, int *got) {
  union { char b[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } ctl;
  struct iovec iov = {r, sizeof *r};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
  *got = -1;
  ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
  int count = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
        int f;
        memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
        if (count++) close(f);
        else *got = f;
      }
  bool ok = n == (ssize_t)sizeof *r && !(m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) && r->magic == NODE_MAGIC &&
            count == (r->kind == REC_FD);
  if (!ok && *got >= 0) close(*got), *got = -1;
  return ok ? 1 : -1;
}

/* A PE's side: connect to the leader once (checking that it is the leader), send ours, take everyone else's. */
static shoal_status_t member_round(shoal_boot_t *b, int fd, uint64_t tag, int *fds, uint64_t *tags, double deadline) {
  int lead = leader(b);
  if (b->node_fd < 0) {
    struct sockaddr_un a;
    socklen_t al = node_addr(b->node_name, &a);
    int s = -1;
    for (;;) { /* the leader's backlog may be full (of strangers it has not closed yet): wait in it, then retry */
      s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      if (s < 0) return SHOAL_ERR_IO;
      struct timeval tv = {1, 0}; /* connect() waits for room in the backlog this long */
      setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (!connect(s, (struct sockaddr *)&a, al)) {
        int fl = fcntl(s, F_GETFL);
        if (fl < 0 || fcntl(s, F_SETFL, fl | O_NONBLOCK)) {
          close(s);
          return SHOAL_ERR_IO;
        }
        break;
      }
      int e = errno;
      close(s);
      if ((e != EAGAIN && e != EINPROGRESS && e != ECONNREFUSED && e != EINTR) || now_s() > deadline) {
        shoal_warn("shmem_init: cannot reach PE %d's node socket: %s", lead, strerror(e));
        return SHOAL_ERR_IO;
      }
      poll(NULL, 0, 2);
    }
    pid_t pid = -1;
    uid_t uid = (uid_t)-1;
    if (!peer_is(s, b->pids[lead], &pid, &uid)) {
      shoal_warn("shmem_init: the node socket is held by pid %d, uid %d, not by PE %d: refused", (int)pid, (int)uid,
                 lead);
      close(s);
      return SHOAL_ERR_IO;
    }
    node_rec_t h = {.magic = NODE_MAGIC, .rank = b->rank, .kind = REC_HELLO};
    memcpy(h.secret, b->node_secret, sizeof h.secret);
    if (!send_rec(s, &h, -1, deadline)) {
      close(s);
      return SHOAL_ERR_IO;
    }
    b->node_fd = s;
  }
  node_rec_t r = {.magic = NODE_MAGIC, .round = b->node_round, .rank = b->rank,
                  .kind = fd >= 0 ? REC_FD : REC_NOFD, .tag = tag};
  if (!send_rec(b->node_fd, &r, fd, deadline)) {
    shoal_warn("shmem_init: sending a descriptor to PE %d: %s", lead, strerror(errno));
    return SHOAL_ERR_IO;
  }
  bool *seen = calloc((size_t)b->size, sizeof *seen);
  if (!seen) return SHOAL_ERR_NOMEM;
  shoal_status_t rc = SHOAL_OK;
  for (int got = 0; got < b->local_size - 1 && !rc;) {
    int f, k = recv_rec(b->node_fd, &r, &f);
    if (k == 0) {
      if (!wait_fd(b->node_fd, POLLIN, deadline)) {
        shoal_warn("shmem_init: PE %d sent %d of %d descriptors in %g s", lead, got, b->local_size - 1,
                   NODE_TIMEOUT_S);
        rc = SHOAL_ERR_IO;
      }
      continue;
    }
    int p = r.rank;
    bool fits = k > 0 && r.round == b->node_round && p >= 0 && p < b->size && p != b->rank && b->pids[p] &&
                !seen[p] && (r.kind == REC_FD || r.kind == REC_NOFD);
    if (!fits) {
      if (f >= 0) close(f);
      shoal_warn("shmem_init: PE %d's node socket %s", lead, k < 0 ? "closed" : "sent a malformed record");
      rc = SHOAL_ERR_IO;
      continue;
    }
    seen[p] = true;
    fds[p] = f;
    tags[p] = r.tag;
    got++;
  }
  free(seen);
  return rc;
}

/* The leader's side: admit the node's PEs, take one record from each, send each every other PE's. */
static shoal_status_t leader_round(shoal_boot_t *b, int fd, uint64_t tag, int *fds, uint64_t *tags, double deadline) {
  int ln = b->local_size;
  bool *hello = calloc((size_t)ln, sizeof *hello), *have = calloc((size_t)ln, sizeof *have);
  struct pollfd *pf = calloc((size_t)ln + 1, sizeof *pf);
  int *idx = calloc((size_t)ln + 1, sizeof *idx), need = ln - 1;
  shoal_status_t rc = SHOAL_ERR_NOMEM;
  if (!hello || !have || !pf || !idx) goto out;
  for (int i = 1; i < ln; i++) hello[i] = b->node_conn[i] >= 0 && b->node_round > 0;
  rc = SHOAL_OK;
  while (need && !rc) {
    int np = 0;
    pf[np] = (struct pollfd){.fd = b->node_listen, .events = POLLIN}, idx[np++] = 0;
    for (int i = 1; i < ln; i++)
      if (b->node_conn[i] >= 0 && !have[i]) pf[np] = (struct pollfd){.fd = b->node_conn[i], .events = POLLIN}, idx[np++] = i;
    double left = deadline - now_s();
    if (left <= 0) {
      int i = 1;
      while (i < ln && have[i]) i++;
      shoal_warn("shmem_init: node socket: PE %d sent no descriptor in %g s", b->local[i], NODE_TIMEOUT_S);
      rc = SHOAL_ERR_IO;
      break;
    }
    if (poll(pf, (nfds_t)np, (int)(left * 1000) + 1) < 0 && errno != EINTR) rc = SHOAL_ERR_IO;
    for (int k = 0; k < np && !rc; k++) {
      if (!pf[k].revents) continue;
      if (!idx[k]) { /* new connections: checked before anything is read from them */
        int c; /* a bounded batch: a stranger who connects in a loop must not keep us from our PEs and the deadline */
        for (int nb = 0; nb < 16 && (c = accept4(b->node_listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0; nb++) {
          pid_t pid = -1;
          uid_t uid = (uid_t)-1;
          int i = peer_is(c, -1, &pid, &uid) ? local_by_pid(b, pid) : -1;
          if (i < 0) {
            refused(uid != geteuid() ? "another user" : "not a PE of this node that is still to connect", pid, uid);
            close(c);
            continue;
          }
          b->node_conn[i] = c;
        }
        continue;
      }
      int i = idx[k], f;
      node_rec_t r;
      int got = recv_rec(b->node_conn[i], &r, &f);
      if (!got) continue;
      bool ok = got > 0 && r.rank == b->local[i];
      if (ok && !hello[i]) { /* the first record: the hello with the secret */
        ok = r.kind == REC_HELLO && !memcmp(r.secret, b->node_secret, sizeof r.secret);
        hello[i] = ok;
      } else if (ok) {
        ok = r.round == b->node_round && (r.kind == REC_FD || r.kind == REC_NOFD);
        if (ok) fds[r.rank] = f, tags[r.rank] = r.tag, have[i] = true, need--;
        f = -1;
      }
      if (f >= 0) close(f);
      if (!ok) {
        if (!hello[i]) { /* a PE's pid without the secret: a stranger; the PE may still come */
          refused("no job secret in its hello", b->pids[b->local[i]], geteuid());
          close(b->node_conn[i]);
          b->node_conn[i] = -1;
          continue;
        }
        shoal_warn("shmem_init: node socket: PE %d %s", b->local[i], got < 0 ? "closed its connection" : "sent a "
                   "malformed record");
        rc = SHOAL_ERR_IO;
      }
    }
  }
  /* Everyone's descriptors to everyone (ours included). */
  for (int i = 1; i < ln && !rc; i++)
    for (int j = 0; j < ln && !rc; j++) {
      if (j == i) continue;
      int p = b->local[j], pass = j ? fds[p] : fd;
      node_rec_t r = {.magic = NODE_MAGIC, .round = b->node_round, .rank = p, .kind = pass >= 0 ? REC_FD : REC_NOFD,
                      .tag = j ? tags[p] : tag};
      if (!send_rec(b->node_conn[i], &r, pass, deadline)) {
        shoal_warn("shmem_init: node socket: sending descriptors to PE %d: %s", b->local[i], strerror(errno));
        rc = SHOAL_ERR_IO;
      }
    }
out:
  free(hello);
  free(have);
  free(pf);
  free(idx);
  return rc;
}

shoal_status_t shoal_boot_fd_allgather(shoal_boot_t *b, int fd, uint64_t tag, int *fds, uint64_t *tags) {
  for (int p = 0; p < b->size; p++) fds[p] = -1, tags[p] = 0;
  if (b->local_size < 2) return SHOAL_OK;
  if (b->node_failed || (b->node_listen < 0 && b->node_fd < 0 && b->node_round && b->rank == leader(b))) {
    shoal_warn("shmem_init: the node's descriptor exchange is closed (an earlier round failed, or init is over)");
    return SHOAL_ERR_IO;
  }
  double deadline = now_s() + NODE_TIMEOUT_S;
  shoal_status_t rc = b->rank == leader(b) ? leader_round(b, fd, tag, fds, tags, deadline)
                                           : member_round(b, fd, tag, fds, tags, deadline);
  b->node_round++;
  if (rc) {
    for (int p = 0; p < b->size; p++)
      if (fds[p] >= 0) close(fds[p]), fds[p] = -1;
    /* what is left of this round in the sockets would be taken for the next one's: no next round */
    shoal_boot_node_close(b);
    b->node_failed = true;
  }
  return rc;
}
