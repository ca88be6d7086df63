/* flood.c - the 'flood' attack of tests/scripts/attack.py: connect to the abstract Unix socket NAME (TYPE 1 stream,
 * 5 seqpacket) and close, non-blocking, in a tight loop from THREADS threads, until killed or its parent process
 * ends (PR_SET_PDEATHSIG would fire when the parent's *thread* ends: the attacker starts us from a short thread). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct sockaddr_un sa = {.sun_family = AF_UNIX};
static socklen_t salen;
static int type;

static void *loop(void *arg) {
  (void)arg;
  for (;;) {
    int s = socket(AF_UNIX, type | SOCK_NONBLOCK, 0);
    if (s < 0) continue;
    if (connect(s, (struct sockaddr *)&sa, salen) && errno == ECONNREFUSED) { /* the socket is gone */
      close(s);
      usleep(1000);
      continue;
    }
    close(s);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: flood NAME TYPE THREADS\n");
    return 2;
  }
  pid_t parent = getppid();
  size_t l = strlen(argv[1]);
  if (l + 1 > sizeof sa.sun_path) return 2;
  memcpy(sa.sun_path + 1, argv[1], l);
  salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
  type = atoi(argv[2]) == 5 ? SOCK_SEQPACKET : SOCK_STREAM;
  for (int i = 0; i < atoi(argv[3]); i++) {
    pthread_t t;
    pthread_create(&t, NULL, loop, NULL);
  }
  while (getppid() == parent) usleep(100000);
  return 0;
}
