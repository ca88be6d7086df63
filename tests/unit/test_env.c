/* Unit tests of runtime/env.c (size/bool/long parsing, shoal_env_load through setenv) and of the debug-subsystem
 * parser and shoal_fatal's line of runtime/log.c. Outputs are poisoned before every call; a failed parse must leave
 * them untouched. */
#include "shoal.h"

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define POISON_SIZE ((size_t)0xa5a5a5a5a5a5a5a5ull)
#define POISON_LONG ((long)0x5a5a5a5a5a5a5a5al)

/* ---- shoal_env_parse_size ---- */
static void size_ok(const char *s, size_t want) {
  size_t v = POISON_SIZE;
  ck_assert_msg(shoal_env_parse_size(s, &v) == SHOAL_OK, "\"%s\" rejected", s);
  ck_assert_msg(v == want, "\"%s\" -> %zu, want %zu", s, v, want);
}
static void size_bad(const char *s) {
  size_t v = POISON_SIZE;
  ck_assert_msg(shoal_env_parse_size(s, &v) == SHOAL_ERR_INVAL, "\"%s\" accepted", s);
  ck_assert_msg(v == POISON_SIZE, "\"%s\": output written on failure", s);
}

START_TEST(size_plain) {
  size_ok("0", 0);
  size_ok("1", 1);
  size_ok("4096", 4096);
  size_ok("000123", 123);
  size_ok("  77", 77);
  size_ok("18446744073709551615", SIZE_MAX);
}
END_TEST

START_TEST(size_suffixes) {
  static const struct { char c; unsigned shift; } sfx[] = {{'k', 10}, {'K', 10}, {'m', 20}, {'M', 20},
                                                         {'g', 30}, {'G', 30}, {'t', 40}, {'T', 40}};
  for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
    char buf[64];
    for (unsigned long long v = 0; v < 1000; v += 37) {
      snprintf(buf, sizeof buf, "%llu%c", v, sfx[i].c);
      size_ok(buf, (size_t)(v << sfx[i].shift));
      snprintf(buf, sizeof buf, "%llu%cB", v, sfx[i].c); /* "512MB", "4kb" */
      size_ok(buf, (size_t)(v << sfx[i].shift));
      snprintf(buf, sizeof buf, "%llu%cb", v, sfx[i].c);
      size_ok(buf, (size_t)(v << sfx[i].shift));
    }
    /* The largest value that fits, and one more. */
    unsigned long long max = (unsigned long long)(SIZE_MAX >> sfx[i].shift);
    snprintf(buf, sizeof buf, "%llu%c", max, sfx[i].c);
    size_ok(buf, (size_t)(max << sfx[i].shift));
    snprintf(buf, sizeof buf, "%llu%c", max + 1, sfx[i].c);
    size_bad(buf);
  }
  size_ok("512M", (size_t)512 << 20);
  size_ok("1G", (size_t)1 << 30);
  size_ok("3t", (size_t)3 << 40);
  size_ok("10B", 10);
}
END_TEST

START_TEST(size_rejects) {
  size_bad("");                      /* empty */
  size_bad("   ");                   /* blank */
  size_bad("-1");                    /* negative */
  size_bad("-0");
  size_bad("+5");                    /* no sign at all */
  size_bad("18446744073709551616");  /* SIZE_MAX + 1 */
  size_bad("99999999999999999999999");
  size_bad("16777216T");             /* 2^64 */
  size_bad("17179869184G");
  size_bad("abc");                   /* junk */
  size_bad("12Q");
  size_bad("1.5G");
  size_bad("0x10");
  size_bad("1KK");
  size_bad("1K ");                   /* trailing blank */
  size_bad("1 K");
  size_bad("K");
  size_bad("1e6");
  size_bad("1KiB");
  size_bad("1BB");
}
END_TEST

/* ---- shoal_env_parse_bool / parse_long ---- */
START_TEST(bool_parse) {
  static const char *yes[] = {"1", "y", "Y", "yes", "YES", "true", "True", "on", "ON"};
  static const char *no[] = {"0", "n", "N", "no", "No", "false", "FALSE", "off", "Off", ""};
  static const char *bad[] = {"2", "-1", "yess", "tru", "onn", " 1", "1 ", "enable", "10"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    bool v = false;
    ck_assert_msg(shoal_env_parse_bool(yes[i], &v) == SHOAL_OK && v == true, "\"%s\" is not true", yes[i]);
  }
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
    bool v = true;
    ck_assert_msg(shoal_env_parse_bool(no[i], &v) == SHOAL_OK && v == false, "\"%s\" is not false", no[i]);
  }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    bool v = true;
    ck_assert_msg(shoal_env_parse_bool(bad[i], &v) == SHOAL_ERR_INVAL, "\"%s\" accepted as a bool", bad[i]);
    ck_assert(v == true);
  }
}
END_TEST

static void long_ok(const char *s, long want) {
  long v = POISON_LONG;
  ck_assert_msg(shoal_env_parse_long(s, &v) == SHOAL_OK, "\"%s\" rejected", s);
  ck_assert_msg(v == want, "\"%s\" -> %ld, want %ld", s, v, want);
}
static void long_bad(const char *s) {
  long v = POISON_LONG;
  ck_assert_msg(shoal_env_parse_long(s, &v) == SHOAL_ERR_INVAL, "\"%s\" accepted", s);
  ck_assert(v == POISON_LONG);
}

START_TEST(long_parse) {
  long_ok("0", 0);
  long_ok("-1", -1);
  long_ok("4096", 4096);
  long_ok("+12", 12);
  long_ok("9223372036854775807", LONG_MAX);
  long_ok("-9223372036854775808", LONG_MIN);
  long_bad("");
  long_bad("-");
  long_bad("9223372036854775808");
  long_bad("-9223372036854775809");
  long_bad("12abc");
  long_bad("1.0");
  long_bad("1 ");
  long_bad("0x10");
  long_bad("ten");
}
END_TEST

/* ---- shoal_env_load: defaults, overrides, and errors naming variable, value and what is accepted ---- */
static const char *managed[] = {"SHMEM_SYMMETRIC_SIZE", "SHMEM_DEBUG", "SHMEM_INFO", "SHMEM_VERSION",
                                "SHOAL_DEBUG_SUBSYS", "SHOAL_SPIN", "SHOAL_BIND", "SHOAL_HEAP",
                                "SHOAL_DEVICE_SYMMETRIC_SIZE", "SHOAL_COLL_VARIANT", "SHOAL_TOPO",
                                "SHOAL_COLL_BARRIER_ALGO", "SHOAL_COLL_BCAST_ALGO", "SHOAL_COLL_FCOLLECT_ALGO",
                                "SHOAL_COLL_ALLTOALL_ALGO", "SHOAL_COLL_REDUCE_ALGO", "SHOAL_COLL_COLLECT_ALGO",
                                "SHOAL_COLL_GPU_TILE", "SHOAL_COLL_GPU_SMS", "SHOAL_NODE_MAP",
                                "SHOAL_BOOTSTRAP"};
/* Set by these tests only: the SMA_ spellings and names that are no variable of ours. */
static const char *extra[] = {"SMA_SYMMETRIC_SIZE", "SMA_DEBUG", "SMA_INFO", "SMA_VERSION", "SHMEM_SYMETRIC_SIZE",
                              "SHOAL_FOO", "SHOAL_COLL_BCAST_ALG", "SHMEM_X"};
static void env_clear(void) {
  for (size_t i = 0; i < sizeof managed / sizeof *managed; i++) unsetenv(managed[i]);
  for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) unsetenv(extra[i]);
}

static shoal_env_t poisoned(void) {
  shoal_env_t e;
  memset(&e, 0xa5, sizeof e);
  return e;
}

START_TEST(load_defaults) {
  env_clear();
  shoal_env_t e = poisoned();
  char err[512] = "untouched";
  ck_assert_int_eq(shoal_env_load(&e, err, sizeof err), SHOAL_OK);
  ck_assert_uint_eq(e.symmetric_size, (size_t)512 << 20);
  ck_assert(e.debug == false && e.info == false && e.version == false);
  ck_assert_str_eq(e.debug_subsys, "all");
  ck_assert_int_eq(e.spin, -1);
  ck_assert_str_eq(e.bind, "none");
  ck_assert_str_eq(e.heap_kind, "host");
  ck_assert_uint_eq(e.device_symmetric_size, (size_t)1 << 30);
  ck_assert_str_eq(e.coll_variant, "hoisted");
  ck_assert_str_eq(e.topo_src, "");
  for (int i = 0; i < 6; i++) ck_assert_str_eq(e.coll_algo[i], "auto");
}
END_TEST

START_TEST(load_overrides) {
  env_clear();
  setenv("SHMEM_SYMMETRIC_SIZE", "3m", 1);
  setenv("SHMEM_DEBUG", "yes", 1);
  setenv("SHMEM_INFO", "1", 1);
  setenv("SHOAL_DEBUG_SUBSYS", "boot,heap", 1);
  setenv("SHOAL_SPIN", "100", 1);
  setenv("SHOAL_BIND", "core", 1);
  setenv("SHOAL_COLL_VARIANT", "naive", 1);
  setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "2G", 1);
  shoal_env_t e = poisoned();
  char err[512];
  ck_assert_int_eq(shoal_env_load(&e, err, sizeof err), SHOAL_OK);
  ck_assert_uint_eq(e.symmetric_size, (size_t)3 << 20);
  ck_assert(e.debug == true && e.info == true && e.version == false);
  ck_assert_str_eq(e.debug_subsys, "boot,heap");
  ck_assert_int_eq(e.spin, 100);
  ck_assert_str_eq(e.bind, "core");
  ck_assert_str_eq(e.coll_variant, "naive");
  ck_assert_uint_eq(e.device_symmetric_size, (size_t)2 << 30);
  env_clear();
}
END_TEST

/* A bad value: SHOAL_ERR_INVAL, *env untouched, and err names the variable, the value and what is accepted. */
static void load_bad(const char *var, const char *val, const char *accepts) {
  env_clear();
  setenv(var, val, 1);
  shoal_env_t e = poisoned(), ref = poisoned();
  char err[512] = "";
  ck_assert_msg(shoal_env_load(&e, err, sizeof err) == SHOAL_ERR_INVAL, "%s=\"%s\" accepted", var, val);
  ck_assert_msg(!memcmp(&e, &ref, sizeof e), "%s=\"%s\": env written on failure", var, val);
  char quoted[300];
  snprintf(quoted, sizeof quoted, "\"%s\"", val);
  ck_assert_msg(strstr(err, var), "message \"%s\" does not name %s", err, var);
  ck_assert_msg(strstr(err, quoted), "message \"%s\" does not show the value %s", err, quoted);
  ck_assert_msg(strstr(err, accepts), "message \"%s\" does not say what is accepted (%s)", err, accepts);
  ck_assert_msg(!strchr(err, '\n'), "message \"%s\" is not one line", err);
  env_clear();
}

START_TEST(load_rejects) {
  const char *sz = "k/K/m/M/g/G/t/T";
  load_bad("SHMEM_SYMMETRIC_SIZE", "12Q", sz);
  load_bad("SHMEM_SYMMETRIC_SIZE", "-5", sz);
  load_bad("SHMEM_SYMMETRIC_SIZE", "", sz);
  load_bad("SHMEM_SYMMETRIC_SIZE", "1.5G", sz);
  load_bad("SHMEM_SYMMETRIC_SIZE", "99999999999T", sz);
  load_bad("SHMEM_SYMMETRIC_SIZE", "0", "at least 1 byte");
  load_bad("SHMEM_DEBUG", "maybe", "yes/no");
  load_bad("SHOAL_SPIN", "0", "-1 (auto)");
  load_bad("SHOAL_SPIN", "-2", "-1 (auto)");
  load_bad("SHOAL_SPIN", "lots", "-1 (auto)");
  load_bad("SHOAL_BIND", "socket", "core|numa|none");
  load_bad("SHOAL_HEAP", "gpu", "host|device");
  load_bad("SHOAL_COLL_VARIANT", "fast", "hoisted|naive");
  load_bad("SHOAL_DEBUG_SUBSYS", "boot,disk", "boot,topo,heap,shm,ofi,gpu,coll");
  /* Sizes whose page round-up or internal-area addition would wrap, and the first one past the limit. */
  load_bad("SHMEM_SYMMETRIC_SIZE", "18446744073709551615", "at most 4194304T");
  load_bad("SHMEM_SYMMETRIC_SIZE", "18446744073709547520", "at most 4194304T");
  load_bad("SHMEM_SYMMETRIC_SIZE", "4611686018427387905", "at most 4194304T");
  load_bad("SHMEM_SYMMETRIC_SIZE", "4194305T", "at most 4194304T");
  load_bad("SHOAL_DEVICE_SYMMETRIC_SIZE", "18446744073709551615", "at most 4194304T");
  load_bad("SHOAL_COLL_GPU_TILE", "16777216T", "at most 4194304T");
  load_bad("SHOAL_COLL_GPU_TILE", "24", "a multiple of 16 bytes");
  load_bad("SHOAL_COLL_GPU_SMS", "2147483648", "at most 2147483647");
  load_bad("SHOAL_SPIN", "9999999999", "at most 2147483647");
  /* Every value is checked at init, the algorithm families too (not at the first collective). */
  load_bad("SHOAL_COLL_BARRIER_ALGO", "tree", "auto|dissemination|linear|hierarchical");
  load_bad("SHOAL_COLL_BCAST_ALGO", "PUSH", "auto|push|pull|tree|push-unsafe|staged|hierarchical");
  load_bad("SHOAL_COLL_FCOLLECT_ALGO", "", "auto|push|ring|rdbl|push-unsafe|hierarchical");
  load_bad("SHOAL_COLL_ALLTOALL_ALGO", "ring", "auto|push|pairwise|push-unsafe|hierarchical");
  load_bad("SHOAL_NODE_MAP", "round-robin", "block|cyclic");
  load_bad("SHOAL_BOOTSTRAP", "pmix", "auto|single");
  load_bad("SHOAL_COLL_REDUCE_ALGO", "fast", "auto|oneshot|rdbl|rsag|hierarchical|halving");
  load_bad("SHOAL_COLL_COLLECT_ALGO", "push-unsafe", "auto|push|ring|rdbl");
  load_bad("SHOAL_TOPO", "", "the path of an hwloc .xml file, or a synthetic description");
  /* A bad deprecated spelling is named as set. */
  load_bad("SMA_SYMMETRIC_SIZE", "12Q", sz);
  load_bad("SMA_SYMMETRIC_SIZE", "0", "at least 1 byte");
  load_bad("SMA_DEBUG", "maybe", "yes/no");
  load_bad("SMA_INFO", "2", "yes/no");
  load_bad("SMA_VERSION", "x", "yes/no");
}
END_TEST

START_TEST(load_limits) {
  env_clear();
  setenv("SHMEM_SYMMETRIC_SIZE", "4194304T", 1); /* the largest accepted (whether it can be mapped: heap_init) */
  setenv("SHOAL_SPIN", "2147483647", 1);
  setenv("SHOAL_COLL_GPU_TILE", "64k", 1);
  shoal_env_t e = poisoned();
  char err[512];
  ck_assert_msg(shoal_env_load(&e, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_uint_eq(e.symmetric_size, (size_t)1 << 62);
  ck_assert_int_eq(e.spin, 2147483647);
  ck_assert_uint_eq(e.coll_gpu_tile, 65536);
  env_clear();
}
END_TEST

/* SMA_ spellings: read when the SHMEM_ name is not set, ignored when it is; e.aliases says which. */
START_TEST(load_sma) {
  env_clear();
  setenv("SMA_SYMMETRIC_SIZE", "3m", 1);
  setenv("SMA_DEBUG", "1", 1);
  setenv("SMA_INFO", "yes", 1);
  setenv("SMA_VERSION", "on", 1);
  shoal_env_t e = poisoned();
  char err[512];
  ck_assert_msg(shoal_env_load(&e, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_uint_eq(e.symmetric_size, (size_t)3 << 20);
  ck_assert(e.debug && e.info && e.version);
  ck_assert_str_eq(e.aliases, "SMA_SYMMETRIC_SIZE read (deprecated spelling); SMA_DEBUG read (deprecated spelling); "
                              "SMA_INFO read (deprecated spelling); SMA_VERSION read (deprecated spelling)");
  setenv("SHMEM_SYMMETRIC_SIZE", "5m", 1);
  setenv("SHMEM_DEBUG", "0", 1);
  ck_assert_msg(shoal_env_load(&e, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_uint_eq(e.symmetric_size, (size_t)5 << 20);
  ck_assert(!e.debug && e.info && e.version);
  ck_assert_msg(strstr(e.aliases, "SMA_SYMMETRIC_SIZE ignored: its SHMEM_ name is set; SMA_DEBUG ignored"), "%s",
                e.aliases);
  env_clear();
  ck_assert_msg(shoal_env_load(&e, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_str_eq(e.aliases, "");
}
END_TEST

/* Names of our prefixes that are not ours: listed, with the nearest known name when it is close; ours and the
 * launcher's are not listed. */
START_TEST(unknown_names) {
  env_clear();
  char buf[1024];
  unsetenv("SHMEM_INFO");
  int base = shoal_env_unknown(buf, sizeof buf); /* whatever the test's own environment has */
  setenv("SHMEM_SYMETRIC_SIZE", "1G", 1);
  setenv("SHOAL_FOO", "1", 1);
  setenv("SHOAL_COLL_BCAST_ALG", "push", 1);
  setenv("SHMEM_X", "", 1);
  setenv("SHMEM_INFO", "1", 1);
  setenv("SHOAL_RANK", "0", 1);
  setenv("SHOAL_BOOT_ADDR", "x", 1);
  setenv("SHOAL_PE_JOB", "x", 1);
  setenv("SHOAL_TEST_TRACE", "1", 1);
  setenv("SMA_FOO", "1", 1); /* not our prefix */
  ck_assert_int_eq(shoal_env_unknown(buf, sizeof buf), base + 4);
  ck_assert_msg(strstr(buf, "SHMEM_SYMETRIC_SIZE (did you mean SHMEM_SYMMETRIC_SIZE?)"), "%s", buf);
  ck_assert_msg(strstr(buf, "SHOAL_COLL_BCAST_ALG (did you mean SHOAL_COLL_BCAST_ALGO?)"), "%s", buf);
  ck_assert_msg(strstr(buf, "SHOAL_FOO") && !strstr(buf, "SHOAL_FOO (did"), "%s", buf);
  ck_assert_msg(strstr(buf, "SHMEM_X") && !strstr(buf, "SHMEM_INFO"), "%s", buf);
  ck_assert_msg(!strstr(buf, "SHOAL_RANK") && !strstr(buf, "SHOAL_BOOT") && !strstr(buf, "PE_JOB") &&
                !strstr(buf, "SHOAL_TEST_TRACE") && !strstr(buf, "SMA_FOO"), "%s", buf);
  char tiny[8];
  ck_assert_int_eq(shoal_env_unknown(tiny, sizeof tiny), base + 4); /* truncated, still terminated */
  ck_assert(memchr(tiny, 0, sizeof tiny));
  unsetenv("SHOAL_RANK");
  unsetenv("SHOAL_BOOT_ADDR");
  unsetenv("SHOAL_PE_JOB");
  unsetenv("SHOAL_TEST_TRACE");
  unsetenv("SMA_FOO");
  env_clear();
}
END_TEST

/* The algorithm families: the position of the value among the accepted names (their enum values in coll.h). */
START_TEST(choice) {
  env_clear();
  char err[512];
  setenv("SHOAL_COLL_BCAST_ALGO", "push-unsafe", 1);
  setenv("SHOAL_COLL_BARRIER_ALGO", "linear", 1);
  ck_assert_msg(shoal_env_load(&shoal_env, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_int_eq(shoal_env_choice("SHOAL_COLL_BCAST_ALGO"), 4);
  ck_assert_int_eq(shoal_env_choice("SHOAL_COLL_BARRIER_ALGO"), 2);
  ck_assert_int_eq(shoal_env_choice("SHOAL_COLL_REDUCE_ALGO"), 0);
  ck_assert_int_eq(shoal_env_choice("SHOAL_HEAP"), 0);
  setenv("SHOAL_COLL_BCAST_ALGO", "staged", 1);
  ck_assert_msg(shoal_env_load(&shoal_env, err, sizeof err) == SHOAL_OK, "%s", err);
  ck_assert_int_eq(shoal_env_choice("SHOAL_COLL_BCAST_ALGO"), 5);
  ck_assert_int_eq(shoal_env_choice("SHOAL_SPIN"), -1); /* not an enumeration */
  ck_assert_int_eq(shoal_env_choice("SHOAL_NONE"), -1);
  env_clear();
}
END_TEST

START_TEST(load_err_truncates) {
  env_clear();
  setenv("SHMEM_SYMMETRIC_SIZE", "junk", 1);
  shoal_env_t e = poisoned();
  char err[16];
  memset(err, 'x', sizeof err);
  ck_assert_int_eq(shoal_env_load(&e, err, sizeof err), SHOAL_ERR_INVAL);
  ck_assert(memchr(err, '\0', sizeof err) != NULL); /* terminated within errlen */
  env_clear();
}
END_TEST

START_TEST(print_all) {
  env_clear();
  shoal_env_t e;
  char err[256];
  ck_assert_int_eq(shoal_env_load(&e, err, sizeof err), SHOAL_OK);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  shoal_env_print(&e, f);
  fclose(f);
  for (size_t i = 0; i < sizeof managed / sizeof *managed; i++)
    ck_assert_msg(strstr(buf, managed[i]), "SHMEM_INFO output lacks %s", managed[i]);
  ck_assert_msg(strstr(buf, "SHMEM_SYMMETRIC_SIZE         = 536870912"), "value missing:\n%s", buf);
  ck_assert(strstr(buf, "bytes of symmetric heap per PE"));
  free(buf);
}
END_TEST

/* ---- log.c: SHOAL_DEBUG_SUBSYS parsing ---- */
static void subsys_ok(const char *s, unsigned want) {
  unsigned m = 0xdeadbeef;
  const char *bad = (const char *)1;
  size_t badlen = 12345;
  ck_assert_msg(shoal_log_parse_subsys(s, &m, &bad, &badlen) == SHOAL_OK, "\"%s\" rejected", s);
  ck_assert_msg(m == want, "\"%s\" -> %#x, want %#x", s, m, want);
  ck_assert(bad == (const char *)1 && badlen == 12345);
}
static void subsys_bad(const char *s, const char *word) {
  unsigned m = 0xdeadbeef;
  const char *bad = NULL;
  size_t badlen = 0;
  ck_assert_msg(shoal_log_parse_subsys(s, &m, &bad, &badlen) == SHOAL_ERR_INVAL, "\"%s\" accepted", s);
  ck_assert(m == 0xdeadbeef);
  ck_assert_msg(bad && badlen == strlen(word) && !strncmp(bad, word, badlen), "\"%s\": bad word \"%.*s\", want %s", s,
                (int)badlen, bad ? bad : "", word);
  ck_assert_int_eq(shoal_log_parse_subsys(s, &m, NULL, NULL), SHOAL_ERR_INVAL); /* NULL outputs are allowed */
}

START_TEST(subsys_parse) {
  subsys_ok("", 0);
  subsys_ok(",,", 0);
  subsys_ok("boot", SHOAL_SUB_BOOT);
  subsys_ok("topo", SHOAL_SUB_TOPO);
  subsys_ok("heap", SHOAL_SUB_HEAP);
  subsys_ok("shm", SHOAL_SUB_SHM);
  subsys_ok("ofi", SHOAL_SUB_OFI);
  subsys_ok("gpu", SHOAL_SUB_GPU);
  subsys_ok("coll", SHOAL_SUB_COLL);
  subsys_ok("all", SHOAL_SUB_ALL);
  subsys_ok("boot,heap", SHOAL_SUB_BOOT | SHOAL_SUB_HEAP);
  subsys_ok("heap,boot,heap,", SHOAL_SUB_BOOT | SHOAL_SUB_HEAP);
  subsys_ok("gpu,all", SHOAL_SUB_ALL);
  subsys_bad("disk", "disk");
  subsys_bad("boot,xyz,heap", "xyz");
  subsys_bad("boo", "boo");
  subsys_bad("boots", "boots");
  subsys_bad("BOOT", "BOOT");
  subsys_bad("heap, boot", " boot");
}
END_TEST

/* shoal_fatal's line, cut at its 1200-byte buffer (a routine name and a message too long for it): it must still end
 * with a newline and carry no NUL byte into stderr (the next PE's line would follow on the same line). */
START_TEST(fatal_truncates) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fd[1], 2);
    char routine[301], msg[1001];
    memset(routine, 'r', sizeof routine - 1);
    routine[sizeof routine - 1] = 0;
    memset(msg, 'x', sizeof msg - 1);
    msg[sizeof msg - 1] = 0;
    shoal_fatal(routine, "%s", msg);
  }
  close(fd[1]);
  char buf[2048];
  size_t got = 0;
  for (ssize_t k; got < sizeof buf && (k = read(fd[0], buf + got, sizeof buf - got)) > 0;) got += (size_t)k;
  close(fd[0]);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  ck_assert_uint_eq(got, 1199); /* the buffer less its NUL */
  ck_assert_ptr_null(memchr(buf, 0, got));
  ck_assert_int_eq(buf[got - 1], '\n');
  ck_assert(!strncmp(buf + got - 4, "xxx\n", 4)); /* cut inside the message, not after it */
}
END_TEST

static Suite *env_suite(void) {
  Suite *s = suite_create("env");
  TCase *t = tcase_create("parse");
  tcase_add_test(t, size_plain);
  tcase_add_test(t, size_suffixes);
  tcase_add_test(t, size_rejects);
  tcase_add_test(t, bool_parse);
  tcase_add_test(t, long_parse);
  suite_add_tcase(s, t);
  t = tcase_create("load");
  tcase_add_test(t, load_defaults);
  tcase_add_test(t, load_overrides);
  tcase_add_test(t, load_rejects);
  tcase_add_test(t, load_err_truncates);
  tcase_add_test(t, load_limits);
  tcase_add_test(t, load_sma);
  tcase_add_test(t, unknown_names);
  tcase_add_test(t, choice);
  tcase_add_test(t, print_all);
  suite_add_tcase(s, t);
  t = tcase_create("log");
  tcase_add_test(t, subsys_parse);
  tcase_add_test(t, fatal_truncates);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(env_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
