// Line vectors: one MMA instruction per text line, and the check of a DUT's result lines (lines.hpp).
#include "fp4sim/io/lines.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "fp4sim/exact.hpp"
#include "fp4sim/format.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::lines {
namespace {

using io::Json;

constexpr std::array<const ElemFormat*, 6> kElems = {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2, &kS1P2};
constexpr std::array<const ElemFormat*, 3> kScales = {&kUE8M0, &kUE4M3, &kE6M2};
constexpr std::array<MmaKindId, 4> kKinds = {MmaKindId::Mxf4, MmaKindId::Mxf4Nvf4, MmaKindId::Mxf8f6f4, MmaKindId::Hif4};
// 4 = custom: a designer's --numerics (the file's header line says which).
constexpr std::array<Model, 5> kModels = {Model::Exact, Model::Fp32Seq, Model::Blackwell, Model::AscendHif4, Model::Custom};

// Formats are compared by name: a config may hold a pointer to its own copy of a table row.
template <size_t N>
uint32_t index_of(const std::array<const ElemFormat*, N>& t, const ElemFormat* f) {
  for (size_t i = 0; i < N; ++i)
    if (t[i]->name == f->name) return static_cast<uint32_t>(i);
  throw std::invalid_argument("lines: format " + std::string(f->name) + " has no number in the config word");
}

float f32(uint32_t u) { return std::bit_cast<float>(u); }

std::string hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Codes packed into one hex word, most significant first: code k at bits [w*k, w*k + w).
template <class T>
std::string packed_hex(const std::vector<T>& codes, int digits) {
  std::string s;
  for (size_t i = codes.size(); i-- > 0;) s += hex(codes[i], digits);
  return s;
}

std::string codes_list(const std::vector<uint8_t>& codes) {
  std::string s;
  for (uint8_t c : codes) {
    if (!s.empty()) s += ' ';
    s += hex(c, 2);
  }
  return s;
}
std::string scales_list(const std::vector<uint32_t>& sc, bool word) {
  std::string s;
  for (uint32_t c : sc) {
    if (!s.empty()) s += ' ';
    s += hex(c, word ? 8 : 2);
  }
  return s;
}

// The scale factor of element q (of an instruction's K) from its scale codes, exactly.
std::string flag_names(uint8_t f) {
  std::string s;
  auto add = [&](uint8_t bit, const char* n) {
    if (!(f & bit)) return;
    if (!s.empty()) s += ',';
    s += n;
  };
  add(kFlagInvalid, "invalid");
  add(kFlagOverflow, "overflow");
  add(kFlagUnderflow, "underflow");
  add(kFlagInexact, "inexact");
  return s.empty() ? "none" : s;
}

[[noreturn]] void bad(std::string_view name, size_t line, const std::string& why) {
  throw std::runtime_error(std::string(name) + ":" + std::to_string(line) + ": " + why);
}

// One jsonl line as an object, or the line's one-line error.
Json json_line(std::string_view text, std::string_view name, size_t ln) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception&) {
    bad(name, ln, "not a JSON object");
  }
  if (!j.is_object()) bad(name, ln, "not a JSON object");
  return j;
}


// A packed hex word of `count` fields of `digits` digits each (most significant first).
template <class T>
bool parse_packed(std::string_view s, size_t count, int digits, std::vector<T>& out) {
  if (s.size() != count * static_cast<size_t>(digits)) return false;
  out.assign(count, 0);
  for (size_t i = 0; i < count; ++i) {
    uint64_t v;
    if (!parse_hex(s.substr((count - 1 - i) * static_cast<size_t>(digits), static_cast<size_t>(digits)), v, 4 * digits))
      return false;
    out[i] = static_cast<T>(v);
  }
  return true;
}

std::vector<std::string_view> split_ws(std::string_view l) {
  std::vector<std::string_view> t;
  size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) ++i;
    const size_t j = i;
    while (i < l.size() && l[i] != ' ' && l[i] != '\t' && l[i] != '\r') ++i;
    if (i > j) t.push_back(l.substr(j, i - j));
  }
  return t;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    out.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

bool blank(std::string_view l) { return split_ws(l).empty(); }
bool comment(std::string_view token) { return token[0] == '#' || token.substr(0, 2) == "//"; }

template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t at, size_t n) {
  return {v.begin() + static_cast<ptrdiff_t>(at), v.begin() + static_cast<ptrdiff_t>(at + n)};
}

// The operand fields of hex and testfloat lines, starting at token t[0] = the config word.
void parse_operands(const std::vector<std::string_view>& t, size_t at, Instruction& ins, std::string_view name, size_t ln) {
  uint64_t w;
  if (!parse_hex(t[at], w, 32)) bad(name, ln, "config word '" + std::string(t[at]) + "' is not 8 hex digits");
  try {
    ins.cfg = config_from_word(static_cast<uint32_t>(w));
  } catch (const std::invalid_argument& e) {
    bad(name, ln, e.what());
  }
  const size_t k = static_cast<size_t>(ins.cfg.kind->k), nb = k / static_cast<size_t>(ins.cfg.block);
  if (!parse_packed(t[at + 1], k, 2, ins.a)) bad(name, ln, "A: expected " + std::to_string(2 * k) + " hex digits");
  if (!parse_packed(t[at + 2], k, 2, ins.b)) bad(name, ln, "B: expected " + std::to_string(2 * k) + " hex digits");
  if (!parse_packed(t[at + 3], nb, 8, ins.sa)) bad(name, ln, "SA: expected " + std::to_string(8 * nb) + " hex digits");
  if (!parse_packed(t[at + 4], nb, 8, ins.sb)) bad(name, ln, "SB: expected " + std::to_string(8 * nb) + " hex digits");
  uint64_t c, d, f;
  if (!parse_hex(t[at + 5], c, 32) || t[at + 5].size() != 8) bad(name, ln, "C: expected 8 hex digits");
  if (!parse_hex(t[at + 6], d, 32) || t[at + 6].size() != 8) bad(name, ln, "D: expected 8 hex digits");
  if (!parse_hex(t[at + 7], f, 8) || t[at + 7].size() != 2) bad(name, ln, "flags: expected 2 hex digits");
  ins.c = static_cast<uint32_t>(c);
  ins.d = static_cast<uint32_t>(d);
  ins.flags = static_cast<uint8_t>(f);
}

uint64_t json_uint(const Json& j, const char* key, std::string_view name, size_t ln, int bits) {
  if (!j.contains(key)) bad(name, ln, std::string("no field \"") + key + "\"");
  const Json& v = j[key];
  uint64_t out = 0;
  if (v.is_number_unsigned()) out = v.get<uint64_t>();
  else if (!v.is_string() || !parse_hex(v.get<std::string>(), out, bits))
    bad(name, ln, std::string("\"") + key + "\": expected hex digits in a string or a non-negative integer");
  if (bits < 64 && out >> bits) bad(name, ln, std::string("\"") + key + "\" does not fit in " + std::to_string(bits) + " bits");
  return out;
}

template <class T>
std::vector<T> json_codes(const Json& j, const char* key, size_t count, std::string_view name, size_t ln, int bits) {
  if (!j.contains(key) || !j[key].is_array() || j[key].size() != count)
    bad(name, ln, std::string("\"") + key + "\": expected an array of " + std::to_string(count) + " codes");
  std::vector<T> out;
  for (const Json& v : j[key]) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() >> bits)
      bad(name, ln, std::string("\"") + key + "\": every code must be an integer of " + std::to_string(bits) + " bits");
    out.push_back(static_cast<T>(v.get<uint64_t>()));
  }
  return out;
}

}  // namespace

bool parse_hex(std::string_view s, uint64_t& out, int bits) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char ch : s) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else return false;
    if (v >> (bits - 4)) return false;  // another digit would overflow `bits`
    v = v << 4 | static_cast<uint64_t>(d);
  }
  out = v;
  return bits == 64 || v >> bits == 0;
}

std::string_view line_format_name(LineFormat f) {
  switch (f) {
    case LineFormat::Hex: return "hex";
    case LineFormat::TestFloat: return "testfloat";
    case LineFormat::Jsonl: return "jsonl";
  }
  return "?";
}

bool parse_line_format(std::string_view s, LineFormat& out) {
  for (LineFormat f : {LineFormat::Hex, LineFormat::TestFloat, LineFormat::Jsonl})
    if (s == line_format_name(f)) {
      out = f;
      return true;
    }
  return false;
}

uint8_t instruction_flags(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                          const uint32_t* sb, uint32_t c, uint32_t d) {
  return mma_flags(cfg, a, b, sa, sb, c, d);
}

uint32_t config_word(const MmaConfig& cfg) {
  uint32_t kind = 0, model = 0;
  for (uint32_t i = 0; i < kKinds.size(); ++i)
    if (kKinds[i] == cfg.kind->id) kind = i;
  for (uint32_t i = 0; i < kModels.size(); ++i)
    if (kModels[i] == cfg.model) model = i;
  return kind << 28 | model << 24 | index_of(kElems, cfg.elem_a) << 20 | index_of(kElems, cfg.elem_b) << 16 |
         index_of(kScales, cfg.scale) << 12 | static_cast<uint32_t>(cfg.block);
}

MmaConfig config_from_word(uint32_t w) {
  const uint32_t kind = w >> 28, model = w >> 24 & 0xF, ea = w >> 20 & 0xF, eb = w >> 16 & 0xF, sc = w >> 12 & 0xF;
  if (kind >= kKinds.size() || model >= kModels.size() || ea >= kElems.size() || eb >= kElems.size() || sc >= kScales.size())
    throw std::invalid_argument("config word " + hex(w, 8) + " names no kind / model / element / scale type");
  MmaConfig cfg = make_mma_config(kKinds[kind], kElems[ea], kElems[eb], kScales[sc], static_cast<int>(w & 0xFFF));
  cfg.model = kModels[model];
  validate_mma_config(cfg, cfg.model);
  return cfg;
}

uint32_t epilogue(uint32_t alpha, uint32_t d) {
  const uint32_t r = std::bit_cast<uint32_t>(f32(alpha) * f32(d));
  return is_nan_bits(r) ? kNaNBits : r;
}

std::vector<Instruction> case_instructions(const vectors::VectorCase& v, Model model, const Numerics* numerics) {
  MmaConfig cfg = v.cfg;
  if (numerics) cfg.numerics = *numerics, model = Model::Custom;
  cfg.model = model;
  validate_mma_config(cfg, model);
  const size_t k = static_cast<size_t>(cfg.kind->k), S = v.K / k, nbk = k / static_cast<size_t>(cfg.block),
               nb = v.K / static_cast<size_t>(cfg.block);
  if (S > 1 && !vectors::chained_model(model))
    throw std::invalid_argument("model " + std::string(model_name(model)) + " rounds once over the whole K = " +
                                std::to_string(v.K) + ": no instruction chain (" + std::to_string(S) + " instructions)");
  // The suite's own expected outputs of this model, to check the chain against.
  const std::vector<float>* expected = nullptr;
  const std::vector<float>* steps = nullptr;
  for (size_t i = 0; i < v.models.size(); ++i)
    if (v.models[i] == model) {
      expected = &v.expected[i];
      if (i < v.steps.size() && !v.steps[i].empty()) steps = &v.steps[i];
    }
  const uint32_t alpha = std::bit_cast<uint32_t>(v.alpha);
  std::vector<Instruction> out;
  out.reserve(v.M * v.N * S);
  for (size_t m = 0; m < v.M; ++m)
    for (size_t n = 0; n < v.N; ++n) {
      uint32_t c = std::bit_cast<uint32_t>(v.c[m * v.N + n]);
      for (size_t s = 0; s < S; ++s) {
        Instruction ins;
        ins.case_id = v.id;
        ins.index = s;
        ins.count = S;
        ins.m = m;
        ins.n = n;
        ins.cfg = cfg;
        ins.alpha = alpha;
        ins.a = slice(v.a.codes, m * v.K + s * k, k);
        ins.b = slice(v.b.codes, n * v.K + s * k, k);
        ins.sa = slice(v.a.scales, m * nb + s * nbk, nbk);
        ins.sb = slice(v.b.scales, n * nb + s * nbk, nbk);
        ins.c = c;
        ins.d = mma_dot(cfg, ins.a.data(), ins.b.data(), ins.sa.data(), ins.sb.data(), c);
        ins.flags = instruction_flags(cfg, ins.a.data(), ins.b.data(), ins.sa.data(), ins.sb.data(), c, ins.d);
        const std::string where =
            v.id + " [" + std::to_string(m) + ", " + std::to_string(n) + "] instruction " + std::to_string(s);
        if (steps && std::bit_cast<uint32_t>((*steps)[(s * v.M + m) * v.N + n]) != ins.d)
          throw std::runtime_error("lines: " + where + ": mma_dot gives " + hex(ins.d, 8) + ", the steps file " +
                                   hex(std::bit_cast<uint32_t>((*steps)[(s * v.M + m) * v.N + n]), 8));
        if (s + 1 == S && expected && std::bit_cast<uint32_t>((*expected)[m * v.N + n]) != epilogue(alpha, ins.d))
          throw std::runtime_error("lines: " + where + ": RN(alpha * D) = " + hex(epilogue(alpha, ins.d), 8) +
                                   ", the expected D " + hex(std::bit_cast<uint32_t>((*expected)[m * v.N + n]), 8));
        c = ins.d;
        out.push_back(std::move(ins));
      }
    }
  return out;
}

std::string format_header(LineFormat f, std::string_view description) {
  if (f != LineFormat::Hex) return "";
  // "//" is the comment $readmemh skips: the whole file loads as a memory of hex words.
  return "// fp4sim line vectors (docs/line-vectors.md) " + std::string(description) +
         ": case m n s S config A B SA SB C D flags alpha";
}

std::string format_line(const Instruction& ins, LineFormat f) {
  const std::string ops = hex(config_word(ins.cfg), 8) + " " + packed_hex(ins.a, 2) + " " + packed_hex(ins.b, 2) + " " +
                          packed_hex(ins.sa, 8) + " " + packed_hex(ins.sb, 8) + " " + hex(ins.c, 8) + " " +
                          hex(ins.d, 8) + " " + hex(ins.flags, 2);
  if (f == LineFormat::TestFloat) return ops;
  if (f == LineFormat::Hex) {
    // The case number is the id's leading decimal position, written in hex like every field.
    const unsigned long long num = std::strtoull(ins.case_id.c_str(), nullptr, 10);
    return hex(num, 4) + " " + hex(ins.m, 4) + " " + hex(ins.n, 4) + " " + hex(ins.index, 4) + " " + hex(ins.count, 4) +
           " " + ops + " " + hex(ins.alpha, 8);
  }
  Json j;
  j["case"] = ins.case_id;
  j["m"] = ins.m;
  j["n"] = ins.n;
  j["instruction"] = ins.index;
  j["instructions"] = ins.count;
  j["config"] = vectors::config_tag(ins.cfg);
  j["model"] = std::string(model_name(ins.cfg.model));
  j["config_word"] = hex(config_word(ins.cfg), 8);
  j["a"] = ins.a;
  j["b"] = ins.b;
  j["sa"] = ins.sa;
  j["sb"] = ins.sb;
  // The decoded values, for a reader (NaN / Inf as strings).
  auto vals = [](const ElemFormat& ef, const std::vector<uint8_t>& codes) {
    Json a = Json::array();
    for (uint8_t c : codes) {
      const double x = decode(ef, c);
      a.push_back(std::isfinite(x) ? Json(x) : Json(value_text(x)));
    }
    return a;
  };
  j["a_values"] = vals(*ins.cfg.elem_a, ins.a);
  j["b_values"] = vals(*ins.cfg.elem_b, ins.b);
  j["c"] = hex(ins.c, 8);
  j["d"] = hex(ins.d, 8);
  j["flags"] = hex(ins.flags, 2);
  j["flag_names"] = flag_names(ins.flags);
  j["alpha"] = hex(ins.alpha, 8);
  j["c_value"] = value_text(f32(ins.c));
  j["d_value"] = value_text(f32(ins.d));
  j["alpha_value"] = value_text(f32(ins.alpha));
  if (ins.last()) {
    j["final"] = hex(epilogue(ins.alpha, ins.d), 8);
    j["final_value"] = value_text(f32(epilogue(ins.alpha, ins.d)));
  }
  return j.dump();
}

LineFile parse_lines(std::string_view text, std::string_view name) {
  LineFile lf;
  const std::vector<std::string_view> ls = split_lines(text);
  size_t first = 0;
  while (first < ls.size() && blank(ls[first])) ++first;
  if (first == ls.size()) throw std::runtime_error(std::string(name) + ": no instruction lines (empty file)");
  const std::string_view head = split_ws(ls[first])[0];
  lf.format = comment(head) ? LineFormat::Hex : head[0] == '{' ? LineFormat::Jsonl : LineFormat::TestFloat;
  for (size_t i = 0; i < ls.size(); ++i) {
    const size_t ln = i + 1;
    const std::vector<std::string_view> t = split_ws(ls[i]);
    if (t.empty() || comment(t[0])) continue;
    Instruction ins;
    if (lf.format == LineFormat::Jsonl) {
      const Json j = json_line(ls[i], name, ln);
      if (!j.contains("case") || !j["case"].is_string()) bad(name, ln, "no \"case\" string");
      ins.case_id = j["case"].get<std::string>();
      ins.m = json_uint(j, "m", name, ln, 64);
      ins.n = json_uint(j, "n", name, ln, 64);
      ins.index = json_uint(j, "instruction", name, ln, 64);
      ins.count = json_uint(j, "instructions", name, ln, 64);
      try {
        ins.cfg = config_from_word(static_cast<uint32_t>(json_uint(j, "config_word", name, ln, 32)));
      } catch (const std::invalid_argument& e) {
        bad(name, ln, e.what());
      }
      const size_t k = static_cast<size_t>(ins.cfg.kind->k), nb = k / static_cast<size_t>(ins.cfg.block);
      ins.a = json_codes<uint8_t>(j, "a", k, name, ln, 8);
      ins.b = json_codes<uint8_t>(j, "b", k, name, ln, 8);
      ins.sa = json_codes<uint32_t>(j, "sa", nb, name, ln, 32);
      ins.sb = json_codes<uint32_t>(j, "sb", nb, name, ln, 32);
      ins.c = static_cast<uint32_t>(json_uint(j, "c", name, ln, 32));
      ins.d = static_cast<uint32_t>(json_uint(j, "d", name, ln, 32));
      ins.flags = static_cast<uint8_t>(json_uint(j, "flags", name, ln, 8));
      ins.alpha = static_cast<uint32_t>(json_uint(j, "alpha", name, ln, 32));
    } else if (lf.format == LineFormat::Hex) {
      if (t.size() != 14)
        bad(name, ln, "expected 14 fields (case m n s S config A B SA SB C D flags alpha), got " + std::to_string(t.size()));
      uint64_t v[5];
      for (int q = 0; q < 5; ++q)
        if (!parse_hex(t[static_cast<size_t>(q)], v[q], 16) || t[static_cast<size_t>(q)].size() != 4)
          bad(name, ln, "field " + std::to_string(q + 1) + ": expected 4 hex digits");
      ins.case_id = "case " + std::string(t[0]) + " (hex)";
      ins.m = v[1];
      ins.n = v[2];
      ins.index = v[3];
      ins.count = v[4];
      parse_operands(t, 5, ins, name, ln);
      uint64_t al;
      if (!parse_hex(t[13], al, 32) || t[13].size() != 8) bad(name, ln, "alpha: expected 8 hex digits");
      ins.alpha = static_cast<uint32_t>(al);
    } else {
      if (t.size() != 8) bad(name, ln, "expected 8 fields (config A B SA SB C D flags), got " + std::to_string(t.size()));
      ins.case_id = "line " + std::to_string(ln);
      parse_operands(t, 0, ins, name, ln);
    }
    if (ins.index >= ins.count)
      bad(name, ln, "instruction index " + std::to_string(ins.index) + " of " + std::to_string(ins.count));
    lf.instructions.push_back(std::move(ins));
    lf.line_numbers.push_back(ln);
  }
  if (lf.instructions.empty()) throw std::runtime_error(std::string(name) + ": no instruction lines");
  return lf;
}

std::vector<ResultLine> parse_results(std::string_view text, std::string_view name) {
  std::vector<ResultLine> out;
  const std::vector<std::string_view> ls = split_lines(text);
  for (size_t i = 0; i < ls.size(); ++i) {
    const size_t ln = i + 1;
    const std::vector<std::string_view> t = split_ws(ls[i]);
    if (t.empty() || comment(t[0])) continue;
    ResultLine r;
    r.line = ln;
    if (t[0][0] == '{') {
      const Json j = json_line(ls[i], name, ln);
      r.d = static_cast<uint32_t>(json_uint(j, "d", name, ln, 32));
      if (j.contains("flags")) r.flags = static_cast<uint8_t>(json_uint(j, "flags", name, ln, 8));
    } else {
      if (t.size() > 2) bad(name, ln, "expected '<D hex> [<flags hex>]', got " + std::to_string(t.size()) + " fields");
      uint64_t v;
      if (!parse_hex(t[0], v, 32)) bad(name, ln, "D '" + std::string(t[0]) + "' is not 1 to 8 hex digits");
      r.d = static_cast<uint32_t>(v);
      if (t.size() == 2) {
        if (!parse_hex(t[1], v, 8)) bad(name, ln, "flags '" + std::string(t[1]) + "' is not 1 or 2 hex digits");
        r.flags = static_cast<uint8_t>(v);
      }
    }
    out.push_back(r);
  }
  return out;
}

LinesCheck check_lines(const LineFile& lines, const std::vector<ResultLine>& results, std::string_view results_name) {
  const size_t n = lines.instructions.size();
  if (results.size() < n) {
    const Instruction& miss = lines.instructions[results.size()];
    throw std::runtime_error(std::string(results_name) + ":" +
                             std::to_string(results.empty() ? 1 : results.back().line + 1) + ": results end after " +
                             std::to_string(results.size()) + " line(s); the lines file has " + std::to_string(n) +
                             " instructions (the next: " + miss.case_id + " [" + std::to_string(miss.m) + ", " +
                             std::to_string(miss.n) + "] instruction " + std::to_string(miss.index) + ")");
  }
  if (results.size() > n)
    throw std::runtime_error(std::string(results_name) + ":" + std::to_string(results[n].line) +
                             ": a result beyond the " + std::to_string(n) + " instructions of the lines file");
  LinesCheck r;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& ins = lines.instructions[i];
    const ResultLine& got = results[i];
    ++r.compared;
    const bool d_diff = got.d != ins.d, f_diff = got.flags && *got.flags != ins.flags;
    if (!d_diff && !f_diff) continue;
    ++r.differing;
    if (r.first) continue;
    r.first = i;
    const bool word = ins.cfg.kind->scale_word32;
    auto& o = r.report;
    o.push_back("DIFFER " + ins.case_id + " [" + std::to_string(ins.m) + ", " + std::to_string(ins.n) + "] instruction " +
                std::to_string(ins.index) + " of " + std::to_string(ins.count) + " (lines line " +
                std::to_string(lines.line_numbers[i]) + ", results line " + std::to_string(got.line) + ")");
    o.push_back("  config: " + vectors::config_tag(ins.cfg) + " " + std::string(model_name(ins.cfg.model)) + " (word " +
                hex(config_word(ins.cfg), 8) + ")");
    const std::optional<uint64_t> u = vectors::ulp_distance(ins.d, got.d);
    o.push_back("  D: expected " + hex(ins.d, 8) + " (" + value_text(f32(ins.d)) + "), got " + hex(got.d, 8) + " (" +
                value_text(f32(got.d)) + "), " + (u ? std::to_string(*u) + " ulp" : std::string("ulp n/a (NaN)")));
    if (got.flags)
      o.push_back("  flags: expected " + hex(ins.flags, 2) + " (" + flag_names(ins.flags) + "), got " + hex(*got.flags, 2) +
                  " (" + flag_names(*got.flags) + ")");
    o.push_back("  C: " + hex(ins.c, 8) + " (" + value_text(f32(ins.c)) + ")" +
                (ins.index > 0 ? " = the expected D of instruction " + std::to_string(ins.index - 1) : ""));
    o.push_back("  A codes: " + codes_list(ins.a));
    o.push_back("  B codes: " + codes_list(ins.b));
    o.push_back("  A scales: " + scales_list(ins.sa, word) + "   B scales: " + scales_list(ins.sb, word));
  }
  return r;
}

}  // namespace fp4sim::lines
