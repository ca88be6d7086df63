/*
 * oshrun - start N PEs of an OpenSHMEM program on this node and serve their bootstrap.
 *
 *   oshrun -n N [--tag-output] [--timeout S] [--bind-to core|numa|none] [--report-bindings] [-x VAR[=VAL]] prog [args]
 *
 * Exit status: the first non-zero PE status (128+signal for a PE killed by a signal), the status given to
 * shmem_global_exit, 124 after --timeout, 0 when every PE exits 0. When one PE fails, the rest are stopped within a
 * second (SIGTERM, then SIGKILL after 500 ms). Nothing is created in the file system: the bootstrap socket lives in the
 * abstract namespace and the heaps are memfds, so no kill -9 can leave anything behind.
 */
#include "boot_proto.h"
#include "topo.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PES 4096

typedef struct pe {
  pid_t pid;
  int sock;          /* bootstrap connection, -1 if none */
  int out[2];        /* stdout/stderr pipes (--tag-output), -1 if closed */
  char *line[2];     /* partial line per stream */
  size_t linelen[2];
  bool running, hello, finalized;
  int status;        /* waitpid status */
  char *gather;      /* pending all-gather contribution */
  uint64_t glen;
  bool gpending;
} pe_t;

static pe_t *pes;
static int npes;
static bool tag_output;
static int job_status;   /* first failure's status */
static bool stopping;    /* the job is being stopped */
static double kill_at;   /* when stopping: SIGKILL time */
static int ngather;      /* PEs waiting in the current all-gather */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void usage(FILE *f) {
  fprintf(f, "usage: oshrun -n N [options] program [args...]\n"
             "  -n, -np N            number of PEs (1..%d)\n"
             "  --tag-output         prefix every output line with [PE n]\n"
             "  --timeout S          stop the job after S seconds, naming the PEs still running (exit 124)\n"
             "  --bind-to core|numa|none  bind each PE's CPUs (hwloc); default none\n"
             "  --report-bindings    print each PE's cores and GPU\n"
             "  -x VAR[=VALUE]       export VAR (with VALUE) to the PEs\n"
             "  -h, --help           this text\n",
          MAX_PES);
}

static int io_all(int fd, void *buf, size_t len, bool wr) {
  char *p = buf;
  while (len) {
    ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static void kill_all(int sig) {
  for (int i = 0; i < npes; i++)
    if (pes[i].running) kill(pes[i].pid, sig);
}

/* Write buf to fd with "[PE n] " before every line start; keeps a partial last line. */
static void tag_flush(int pe, int s, bool all) {
  pe_t *p = &pes[pe];
  char *b = p->line[s];
  size_t start = 0;
  FILE *f = s ? stderr : stdout;
  for (size_t i = 0; i < p->linelen[s]; i++)
    if (b[i] == '\n') {
      fprintf(f, "[PE %d] %.*s", pe, (int)(i + 1 - start), b + start);
      start = i + 1;
    }
  if (all && start < p->linelen[s]) {
    fprintf(f, "[PE %d] %.*s\n", pe, (int)(p->linelen[s] - start), b + start);
    start = p->linelen[s];
  }
  if (start) { /* b is NULL until the PE wrote something: memmove(NULL, NULL, 0) is undefined */
    memmove(b, b + start, p->linelen[s] - start);
    p->linelen[s] -= start;
  }
  fflush(f);
}

static void read_output(int pe, int s) {
  pe_t *p = &pes[pe];
  char buf[4096];
  ssize_t n = read(p->out[s], buf, sizeof buf);
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return;
    tag_flush(pe, s, true);
    close(p->out[s]);
    p->out[s] = -1;
    return;
  }
  char *line = realloc(p->line[s], p->linelen[s] + (size_t)n);
  if (!line) { /* no memory to hold a partial line: pass the bytes on untagged rather than lose them */
    fwrite(buf, 1, (size_t)n, s ? stderr : stdout);
    return;
  }
  p->line[s] = line;
  memcpy(p->line[s] + p->linelen[s], buf, (size_t)n);
  p->linelen[s] += (size_t)n;
  tag_flush(pe, s, false);
}

#define STOP(status, ...)                                                                                             \
do {                                                                                                                 \
  if (!stopping) {                                                                                                   \
    fprintf(stderr, "oshrun: " __VA_ARGS__);                                                                         \
    job_status = (status);                                                                                           \
    stopping = true;                                                                                                 \
    kill_all(SIGTERM);                                                                                               \
    kill_at = now() + 0.5;                                                                                           \
  }                                                                                                                  \
} while (0)


static void handle_msg(int i) {
  int n = npes;
  pe_t *p = &pes[i];
  shoal_boot_msg_t m;
  if (io_all(p->sock, &m, sizeof m, false)) {
    close(p->sock);
    p->sock = -1;
    return;
  }
  if (m.type == SHOAL_BOOT_ALLGATHER) {
    free(p->gather);
    p->gather = m.len ? malloc(m.len) : NULL;
    if ((m.len && !p->gather) || (m.len && io_all(p->sock, p->gather, m.len, false))) {
      STOP(1, "PE %d: bootstrap read failed; stopping the job\n", i);
      return;
    }
    p->glen = m.len;
    p->gpending = true;
    if (++ngather == n) {
      uint64_t len = pes[0].glen;
      bool same = true;
      for (int j = 0; j < n; j++) same &= pes[j].glen == len;
      if (!same) {
        STOP(1, "bootstrap all-gather with different sizes across PEs; stopping the job\n");
        return;
      }
      char *all = malloc(len * (uint64_t)n + 1);
      if (!all) {
        STOP(1, "bootstrap all-gather: out of memory; stopping the job\n");
        return;
      }
      /* len 0: every gather is NULL, and memcpy from NULL is undefined even for 0 bytes. */
      if (len)
        for (int j = 0; j < n; j++) memcpy(all + len * (uint64_t)j, pes[j].gather, len);
      shoal_boot_msg_t rep = {.type = SHOAL_BOOT_ALLGATHER, .rank = -1, .len = len * (uint64_t)n};
      for (int j = 0; j < n; j++) {
        pes[j].gpending = false;
        if (pes[j].sock >= 0 && (io_all(pes[j].sock, &rep, sizeof rep, true) ||
                                 (rep.len && io_all(pes[j].sock, all, rep.len, true))))
          fprintf(stderr, "oshrun: PE %d: bootstrap write failed\n", j);
      }
      free(all);
      ngather = 0;
    }
  } else if (m.type == SHOAL_BOOT_ABORT) {
    /* shmem_global_exit or a fatal error (the PE printed why): its status is the job's. */
    if (!stopping) {
      job_status = (int)m.arg;
      stopping = true;
      for (int j = 0; j < n; j++)
        if (j != i && pes[j].running) kill(pes[j].pid, SIGTERM);
      kill_at = now() + 0.5;
    }
  } else if (m.type == SHOAL_BOOT_FINI) {
    p->finalized = true;
  }
}

/* A PE that exited may have left messages (FINI) unread: take them before judging its exit. */
static void drain_socket(int i) {
  while (pes[i].sock >= 0) {
    struct pollfd q = {.fd = pes[i].sock, .events = POLLIN};
    if (poll(&q, 1, 0) <= 0) return;
    handle_msg(i);
  }
}

int main(int argc, char **argv) {
  int n = -1, ai = 1;
  double timeout = 0;
  const char *bindpol = "none";
  bool report = false;
  for (; ai < argc && argv[ai][0] == '-'; ai++) {
    const char *a = argv[ai];
    if ((!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np")) && ai + 1 < argc) {
      char *end;
      long v = strtol(argv[++ai], &end, 10);
      if (*end || v < 1 || v > MAX_PES) {
        fprintf(stderr, "oshrun: -n %s: expected a PE count in [1, %d]\n", argv[ai], MAX_PES);
        return 2;
      }
      n = (int)v;
    } else if (!strcmp(a, "--tag-output")) {
      tag_output = true;
    } else if (!strcmp(a, "--timeout") && ai + 1 < argc) {
      char *end;
      timeout = strtod(argv[++ai], &end);
      if (*end || timeout <= 0) {
        fprintf(stderr, "oshrun: --timeout %s: expected seconds > 0\n", argv[ai]);
        return 2;
      }
    } else if (!strcmp(a, "--bind-to") && ai + 1 < argc) {
      bindpol = argv[++ai];
      shoal_bind_t b;
      if (shoal_topo_parse_bind(bindpol, &b)) {
        fprintf(stderr, "oshrun: --bind-to %s: expected core, numa or none\n", bindpol);
        return 2;
      }
    } else if (!strcmp(a, "--report-bindings")) {
      report = true;
    } else if (!strcmp(a, "-x") && ai + 1 < argc) {
      char *kv = argv[++ai], *eq = strchr(kv, '=');
      if (eq) {
        *eq = 0;
        setenv(kv, eq + 1, 1);
        *eq = '=';
      }
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--")) {
      ai++;
      break;
    } else {
      fprintf(stderr, "oshrun: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (ai >= argc) {
    fprintf(stderr, "oshrun: no program given\n");
    usage(stderr);
    return 2;
  }
  if (n < 0) n = 1;
  npes = n;
  pes = calloc((size_t)n, sizeof *pes);
  if (!pes) return 1;

  /* Topology and binding, computed once (the same pure mapping the runtime uses). */
  shoal_bind_t bpol = SHOAL_BIND_NONE;
  shoal_topo_parse_bind(bindpol, &bpol);
  hwloc_topology_t topo = NULL;
  if ((bpol != SHOAL_BIND_NONE || report) && shoal_topo_load(&topo, getenv("SHOAL_TOPO"))) {
    fprintf(stderr, "oshrun: cannot read the topology (hwloc)\n");
    return 1;
  }
  bool do_bind = bpol != SHOAL_BIND_NONE;
  if (do_bind && getenv("SHOAL_TOPO")) {
    /* A described topology is not this machine's: report it, bind nothing. */
    fprintf(stderr, "oshrun: --bind-to %s ignored: SHOAL_TOPO replaces this machine's topology\n", bindpol);
    do_bind = false;
  }
  setenv("SHOAL_BIND", bindpol, 1);

  /* Bootstrap socket, abstract namespace. */
  char name[96];
  snprintf(name, sizeof name, "shoal-%d-%lx", (int)getpid(), (unsigned long)(now() * 1e6));
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path + 1, name, strlen(name));
  socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, salen) || listen(lfd, n < 128 ? 128 : n)) {
    fprintf(stderr, "oshrun: cannot open the bootstrap socket: %s\n", strerror(errno));
    return 1;
  }
  char nbuf[16];
  setenv(SHOAL_BOOT_ENV_ADDR, name, 1);
  snprintf(nbuf, sizeof nbuf, "%d", n);
  setenv(SHOAL_BOOT_ENV_SIZE, nbuf, 1);
  setenv(SHOAL_BOOT_ENV_LOCAL_SIZE, nbuf, 1);

  sigset_t mask, oldmask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &oldmask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  pid_t self = getpid();

  for (int i = 0; i < n; i++) {
    pe_t *p = &pes[i];
    p->sock = p->out[0] = p->out[1] = -1;
    int po[2][2];
    if (tag_output && (pipe2(po[0], O_CLOEXEC) || pipe2(po[1], O_CLOEXEC))) {
      fprintf(stderr, "oshrun: pipe: %s\n", strerror(errno));
      kill_all(SIGKILL);
      return 1;
    }
    shoal_topo_map_t map = {.gpu = -1, .numa = -1};
    bool mapped = topo && !shoal_topo_map_pe(topo, i, n, bpol, &map);
    if (mapped && report) {
      char line[512];
      shoal_topo_format_map(topo, i, &map, line, sizeof line);
      fprintf(stderr, "oshrun: %s\n", line);
    }
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "oshrun: fork: %s\n", strerror(errno));
      kill_all(SIGKILL);
      return 1;
    }
    if (pid == 0) {
      /* The PE dies with oshrun, whatever kills oshrun. */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != self) _exit(127);
      sigprocmask(SIG_SETMASK, &oldmask, NULL);
      snprintf(nbuf, sizeof nbuf, "%d", i);
      setenv(SHOAL_BOOT_ENV_RANK, nbuf, 1);
      setenv(SHOAL_BOOT_ENV_LOCAL_RANK, nbuf, 1);
      if (i != 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
      }
      if (tag_output) {
        dup2(po[0][1], 1);
        dup2(po[1][1], 2);
      }
      if (mapped && do_bind && shoal_topo_bind_self(topo, &map))
        fprintf(stderr, "oshrun: PE %d: binding failed (continuing unbound)\n", i);
      execvp(argv[ai], argv + ai);
      fprintf(stderr, "oshrun: cannot run %s: %s\n", argv[ai], strerror(errno));
      _exit(127);
    }
    if (mapped) hwloc_bitmap_free(map.cpuset);
    p->pid = pid;
    p->running = true;
    if (tag_output) {
      close(po[0][1]);
      close(po[1][1]);
      p->out[0] = po[0][0];
      p->out[1] = po[1][0];
    }
  }
  if (topo) hwloc_topology_destroy(topo);

  double deadline = timeout > 0 ? now() + timeout : 0;
  int nrunning = n;
  struct pollfd *pfd = calloc((size_t)(3 * n + 2), sizeof *pfd);
  int *who = calloc((size_t)(3 * n + 2), sizeof *who);
  int *pending = calloc((size_t)n, sizeof *pending); /* accepted sockets before their HELLO */
  int npending = 0;

  for (;;) {
    bool outputs_open = false;
    for (int i = 0; i < n; i++) outputs_open |= pes[i].out[0] >= 0 || pes[i].out[1] >= 0;
    if (nrunning == 0 && !outputs_open) break;
    int np = 0;
    pfd[np] = (struct pollfd){.fd = sfd, .events = POLLIN};
    who[np++] = -1;
    pfd[np] = (struct pollfd){.fd = lfd, .events = POLLIN};
    who[np++] = -2;
    for (int k = 0; k < npending; k++) {
      pfd[np] = (struct pollfd){.fd = pending[k], .events = POLLIN};
      who[np++] = -3 - k;
    }
    for (int i = 0; i < n; i++) {
      if (pes[i].sock >= 0) {
        pfd[np] = (struct pollfd){.fd = pes[i].sock, .events = POLLIN};
        who[np++] = 3 * i;
      }
      for (int s = 0; s < 2; s++)
        if (pes[i].out[s] >= 0) {
          pfd[np] = (struct pollfd){.fd = pes[i].out[s], .events = POLLIN};
          who[np++] = 3 * i + 1 + s;
        }
    }
    double t = now(), wake = 1e300;
    if (deadline && !stopping) wake = deadline;
    if (stopping && kill_at) wake = kill_at;
    int ms = wake == 1e300 ? -1 : (int)((wake - t) * 1000) + 1;
    if (ms < -1) ms = 0;
    int r = poll(pfd, (nfds_t)np, ms);
    if (r < 0 && errno != EINTR) break;
    t = now();
    if (deadline && !stopping && t >= deadline) {
      char list[1024] = "";
      size_t len = 0;
      for (int i = 0; i < n && len < sizeof list - 16; i++)
        if (pes[i].running) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", i);
      STOP(124, "timeout after %g s; stopping the job; PEs still running: %s\n", timeout, list);
    }
    if (stopping && kill_at && t >= kill_at) {
      kill_all(SIGKILL);
      kill_at = 0;
    }
    for (int k = 0; r > 0 && k < np; k++) {
      if (!pfd[k].revents) continue;
      int w = who[k];
      if (w == -1) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
          if (si.ssi_signo != SIGCHLD) {
            STOP(128 + (int)si.ssi_signo, "received signal %d; stopping the job\n", (int)si.ssi_signo);
            continue;
          }
          int st;
          pid_t pid;
          while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++) {
              if (pes[i].pid != pid || !pes[i].running) continue;
              pes[i].running = false;
              pes[i].status = st;
              nrunning--;
              if (WIFSIGNALED(st)) {
                STOP(128 + WTERMSIG(st), "PE %d (pid %d) was killed by signal %d (%s); stopping the job\n", i,
                     (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
              } else if (WEXITSTATUS(st)) {
                STOP(WEXITSTATUS(st), "PE %d (pid %d) exited with status %d; stopping the job\n", i, (int)pid,
                     WEXITSTATUS(st));
              } else if (pes[i].hello && !pes[i].finalized && (drain_socket(i), !pes[i].finalized)) {
                STOP(1, "PE %d (pid %d) exited without shmem_finalize; stopping the job\n", i, (int)pid);
              }
            }
          }
          break;
        }
      } else if (w == -2) {
        int c;
        while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) pending[npending++] = c;
      } else if (w <= -3) {
        int kidx = -3 - w, c = pending[kidx];
        shoal_boot_msg_t m;
        pending[kidx] = -1;
        if (io_all(c, &m, sizeof m, false) || m.type != SHOAL_BOOT_HELLO || m.rank < 0 || m.rank >= n ||
            pes[m.rank].sock >= 0) {
          close(c);
          continue;
        }
        pes[m.rank].sock = c;
        pes[m.rank].hello = true;
      } else if (w % 3 == 0) {
        handle_msg(w / 3);
      } else {
        read_output(w / 3, w % 3 - 1);
      }
    }
    int k2 = 0;
    for (int k = 0; k < npending; k++)
      if (pending[k] >= 0) pending[k2++] = pending[k];
    npending = k2;
  }
  for (int i = 0; i < n; i++)
    if (pes[i].sock >= 0) close(pes[i].sock);
  close(lfd);
  return job_status;
}
