/* oshrun's command line (see oshrun_opts.h and docs/man/oshrun.md). */
#include "oshrun_opts.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h> /* isfinite, a macro: no libm */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { OPT_HOSTFILE = 256, OPT_MAP_BY, OPT_BIND_TO, OPT_OVERSUB, OPT_TAG, OPT_REPORT, OPT_TIMEOUT, OPT_MCA, OPT_ROOT };

static const struct option longopts[] = {
    {"np", required_argument, NULL, 'n'},          {"npernode", required_argument, NULL, 'N'},
    {"host", required_argument, NULL, 'H'},        {"hostfile", required_argument, NULL, OPT_HOSTFILE},
    {"machinefile", required_argument, NULL, OPT_HOSTFILE},
    {"map-by", required_argument, NULL, OPT_MAP_BY}, {"bind-to", required_argument, NULL, OPT_BIND_TO},
    {"oversubscribe", no_argument, NULL, OPT_OVERSUB}, {"tag-output", no_argument, NULL, OPT_TAG},
    {"report-bindings", no_argument, NULL, OPT_REPORT}, {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"mca", required_argument, NULL, OPT_MCA},     {"gmca", required_argument, NULL, OPT_MCA},
    {"allow-run-as-root", no_argument, NULL, OPT_ROOT},
    {"version", no_argument, NULL, 'V'},           {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* The map-by names Open MPI 4.1 accepts that oshrun can honour; ppr: and :modifiers it cannot. */
static const char *const map_names[] = {"core", "hwthread", "slot", "numa", "socket", "package", "node", NULL};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return 2;
}

/* w (after its dashes) names a long option exactly: getopt_long would also take unambiguous prefixes. */
static bool long_name(const char *w) {
  size_t len = strcspn(w, "=");
  for (const struct option *l = longopts; l->name; l++)
    if (strlen(l->name) == len && !strncmp(l->name, w, len)) return true;
  return false;
}

/* A decimal integer in [1, OSHRUN_MAX_PES], digits only (strtol alone takes " +4"). */
static int parse_count(const char *s, size_t len) {
  if (!len || len > 4) return -1;
  int v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v >= 1 && v <= OSHRUN_MAX_PES ? v : -1;
}

/* One host entry of len bytes: "name", "name:N", an IPv6 address (several ':', so no count) or "[ipv6]:N".
 * Copies the name into name[NAME_LEN] and sets *slots (1 without a count). Returns 0, or -1 when malformed. */
#define NAME_LEN 256
static int host_entry(const char *s, size_t len, char *name, int *slots) {
  const char *n = s, *colon = NULL;
  size_t nlen = len;
  *slots = 1;
  if (len && s[0] == '[') {
    const char *rb = memchr(s, ']', len);
    if (!rb) return -1;
    n = s + 1, nlen = (size_t)(rb - n);
    if (rb + 1 < s + len) {
      if (rb[1] != ':') return -1;
      colon = rb + 1;
    }
  } else {
    const char *c = memchr(s, ':', len);
    if (c && !memchr(c + 1, ':', len - (size_t)(c + 1 - s))) colon = c, nlen = (size_t)(c - s);
  }
  if (colon && (*slots = parse_count(colon + 1, len - (size_t)(colon + 1 - s))) < 0) return -1;
  if (!nlen || nlen >= NAME_LEN) return -1;
  memcpy(name, n, nlen);
  name[nlen] = 0;
  return 0;
}

/* A --host list: comma-separated entries, each well formed. */
static bool host_list_ok(const char *s) {
  char name[NAME_LEN];
  int slots;
  for (;;) {
    size_t len = strcspn(s, ",");
    if (host_entry(s, len, name, &slots)) return false;
    if (!s[len]) return true;
    s += len + 1;
  }
}

static bool env_name_ok(const char *s, size_t len) {
  if (!len || isdigit((unsigned char)s[0])) return false; /* POSIX names: a shell could not export "1A" */
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_') return false;
  return true;
}

/* "-np", "-host=a", ...: Open MPI's single-dash spelling of one of our long options. */
static bool single_dash_long(const char *w) {
  return w[0] == '-' && w[1] && w[1] != '-' && w[2] && w[2] != '=' && long_name(w + 1);
}

static const char map_expect[] = "expected core, hwthread, slot, numa, socket, package or node";

void oshrun_opts_free(oshrun_opts_t *o) {
  free(o->exports);
  free(o->mca);
  free(o->host_buf_);
  free(o->argv_copy_);
  memset(o, 0, sizeof *o);
}

int oshrun_opts_parse(int argc, char **argv, oshrun_opts_t *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  if (errlen) err[0] = 0;
  if (argc < 1 || !argv) return fail(err, errlen, "oshrun: no program given");

  /* getopt_long_only would read -np as -n p, so getopt_long gets a copy with "--np": one block, pointers then the
   * rewritten words. Indices stay those of argv; the program's words are copied but never read. */
  size_t extra = 0;
  for (int i = 1; i < argc; i++)
    if (single_dash_long(argv[i])) extra += strlen(argv[i]) + 2;
  char **av = malloc((size_t)(argc + 1) * sizeof *av + extra);
  if (!av) return fail(err, errlen, "oshrun: out of memory");
  char *buf = (char *)(av + argc + 1);
  av[0] = argv[0];
  for (int i = 1; i < argc; i++) {
    av[i] = argv[i];
    if (single_dash_long(argv[i])) {
      av[i] = buf;
      *buf = '-';
      strcpy(buf + 1, argv[i]);
      buf += strlen(buf) + 1;
    }
  }
  av[argc] = NULL;
  o->argv_copy_ = av;

  int rc = 0;
  optind = 0; /* full reset (glibc), so that parse can run again */
  opterr = 0; /* messages go to err, not stderr */
  while (!rc) {
    int at = optind ? optind : 1; /* the word getopt is about to read (also mid "-Vn4") */
    int c = getopt_long(argc, av, "+:n:c:N:H:x:Vh", longopts, NULL);
    if (c == -1) break;
    const char *w = av[at];
    bool islong = w[0] == '-' && w[1] == '-';
    char name[128]; /* the option as the user typed it, for messages */
    if (islong)
      snprintf(name, sizeof name, "%.*s", (int)strcspn(argv[at], "="), argv[at]);
    else
      snprintf(name, sizeof name, "-%c", c == '?' || c == ':' ? optopt : c);
    if (islong && !long_name(w + 2)) { /* also refuses abbreviations: "--time" */
      rc = fail(err, errlen, "oshrun: unknown option '%s'", name);
      break;
    }
    if (c == '?') {
      rc = fail(err, errlen, islong ? "oshrun: option '%s' takes no argument" : "oshrun: unknown option '%s'", name);
      break;
    }
    if (c == ':') {
      rc = fail(err, errlen, "oshrun: option '%s' needs an argument", name);
      break;
    }
    char *arg = optarg;
    if (arg && !islong && arg != av[at + 1] && *arg == '=') arg++; /* "-n=4", "-x=VAR" */
    switch (c) {
    case 'c': /* Open MPI's alias of -np */
    case 'n':
    case 'N': {
      int v = parse_count(arg, strlen(arg));
      if (v < 0)
        rc = fail(err, errlen, "oshrun: %s %s: expected a PE count%s in [1, %d]", name, arg,
                  c == 'N' ? " per node" : "", OSHRUN_MAX_PES);
      *(c == 'N' ? &o->per_node : &o->npes) = v;
      break;
    }
    case 'H': {
      if (!host_list_ok(arg)) {
        rc = fail(err, errlen, "oshrun: %s %s: expected host[:slots][,host[:slots]...], slots in [1, %d]", name, arg,
                  OSHRUN_MAX_PES);
        break;
      }
      size_t old = o->host_buf_ ? strlen(o->host_buf_) : 0;
      char *h = realloc(o->host_buf_, old + 1 + strlen(arg) + 1);
      if (!h) {
        rc = fail(err, errlen, "oshrun: out of memory");
        break;
      }
      if (old) h[old++] = ',';
      strcpy(h + old, arg);
      o->host = o->host_buf_ = h;
      break;
    }
    case OPT_HOSTFILE:
      if (!*arg) rc = fail(err, errlen, "oshrun: %s: expected a file name", name);
      o->hostfile = arg;
      break;
    case OPT_MAP_BY: {
      int i = 0;
      while (map_names[i] && strcmp(map_names[i], arg)) i++;
      if (map_names[i])
        o->map_by = arg;
      else if (!strncmp(arg, "ppr:", 4))
        rc = fail(err, errlen, "oshrun: %s %s: Open MPI's ppr: form is not supported; %s", name, arg, map_expect);
      else if (strchr(arg, ':'))
        rc = fail(err, errlen, "oshrun: %s %s: Open MPI's :modifier forms are not supported; %s", name, arg,
                  map_expect);
      else
        rc = fail(err, errlen, "oshrun: %s %s: %s", name, arg, map_expect);
      break;
    }
    case OPT_BIND_TO: /* the names shoal_topo_parse_bind takes (not linked here: it needs hwloc) */
      if (strcmp(arg, "core") && strcmp(arg, "numa") && strcmp(arg, "none"))
        rc = fail(err, errlen, "oshrun: %s %s: expected core, numa or none", name, arg);
      o->bind_to = arg;
      break;
    case OPT_MCA: { /* two words, as Open MPI takes them: --mca KEY VALUE (getopt gave KEY; VALUE is the next word) */
      if (!env_name_ok(arg, strlen(arg))) {
        rc = fail(err, errlen, "oshrun: %s %s: expected an MCA parameter name (A-Z a-z 0-9 _), then its value",
                  name, arg);
        break;
      }
      if (optind >= argc) {
        rc = fail(err, errlen, "oshrun: %s %s: needs a value: %s KEY VALUE", name, arg, name);
        break;
      }
      const char **m = realloc(o->mca, (size_t)(o->nmca + 1) * 2 * sizeof *m);
      if (!m) {
        rc = fail(err, errlen, "oshrun: out of memory");
        break;
      }
      o->mca = m;
      m[2 * o->nmca] = arg;
      m[2 * o->nmca++ + 1] = av[optind++]; /* taken from getopt's words: it resumes at the next one */
      break;
    }
    case OPT_ROOT: o->allow_run_as_root = true; break;
    case OPT_OVERSUB: o->oversubscribe = true; break;
    case OPT_TAG: o->tag_output = true; break;
    case OPT_REPORT: o->report_bindings = true; break;
    case OPT_TIMEOUT: {
      char *end;
      double t = strtod(arg, &end); /* digits first: no " 5", "+5", "inf", "nan"; no hex either */
      if ((!isdigit((unsigned char)arg[0]) && arg[0] != '.') || *end || strpbrk(arg, "xX") || !isfinite(t) || t <= 0)
        rc = fail(err, errlen, "oshrun: %s %s: expected seconds > 0", name, arg);
      o->timeout = t;
      break;
    }
    case 'x': {
      if (!env_name_ok(arg, strcspn(arg, "="))) {
        rc = fail(err, errlen, "oshrun: %s %s: expected VAR or VAR=VALUE, VAR of A-Z a-z 0-9 _ not starting with a digit",
                  name, arg);
        break;
      }
      char **e = realloc(o->exports, (size_t)(o->nexport + 1) * sizeof *e);
      if (!e) {
        rc = fail(err, errlen, "oshrun: out of memory");
        break;
      }
      o->exports = e;
      e[o->nexport++] = arg;
      break;
    }
    case 'V': o->action = OSHRUN_VERSION; return 0;
    case 'h': o->action = OSHRUN_HELP; return 0;
    default: rc = fail(err, errlen, "oshrun: unknown option '%s'", name); break;
    }
  }
  if (!rc && optind >= argc) rc = fail(err, errlen, "oshrun: no program given");
  if (rc) {
    oshrun_opts_free(o);
    return rc;
  }
  o->prog = optind;
  return 0;
}

/* Call fn for every host of --host then of the hostfile. Returns 0, or -1 with err filled. */
typedef void (*host_fn)(const char *name, int slots, void *arg);
static int walk_hosts(const oshrun_opts_t *o, host_fn fn, void *arg, char *err, size_t errlen) {
  char name[NAME_LEN];
  int slots;
  for (const char *s = o->host; s; s = s[strcspn(s, ",")] ? s + strcspn(s, ",") + 1 : NULL) {
    if (host_entry(s, strcspn(s, ","), name, &slots)) {
      fail(err, errlen, "oshrun: --host %s: malformed", o->host); /* parse checked it already */
      return -1;
    }
    fn(name, slots, arg);
  }
  if (!o->hostfile) return 0;
  FILE *f = fopen(o->hostfile, "r");
  if (!f) {
    fail(err, errlen, "oshrun: cannot read hostfile %s: %s", o->hostfile, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, rc = 0;
  while (!rc && getline(&line, &cap, f) >= 0) {
    lineno++;
    line[strcspn(line, "#")] = 0;
    char *save, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) continue;
    rc = host_entry(tok, strlen(tok), name, &slots);
    while (!rc && (tok = strtok_r(NULL, " \t\r\n", &save))) {
      if (!strncmp(tok, "slots=", 6))
        rc = (slots = parse_count(tok + 6, strlen(tok + 6))) < 0;
      else if (!strncmp(tok, "max_slots=", 10) || !strncmp(tok, "max-slots=", 10))
        rc = parse_count(tok + 10, strlen(tok + 10)) < 0; /* a cap we never exceed: checked, not used */
      else
        rc = -1;
    }
    if (rc)
      fail(err, errlen, "oshrun: %s:%d: expected 'host', 'host:N' or 'host slots=N' (N in [1, %d])", o->hostfile,
           lineno, OSHRUN_MAX_PES);
    else
      fn(name, slots, arg);
  }
  if (!rc && ferror(f)) {
    fail(err, errlen, "oshrun: cannot read hostfile %s: %s", o->hostfile, strerror(errno));
    rc = -1;
  }
  free(line);
  fclose(f);
  return rc ? -1 : 0;
}

/* This machine by name or loopback address; no DNS lookup (it could hang, and says nothing certain). */
static bool is_local(const char *name) {
  struct in_addr a4;
  struct in6_addr a6;
  if (!strcasecmp(name, "localhost")) return true;
  if (inet_pton(AF_INET, name, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, name, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  char self[NAME_LEN + 1];
  if (gethostname(self, NAME_LEN)) return false;
  self[NAME_LEN] = 0;
  size_t shortlen = strcspn(self, ".");
  return !strcasecmp(name, self) || (strlen(name) == shortlen && !strncasecmp(name, self, shortlen));
}

static void all_local_fn(const char *name, int slots, void *arg) {
  if (!is_local(name)) *(int *)arg = 0;
}

int oshrun_hosts_local(const oshrun_opts_t *o, char *err, size_t errlen) {
  int all = 1;
  if (errlen) err[0] = 0;
  return walk_hosts(o, all_local_fn, &all, err, errlen) ? -1 : all;
}

static void slots_fn(const char *name, int slots, void *arg) {
  int *sum = arg;
  if (is_local(name)) *sum = *sum > INT_MAX - slots ? INT_MAX : *sum + slots;
}

int oshrun_local_slots(const oshrun_opts_t *o) {
  int sum = 0;
  char err[8];
  if (walk_hosts(o, slots_fn, &sum, err, sizeof err)) { /* count --host alone, not the bad file's first lines */
    oshrun_opts_t h = *o;
    h.hostfile = NULL;
    sum = 0;
    walk_hosts(&h, slots_fn, &sum, err, sizeof err);
  }
  return sum;
}

char **oshrun_handoff_argv(const oshrun_opts_t *o, int argc, char **argv, const char *launcher) {
  enum { NUM = 16 };
  if (!launcher || o->prog < 1 || o->prog >= argc) return NULL;
  size_t max = 25 + 2 * (size_t)o->nexport + 3 * (size_t)o->nmca + (size_t)(argc - o->prog) + 1;
  char **v = malloc(max * sizeof *v + 3 * NUM); /* the arguments, then room for three numbers */
  if (!v) return NULL;
  char *num = (char *)(v + max);
  size_t k = 0;
#define ARG(s) (v[k++] = (char *)(s))
#define NUMARG(n) (snprintf(num, NUM, "%d", (n)), ARG(num), num += NUM)
  ARG(launcher);
  ARG("-np"), NUMARG(o->npes ? o->npes : 1);
  if (o->per_node) ARG("--npernode"), NUMARG(o->per_node);
  if (o->host) ARG("--host"), ARG(o->host);
  if (o->hostfile) ARG("--hostfile"), ARG(o->hostfile);
  if (o->map_by) ARG("--map-by"), ARG(o->map_by);
  if (o->bind_to) ARG("--bind-to"), ARG(o->bind_to);
  if (o->oversubscribe) ARG("--oversubscribe");
  if (o->tag_output) ARG("--tag-output");
  if (o->report_bindings) ARG("--report-bindings");
  if (o->allow_run_as_root) ARG("--allow-run-as-root");
  for (int i = 0; i < o->nmca; i++) ARG("--mca"), ARG(o->mca[2 * i]), ARG(o->mca[2 * i + 1]);
  for (int i = 0; i < o->nexport; i++) ARG("-x"), ARG(o->exports[i]);
  if (o->timeout > 0) { /* mpirun's --timeout is an int of seconds: round up, so the job never gets less */
    int s = o->timeout >= INT_MAX ? INT_MAX : (int)o->timeout;
    ARG("--timeout"), NUMARG(s < o->timeout && s < INT_MAX ? s + 1 : s);
  }
  for (int i = o->prog; i < argc; i++) ARG(argv[i]);
  v[k] = NULL;
#undef ARG
#undef NUMARG
  return v;
}

void oshrun_usage(FILE *f) {
  fprintf(f,
          "usage: oshrun [options] [--] program [args...]\n"
          "  -n, -np, --np, -c N          number of PEs, 1..%d (default 1)\n"
          "  -N, --npernode N             PEs per node, 1..%d\n"
          "  -H, --host H[:SLOTS][,...]   hosts; one that is not this machine hands the job to mpirun\n"
          "  --hostfile, --machinefile F  hosts, one a line: 'host', 'host:N' or 'host slots=N'\n"
          "  --map-by core|hwthread|slot|numa|socket|package|node  placement; picks the binding when --bind-to is not given\n"
          "  --bind-to core|numa|none     bind each PE's CPUs (hwloc); default core when the PEs fit in the cores, else none\n"
          "  --oversubscribe              allow more PEs than slots or cores; no default binding\n"
          "  -x VAR[=VALUE]               export VAR (with VALUE) to the PEs\n"
          "  --mca, --gmca KEY VALUE      an Open MPI MCA parameter: handed to mpirun, else exported to the PEs as\n"
          "                               OMPI_MCA_KEY=VALUE with a note (Shoal has no MCA parameters)\n"
          "  --allow-run-as-root          accepted (Shoal never refuses root; handed to mpirun)\n"
          "  --timeout S                  stop the job after S seconds, naming the PEs still running (exit 124)\n"
          "  --tag-output                 prefix every output line with [PE n]\n"
          "  --report-bindings            print each PE's cores, NUMA node and GPU\n"
          "  -V, --version                print the version and exit\n"
          "  -h, --help                   print this text and exit\n",
          OSHRUN_MAX_PES, OSHRUN_MAX_PES);
}
