#include "fp4sim/metrics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace fp4sim {

namespace {

// Neumaier compensated sum.
struct Sum {
  double s = 0, c = 0;
  void add(double v) {
    const double t = s + v;
    c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

Quality compute(std::span<const float> x, std::span<const float> dq, const Quantized* q) {
  if (x.size() != dq.size()) throw std::invalid_argument("quality: x and dq differ in size");
  if (q != nullptr && q->codes.size() != x.size()) throw std::invalid_argument("quality: x and codes differ in size");
  uint32_t max_code = 0, mag_mask = 0;
  if (q != nullptr) {
    const ElemFormat& ef = *info(q->format).elem;
    max_code = ef.max_code();
    mag_mask = ef.mag_mask();
  }
  Quality r;
  Sum sx2, se2, se;
  size_t nonzero = 0, zeroed = 0, saturated = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      ++r.n_nonfinite_x;
      continue;
    }
    if (!std::isfinite(dq[i])) {
      ++r.n_nonfinite_dq;
      continue;
    }
    const double xv = x[i], dv = dq[i], e = dv - xv;
    ++r.n;
    sx2.add(xv * xv);
    se2.add(e * e);
    se.add(e);
    if (xv != 0) {
      ++nonzero;
      if (dv == 0) ++zeroed;
    }
    if (q != nullptr && (q->codes[i] & mag_mask) == max_code && std::fabs(xv) > std::fabs(dv)) ++saturated;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (r.n == 0) {
    r.mse = r.bias = r.qsnr_db = nan;
  } else {
    const double n = static_cast<double>(r.n);
    r.mse = se2.value() / n;
    r.bias = se.value() / n;
    r.qsnr_db = se2.value() == 0 ? std::numeric_limits<double>::infinity()
                                 : 10.0 * std::log10(sx2.value() / se2.value());
  }
  r.frac_zero = nonzero == 0 ? 0.0 : static_cast<double>(zeroed) / static_cast<double>(nonzero);
  if (q == nullptr) {
    r.frac_saturated = nan;
  } else {
    r.frac_saturated = r.n == 0 ? 0.0 : static_cast<double>(saturated) / static_cast<double>(r.n);
  }
  return r;
}

}  // namespace

Quality quality(std::span<const float> x, std::span<const float> dq, const Quantized& q) { return compute(x, dq, &q); }

Quality quality(std::span<const float> x, std::span<const float> dq) { return compute(x, dq, nullptr); }

}  // namespace fp4sim
