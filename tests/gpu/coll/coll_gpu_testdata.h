/*
 * coll_gpu_testdata.h - inputs of the GPU collective tests, reproducible from (seed, pe, index) so that the C++ tests
 * and tests/gpu/coll/gloo_compare.py build the same data: element i of PE p's source is
 *   k = splitmix64(seed ^ (p << 40) ^ i) % 255 - 127            (an integer in [-127, 127])
 * stored as int8 k, or as the float k / 2 in fp32, fp16 or bf16 (exact in all three).
 * For alltoall the source of PE p has npes blocks of n elements: index i runs over all npes * n elements.
 */
#ifndef SHOAL_COLL_GPU_TESTDATA_H
#define SHOAL_COLL_GPU_TESTDATA_H
#include <stdint.h>
#include <string.h>

typedef struct coll_type {
  const char *name;
  unsigned size; /* bytes per element */
} coll_type_t;
static const coll_type_t coll_types[] = {{"fp32", 4}, {"fp16", 2}, {"bf16", 2}, {"int8", 1}};
enum { COLL_FP32 = 0, COLL_FP16, COLL_BF16, COLL_INT8, COLL_NTYPES };

static inline uint64_t coll_splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* fp32 bits of k / 2 as fp16 / bf16 bits; exact for |k| <= 255 (no rounding needed). */
static inline uint16_t coll_f32_to_f16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
  if ((b & 0x7fffffff) == 0) return sign;
  int e = (int)((b >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(sign | (uint16_t)(e << 10) | (uint16_t)((b >> 13) & 0x3ff));
}
static inline uint16_t coll_f32_to_bf16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return (uint16_t)(b >> 16);
}

/* Fill out[0 .. count) (elements of type t) with PE pe's values for indices first .. first + count. */
static inline void coll_fill(int t, uint64_t seed, int pe, uint64_t first, uint64_t count, void *out) {
  for (uint64_t j = 0; j < count; j++) {
    const int k = (int)(coll_splitmix64(seed ^ ((uint64_t)pe << 40) ^ (first + j)) % 255) - 127;
    const float f = (float)k * 0.5f;
    switch (t) {
    case COLL_FP32: memcpy((char *)out + 4 * j, &f, 4); break;
    case COLL_FP16: { uint16_t h = coll_f32_to_f16(f); memcpy((char *)out + 2 * j, &h, 2); break; }
    case COLL_BF16: { uint16_t h = coll_f32_to_bf16(f); memcpy((char *)out + 2 * j, &h, 2); break; }
    default: ((int8_t *)out)[j] = (int8_t)k; break;
    }
  }
}
#endif
