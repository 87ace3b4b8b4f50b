/* The C model of dot32_e2m1 (dot32_e2m1_model.h), written from SPEC section 4 as the SV unit is:
 * the 32 products and C aligned to the largest exponent, each truncated to 25 fractional bits below
 * it, summed exactly, the sum truncated (RZ) to FP32. */
#include "dot32_e2m1_model.h"

/* E2M1 magnitude bits as significand m and exponent e (value m * 2^(e - 1)); a zero takes the
 * exponent -126, as the SV unit's (and MMA-Sim's) decode gives it: it still takes part in the
 * alignment. */
static void e2m1(unsigned code, int* m, int* e) {
  if (code == 0) {
    *m = 0;
    *e = -126;
  } else if ((code >> 1) == 0) {
    *m = 1;
    *e = 0;
  } else {
    *m = 2 + (int)(code & 1u);
    *e = (int)(code >> 1) - 1;
  }
}

/* trunc(v * 2^s) of a magnitude. */
static uint64_t shift_mag(uint64_t v, int s) {
  if (s >= 64 || s <= -64) return 0; /* as SV's shifts by the width or more */
  return s >= 0 ? v << s : v >> -s;
}

uint32_t dot32_e2m1(const uint8_t a[32], const uint8_t b[32], uint8_t sa, uint8_t sb, uint32_t c, int plant_bug) {
  const unsigned cexp = (c >> 23) & 0xFFu;
  int ma[32], ea[32], mb[32], eb[32];
  int k, ec, es, max_e, lsb, top, er, sh;
  int64_t t;
  uint64_t mag, m;
  uint32_t bits;
  int neg;
  if (sa == 0xFF || sb == 0xFF || (cexp == 0xFF && (c & 0x7FFFFFu) != 0)) return 0x7FFFFFFFu;
  if (cexp == 0xFF) return c; /* +-Inf C: no E2M1 element is infinite, so D = C */
  ec = cexp == 0 ? -126 : (int)cexp - 127;
  es = (int)sa + (int)sb - 254;
  max_e = ec;
  for (k = 0; k < 32; ++k) {
    e2m1(a[k] & 7u, &ma[k], &ea[k]);
    e2m1(b[k] & 7u, &mb[k], &eb[k]);
    if (ea[k] + eb[k] + es > max_e) max_e = ea[k] + eb[k] + es;
  }
  lsb = max_e - 25;
  /* C = (hidden bit . 23 bits) * 2^(ec - 23), on the grid 2^lsb */
  mag = (uint64_t)((cexp != 0 ? 0x800000u : 0u) | (c & 0x7FFFFFu));
  mag = plant_bug ? shift_mag(mag, ec - 23 - lsb - 1) << 1 : shift_mag(mag, ec - 23 - lsb);
  t = (c >> 31) ? -(int64_t)mag : (int64_t)mag;
  for (k = 0; k < 32; ++k) {
    /* (ma * mb) * 2^(ea + eb + es - 2); |t| stays below 2^35 */
    const int64_t p = (int64_t)shift_mag((uint64_t)(ma[k] * mb[k]), ea[k] + eb[k] + es - 2 - lsb);
    t += ((a[k] ^ b[k]) & 8u) ? -p : p;
  }
  if (t == 0) return 0; /* an exact zero is +0 */
  neg = t < 0;
  mag = neg ? (uint64_t)(-t) : (uint64_t)t;
  top = 63;
  while (!((mag >> top) & 1u)) --top;
  er = top + lsb; /* the leading bit's exponent */
  if (er >= 128) return (neg ? 0x80000000u : 0u) | 0x7F800000u;
  if (er < -126) er = -126; /* subnormal: the smallest normal's exponent, no hidden bit */
  sh = er - 23 - lsb;
  m = shift_mag(mag, -sh); /* toward zero */
  if (m == 0) return 0;
  /* the hidden bit (bit 23 of m) adds the 1 that er + 126 lacks */
  bits = ((uint32_t)(er + 126) << 23) + (uint32_t)m;
  return (neg ? 0x80000000u : 0u) | (bits & 0x7FFFFFFFu);
}
