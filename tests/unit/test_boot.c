/* Unit tests of the node's descriptor exchange (runtime/boot_node.c) and of the check of a received descriptor
 * (shoal_memfd_unfit in runtime/memfd.c).
 *
 * Three forked processes play the PEs of one node over a fake bootstrap backend (an all-gather through shared
 * memory); each shares a memfd holding its rank, and each must receive every other PE's. Strangers knock on the
 * leader's socket meanwhile: a process of another uid (when the test runs as root), and one of the same uid that is
 * no PE. Both must be refused without disturbing the exchange. */
#include "shoal.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(memfd_checks) {
  int good = shoal_memfd_create("t", 8192);
  ck_assert_int_ge(good, 0);
  ck_assert_ptr_null(shoal_memfd_unfit(good, 8192));
  ck_assert_ptr_nonnull(shoal_memfd_unfit(good, 4096)); /* another size than announced */
  ck_assert_ptr_nonnull(shoal_memfd_unfit(-1, 8192));
  int unsealed = memfd_create("u", MFD_CLOEXEC);
  ck_assert_int_eq(ftruncate(unsealed, 8192), 0);
  ck_assert_ptr_nonnull(shoal_memfd_unfit(unsealed, 8192)); /* not what a PE makes */
  char path[] = "/tmp/shoal-test-boot-XXXXXX";
  int file = mkstemp(path);
  ck_assert_int_ge(file, 0);
  unlink(path);
  ck_assert_int_eq(ftruncate(file, 8192), 0);
  ck_assert_ptr_nonnull(shoal_memfd_unfit(file, 8192)); /* a file: the attack of issue 11 */
  int ro = memfd_create("w", MFD_CLOEXEC | MFD_ALLOW_SEALING); /* our seals and a write seal: we could not store */
  ck_assert_int_eq(ftruncate(ro, 8192), 0);
  ck_assert_int_eq(fcntl(ro, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL), 0);
  ck_assert_ptr_nonnull(shoal_memfd_unfit(ro, 8192));
  close(ro);
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_ptr_nonnull(shoal_memfd_unfit(p[0], 0));
  close(good), close(unsealed), close(file), close(p[0]), close(p[1]);
}
END_TEST

/* ---- a fake backend: all-gather through a shared page, for forked "PEs" ---- */
#define NP 3
typedef struct {
  _Atomic int arrived, gen;
  char slot[NP][256];
  char leader_name[48];
  unsigned char secret[16]; /* as if it had leaked: the uid and pid checks must still hold */
  _Atomic int stranger_done;
} shared_t;
static shared_t *sh;

static shoal_status_t fake_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  if (len > sizeof sh->slot[0]) return SHOAL_ERR_INVAL;
  int g = sh->gen;
  memcpy(sh->slot[b->rank], in, len);
  if (++sh->arrived == NP) {
    sh->arrived = 0;
    sh->gen = g + 1;
  } else {
    while (sh->gen == g) usleep(100);
  }
  for (int p = 0; p < NP; p++) memcpy((char *)out + (size_t)p * len, sh->slot[p], len);
  /* nobody writes the slots again before everyone has read them: a second round-trip */
  g = sh->gen;
  if (++sh->arrived == NP) {
    sh->arrived = 0;
    sh->gen = g + 1;
  } else {
    while (sh->gen == g) usleep(100);
  }
  return SHOAL_OK;
}
static shoal_status_t fake_barrier(shoal_boot_t *b) { return fake_allgather(b, "", (char[NP]){0}, 1); }
static shoal_status_t fake_init(shoal_boot_t *b) { return SHOAL_OK; }
static void fake_abort(shoal_boot_t *b, int status, const char *msg) {}
static void fake_fini(shoal_boot_t *b) {}
static const shoal_boot_ops_t fake_ops = {.size = sizeof(shoal_boot_ops_t), .name = "fake", .init = fake_init,
  .allgather = fake_allgather, .barrier = fake_barrier, .abort = fake_abort, .fini = fake_fini};

/* Connect to the leader's socket and say the hello of the late PE, with the job's secret (boot_node.c's record:
 * magic, round, rank, kind, tag, secret); return whether the leader closed the connection. */
static bool knock(const char *name) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t l = strlen(name);
  memcpy(a.sun_path + 1, name, l);
  int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  if (connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l))) return true;
  struct { uint32_t magic, round; int32_t rank, kind; uint64_t tag; unsigned char secret[16]; } hello = {
      .magic = 0x53484e44u, .rank = NP - 1, .kind = 1};
  memcpy(hello.secret, sh->secret, sizeof hello.secret);
  (void)!send(s, &hello, sizeof hello, MSG_NOSIGNAL);
  struct timeval tv = {10, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[64];
  ssize_t n = recv(s, buf, sizeof buf, 0); /* closed by the leader (reset: our hello was unread); a record: > 0 */
  int e = errno;
  close(s);
  return n == 0 || (n < 0 && e == ECONNRESET);
}

static int run_pe(int rank) {
  shoal_boot_t b = {.rank = rank, .size = NP, .local_rank = rank, .local_size = NP, .ops = &fake_ops, .fd = -1};
  int local[NP] = {0, 1, 2};
  b.local = local;
  if (shoal_boot_node_init(&b)) return 10;
  if (rank == 0) memcpy(sh->secret, b.node_secret, sizeof sh->secret);
  if (rank == 0) snprintf(sh->leader_name, sizeof sh->leader_name, "%s", b.node_name);
  fake_barrier(&b);
  if (rank == 2) /* the last PE comes late: the strangers get their chance first */
    while (sh->stranger_done < 2) usleep(1000);
  for (int round = 0; round < 2; round++) {
    int fd = shoal_memfd_create("pe", 4096), fds[NP];
    uint64_t tags[NP];
    if (fd < 0 || pwrite(fd, &(int){rank * 10 + round}, sizeof(int), 0) != sizeof(int)) return 11;
    if (shoal_boot_fd_allgather(&b, fd, 4096, fds, tags)) return 12;
    for (int p = 0; p < NP; p++) {
      if (p == rank) {
        if (fds[p] != -1) return 13;
        continue;
      }
      int v = -1;
      if (fds[p] < 0 || tags[p] != 4096 || shoal_memfd_unfit(fds[p], 4096) || pread(fds[p], &v, sizeof v, 0) != sizeof v ||
          v != p * 10 + round)
        return 14;
      close(fds[p]);
    }
    close(fd);
  }
  shoal_boot_node_close(&b);
  return 0;
}

START_TEST(node_exchange) {
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(sh, MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  pid_t pe[NP], str[2];
  for (int r = 0; r < NP; r++)
    if (!(pe[r] = fork())) _exit(run_pe(r));
  /* strangers: one of another uid (as root), one of ours that is no PE */
  for (int k = 0; k < 2; k++)
    if (!(str[k] = fork())) {
      while (!sh->leader_name[0]) usleep(1000);
      if (k == 0 && geteuid() == 0 && (setgid(65534) || setuid(65534))) _exit(20);
      bool closed = knock(sh->leader_name);
      sh->stranger_done++;
      _exit(closed ? 0 : 21);
    }
  for (int k = 0; k < 2; k++) {
    int st;
    ck_assert_int_eq(waitpid(str[k], &st, 0), str[k]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "stranger %d was not refused (status %d)", k, st);
  }
  for (int r = 0; r < NP; r++) {
    int st;
    ck_assert_int_eq(waitpid(pe[r], &st, 0), pe[r]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "PE %d failed (status %d)", r, st);
  }
  munmap(sh, sizeof *sh);
}
END_TEST

int main(void) {
  Suite *s = suite_create("boot");
  TCase *t = tcase_create("node");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, memfd_checks);
  tcase_add_test(t, node_exchange);
  suite_add_tcase(s, t);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
