// Differential checking of the Verilated RTL units against the golden models (tests/rtl).
//
// Checker queues cases, streams them through the unit in batches (the pipeline stays full) and
// compares every result bit for bit with fp4sim::mma_dot. A mismatch prints the case's inputs and
// both outputs in hex; after 20 mismatches the checker stops checking. With a library built with
// -DFP4SIM_RTL_TRACE=ON the first failing case is re-run into an FST waveform
// (directory $FP4SIM_RTL_WAVES, default the working directory).
//
// Random case counts: $FP4SIM_RTL_RANDOM (per unit), default FP4SIM_RTL_RANDOM_DEFAULT (CMake option
// FP4SIM_RTL_NIGHTLY: 10^7, else 10^5). Seed: $FP4SIM_RTL_SEED (default 1).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "rtl_driver.hpp"
#ifdef FP4SIM_RTL_COVERAGE
#include "coverage_bins.hpp"  // functional coverpoints (coverage build, scripts/coverage.sh)
#endif

#ifndef FP4SIM_RTL_RANDOM_DEFAULT
#define FP4SIM_RTL_RANDOM_DEFAULT 100000
#endif

namespace rtlcheck {

using fp4sim::rtl::Unit;

// One instruction's operands (K = 64; bs_dot_k32 reads the first 32 elements and one scale).
struct Case {
  std::array<uint8_t, 64> a{}, b{};
  std::array<uint32_t, 4> sfa{}, sfb{};
  uint32_t c = 0;
};

inline size_t random_count() {
  if (const char* e = std::getenv("FP4SIM_RTL_RANDOM")) return static_cast<size_t>(std::strtoull(e, nullptr, 10));
  return FP4SIM_RTL_RANDOM_DEFAULT;
}

inline uint64_t seed_base() {
  if (const char* e = std::getenv("FP4SIM_RTL_SEED")) return std::strtoull(e, nullptr, 10);
  return 1;
}

inline float bf(uint32_t u) { return std::bit_cast<float>(u); }
inline uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }

class Checker {
 public:
  static constexpr size_t kBatch = 4096;
  static constexpr size_t kMaxReports = 20;

  explicit Checker(Unit u, const fp4sim::ElemFormat* ea = nullptr, const fp4sim::ElemFormat* eb = nullptr,
                   uint32_t stall_seed = 0)
      : Checker(u, ea, eb, fp4sim::rtl::DriverOptions{std::string(), stall_seed}) {}
  Checker(Unit u, const fp4sim::ElemFormat* ea, const fp4sim::ElemFormat* eb, fp4sim::rtl::DriverOptions opt)
      : unit_(u), cfg_(fp4sim::rtl::golden_config(u, ea, eb)), drv_(u, opt) {
    drv_.set_formats(*cfg_.elem_a, *cfg_.elem_b);
    k_ = static_cast<size_t>(drv_.k());
    s_ = static_cast<size_t>(drv_.scales_per_op());
  }
  // Never throws: a driver error (an SVA check failed, no output) becomes a test failure.
  ~Checker() {
    try {
      flush();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }

  const fp4sim::MmaConfig& config() const { return cfg_; }
  fp4sim::rtl::Driver& driver() { return drv_; }

  void add(const Case& c) {
    if (mismatches_ >= kMaxReports) return;  // stopped: the report is long enough
    q_.push_back(c);
    if (q_.size() >= kBatch) flush();
  }

  // Checks what is queued; returns the number of mismatches so far.
  size_t flush() {
    if (q_.empty()) return mismatches_;
    // Taken out first: if the driver throws, these cases are not run again by the destructor.
    const std::vector<Case> q = std::move(q_);
    q_.clear();
    const size_t n = q.size();
    a_.resize(n * k_);
    b_.resize(n * k_);
    sa_.resize(n * s_);
    sb_.resize(n * s_);
    c_.resize(n);
    d_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      std::copy_n(q[i].a.begin(), k_, a_.begin() + static_cast<std::ptrdiff_t>(i * k_));
      std::copy_n(q[i].b.begin(), k_, b_.begin() + static_cast<std::ptrdiff_t>(i * k_));
      std::copy_n(q[i].sfa.begin(), s_, sa_.begin() + static_cast<std::ptrdiff_t>(i * s_));
      std::copy_n(q[i].sfb.begin(), s_, sb_.begin() + static_cast<std::ptrdiff_t>(i * s_));
      c_[i] = q[i].c;
    }
    drv_.run(n, a_.data(), b_.data(), sa_.data(), sb_.data(), c_.data(), d_.data());
    for (size_t i = 0; i < n && mismatches_ < kMaxReports; ++i) {
      const uint32_t g = fp4sim::mma_dot(cfg_, a_.data() + i * k_, b_.data() + i * k_, sa_.data() + i * s_,
                                         sb_.data() + i * s_, c_[i]);
      ++checked_;
#ifdef FP4SIM_RTL_COVERAGE
      rtlcov::sample(unit_, cfg_, a_.data() + i * k_, b_.data() + i * k_, sa_.data() + i * s_, sb_.data() + i * s_,
                     c_[i], g);
#endif
      if (g != d_[i]) report(q[i], d_[i], g);
    }
    return mismatches_;
  }

  size_t checked() const { return checked_; }
  size_t mismatches() const { return mismatches_; }

  // Flushes and records a gtest failure if anything mismatched.
  void expect_clean(const char* what) {
    flush();
    EXPECT_EQ(mismatches_, 0u) << what << ": " << mismatches_ << " mismatch(es) in " << checked_
                               << " checked cases" << (mismatches_ >= kMaxReports ? " (stopped after 20)" : "");
    std::printf("[ rtl      ] %s: %zu cases checked against golden %s\n", what, checked_,
                std::string(fp4sim::model_name(cfg_.model)).c_str());
  }

 private:
  std::string hex_codes(const uint8_t* p, size_t n) const {
    std::string s;
    char buf[4];
    for (size_t i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, k_ == 32 ? "%02X" : "%X", p[i]);
      s += buf;
      if (k_ == 32 && i + 1 < n) s += ' ';
    }
    return s;
  }

  void report(const Case& c, uint32_t rtl, uint32_t gold) {
    ++mismatches_;
    const auto& ui = drv_.info();
    std::string sa, sb;
    char buf[16];
    for (size_t j = 0; j < s_; ++j) {
      std::snprintf(buf, sizeof buf, "%s%08X", j ? " " : "", c.sfa[j]);
      sa += buf;
      std::snprintf(buf, sizeof buf, "%s%08X", j ? " " : "", c.sfb[j]);
      sb += buf;
    }
    std::printf(
        "RTL MISMATCH #%zu unit %s (golden %s, kind %s, elem %s x %s, scale %s/%d)\n"
        "  a (element 0 first) %s\n  b                   %s\n  sfa %s\n  sfb %s\n  c   %08X (%.9g)\n"
        "  rtl    D = %08X (%.9g)\n  golden D = %08X (%.9g)\n",
        mismatches_, std::string(ui.name).c_str(), std::string(fp4sim::model_name(cfg_.model)).c_str(),
        std::string(cfg_.kind->name).c_str(), std::string(cfg_.elem_a->name).c_str(),
        std::string(cfg_.elem_b->name).c_str(), std::string(cfg_.scale->name).c_str(), cfg_.block,
        hex_codes(c.a.data(), k_).c_str(), hex_codes(c.b.data(), k_).c_str(), sa.c_str(), sb.c_str(), c.c,
        static_cast<double>(bf(c.c)), rtl, static_cast<double>(bf(rtl)), gold, static_cast<double>(bf(gold)));
    if (mismatches_ == 1 && fp4sim::rtl::trace_supported()) dump_wave(c);
    ADD_FAILURE() << "RTL mismatch (details printed above)";
  }

  void dump_wave(const Case& c) {
    const char* dir = std::getenv("FP4SIM_RTL_WAVES");
    const std::string path = std::string(dir ? dir : ".") + "/rtl_fail_" + std::string(drv_.info().name) + ".fst";
    fp4sim::rtl::Driver w(unit_, {path, 0});
    w.set_formats(*cfg_.elem_a, *cfg_.elem_b);
    (void)w.dot(c.a.data(), c.b.data(), c.sfa.data(), c.sfb.data(), c.c);
    std::printf("  waveform of this case: %s\n", path.c_str());
  }

  Unit unit_;
  fp4sim::MmaConfig cfg_;
  fp4sim::rtl::Driver drv_;
  size_t k_ = 64, s_ = 4;
  std::vector<Case> q_;
  std::vector<uint8_t> a_, b_;
  std::vector<uint32_t> sa_, sb_, c_, d_;
  size_t checked_ = 0, mismatches_ = 0;
};

// Random helpers shared by the unit tests.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed * 0x9E3779B97F4A7C15ull + 12345u) {}
  uint32_t u32() { return static_cast<uint32_t>(g_()); }
  uint32_t below(uint32_t n) { return n ? u32() % n : 0u; }
  int range(int lo, int hi) { return lo + static_cast<int>(below(static_cast<uint32_t>(hi - lo + 1))); }
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }

  // FP32 bits for C: a mix of zeros, subnormals, specials and values with exponent near
  // `center` (where the dot product's terms lie), so C interacts with the alignment and rounding.
  uint32_t c_bits(int center) {
    const uint32_t r = below(100);
    const uint32_t sign = u32() & 0x80000000u;
    if (r < 8) return sign;                                           // +-0
    if (r < 13) return sign | (u32() & 0x7FFFFFu);                    // subnormal
    if (r < 15) return sign | 0x7F800000u;                            // +-Inf
    if (r < 16) return 0x7F800000u | 1u | (u32() & 0x807FFFFFu);      // NaN
    if (r < 22) {                                                     // any finite
      const uint32_t u = u32();
      return ((u >> 23) & 0xFFu) == 0xFFu ? u & 0xFF7FFFFFu : u;
    }
    int e = center + range(-40, 40);
    e = e < -126 ? -126 : (e > 127 ? 127 : e);
    return sign | (static_cast<uint32_t>(e + 127) << 23) | (u32() & 0x7FFFFFu);
  }

 private:
  std::mt19937_64 g_;
};

// Unbiased exponent of a decoded scale value (for steering C); 0 for zero / NaN.
inline int scale_exp(const fp4sim::ElemFormat& f, uint32_t code) {
  const double v = fp4sim::decode(f, code);
  return (std::isfinite(v) && v != 0.0) ? std::ilogb(v) : 0;
}

}  // namespace rtlcheck
