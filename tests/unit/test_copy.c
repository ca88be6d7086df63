/* Unit tests of shoal_copy_stream (runtime/rma.c), the non-temporal copy of fcollect's and alltoall's large blocks:
 * every byte lands and nothing outside [dest, dest + n) is touched, for destination and source offsets 0..31 (the
 * stores need 16-byte alignment: an unaligned head and tail go through memcpy) and lengths around the 64-byte loop's
 * edges, up to 2 MiB. */
#include "shoal.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

static void check_copy(size_t n, size_t doff, size_t soff) {
  unsigned char *src = malloc(n + soff + GUARD), *dst = malloc(n + doff + 2 * GUARD);
  ck_assert_ptr_nonnull(src);
  ck_assert_ptr_nonnull(dst);
  for (size_t i = 0; i < n + soff + GUARD; i++) src[i] = (unsigned char)(i * 131 + 7);
  memset(dst, 0xee, n + doff + 2 * GUARD);
  shoal_copy_stream(dst + GUARD + doff, src + soff, n);
  for (size_t i = 0; i < GUARD + doff; i++)
    ck_assert_msg(dst[i] == 0xee, "n %zu doff %zu soff %zu: byte %zu before dest written", n, doff, soff, i);
  for (size_t i = 0; i < n; i++)
    if (dst[GUARD + doff + i] != src[soff + i])
      ck_abort_msg("n %zu doff %zu soff %zu: byte %zu is %u, expected %u", n, doff, soff, i, dst[GUARD + doff + i],
                   src[soff + i]);
  for (size_t i = GUARD + doff + n; i < n + doff + 2 * GUARD; i++)
    ck_assert_msg(dst[i] == 0xee, "n %zu doff %zu soff %zu: byte %zu after dest written", n, doff, soff, i - GUARD - doff - n);
  free(src);
  free(dst);
}

START_TEST(small_and_edges) {
  static const size_t lens[] = {0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 1000, 4096, 4097};
  for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
    for (size_t d = 0; d < 32; d++)
      for (size_t s = 0; s < 32; s += 3) check_copy(lens[l], d, s);
}
END_TEST

START_TEST(large) {
  check_copy((size_t)2 << 20, 0, 0);
  check_copy(((size_t)2 << 20) + 13, 5, 11);
  check_copy(((size_t)1 << 20) - 1, 16, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("copy");
  TCase *tc = tcase_create("stream");
  tcase_add_test(tc, small_and_edges);
  tcase_add_test(tc, large);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
