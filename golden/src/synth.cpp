#include "fp4sim/synth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "fp4sim/philox.hpp"

namespace fp4sim {

namespace {

constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // fdlibm ln2_hi: 32 significant bits, so e * hi is exact
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;  // fdlibm ln2_lo
constexpr double kSqrtHalf = 0x1.6a09e667f3bcdp-1;
constexpr double kPiOver2 = 0x1.921fb54442d18p+0;  // RN(pi/2)

// Series coefficients, folded at compile time with IEEE double arithmetic.
constexpr std::array<double, 12> log_coeffs() {  // 1/(2j+1), j = 0..11
  std::array<double, 12> c{};
  for (int j = 0; j < 12; ++j) c[static_cast<size_t>(j)] = 1.0 / (2 * j + 1);
  return c;
}
constexpr std::array<double, 10> sin_coeffs() {  // (-1)^j / (2j+1)!, j = 0..9
  std::array<double, 10> c{};
  double f = 1.0;
  for (int j = 0; j < 10; ++j) {
    if (j > 0) f *= static_cast<double>((2 * j) * (2 * j + 1));
    c[static_cast<size_t>(j)] = (j % 2 ? -1.0 : 1.0) / f;
  }
  return c;
}
constexpr std::array<double, 11> cos_coeffs() {  // (-1)^j / (2j)!, j = 0..10
  std::array<double, 11> c{};
  double f = 1.0;
  for (int j = 0; j < 11; ++j) {
    if (j > 0) f *= static_cast<double>((2 * j - 1) * (2 * j));
    c[static_cast<size_t>(j)] = (j % 2 ? -1.0 : 1.0) / f;
  }
  return c;
}
constexpr auto kLogC = log_coeffs();
constexpr auto kSinC = sin_coeffs();
constexpr auto kCosC = cos_coeffs();

template <size_t N>
double horner(const std::array<double, N>& c, double z) {
  double p = c[N - 1];
  for (size_t j = N - 1; j-- > 0;) p = p * z + c[j];
  return p;
}

// sin and cos of g * pi/2 for g in [0, 1/2].
void sincos_quarter(double g, double& s, double& c) {
  const double t = g * kPiOver2;
  const double z = t * t;
  s = t * horner(kSinC, z);
  c = horner(kCosC, z);
}

// Fills out[0..n) with fn(i); element-wise pure, so the split over threads cannot change a bit.
void parallel_fill(std::vector<float>& out, const std::function<float(size_t)>& fn) {
  const size_t n = out.size();
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  const size_t nt = std::min(hw, std::max<size_t>(1, n / 65536));
  auto run = [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) out[i] = fn(i);
  };
  if (nt <= 1) {
    run(0, n);
    return;
  }
  std::vector<std::thread> th;
  const size_t chunk = (n + nt - 1) / nt;
  for (size_t t = 0; t < nt; ++t) {
    const size_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) th.emplace_back(run, b, e);
  }
  for (auto& t : th) t.join();
}

// Bounded so that no product can leave the float range (|z| < 9, |t| < 1e9): a float cast of an
// out-of-range double would be undefined.
constexpr double kMaxScale = 1e20;

void check_scale(double v, const char* what) {
  if (!(v >= 0 && v <= kMaxScale)) throw std::invalid_argument(std::string("synth: bad ") + what);
}

}  // namespace

double synth_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // m in [1/2, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;
    --e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double lnm = 2.0 * s * horner(kLogC, s * s);
  const double de = static_cast<double>(e);
  return de * kLn2Hi + (de * kLn2Lo + lnm);
}

void synth_sincos_2pi(double u, double& s, double& c) {
  const double v = 4.0 * u;                     // exact
  const double qd = std::floor(v);
  const int q = static_cast<int>(qd) & 3;
  const double f = v - qd;                      // exact, in [0, 1)
  double sf, cf;                                // sin, cos of f * pi/2
  if (f <= 0.5) {
    sincos_quarter(f, sf, cf);
  } else {
    sincos_quarter(1.0 - f, cf, sf);            // 1 - f exact (Sterbenz); complementary angle
  }
  switch (q) {
    case 0: s = sf; c = cf; break;
    case 1: s = cf; c = -sf; break;
    case 2: s = -sf; c = -cf; break;
    default: s = -cf; c = sf; break;
  }
}

double standard_normal(uint64_t seed, uint32_t stream, uint64_t k) {
  const auto w = philox_block(seed, stream, k >> 1);
  const double u1 = uniform_open01(w[0], w[1]);
  const double u2 = uniform_open01(w[2], w[3]);
  const double rad = std::sqrt(-2.0 * synth_log(u1));  // sqrt is correctly rounded (IEEE)
  double s, c;
  synth_sincos_2pi(u2, s, c);
  return rad * ((k & 1u) ? s : c);
}

std::vector<size_t> outlier_channels(size_t cols, uint64_t seed, double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) throw std::invalid_argument("synth: outlier fraction not in [0, 1]");
  if (cols == 0 || fraction == 0.0) return {};
  const size_t want = std::min(cols, std::max<size_t>(1, static_cast<size_t>(std::llround(static_cast<double>(cols) * fraction))));
  std::vector<std::pair<uint64_t, size_t>> keys(cols);
  for (size_t c = 0; c < cols; ++c) {
    const auto w = philox_block(seed, kOutlierStream, c);
    keys[c] = {(static_cast<uint64_t>(w[0]) << 32) | w[1], c};
  }
  std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(want - 1), keys.end());
  std::vector<size_t> out;
  out.reserve(want);
  const auto pivot = keys[want - 1];
  for (const auto& kc : keys) {
    if (kc <= pivot) out.push_back(kc.second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<float> llm_activations(size_t rows, size_t cols, uint64_t seed, double outlier_channel_fraction,
                                   double outlier_scale) {
  if (!(std::fabs(outlier_scale) <= kMaxScale)) throw std::invalid_argument("synth: bad outlier_scale");
  std::vector<double> col_scale(cols, 1.0);
  for (size_t c : outlier_channels(cols, seed, outlier_channel_fraction)) col_scale[c] = outlier_scale;
  std::vector<float> out(rows * cols);
  parallel_fill(out, [&](size_t i) {
    return static_cast<float>(standard_normal(seed, kActStream, i) * col_scale[i % cols]);
  });
  return out;
}

std::vector<float> llm_weights(size_t rows, size_t cols, uint64_t seed, double stddev) {
  check_scale(stddev, "stddev");
  std::vector<float> out(rows * cols);
  parallel_fill(out, [&](size_t i) { return static_cast<float>(stddev * standard_normal(seed, kWeightStream, i)); });
  return out;
}

std::vector<float> llm_gradients(size_t rows, size_t cols, uint64_t seed, double scale) {
  check_scale(scale, "scale");
  std::vector<float> out(rows * cols);
  parallel_fill(out, [&](size_t i) {
    const double z = standard_normal(seed, kGradStream, i);
    const auto w = philox_block(seed, kGradChiStream, i);
    const double chi2 = -2.0 * (synth_log(uniform_open01(w[0], w[1])) + synth_log(uniform_open01(w[2], w[3])));
    return static_cast<float>(scale * (z / std::sqrt(chi2 / 4.0)));
  });
  return out;
}

}  // namespace fp4sim
