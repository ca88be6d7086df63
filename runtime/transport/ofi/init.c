/* init.c - the libfabric transport: see ofi.h */
#include "ofi.h"

#include <sys/mman.h>

static unsigned force_flags;

/* ---- registration, init, fini ---- */
static shoal_status_t tl_reg(int space, void *base, size_t len, int gpu_kind, int gpu_dev) {
  if ((unsigned)space >= SHOAL_SPACE_MAX || shoal_ofi.up || shoal_ofi.reg[space].base || !base || !len) {
    shoal_warn("shoal_tl_ofi_reg: space %d: %s", space,
               (unsigned)space >= SHOAL_SPACE_MAX ? "out of range" : shoal_ofi.up ? "called after init"
               : shoal_ofi.reg[space].base ? "already registered" : "no memory");
    return SHOAL_ERR_INVAL;
  }
  shoal_ofi.reg[space] = (region_t){.base = base, .len = len, .gpu_kind = gpu_kind, .gpu_dev = gpu_dev};
  return SHOAL_OK;
}

#define MR_MODES (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)
#define MR_ANY (MR_MODES | FI_MR_LOCAL | FI_MR_RAW | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT | FI_MR_HMEM)

/* Hints of increasing strictness: the first level that finds nothing names what is missing. */
enum { H_ANY, H_RDM, H_RMA, H_ATOMIC, H_MSG, H_THREAD, H_MR, H_HMEM, H_RAW, H_FULL };
static struct fi_info *hints_at(int level, const char *prov) {
  struct fi_info *h = fi_allocinfo();
  if (!h) return NULL;
  if (prov && *prov) h->fabric_attr->prov_name = strdup(prov);
  h->mode = level >= H_MR ? 0 : ~0ull;
  h->domain_attr->mr_mode = level >= H_MR ? MR_MODES : MR_ANY;
  if (level >= H_RDM) h->ep_attr->type = FI_EP_RDM;
  if (level >= H_RMA) h->caps |= FI_RMA;
  if (level >= H_ATOMIC) h->caps |= FI_ATOMIC;
  if (level >= H_MSG) h->caps |= FI_MSG;
  if (level >= H_THREAD) h->domain_attr->threading = FI_THREAD_SAFE;
  if (level == H_HMEM || level == H_FULL) {
    h->caps |= FI_HMEM;
    h->domain_attr->mr_mode |= FI_MR_HMEM;
  }
  if (level >= H_RAW) h->tx_attr->msg_order = FI_ORDER_RMA_RAW;
  return h;
}
static const char *const level_names[] = {
  [H_RDM] = "FI_EP_RDM", [H_RMA] = "FI_RMA", [H_ATOMIC] = "FI_ATOMIC", [H_MSG] = "FI_MSG",
  [H_THREAD] = "FI_THREAD_SAFE", [H_MR] = "memory registration without FI_MR_LOCAL (mr_mode within "
  "FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY|FI_MR_ENDPOINT) and no mode bits"};

static struct fi_info *getinfo(int level, const char *prov) {
  struct fi_info *h = hints_at(level, prov), *info = NULL;
  if (!h) return NULL;
  if (fi_getinfo(OFI_API, NULL, NULL, 0, h, &info)) info = NULL;
  fi_freeinfo(h);
  return info;
}

/* No usable provider: every provider libfabric offers (FI_PROVIDER applies), and the first capability that none of
 * those of the name asked for (if any) has. */
static void explain_no_provider(const char *prov, const char *from) {
  char found[512] = "", missing[320];
  size_t used = 0;
  struct fi_info *all = getinfo(H_ANY, NULL);
  for (struct fi_info *i = all; i; i = i->next) {
    const char *n = i->fabric_attr->prov_name;
    bool dup = false;
    for (struct fi_info *j = all; j != i && !dup; j = j->next) dup = !strcmp(j->fabric_attr->prov_name, n);
    if (!dup && used < sizeof found)
      used += (size_t)snprintf(found + used, sizeof found - used, "%s%s", used ? ", " : "", n);
  }
  fi_freeinfo(all);
  int level = H_ANY;
  for (; level <= H_MR; level++) {
    struct fi_info *i = getinfo(level, prov);
    fi_freeinfo(i);
    if (!i) break;
  }
  if (level == H_ANY)
    snprintf(missing, sizeof missing, "a provider named %s", prov ? prov : "(any)");
  else if (level <= H_MR)
    snprintf(missing, sizeof missing, "%s", level_names[level]); /* the levels before it were found */
  else
    snprintf(missing, sizeof missing, "the combination of FI_EP_RDM, FI_RMA, FI_ATOMIC, FI_MSG and FI_THREAD_SAFE");
  char asked[96] = "";
  if (prov && *prov) snprintf(asked, sizeof asked, " (%s=%s)", from, prov);
  shoal_warn("fi_getinfo: no usable provider%s: found %s; missing %s", asked, used ? found : "none", missing);
}

/* A step of init failed after fi_getinfo chose a provider (one that claims what Shoal asks for, e.g. udp;ofi_rxd
 * refusing a counter): name the provider and who chose it, so that the line says what to change. */
static const char *chosen_by = "libfabric's choice"; /* set by tl_init */
static shoal_status_t open_fail(const char *routine, int ret) {
  shoal_warn("%s: %s (provider %s, %s; shoal-info lists the others)", routine, fi_strerror(-ret),
             shoal_ofi.info ? shoal_ofi.info->fabric_attr->prov_name : "none", chosen_by);
  return SHOAL_ERR_IO;
}

static void tl_fini(void);

/* Atomics: per type, native when fi_query_atomic accepts every op the spec has on it. */
static void query_atomics(void) {
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) {
    bool all = !(force_flags & SHOAL_TL_OFI_FORCE_MSG_AMO);
    for (int o = 0; o < SHOAL_TL_AMO_NOPS && all; o++) {
      if (!(amo_ops[o].cls & amo_types[t].cls)) continue;
      struct fi_atomic_attr a;
      uint64_t flags = amo_ops[o].kind == K_FETCH ? FI_FETCH_ATOMIC : amo_ops[o].kind == K_CMP ? FI_COMPARE_ATOMIC : 0;
      if (fi_query_atomic(shoal_ofi.domain, amo_types[t].dt, amo_ops[o].op, &a, flags) || a.count < 1) {
        all = false;
        SHOAL_DEBUG(SHOAL_SUB_OFI, "%s: no native %s on %s: message fallback for every op on it",
                    shoal_ofi.info->fabric_attr->prov_name, amo_ops[o].name, amo_types[t].name);
      }
    }
    shoal_ofi.native[t] = all;
  }
}

/* libfabric's tcp providers take another interface without a word when their variable names none they can use
 * (seen: FI_TCP_IFACE=nosuch0 -> eth0; net with only FI_TCP_IFACE set -> eth0, so a job's traffic goes over the
 * wrong network): refuse instead, naming the interfaces there are. tcp reads FI_TCP_IFACE, net (the rewrite, named
 * tcp again from libfabric 1.18) FI_NET_IFACE, and takes FI_TCP_IFACE's interface here when only that is set, as
 * the user asked for that interface. Each names its domain after the interface it took. */
static bool iface_refused(const struct fi_info *info) {
  const char *pn = info->fabric_attr->prov_name, *var = NULL, *want = NULL, *got = info->domain_attr->name;
  if (!strncmp(pn, "tcp", 3)) var = "FI_TCP_IFACE";
  else if (!strncmp(pn, "net", 3)) var = getenv("FI_NET_IFACE") && *getenv("FI_NET_IFACE") ? "FI_NET_IFACE"
                                                                                               : "FI_TCP_IFACE";
  if (var) want = getenv(var);
  const char *base = var && !strncmp(pn, "net", 3) ? "net" : "tcp"; /* tcp;ofi_rxm: tcp's interface */
  if (!want || !*want || (got && !strcmp(got, want))) return false;
  char list[256] = "";
  struct if_nameindex *ni = if_nameindex();
  for (struct if_nameindex *i = ni; i && i->if_name; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", i->if_name);
  }
  if (ni) if_freenameindex(ni);
  if (strcmp(var, !strncmp(pn, "net", 3) ? "FI_NET_IFACE" : "FI_TCP_IFACE"))
    shoal_warn("fi_getinfo: %s=%s is not read by libfabric's %s provider, which would take %s instead: set "
               "FI_NET_IFACE to one of this machine's interfaces (%s)", var, want, base, got ? got : "another", list);
  else
    shoal_warn("fi_getinfo: %s=%s %s, and libfabric's %s provider would take %s instead: name one of this machine's "
               "interfaces (%s)", var, want, if_nametoindex(want) ? "has no address the provider can use"
               : "names no network interface here", base, got ? got : "another", list);
  return true;
}

/* With no provider named, libfabric 1.17 offers tcp;ofi_rxm first and its rewrite, net, after it: net does RDM,
 * RMA and atomics itself, one socket call each way, where rxm over tcp adds a progress pipe and more polls (a get or
 * fetch_add 13-14 us against 15-29, docs/design/transport.md). Take net on the same fabric and interface when it is
 * there; from libfabric 1.18 the rewrite is the tcp provider and comes first anyway. Returns the entry to use (an
 * element of list). */
static struct fi_info *prefer_net(struct fi_info *list) {
  if (strcmp(list->fabric_attr->prov_name, "tcp;ofi_rxm") && strcmp(list->fabric_attr->prov_name, "tcp")) return list;
  for (struct fi_info *i = list->next; i; i = i->next)
    if (!strcmp(i->fabric_attr->prov_name, "net") && i->fabric_attr->name && list->fabric_attr->name &&
        !strcmp(i->fabric_attr->name, list->fabric_attr->name) && i->domain_attr->name && list->domain_attr->name &&
        !strcmp(i->domain_attr->name, list->domain_attr->name))
      return i;
  return list;
}

/* n random words of the kernel's (getrandom), each nonzero and of at most bytes bytes (a provider's mr_key_size),
 * and distinct from one another. */
static int random_words(uint64_t *out, int n, size_t bytes) {
  uint64_t mask = bytes >= 8 ? ~0ull : bytes ? (1ull << (8 * bytes)) - 1 : 0;
  if (!mask) {
    for (int i = 0; i < n; i++) out[i] = (uint64_t)i + 1; /* no key room: the provider's keys are what they are */
    return 0;
  }
  for (int i = 0; i < n; i++) {
    bool again;
    do {
      if (getrandom(&out[i], sizeof out[i], 0) != (ssize_t)sizeof out[i]) {
        shoal_warn("getrandom: %s: no random memory keys for the ofi transport", strerror(errno));
        return -1;
      }
      out[i] &= mask;
      again = !out[i];
      for (int j = 0; j < i && !again; j++) again = out[j] == out[i];
    } while (again);
  }
  return 0;
}

static shoal_status_t tl_init(shoal_boot_t *b) {
  if (shoal_ofi.up) {
    shoal_warn("shoal_tl_ofi_init: already initialized");
    return SHOAL_ERR_INVAL;
  }
  const char *prov = shoal_env.ofi_provider[0] ? shoal_env.ofi_provider : NULL;
  const char *from = prov ? "SHOAL_OFI_PROVIDER" : "FI_PROVIDER";
  static char chosen[96];
  const char *asked = prov ? prov : getenv("FI_PROVIDER");
  if (asked && *asked) snprintf(chosen, sizeof chosen, "from %s=%s", from, asked);
  else snprintf(chosen, sizeof chosen, "libfabric's choice");
  chosen_by = chosen;
  /* rxm's fi_enable fills its pool of receive buffers (FI_OFI_RXM_BUFFER_SIZE each, 16 KiB by default): a memset
   * of tens of MiB per PE, 0.8 s of init at 2 PEs on tcp;ofi_rxm and 2.4 s at 4 on 2 cores (perf: 70% of the
   * process in memset). Shoal sends rxm only 48-byte messages and 8-byte atomics (RMA goes to the core provider
   * without those buffers), so a smaller size unless the user set one; read at libfabric's first fi_getinfo. */
  setenv("FI_OFI_RXM_BUFFER_SIZE", "2048", 0);
  bool want_hmem = false;
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) want_hmem |= shoal_ofi.reg[s].base && shoal_ofi.reg[s].gpu_kind;
  shoal_ofi.me = b->rank, shoal_ofi.npes = b->size;
  /* The staging region of the device heaps' staged path (ofi.h): npes slots, anonymous memory that only the slots
   * in use ever touch (a job without a GPU pays its registration, not its pages; a GPU job with far PEs page-locks
   * it whole, heap_gpu.c, up to 16 MiB); none where no PE can have a device
   * heap (no GPU backend built, or SHOAL_DEVICE_SYMMETRIC_SIZE=0): the staged calls then refuse with a line. */
  if (!shoal_ofi.reg[SHOAL_SPACE_STAGE].base && shoal_gpu_backend_built() && shoal_env.device_symmetric_size) {
    size_t slot = stage_slot(b->size), len = slot * (size_t)b->size;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      shoal_warn("shoal_tl_ofi_init: mmap of the %zu-byte staging region: %s", len, strerror(errno));
      return SHOAL_ERR_NOMEM;
    }
    shoal_ofi.reg[SHOAL_SPACE_STAGE] = (region_t){.base = p, .len = len};
  }
  shoal_ofi.stage_slot = shoal_ofi.reg[SHOAL_SPACE_STAGE].len / (size_t)b->size; /* 0: no staging region */
  pthread_mutex_init(&shoal_ofi.stage_mu, NULL);
  shoal_ofi.slow_dput = force_flags & SHOAL_TL_OFI_FORCE_SLOW_DPUT;
  shoal_ofi.prof = shoal_env.ofi_stage_profile;
  shoal_ofi.self = &shoal_tl_ofi_ops; /* for the watch (progress.c): before anything that can run it */
  shoal_ofi.mt = shoal_g.thread_level == SHMEM_THREAD_MULTIPLE;
  struct fi_info *info = NULL;
  /* Best first: HMEM (if a device region waits) and RMA read-after-write ordering, then without each. */
  bool hmem_opts[2] = {want_hmem, false}, raw_opts[2] = {!(force_flags & SHOAL_TL_OFI_FORCE_DC), false};
  for (int h = want_hmem ? 0 : 1; h < 2 && !info; h++)
    for (int r = raw_opts[0] ? 0 : 1; r < 2 && !info; r++) {
      struct fi_info *hi = hints_at(hmem_opts[h] ? (raw_opts[r] ? H_FULL : H_HMEM) : (raw_opts[r] ? H_RAW : H_MR),
                                    prov);
      if (!hi) return SHOAL_ERR_NOMEM;
      if (fi_getinfo(OFI_API, NULL, NULL, 0, hi, &info)) info = NULL;
      fi_freeinfo(hi);
      if (info) shoal_ofi.hmem = hmem_opts[h], shoal_ofi.flush = raw_opts[r];
    }
  if (!info) {
    explain_no_provider(prov ? prov : getenv("FI_PROVIDER"), from);
    return SHOAL_ERR_NOSYS;
  }
  if (!(asked && *asked)) {
    struct fi_info *pick = prefer_net(info);
    if (pick != info) {
      struct fi_info *one = fi_dupinfo(pick);
      fi_freeinfo(info);
      if (!one) return SHOAL_ERR_NOMEM;
      info = one;
      snprintf(chosen, sizeof chosen, "net, preferred to tcp;ofi_rxm (libfabric's choice)");
    }
  }
  if (iface_refused(info)) {
    fi_freeinfo(info);
    return SHOAL_ERR_INVAL;
  }
  if (want_hmem && !shoal_ofi.hmem)
    shoal_warn("fi_getinfo: %s has no FI_HMEM: the device heap is not registered (the seam must not route device "
               "memory here)", info->fabric_attr->prov_name);
  shoal_ofi.info = info;
  uint64_t order = info->tx_attr->msg_order;
  shoal_ofi.lazy_fence = shoal_ofi.flush && (order & (FI_ORDER_RMA_WAW | FI_ORDER_WAW)) &&
                   (order & (FI_ORDER_ATOMIC_WAW | FI_ORDER_WAW)) && (order & (FI_ORDER_ATOMIC_RAW | FI_ORDER_RAW));
  /* a staged put's request may follow its write on that endpoint at once (rma.c): the provider orders a send after
   * a write, and places a write's bytes in order up to max_order_waw_size (the chunk's tag last: a resend that
   * overtakes its write finds no tag) */
  shoal_ofi.stage_saw = shoal_ofi.lazy_fence && (order & FI_ORDER_SAW) &&
                        info->ep_attr->max_order_waw_size >= STAGE_CHUNK_MAX + 2 * sizeof(uint64_t);
  SHOAL_DEBUG(SHOAL_SUB_OFI, "msg_order %#" PRIx64 ": fence %s; max_order_waw_size %zu: staged put requests %s", order,
              shoal_ofi.lazy_fence ? "noted, waited for by the next put or AMO" : "a quiet",
              info->ep_attr->max_order_waw_size, shoal_ofi.stage_saw ? "right behind their writes" : "after delivery");
  SHOAL_DEBUG(SHOAL_SUB_OFI, "provider %s, fabric %s, domain %s; mr_mode %#x, data progress %s, inject %zu, %s",
              info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name,
              info->domain_attr->mr_mode, info->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual",
              info->tx_attr->inject_size,
              shoal_ofi.flush ? "RMA_RAW (flush read at quiet)" : "delivery complete writes");

  shoal_status_t rc = SHOAL_ERR_IO;
  int ret;
  wire_t *all = NULL;
  uint8_t *names = NULL;
  shoal_init_mark("ofi: fi_getinfo");
  if ((ret = fi_fabric(info->fabric_attr, &shoal_ofi.fabric, NULL))) { rc = open_fail("fi_fabric", ret); goto fail; }
  if ((ret = fi_domain(shoal_ofi.fabric, info, &shoal_ofi.domain, NULL))) {
    rc = open_fail("fi_domain", ret);
    goto fail;
  }
  query_atomics();
  shoal_init_mark("ofi: fabric, domain");
  struct fi_av_attr ava = {.type = info->domain_attr->av_type, .count = (size_t)shoal_ofi.npes};
  if ((ret = fi_av_open(shoal_ofi.domain, &ava, &shoal_ofi.av, NULL))) { rc = open_fail("fi_av_open", ret); goto fail; }
  struct fi_cq_attr txa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
  if ((ret = fi_cq_open(shoal_ofi.domain, &txa, &shoal_ofi.t0.txcq, NULL))) {
    rc = open_fail("fi_cq_open", ret);
    goto fail;
  }
  /* The receive CQ gets a wait object for the progress thread; a provider without one runs without that thread. */
  struct fi_cq_attr rxa = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD}; /* each message's length, and a
                                                                                   * put_signal's remote CQ data */
  bool can_wait = true;
  shoal_ofi.wait_fd = -1;
  if (fi_cq_open(shoal_ofi.domain, &rxa, &shoal_ofi.rxcq, NULL)) {
    rxa.wait_obj = FI_WAIT_UNSPEC;
    if (fi_cq_open(shoal_ofi.domain, &rxa, &shoal_ofi.rxcq, NULL)) {
      can_wait = false;
      rxa.wait_obj = FI_WAIT_NONE;
      if ((ret = fi_cq_open(shoal_ofi.domain, &rxa, &shoal_ofi.rxcq, NULL))) {
        rc = open_fail("fi_cq_open", ret);
        goto fail;
      }
    }
  } else if (fi_control(&shoal_ofi.rxcq->fid, FI_GETWAIT, &shoal_ofi.wait_fd)) {
    shoal_ofi.wait_fd = -1; /* fi_cq_sread still works */
  }
  /* net (tcp from libfabric 1.18): its fi_trywait leaves the CQ's signal byte unread (progress.c); rxm's does not,
   * and there fi_cq_sread may run far past its timeout while RMA bytes keep coming (12-20 ms seen for 1 ms) */
  const char *pn = info->fabric_attr->prov_name;
  shoal_ofi.wait_fd_sticks = !strcmp(pn, "net") || !strcmp(pn, "tcp");
  struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
  if ((ret = fi_cntr_open(shoal_ofi.domain, &ca, &shoal_ofi.t0.wcntr, NULL))) {
    rc = open_fail("fi_cntr_open", ret);
    goto fail;
  }
  if ((ret = fi_cntr_open(shoal_ofi.domain, &ca, &shoal_ofi.t0.rcntr, NULL))) {
    rc = open_fail("fi_cntr_open", ret);
    goto fail;
  }
  if ((ret = fi_endpoint(shoal_ofi.domain, info, &shoal_ofi.ep, NULL))) {
    rc = open_fail("fi_endpoint", ret);
    goto fail;
  }
  if ((ret = fi_ep_bind(shoal_ofi.ep, &shoal_ofi.av->fid, 0)) ||
      (ret = fi_ep_bind(shoal_ofi.ep, &shoal_ofi.t0.txcq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
      (ret = fi_ep_bind(shoal_ofi.ep, &shoal_ofi.rxcq->fid, FI_RECV)) ||
      (ret = fi_ep_bind(shoal_ofi.ep, &shoal_ofi.t0.wcntr->fid, FI_WRITE)) ||
      (ret = fi_ep_bind(shoal_ofi.ep, &shoal_ofi.t0.rcntr->fid, FI_READ))) {
    rc = open_fail("fi_ep_bind", ret);
    goto fail;
  }
  if ((ret = fi_enable(shoal_ofi.ep))) { rc = open_fail("fi_enable", ret); goto fail; }
  shoal_ofi.t0.ep = shoal_ofi.ep;
  shoal_ofi.t0.lock = shoal_ofi.mt;
  shoal_init_mark("ofi: endpoint");
  pthread_mutex_init(&shoal_ofi.t0.mu, NULL);

  wire_t w = {.addrlen = ADDR_MAX};
  snprintf(w.prov, sizeof w.prov, "%s", info->fabric_attr->prov_name);
  uint64_t mr_mode = (uint64_t)info->domain_attr->mr_mode;
  /* Secrets: the memory keys (where the provider takes ours: without FI_MR_PROV_KEY) and the message token, drawn
   * from the kernel's random source by each PE and told to the job's PEs only, through the bootstrap. An endpoint
   * that is not the job's would have to guess 64 bits for each (docs/design/trust.md). */
  uint64_t keys[SHOAL_SPACE_MAX];
  if (random_words(keys, SHOAL_SPACE_MAX, info->domain_attr->mr_key_size) ||
      random_words(&shoal_ofi.token, 1, sizeof shoal_ofi.token)) {
    rc = SHOAL_ERR_IO;
    goto fail;
  }
  w.token = shoal_ofi.token;
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
    region_t *r = &shoal_ofi.reg[s];
    if (!r->base || (r->gpu_kind && !shoal_ofi.hmem)) continue;
    struct iovec iov = {r->base, r->len};
    struct fi_mr_attr ma = {.mr_iov = &iov, .iov_count = 1, .requested_key = keys[s],
                            .access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, .iface = FI_HMEM_SYSTEM};
    if (r->gpu_kind == SHOAL_GPU_CUDA) ma.iface = FI_HMEM_CUDA, ma.device.cuda = r->gpu_dev;
    else if (r->gpu_kind == SHOAL_GPU_HIP) ma.iface = FI_HMEM_ROCR;
    if ((ret = fi_mr_regattr(shoal_ofi.domain, &ma, 0, &r->mr))) { rc = open_fail("fi_mr_regattr", ret); goto fail; }
    if ((mr_mode & FI_MR_ENDPOINT) &&
        ((ret = fi_mr_bind(r->mr, &shoal_ofi.ep->fid, 0)) || (ret = fi_mr_enable(r->mr)))) {
      rc = open_fail("fi_mr_bind", ret);
      goto fail;
    }
    w.key[s] = fi_mr_key(r->mr);
    w.base[s] = (uintptr_t)r->base;
    w.len[s] = r->len;
  }
  size_t alen = ADDR_MAX;
  if ((ret = fi_getname(&shoal_ofi.ep->fid, w.addr, &alen))) { rc = open_fail("fi_getname", ret); goto fail; }
  w.addrlen = alen;
  shoal_init_mark("ofi: memory registration");

  /* Fallback AMOs: receives posted before the exchange, so that a peer's first request finds one. */
  shoal_ofi.inject_size = info->tx_attr->inject_size;
  shoal_ofi.max_msg = info->ep_attr->max_msg_size ? info->ep_attr->max_msg_size : SIZE_MAX;
  /* libfabric's SAW orders processing and max_order_waw_size the placement of writes among themselves; that a send
   * is processed only after the bytes of the writes before it are in place is a fact of one in-order stream per
   * connection (net, and its later name tcp: not rxm, nor a provider that spreads a connection over paths) */
  shoal_ofi.saw = shoal_ofi.stage_saw && info->ep_attr->max_order_waw_size >= shoal_ofi.max_msg &&
                  (!strcmp(info->fabric_attr->prov_name, "net") || !strcmp(info->fabric_attr->prov_name, "tcp"));
  shoal_ofi.bounce_ok = shoal_ofi.flush && !(info->domain_attr->mr_mode & FI_MR_LOCAL) &&
                        shoal_ofi.max_msg >= BOUNCE_PUT_MAX && shoal_ofi.inject_size < BOUNCE_PUT_MAX;
  SHOAL_DEBUG(SHOAL_SUB_OFI, "AMOs after a fence: %s; blocking puts of %zu-%zu bytes: %s",
              shoal_ofi.saw ? "behind the puts, no quiet" : "after a quiet", shoal_ofi.inject_size + 1, BOUNCE_PUT_MAX,
              shoal_ofi.bounce_ok ? "copied, no wait" : "wait for their write");
  shoal_ofi.fallback_ok = shoal_ofi.inject_size >= sizeof(amo_msg_t);
  /* At most the receive queue's size (a provider with a smaller one would make shoal_ofi_post_recv retry for ever). */
  size_t nrecv = info->rx_attr && info->rx_attr->size && info->rx_attr->size < NRECV ? info->rx_attr->size : NRECV;
  for (size_t i = 0; i < nrecv && shoal_ofi.fallback_ok; i++)
    if ((ret = (int)shoal_ofi_post_recv(&shoal_ofi.rxbuf[i]))) { rc = open_fail("fi_recv", ret); goto fail; }

  shoal_init_mark("ofi: receives posted");
  all = malloc((size_t)shoal_ofi.npes * sizeof *all);
  shoal_ofi.addr = calloc((size_t)shoal_ofi.npes, sizeof *shoal_ofi.addr);
  shoal_ofi.t0.dirty = calloc((size_t)shoal_ofi.npes, sizeof *shoal_ofi.t0.dirty);
  shoal_ofi.rtoken = calloc((size_t)shoal_ofi.npes, sizeof *shoal_ofi.rtoken);
  shoal_ofi.done = calloc((size_t)shoal_ofi.npes * NWAIT, sizeof *shoal_ofi.done);
  pthread_mutex_init(&shoal_ofi.exec_mu, NULL);
  pthread_mutex_init(&shoal_ofi.fb_mu, NULL);
  /* Non-fetching fallback AMOs in flight from this PE: every PE's together must not outrun a target's receives
   * (net loses a message that finds none posted: a resend 200 ms later), and 8 slots stay for fetching ones. */
  shoal_ofi.fb_cap = (int)(nrecv / (2 * (size_t)shoal_ofi.npes));
  shoal_ofi.fb_cap = shoal_ofi.fb_cap > NWAIT - 8 ? NWAIT - 8 : shoal_ofi.fb_cap < 1 ? 1 : shoal_ofi.fb_cap;
  atomic_store(&shoal_ofi.fb_async, 0);
  names = malloc((size_t)shoal_ofi.npes * alen);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
    shoal_ofi.rbase[s] = calloc((size_t)shoal_ofi.npes, sizeof(uint64_t));
    shoal_ofi.rkey[s] = calloc((size_t)shoal_ofi.npes, sizeof(uint64_t));
    shoal_ofi.rlen[s] = calloc((size_t)shoal_ofi.npes, sizeof(uint64_t));
    if (!shoal_ofi.rbase[s] || !shoal_ofi.rkey[s] || !shoal_ofi.rlen[s]) all = NULL;
  }
  if (!all || !shoal_ofi.addr || !shoal_ofi.t0.dirty || !names || !shoal_ofi.rtoken || !shoal_ofi.done) {
    rc = SHOAL_ERR_NOMEM;
    goto fail;
  }
  if ((rc = shoal_boot_allgather(b, &w, all, sizeof w))) {
    shoal_warn("shoal_tl_ofi_init: the bootstrap's allgather of endpoint names and keys failed");
    goto fail;
  }
  shoal_init_mark("ofi: allgather");
  bool virt = mr_mode & FI_MR_VIRT_ADDR;
  for (int p = 0; p < shoal_ofi.npes; p++) {
    if (strncmp(all[p].prov, w.prov, sizeof w.prov)) {
      all[p].prov[sizeof all[p].prov - 1] = 0;
      shoal_warn("shoal_tl_ofi_init: pe %d runs libfabric provider %s, this PE %s (%s): name one with FI_PROVIDER "
                 "or SHOAL_OFI_PROVIDER on every node", p, all[p].prov, w.prov, chosen_by);
      rc = SHOAL_ERR_INVAL;
      goto fail;
    }
    if (all[p].addrlen != alen) {
      shoal_warn("shoal_tl_ofi_init: pe %d's endpoint name has %" PRIu64 " bytes, ours %zu: another provider?", p,
                 all[p].addrlen, alen);
      rc = SHOAL_ERR_INVAL;
      goto fail;
    }
    memcpy(names + (size_t)p * alen, all[p].addr, alen);
    shoal_ofi.rtoken[p] = all[p].token;
    for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
      shoal_ofi.rbase[s][p] = virt ? all[p].base[s] : 0;
      shoal_ofi.rkey[s][p] = all[p].key[s];
      shoal_ofi.rlen[s][p] = all[p].len[s];
    }
  }
  if ((ret = fi_av_insert(shoal_ofi.av, names, (size_t)shoal_ofi.npes, shoal_ofi.addr, 0, NULL)) != shoal_ofi.npes) {
    rc = ret < 0 ? open_fail("fi_av_insert", ret) : SHOAL_ERR_IO;
    if (ret >= 0) shoal_warn("fi_av_insert: %d of %d endpoint names inserted", ret, shoal_ofi.npes);
    goto fail;
  }
  free(all), all = NULL;
  free(names), names = NULL;
  shoal_init_mark("ofi: fi_av_insert");

  /* The thread: for a provider that moves data only when called, or when fallback AMOs need a target to answer. */
  int nnative = 0;
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) nnative += shoal_ofi.native[t];
  /* Requests may come whenever the fallback can (a peer's provider may lack an op ours has): the PE's own polls
   * answer them, since the thread stands back while it polls. */
  shoal_ofi.rx_main = shoal_ofi.fallback_ok;
  /* put_signal as one message (rma.c): the flag travels as remote CQ data, which the PE's own waits read (rx_main)
   * and store; a provider that takes a posted receive for it (FI_RX_CQ_DATA) would starve the fallback's. Crowded
   * jobs too: what once made it slow there was the progress thread spinning on a CQ fd left readable (progress.c),
   * not the entries. */
  shoal_ofi.cq_signal = shoal_ofi.rx_main && shoal_ofi.lazy_fence && info->domain_attr->cq_data_size >= 8 &&
                        !(info->mode & FI_RX_CQ_DATA) && !(force_flags & SHOAL_TL_OFI_FORCE_NO_CQ_SIGNAL);
  if ((rc = shoal_ofi_watch_init())) goto fail;
  shoal_init_mark("ofi: watch");
  bool need = info->domain_attr->data_progress != FI_PROGRESS_AUTO || shoal_ofi.rx_main;
  if (need && !can_wait)
    shoal_warn("fi_cq_open: %s has no CQ wait object: progress only inside transport calls",
               info->fabric_attr->prov_name);
  shoal_ofi.up = true;
  if (need && can_wait) {
    sigset_t all_sigs, old;
    sigfillset(&all_sigs);
    pthread_sigmask(SIG_SETMASK, &all_sigs, &old); /* signals stay with the application's threads */
    atomic_store(&shoal_ofi.stop, false);
    ret = pthread_create(&shoal_ofi.thread, NULL, shoal_ofi_progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ret) {
      shoal_warn("pthread_create: %s", strerror(ret));
      rc = SHOAL_ERR_IO;
      goto fail;
    }
    shoal_ofi.thread_on = true;
  }
  SHOAL_DEBUG(SHOAL_SUB_OFI, "up: %d PEs, %d of %d AMO types native, %s", shoal_ofi.npes, nnative, SHOAL_TL_NTYPES,
              shoal_ofi.thread_on ? "progress thread" : "no progress thread");
  return SHOAL_OK;
fail:
  free(all);
  free(names);
  region_t keep[SHOAL_SPACE_MAX];
  memcpy(keep, shoal_ofi.reg, sizeof keep);
  shoal_ofi.up = true; /* let fini take down what exists */
  tl_fini();
  for (int s = 0; s < SHOAL_SPACE_MAX; s++)
    shoal_ofi.reg[s] = keep[s], shoal_ofi.reg[s].mr = NULL; /* init may be tried again */
  shoal_ofi.reg[SHOAL_SPACE_STAGE] = (region_t){0};        /* unmapped by fini */
  return rc;
}

static void tl_fini(void) {
  if (!shoal_ofi.up) {
    memset(shoal_ofi.reg, 0, sizeof shoal_ofi.reg);
    return;
  }
  if (shoal_ofi.thread_on) {
    atomic_store(&shoal_ofi.stop, true);
    fi_cq_signal(shoal_ofi.rxcq);
    pthread_join(shoal_ofi.thread, NULL);
    shoal_ofi.thread_on = false;
  }
  shoal_ofi_watch_fini();
  if (shoal_ofi.prof) { /* SHOAL_OFI_STAGE_PROFILE: one line, mean us per event and how many (ofi.h SP_*) */
    static const char *const what[SP_N] = {"room", "copy_start", "copy_sync", "copy_wait", "send", "answer",
                                           "target_copy_start", "target_copy", "target_copy_sync"};
    char line[512];
    int at = 0;
    for (int k = 0; k < SP_N && at < (int)sizeof line; k++) {
      uint64_t n = atomic_load(&shoal_ofi.prof_n[k]), ns = atomic_load(&shoal_ofi.prof_ns[k]);
      at += snprintf(line + at, sizeof line - (size_t)at, " %s %.2f us x %" PRIu64, what[k],
                     n ? (double)ns / (double)n / 1e3 : 0.0, n);
    }
    fprintf(stderr, "shoal: PE %d: staged put profile:%s\n", shoal_ofi.me, line);
  }
  if (atomic_load(&shoal_ofi.dropped))
    SHOAL_DEBUG(SHOAL_SUB_OFI, "%" PRIu64 " messages dropped (not from this job, or malformed)",
                (uint64_t)atomic_load(&shoal_ofi.dropped));
  /* Contexts the program never destroyed: their endpoints hold the domain open. */
  while (shoal_ofi.txs.next && shoal_ofi.txs.next != &shoal_ofi.txs) shoal_ofi_tx_close(shoal_ofi.txs.next);
  /* Endpoint first (it cancels the posted receives), then what it was bound to. */
  shoal_ofi_close_fid(&shoal_ofi.ep);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) shoal_ofi_close_fid(&shoal_ofi.reg[s].mr);
  if (shoal_ofi.reg[SHOAL_SPACE_STAGE].base)
    munmap(shoal_ofi.reg[SHOAL_SPACE_STAGE].base, shoal_ofi.reg[SHOAL_SPACE_STAGE].len);
  shoal_ofi_close_fid(&shoal_ofi.av);
  shoal_ofi_close_fid(&shoal_ofi.t0.wcntr);
  shoal_ofi_close_fid(&shoal_ofi.t0.rcntr);
  shoal_ofi_close_fid(&shoal_ofi.t0.txcq);
  shoal_ofi_close_fid(&shoal_ofi.rxcq);
  shoal_ofi_close_fid(&shoal_ofi.domain);
  shoal_ofi_close_fid(&shoal_ofi.fabric);
  fi_freeinfo(shoal_ofi.info);
  free(shoal_ofi.addr);
  free((void *)shoal_ofi.t0.dirty);
  free(shoal_ofi.t0.bounce);
  free(shoal_ofi.rtoken);
  free(shoal_ofi.done);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) free(shoal_ofi.rbase[s]), free(shoal_ofi.rkey[s]), free(shoal_ofi.rlen[s]);
  memset(&shoal_ofi, 0, sizeof shoal_ofi);
}

/* Debian's libfabric links the psm provider's libinfinipath, whose constructor takes SIGSEGV, SIGBUS, SIGILL,
 * SIGABRT, SIGINT and SIGTERM in every program that loads libshoal, shared-memory jobs too: it writes a .btr file
 * into the working directory and exits 1, so that a crash is reported as an exit status. Give those signals back
 * their default action when the handler is that library's (and only then: the program's own handlers come later,
 * from main). Runs after the constructors of libshoal's dependencies. */
__attribute__((constructor)) static void ofi_unhook_signals(void) {
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    Dl_info d;
    if (sigaction(sigs[i], NULL, &sa) || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    void *fn = sa.sa_flags & SA_SIGINFO ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
    if (!dladdr(fn, &d) || !d.dli_fname) continue;
    const char *base = strrchr(d.dli_fname, '/');
    base = base ? base + 1 : d.dli_fname;
    if (!strncmp(base, "libinfinipath", 13) || !strncmp(base, "libpsm", 6)) signal(sigs[i], SIG_DFL);
  }
}

void shoal_tl_ofi_test_force(unsigned flags) { force_flags = flags; }

void shoal_tl_ofi_query(shoal_tl_ofi_info_t *out) {
  int n = 0;
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) n += shoal_ofi.native[t];
  *out = (shoal_tl_ofi_info_t){.provider = shoal_ofi.info ? shoal_ofi.info->fabric_attr->prov_name : NULL,
                               .progress_thread = shoal_ofi.thread_on,
                               .flush_read = shoal_ofi.flush,
                               .virt_addr = shoal_ofi.info && (shoal_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR),
                               .hmem = shoal_ofi.hmem,
                               .native_types = n,
                               .inject_size = shoal_ofi.inject_size,
                               .thread_progress = atomic_load(&shoal_ofi.thread_progress),
                               .thread_holds = atomic_load(&shoal_ofi.thread_holds),
                               .writes = atomic_load(&shoal_ofi.t0.w_issued),
                               .reads = atomic_load(&shoal_ofi.t0.r_issued),
                               .ctx_endpoints = atomic_load(&shoal_ofi.ntx),
                               .ordered_signal = shoal_ofi.lazy_fence && shoal_ofi.inject_size >= sizeof(uint64_t),
                               .cq_signal = shoal_ofi.cq_signal,
                               .counter_waits = atomic_load(&shoal_ofi.t0.cntr_waits),
                               .dropped = atomic_load(&shoal_ofi.dropped),
                               .stage_early = atomic_load(&shoal_ofi.stage_early),
                               .stage_msgs = atomic_load(&shoal_ofi.stage_msgs),
                               .stage_cq_reqs = atomic_load(&shoal_ofi.stage_cq_reqs),
                               .answers_joined = atomic_load(&shoal_ofi.answers_joined),
                               .saw = shoal_ofi.saw,
                               .bounce = shoal_ofi.bounce_ok};
  pthread_mutex_lock(&shoal_ofi.stage_mu);
  out->stage_reach = shoal_ofi.stage_reach;
  for (unsigned i = 0; i < shoal_ofi.stage_n; i++)
    out->stage_unanswered += !shoal_ofi_fb_answered(&shoal_ofi.stage_q[(shoal_ofi.stage_head + i) % STAGE_INFLIGHT].p);
  pthread_mutex_unlock(&shoal_ofi.stage_mu);
}

/* Every PE of the job: the address vector holds them all (a PE of this node too, under SHOAL_TRANSPORT=ofi). */
static bool ofi_can_reach(int pe) {
  (void)pe;
  return true;
}

/* comm.h stage_region: the staging region (ofi.h), when this job has one. */
static shoal_status_t ofi_stage_region(void **base, size_t *len) {
  *base = shoal_ofi.reg[SHOAL_SPACE_STAGE].base, *len = shoal_ofi.reg[SHOAL_SPACE_STAGE].len;
  return *base && *len ? SHOAL_OK : SHOAL_ERR_NOSYS;
}

/* The progress thread onto cpus (comm.h helpers_to): off the PE's core in GPU jobs, where the PE's thread may spin in
 * a device synchronize while the thread must answer far PEs' staged copies and device AMOs. */
shoal_status_t shoal_ofi_helpers_to(const cpu_set_t *cpus, int *moved) {
  *moved = 0;
  if (!shoal_ofi.thread_on) return SHOAL_OK;
  int e = pthread_setaffinity_np(shoal_ofi.thread, sizeof *cpus, cpus);
  if (e) {
    shoal_warn("pthread_setaffinity_np (the ofi progress thread): %s", strerror(e));
    return SHOAL_ERR;
  }
  *moved = 1;
  return SHOAL_OK;
}

const shoal_tl_ops_t shoal_tl_ofi_ops = {
  .size = sizeof(shoal_tl_ops_t), .name = "ofi", .can_reach = ofi_can_reach, .init = tl_init, .reg = tl_reg,
  .put = shoal_ofi_put, .get = shoal_ofi_get, .amo = shoal_ofi_amo, .signal = shoal_ofi_signal,
  .put_signal = shoal_ofi_put_signal, .helpers_to = shoal_ofi_helpers_to,
  .stage_region = ofi_stage_region,
  .quiet = shoal_ofi_quiet_staged, .fence = shoal_ofi_fence_staged, .progress = shoal_ofi_progress, .fini = tl_fini,
  .ctx_create = shoal_ofi_ctx_create, .ctx_destroy = shoal_ofi_ctx_destroy, .dev_put = shoal_ofi_dev_put,
  .dev_get = shoal_ofi_dev_get, .dev_amo = shoal_ofi_dev_amo, .dev_put_nbi = shoal_ofi_dev_put_nbi,
  .dev_pending = shoal_ofi_dev_pending, .quiet_before_signal = shoal_ofi_quiet_before_signal,
};
