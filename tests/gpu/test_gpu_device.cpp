// The CUDA kernels against golden, bit for bit: every quantizer option set and every GEMM
// configuration of the GPU target, with the simple kernels (Direct / Staged, Simple) and the tuned
// ones (Tuned); then the tuned kernels against the simple ones on larger tensors, on the device
// alone (the simple kernels are the reference the first time a GPU appears, docs/gpu.md).
// Exits 77 (CTest SKIP_RETURN_CODE) when no GPU is present; 1 when the CUDA module itself could not
// be loaded (a broken build is not "no GPU").
// Output is line-buffered and every check catches its own exception (a CUDA error counts as that
// check's failure and the rest still run), so a crash or a kill keeps what was checked
// (scripts/gpu_check.sh redirects it into a log).
#include <bit>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fp4sim/gpu/gpu.hpp"

using namespace fp4sim;

namespace {

int failures = 0;
int checks = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    if (failures < 20) std::printf("FAIL %s\n", what.c_str());
  }
}

// Runs one check body; an exception (CUDA error, bad argument) is that check's failure.
void guarded(const std::string& what, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    expect(false, what + ": exception: " + e.what());
  } catch (...) {
    expect(false, what + ": unknown exception");
  }
}

std::vector<float> random_floats(size_t n, uint64_t seed, int emin, int emax) {
  std::mt19937_64 g(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const int k = static_cast<int>(g() % 64);
    x = k == 0 ? 0.0f : std::ldexp(1.0f + float(g() % 8388608) / 8388608.0f, emin + int(g() % unsigned(emax - emin + 1))) * ((g() & 1) ? -1.f : 1.f);
  }
  return v;
}

const char* kname(gpu::QuantKernel k) {
  return k == gpu::QuantKernel::Direct ? "direct" : (k == gpu::QuantKernel::Staged ? "staged" : "tuned");
}

void expect_same(const Quantized& want, const Quantized& got, const std::string& n) {
  expect(want.codes == got.codes, n + " codes");
  expect(want.scales == got.scales, n + " scales");
  expect(want.scale_words == got.scale_words, n + " scale words");
  expect(std::bit_cast<uint32_t>(want.global_scale) == std::bit_cast<uint32_t>(got.global_scale), n + " global scale");
  expect(std::bit_cast<uint32_t>(want.amax) == std::bit_cast<uint32_t>(got.amax), n + " amax");
}

void quant_checks() {
  for (const auto& fi : all_block_formats()) {
    for (Rounding r : {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr}) {
      for (int variant = 0; variant < 5; ++variant) {
        QuantOptions o;
        o.rounding = r;
        o.seed = 42;
        o.stream = 1;
        if (variant == 1) o.scale_rule = ScaleRule::Ceil;
        if (variant == 2) o.rht = 16;
        if (variant == 3 && fi.id == BlockFormat::Nvfp4) o.two_d = true;
        if (variant == 4) {  // NVFP4 without the tensor scale (the tuned kernel then skips the amax pass)
          if (fi.id != BlockFormat::Nvfp4) continue;
          o.pts = false;
        }
        if (!gpu::cannot_quantize(fi.id, o).empty()) continue;
        // a whole number of 512-element tiles, and a partial last tile (1344 = 2 x 512 + 320)
        for (const auto& [rows, cols] : {std::pair<size_t, size_t>{48, 1024}, {7, 192}}) {
          std::vector<float> x = random_floats(rows * cols, 7 + variant, -40, 40);
          x[3] = NAN;
          x[777 % x.size()] = -INFINITY;
          const Quantized want = quantize(fi.id, x, rows, cols, o);
          for (gpu::QuantKernel k : {gpu::QuantKernel::Direct, gpu::QuantKernel::Staged, gpu::QuantKernel::Tuned}) {
            const std::string n = std::string(fi.name) + "/" + std::string(rounding_name(r)) + "/v" +
                                  std::to_string(variant) + "/" + std::to_string(rows) + "x" + std::to_string(cols) +
                                  "/" + kname(k);
            guarded(n, [&] { expect_same(want, gpu::quantize(gpu::Backend::Device, fi.id, x, rows, cols, o, k), n); });
          }
        }
      }
    }
  }
}

// Tuned against Direct on the device alone, on tensors larger than golden is asked to do here:
// every format, rounding, RHT and PTS setting, 1024 x 4096 (8192 tiles, many CTAs per SM).
void tuned_vs_simple_quant() {
  const size_t rows = 1024, cols = 4096;
  std::vector<float> x = random_floats(rows * cols, 99, -60, 60);
  for (size_t i = 0; i < x.size(); i += 100003) x[i] = (i / 100003) % 2 ? NAN : INFINITY;
  for (const auto& fi : all_block_formats()) {
    for (Rounding r : {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr}) {
      for (int variant = 0; variant < 3; ++variant) {
        QuantOptions o;
        o.rounding = r;
        o.seed = 0xC0FFEE;
        o.stream = 7;
        if (variant == 1) o.rht = 16;
        if (variant == 2) o.pts = false;
        if (!gpu::cannot_quantize(fi.id, o).empty()) continue;
        const std::string n = std::string(fi.name) + "/" + std::string(rounding_name(r)) + "/v" + std::to_string(variant) +
                              "/tuned-vs-direct";
        guarded(n, [&] {
          expect_same(gpu::quantize(gpu::Backend::Device, fi.id, x, rows, cols, o, gpu::QuantKernel::Direct),
                      gpu::quantize(gpu::Backend::Device, fi.id, x, rows, cols, o, gpu::QuantKernel::Tuned), n);
        });
      }
    }
  }
}

void gemm_checks() {
  std::mt19937_64 g(3);
  std::vector<std::pair<MmaConfig, std::string>> cfgs;
  cfgs.push_back({make_mma_config(MmaKindId::Mxf4), "mxf4"});
  for (const ElemFormat* s : {&kUE4M3, &kUE8M0})
    for (int b : {16, 32}) cfgs.push_back({make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, s, b), "mxf4nvf4"});
  for (const ElemFormat* a : {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1})
    for (const ElemFormat* b : {&kE4M3, &kE5M2, &kE2M1}) cfgs.push_back({make_mma_config(MmaKindId::Mxf8f6f4, a, b), "mxf8f6f4"});
  cfgs.push_back({make_mma_config(MmaKindId::Hif4), "hif4"});
  for (const auto& [cfg, name] : cfgs) {
    for (Model m : {Model::Blackwell, Model::AscendHif4, Model::Fp32Seq, Model::Exact}) {
      if (!gpu::cannot_run(cfg, m).empty()) continue;
      // partial 64 x 64 and 16 x 16 tiles; K = 96 (not a multiple of the 64-element slab) where allowed
      const size_t step = (m == Model::Blackwell || m == Model::AscendHif4) ? static_cast<size_t>(cfg.kind->k)
                                                                            : static_cast<size_t>(cfg.block);
      for (const auto& [M, N, K] : {std::tuple<size_t, size_t, size_t>{33, 65, 256}, {70, 17, 96}, {129, 64, 1024}}) {
      if (K % step != 0) continue;
      const size_t nblk = K / static_cast<size_t>(cfg.block);
      std::vector<uint8_t> a(M * K), b(N * K);
      for (auto& x : a) x = static_cast<uint8_t>(g());
      for (auto& x : b) x = static_cast<uint8_t>(g());
      std::vector<uint32_t> sa(M * nblk), sb(N * nblk);
      for (auto& s : sa) s = static_cast<uint32_t>(g()) & (cfg.kind->scale_word32 ? 0xFFFFFFFFu : 0xFFu);
      for (auto& s : sb) s = static_cast<uint32_t>(g()) & (cfg.kind->scale_word32 ? 0xFFFFFFFFu : 0xFFu);
      std::vector<float> c(M * N);
      for (auto& x : c) x = std::ldexp(float(int(g() % 2001) - 1000), int(g() % 60) - 40);
      const std::vector<float> want = gemm(cfg, m, M, N, K, a, sa, b, sb, c, 0.5f);
      for (gpu::GemmKernel k : {gpu::GemmKernel::Simple, gpu::GemmKernel::Tuned}) {
        const std::string n = name + "/" + std::string(model_name(m)) + "/" + std::to_string(M) + "x" +
                              std::to_string(N) + "x" + std::to_string(K) + (k == gpu::GemmKernel::Tuned ? "/tuned" : "/simple");
        guarded(n, [&] {
          const std::vector<uint32_t> got = gpu::gemm(gpu::Backend::Device, cfg, m, M, N, K, a, sa, b, sb, c, 0.5f, k);
          size_t bad = 0;
          for (size_t i = 0; i < want.size(); ++i) bad += std::bit_cast<uint32_t>(want[i]) != got[i];
          expect(bad == 0, n + ": " + std::to_string(bad) + " outputs differ");
        });
      }
      }
    }
  }
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string why;
  if (!gpu::gpu_module_ok(why)) {
    std::printf("FAIL: %s\n", why.c_str());
    return 1;
  }
  if (!gpu::gpu_available(why)) {
    std::printf("SKIP: GPU kernels not run: %s\n", why.c_str());
    return 77;
  }
  std::printf("device: %s\n", why.c_str());
  quant_checks();
  std::printf("quantizers: %d checks, %d failures\n", checks, failures);
  const int q_checks = checks, q_failures = failures;
  tuned_vs_simple_quant();
  std::printf("quantizers, tuned vs direct on the device: %d checks, %d failures\n", checks - q_checks, failures - q_failures);
  const int t_checks = checks, t_failures = failures;
  gemm_checks();
  std::printf("gemm: %d checks, %d failures\n", checks - t_checks, failures - t_failures);
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
