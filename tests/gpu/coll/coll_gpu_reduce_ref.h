/*
 * coll_gpu_reduce_ref.h - inputs, host reference and comparison for the GPU reduction tests (harness, CPU emulation,
 * runtime test), reproducible from (seed, pe, index) as coll_gpu_testdata.h's:
 *   k = splitmix64(seed ^ (p << 40) ^ i) % 255 - 127
 * integers: k (its bits in the type); fp32/fp64/fp16/bf16 sum, min, max: k / 2 (exact in every type); prod: one of
 * 0.5, 1, 2, -1, -0.5, -2, 1.5 picked by k (products of a few PEs stay in range); complex: (k / 2, k' / 2) for sum and
 * (m, m') from that set for prod, with k' from index i + 2^39.
 * Reference: in PE order 0 .. W-1 as the kernels, integers in 64-bit unsigned arithmetic truncated to the type (min and
 * max compare as the type: signed or unsigned), fp32 / fp16 / bf16 accumulated in float and rounded once (fp16 / bf16),
 * fp64 in double, complex componentwise with the usual product.
 * Tolerances (red_close): integers exact; fp32, fp64, complex: relative 1e-5 x W (of max(|ref|, 1)); fp16: one ulp
 * (2^-10 of |ref|, at least 2^-24); bf16: one ulp (2^-7 of |ref|). Infinities must match exactly.
 */
#ifndef SHOAL_COLL_GPU_REDUCE_REF_H
#define SHOAL_COLL_GPU_REDUCE_REF_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef SHOAL_COLL_GPU_REDUCE_CUH /* the device helpers only (units that launch include it before this) */
#define SHOAL_COLL_GPU_REDUCE_NO_PICK
#endif
#include <shoal/detail/coll_gpu_reduce.cuh>
#include "coll_gpu_reduce.h"
#include "coll_gpu_testdata.h"

static inline bool red_is_signed(int t) { return t <= SHOAL_RT_U64 && !(t & 1); }
static inline bool red_is_int(int t) { return t <= SHOAL_RT_U64; }

static inline int red_k(uint64_t seed, int pe, uint64_t i) {
  return (int)(coll_splitmix64(seed ^ ((uint64_t)pe << 40) ^ i) % 255) - 127;
}
static inline double red_pval(int k) {
  static const double v[7] = {0.5, 1, 2, -1, -0.5, -2, 1.5};
  return v[(k + 127) % 7];
}

/* Element i of PE pe's source for (type, op), as double pair (re, im) or as 64-bit integer bits. */
static inline void red_value(int t, int op, uint64_t seed, int pe, uint64_t i, double *re, double *im, uint64_t *bits) {
  const int k = red_k(seed, pe, i), k2 = red_k(seed, pe, i + ((uint64_t)1 << 39));
  *bits = (uint64_t)(int64_t)k;
  *re = op == SHOAL_RED_PROD ? red_pval(k) : k * 0.5;
  *im = op == SHOAL_RED_PROD ? red_pval(k2) : k2 * 0.5;
  (void)t;
}

/* Store one element of type t from (re, im, bits) at out. */
static inline void red_store(int t, double re, double im, uint64_t bits, void *out) {
  switch (t) {
  case SHOAL_RT_F32: { float f = (float)re; memcpy(out, &f, 4); break; }
  case SHOAL_RT_F64: memcpy(out, &re, 8); break;
  case SHOAL_RT_F16: { uint16_t h = shoal_cr::f2h((float)re); memcpy(out, &h, 2); break; }
  case SHOAL_RT_BF16: { uint16_t h = shoal_cr::f2bf((float)re); memcpy(out, &h, 2); break; }
  case SHOAL_RT_CF32: { float f[2] = {(float)re, (float)im}; memcpy(out, f, 8); break; }
  case SHOAL_RT_CF64: { double d[2] = {re, im}; memcpy(out, d, 16); break; }
  default: memcpy(out, &bits, shoal_red_type_size(t)); break; /* little endian: the low bytes */
  }
}

/* Fill count elements of PE pe's source (indices first ..). */
static inline void red_fill(int t, int op, uint64_t seed, int pe, uint64_t first, uint64_t count, void *out) {
  const size_t es = shoal_red_type_size(t);
  for (uint64_t j = 0; j < count; j++) {
    double re, im;
    uint64_t bits;
    red_value(t, op, seed, pe, first + j, &re, &im, &bits);
    red_store(t, re, im, bits, (char *)out + j * es);
  }
}

/* Integer element of type t as int64 (sign- or zero-extended) from bits. */
static inline int64_t red_ext(int t, uint64_t b) {
  const int sh = 64 - 8 * (int)shoal_red_type_size(t);
  return red_is_signed(t) ? ((int64_t)(b << sh)) >> sh : (int64_t)((b << sh) >> sh);
}

/* The expected result of elements [0, n) over W PEs into out. */
static inline void red_reference(int t, int op, int W, uint64_t seed, size_t n, void *out) {
  const size_t es = shoal_red_type_size(t);
  for (size_t i = 0; i < n; i++) {
    double re, im;
    uint64_t b;
    if (red_is_int(t)) {
      uint64_t acc = 0;
      for (int p = 0; p < W; p++) {
        red_value(t, op, seed, p, i, &re, &im, &b);
        const int64_t x = red_ext(t, b);
        if (!p) { acc = (uint64_t)x; continue; }
        const int64_t a = red_ext(t, acc);
        switch (op) {
        case SHOAL_RED_SUM: acc += (uint64_t)x; break;
        case SHOAL_RED_PROD: acc *= (uint64_t)x; break;
        case SHOAL_RED_MIN: acc = red_is_signed(t) ? (uint64_t)(x < a ? x : a) : ((uint64_t)x < (uint64_t)a ? x : a); break;
        case SHOAL_RED_MAX: acc = red_is_signed(t) ? (uint64_t)(x > a ? x : a) : ((uint64_t)x > (uint64_t)a ? x : a); break;
        case SHOAL_RED_AND: acc &= (uint64_t)x; break;
        case SHOAL_RED_OR: acc |= (uint64_t)x; break;
        default: acc ^= (uint64_t)x; break;
        }
      }
      red_store(t, 0, 0, acc, (char *)out + i * es);
      continue;
    }
    if (t == SHOAL_RT_F64 || t == SHOAL_RT_CF64) {
      double ar = 0, ai = 0;
      for (int p = 0; p < W; p++) {
        red_value(t, op, seed, p, i, &re, &im, &b);
        if (t == SHOAL_RT_F64) im = 0;
        if (!p) { ar = re, ai = im; continue; }
        if (op == SHOAL_RED_SUM) ar += re, ai += im;
        else if (op == SHOAL_RED_PROD) { const double r = ar * re - ai * im; ai = ar * im + ai * re; ar = r; }
        else if (op == SHOAL_RED_MIN) ar = re < ar ? re : ar;
        else ar = re > ar ? re : ar;
      }
      red_store(t, ar, ai, 0, (char *)out + i * es);
      continue;
    }
    float ar = 0, ai = 0; /* fp32, fp16, bf16 (float accumulator), complex float */
    for (int p = 0; p < W; p++) {
      red_value(t, op, seed, p, i, &re, &im, &b);
      const float r = (float)re, m = t == SHOAL_RT_CF32 ? (float)im : 0.f;
      if (!p) { ar = r, ai = m; continue; }
      if (op == SHOAL_RED_SUM) ar += r, ai += m;
      else if (op == SHOAL_RED_PROD) { const float x = ar * r - ai * m; ai = ar * m + ai * r; ar = x; }
      else if (op == SHOAL_RED_MIN) ar = r < ar ? r : ar;
      else ar = r > ar ? r : ar;
    }
    red_store(t, ar, ai, 0, (char *)out + i * es);
  }
}

/* Element of type t at p as (re, im) doubles (integers: their value). */
static inline void red_load(int t, const void *p, double *re, double *im) {
  *im = 0;
  switch (t) {
  case SHOAL_RT_F32: { float f; memcpy(&f, p, 4); *re = f; break; }
  case SHOAL_RT_F64: memcpy(re, p, 8); break;
  case SHOAL_RT_F16: { uint16_t h; memcpy(&h, p, 2); *re = shoal_cr::h2f(h); break; }
  case SHOAL_RT_BF16: { uint16_t h; memcpy(&h, p, 2); *re = shoal_cr::bf2f(h); break; }
  case SHOAL_RT_CF32: { float f[2]; memcpy(f, p, 8); *re = f[0], *im = f[1]; break; }
  case SHOAL_RT_CF64: { double d[2]; memcpy(d, p, 16); *re = d[0], *im = d[1]; break; }
  default: { uint64_t b = 0; memcpy(&b, p, shoal_red_type_size(t)); *re = (double)red_ext(t, b); break; }
  }
}

/* Whether got is within the stated tolerance of ref (header comment). */
static inline bool red_close(int t, int W, const void *ref, const void *got) {
  const size_t es = shoal_red_type_size(t);
  if (red_is_int(t)) return !memcmp(ref, got, es);
  double rr, ri, gr, gi;
  red_load(t, ref, &rr, &ri);
  red_load(t, got, &gr, &gi);
  if (isinf(rr) || isinf(gr) || isinf(ri) || isinf(gi)) return rr == gr && ri == gi;
  const double mag = fmax(fmax(fabs(rr), fabs(ri)), 1.0);
  double tol = 1e-5 * W * mag;
  if (t == SHOAL_RT_F16) tol = fmax(fabs(rr) * 0x1p-10, 0x1p-24);
  if (t == SHOAL_RT_BF16) tol = fabs(rr) * 0x1p-7;
  return fabs(gr - rr) <= tol && fabs(gi - ri) <= tol;
}

/* Compare n elements; returns the number outside tolerance, the first few printed with label. */
static inline size_t red_compare(int t, int W, const void *ref, const void *got, size_t n, const char *label, int pe) {
  const size_t es = shoal_red_type_size(t);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (!red_close(t, W, (const char *)ref + i * es, (const char *)got + i * es) && bad++ < 3) {
      double rr, ri, gr, gi;
      red_load(t, (const char *)ref + i * es, &rr, &ri);
      red_load(t, (const char *)got + i * es, &gr, &gi);
      fprintf(stderr, "  MISMATCH %s: PE %d element %zu of %zu: expected %.9g%+.9gi got %.9g%+.9gi\n", label, pe, i, n,
              rr, ri, gr, gi);
    }
  return bad;
}
#endif
