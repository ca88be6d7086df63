/* sigthief.c - LD_PRELOAD'ed into oshrun by the 'oshrun-sigthief' test: before main, start a thread that does not
 * block SIGCHLD and sleeps (as a GPU runtime's threads do when a library initializes it). The kernel may then
 * deliver SIGCHLD to that thread, where its default action discards it: oshrun must still see its PEs exit. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static void *sleeper(void *arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

__attribute__((constructor)) static void start(void) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGCHLD);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  pthread_t t;
  if (!pthread_create(&t, NULL, sleeper, NULL)) pthread_detach(t);
}
