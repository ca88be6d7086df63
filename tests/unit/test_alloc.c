/* Unit tests of runtime/alloc.c, the symmetric heap's allocator: first fit, alignment, coalescing on free, resize in
 * place, exhaustion, bad frees, determinism, and a long randomized sequence checked against a byte-map model.
 *
 * The model: first fit over maximal free runs equals "the lowest aligned offset s such that [s, s + size) is free",
 * growing in place succeeds exactly when the bytes after the block are free, shrinking always succeeds. */
#include "shoal.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POISON ((size_t)0xa5a5a5a5a5a5a5a5ull)

static size_t alloc_ok(shoal_alloc_t *a, size_t size, size_t align) {
  size_t off = POISON;
  ck_assert_msg(shoal_alloc_alloc(a, size, align, &off) == SHOAL_OK, "alloc(%zu, %zu) failed", size, align);
  ck_assert(off != POISON);
  return off;
}
static void alloc_fails(shoal_alloc_t *a, size_t size, size_t align, shoal_status_t want) {
  size_t off = POISON;
  ck_assert_int_eq(shoal_alloc_alloc(a, size, align, &off), want);
  ck_assert_msg(off == POISON, "alloc(%zu, %zu): output written on failure", size, align);
}

START_TEST(first_fit) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 1000), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 1000);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 1000);
  ck_assert_uint_eq(alloc_ok(&a, 100, 1), 0);
  ck_assert_uint_eq(alloc_ok(&a, 50, 1), 100);
  ck_assert_uint_eq(alloc_ok(&a, 200, 1), 150);
  ck_assert_uint_eq(alloc_ok(&a, 10, 1), 350);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 1000 - 360);
  /* Hole of 50 at 100: a 40-byte block goes there (first fit), a 60-byte one after 360. */
  ck_assert_int_eq(shoal_alloc_free(&a, 100), SHOAL_OK);
  ck_assert_uint_eq(alloc_ok(&a, 60, 1), 360);
  ck_assert_uint_eq(alloc_ok(&a, 40, 1), 100);
  ck_assert_uint_eq(alloc_ok(&a, 10, 1), 140); /* the rest of the hole */
  ck_assert_uint_eq(alloc_ok(&a, 1, 1), 420);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, 100), 40);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, 140), 10);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, 141), 0); /* inside a block: not a block start */
  ck_assert_uint_eq(shoal_alloc_size_of(&a, 999), 0);
  shoal_alloc_fini(&a);
}
END_TEST

START_TEST(alignment) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 1 << 20), SHOAL_OK);
  ck_assert_uint_eq(alloc_ok(&a, 3, 1), 0);
  for (size_t al = 1; al <= 65536; al <<= 1) {
    size_t off = alloc_ok(&a, 5, al);
    ck_assert_msg(off % al == 0, "alloc with alignment %zu at offset %zu", al, off);
    ck_assert_uint_eq(shoal_alloc_size_of(&a, off), 5);
  }
  /* The padding in front of an aligned block stays usable. */
  shoal_alloc_t b;
  ck_assert_int_eq(shoal_alloc_init(&b, 4096), SHOAL_OK);
  ck_assert_uint_eq(alloc_ok(&b, 1, 1), 0);
  ck_assert_uint_eq(alloc_ok(&b, 64, 1024), 1024);
  ck_assert_uint_eq(alloc_ok(&b, 1023, 1), 1);
  ck_assert_uint_eq(alloc_ok(&b, 10, 1), 1088);
  alloc_fails(&b, 8, 8192, SHOAL_ERR_NOMEM); /* only offset 0 has that alignment, and it is used */
  ck_assert_uint_eq(alloc_ok(&b, 8, 8), 1104);
  shoal_alloc_fini(&b);
  /* Bad arguments. */
  alloc_fails(&a, 8, 0, SHOAL_ERR_INVAL);
  alloc_fails(&a, 8, 3, SHOAL_ERR_INVAL);
  alloc_fails(&a, 8, 48, SHOAL_ERR_INVAL);
  alloc_fails(&a, 0, 8, SHOAL_ERR_INVAL);
  alloc_fails(&a, 8, (size_t)1 << 63, SHOAL_ERR_NOMEM); /* no offset but 0 is that aligned, and 0 is used */
  shoal_alloc_fini(&a);
}
END_TEST

START_TEST(coalescing) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 400), SHOAL_OK);
  size_t o[4];
  for (int i = 0; i < 4; i++) o[i] = alloc_ok(&a, 100, 1);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 0);
  alloc_fails(&a, 1, 1, SHOAL_ERR_NOMEM);
  /* Free 1 and 3 (not adjacent), then 2: 1..3 merge into one 300-byte block. */
  ck_assert_int_eq(shoal_alloc_free(&a, o[1]), SHOAL_OK);
  ck_assert_int_eq(shoal_alloc_free(&a, o[3]), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 100);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 200);
  alloc_fails(&a, 150, 1, SHOAL_ERR_NOMEM);
  ck_assert_int_eq(shoal_alloc_free(&a, o[2]), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 300);
  ck_assert_uint_eq(alloc_ok(&a, 300, 1), 100);
  ck_assert_int_eq(shoal_alloc_free(&a, 100), SHOAL_OK);
  /* Free 0 merges with the following free block: the whole heap is one block again. */
  ck_assert_int_eq(shoal_alloc_free(&a, o[0]), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 400);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 400);
  ck_assert_uint_eq(alloc_ok(&a, 400, 1), 0);
  shoal_alloc_fini(&a);
}
END_TEST

START_TEST(bad_free) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 1024), SHOAL_OK);
  size_t x = alloc_ok(&a, 100, 1), y = alloc_ok(&a, 100, 1);
  ck_assert_int_eq(shoal_alloc_free(&a, x + 1), SHOAL_ERR_INVAL); /* inside a block */
  ck_assert_int_eq(shoal_alloc_free(&a, 500), SHOAL_ERR_INVAL);   /* in free space */
  ck_assert_int_eq(shoal_alloc_free(&a, 5000), SHOAL_ERR_INVAL);  /* past the end */
  ck_assert_int_eq(shoal_alloc_free(&a, x), SHOAL_OK);
  ck_assert_int_eq(shoal_alloc_free(&a, x), SHOAL_ERR_INVAL);     /* double free */
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 924);             /* ... changed nothing */
  ck_assert_uint_eq(shoal_alloc_size_of(&a, y), 100);
  ck_assert_int_eq(shoal_alloc_free(&a, y), SHOAL_OK);
  ck_assert_int_eq(shoal_alloc_free(&a, y), SHOAL_ERR_INVAL);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 1024);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 1024);
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 10), SHOAL_ERR_INVAL); /* resize of a freed block */
  shoal_alloc_fini(&a);
}
END_TEST

START_TEST(resize) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 1000), SHOAL_OK);
  size_t x = alloc_ok(&a, 100, 1);
  /* Grow into the free tail, in place. */
  ck_assert_int_eq(shoal_alloc_resize(&a, x, 300), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, x), 300);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 700);
  size_t y = alloc_ok(&a, 100, 1);
  ck_assert_uint_eq(y, 300);
  /* Blocked by y: fails and leaves x as it was. */
  ck_assert_int_eq(shoal_alloc_resize(&a, x, 301), SHOAL_ERR_NOMEM);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, x), 300);
  /* Shrink with a used neighbour: a new free block appears and is reusable. */
  ck_assert_int_eq(shoal_alloc_resize(&a, x, 250), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_size_of(&a, x), 250);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 650);
  ck_assert_uint_eq(alloc_ok(&a, 50, 1), 250);
  ck_assert_int_eq(shoal_alloc_free(&a, 250), SHOAL_OK);
  /* Grow back into that hole exactly (the free block disappears). */
  ck_assert_int_eq(shoal_alloc_resize(&a, x, 300), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 600);
  /* Shrink y with a free neighbour: the neighbour grows down. */
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 1), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_largest_free(&a), 699);
  ck_assert_uint_eq(alloc_ok(&a, 699, 1), 301);
  ck_assert_int_eq(shoal_alloc_free(&a, 301), SHOAL_OK);
  /* Same size: no change. Grow to the last byte: fine; one more: no. */
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 1), SHOAL_OK);
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 700), SHOAL_OK);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 0);
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 701), SHOAL_ERR_NOMEM);
  /* Bad arguments. */
  ck_assert_int_eq(shoal_alloc_resize(&a, y, 0), SHOAL_ERR_INVAL);
  ck_assert_int_eq(shoal_alloc_resize(&a, y + 1, 5), SHOAL_ERR_INVAL);
  shoal_alloc_fini(&a);
}
END_TEST

START_TEST(exhaustion) {
  shoal_alloc_t a;
  ck_assert_int_eq(shoal_alloc_init(&a, 4096), SHOAL_OK);
  alloc_fails(&a, 4097, 1, SHOAL_ERR_NOMEM);
  alloc_fails(&a, SIZE_MAX, 1, SHOAL_ERR_NOMEM);
  ck_assert_uint_eq(alloc_ok(&a, 4096, 1), 0);
  alloc_fails(&a, 1, 1, SHOAL_ERR_NOMEM);
  ck_assert_int_eq(shoal_alloc_free(&a, 0), SHOAL_OK);
  /* Fill with 64-byte blocks at 64-byte alignment: exactly 64 of them. */
  for (size_t i = 0; i < 64; i++) ck_assert_uint_eq(alloc_ok(&a, 64, 64), i * 64);
  alloc_fails(&a, 1, 1, SHOAL_ERR_NOMEM);
  ck_assert_uint_eq(shoal_alloc_free_bytes(&a), 0);
  shoal_alloc_fini(&a);
}
END_TEST

/* ---- randomized sequence against the byte-map model ---- */
#define HEAP 8192
#define SLOTS 64
/* ck_assert records a mark point per call (a write to a pipe): too slow for a hot loop. */
#define REQUIRE(cond, ...)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);                                                                            \
  } while (0)

typedef struct {
  unsigned char busy[HEAP];
} model_t;

static bool model_free_range(const model_t *m, size_t off, size_t n) {
  if (off > HEAP || n > HEAP - off) return false;
  for (size_t i = off; i < off + n; i++)
    if (m->busy[i]) return false;
  return true;
}
static bool model_alloc(const model_t *m, size_t size, size_t align, size_t *off) {
  for (size_t s = 0; s + size <= HEAP;) {
    size_t i = s;
    while (i < s + size && !m->busy[i]) i++;
    if (i == s + size) return *off = s, true;
    s = (i + align) / align * align; /* the next aligned start after the busy byte */
  }
  return false;
}
static void model_check(const model_t *m, const shoal_alloc_t *a) {
  size_t free_bytes = 0, largest = 0, run = 0;
  for (size_t i = 0; i < HEAP; i++) {
    free_bytes += !m->busy[i];
    run = m->busy[i] ? 0 : run + 1;
    if (run > largest) largest = run;
  }
  REQUIRE(shoal_alloc_free_bytes(a) == free_bytes, "free bytes %zu, model %zu", shoal_alloc_free_bytes(a), free_bytes);
  REQUIRE(shoal_alloc_largest_free(a) == largest, "largest free %zu, model %zu", shoal_alloc_largest_free(a), largest);
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64*: the same sequence on every platform */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

/* Runs a random sequence; fills trace with the offsets returned (for the determinism check). */
static size_t run_random(uint64_t seed, int steps, size_t *trace) {
  shoal_alloc_t a;
  model_t m;
  memset(&m, 0, sizeof m);
  ck_assert_int_eq(shoal_alloc_init(&a, HEAP), SHOAL_OK);
  size_t off[SLOTS], size[SLOTS], nt = 0;
  bool live[SLOTS] = {false};
  for (int step = 0; step < steps; step++) {
    int k = (int)(rng_next(&seed) % SLOTS), op = (int)(rng_next(&seed) % 10);
    if (!live[k]) { /* allocate */
      size_t sz = 1 + rng_next(&seed) % (op < 8 ? 300 : 3000), al = (size_t)1 << (rng_next(&seed) % 9), o = POISON;
      size_t want;
      bool fits = model_alloc(&m, sz, al, &want);
      shoal_status_t st = shoal_alloc_alloc(&a, sz, al, &o);
      REQUIRE(fits ? st == SHOAL_OK && o == want : st == SHOAL_ERR_NOMEM && o == POISON,
                    "step %d: alloc(%zu, %zu) -> %d at %zu, model says %s %zu", step, sz, al, st, o,
                    fits ? "at" : "no room", fits ? want : 0);
      if (fits) {
        memset(m.busy + o, 1, sz);
        off[k] = o;
        size[k] = sz;
        live[k] = true;
      }
      trace[nt++] = st == SHOAL_OK ? o : SIZE_MAX;
    } else if (op < 6) { /* free, sometimes twice */
      REQUIRE(shoal_alloc_free(&a, off[k]) == SHOAL_OK, "step %d: free(%zu) failed", step, off[k]);
      memset(m.busy + off[k], 0, size[k]);
      live[k] = false;
      if (op == 0) REQUIRE(shoal_alloc_free(&a, off[k]) == SHOAL_ERR_INVAL, "step %d: double free accepted", step);
    } else { /* resize */
      size_t nsz = 1 + rng_next(&seed) % 600;
      bool ok = nsz <= size[k] || model_free_range(&m, off[k] + size[k], nsz - size[k]);
      shoal_status_t st = shoal_alloc_resize(&a, off[k], nsz);
      REQUIRE(ok ? st == SHOAL_OK : st == SHOAL_ERR_NOMEM, "step %d: resize(%zu: %zu -> %zu) -> %d", step,
                    off[k], size[k], nsz, st);
      if (ok) {
        memset(m.busy + off[k], 0, size[k]);
        memset(m.busy + off[k], 1, nsz);
        size[k] = nsz;
      }
      trace[nt++] = ok ? nsz : SIZE_MAX;
    }
    model_check(&m, &a);
    for (int j = 0; j < SLOTS; j++)
      if (live[j]) REQUIRE(shoal_alloc_size_of(&a, off[j]) == size[j], "step %d: size_of(%zu)", step, off[j]);
  }
  shoal_alloc_fini(&a);
  return nt;
}

START_TEST(random_vs_model) {
  enum { STEPS = 4000 };
  static size_t t1[STEPS], t2[STEPS];
  for (uint64_t seed = 1; seed <= 8; seed++) {
    size_t n1 = run_random(seed * 0x9E3779B97F4A7C15ull, STEPS, t1);
    size_t n2 = run_random(seed * 0x9E3779B97F4A7C15ull, STEPS, t2); /* determinism: same calls, same offsets */
    ck_assert_uint_eq(n1, n2);
    ck_assert(!memcmp(t1, t2, n1 * sizeof *t1));
  }
}
END_TEST

static Suite *alloc_suite(void) {
  Suite *s = suite_create("alloc");
  TCase *t = tcase_create("core");
  tcase_add_test(t, first_fit);
  tcase_add_test(t, alignment);
  tcase_add_test(t, coalescing);
  tcase_add_test(t, bad_free);
  tcase_add_test(t, resize);
  tcase_add_test(t, exhaustion);
  tcase_add_test(t, random_vs_model);
  tcase_set_timeout(t, 60);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(alloc_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
