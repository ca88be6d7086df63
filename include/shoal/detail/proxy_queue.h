/*
 * shoal/detail/proxy_queue.h - NOT ABI: may change in any release, with no notice. The request queue between a
 * kernel (producer) and its PE's host proxy thread (consumer, runtime/proxy.c) for device-initiated operations on PEs
 * that loads and stores cannot reach (another node): docs/gpu.md, "The proxy". Plain memory and plain code, written
 * once for C (host atomics: the proxy, and the CPU producer of the tests) and for CUDA/HIP device code (system-scope
 * atomics), so that the CPU test runs the very code a kernel runs.
 *
 * Layout. A descriptor (shoal_proxy_queue_t: the ticket counter, the mask, the ring's address as the producer sees
 * it) and a ring of a power of two of 64-byte entries (pinned host memory the GPU writes through its mapping).
 * Protocol, per entry, for ticket t (slot t & mask):
 *   seq == 4t       the slot is free for ticket t
 *   seq == 4t + 1   posted: the producer filled the fields, then stored seq with release (system scope)
 *   seq == 4t + 2   answered: the proxy wrote the result into value (an op posted with SHOAL_PROXY_F_WAIT); the
 *                   producer reads it, then frees the slot for ticket t + entries (seq = 4(t + entries))
 * The proxy frees the slot itself (seq = 4(t + entries)) after an op without SHOAL_PROXY_F_WAIT. A producer takes its
 * ticket with one fetch-add and waits until its slot is free (back-pressure: at most `entries` requests are in
 * flight). The proxy serves tickets in order and never waits for a producer, so a producer waits only for the proxy:
 * no deadlock, and no overrun by construction. Any other seq value in the slot the proxy waits on is a corrupted
 * queue, reported by the proxy.
 */
#ifndef SHOAL_DETAIL_PROXY_QUEUE_H
#define SHOAL_DETAIL_PROXY_QUEUE_H
#include <stddef.h>
#include <stdint.h>

/* Operations (entry.op). 0 is no operation: a zeroed entry is refused. */
enum {
  SHOAL_PROXY_PUT = 1,    /* bytes from local to target on pe */
  SHOAL_PROXY_GET,        /* bytes from target on pe to local */
  SHOAL_PROXY_P,          /* value (bytes: 1, 2, 4, 8) to target on pe */
  SHOAL_PROXY_G,          /* target on pe (bytes: 1, 2, 4, 8) into value */
  SHOAL_PROXY_AMO,        /* aop on the bytes (4, 8) at target on pe: value, cmp; the old value into value */
  SHOAL_PROXY_PUT_SIGNAL, /* PUT, then the signal: sig on pe updated by sig_op with value */
  SHOAL_PROXY_FENCE,      /* what came before is delivered before what comes after, per target PE */
  SHOAL_PROXY_QUIET,      /* everything before is complete (post with SHOAL_PROXY_F_WAIT) */
  SHOAL_PROXY_NOPS
};
/* AMO operations (entry.aop): the device API's and the GPU backend's order (device/gpu.h shoal_gpu_amo_op_t). */
enum {
  SHOAL_PROXY_AMO_FETCH, SHOAL_PROXY_AMO_SET, SHOAL_PROXY_AMO_SWAP, SHOAL_PROXY_AMO_CSWAP, SHOAL_PROXY_AMO_ADD,
  SHOAL_PROXY_AMO_AND, SHOAL_PROXY_AMO_OR, SHOAL_PROXY_AMO_XOR, SHOAL_PROXY_AMO_NOPS
};
#define SHOAL_PROXY_F_WAIT 1u /* the producer waits for the answer (seq 4t + 2): results, blocking forms, quiet */
#define SHOAL_PROXY_F_NBI 2u  /* the request came from an _nbi form (for messages only) */
/* PUT of 1 to 8 bytes whose bytes are in value (the producer copied them: the source is free at once, so a blocking
 * put need not wait for the proxy's copy); local still names the source, for messages */
#define SHOAL_PROXY_F_INLINE 4u

typedef struct shoal_proxy_entry {
  uint64_t seq;     /* the slot's state (above): written last by the producer, with release */
  uint8_t op;       /* SHOAL_PROXY_* */
  uint8_t aop;      /* SHOAL_PROXY_AMO_* (AMO) */
  uint8_t sig_op;   /* SHMEM_SIGNAL_SET / SHMEM_SIGNAL_ADD (PUT_SIGNAL) */
  uint8_t flags;    /* SHOAL_PROXY_F_* */
  int32_t pe;       /* target PE (world numbering) */
  uint64_t target;  /* symmetric address of the object (as this PE names it: the address the host API takes) */
  uint64_t local;   /* PUT's source, GET's destination: any memory of this process the GPU copy engine reaches */
  uint64_t bytes;   /* PUT / GET: bytes; P, G, AMO: the element's size in bytes */
  uint64_t value;   /* P: the value; AMO: the operand; PUT_SIGNAL: the signal value; the answer of G and AMO */
  uint64_t cmp;     /* AMO compare-swap: the condition */
  uint64_t sig;     /* PUT_SIGNAL: symmetric address of the 8-byte signal */
} shoal_proxy_entry_t;

typedef struct shoal_proxy_queue {
  uint64_t tail;             /* next ticket (producers' fetch-add); GPU memory with a GPU */
  uint64_t mask;             /* entries - 1, entries a power of two */
  shoal_proxy_entry_t *ring; /* the ring as the producer addresses it (the device mapping of pinned host memory) */
  uint64_t pad_[5];          /* one 64-byte line */
} shoal_proxy_queue_t;

#ifdef __cplusplus
static_assert(sizeof(shoal_proxy_entry_t) == 64, "proxy entry: 64 bytes");
static_assert(sizeof(shoal_proxy_queue_t) == 64, "proxy queue descriptor: 64 bytes");
#else
_Static_assert(sizeof(shoal_proxy_entry_t) == 64, "proxy entry: 64 bytes");
_Static_assert(sizeof(shoal_proxy_queue_t) == 64, "proxy queue descriptor: 64 bytes");
#endif

/* The atomics of the two producers: a 64-bit fetch-add (the ticket: the producers' only shared word), acquire loads
 * and release stores of the seq word (system scope on a GPU: the consumer is the CPU), a pause while spinning. */
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SHOAL_PQ_FN static __device__ __forceinline__
#define SHOAL_PQ_TICKET(p) ((uint64_t)atomicAdd((unsigned long long *)(p), 1ull)) /* device scope: one GPU's threads */
#define SHOAL_PQ_LOAD(p) ((uint64_t)shoal_port::ld_acquire_sys((const unsigned long long *)(p)))
#define SHOAL_PQ_STORE(p, v) shoal_port::st_release_sys((unsigned long long *)(p), (unsigned long long)(v))
#define SHOAL_PQ_PAUSE(n) shoal_port::pause()
#define SHOAL_PQ_FENCE() __threadfence_system()
#else
#include <sched.h>
#define SHOAL_PQ_FN static inline
#define SHOAL_PQ_TICKET(p) __atomic_fetch_add((p), (uint64_t)1, __ATOMIC_RELAXED)
#define SHOAL_PQ_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SHOAL_PQ_STORE(p, v) __atomic_store_n((p), (uint64_t)(v), __ATOMIC_RELEASE)
#define SHOAL_PQ_PAUSE(n) ((n) % 64 ? (void)0 : (void)sched_yield()) /* CPU producers may outnumber the cores */
#define SHOAL_PQ_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* Post e (every field but seq) and return its ticket: take a ticket, wait for the slot to be free for it (the queue
 * full: the proxy frees slots in ticket order), copy the fields, publish with a release store of seq. Stores this
 * thread made before (a PUT's source) are visible to the proxy once it sees the entry. */
SHOAL_PQ_FN uint64_t shoal_proxy_post(shoal_proxy_queue_t *q, const shoal_proxy_entry_t *e) {
  const uint64_t t = SHOAL_PQ_TICKET(&q->tail);
  shoal_proxy_entry_t *s = q->ring + (t & q->mask);
  for (unsigned n = 1; SHOAL_PQ_LOAD(&s->seq) != 4 * t; n++) SHOAL_PQ_PAUSE(n);
  volatile uint64_t *d = (volatile uint64_t *)s; /* word by word: plain stores, ordered by the release below */
  const uint64_t *w = (const uint64_t *)e;
  for (int i = 1; i < 8; i++) d[i] = w[i];
  SHOAL_PQ_STORE(&s->seq, 4 * t + 1);
  return t;
}

/* Wait for the answer to ticket t (posted with SHOAL_PROXY_F_WAIT), free its slot, return the answer's value (G,
 * AMO: the old value; others: 0). Once it returns, the request is done (a GET's data is in local). */
SHOAL_PQ_FN uint64_t shoal_proxy_wait(shoal_proxy_queue_t *q, uint64_t t) {
  shoal_proxy_entry_t *s = q->ring + (t & q->mask);
  for (unsigned n = 1; SHOAL_PQ_LOAD(&s->seq) != 4 * t + 2; n++) SHOAL_PQ_PAUSE(n);
  const uint64_t v = *(volatile uint64_t *)&s->value;
  SHOAL_PQ_STORE(&s->seq, 4 * (t + q->mask + 1));
  return v;
}

/* Post e and, with SHOAL_PROXY_F_WAIT, wait for its answer: the one call of the device API's proxy route. */
SHOAL_PQ_FN uint64_t shoal_proxy_call(shoal_proxy_queue_t *q, const shoal_proxy_entry_t *e) {
  const uint64_t t = shoal_proxy_post(q, e);
  return e->flags & SHOAL_PROXY_F_WAIT ? shoal_proxy_wait(q, t) : 0;
}

#endif
