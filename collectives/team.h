/*
 * team.h - the team struct, its handles and the teams module's set-up (collectives/team.c; splits and destroy, which
 * run collectives: team_split.c). Teams live with the collectives that run over them (the model: coll.h); the runtime
 * below knows a team only as an opaque shmem_team_t: the handles SHMEM_TEAM_WORLD / SHMEM_TEAM_SHARED (their storage
 * is the runtime's, state.c) and the hooks this module registers at init (api/init.c).
 */
#ifndef SHOAL_TEAM_H
#define SHOAL_TEAM_H

#include "shoal.h"

#define SHOAL_TEAM_MAGIC 0x7ea3c011u
#define SHOAL_TEAM_DEAD 0x7ea3dea0u
#define SHOAL_TEAM_SLOTS 32                          /* team slots: WORLD, SHARED, 30 for user teams */
#define SHOAL_TEAM_SCRATCH_WORLD ((size_t)256 << 10) /* bytes of scratch for SHMEM_TEAM_WORLD on one node */
/* ... and on jobs that span nodes (or SHOAL_TRANSPORT=ofi), where the internal area has room: a reduction over the
 * network takes the vector in chunks of this scratch, and each chunk costs every member a step per peer (4 PEs over
 * net on lo, 1 MiB sum_reduce: 2890 us with 256 KiB, 1418 with 1 MiB; 2 PEs 460 and 308; session 30). Read the
 * team's scratch_size, not these constants. */
#define SHOAL_TEAM_SCRATCH_WORLD_FAR ((size_t)1024 << 10)
#define SHOAL_TEAM_SCRATCH_SHARED ((size_t)64 << 10)
#define SHOAL_TEAM_SCRATCH_USER ((size_t)16 << 10)
#define SHOAL_TEAM_STAGE_WORLD ((size_t)32 << 10)   /* bytes of staging (a ring of slots) for WORLD and SHARED */
/* WORLD's on jobs that span nodes (as its scratch): a broadcast of up to half of it goes staged, a message per
 * member and no round trip, where a larger one waits for each member's entry signal (2 PEs over net on lo, 32 KiB:
 * 34 us pushed, OSHMEM 11), and members post "done" less often in a deeper ring (128 KiB: 24-26 us staged with
 * 256 KiB of staging, 47-48 pulled with 128 KiB, OSHMEM 44-46; session 30). */
#define SHOAL_TEAM_STAGE_WORLD_FAR ((size_t)256 << 10)
#define SHOAL_TEAM_STAGE_USER ((size_t)8 << 10)
#define SHOAL_STAGE_SLOT ((size_t)512)                            /* bytes: the staging ring's unit */
#define SHOAL_STAGE_SLOTS (SHOAL_TEAM_STAGE_WORLD_FAR / SHOAL_STAGE_SLOT) /* the most slots a team's ring has */
#define SHOAL_STAGE_DEEP_MAX ((size_t)128) /* bytes: rounds up to this take one slot with a PE per core too */
#define SHOAL_ASET_MAX (SHMEM_SYNC_SIZE - 1)          /* active-set size limit: pSync cells (last one: collect) */

typedef struct shoal_team shoal_team_t;
struct shoal_team {
  uint32_t magic;             /* SHOAL_TEAM_MAGIC while valid, SHOAL_TEAM_DEAD after shmem_team_destroy */
  bool aset;                  /* active set: pSync counters instead of a slot */
  bool predefined;            /* WORLD / SHARED: cannot be destroyed */
  bool remote;                /* a member is on another node (reached through the transport): see shoal_coll_far */
  bool hier;                  /* members on several nodes, two or more on some node: barrier, broadcast and
                                 reduction go through the nodes; set with the fields below by the teams module */
  bool pow2_runs;             /* hier, and the nodes are runs of the same power-of-two number of members */
  bool all_far;               /* a team (not an active set) with each member on its own node (SHOAL_TRANSPORT=ofi
                                 too), the same on every member: small broadcasts, fcollects and alltoalls push
                                 into the receivers' staging or scratch, see "Members on other nodes" above */
  int nlead, lead_idx;        /* nodes of the members, and this PE's index among their leaders (-1: not a leader) */
  int *lead;                  /* [nlead] team rank of each node's leader: its first member in the team */
  int *mates, nmates;         /* a leader: the other members of its node; any other member: its leader alone */
  int *lnode;                 /* [size] each member's node, as its index in lead */
  int *npos, *nstart;         /* node order: [size] each member's place, its node's members together (by rank);
                                 [nlead + 1] where node q's members start (q + 1: where they end) */
  int rank, size;             /* this PE's number in the team; members */
  int wstart, wstride;        /* member i is world PE wstart + i * wstride (every team here is such a sequence) */
  int slot;                   /* team slot, -1 for an active set */
  int fstride;                /* uint64 units between the flag cells of two senders */
  int *world;                 /* [size] world PE of each member */
  ptrdiff_t *delta;           /* [size] heap delta of each member */
  ptrdiff_t *cdelta;          /* [size] delta of the control space (flags, pub): delta, or adelta (pSync's space) */
  ptrdiff_t *adelta;          /* [size] an active set's pSync deltas */
  _Atomic uint64_t **rflag;   /* [size] this PE's flag cell in member r's memory (as mapped here) */
  _Atomic uint64_t *flag;     /* cells where members signal this PE: sender s at flag[s * fstride] */
  _Atomic uint64_t *pub;      /* cells others read (collect sizes): two for teams, used by turns; one (pSync's last
                                 cell) for active sets. Remote copy: pub + cdelta[r] */
  uint64_t ncollect;          /* collects done (which pub cell is next) */
  char *scratch;              /* symmetric scratch, scratch_size bytes in two halves (NULL for active sets) */
  size_t scratch_size;
  uint64_t seq;               /* last signal value; advances identically on all members */
  uint64_t round;             /* scratch rounds done: half round & 1 is next */
  char *stage;                /* this PE's staging: stage_slots slots of SHOAL_STAGE_SLOT bytes (NULL: active sets) */
  size_t stage_half;          /* half the staging: the most a staged round holds (0 for active sets) */
  int stage_slots, stage_pos; /* the ring's slots, and the first of the next round (the same on every member) */
  uint64_t stage_done[SHOAL_STAGE_SLOTS]; /* per slot: the "done" value its readers post for this PE's last round
                                             there (all_far: on every member, the last round's, whoever was root) */
  int stage_root[SHOAL_STAGE_SLOTS]; /* all_far teams, per slot: the root of the last staged round in it (-1: none) */
  int far_post_root;          /* all_far teams, as a member: the root this PE last posted to in a broadcast ... */
  uint64_t far_post_val;      /* ... the value, and the rounds from that root read since (bcast_far: "done" batched) */
  int far_unposted;
  uint64_t lead_read;         /* t->round after the last scratch round whose members read their leader's half
                                 (fcollect_hier, alltoall_hier): shmem_team_destroy waits for those reads */
  ptrdiff_t *tdelta[2];       /* [size] per-call delta tables for objects outside the heap */
  size_t *offs;               /* [size + 1] per-call block offsets (collect) */
  long *psync;                /* active set: the user's pSync */
  int cap;                    /* allocated length of the arrays above */
  shmem_team_config_t config;
  long config_mask;
};

/* ---- handles (team.c) ----
 * Every team object of this PE lives in one static table (entry 0: WORLD, 1: SHARED), so a handle is checked by
 * address against the table before anything behind it is read: a garbage handle gets the one-line error instead of
 * a SIGSEGV. At most SHOAL_TEAM_SLOTS - 2 user teams of a PE are alive at once; the other entries hold destroyed
 * teams (reused round robin, so a stale handle reads as destroyed for at least 64 later creations). */
#define SHOAL_TEAM_POOL (SHOAL_TEAM_SLOTS + 64)
extern shoal_team_t shoal_team_pool[SHOAL_TEAM_POOL];
static inline bool shoal_team_in_pool(const void *team) {
  uintptr_t off = (uintptr_t)team - (uintptr_t)shoal_team_pool;
  return off < sizeof shoal_team_pool && off % sizeof(shoal_team_t) == 0;
}
_Noreturn void shoal_team_invalid(const char *routine, shmem_team_t team);
/* The team behind a handle; fatal for SHMEM_TEAM_INVALID, a destroyed team or garbage, naming routine. */
static inline shoal_team_t *shoal_team_get(shmem_team_t team, const char *routine) {
  SHOAL_CHECK_INIT(routine);
  shoal_team_t *t = (shoal_team_t *)team;
  if (SHOAL_UNLIKELY(!shoal_team_in_pool(t) || t->magic != SHOAL_TEAM_MAGIC)) shoal_team_invalid(routine, team);
  return t;
}
/* The active set (PE_start, logPE_stride, PE_size) with pSync as a team (cached: one lookup per call); fatal for an
 * invalid triplet, a calling PE outside the set, or a pSync that is not symmetric. */
shoal_team_t *shoal_aset_get(int PE_start, int logPE_stride, int PE_size, long *pSync, const char *routine);

/* ---- set-up (team.c, called by api/init.c) ---- */
/* After the host heap and the transports are up: the team slots in the internal symmetric area (the same offsets on
 * every PE: call it in the same order everywhere), then WORLD and SHARED, whose handles it sets. SHOAL_ERR_NOMEM when
 * their arrays cannot be allocated. Not collective (no communication). */
shoal_status_t shoal_team_init(void);
/* At shmem_finalize, after the GPU is released: frees every team's arrays and forgets every handle (a later use of
 * one reads as invalid). */
void shoal_team_fini(void);
/* The device state's team fields (team_world, team_shared, team_pool, team_stride, team_count) and rows[i] = {wstart,
 * wstride, size, rank} of every live team at pool entry i < nrows (the others left as they are: zero): registered
 * as the runtime's shoal_gpu_teams_hook (runtime/heap_gpu.h), so that the device heap's set-up learns the teams
 * without calling up into this module. */
void shoal_team_gpu_fill(shmemx_device_state_t *st, int32_t (*rows)[4], int nrows);

/* ---- for the operations that run collectives (team_split.c: splits, destroy; definitions in team.c) ---- */
extern bool shoal_team_slot_used[SHOAL_TEAM_SLOTS];   /* a team of this PE holds the slot */
extern uint64_t shoal_team_slot_hw[SHOAL_TEAM_SLOTS]; /* highest signal value a team of this PE used in the slot */
extern uint64_t *shoal_team_split_buf;                /* symmetric: the slot table reduced over the parent at a split */
/* A pool entry for a new team: never used, or destroyed longest ago (NULL: none). */
shoal_team_t *shoal_team_alloc(void);
/* Fill a team on slot with members wstart + i * wstride; rank is this PE's number, seq its first signal value. */
shoal_status_t shoal_team_setup(shoal_team_t *t, int slot, int wstart, int wstride, int size, int rank,
                                uint64_t seq);
/* Free a team's arrays. */
void shoal_team_free(shoal_team_t *t);

/* ---- set by shoal_team_init for the collectives (coll_core.h) ---- */
/* Some node of the job runs more PEs than it has CPUs (shoal_g.crowded: the same on every PE, so members choose
 * alike): algorithms that need every member scheduled at once (pull, rsag, a round trip per call) cost context
 * switches there, so the automatic choice favours pushes, and small broadcasts, fcollects and alltoalls that let a
 * PE run ahead (staging ring, pushes into scratch). */
extern bool shoal_coll_oversubscribed;
/* Bytes a call must write across the team before its copies stream past the caches (shoal_copy_stream): half the
 * last-level cache (set at init). Only [f]collect and alltoall, whose volume is members^2 blocks: a broadcast's
 * copies measured slower streamed at 1-2 MiB on 4 PEs (their readers find them in cache otherwise). */
extern size_t shoal_coll_stream_min;

#endif
