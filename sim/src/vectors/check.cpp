// fp4sim check: a kernel's outputs against a vector suite's expected ones (check.hpp).
#include "fp4sim/io/check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <set>

#include "fp4sim/exact.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/io/quant_explain.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/layout.hpp"

namespace fp4sim::vectors {

namespace fs = std::filesystem;
using io::Json;

namespace {

// One expected output of a case, widened to uint32 for the comparison.
struct Want {
  std::string output, path;
  io::DType dtype = io::DType::F32;
  std::vector<size_t> shape;
  std::vector<uint32_t> bits;
  // Where its elements come from (for the inputs of the first difference).
  char side = 0;       // 'a' / 'b' for quantizer outputs, 0 for D
  enum Kind : uint8_t { D, Codes, Packed, Scales, Atom, Steps } kind = D;
  std::string model;  // D and Steps: the model name
};

std::string fmt_float(uint32_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(std::bit_cast<float>(bits)));
  return buf;
}
std::string float_text(uint32_t bits) { return io::hex32(bits) + " (" + fmt_float(bits) + ")"; }
std::string float_text(float f) { return float_text(std::bit_cast<uint32_t>(f)); }

std::string pos(size_t r, size_t c) {
  // snprintf, not string +: GCC 12 raises a false -Wrestrict on "[" + std::to_string(..) here.
  char buf[48];
  std::snprintf(buf, sizeof buf, "[%zu, %zu]", r, c);
  return buf;
}

// Space-separated hex of a row of codes (2 digits) or scales (2 or 8 digits).
std::string hex_row(const uint32_t* v, size_t n, int digits) {
  std::string s;
  char buf[16];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%0*x", digits, static_cast<unsigned>(v[i]));
    if (i) s += ' ';
    s += buf;
  }
  return s;
}
std::string hex_row(const uint8_t* v, size_t n) {
  std::vector<uint32_t> w(v, v + n);
  return hex_row(w.data(), n, 2);
}

// The expected outputs of one loaded case, in the order the report lists them.
std::vector<Want> expected_outputs(const Json& cj, const VectorCase& v) {
  std::vector<Want> out;
  size_t k = 0;
  for (const auto& [name, path] : cj.at("expected").items()) {
    Want w;
    w.output = "d_" + name;
    w.model = name;
    w.path = path.get<std::string>();
    w.dtype = io::DType::F32;
    w.shape = {v.M, v.N};
    for (float f : v.expected.at(k)) w.bits.push_back(std::bit_cast<uint32_t>(f));
    out.push_back(std::move(w));
    ++k;
  }
  if (cj.contains("expected_steps")) {
    k = 0;
    for (const auto& [name, path] : cj.at("expected").items()) {
      (void)path;
      if (cj["expected_steps"].contains(name) && k < v.steps.size() && !v.steps[k].empty()) {
        Want w;
        w.output = "d_" + name + "_steps";
        w.model = name;
        w.kind = Want::Steps;
        w.path = cj["expected_steps"][name].get<std::string>();
        w.dtype = io::DType::F32;
        w.shape = {v.K / static_cast<size_t>(v.cfg.kind->k), v.M, v.N};
        for (float f : v.steps[k]) w.bits.push_back(std::bit_cast<uint32_t>(f));
        out.push_back(std::move(w));
      }
      ++k;
    }
  }
  const size_t nblk = v.K / static_cast<size_t>(v.cfg.block);
  for (char side : {'a', 'b'}) {
    const Json& oj = cj.at(std::string(1, side));
    if (oj.value("source", "") != "float") continue;  // codes made up by the suite are inputs, not outputs
    const Operand& op = side == 'a' ? v.a : v.b;
    const size_t rows = side == 'a' ? v.M : v.N;
    const std::string pre(1, side);
    auto add = [&](const char* key, Want::Kind kind, io::DType dt, std::vector<size_t> shape,
                   std::vector<uint32_t> bits) {
      if (!oj.contains(key) || !oj[key].is_string()) return;
      Want w;
      w.output = pre + "_" + key;
      w.path = oj[key].get<std::string>();
      w.dtype = dt;
      w.shape = std::move(shape);
      w.bits = std::move(bits);
      w.side = side;
      w.kind = kind;
      out.push_back(std::move(w));
    };
    add("codes", Want::Codes, io::DType::U8, {rows, v.K}, {op.codes.begin(), op.codes.end()});
    if (oj.contains("packed") && oj["packed"].is_string()) {
      const std::vector<uint8_t> p = pack_nibbles_rows(op.codes, rows, v.K);
      add("packed", Want::Packed, io::DType::U8, {rows, (v.K + 1) / 2}, {p.begin(), p.end()});
    }
    const bool words = v.cfg.kind->scale_word32;
    add("scales", Want::Scales, words ? io::DType::U32 : io::DType::U8, {rows, nblk}, op.scales);
    if (!words && oj.contains("scales_atom") && oj["scales_atom"].is_string()) {
      std::vector<uint8_t> s8(op.scales.begin(), op.scales.end());
      const std::vector<uint8_t> atom = scales_to_atom(s8, rows, nblk);
      add("scales_atom", Want::Atom, io::DType::U8, {atom.size()}, {atom.begin(), atom.end()});
    }
  }
  return out;
}

// (row, col) of byte `off` of an atom-layout buffer of a [rows, scols] matrix (layout.hpp's
// scale_atom_offset inverted); past the matrix for padding bytes.
std::pair<size_t, size_t> atom_position(size_t off, size_t scols) {
  const size_t col_tiles = round_up(scols, kAtomCols) / kAtomCols;
  const size_t tile = off / kAtomBytes, in = off % kAtomBytes;
  const size_t r = (tile / col_tiles) * kAtomRows + ((in % 16) / 4) * 32 + in / 16;
  const size_t c = (tile % col_tiles) * kAtomCols + in % 4;
  return {r, c};
}

// What produced element (row, col) of output w: the suite's inputs for it.
void describe_inputs(FileCheck& f, const Want& w, const VectorCase& v, const Json& cj) {
  auto& in = f.inputs;
  if (w.kind == Want::Steps) {
    const size_t s = *f.instruction, m = f.row, n = f.col, kI = static_cast<size_t>(v.cfg.kind->k);
    const size_t S = v.K / kI, MN = v.M * v.N;
    in.emplace_back("instruction", std::to_string(s) + " of " + std::to_string(S) + " (" + w.model +
                                       "): K columns [" + std::to_string(s * kI) + ", " + std::to_string((s + 1) * kI) + ")");
    in.emplace_back("C received" + pos(m, n), s == 0 ? float_text(v.c.at(m * v.N + n)) + " (the case's C)"
                                                     : float_text(w.bits.at((s - 1) * MN + m * v.N + n)) +
                                                           " (instruction " + std::to_string(s - 1) + "'s expected D)");
    if (m < v.row_notes.size()) in.emplace_back("A row " + std::to_string(m), v.row_notes[m]);
    if (n < v.col_notes.size()) in.emplace_back("B row " + std::to_string(n), v.col_notes[n]);
    const size_t B = static_cast<size_t>(v.cfg.block), nblk = v.K / B, spi = kI / B;
    const int sd = v.cfg.kind->scale_word32 ? 8 : 2;
    const std::string cols = "[" + std::to_string(m) + ", " + std::to_string(s * kI) + ":" + std::to_string((s + 1) * kI) + "]";
    in.emplace_back("A" + cols + " codes", hex_row(v.a.codes.data() + m * v.K + s * kI, kI));
    in.emplace_back("A" + cols + " scales", hex_row(v.a.scales.data() + m * nblk + s * spi, spi, sd));
    const std::string colsb = "[" + std::to_string(n) + ", " + std::to_string(s * kI) + ":" + std::to_string((s + 1) * kI) + "]";
    in.emplace_back("B" + colsb + " codes", hex_row(v.b.codes.data() + n * v.K + s * kI, kI));
    in.emplace_back("B" + colsb + " scales", hex_row(v.b.scales.data() + n * nblk + s * spi, spi, sd));
    return;
  }
  if (w.kind == Want::D) {
    const size_t m = f.row, n = f.col;
    in.emplace_back("C" + pos(m, n), float_text(v.c.at(m * v.N + n)));
    in.emplace_back("alpha", float_text(v.alpha));
    if (m < v.row_notes.size()) in.emplace_back("A row " + std::to_string(m), v.row_notes[m]);
    if (n < v.col_notes.size()) in.emplace_back("B row " + std::to_string(n), v.col_notes[n]);
    const size_t nblk = v.K / static_cast<size_t>(v.cfg.block);
    const int sd = v.cfg.kind->scale_word32 ? 8 : 2;
    in.emplace_back("A[" + std::to_string(m) + ", :] codes", hex_row(v.a.codes.data() + m * v.K, v.K));
    in.emplace_back("A[" + std::to_string(m) + ", :] scales", hex_row(v.a.scales.data() + m * nblk, nblk, sd));
    in.emplace_back("B[" + std::to_string(n) + ", :] codes", hex_row(v.b.codes.data() + n * v.K, v.K));
    in.emplace_back("B[" + std::to_string(n) + ", :] scales", hex_row(v.b.scales.data() + n * nblk, nblk, sd));
    return;
  }
  const Operand& op = w.side == 'a' ? v.a : v.b;
  const std::string X(1, static_cast<char>(w.side - 'a' + 'A'));
  const size_t block = static_cast<size_t>(v.cfg.block), nblk = v.K / block;
  const int sd = v.cfg.kind->scale_word32 ? 8 : 2;
  auto scale_of = [&](size_t r, size_t j) { return hex_row(op.scales.data() + r * nblk + j, 1, sd); };
  if (w.kind == Want::Codes || w.kind == Want::Packed) {
    const size_t r = f.row;
    const size_t k0 = w.kind == Want::Codes ? f.col : 2 * f.col;
    const size_t k1 = w.kind == Want::Codes ? k0 + 1 : std::min(k0 + 2, v.K);
    for (size_t k = k0; k < k1; ++k) {
      in.emplace_back(X + " input" + pos(r, k), float_text(op.input.at(r * v.K + k)));
      in.emplace_back(X + " code" + pos(r, k) + " expected", hex_row(op.codes.data() + r * v.K + k, 1));
    }
    in.emplace_back(X + " scale" + pos(r, k0 / block), scale_of(r, k0 / block));
  } else if (!f.padding) {  // Scales, Atom: one block of the input
    const size_t r = f.row, j = f.col;
    float amax = 0.0f;
    for (size_t k = j * block; k < (j + 1) * block; ++k) amax = std::max(amax, std::fabs(op.input.at(r * v.K + k)));
    in.emplace_back(X + " input" + pos(r, j * block) + " .. " + pos(r, (j + 1) * block - 1) + " amax",
                    float_text(amax));
  }
  const Json& oj = cj.at(std::string(1, w.side));
  if (oj.contains("quant") && !oj["quant"].is_null()) {
    in.emplace_back(X + " quant", oj["quant"].dump());
    // The SPEC steps for the element (or block scale): scaled value, neighbours, scales, the rule.
    if (f.padding) return;
    try {
      BlockFormat bf{};
      const QuantOptions qo = quant_options_from_json(oj["quant"], bf);
      const size_t rows = w.side == 'a' ? v.M : v.N;
      if (w.kind == Want::Codes || w.kind == Want::Packed) {
        const size_t k0 = w.kind == Want::Codes ? f.col : 2 * f.col;
        const size_t k1 = w.kind == Want::Codes ? k0 + 1 : std::min(k0 + 2, v.K);
        for (size_t k = k0; k < k1; ++k) {
          const ElementSteps es = explain_element(bf, qo, op.input, rows, v.K, f.row, k);
          for (const auto& [name, val] : es.fields) in.emplace_back(X + pos(f.row, k) + " " + name, val);
        }
      } else {
        const ScaleSteps ss = explain_scale(bf, qo, op.input, rows, v.K, f.row, f.col);
        for (const auto& [name, val] : ss.fields) in.emplace_back(X + " scale" + pos(f.row, f.col) + " " + name, val);
      }
    } catch (const std::exception& e) {
      in.emplace_back(X + " steps", std::string("not available: ") + e.what());
    }
  }
}

// Compares one result file with its expected output.
FileCheck compare(const Want& w, const fs::path& results, const VectorCase& v, const Json& cj) {
  FileCheck f;
  f.path = w.path;
  f.output = w.output;
  f.dtype = std::string(io::dtype_name(w.dtype));
  f.shape = w.shape;
  const fs::path p = results / w.path;
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    f.status = FileCheck::Missing;
    return f;
  }
  const std::string want_text = std::string(io::dtype_name(w.dtype)) + " " + io::shape_string(w.shape);
  io::NpyArray a;
  try {
    a = io::parse_npy(io::read_file(p), p.string());
  } catch (const std::exception& e) {  // IoError, NpyError: both name the file
    f.status = FileCheck::Error;
    f.problem = std::string(e.what()) + " (the suite's " + w.output + " is " + want_text + ")";
    return f;
  }
  if (a.dtype != w.dtype || a.shape != w.shape) {
    f.status = FileCheck::Error;
    f.problem = p.string() + ": " + std::string(io::dtype_name(a.dtype)) + " " + io::shape_string(a.shape) +
                ", expected " + want_text;
    return f;
  }
  const size_t n = w.bits.size(), item = io::dtype_size(w.dtype);
  f.elements = n;
  for (size_t i = 0; i < n; ++i) {
    uint32_t got = 0;
    for (size_t b = item; b-- > 0;) got = got << 8 | a.data[i * item + b];  // little endian
    if (got == w.bits[i]) continue;
    if (f.differing++ == 0) {
      f.index = i;
      f.expected_bits = w.bits[i];
      f.got_bits = got;
    }
  }
  if (f.differing == 0) {
    f.status = FileCheck::Equal;
    return f;
  }
  f.status = FileCheck::Differ;
  if (w.kind == Want::Steps) {
    const size_t MN = w.shape[1] * w.shape[2];
    f.instruction = f.index / MN;
    f.row = f.index % MN / w.shape[2];
    f.col = f.index % w.shape[2];
  } else if (w.kind == Want::Atom) {
    const size_t rows = w.side == 'a' ? v.M : v.N, nblk = v.K / static_cast<size_t>(v.cfg.block);
    std::tie(f.row, f.col) = atom_position(f.index, nblk);
    f.padding = f.row >= rows || f.col >= nblk;
  } else {
    f.row = f.index / w.shape[1];
    f.col = f.index % w.shape[1];
  }
  if (w.dtype == io::DType::F32) f.ulp = ulp_distance(f.expected_bits, f.got_bits);
  describe_inputs(f, w, v, cj);
  return f;
}

std::string clip(const std::string& s, size_t max_len) {
  return s.size() <= max_len ? s : s.substr(0, max_len) + " ... (all of it in --json)";
}

}  // namespace

std::optional<uint64_t> ulp_distance(uint32_t a, uint32_t b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return std::nullopt;
  auto ordered = [](uint32_t x) -> int64_t {
    const int64_t mag = x & 0x7FFFFFFFu;
    return (x >> 31) ? -mag : mag;
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

std::string_view status_name(CaseCheck::Status s) {
  switch (s) {
    case CaseCheck::Equal: return "equal";
    case CaseCheck::Differ: return "differ";
    case CaseCheck::Missing: return "missing";
    case CaseCheck::Error: return "error";
  }
  return "?";
}
std::string_view status_name(FileCheck::Status s) {
  return status_name(static_cast<CaseCheck::Status>(static_cast<uint8_t>(s)));
}

CheckReport check_suite(const fs::path& suite, const fs::path& results) {
  const SuiteReader reader(suite);  // throws IoError naming manifest.json
  std::error_code ec;
  const fs::file_status st = fs::status(results, ec);
  if (!fs::exists(st)) throw io::IoError(results.string() + ": no such results directory");
  if (!fs::is_directory(st)) throw io::IoError(results.string() + ": not a directory");

  CheckReport rep;
  rep.suite = suite.string();
  rep.results = results.string();
  for (size_t i = 0; i < reader.size(); ++i) {
    const LoadedCase lc = reader.load(i);
    CaseCheck cc;
    cc.id = lc.id;
    cc.cls = lc.cls;
    cc.M = lc.data.M;
    cc.N = lc.data.N;
    cc.K = lc.data.K;
    if (!lc.problems.empty()) {
      cc.status = CaseCheck::Error;
      for (const std::string& p : lc.problems) cc.problems.push_back("suite: " + p);
    } else {
      const Json& cj = reader.manifest()["cases"][i];
      std::vector<Want> wants;
      try {
        wants = expected_outputs(cj, lc.data);
      } catch (const std::exception& e) {  // a manifest field SuiteReader::load does not use (e.g. "source")
        cc.problems.push_back("suite: manifest: case " + cc.id + ": " + e.what());
      }
      bool any_error = !cc.problems.empty(), any_differ = false, any_equal = false;
      for (const Want& w : wants) {
        cc.files.push_back(compare(w, results, lc.data, cj));
        const FileCheck& f = cc.files.back();
        any_error |= f.status == FileCheck::Error;
        any_differ |= f.status == FileCheck::Differ;
        any_equal |= f.status == FileCheck::Equal;
        rep.files_compared += f.status == FileCheck::Equal || f.status == FileCheck::Differ;
      }
      // A chained D that differs without its steps file: say how to name the instruction.
      for (FileCheck& f : cc.files) {
        if (f.status != FileCheck::Differ || f.output.rfind("d_", 0) != 0 || f.shape.size() != 2) continue;
        const std::string steps = f.output + "_steps";
        const auto it = std::find_if(cc.files.begin(), cc.files.end(), [&](const FileCheck& s) { return s.output == steps; });
        if (it == cc.files.end() || it->status != FileCheck::Missing) continue;
        const size_t kI = static_cast<size_t>(lc.data.cfg.kind->k), S = lc.data.K / kI;
        f.inputs.emplace_back("instruction chain",
                              "K = " + std::to_string(lc.data.K) + " is " + std::to_string(S) + " instructions of " +
                                  std::to_string(kI) + "; provide " + steps + ".npy (float32 [" + std::to_string(S) +
                                  ", M, N], the accumulator after each instruction, before alpha) to name the one that differs");
      }
      cc.status = any_error    ? CaseCheck::Error
                  : any_differ ? CaseCheck::Differ
                  : any_equal  ? CaseCheck::Equal
                               : CaseCheck::Missing;
    }
    switch (cc.status) {
      case CaseCheck::Equal: ++rep.equal; break;
      case CaseCheck::Differ: ++rep.differ; break;
      case CaseCheck::Missing: ++rep.missing; break;
      case CaseCheck::Error: ++rep.error; break;
    }
    rep.cases.push_back(std::move(cc));
  }

  // Result files the suite does not know: most likely a misspelt case directory or model name,
  // which would otherwise only show up as "missing".
  const Json& files = reader.manifest()["files"];
  if (fs::is_directory(results / "cases", ec)) {
    for (auto it = fs::recursive_directory_iterator(results / "cases", ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->path().extension() != ".npy") continue;
      const std::string rel = fs::relative(it->path(), results, ec).generic_string();
      if (!files.contains(rel)) rep.unexpected.push_back(rel);
    }
    std::sort(rep.unexpected.begin(), rep.unexpected.end());
  }
  return rep;
}

bool all_present_equal(const CheckReport& r) { return r.differ == 0 && r.error == 0 && r.files_compared > 0; }
bool all_equal(const CheckReport& r) { return all_present_equal(r) && r.missing == 0; }

std::string check_report_json(const CheckReport& r) {
  Json j;
  j["tool"] = "fp4sim";
  j["version"] = io::tool_version();
  j["command"] = "check";
  j["suite"] = r.suite;
  j["results"] = r.results;
  j["all_equal"] = all_equal(r);
  j["all_present_equal"] = all_present_equal(r);
  j["cases_total"] = r.cases.size();
  j["equal"] = r.equal;
  j["differ"] = r.differ;
  j["missing"] = r.missing;
  j["error"] = r.error;
  j["files_compared"] = r.files_compared;
  j["unexpected"] = r.unexpected;
  Json cases = Json::array();
  for (const CaseCheck& c : r.cases) {
    Json cj;
    cj["id"] = c.id;
    cj["class"] = c.cls;
    cj["M"] = c.M;
    cj["N"] = c.N;
    cj["K"] = c.K;
    cj["status"] = status_name(c.status);
    cj["problems"] = c.problems;
    Json fa = Json::array();
    for (const FileCheck& f : c.files) {
      Json fj;
      fj["path"] = f.path;
      fj["output"] = f.output;
      fj["status"] = status_name(f.status);
      fj["dtype"] = f.dtype;
      fj["shape"] = f.shape;
      if (f.status == FileCheck::Error) fj["problem"] = f.problem;
      if (f.status == FileCheck::Equal || f.status == FileCheck::Differ) {
        fj["elements"] = f.elements;
        fj["differing"] = f.differing;
      }
      if (f.status == FileCheck::Differ) {
        Json d;
        d["index"] = f.index;
        d["row"] = f.row;
        d["col"] = f.col;
        if (f.padding) d["padding"] = true;
        if (f.instruction) {
          const size_t kI = f.shape.size() == 3 && c.K ? c.K / f.shape[0] : 0;
          d["instruction"] = *f.instruction;
          d["k_columns"] = {*f.instruction * kI, (*f.instruction + 1) * kI};
        }
        d["expected"] = f.dtype == "uint8" ? hex_row(&f.expected_bits, 1, 2) : io::hex32(f.expected_bits);
        d["got"] = f.dtype == "uint8" ? hex_row(&f.got_bits, 1, 2) : io::hex32(f.got_bits);
        if (f.dtype == "float32") {
          d["expected_value"] = fmt_float(f.expected_bits);
          d["got_value"] = fmt_float(f.got_bits);
          d["ulp"] = f.ulp ? Json(*f.ulp) : Json(nullptr);
        }
        Json in = Json::object();
        for (const auto& [k, val] : f.inputs) in[k] = val;
        d["inputs"] = in;
        fj["first_difference"] = d;
      }
      fa.push_back(fj);
    }
    cj["files"] = fa;
    cases.push_back(cj);
  }
  j["cases"] = cases;
  return j.dump(2) + "\n";
}

std::vector<std::string> format_case_check(const CaseCheck& c) {
  static const char* const kTag[] = {"EQUAL  ", "DIFFER ", "MISSING", "ERROR  "};
  std::vector<std::string> out;
  std::string head = std::string(kTag[c.status]) + "  " + c.id;
  if (c.M) head += "  " + std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K);
  std::string compared, absent;
  for (const FileCheck& f : c.files) {
    std::string& list = f.status == FileCheck::Missing ? absent : compared;
    list += (list.empty() ? "" : " ") + f.output;
  }
  if (c.status == CaseCheck::Missing) {
    head += "  no result file (expected any of: " + absent + ")";
  } else {
    if (!compared.empty()) head += "  " + compared;
    if (!absent.empty()) head += "  (not provided: " + absent + ")";
  }
  out.push_back(head);
  const std::string ind = "         ";
  for (const std::string& p : c.problems) out.push_back(ind + p);
  for (const FileCheck& f : c.files) {
    if (f.status == FileCheck::Error) out.push_back(ind + f.problem);
    if (f.status != FileCheck::Differ) continue;
    const bool u8 = f.dtype == "uint8";
    std::string l = ind + f.path + ": " + std::to_string(f.differing) + " of " + std::to_string(f.elements) +
                    " elements differ; first " + (f.instruction ? "instruction " + std::to_string(*f.instruction) + " " + pos(f.row, f.col) + " (index " + std::to_string(f.index) + ")"
                                                  : f.shape.size() == 2 ? pos(f.row, f.col) + " (index " + std::to_string(f.index) + ")"
                                                                      : "byte " + std::to_string(f.index) +
                                                                            (f.padding ? " (atom padding)" : " = scale " + pos(f.row, f.col)));
    if (f.dtype == "float32") {
      l += ": expected " + float_text(f.expected_bits) + ", got " + float_text(f.got_bits) + ", " +
           (f.ulp ? std::to_string(*f.ulp) + " ulp" : std::string("ulp n/a (NaN)"));
    } else {
      l += ": expected " + (u8 ? "0x" + hex_row(&f.expected_bits, 1, 2) : io::hex32(f.expected_bits)) + ", got " +
           (u8 ? "0x" + hex_row(&f.got_bits, 1, 2) : io::hex32(f.got_bits));
    }
    out.push_back(l);
    for (const auto& [k, val] : f.inputs) out.push_back(ind + "  " + k + ": " + clip(val, 96));
  }
  return out;
}

}  // namespace fp4sim::vectors
