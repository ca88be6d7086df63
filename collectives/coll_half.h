/* coll_half.h - IEEE binary16 and bfloat16 <-> float on the host, for the host operators of shmemx_half_* /
 * shmemx_bfloat16_* (coll_stream.c) and the GPU reductions on teams with members on other nodes (gpu/coll_gpu_far.c).
 * Round to nearest even, as the kernels' conversions (include/shoal/detail/coll_gpu_reduce.cuh). */
#ifndef SHOAL_COLL_HALF_H
#define SHOAL_COLL_HALF_H
#include <stdint.h>
#include <string.h>

static inline float h2f(uint16_t h) {
  const uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (!e) return (s ? -1.f : 1.f) * (float)m * 5.9604644775390625e-8f;
  uint32_t u = s | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13));
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t s = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000u) return (uint16_t)(s | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
  if (x >= 0x477ff000u) return (uint16_t)(s | 0x7c00);
  if (x < 0x38800000u) {
    float a, t;
    memcpy(&a, &x, 4);
    t = a + 0.5f;
    uint32_t u;
    memcpy(&u, &t, 4);
    return (uint16_t)(s | (u - 0x3f000000u));
  }
  x += 0xc8000fffu + ((x >> 13) & 1);
  return (uint16_t)(s | (x >> 13));
}
static inline float bf2f(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

#endif
