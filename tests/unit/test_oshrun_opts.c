/* Unit tests of runtime/oshrun_opts.c: every accepted spelling, every refusal (one line, status 2, nothing printed),
 * the local-host checks on --host and hostfiles, and the argv handed to mpirun. */
#include "oshrun_opts.h"

#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static oshrun_opts_t o;
static char err[512];
static char *av[64];
static int ac;

/* Parse {"oshrun", words...}; the previous result is freed first (also checks parse can run again). */
static int parse_v(const char *const *w) {
  oshrun_opts_free(&o);
  for (ac = 0; w[ac]; ac++) av[ac] = (char *)w[ac];
  av[ac] = NULL;
  memset(err, 'E', sizeof err - 1);
  err[sizeof err - 1] = 0;
  char *saved[64];
  memcpy(saved, av, sizeof saved);
  int rc = oshrun_opts_parse(ac, av, &o, err, sizeof err);
  ck_assert_msg(!memcmp(saved, av, sizeof saved), "parse changed argv");
  return rc;
}
#define PARSE(...) parse_v((const char *const[]){"oshrun", __VA_ARGS__, NULL})
/* Accepted, with the program at argv[prog]. */
#define OK(prog_, ...)                                                                                                  \
  do {                                                                                                                 \
    int rc_ = PARSE(__VA_ARGS__);                                                                                      \
    ck_assert_msg(rc_ == 0, "rejected (%d): %s", rc_, err);                                                            \
    ck_assert_int_eq(o.action, OSHRUN_RUN);                                                                            \
    ck_assert_int_eq(o.prog, prog_);                                                                                   \
  } while (0)
/* Refused with status 2 and a one-line message containing want; o left zeroed. */
#define BAD(want, ...)                                                                                                 \
  do {                                                                                                                 \
    int rc_ = PARSE(__VA_ARGS__);                                                                                      \
    ck_assert_msg(rc_ == 2, "accepted (%d), want \"%s\"", rc_, want);                                                  \
    ck_assert_msg(strstr(err, want), "message \"%s\", want \"%s\"", err, want);                                        \
    ck_assert_msg(!strchr(err, '\n'), "message has a newline: \"%s\"", err);                                           \
    ck_assert_msg(!strncmp(err, "oshrun: ", 8), "message \"%s\" without oshrun: ", err);                               \
    ck_assert_msg(!o.npes && !o.exports && !o.host && !o.prog, "output left on failure");                              \
  } while (0)

START_TEST(counts) {
  OK(3, "-n", "4", "./a");
  ck_assert_int_eq(o.npes, 4);
  ck_assert_str_eq(av[o.prog], "./a");
  OK(2, "-n4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(2, "-n=4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(3, "-np", "4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(2, "-np=4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(3, "--np", "4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(2, "--np=4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(3, "-n", "1", "./a");
  ck_assert_int_eq(o.npes, 1);
  OK(3, "-n", "4096", "./a");
  ck_assert_int_eq(o.npes, 4096);
  OK(5, "-n", "2", "-n", "3", "./a"); /* the last wins */
  ck_assert_int_eq(o.npes, 3);
  OK(1, "./a");
  ck_assert_int_eq(o.npes, 0);
  ck_assert_int_eq(o.per_node, 0);
  OK(3, "-N", "2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  OK(2, "-N2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  OK(2, "-N=2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  OK(3, "--npernode", "2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  OK(2, "--npernode=2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  OK(3, "-npernode", "2", "./a");
  ck_assert_int_eq(o.per_node, 2);
  ck_assert_int_eq(o.npes, 0);
}
END_TEST

START_TEST(hosts) {
  OK(3, "--host", "a,b", "./a");
  ck_assert_str_eq(o.host, "a,b");
  OK(2, "--host=a", "./a");
  ck_assert_str_eq(o.host, "a");
  OK(3, "-H", "a", "./a");
  ck_assert_str_eq(o.host, "a");
  OK(2, "-Ha:2", "./a");
  ck_assert_str_eq(o.host, "a:2");
  OK(3, "-host", "a", "./a");
  ck_assert_str_eq(o.host, "a");
  OK(7, "--host", "a", "-H", "b:2", "-host", "[::1]:3,::1", "./a");
  ck_assert_str_eq(o.host, "a,b:2,[::1]:3,::1");
  OK(3, "--hostfile", "F", "./a");
  ck_assert_str_eq(o.hostfile, "F");
  OK(2, "--hostfile=F", "./a");
  ck_assert_str_eq(o.hostfile, "F");
  OK(3, "--machinefile", "F", "./a");
  ck_assert_str_eq(o.hostfile, "F");
  OK(3, "-hostfile", "F", "./a");
  ck_assert_str_eq(o.hostfile, "F");
  OK(3, "-machinefile", "G", "./a");
  ck_assert_str_eq(o.hostfile, "G");
  ck_assert_ptr_null(o.host);
}
END_TEST

START_TEST(placement) {
  OK(1, "./a");
  ck_assert_ptr_null(o.map_by);
  ck_assert_ptr_null(o.bind_to);
  ck_assert(!o.oversubscribe && !o.tag_output && !o.report_bindings);
  OK(3, "--map-by", "core", "./a");
  ck_assert_str_eq(o.map_by, "core");
  OK(2, "--map-by=numa", "./a");
  ck_assert_str_eq(o.map_by, "numa");
  static const char *const maps[] = {"core", "hwthread", "slot", "numa", "socket", "package", "node"};
  for (int i = 0; i < 7; i++) {
    OK(3, "--map-by", maps[i], "./a");
    ck_assert_str_eq(o.map_by, maps[i]);
  }
  static const char *const binds[] = {"core", "numa", "none"};
  for (int i = 0; i < 3; i++) {
    OK(3, "--bind-to", binds[i], "./a");
    ck_assert_str_eq(o.bind_to, binds[i]);
    char eq[32];
    snprintf(eq, sizeof eq, "--bind-to=%s", binds[i]);
    OK(2, eq, "./a");
    ck_assert_str_eq(o.bind_to, binds[i]);
  }
  OK(4, "--oversubscribe", "--tag-output", "--report-bindings", "./a");
  ck_assert(o.oversubscribe && o.tag_output && o.report_bindings);
  OK(2, "--tag-output", "./a");
  ck_assert(!o.oversubscribe && o.tag_output && !o.report_bindings);
  OK(2, "--report-bindings", "./a");
  ck_assert(!o.oversubscribe && !o.tag_output && o.report_bindings);
  OK(2, "-oversubscribe", "./a");
  ck_assert(o.oversubscribe);
}
END_TEST

START_TEST(exports) {
  OK(1, "./a");
  ck_assert_int_eq(o.nexport, 0);
  OK(3, "-x", "VAR", "./a");
  ck_assert_int_eq(o.nexport, 1);
  ck_assert_str_eq(o.exports[0], "VAR");
  OK(3, "-x", "VAR=VAL", "./a");
  ck_assert_str_eq(o.exports[0], "VAR=VAL");
  OK(2, "-xVAR=VAL", "./a");
  ck_assert_str_eq(o.exports[0], "VAR=VAL");
  OK(2, "-x=VAR", "./a");
  ck_assert_str_eq(o.exports[0], "VAR");
}
END_TEST

/* Open MPI oshrun habits: -c N, --allow-run-as-root, --mca/--gmca KEY VALUE (two words). */
START_TEST(openmpi_habits) {
  OK(3, "-c", "4", "./a");
  ck_assert_int_eq(o.npes, 4);
  OK(2, "-c2", "./a");
  ck_assert_int_eq(o.npes, 2);
  OK(2, "--allow-run-as-root", "./a");
  ck_assert(o.allow_run_as_root);
  OK(11, "--mca", "btl", "self,vader", "-mca", "pml", "ucx", "--gmca", "spml", "ucx", "-c2", "./a", "--mca");
  ck_assert_int_eq(o.npes, 2);
  ck_assert_int_eq(o.nmca, 3);
  ck_assert_str_eq(o.mca[0], "btl");
  ck_assert_str_eq(o.mca[1], "self,vader");
  ck_assert_str_eq(o.mca[2], "pml");
  ck_assert_str_eq(o.mca[5], "ucx");
  OK(3, "--mca=btl", "^openib", "./a");
  ck_assert_str_eq(o.mca[1], "^openib");
  BAD("oshrun: --mca btl: needs a value: --mca KEY VALUE", "--mca", "btl");
  BAD("oshrun: --mca b-tl: expected an MCA parameter name", "--mca", "b-tl", "x", "./a");
  BAD("oshrun: no program given", "--mca", "btl", "./a"); /* as in Open MPI: ./a is the value */
  BAD("option '-c' needs an argument", "-c");
  BAD("oshrun: -c 0: expected a PE count", "-c", "0", "./a");
}
END_TEST

START_TEST(exports_order) {
  OK(6, "-x", "A_1=x=y z", "-xB", "-x", "_C=", "./a");
  ck_assert_int_eq(o.nexport, 3);
  ck_assert_str_eq(o.exports[0], "A_1=x=y z");
  ck_assert_str_eq(o.exports[1], "B");
  ck_assert_str_eq(o.exports[2], "_C=");
}
END_TEST

START_TEST(timeouts) {
  OK(1, "./a");
  ck_assert(o.timeout == 0);
  OK(3, "--timeout", "5", "./a");
  ck_assert(o.timeout == 5);
  OK(2, "--timeout=5", "./a");
  ck_assert(o.timeout == 5);
  OK(3, "--timeout", "0.5", "./a");
  ck_assert(o.timeout == 0.5);
  OK(3, "-timeout", "30", "./a");
  ck_assert(o.timeout == 30);
  OK(3, "--timeout", ".25", "./a");
  ck_assert(o.timeout == 0.25);
}
END_TEST

START_TEST(actions) {
  static const char *const ver[] = {"--version", "-V"}, *const help[] = {"--help", "-h"};
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(PARSE(ver[i]), 0); /* no program needed */
    ck_assert_int_eq(o.action, OSHRUN_VERSION);
    ck_assert_int_eq(PARSE(help[i]), 0);
    ck_assert_int_eq(o.action, OSHRUN_HELP);
  }
  ck_assert_int_eq(PARSE("-n", "2", "--help", "--foo"), 0); /* stops at --help */
  ck_assert_int_eq(o.action, OSHRUN_HELP);
  ck_assert_int_eq(PARSE("-version"), 0);
  ck_assert_int_eq(o.action, OSHRUN_VERSION);
  BAD("-n abc", "-n", "abc", "--help"); /* left to right: the bad count first */
}
END_TEST

START_TEST(program_stops_parsing) {
  OK(2, "--", "./a");
  OK(4, "-n", "2", "--", "-n"); /* a program named -n */
  ck_assert_int_eq(o.npes, 2);
  ck_assert_str_eq(av[o.prog], "-n");
  OK(3, "-n", "2", "./app", "-n", "3", "--foo", "-np", "5", "-x", "!");
  ck_assert_int_eq(o.npes, 2);
  ck_assert_int_eq(o.nexport, 0);
  OK(1, "./app", "-n", "3", "--foo");
  ck_assert_int_eq(o.npes, 0);
  OK(3, "-n", "2", "./app", "--", "-x");
  /* "--" after the program belongs to the program */
  ck_assert_str_eq(av[4], "--");
}
END_TEST

START_TEST(refuse_unknown) {
  BAD("oshrun: unknown option '--foo'", "--foo", "./a");
  ck_assert_str_eq(err, "oshrun: unknown option '--foo'");
  BAD("oshrun: unknown option '--foo'", "--foo=3", "./a");
  ck_assert_str_eq(err, "oshrun: unknown option '--foo'");
  BAD("unknown option '-q'", "-q", "./a");
  BAD("oshrun: -n 4q: expected a PE count", "-n4q", "./a"); /* -n takes "4q": a bad count, not -q */
}
END_TEST

START_TEST(refuse_unknown2) {
  BAD("unknown option '-q'", "-n", "2", "-q", "./a");
  BAD("unknown option '--time'", "--time", "5", "./a"); /* no abbreviations */
  BAD("unknown option '--over'", "--over", "./a");
  BAD("unknown option '--ho'", "--ho", "a", "./a");
  BAD("unknown option '-f'", "-foo", "./a");
  BAD("option '--tag-output' takes no argument", "--tag-output=1", "./a");
  BAD("option '-tag-output' takes no argument", "-tag-output=1", "./a");
}
END_TEST

START_TEST(refuse_missing_arg) {
  BAD("oshrun: option '-n' needs an argument", "-n");
  ck_assert_str_eq(err, "oshrun: option '-n' needs an argument");
  BAD("option '-np' needs an argument", "-np");
  BAD("option '--np' needs an argument", "--np");
  BAD("option '-N' needs an argument", "-N");
  BAD("option '--host' needs an argument", "--host");
  BAD("option '-H' needs an argument", "-H");
  BAD("option '--hostfile' needs an argument", "--hostfile");
  BAD("option '--machinefile' needs an argument", "--machinefile");
  BAD("option '--map-by' needs an argument", "--map-by");
  BAD("option '--bind-to' needs an argument", "--bind-to");
  BAD("option '--timeout' needs an argument", "--timeout");
  BAD("option '-timeout' needs an argument", "-timeout");
  BAD("option '-x' needs an argument", "-x");
}
END_TEST

START_TEST(refuse_counts) {
  static const char *const bad[] = {"0", "-1", "4097", "abc", "4x", "", " 4", "+4", "1e3", "99999999999", "0x4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char want[64];
    snprintf(want, sizeof want, "oshrun: -n %s: expected a PE count in [1, 4096]", bad[i]);
    BAD(want, "-n", bad[i], "./a");
    ck_assert_str_eq(err, want);
    snprintf(want, sizeof want, "oshrun: -np %s: expected a PE count in [1, 4096]", bad[i]);
    BAD(want, "-np", bad[i], "./a");
    snprintf(want, sizeof want, "oshrun: -N %s: expected a PE count per node in [1, 4096]", bad[i]);
    BAD(want, "-N", bad[i], "./a");
  }
  BAD("oshrun: --np 0: expected a PE count", "--np=0", "./a");
  BAD("oshrun: -n 0: expected", "-n0", "./a");
  BAD("oshrun: --npernode 0: expected", "--npernode", "0", "./a");
}
END_TEST

START_TEST(refuse_timeouts) {
  static const char *const bad[] = {"0", "-1", "x", "", "0.0", "inf", "nan", "0x10", "1e999", " 5", "+5", "5s", "."};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char want[64];
    snprintf(want, sizeof want, "oshrun: --timeout %s: expected seconds > 0", bad[i]);
    BAD(want, "--timeout", bad[i], "./a");
    ck_assert_str_eq(err, want);
  }
}
END_TEST

START_TEST(refuse_placement) {
  BAD("oshrun: --bind-to socket: expected core, numa or none", "--bind-to", "socket", "./a");
  BAD("--bind-to CORE: expected core, numa or none", "--bind-to=CORE", "./a");
  BAD("--bind-to : expected core, numa or none", "--bind-to", "", "./a");
  const char *list = "expected core, hwthread, slot, numa, socket, package or node";
  BAD(list, "--map-by", "board", "./a");
  BAD("--map-by ppr:2:node: Open MPI's ppr: form is not supported", "--map-by", "ppr:2:node", "./a");
  BAD(list, "--map-by", "ppr:2:node", "./a");
  BAD("--map-by core:PE=2: Open MPI's :modifier forms are not supported", "--map-by", "core:PE=2", "./a");
  BAD("modifier", "--map-by=slot:oversubscribe", "./a");
  BAD(list, "--map-by", "", "./a");
}
END_TEST

START_TEST(refuse_hosts) {
  static const char *const bad[] = {"", "a,,b", "a,", ",a", "a:", "a:0", ":2", "a:x", "a:4097", "[::1", "[::1]x", "[]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) BAD("expected host[:slots]", "--host", bad[i], "./a");
  BAD("oshrun: -H a:0: expected host[:slots]", "-H", "a:0", "./a");
  BAD("oshrun: --hostfile: expected a file name", "--hostfile=", "./a");
}
END_TEST

START_TEST(refuse_exports) {
  static const char *const bad[] = {"", "=v", "A-B", "A.B=1", "1A", "A B", "A$", "é"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) BAD("expected VAR or VAR=VALUE", "-x", bad[i], "./a");
  BAD("oshrun: -x : expected VAR", "-x=", "./a"); /* "-x=" is -x with an empty name */
}
END_TEST

START_TEST(refuse_no_program) {
  BAD("oshrun: no program given", "-n", "2");
  ck_assert_str_eq(err, "oshrun: no program given");
  BAD("oshrun: no program given", "-n", "2", "--");
  BAD("oshrun: no program given", "--tag-output");
  oshrun_opts_free(&o);
  char *only[] = {"oshrun", NULL};
  ck_assert_int_eq(oshrun_opts_parse(1, only, &o, err, sizeof err), 2);
  ck_assert_str_eq(err, "oshrun: no program given");
  ck_assert_int_eq(oshrun_opts_parse(0, only, &o, err, sizeof err), 2);
}
END_TEST

/* parse prints nothing (getopt's messages are off) and truncates err to errlen. */
START_TEST(quiet_and_truncated) {
  FILE *cap = tmpfile();
  ck_assert_ptr_nonnull(cap);
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(cap), 2);
  PARSE("--foo", "./a");
  PARSE("-q", "./a");
  PARSE("-n");
  PARSE("--tag-output=1", "./a");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_int_eq(ftell(cap), 0);
  fseek(cap, 0, SEEK_END);
  ck_assert_int_eq(ftell(cap), 0);
  fclose(cap);
  oshrun_opts_free(&o);
  char small[10] = "xxxxxxxxx", *a[] = {"oshrun", "--foo", "./a", NULL};
  ck_assert_int_eq(oshrun_opts_parse(3, a, &o, small, 8), 2);
  ck_assert_str_eq(small, "oshrun:");
  ck_assert_int_eq(small[8], 'x');
  oshrun_opts_free(&o);
  oshrun_opts_free(&o); /* twice is fine */
}
END_TEST

/* ---- hosts ---- */
static char tmpl[64];
static const char *hostfile(const char *text) {
  snprintf(tmpl, sizeof tmpl, "/tmp/test_oshrun_opts.XXXXXX");
  int fd = mkstemp(tmpl);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return tmpl;
}

START_TEST(local_hosts) {
  OK(1, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  ck_assert_int_eq(oshrun_local_slots(&o), 0);
  OK(3, "--host", "localhost:4,127.0.0.1,::1,LocalHost,127.1.2.3:2,[::1]:3", "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  ck_assert_int_eq(oshrun_local_slots(&o), 4 + 1 + 1 + 1 + 2 + 3);
  OK(5, "-H", "localhost", "-H", "localhost", "./a"); /* each time named: one slot */
  ck_assert_int_eq(oshrun_local_slots(&o), 2);

  char self[300], upper[300], shortname[300];
  ck_assert_int_eq(gethostname(self, 256), 0);
  self[256] = 0;
  snprintf(shortname, sizeof shortname, "%.*s:2", (int)strcspn(self, "."), self);
  for (size_t i = 0; i <= strlen(self); i++) upper[i] = (char)(self[i] >= 'a' && self[i] <= 'z' ? self[i] - 32 : self[i]);
  OK(3, "--host", self, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  OK(3, "--host", upper, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  OK(3, "--host", shortname, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  ck_assert_int_eq(oshrun_local_slots(&o), 2);

  OK(3, "--host", "localhost:2,no-such-host.invalid:3", "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 0);
  ck_assert_int_eq(oshrun_local_slots(&o), 2);
  static const char *const remote[] = {"10.0.0.1", "128.0.0.1", "::2", "localhost2", "x.localhost"};
  for (int i = 0; i < 5; i++) {
    OK(3, "--host", remote[i], "./a");
    ck_assert_msg(oshrun_hosts_local(&o, err, sizeof err) == 0, "%s taken as local", remote[i]);
    ck_assert_int_eq(oshrun_local_slots(&o), 0);
  }
}
END_TEST

START_TEST(local_hostfile) {
  const char *f = hostfile("# a comment\n\nlocalhost slots=3\n  127.0.0.2:2 # two\n::1 max_slots=8\n\t[::1]:4 slots=5\n");
  OK(3, "--hostfile", f, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  ck_assert_int_eq(oshrun_local_slots(&o), 3 + 2 + 1 + 5);
  OK(5, "--hostfile", f, "-H", "localhost:2", "./a"); /* both add up */
  ck_assert_int_eq(oshrun_local_slots(&o), 13);
  unlink(f);

  f = hostfile("localhost slots=2\nnode-b.invalid slots=4\n");
  OK(3, "--machinefile", f, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 0);
  ck_assert_int_eq(oshrun_local_slots(&o), 2);
  unlink(f);

  f = hostfile("# nothing\n");
  OK(3, "--hostfile", f, "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), 1);
  ck_assert_int_eq(oshrun_local_slots(&o), 0);
  unlink(f);

  static const char *const malformed[] = {"localhost slots=x\n", "localhost foo=1\n", "localhost slots=0\n",
                                          "localhost:\n", "a:1:2:x slots=\n", "h max-slots=-1\n"};
  for (int i = 0; i < 6; i++) {
    char text[64];
    snprintf(text, sizeof text, "localhost slots=2\n%s", malformed[i]);
    f = hostfile(text);
    OK(5, "--hostfile", f, "-H", "localhost", "./a");
    ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "oshrun: %s:2: expected", f);
    ck_assert_msg(strstr(err, want) && !strchr(err, '\n'), "line %d: \"%s\"", i, err);
    ck_assert_int_eq(oshrun_local_slots(&o), 1); /* the --host entry only */
    unlink(f);
  }

  OK(3, "--hostfile", "/nonexistent/hosts", "./a");
  ck_assert_int_eq(oshrun_hosts_local(&o, err, sizeof err), -1);
  ck_assert_str_eq(err, "oshrun: cannot read hostfile /nonexistent/hosts: No such file or directory");
  ck_assert_int_eq(oshrun_local_slots(&o), 0);
}
END_TEST

/* ---- hand-off ---- */
static void handoff_is(const char *const *want) {
  char **v = oshrun_handoff_argv(&o, ac, av, "mpirun");
  ck_assert_ptr_nonnull(v);
  int i = 0;
  for (; want[i]; i++) {
    ck_assert_msg(v[i], "argv ends at %d, want \"%s\"", i, want[i]);
    ck_assert_str_eq(v[i], want[i]);
  }
  ck_assert_ptr_null(v[i]);
  free(v);
}
#define HANDOFF(...) handoff_is((const char *const[]){__VA_ARGS__, NULL})

START_TEST(handoff) {
  OK(1, "./app");
  HANDOFF("mpirun", "-np", "1", "./app");
  OK(3, "-np", "8", "./app", "-n", "3");
  HANDOFF("mpirun", "-np", "8", "./app", "-n", "3");
  OK(26, "-n", "4", "-N", "2", "--host", "a,b", "-H", "c:2", "--hostfile", "F", "--map-by", "numa", "--bind-to",
     "core", "--oversubscribe", "--tag-output", "--report-bindings", "-x", "A", "-xB=1", "--timeout", "0.5", "-x",
     "C=x y", "--", "./app", "-n", "3");
  ck_assert_str_eq(av[o.prog], "./app");
  HANDOFF("mpirun", "-np", "4", "--npernode", "2", "--host", "a,b,c:2", "--hostfile", "F", "--map-by", "numa",
          "--bind-to", "core", "--oversubscribe", "--tag-output", "--report-bindings", "-x", "A", "-x", "B=1", "-x",
          "C=x y", "--timeout", "1", "./app", "-n", "3");
  OK(2, "--timeout=5", "./app");
  HANDOFF("mpirun", "-np", "1", "--timeout", "5", "./app");
  OK(2, "--timeout=2.1", "./app");
  HANDOFF("mpirun", "-np", "1", "--timeout", "3", "./app");
  OK(2, "--timeout=1e12", "./app");
  HANDOFF("mpirun", "-np", "1", "--timeout", "2147483647", "./app");
  OK(7, "--allow-run-as-root", "--mca", "plm_rsh_agent", "ssh -x", "-c", "2", "./app");
  HANDOFF("mpirun", "-np", "2", "--allow-run-as-root", "--mca", "plm_rsh_agent", "ssh -x", "./app");
  OK(3, "-machinefile", "hf", "./app");
  HANDOFF("mpirun", "-np", "1", "--hostfile", "hf", "./app");
  ck_assert_ptr_null(oshrun_handoff_argv(&o, ac, av, NULL));
  o.prog = ac;
  ck_assert_ptr_null(oshrun_handoff_argv(&o, ac, av, "mpirun"));
  o.prog = 0;
  ck_assert_ptr_null(oshrun_handoff_argv(&o, ac, av, "mpirun"));
}
END_TEST

START_TEST(usage) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  oshrun_usage(f);
  fclose(f);
  static const char *const opts[] = {"-n,", "-np", "--np", "-N,", "--npernode", "-H,", "--host", "--hostfile",
                                     "--machinefile", "--map-by", "--bind-to", "--oversubscribe", "-x VAR",
                                     "--timeout", "--tag-output", "--report-bindings", "--mca", "--gmca",
                                     "--allow-run-as-root", "-c N", "-V,", "--version", "-h,",
                                     "--help", "4096"};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) ck_assert_msg(strstr(text, opts[i]), "no %s", opts[i]);
  ck_assert_int_eq(text[len - 1], '\n');
  free(text);
}
END_TEST

static Suite *opts_suite(void) {
  Suite *s = suite_create("oshrun_opts");
  TCase *t = tcase_create("accept");
  tcase_add_test(t, counts);
  tcase_add_test(t, hosts);
  tcase_add_test(t, placement);
  tcase_add_test(t, exports);
  tcase_add_test(t, exports_order);
  tcase_add_test(t, openmpi_habits);
  tcase_add_test(t, timeouts);
  tcase_add_test(t, actions);
  tcase_add_test(t, program_stops_parsing);
  suite_add_tcase(s, t);
  t = tcase_create("refuse");
  tcase_add_test(t, refuse_unknown);
  tcase_add_test(t, refuse_unknown2);
  tcase_add_test(t, refuse_missing_arg);
  tcase_add_test(t, refuse_counts);
  tcase_add_test(t, refuse_timeouts);
  tcase_add_test(t, refuse_placement);
  tcase_add_test(t, refuse_hosts);
  tcase_add_test(t, refuse_exports);
  tcase_add_test(t, refuse_no_program);
  tcase_add_test(t, quiet_and_truncated);
  suite_add_tcase(s, t);
  t = tcase_create("hosts");
  tcase_add_test(t, local_hosts);
  tcase_add_test(t, local_hostfile);
  suite_add_tcase(s, t);
  t = tcase_create("handoff");
  tcase_add_test(t, handoff);
  tcase_add_test(t, usage);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(opts_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  oshrun_opts_free(&o);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
