/*
 * shoal.h - internal interface of the runtime (never installed).
 *
 * Naming: shoal_<module>_<object>_<verb>; status codes are shoal_status_t (0 ok, negative error); outputs are set only
 * on success. The public API headers are included with default visibility; everything else is hidden.
 */
#ifndef SHOAL_H
#define SHOAL_H

#include <pthread.h>
#include <sched.h> /* cpu_set_t (_GNU_SOURCE) */
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#pragma GCC visibility push(default)
#include "shmem.h"
#include "shmemx.h"
#pragma GCC visibility pop

#include "shoal/status.h" /* shoal_status_t, SHOAL_OK..SHOAL_ERR_IO, SHOAL_LIKELY/UNLIKELY: shared with device/ */
#define SHOAL_CACHELINE 64
#define SHOAL_MAX_NAME 64

/* ---- logging (log.c) ---- */
enum shoal_subsys {
  SHOAL_SUB_BOOT = 1 << 0, SHOAL_SUB_TOPO = 1 << 1, SHOAL_SUB_HEAP = 1 << 2, SHOAL_SUB_SHM = 1 << 3,
  SHOAL_SUB_OFI = 1 << 4, SHOAL_SUB_GPU = 1 << 5, SHOAL_SUB_COLL = 1 << 6, SHOAL_SUB_ALL = 0x7f
};
extern unsigned shoal_log_mask; /* subsystems with debug output on (SHMEM_DEBUG + SHOAL_DEBUG_SUBSYS) */
void shoal_log_debug_(enum shoal_subsys sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define SHOAL_DEBUG(sub, ...)                                                                                         \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY(shoal_log_mask & (sub))) shoal_log_debug_(sub, __VA_ARGS__);                                    \
  } while (0)
/* NULL: init starts now; else a debug line (boot) with the time of step since the last mark. */
void shoal_init_mark(const char *step);
/* One-line warning "shoal: PE n: msg" on stderr. */
void shoal_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fatal error: prints "shoal: PE <me>: <routine>: <msg>" and stops the whole job (never returns). */
_Noreturn void shoal_fatal(const char *routine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What shoal_fatal calls, with exit status 1, to stop the other PEs: set by shoal_boot_init; NULL: none. */
extern void (*shoal_log_abort_hook)(int status);
/* Parse "boot,topo,..." into a subsystem mask; SHOAL_ERR_INVAL names the bad word in *bad. */
shoal_status_t shoal_log_parse_subsys(const char *s, unsigned *mask, const char **bad, size_t *badlen);

/* ---- environment (env.c): one table declares every variable ---- */
typedef struct shoal_env {
  size_t symmetric_size;   /* SHMEM_SYMMETRIC_SIZE, bytes */
  bool debug;              /* SHMEM_DEBUG */
  bool info;               /* SHMEM_INFO */
  bool version;            /* SHMEM_VERSION */
  char debug_subsys[128];  /* SHOAL_DEBUG_SUBSYS */
  long spin;               /* SHOAL_SPIN: polls before a waiting PE yields; -1 = auto */
  char bind[16];           /* SHOAL_BIND (set by oshrun --bind-to) */
  char topo_src[256];      /* SHOAL_TOPO: hwloc XML / synthetic topology to use instead of this machine's */
  char heap_kind[16];      /* SHOAL_HEAP: host | device */
  size_t device_symmetric_size; /* SHOAL_DEVICE_SYMMETRIC_SIZE */
  char coll_algo[6][16];   /* SHOAL_COLL_{BARRIER,BCAST,FCOLLECT,ALLTOALL,REDUCE,COLLECT}_ALGO */
  size_t coll_stream_min;  /* SHOAL_COLL_STREAM_MIN: bytes, 0 = auto (half the last-level cache) */
  char coll_variant[16];   /* SHOAL_COLL_VARIANT: GPU kernels naive | hoisted */
  char coll_gpu_g[8];      /* SHOAL_COLL_GPU_G: auto | 1 | 2 | 4 | 8 */
  long coll_gpu_sms;       /* SHOAL_COLL_GPU_SMS: -1 = auto */
  size_t coll_gpu_tile;    /* SHOAL_COLL_GPU_TILE: bytes, 0 = auto */
  char coll_gpu_sync[8];   /* SHOAL_COLL_GPU_SYNC: auto | device | host */
  char coll_gpu_pipe[8];   /* SHOAL_COLL_GPU_PIPE: auto | on | off */
  char gpu_heap_map[8];    /* SHOAL_GPU_HEAP_MAP: auto | vmm | ipc */
  bool gpu_stage_async;    /* SHOAL_GPU_STAGE_ASYNC: staged puts' copies enqueued (heap_gpu.c) */
  bool gpu_copier;         /* SHOAL_GPU_COPIER: staged copies (proxy's, target's) enqueued by a thread of their own */
  long proxy_queue_entries; /* SHOAL_PROXY_QUEUE_ENTRIES: the device proxy's queue, a power of two in [8, 2^20] */
  char coll_gpu_scope[8];  /* SHOAL_COLL_GPU_SCOPE: auto | sys */
  char coll_gpu_small[8];  /* SHOAL_COLL_GPU_SMALL: auto | off */
  char coll_gpu_pdl[8];    /* SHOAL_COLL_GPU_PDL: auto | off */
  char coll_gpu_far[16];   /* SHOAL_COLL_GPU_FAR: auto | flat | hierarchical */
  char aliases[256];       /* not a variable: the deprecated SMA_ spellings found, and what was done with each */
  char ofi_provider[64];   /* SHOAL_OFI_PROVIDER: the ofi transport's provider, "" = libfabric's choice (net first) */
  long ofi_timeout;        /* SHOAL_OFI_TIMEOUT: seconds a far peer may leave a probe unanswered; -1 = never */
  bool ofi_stage_profile;  /* SHOAL_OFI_STAGE_PROFILE: staged put chunks' times, printed at finalize */
  char transport[8];       /* SHOAL_TRANSPORT: auto | shm | ofi */
  long node_pes;           /* SHOAL_NODE_PES: testing, PEs per simulated node; -1 = off */
  char node_map[8];        /* SHOAL_NODE_MAP: testing, block | cyclic (how SHOAL_NODE_PES deals the ranks) */
  char bootstrap[8];       /* SHOAL_BOOTSTRAP: auto | single (a 1-PE job whatever the launcher's variables say) */
} shoal_env_t;
extern shoal_env_t shoal_env;
/* Largest value of a size variable: every sum and page round-up done with one stays far from overflow. */
#define SHOAL_ENV_SIZE_MAX ((size_t)1 << 62)
/* Parse every variable once from getenv (a deprecated SMA_ spelling where the SHMEM_ one is not set); on a bad
 * value fills err with one line naming the variable as set, the value and what is accepted; *env is then untouched. */
shoal_status_t shoal_env_load(shoal_env_t *env, char *err, size_t errlen);
/* Environment variables named SHMEM_* or SHOAL_* that Shoal does not know (a typo, another library's), as a comma
 * list in buf (with the nearest known name where one is 1 edit away, or 2 for names of 16+ characters);
 * returns how many. */
int shoal_env_unknown(char *buf, size_t len);
/* Position of the current value of ENV_ENUM variable name among its accepted names (0 = the first), -1 if name is
 * not such a variable. */
int shoal_env_choice(const char *name);
/* Every variable at its default (what shoal_env_load gives with an empty environment). */
void shoal_env_defaults(shoal_env_t *env);
/* Row i (in [0, count), the table's order) of the table, for shoal-info: name, type ("size", "bool", "integer",
 * "string", "choice"), default and accepted values as text, help, the value env holds for it (formatted as SHMEM_INFO
 * prints it) and the raw environment value (NULL: not set). The strings are the table's (static). Errors:
 * SHOAL_ERR_INVAL past the end, which ends an iteration. */
typedef struct shoal_env_row {
  const char *name, *type, *def, *accepts, *help, *set;
  char value[300];
} shoal_env_row_t;
int shoal_env_row(const shoal_env_t *env, size_t i, shoal_env_row_t *out);
/* Print every variable with value and help (SHMEM_INFO). */
void shoal_env_print(const shoal_env_t *env, FILE *out);
/* Size with optional k/K/m/M/g/G/t/T suffix (powers of 1024); rejects negatives, junk and overflow. */
shoal_status_t shoal_env_parse_size(const char *s, size_t *out);
shoal_status_t shoal_env_parse_bool(const char *s, bool *out);
shoal_status_t shoal_env_parse_long(const char *s, long *out);

/* ---- bootstrap (boot*.c): one contract, backends oshrun (boot_oshrun.c) and PMIx (boot_pmix.c) ---- */
typedef struct shoal_boot shoal_boot_t;
/* A backend (design 8, after SOS's runtime.h). init fills rank, size, local_rank, local_size and local[]; the rest
 * is only called after a successful init. Unimplemented slots are never NULL. */
typedef struct shoal_boot_ops {
  size_t size; /* sizeof(shoal_boot_ops_t) */
  const char *name;
  shoal_status_t (*init)(shoal_boot_t *b);
  shoal_status_t (*allgather)(shoal_boot_t *b, const void *in, void *out, size_t len);
  shoal_status_t (*barrier)(shoal_boot_t *b);
  void (*abort)(shoal_boot_t *b, int status, const char *msg);
  void (*fini)(shoal_boot_t *b);
} shoal_boot_ops_t;
extern const shoal_boot_ops_t shoal_boot_oshrun_ops, shoal_boot_pmix_ops;

struct shoal_boot {
  int rank, size, local_rank, local_size;
  int machine_size;             /* PEs on this machine: local_size, before SHOAL_NODE_PES splits it into nodes */
  const shoal_boot_ops_t *ops; /* NULL for a 1-PE job */
  int fd;                      /* oshrun: the socket to oshrun, else -1 */
  void *priv;                  /* backend state */
  int *local;                  /* [local_size] ranks of this node, ascending (local[local_rank] == rank) */
  pid_t *pids;                 /* [size] pid of each PE of this node (0 for PEs of other nodes) */
  /* the node's descriptor exchange (boot_node.c): the leader (local[0]) listens, the others connect to it */
  int node_listen, node_fd;    /* leader: listening socket; other PEs: connection to the leader; else -1 */
  int *node_conn;              /* leader: [local_size] connection of each local PE (-1 until it said hello) */
  unsigned char node_secret[16];
  char node_name[48];          /* the leader's abstract socket name */
  uint32_t node_round;
  bool node_failed;            /* a round failed: the node sockets are closed, later rounds fail at once */
  char job[160];               /* the launcher's name for this job (nested programs, see boot.c) */
};
shoal_status_t shoal_boot_init(shoal_boot_t *b);
/* Every PE contributes len bytes (at most SHOAL_BOOT_MAX_LEN); out receives size*len bytes ordered by rank.
 * Collective; SHOAL_ERR_IO when the bootstrap fails. */
shoal_status_t shoal_boot_allgather(shoal_boot_t *b, const void *in, void *out, size_t len);
shoal_status_t shoal_boot_barrier(shoal_boot_t *b);
/* Descriptor all-gather among the PEs of this node (collective over every PE). Each PE gives fd (-1: it has none,
 * its peers then see -1) and a tag (bytes the descriptor holds, say). On return fds[p] is a new descriptor of PE p's
 * (the caller closes it) and tags[p] its tag, for every p != me on this node; -1 and 0 elsewhere. Descriptors travel
 * as descriptors (SCM_RIGHTS) over the node's socket, whose every connection is checked (uid, pid, job secret). */
shoal_status_t shoal_boot_fd_allgather(shoal_boot_t *b, int fd, uint64_t tag, int *fds, uint64_t *tags);
/* boot_node.c: set up the node socket after the backend's init (an all-gather of pids, the leader's name and secret)
 * (boot.c calls it; shoal_boot_node_close takes it down, at the end of init and in shoal_boot_fini). */
shoal_status_t shoal_boot_node_init(shoal_boot_t *b);
/* The end of init: no more descriptors to exchange, so the node socket closes (nobody can connect any more). */
void shoal_boot_node_close(shoal_boot_t *b);
/* Tell the launcher to stop every PE and exit with status (global_exit / fatal error). */
void shoal_boot_abort(shoal_boot_t *b, int status);
void shoal_boot_fini(shoal_boot_t *b);
#define SHOAL_BOOT_MAX_LEN ((size_t)1 << 20) /* bytes one PE may contribute to an all-gather */

/* ---- heap allocator (alloc.c): pure, deterministic, offsets in [0, size) ---- */
typedef struct shoal_alloc_blk shoal_alloc_blk_t;
typedef struct shoal_alloc {
  size_t size;
  shoal_alloc_blk_t *head; /* blocks sorted by offset, free and used */
  size_t used;
} shoal_alloc_t;
shoal_status_t shoal_alloc_init(shoal_alloc_t *a, size_t size);
void shoal_alloc_fini(shoal_alloc_t *a);
/* First fit; align is a power of two >= 1. SHOAL_ERR_NOMEM when no block fits. */
shoal_status_t shoal_alloc_alloc(shoal_alloc_t *a, size_t size, size_t align, size_t *off);
/* SHOAL_ERR_INVAL when off is not the start of a used block. */
shoal_status_t shoal_alloc_free(shoal_alloc_t *a, size_t off);
/* Size of the used block at off (0 if none). */
size_t shoal_alloc_size_of(const shoal_alloc_t *a, size_t off);
/* Grow/shrink in place when the next block is free and large enough; SHOAL_ERR_NOMEM otherwise (block untouched). */
shoal_status_t shoal_alloc_resize(shoal_alloc_t *a, size_t off, size_t size);
size_t shoal_alloc_free_bytes(const shoal_alloc_t *a);
size_t shoal_alloc_largest_free(const shoal_alloc_t *a);
/* An allocation of size bytes (alignment align) from heap a failed: one line naming routine, the size, what is free
 * and var, the variable that enlarges the heap. The first failure of each heap (*said false) is always said, as SOS
 * does, so that a NULL from a too-small heap is never silent; later ones only with SHMEM_DEBUG. Sets *said. */
void shoal_heap_say_full(const char *routine, const char *which, const shoal_alloc_t *a, size_t size, size_t align,
                         const char *var, bool *said);

/* ---- symmetric spaces: regions that every PE has at the same offsets ---- */
/* SHOAL_SPACE_STAGE: no space of shoal_g.space (never symmetric memory of the program), the transport's own host
 * region for the staged path to other nodes' device heaps (comm.h dev_*; the ofi transport's region index). */
enum { SHOAL_SPACE_HEAP = 0, SHOAL_SPACE_DEVICE = 1, SHOAL_SPACE_STATIC = 2, SHOAL_SPACE_STAGE = 3, SHOAL_SPACE_MAX = 4 };
typedef struct shoal_space {
  const char *name;
  uintptr_t base;     /* this PE's base */
  size_t size;        /* bytes, identical on every PE */
  ptrdiff_t *delta;   /* [npes]: peer's mapping in this address space minus base; NULL if not load/store mapped */
  size_t *lim;        /* [npes]: size for a peer mapped here, 0 for one reached through the transport (or NULL) */
  bool device;        /* GPU memory: copies go through the device ops, not memcpy */
  /* Slow path for spaces without a CPU mapping of peers (e.g. process_vm_*): may be NULL. */
  shoal_status_t (*put)(struct shoal_space *s, int pe, size_t off, const void *src, size_t n);
  shoal_status_t (*get)(struct shoal_space *s, int pe, size_t off, void *dst, size_t n);
  void *priv;
} shoal_space_t;
/* pe's instance of space s is reached through the transport between nodes (no load/store mapping here); false for a
 * NULL s. */
static inline bool shoal_space_far(const shoal_space_t *s, int pe) { return s && s->lim && !s->lim[pe]; }

/* ---- internal symmetric area (sync.c): flags for barriers, reserved at the heap's start ---- */
#define SHOAL_BARRIER_ROUNDS 32
typedef struct shoal_sync_area {
  _Alignas(SHOAL_CACHELINE) _Atomic uint64_t bar_flag[SHOAL_BARRIER_ROUNDS][8]; /* one cache line per round */
  _Alignas(SHOAL_CACHELINE) _Atomic int cpu; /* 1 + the CPU this PE last waited on (0: none yet); peers read it */
} shoal_sync_area_t;
#define SHOAL_INTERNAL_SIZE ((size_t)4 << 20) /* bytes reserved before the user heap for runtime use */
#define SHOAL_HEAP_MAX_ALIGN ((size_t)1 << 30) /* the user heap starts on such a boundary: shmem_align's limit */

/* ---- contexts ---- */
struct shoal_ctx {
  uint32_t magic;     /* SHOAL_CTX_MAGIC while valid */
  long options;
  shmem_team_t team;
  void *tl;           /* its endpoint in the transport between nodes (transport.h), or NULL: the default one */
};
#define SHOAL_CTX_MAGIC 0x5c7a11c0u

/* ---- the PE's state (state.c) ---- */
typedef struct shoal_state {
  int state;        /* 0 before init, 1 running, 2 finalized */
  int me, npes;
  int thread_level;
  shoal_boot_t boot;
  shoal_space_t space[SHOAL_SPACE_MAX];
  int nspaces;
  /* host heap: one memfd per PE: [internal SHOAL_INTERNAL_SIZE][user heap] */
  char *heap_base;              /* == space[HEAP].base */
  size_t heap_size;             /* internal + user */
  ptrdiff_t *heap_delta;        /* == space[HEAP].delta, cached for the fast path */
  char **peer_heap;             /* [npes] base of each peer's heap mapping here */
  int heap_fd;
  shoal_alloc_t alloc;          /* user heap allocator, offsets from user_base */
  char *user_base;
  size_t internal_used;         /* bump pointer in the internal area */
  shoal_sync_area_t *sync;      /* in the internal area */
  /* Transports (transport.h): chosen once per peer at init. A peer whose heap this PE maps has heap_lim[pe] ==
   * heap_size and is reached by load/store inline; any other has heap_lim[pe] == 0, fails the inline range check
   * and is reached through tl_of[pe] on the slow path, so the shm fast path gains no branch. */
  size_t *heap_lim;             /* [npes] == space[HEAP].lim */
  const struct shoal_tl_ops **tl_of; /* [npes] the transport that reaches each PE (shm for this PE itself) */
  const struct shoal_tl_ops *tl;     /* the transport between nodes when some peer needs it, else NULL */
  int *node_of;                 /* [npes] where tl runs: each PE's node, as the lowest PE of the PEs that map each
                                   other's heaps (SHOAL_NODE_PES's runs, or a real node); else NULL */
  uint64_t tl_ops;              /* puts, gets and atomics this PE sent through tl (tests count a collective's) */
  uint64_t tl_put_bytes;        /* bytes of the host-memory puts (with signal or not) among them */
  uint64_t barrier_epoch;
  long spin;                    /* SHOAL_SPIN: polls before each yield; -1: adaptive (shoal_wait_step) */
  bool crowded;                 /* some machine of the job runs more PEs than it has CPUs online (or in its cgroup
                                   cpuset; SHOAL_NODE_PES's simulated nodes share one machine); the same on every
                                   PE (an OR at init), so collectives may choose by it */
} shoal_state_t;
extern shoal_state_t shoal_g;

/* ---- init.c ---- */
/* The runtime's part of shmem_init, in three calls that api/init.c places around the set-up of the layers above.
 * shoal_rt_init: environment, log, bootstrap, heap, static data, transports, topology (collective; fatal, naming
 * routine, on any failure); on return shoal_g.state is 1 and RMA works. requested: the SHMEM_THREAD_* level.
 * shoal_rt_init_end: after those layers (the device heap exchanges descriptors): closes the node socket, prints
 * SHMEM_INFO / SHMEM_VERSION on PE 0. shoal_rt_fini: the part of shmem_finalize after those layers are gone
 * (collective); shoal_g.state becomes 2. */
void shoal_rt_init(const char *routine, int requested);
void shoal_rt_init_end(void);
void shoal_rt_fini(void);
/* Memory files of the symmetric spaces: a memfd of len bytes, sealed against resizing. -1 with errno on failure. */
#define SHOAL_MEMFD_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#ifdef F_SEAL_FUTURE_WRITE
#define SHOAL_SEAL_FUTURE_WRITE F_SEAL_FUTURE_WRITE
#else
#define SHOAL_SEAL_FUTURE_WRITE 0x0010
#endif
int shoal_memfd_create(const char *name, size_t len);
/* NULL when fd is what a PE of this job shares: a memfd of exactly len bytes sealed with SHOAL_MEMFD_SEALS (so no
 * stranger's file, and no SIGBUS from a peer that shrinks it); else why not, in a few words. */
const char *shoal_memfd_unfit(int fd, size_t len);
/* Map, shared and read-write, the len-byte memfd of every other PE of this node into peer[p]; fd is ours (-1: we
 * have none, and our peers fail). A peer's descriptor is mapped only when it is a sealed memfd of len bytes. On
 * failure why names the PE and the reason, and nothing stays mapped. Collective over every PE. */
shoal_status_t shoal_memfd_share(int fd, size_t len, char **peer, char *why, size_t whylen);
/* Reserve bytes of symmetric internal memory (same offset on every PE: call in the same order everywhere). */
void *shoal_internal_alloc(size_t bytes, size_t align);

#define SHOAL_CHECK_INIT(routine)                                                                                     \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY(shoal_g.state != 1)) shoal_check_init_fail(routine);                                            \
  } while (0)
extern struct shoal_ctx shoal_ctx_default_obj;
_Noreturn void shoal_ctx_invalid(const char *routine, shmem_ctx_t ctx);
/* A context handle must be live: the default one, or one from shmem_ctx_create not yet destroyed. */
#define SHOAL_CHECK_CTX(routine, ctx)                                                                                 \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY((ctx) != &shoal_ctx_default_obj && ((ctx) == NULL || (ctx)->magic != SHOAL_CTX_MAGIC)))         \
      shoal_ctx_invalid(routine, ctx);                                                                                 \
  } while (0)
#define SHOAL_CHECK_PE(routine, pe)                                                                                   \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY((unsigned)(pe) >= (unsigned)shoal_g.npes))                                                     \
      shoal_fatal(routine, "pe %d out of range [0, %d)", (int)(pe), shoal_g.npes);                                     \
  } while (0)
_Noreturn void shoal_check_init_fail(const char *routine);

/* ---- waiting (sync.c): poll, then back off so that a PE sharing the CPU can run ----
 * A wait polls cond with a pause between polls and calls shoal_wait_step every SHOAL_WAIT_CHECK polls (about 1 us).
 * Its first step notes the CPU it runs on where the node's PEs can see it, and looks whether another PE of the job
 * last waited on the same CPU (whatever the affinity masks say: the kernel may put two unbound PEs on one core when
 * other work runs). When a PE shares its CPU it yields at once and at every step (that PE may need the CPU to make
 * the progress this one waits for); otherwise it spins 1 ms first (a yield would hand the CPU to unrelated work,
 * a busy task on a bound PE's core, for a whole slice), then yields the CPU at each step, and after a millisecond
 * of yields without progress sleeps a little (a yield alone keeps the CPU busy, so neither a PE queued behind
 * another busy task nor the load balancer gets it). A wait satisfied within the first SHOAL_WAIT_CHECK polls (the
 * bound fast case) reads no clock. SHOAL_SPIN=N fixes N polls before each yield
 * instead (no sleeping). */
typedef struct shoal_wait {
  int64_t t0;    /* ns at the first step (0: none yet) */
  int64_t spin;  /* ns to spin before yielding */
  long polls;    /* since the last yield (fixed SHOAL_SPIN) */
} shoal_wait_t;
#define SHOAL_WAIT_CHECK 32
void shoal_wait_init(bool oversubscribed); /* PEs outnumber the node's CPUs: always wait as if sharing one */
bool shoal_wait_oversubscribed(void);       /* what shoal_wait_init was told (tests) */
void shoal_wait_step(shoal_wait_t *w);
void shoal_wait_backoff(shoal_wait_t *w); /* the step without the transport's progress (the transport's own waits) */
#if defined(__x86_64__) || defined(__i386__)
#define SHOAL_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define SHOAL_CPU_RELAX() __asm__ volatile("yield" ::: "memory")
#else
#define SHOAL_CPU_RELAX() __asm__ volatile("" ::: "memory")
#endif
#define SHOAL_WAIT_WHILE(cond)                                                                                        \
  do {                                                                                                                 \
    if (cond) {                                                                                                        \
      shoal_wait_t shoal_w_ = {0};                                                                                     \
      unsigned shoal_n_ = 0;                                                                                           \
      do {                                                                                                             \
        if (SHOAL_LIKELY(++shoal_n_ % SHOAL_WAIT_CHECK))                                                               \
          SHOAL_CPU_RELAX();                                                                                           \
        else                                                                                                           \
          shoal_wait_step(&shoal_w_);                                                                                  \
      } while (cond);                                                                                                  \
    }                                                                                                                  \
  } while (0)

/* n bytes with non-temporal stores, then a store fence (so a release store after it orders them): past the caches,
 * for copies that together pass the last-level cache (glibc's memcpy streams only past ~3/4 of it per copy): 2x
 * memcpy measured here at 1-4 MiB blocks. memcpy where the CPU has no such stores (not x86-64). (rma.c) */
void shoal_copy_stream(void *dest, const void *src, size_t n);
/* nelems elements of size bytes from src (element stride sst) to dest (stride dst), both local addresses; strides
 * in elements, >= 1 (iput/iget, strided alltoalls). (rma.c) */
void shoal_copy_strided(void *dest, const void *src, size_t nelems, size_t size, ptrdiff_t dst, ptrdiff_t sst);

/* ---- RMA core (rma.c) ---- */
void shoal_rma_put(const char *routine, void *dest, const void *src, size_t nbytes, int pe);
void shoal_rma_get(const char *routine, void *dest, const void *src, size_t nbytes, int pe);
void shoal_rma_put_nbi(const char *routine, void *dest, const void *src, size_t nbytes, int pe);
/* As shoal_rma_put (nbi: shoal_rma_put_nbi) on a context: tx is its endpoint between nodes (ctx->tl), or NULL. */
void shoal_rma_put_tx(const char *routine, void *tx, void *dest, const void *src, size_t nbytes, int pe, bool nbi);

/* ---- barrier, fence, quiet (sync.c) ---- */
extern void (*shoal_quiet_hook)(void), (*shoal_fence_hook)(void); /* NULL, or the transport's (comm.c) */
/* The runtime's own world barrier (dissemination over the internal area's flags; no quiet): init and finalize use it
 * before and after teams exist, and shmem_malloc & co. after their allocation. Collective over every PE. */
void shoal_barrier_world(void);
/* shmem_barrier_all's quiet, before WORLD's barrier: shmem_quiet, but on a job of two PEs on two nodes the puts to
 * the peer are only fenced (the barrier's first signal to the peer carries them; sync.c). */
void shoal_barrier_all_quiet(const char *routine);
/* shmem_barrier_all's meaning (a quiet, then every PE arrives), for runtime routines that have its semantics
 * (shmem_free, shmem_realloc, shmemx_barrier_all_on_stream): the collectives register shmem_barrier_all at init
 * (api/init.c: SHOAL_COLL_BARRIER_ALGO, through the nodes where WORLD spans them); until then a quiet and
 * shoal_barrier_world. Never NULL; a pointer because the runtime must not call up into collectives/. */
extern void (*shoal_barrier_all_hook)(void);

/* ---- hooks of the teams module (collectives/team.c), registered by api/init.c; storage in state.c ----
 * The runtime knows teams only as handles. Contexts made on a team take that team's PE numbers (ctx.c): these are
 * shmem_team_translate_pe and shmem_team_n_pes once registered, NULL before (PE numbers are then world ones). */
extern int (*shoal_team_translate_hook)(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
extern int (*shoal_team_n_pes_hook)(shmem_team_t team);

/* ---- topology in the runtime (init.c) ---- */
int shoal_topo_gpu_busid(char *busid, size_t len); /* this PE's GPU bus id from the mapping, or "" */
/* CPUs for this PE's helper threads, off every PE's core (topo.h shoal_topo_spare_cpus); -1: none to choose. */
int shoal_topo_helper_cpus(cpu_set_t *set);

#endif
