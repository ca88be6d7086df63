/* test_common.h - helpers shared by the multi-PE test programs: value checks that count failures (the first few are
 * printed with the PE), a deterministic value pattern, and the exit protocol (every PE finalizes, then exits 1 if any of
 * its checks failed, so oshrun exits non-zero). */
#ifndef SHOAL_TEST_COMMON_H
#define SHOAL_TEST_COMMON_H
#include <shmem.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xa5

static long test_checks, test_fails;
static const char *test_name = "test";

#define CHECK(cond, ...)                                                                                              \
  do {                                                                                                                 \
    test_checks++;                                                                                                     \
    if (!(cond)) {                                                                                                     \
      if (test_fails++ < 10) {                                                                                         \
        char msg_[512];                                                                                                \
        int n_ = snprintf(msg_, sizeof msg_, "%s: PE %d: %s:%d: check failed: ", test_name, shmem_my_pe(), __FILE__,  \
                          __LINE__);                                                                                   \
        snprintf(msg_ + n_, sizeof msg_ - (size_t)n_, __VA_ARGS__);                                                    \
        fprintf(stderr, "%s\n", msg_); /* one line, one write: lines of several PEs do not mix */                     \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* 64 well-mixed bits for (pe, index, salt): every byte of a wide type differs between PEs and indices. */
static inline uint64_t test_pat(int pe, size_t i, unsigned salt) {
  uint64_t x = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)(salt + 1) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  return x ^ (x >> 29);
}
static inline uint8_t test_pat_byte(int pe, size_t b, unsigned salt) {
  return (uint8_t)(test_pat(pe, b / 8, salt) >> (b % 8 * 8));
}

static inline int all_poison(const void *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (((const unsigned char *)p)[i] != POISON) return 0;
  return 1;
}

/* Collective: finalize and return the exit status (1 when a check of this PE failed). */
static inline int test_finish(void) {
  int me = shmem_my_pe();
  shmem_finalize();
  if (test_fails) fprintf(stderr, "%s: PE %d: %ld of %ld checks FAILED\n", test_name, me, test_fails, test_checks);
  else if (me == 0) printf("%s: PE 0: %ld checks passed\n", test_name, test_checks);
  return test_fails ? 1 : 0;
}
#endif
