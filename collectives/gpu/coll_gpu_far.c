/*
 * coll_gpu_far.c - GPU collectives on teams with members on other nodes (issue 31, part 3): fcollect, alltoall,
 * broadcast and reductions on device-heap buffers, host form and _on_stream form, when the team is t->remote.
 *
 * The kernels of coll_gpu.cu store into every member's device heap through this node's mappings, which a member of
 * another node does not have. Here the host drives the exchange through the RMA paths that reach a device heap
 * wherever it is: a member of this node by the copy engine through its mapping (heap_gpu.c), a member of another node
 * through the comm layer (staged through pinned host buffers where the provider has no FI_HMEM; docs/gpu.md). The
 * route is decided by the runtime per PE, once, at init; this file makes one choice per call: t->remote.
 *
 *   fcollect, alltoall, broadcast: entry barrier (every member has entered: its dest may be written), then this PE's
 *     blocks put to every member, starting with the next one in the team (rotated, so that members do not all write
 *     to one member first), quiet, exit barrier (every dest complete when any member returns).
 *   reductions: entry barrier (every source ready), then per chunk of at most FAR_RED_CHUNK bytes: the chunk of every
 *     member's source read in team order 0 .. n-1 and combined in that order in the kernels' accumulator type (float
 *     for half and bfloat16, rounded once at the end), so every member gets the bits the kernels give; a barrier (no
 *     member's source is still being read: dest may be the source), then the chunk written to this PE's dest.
 *     Traffic: every member reads the whole vector of every member (n x nbytes per member): correct and simple, not
 *     bandwidth-optimal; the in-node kernels keep their own path for teams of one node.
 * Through the nodes (t->hier: members on several nodes, two or more on some; SHOAL_COLL_GPU_FAR): only each node's
 * leader (its first member in the team) moves data between nodes, and its node's members get theirs from it by the
 * copy engine, so one copy per node crosses instead of one per member (what NVSHMEM and NCCL do between nodes):
 *   fcollect: every member's block into its leader's dest; each leader its node's blocks (runs of consecutive
 *     ranks: one put each) into every other leader's dest; each leader its whole dest to its members. 4 barriers.
 *   broadcast: the root into its node's members and every other node's leader; those leaders to their members.
 *     3 barriers.
 *   reductions (not half and bfloat16, whose partials would be rounded once more): per chunk, each leader combines
 *     its node's chunks in team order into its dest, then every leader combines the leaders' partials in leader
 *     order (so every member gets the same bits, which for floating-point sums and products may differ in the last
 *     bits from the flat form's and the kernels' team order) and writes its members' dest. 2 barriers per chunk, 1
 *     more at the end. A leader reads (nodes - 1) partials between nodes, where each member read (n - its node's)
 *     chunks.
 *   alltoall keeps the flat form: each pair of members has its own bytes, so the leaders would carry as many.
 * A stream (the _on_stream forms) is synchronized first, so that its earlier work on the source is done; on return
 * dest is complete, so the stream's later work sees it.
 */
#include "coll_core.h"
#include "coll_half.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu.h"
#include "gpu/coll_gpu_reduce.h"

#include <stdlib.h>
#include <string.h>

#define FAR_RED_CHUNK ((size_t)4 << 20) /* bytes of a reduction's chunk: two host buffers of it per call */

static void far_sync(void *stream, const char *routine) {
  if (stream && shoal_gpu_ops.stream_sync(stream)) shoal_fatal(routine, "cannot synchronize stream %p", stream);
}

/* Through the nodes for this team (t->hier), unless SHOAL_COLL_GPU_FAR=flat; hierarchical on a team without a
 * shared node is flat (nothing to save). The same on every member: the team's layout and the environment are. */
static bool far_hier(const shoal_team_t *t) {
  return t->hier && !t->aset && strcmp(shoal_env.coll_gpu_far, "flat");
}

/* The members of node q, in team order, as runs of consecutive ranks: BODY runs once per run with r0 its first rank
 * and len its length (a break in BODY leaves only this loop). */
#define NODE_RUNS(t, q, r0, len, BODY)                                                                                 \
  for (int r0 = 0, len; r0 < (t)->size; r0 += len ? len : 1) {                                                         \
    len = 0;                                                                                                           \
    while (r0 + len < (t)->size && (t)->lnode[r0 + len] == (q)) len++;                                                 \
    if (len) BODY                                                                                                      \
  }

static void hier_fcollect(shoal_team_t *t, char *d, const char *s, size_t nbytes, const char *routine) {
  const int me = t->rank, mine = t->lnode[me], lead = t->lead[mine];
  shoal_rma_put_nbi(routine, d + (size_t)me * nbytes, s, nbytes, t->world[lead]);
  shmem_quiet();
  shoal_coll_barrier(t, routine); /* every leader holds its node's blocks */
  if (t->lead_idx >= 0) {
    for (int k = 1; k < t->nlead; k++) {
      const int to = t->world[t->lead[(t->lead_idx + k) % t->nlead]];
      NODE_RUNS(t, mine, r0, len, {
        const size_t off = (size_t)r0 * nbytes;
        shoal_rma_put_nbi(routine, d + off, d + off, (size_t)len * nbytes, to);
      })
    }
  }
  shmem_quiet();
  shoal_coll_barrier(t, routine); /* every leader's dest is complete */
  if (t->lead_idx >= 0)
    for (int m = 0; m < t->nmates; m++) shoal_rma_put_nbi(routine, d, d, (size_t)t->size * nbytes, t->world[t->mates[m]]);
}

static void hier_bcast(shoal_team_t *t, char *d, const char *s, size_t nbytes, int root, const char *routine) {
  const int me = t->rank, rnode = t->lnode[root];
  if (me == root) {
    for (int q = 0; q < t->nlead; q++) /* other nodes' leaders */
      if (q != rnode) shoal_rma_put_nbi(routine, d, s, nbytes, t->world[t->lead[q]]);
    for (int r = 0; r < t->size; r++) /* this node's members, the root last */
      if (t->lnode[r] == rnode && r != root) shoal_rma_put_nbi(routine, d, s, nbytes, t->world[r]);
    shoal_rma_put_nbi(routine, d, s, nbytes, t->world[root]);
  }
  shmem_quiet();
  shoal_coll_barrier(t, routine); /* every node's leader has it */
  if (t->lead_idx >= 0 && t->lead_idx != rnode)
    for (int m = 0; m < t->nmates; m++) shoal_rma_put_nbi(routine, d, d, nbytes, t->world[t->mates[m]]);
}

int shoal_coll_gpu_far(int op, shoal_team_t *t, void *dest, const void *source, size_t nbytes, int root, void *stream,
                       const char *routine) {
  const int n = t->size, me = t->rank;
  char *d = dest;
  const char *s = source;
  far_sync(stream, routine);
  shoal_coll_barrier(t, routine);
  if (op != SHOAL_COLL_GPU_ALLTOALL && far_hier(t)) {
    if (op == SHOAL_COLL_GPU_BCAST) hier_bcast(t, d, s, nbytes, root, routine);
    else hier_fcollect(t, d, s, nbytes, routine);
    shmem_quiet();
    shoal_coll_barrier(t, routine);
    return SHOAL_OK;
  }
  if (op != SHOAL_COLL_GPU_BCAST || me == root)
    for (int k = 1; k <= n; k++) { /* k == n: this PE itself, last */
      const int r = (me + k) % n;
      const size_t doff = op == SHOAL_COLL_GPU_BCAST ? 0 : (size_t)me * nbytes,
                   soff = op == SHOAL_COLL_GPU_ALLTOALL ? (size_t)r * nbytes : 0;
      shoal_rma_put_nbi(routine, d + doff, s + soff, nbytes, t->world[r]);
    }
  shmem_quiet();
  shoal_coll_barrier(t, routine);
  return SHOAL_OK;
}

/* ---- reductions: acc (the accumulator type) = in[0]; acc = acc op in[r] for r = 1 .. n-1; out = acc ---- */
#define RED_MIN(a, b) ((b) < (a) ? (b) : (a))
#define RED_MAX(a, b) ((a) < (b) ? (b) : (a))
/* Integer types: sum and prod in the unsigned type of the same size (wrap-around, as the kernels' widen-and-narrow
 * gives, without C's signed overflow), min and max in T. */
#define RED_INT(T, U)                                                                                                  \
  do {                                                                                                                 \
    T *a = acc;                                                                                                        \
    const T *b = in;                                                                                                   \
    for (size_t i = 0; i < m; i++)                                                                                     \
      switch (op) {                                                                                                    \
      case SHOAL_RED_SUM: a[i] = (T)((U)a[i] + (U)b[i]); break;                                                        \
      case SHOAL_RED_PROD: a[i] = (T)((U)a[i] * (U)b[i]); break;                                                       \
      case SHOAL_RED_MIN: a[i] = RED_MIN(a[i], b[i]); break;                                                           \
      case SHOAL_RED_MAX: a[i] = RED_MAX(a[i], b[i]); break;                                                           \
      case SHOAL_RED_AND: a[i] = (T)(a[i] & b[i]); break;                                                              \
      case SHOAL_RED_OR: a[i] = (T)(a[i] | b[i]); break;                                                               \
      default: a[i] = (T)(a[i] ^ b[i]); break;                                                                         \
      }                                                                                                                \
  } while (0)
/* Real types in accumulator A, the input's elements read as T through CONV. */
#define RED_REAL(A, T, CONV)                                                                                           \
  do {                                                                                                                 \
    A *a = acc;                                                                                                        \
    const T *b = in;                                                                                                   \
    for (size_t i = 0; i < m; i++) {                                                                                   \
      A v = CONV(b[i]);                                                                                                \
      a[i] = op == SHOAL_RED_SUM ? a[i] + v : op == SHOAL_RED_PROD ? a[i] * v                                          \
           : op == SHOAL_RED_MIN ? RED_MIN(a[i], v) : RED_MAX(a[i], v);                                                \
    }                                                                                                                  \
  } while (0)
/* Complex: (re, im) pairs, sum and prod as the kernels' capply. */
#define RED_CPLX(R)                                                                                                    \
  do {                                                                                                                 \
    R *a = acc;                                                                                                        \
    const R *b = in;                                                                                                   \
    for (size_t i = 0; i < m; i++) {                                                                                   \
      R ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];                                            \
      if (op == SHOAL_RED_SUM) a[2 * i] = ar + br, a[2 * i + 1] = ai + bi;                                             \
      else a[2 * i] = ar * br - ai * bi, a[2 * i + 1] = ar * bi + ai * br;                                             \
    }                                                                                                                  \
  } while (0)
#define SAME(x) (x)

/* acc op= in, m elements of type (SHOAL_RT_*); acc is float for F16 and BF16, the type itself otherwise. */
static void combine(int type, int op, void *acc, const void *in, size_t m) {
  switch (type) {
  case SHOAL_RT_I8: RED_INT(int8_t, uint8_t); break;
  case SHOAL_RT_U8: RED_INT(uint8_t, uint8_t); break;
  case SHOAL_RT_I16: RED_INT(int16_t, uint16_t); break;
  case SHOAL_RT_U16: RED_INT(uint16_t, uint16_t); break;
  case SHOAL_RT_I32: RED_INT(int32_t, uint32_t); break;
  case SHOAL_RT_U32: RED_INT(uint32_t, uint32_t); break;
  case SHOAL_RT_I64: RED_INT(int64_t, uint64_t); break;
  case SHOAL_RT_U64: RED_INT(uint64_t, uint64_t); break;
  case SHOAL_RT_F32: RED_REAL(float, float, SAME); break;
  case SHOAL_RT_F64: RED_REAL(double, double, SAME); break;
  case SHOAL_RT_F16: RED_REAL(float, uint16_t, h2f); break;
  case SHOAL_RT_BF16: RED_REAL(float, uint16_t, bf2f); break;
  case SHOAL_RT_CF32: RED_CPLX(float); break;
  default: RED_CPLX(double); break;
  }
}

/* The first member's chunk into the accumulator (widened for F16/BF16), and the accumulator back to the type. */
static void acc_load(int type, float *acc, const uint16_t *in, size_t m) {
  for (size_t i = 0; i < m; i++) acc[i] = type == SHOAL_RT_F16 ? h2f(in[i]) : bf2f(in[i]);
}
static void acc_store(int type, uint16_t *out, const float *acc, size_t m) {
  for (size_t i = 0; i < m; i++) out[i] = type == SHOAL_RT_F16 ? f2h(acc[i]) : f2bf(acc[i]);
}

/* Through the nodes (t->hier; header): a leader's node partial of each chunk goes into its own dest, where the other
 * leaders read it; members only take part in the barriers, and get the result from their leader. */
static void hier_reduce(shoal_team_t *t, char *dest, const char *source, size_t nelems, size_t chunk, size_t es,
                        int type, int op, char *acc, char *in, const char *routine) {
  const int mine = t->lnode[t->rank];
  const bool lead = t->lead_idx >= 0;
  for (size_t e0 = 0; e0 < nelems; e0 += chunk) {
    const size_t m = nelems - e0 < chunk ? nelems - e0 : chunk, off = e0 * es, len = m * es;
    bool first = true;
    for (int r = 0; r < t->size && lead; r++) /* this node's chunks, in team order */
      if (t->lnode[r] == mine) {
        shoal_rma_get(routine, first ? acc : in, source + off, len, t->world[r]);
        if (!first) combine(type, op, acc, in, m);
        first = false;
      }
    /* No barrier before this write: a node's sources are read by its leader alone, and a member's dest is written
     * only at the chunk's end, so the partial overwrites nothing another PE still reads (dest may be the source). */
    if (lead) shoal_rma_put(routine, dest + off, acc, len, t->world[t->rank]);
    shoal_coll_barrier(t, routine); /* every leader's partial is in its dest */
    for (int q = 0; q < t->nlead && lead; q++) { /* the partials in leader order: the same bits on every leader */
      shoal_rma_get(routine, q ? in : acc, dest + off, len, t->world[t->lead[q]]);
      if (q) combine(type, op, acc, in, m);
    }
    shoal_coll_barrier(t, routine); /* no partial is read any more */
    if (lead) {
      shoal_rma_put(routine, dest + off, acc, len, t->world[t->rank]);
      for (int k = 0; k < t->nmates; k++) shoal_rma_put_nbi(routine, dest + off, acc, len, t->world[t->mates[k]]);
      shmem_quiet(); /* acc is the next chunk's */
    }
  }
  shoal_coll_barrier(t, routine); /* every member's dest is complete */
}

int shoal_coll_gpu_reduce_far(shoal_team_t *t, void *dest, const void *source, size_t nelems, int type, int op,
                              void *stream, const char *routine) {
  const int n = t->size, me = t->rank;
  const size_t es = shoal_red_type_size(type), per = FAR_RED_CHUNK / es,
               chunk = nelems < per ? nelems : per;
  const bool wide = type == SHOAL_RT_F16 || type == SHOAL_RT_BF16;
  char *acc = malloc(chunk * (wide ? sizeof(float) : es)), *in = malloc(chunk * es);
  if (!acc || !in) shoal_fatal(routine, "out of memory for two host buffers of %zu bytes", chunk * es);
  far_sync(stream, routine);
  shoal_coll_barrier(t, routine);
  if (!wide && far_hier(t)) {
    hier_reduce(t, dest, source, nelems, chunk, es, type, op, acc, in, routine);
    free(acc);
    free(in);
    return SHOAL_OK;
  }
  for (size_t e0 = 0; e0 < nelems; e0 += chunk) {
    const size_t m = nelems - e0 < chunk ? nelems - e0 : chunk, off = e0 * es;
    for (int r = 0; r < n; r++) {
      shoal_rma_get(routine, r || wide ? in : acc, (const char *)source + off, m * es, t->world[r]);
      if (!r && wide) acc_load(type, (float *)acc, (const uint16_t *)in, m);
      else if (r) combine(type, op, acc, in, m);
    }
    if (wide) acc_store(type, (uint16_t *)in, (const float *)acc, m);
    shoal_coll_barrier(t, routine); /* every member has read this chunk of every source: dest may be a source */
    shoal_rma_put(routine, (char *)dest + off, wide ? in : acc, m * es, t->world[me]);
  }
  free(acc);
  free(in);
  return SHOAL_OK;
}
