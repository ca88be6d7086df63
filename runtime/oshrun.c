/*
 * oshrun - start N PEs of an OpenSHMEM program on this node and serve their bootstrap (docs/man/oshrun.md).
 *
 * Exit status: the first non-zero PE status (128+signal for a PE killed by a signal), the status given to
 * shmem_global_exit, 124 after --timeout, 2 for bad options, 0 when every PE exits 0. When one PE fails, the rest
 * are stopped within a second (SIGTERM, then SIGKILL after 500 ms). Nothing is created in the file system: the
 * bootstrap socket lives in the abstract namespace and the heaps are memfds, so no kill -9 can leave anything behind.
 *
 * Anyone on the machine can connect to an abstract socket, so a connection is a stranger until checked (see
 * boot_proto.h): its uid and pid when accepted, before anything is read; then its HELLO (rank and job secret). Every
 * read and write is non-blocking with a buffer of its own, so the loop always answers signals and the timeout.
 */
#include "boot_proto.h"
#include "oshrun_opts.h"
#include "shoal_config.h"
#include "topo.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PENDING 64             /* checked connections still to say HELLO: bounded */
#define PENDING_TIMEOUT_S 10.0     /* a connection that says no HELLO in this time is closed */
#define MAX_MSG ((uint64_t)1 << 20) /* SHOAL_BOOT_MAX_LEN: the largest all-gather contribution */
#define MAX_REFUSALS_SAID 5
#define ACCEPT_BATCH 16             /* connections accepted per wake-up */
#define REAP_MS 250                /* the loop wakes at least this often to reap PEs (see reap) */

/* A reference-counted message: one all-gather reply is queued on every PE's connection. */
typedef struct blob {
  size_t refs, len;
  char data[];
} blob_t;

#define OUTQ 4
typedef struct conn {
  int fd;             /* -1: closed */
  int rank;           /* the rank its pid descends from */
  double since;       /* when accepted */
  char *in;           /* the message being read: header, then payload */
  size_t inlen, incap;
  blob_t *q[OUTQ];    /* messages being written */
  int nq;
  size_t qoff;        /* bytes of q[0] already written */
} conn_t;

typedef struct pe {
  pid_t pid;
  conn_t c;          /* bootstrap connection, c.fd -1 if none */
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
static unsigned char secret[SHOAL_BOOT_SECRET_LEN];
static int refusals;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
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

/* ---- connections ---- */
static void refuse(int fd, pid_t pid, uid_t uid, const char *why) {
  if (refusals < MAX_REFUSALS_SAID)
    fprintf(stderr, "oshrun: refused a bootstrap connection from pid %d (uid %d): %s\n", (int)pid, (int)uid, why);
  else if (refusals == MAX_REFUSALS_SAID)
    fprintf(stderr, "oshrun: more bootstrap connections refused; no more said\n");
  refusals++;
  close(fd);
}

static void conn_close(conn_t *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  free(c->in);
  c->in = NULL;
  c->inlen = c->incap = 0;
  for (int k = 0; k < c->nq; k++)
    if (!--c->q[k]->refs) free(c->q[k]);
  c->nq = 0;
  c->qoff = 0;
}

/* Read what has arrived of the current message, never past its end. 1: a whole message is in c->in; 0: not yet;
 * -1: closed, or a message no PE sends (then the caller closes). */
static int conn_read(conn_t *c) {
  for (;;) {
    size_t want = sizeof(shoal_boot_msg_t);
    if (c->inlen >= want) {
      shoal_boot_msg_t m;
      memcpy(&m, c->in, sizeof m);
      if (m.len > MAX_MSG) return -1;
      want += m.len;
    }
    if (c->inlen == want) return 1;
    if (c->incap < want) {
      char *p = realloc(c->in, want);
      if (!p) return -1;
      c->in = p;
      c->incap = want;
    }
    ssize_t n = recv(c->fd, c->in + c->inlen, want - c->inlen, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) return -1;
    c->inlen += (size_t)n;
  }
}

/* Write what the socket takes now. -1 when the peer is gone. */
static int conn_flush(conn_t *c) {
  while (c->nq) {
    blob_t *b = c->q[0];
    ssize_t n = send(c->fd, b->data + c->qoff, b->len - c->qoff, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n < 0) return -1;
    c->qoff += (size_t)n;
    if (c->qoff == b->len) {
      if (!--b->refs) free(b);
      memmove(c->q, c->q + 1, (size_t)--c->nq * sizeof *c->q);
      c->qoff = 0;
    }
  }
  return 0;
}

static int conn_send(conn_t *c, blob_t *b) {
  if (c->nq == OUTQ) return -1; /* a PE that asks and never reads its answers */
  b->refs++;
  c->q[c->nq++] = b;
  return conn_flush(c);
}

/* The rank whose PE is pid or an ancestor of pid (a wrapper shell may sit between), or -1. */
static int rank_of_pid(pid_t pid) {
  for (int depth = 0; depth < 64 && pid > 1; depth++) {
    for (int i = 0; i < npes; i++)
      if (pes[i].running && pes[i].pid == pid) return i;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *e = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    int ppid;
    if (!e || sscanf(e + 1, " %*c %d", &ppid) != 1) return -1;
    pid = ppid;
  }
  return -1;
}

static void handle_msgs(int i);

/* A new connection: whose is it? Nothing is read from it here. */
static void admit(int fd, conn_t *pending, int *npending) {
  struct ucred cr = {0};
  socklen_t l = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l)) { refuse(fd, -1, (uid_t)-1, "no credentials"); return; }
  if (cr.uid != geteuid()) { refuse(fd, cr.pid, cr.uid, "another user"); return; }
  int r = rank_of_pid(cr.pid);
  if (r < 0) { refuse(fd, cr.pid, cr.uid, "not a process of this job"); return; }
  if (pes[r].c.fd >= 0) handle_msgs(r); /* a program the PE ran before its own init may have just left */
  if (pes[r].c.fd >= 0) { refuse(fd, cr.pid, cr.uid, "its PE is connected already"); return; }
  if (*npending == MAX_PENDING) { refuse(fd, cr.pid, cr.uid, "too many connections waiting"); return; }
  pending[(*npending)++] = (conn_t){.fd = fd, .rank = r, .since = now()};
}

/* A pending connection's first message: HELLO with its own rank and the job's secret. 1 accepted, 0 not yet, -1
 * refused (closed). */
static int hello(conn_t *c) {
  int k = conn_read(c);
  if (k == 0) return 0;
  shoal_boot_msg_t m = {0};
  if (k > 0) memcpy(&m, c->in, sizeof m);
  unsigned char diff = 0;
  bool ok = k > 0 && m.type == SHOAL_BOOT_HELLO && m.len == SHOAL_BOOT_SECRET_LEN;
  for (int i = 0; ok && i < SHOAL_BOOT_SECRET_LEN; i++) diff |= (unsigned char)(c->in[sizeof m + i] ^ secret[i]);
  const char *why = k < 0 ? "closed or sent too much before its hello" : !ok ? "its first message is no hello"
                    : diff ? "wrong job secret" : m.rank != c->rank ? "it claims another PE's rank"
                    : (pes[c->rank].c.fd >= 0 && (handle_msgs(c->rank), pes[c->rank].c.fd >= 0))
                        ? "its PE is connected already" : NULL;
  if (why) {
    struct ucred cr = {.pid = -1, .uid = (uid_t)-1};
    socklen_t l = sizeof cr;
    getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
    refuse(c->fd, cr.pid, cr.uid, why);
    c->fd = -1;
    conn_close(c);
    return -1;
  }
  c->inlen = 0;
  pes[c->rank].c = *c;
  pes[c->rank].hello = true;
  pes[c->rank].finalized = false; /* a new connection of the rank: a program before it may have finalized */
  *c = (conn_t){.fd = -1};
  return 1;
}

static void pe_lost(int i) { conn_close(&pes[i].c); }

/* Every PE has contributed: send everyone the whole. */
static void gather_done(void) {
  int n = npes;
  uint64_t len = pes[0].glen;
  for (int j = 0; j < n; j++)
    if (pes[j].glen != len) {
      STOP(1, "bootstrap all-gather with different sizes across PEs; stopping the job\n");
      return;
    }
  blob_t *b = malloc(sizeof *b + sizeof(shoal_boot_msg_t) + len * (uint64_t)n);
  if (!b) {
    STOP(1, "bootstrap all-gather: out of memory; stopping the job\n");
    return;
  }
  b->refs = 1;
  b->len = sizeof(shoal_boot_msg_t) + len * (uint64_t)n;
  shoal_boot_msg_t rep = {.type = SHOAL_BOOT_ALLGATHER, .rank = -1, .len = len * (uint64_t)n};
  memcpy(b->data, &rep, sizeof rep);
  if (len) /* len 0: every gather is NULL, and memcpy from NULL is undefined even for 0 bytes */
    for (int j = 0; j < n; j++) memcpy(b->data + sizeof rep + len * (uint64_t)j, pes[j].gather, len);
  for (int j = 0; j < n; j++) {
    pes[j].gpending = false;
    free(pes[j].gather);
    pes[j].gather = NULL;
    if (pes[j].c.fd >= 0 && conn_send(&pes[j].c, b)) {
      fprintf(stderr, "oshrun: PE %d: bootstrap write failed\n", j);
      pe_lost(j);
    }
  }
  if (!--b->refs) free(b);
  ngather = 0;
}

/* Messages of an accepted PE, as many as have arrived. */
static void handle_msgs(int i) {
  pe_t *p = &pes[i];
  int k;
  while (p->c.fd >= 0 && (k = conn_read(&p->c)) != 0) {
    if (k < 0) {
      pe_lost(i);
      return;
    }
    shoal_boot_msg_t m;
    memcpy(&m, p->c.in, sizeof m);
    char *payload = p->c.in + sizeof m;
    p->c.inlen = 0;
    if (m.type == SHOAL_BOOT_ALLGATHER) {
      if (p->gpending) {
        STOP(1, "PE %d: second all-gather before the first ended; stopping the job\n", i);
        return;
      }
      free(p->gather);
      p->gather = m.len ? malloc(m.len) : NULL;
      if (m.len && !p->gather) {
        STOP(1, "PE %d: bootstrap: out of memory; stopping the job\n", i);
        return;
      }
      if (m.len) memcpy(p->gather, payload, m.len);
      p->glen = m.len;
      p->gpending = true;
      if (++ngather == npes) gather_done();
    } else if (m.type == SHOAL_BOOT_ABORT) {
      /* shmem_global_exit or a fatal error (the PE printed why): its status is the job's. */
      if (!stopping) {
        job_status = (int)m.arg;
        stopping = true;
        for (int j = 0; j < npes; j++)
          if (j != i && pes[j].running) kill(pes[j].pid, SIGTERM);
        kill_at = now() + 0.5;
      }
    } else if (m.type == SHOAL_BOOT_FINI) {
      p->finalized = true;
    } else {
      STOP(1, "PE %d: unknown bootstrap message %u; stopping the job\n", i, m.type);
      return;
    }
  }
}

/* A PE that exited may have left messages (FINI) unread: take them before judging its exit. */
static void drain_socket(int i) {
  if (pes[i].c.fd >= 0) handle_msgs(i);
}

/* Reap every PE that has exited and judge its exit. Called after every wake-up, not only on SIGCHLD: a thread that
 * a library started with SIGCHLD unblocked can take the signal, and the loop must not wait for it forever. */
static int reap(void) {
  int st, gone = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
    for (int i = 0; i < npes; i++) {
      if (pes[i].pid != pid || !pes[i].running) continue;
      pes[i].running = false;
      pes[i].status = st;
      gone++;
      if (WIFSIGNALED(st)) {
        STOP(128 + WTERMSIG(st), "PE %d (pid %d) was killed by signal %d (%s); stopping the job\n", i, (int)pid,
             WTERMSIG(st), strsignal(WTERMSIG(st)));
      } else if (WEXITSTATUS(st)) {
        STOP(WEXITSTATUS(st), "PE %d (pid %d) exited with status %d; stopping the job\n", i, (int)pid,
             WEXITSTATUS(st));
      } else if (pes[i].hello && !pes[i].finalized && (drain_socket(i), !pes[i].finalized)) {
        STOP(1, "PE %d (pid %d) exited without shmem_finalize; stopping the job\n", i, (int)pid);
      }
    }
  return gone;
}

static int cpus_available(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set)) return (int)sysconf(_SC_NPROCESSORS_ONLN);
  return CPU_COUNT(&set);
}

/* Which program launches another node's PEs: the PMIx launcher on PATH. */
static bool on_path(const char *prog) {
  const char *path = getenv("PATH");
  char buf[4096];
  for (const char *p = path ? path : ""; *p;) {
    size_t l = strcspn(p, ":");
    snprintf(buf, sizeof buf, "%.*s/%s", (int)l, p, prog);
    if (l && !access(buf, X_OK)) return true;
    p += l + (p[l] == ':');
  }
  return false;
}

int main(int argc, char **argv) {
  /* Signals are taken through a signalfd: block them before anything can start a thread (a library that would
   * otherwise receive SIGCHLD in a thread of its own, leaving the loop waiting for a signal that never comes). */
  sigset_t mask, oldmask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &oldmask);
  struct rlimit nofile; /* a socket and two pipes per PE: take what the hard limit allows */
  if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  oshrun_opts_t o;
  char err[512];
  if (oshrun_opts_parse(argc, argv, &o, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    fprintf(stderr, "oshrun: 'oshrun --help' lists the options\n");
    return 2;
  }
  if (o.action == OSHRUN_HELP) {
    oshrun_usage(stdout);
    return 0;
  }
  if (o.action == OSHRUN_VERSION) {
    printf("oshrun (Shoal) %s, OpenSHMEM 1.5%s\n", SHOAL_VERSION_STRING,
           SHOAL_HAVE_PMIX ? "; PMIx launchers: mpirun, prterun, srun --mpi=pmix" : "");
    return 0;
  }
  int local = oshrun_hosts_local(&o, err, sizeof err);
  if (local < 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  if (!local) { /* another machine: a PMIx launcher starts the PEs there, as SOS's oshrun does */
    const char *launcher = "mpirun";
    if (!SHOAL_HAVE_PMIX || !on_path(launcher)) {
      fprintf(stderr, "oshrun: %s names another machine: oshrun starts PEs on this one only, and %s\n",
              o.host ? "--host" : "--hostfile",
              SHOAL_HAVE_PMIX ? "no PMIx launcher (mpirun) is on PATH to start them there"
                              : "this Shoal was built without PMIx, which a launch across machines needs");
      return 2;
    }
    char **hv = oshrun_handoff_argv(&o, argc, argv, launcher);
    if (!hv) return 1;
    fflush(stdout);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    execvp(launcher, hv);
    fprintf(stderr, "oshrun: cannot run %s: %s\n", launcher, strerror(errno));
    return 127;
  }
  int slots = oshrun_local_slots(&o);
  int n = o.npes ? o.npes : o.per_node ? o.per_node : slots ? slots : 1;
  if (o.per_node && n > o.per_node) {
    fprintf(stderr, "oshrun: -n %d with -N %d needs %d nodes; oshrun starts PEs on this node only (name the others "
            "with --host or --hostfile)\n", n, o.per_node, (n + o.per_node - 1) / o.per_node);
    return 2;
  }
  if (slots && n > slots && !o.oversubscribe) {
    fprintf(stderr, "oshrun: -n %d, but the hosts given have %d slots on this machine (add --oversubscribe)\n", n,
            slots);
    return 2;
  }
  /* --mca KEY VALUE: Shoal has no MCA parameters. As Open MPI's mpirun does, the PEs get OMPI_MCA_KEY=VALUE (an Open
   * MPI library in the program still sees it), and one note per key says that Shoal itself ignores it. */
  for (int k = 0; k < o.nmca; k++) {
    const char *key = o.mca[2 * k];
    char var[strlen(key) + sizeof "OMPI_MCA_"];
    snprintf(var, sizeof var, "OMPI_MCA_%s", key);
    setenv(var, o.mca[2 * k + 1], 1);
    bool said = false;
    for (int j = 0; j < k && !said; j++) said = !strcmp(o.mca[2 * j], key);
    if (!said)
      fprintf(stderr, "oshrun: --mca %s: ignored, Shoal has no MCA parameters (the PEs get %s)\n", key, var);
  }
  for (int k = 0; k < o.nexport; k++) {
    char *kv = o.exports[k], *eq = strchr(kv, '=');
    if (eq) {
      *eq = 0;
      setenv(kv, eq + 1, 1);
      *eq = '=';
    }
  }
  tag_output = o.tag_output;
  bool report = o.report_bindings;
  double timeout = o.timeout;
  /* Binding: as given; else what --map-by implies; else cores when the PEs fit, as Open MPI does. */
  const char *bindpol = o.bind_to;
  bool explicit_bind = bindpol != NULL;
  if (!bindpol && o.map_by)
    bindpol = !strcmp(o.map_by, "node") ? "none"
              : (!strcmp(o.map_by, "numa") || !strcmp(o.map_by, "socket") || !strcmp(o.map_by, "package")) ? "numa"
                                                                                                             : "core";
  if (!bindpol) bindpol = !o.oversubscribe && n <= cpus_available() && !getenv("SHOAL_TOPO") ? "core" : "none";
  npes = n;
  pes = calloc((size_t)n, sizeof *pes);
  if (!pes) return 1;

  /* Topology and binding, computed once (the same pure mapping the runtime uses). */
  shoal_bind_t bpol = SHOAL_BIND_NONE;
  shoal_topo_parse_bind(bindpol, &bpol);
  hwloc_topology_t topo = NULL;
  char topo_msg[512];
  /* A SHOAL_TOPO that is set is read here even when nothing needs it, so that a bad one gives oshrun's one line
   * instead of one from every PE's shmem_init. */
  if ((bpol != SHOAL_BIND_NONE || report || getenv("SHOAL_TOPO")) &&
      shoal_topo_load_env(&topo, getenv("SHOAL_TOPO"), topo_msg, sizeof topo_msg)) {
    fprintf(stderr, "oshrun: %s\n", topo_msg);
    return 1;
  }
  bool do_bind = bpol != SHOAL_BIND_NONE;
  if (do_bind && getenv("SHOAL_TOPO")) {
    /* A described topology is not this machine's: report it, bind nothing. */
    if (explicit_bind || o.map_by)
      fprintf(stderr, "oshrun: --bind-to %s ignored: SHOAL_TOPO replaces this machine's topology\n", bindpol);
    do_bind = false;
  }
  setenv("SHOAL_BIND", bindpol, 1);

  /* Bootstrap socket (abstract namespace) and the job's secret. */
  char name[96], hex[2 * SHOAL_BOOT_SECRET_LEN + 1];
  if (getrandom(secret, sizeof secret, 0) != (ssize_t)sizeof secret) {
    fprintf(stderr, "oshrun: getrandom: %s\n", strerror(errno));
    return 1;
  }
  for (int i = 0; i < SHOAL_BOOT_SECRET_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", secret[i]);
  snprintf(name, sizeof name, "shoal-%d-%lx", (int)getpid(), (unsigned long)(now() * 1e6));
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path + 1, name, strlen(name));
  socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, salen) || listen(lfd, SOMAXCONN)) {
    fprintf(stderr, "oshrun: cannot open the bootstrap socket: %s\n", strerror(errno));
    return 1;
  }
  char nbuf[16];
  setenv(SHOAL_BOOT_ENV_ADDR, name, 1);
  setenv(SHOAL_BOOT_ENV_SECRET, hex, 1);
  unsetenv(SHOAL_BOOT_ENV_JOB); /* oshrun started from inside a PE: its PEs are a job of their own */
  snprintf(nbuf, sizeof nbuf, "%d", n);
  setenv(SHOAL_BOOT_ENV_SIZE, nbuf, 1);
  setenv(SHOAL_BOOT_ENV_LOCAL_SIZE, nbuf, 1);

  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    fprintf(stderr, "oshrun: signalfd: %s\n", strerror(errno));
    return 1;
  }
  pid_t self = getpid();

  for (int i = 0; i < n; i++) {
    pe_t *p = &pes[i];
    p->c.fd = p->out[0] = p->out[1] = -1;
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
      execvp(argv[o.prog], argv + o.prog);
      fprintf(stderr, "oshrun: cannot run %s: %s\n", argv[o.prog], strerror(errno));
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
  size_t nslots = (size_t)(3 * n + 2 + MAX_PENDING);
  struct pollfd *pfd = calloc(nslots, sizeof *pfd);
  int *who = calloc(nslots, sizeof *who);
  conn_t pending[MAX_PENDING]; /* checked connections before their HELLO */
  int npending = 0;
  if (!pfd || !who) {
    kill_all(SIGKILL);
    return 1;
  }

  for (;;) {
    bool outputs_open = false;
    for (int i = 0; i < n; i++) outputs_open |= pes[i].out[0] >= 0 || pes[i].out[1] >= 0;
    if (nrunning == 0 && !outputs_open) break;
    int np = 0;
    pfd[np] = (struct pollfd){.fd = sfd, .events = POLLIN};
    who[np++] = -1;
    pfd[np] = (struct pollfd){.fd = lfd, .events = POLLIN};
    who[np++] = -2;
    double t = now(), wake = 1e300;
    for (int k = 0; k < npending; k++) {
      pfd[np] = (struct pollfd){.fd = pending[k].fd, .events = POLLIN};
      who[np++] = -3 - k;
      if (pending[k].since + PENDING_TIMEOUT_S < wake) wake = pending[k].since + PENDING_TIMEOUT_S;
    }
    for (int i = 0; i < n; i++) {
      if (pes[i].c.fd >= 0) {
        pfd[np] = (struct pollfd){.fd = pes[i].c.fd, .events = (short)(POLLIN | (pes[i].c.nq ? POLLOUT : 0))};
        who[np++] = 3 * i;
      }
      for (int s = 0; s < 2; s++)
        if (pes[i].out[s] >= 0) {
          pfd[np] = (struct pollfd){.fd = pes[i].out[s], .events = POLLIN};
          who[np++] = 3 * i + 1 + s;
        }
    }
    if (deadline && !stopping && deadline < wake) wake = deadline;
    if (stopping && kill_at && kill_at < wake) wake = kill_at;
    int ms = wake == 1e300 ? REAP_MS : (int)((wake - t) * 1000) + 1;
    if (ms < 0) ms = 0;
    if (ms > REAP_MS) ms = REAP_MS;
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
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) /* every pending signal; never blocks */
          if (si.ssi_signo != SIGCHLD)
            STOP(128 + (int)si.ssi_signo, "received signal %d; stopping the job\n", (int)si.ssi_signo);
      } else if (w == -2) {
        /* a bounded batch: a stranger who connects in a loop must not keep the loop from signals and the timeout */
        int c = -1;
        for (int b = 0; b < ACCEPT_BATCH && (c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0; b++)
          admit(c, pending, &npending);
        if (c < 0 && (errno == EMFILE || errno == ENFILE))
          STOP(1, "cannot accept the PEs' bootstrap connections: %s (raise the limit: ulimit -n)\n", strerror(errno));
      } else if (w <= -3) {
        hello(&pending[-3 - w]);
      } else if (w % 3 == 0) {
        int i = w / 3;
        if ((pfd[k].revents & POLLOUT) && conn_flush(&pes[i].c)) pe_lost(i);
        if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) handle_msgs(i);
      } else {
        read_output(w / 3, w % 3 - 1);
      }
    }
    nrunning -= reap();
    int k2 = 0;
    for (int k = 0; k < npending; k++) {
      if (pending[k].fd >= 0 && pending[k].since + PENDING_TIMEOUT_S <= t) {
        struct ucred cr = {.pid = -1, .uid = (uid_t)-1};
        socklen_t l = sizeof cr;
        getsockopt(pending[k].fd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
        refuse(pending[k].fd, cr.pid, cr.uid, "no hello in time");
        pending[k].fd = -1;
        conn_close(&pending[k]);
      }
      if (pending[k].fd >= 0) pending[k2++] = pending[k];
    }
    npending = k2;
  }
  for (int i = 0; i < n; i++) conn_close(&pes[i].c);
  for (int k = 0; k < npending; k++) conn_close(&pending[k]);
  close(lfd);
  oshrun_opts_free(&o);
  return job_status;
}
