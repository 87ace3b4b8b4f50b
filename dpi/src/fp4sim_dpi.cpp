// libfp4sim_dpi: the C ABI of dpi/include/fp4sim_dpi.h over the golden library. Every entry point
// catches golden's exceptions and turns them into FP4SIM_DPI_ERROR + a per-thread message, since an
// exception must not cross into a simulator's C code.
#include "fp4sim_dpi.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/exact.hpp"
#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace {

using namespace fp4sim;

thread_local std::string g_error;

// The order of the FP4SIM_DPI_<TYPE> ids.
constexpr const ElemFormat* kTypes[FP4SIM_DPI_NUM_TYPES] = {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2,
                                                            &kUE4M3, &kUE8M0, &kE6M2, &kS1P2, &kBF16};

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }

const ElemFormat& type_of(int t) {
  if (t < 0 || t >= FP4SIM_DPI_NUM_TYPES) fail("fp4sim_dpi: unknown type id " + std::to_string(t));
  return *kTypes[t];
}

template <class F>
int guarded(F&& f) {
  try {
    g_error.clear();
    f();
    return FP4SIM_DPI_OK;
  } catch (const std::exception& e) {
    g_error = e.what();
    if (g_error.rfind("fp4sim_dpi", 0) != 0) g_error = "fp4sim_dpi: " + g_error;
    return FP4SIM_DPI_ERROR;
  }
}

int name_error(const char* what, const char* name) {
  g_error = std::string("fp4sim_dpi: unknown ") + what + " '" + (name ? name : "(null)") + "'";
  return -1;
}

uint32_t f32_bits(float f) { return std::bit_cast<uint32_t>(f); }

uint32_t checked_code(const ElemFormat& f, unsigned int code) {
  if (f.bits < 32 && (code >> f.bits) != 0)
    fail("fp4sim_dpi: code 0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%X", code);
      return std::string(buf);
    }() + " has bits above the " + std::to_string(f.bits) + "-bit type " + std::string(f.name));
  return code;
}

Rounding rounding_of(int r) {
  if (r < FP4SIM_DPI_RNE || r > FP4SIM_DPI_SR) fail("fp4sim_dpi: unknown rounding id " + std::to_string(r));
  return static_cast<Rounding>(r);
}

}  // namespace

// The header's flag bits are golden's (both SoftFloat's).
static_assert(int{FP4SIM_DPI_FLAG_INEXACT} == int{fp4sim::kMmaInexact} &&
              int{FP4SIM_DPI_FLAG_UNDERFLOW} == int{fp4sim::kMmaUnderflow} &&
              int{FP4SIM_DPI_FLAG_OVERFLOW} == int{fp4sim::kMmaOverflow} &&
              int{FP4SIM_DPI_FLAG_INVALID} == int{fp4sim::kMmaInvalid});

extern "C" {

const char* fp4sim_dpi_version(void) { return "0.1.0"; }
const char* fp4sim_dpi_last_error(void) { return g_error.c_str(); }

int fp4sim_dpi_type_id(const char* name) {
  for (int t = 0; t < FP4SIM_DPI_NUM_TYPES; ++t)
    if (name && kTypes[t]->name == std::string_view(name)) return t;
  return name_error("type", name);
}
const char* fp4sim_dpi_type_name(int type) {
  return type >= 0 && type < FP4SIM_DPI_NUM_TYPES ? kTypes[type]->name.data() : nullptr;
}
int fp4sim_dpi_type_bits(int type) { return type >= 0 && type < FP4SIM_DPI_NUM_TYPES ? kTypes[type]->bits : -1; }

int fp4sim_dpi_kind_id(const char* name) {
  MmaKindId id{};
  if (name && parse_mma_kind(name, id)) return static_cast<int>(id);
  return name_error("MMA kind", name);
}
int fp4sim_dpi_kind_k(int kind) {
  return kind >= 0 && kind < FP4SIM_DPI_NUM_KINDS ? mma_kind(static_cast<MmaKindId>(kind)).k : -1;
}
int fp4sim_dpi_model_id(const char* name) {
  Model m{};
  if (name && parse_model(name, m)) return static_cast<int>(m);
  return name_error("model", name);
}
int fp4sim_dpi_block_format_id(const char* name) {
  BlockFormat f{};
  if (name && parse_block_format(name, f)) return static_cast<int>(f);
  return name_error("block format", name);
}
int fp4sim_dpi_block_size(int format) {
  const auto all = all_block_formats();
  return format >= 0 && static_cast<size_t>(format) < all.size() ? all[static_cast<size_t>(format)].block : -1;
}

int fp4sim_dpi_decode_real(int type, unsigned int code, double* value) {
  return guarded([&] {
    const ElemFormat& f = type_of(type);
    *value = decode(f, checked_code(f, code));
  });
}

int fp4sim_dpi_decode(int type, unsigned int code, unsigned int* f32) {
  double v = 0;
  if (fp4sim_dpi_decode_real(type, code, &v) != FP4SIM_DPI_OK) return FP4SIM_DPI_ERROR;
  *f32 = std::isnan(v) ? 0x7FC00000u : f32_bits(static_cast<float>(v));  // exact (format.hpp)
  return FP4SIM_DPI_OK;
}

int fp4sim_dpi_encode_real(int type, double value, int rounding, int saturate, unsigned int rbyte,
                           unsigned int* code) {
  return guarded([&] {
    const ElemFormat& f = type_of(type);
    const Rounding r = rounding_of(rounding);
    if (rbyte > 255) fail("fp4sim_dpi: rbyte " + std::to_string(rbyte) + " is not a byte");
    *code = encode(f, value, r, saturate != 0, static_cast<uint8_t>(rbyte));
  });
}

int fp4sim_dpi_encode(int type, unsigned int f32, int rounding, int saturate, unsigned int rbyte,
                      unsigned int* code) {
  return fp4sim_dpi_encode_real(type, static_cast<double>(std::bit_cast<float>(f32)), rounding, saturate,
                                rbyte, code);
}

int fp4sim_dpi_quantize_block(int format, const unsigned int* x_f32, int rounding, int scale_rule,
                              int convention, int pts, unsigned long long seed, unsigned int stream,
                              unsigned char* codes, unsigned int* scale, unsigned int* global_scale_f32) {
  return guarded([&] {
    const auto all = all_block_formats();
    if (format < 0 || static_cast<size_t>(format) >= all.size())
      fail("fp4sim_dpi: unknown block format id " + std::to_string(format));
    const BlockFormatInfo& fi = all[static_cast<size_t>(format)];
    if (scale_rule != FP4SIM_DPI_SCALE_FLOOR && scale_rule != FP4SIM_DPI_SCALE_CEIL)
      fail("fp4sim_dpi: unknown scale rule id " + std::to_string(scale_rule));
    if (convention < FP4SIM_DPI_CONV_TE || convention > FP4SIM_DPI_CONV_MODELOPT)
      fail("fp4sim_dpi: unknown convention id " + std::to_string(convention));
    QuantOptions opt;
    opt.rounding = rounding_of(rounding);
    opt.scale_rule = static_cast<ScaleRule>(scale_rule);
    opt.convention = static_cast<Convention>(convention);
    opt.pts = pts != 0;
    opt.seed = seed;
    opt.stream = stream;
    const size_t n = static_cast<size_t>(fi.block);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(x_f32[i]);
    const Quantized q = quantize(fi.id, x, 1, n, opt);  // throws on a bad combination: nothing written
    for (size_t i = 0; i < n; ++i) codes[i] = q.codes[i];
    *scale = fi.scale_word32 ? q.scale_words[0] : q.scales[0];
    *global_scale_f32 = f32_bits(q.global_scale);
  });
}

int fp4sim_dpi_mma(int kind, int model, int type_a, int type_b, int scale_type, int block,
                   const unsigned char* a, const unsigned char* b, const unsigned int* sfa,
                   const unsigned int* sfb, unsigned int c_f32, unsigned int* d_f32, int* flags) {
  return fp4sim_dpi_mma_numerics(kind, model, nullptr, type_a, type_b, scale_type, block, a, b, sfa, sfb, c_f32,
                                 d_f32, flags);
}

int fp4sim_dpi_mma_numerics(int kind, int model, const char* numerics, int type_a, int type_b, int scale_type,
                            int block, const unsigned char* a, const unsigned char* b, const unsigned int* sfa,
                            const unsigned int* sfb, unsigned int c_f32, unsigned int* d_f32, int* flags) {
  return guarded([&] {
    if (kind < 0 || kind >= FP4SIM_DPI_NUM_KINDS) fail("fp4sim_dpi: unknown MMA kind id " + std::to_string(kind));
    auto fmt = [](int t) { return t == FP4SIM_DPI_TYPE_DEFAULT ? nullptr : &type_of(t); };
    MmaConfig cfg = make_mma_config(static_cast<MmaKindId>(kind), fmt(type_a), fmt(type_b), fmt(scale_type), block);
    if (model != FP4SIM_DPI_MODEL_DEFAULT) {
      if (model < FP4SIM_DPI_EXACT || model > FP4SIM_DPI_ASCEND_HIF4)
        fail("fp4sim_dpi: unknown model id " + std::to_string(model));
      cfg.model = static_cast<Model>(model);
    }
    validate_mma_config(cfg, cfg.model);
    if (numerics && *numerics) {  // the preset as parameters, then the designer's changes
      cfg.numerics = preset_numerics(cfg, cfg.model);
      parse_numerics(numerics, cfg.numerics);
      cfg.model = Model::Custom;
      validate_mma_config(cfg, cfg.model);
    }
    const int K = cfg.kind->k;
    for (int k = 0; k < K; ++k) {
      checked_code(*cfg.elem_a, a[k]);
      checked_code(*cfg.elem_b, b[k]);
    }
    if (!cfg.kind->scale_word32)
      for (int s = 0; s < K / cfg.block; ++s) {
        checked_code(*cfg.scale, sfa[s]);
        checked_code(*cfg.scale, sfb[s]);
      }
    const uint32_t d = mma_dot(cfg, a, b, sfa, sfb, c_f32);
    const int fl = fp4sim::mma_flags(cfg, a, b, sfa, sfb, c_f32, d);  // SoftFloat bits, as the header's
    *d_f32 = d;
    *flags = fl;
  });
}

}  // extern "C"
