// Golden vector suites (vectors.hpp, `fp4sim vectors`, `fp4sim replay`): every suite replays on
// golden, damaged files are reported by name and never used, the corner suite covers every class
// for every kind with bits derived by hand from SPEC §4, and the single-instruction adapter (the
// RTL / SystemC entry point) reproduces gemm.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/layout.hpp"
#include "cli_harness.hpp"
#include "fp4sim/mma.hpp"

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
using namespace fp4sim;
using namespace fp4sim::vectors;

namespace {

void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }
using test::Dir;
using test::Result;
using test::slurp;


uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

const std::vector<VectorCase>& corners() {
  static const std::vector<VectorCase> v = build_suite(Suite::Corners, {});
  return v;
}

const VectorCase* find_case(const std::vector<VectorCase>& cases, const std::string& tag, const std::string& cls) {
  for (const VectorCase& c : cases)
    if (config_tag(c.cfg) == tag && c.cls == cls) return &c;
  return nullptr;
}

// Row of A whose note starts with `prefix` (the generator documents every row).
size_t row_of(const VectorCase& c, const std::string& prefix) {
  for (size_t i = 0; i < c.row_notes.size(); ++i)
    if (c.row_notes[i].rfind(prefix, 0) == 0) return i;
  ADD_FAILURE() << c.id << ": no row '" << prefix << "'";
  return 0;
}

uint32_t out(const VectorCase& c, Model m, size_t row, size_t col = 0) {
  for (size_t k = 0; k < c.models.size(); ++k)
    if (c.models[k] == m) return bits(c.expected[k][row * c.N + col]);
  ADD_FAILURE() << c.id << ": no model " << model_name(m);
  return 0;
}

// Writes a small suite (smoke) with the CLI and returns the case ids in order.
std::vector<std::string> write_smoke(const Dir& d, const std::string& name) {
  const Result r = d.run("vectors --suite smoke --out " + name);
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> ids;
  const io::Json m = io::read_manifest(d / name);
  for (const auto& c : m["cases"]) ids.push_back(c["id"].get<std::string>());
  return ids;
}

// Rewrites one file and patches its manifest record so size and CRC match again: a file that is
// intact on disk but whose content is wrong.
void rewrite_with_valid_crc(const fs::path& suite, const std::string& rel, const std::string& bytes) {
  spit(suite / rel, bytes);
  io::Json m = io::read_manifest(suite);
  m["files"][rel]["bytes"] = bytes.size();
  m["files"][rel]["crc32"] = io::crc32_hex(io::crc32(bytes));
  io::write_manifest(suite, m);
}

void expect_replay_error(const Result& r, const std::string& id, const std::string& needle) {
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ERROR " + id), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << r.out;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("could not be checked"), std::string::npos) << r.err;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Suites end to end

TEST(VectorSuites, EverySuiteWritesAndReplaysOnGolden) {
  Dir d("vectors");
  const std::vector<std::pair<std::string, std::string>> suites = {
      {"smoke", ""}, {"corners", ""}, {"random", " --size 5 --seed 3"}, {"llm", " --size 64 --seed 2"}, {"quant", " --seed 4"}};
  for (const auto& [name, extra] : suites) {
    SCOPED_TRACE(name);
    const Result w = d.run("vectors --suite " + name + " --out " + name + extra);
    ASSERT_EQ(w.code, 0) << w.err;
    EXPECT_NE(w.out.find("suite " + name), std::string::npos) << w.out;
    // Every file matches its manifest record (the same check `quantize` output gets).
    EXPECT_EQ(io::verify_manifest(d / name), std::vector<std::string>{});
    const size_t n = io::read_manifest(d / name)["cases"].size();
    ASSERT_GT(n, 0u);
    for (const char* target : {"golden", "golden-dot"}) {
      const Result r = d.run("replay " + name + " --target " + target);
      EXPECT_EQ(r.code, 0) << r.out << r.err;
      EXPECT_TRUE(r.err.empty()) << r.err;
      EXPECT_NE(r.out.find(std::to_string(n) + " cases, " + std::to_string(n) + " pass, 0 fail, 0 error"),
                std::string::npos)
          << r.out;
      EXPECT_EQ(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')), n + 1);  // one line per case
    }
    const Result q = d.run("replay --dir " + name + " --target golden --quiet");
    EXPECT_EQ(q.code, 0);
    EXPECT_EQ(std::count(q.out.begin(), q.out.end(), '\n'), 1);  // the summary only
  }
}

TEST(VectorSuites, ManifestIsSelfDescribing) {
  Dir d("vectors");
  ASSERT_EQ(d.run("vectors --suite llm --size 64 --seed 9 --out s").code, 0);
  const io::Json m = io::read_manifest(d / "s");
  EXPECT_EQ(m["suite"], "llm");
  EXPECT_EQ(m["seed"], 9);
  EXPECT_EQ(m["size"], 64);
  EXPECT_EQ(m["suite_schema"], kSuiteSchema);
  EXPECT_NE(m["conventions"]["nibble_order"].get<std::string>().find("low nibble = even element"), std::string::npos);
  EXPECT_TRUE(m["conventions"].contains("scales_atom"));
  const io::Json& c = m["cases"][0];  // nvfp4-paper Fprop
  EXPECT_EQ(c["kind"], "mxf4nvf4");
  EXPECT_EQ(c["scale_type"], "ue4m3");
  EXPECT_EQ(c["block"], 16);
  EXPECT_EQ(c["a"]["source"], "float");
  EXPECT_EQ(c["a"]["quant"]["format"], "nvfp4");
  EXPECT_EQ(c["b"]["quant"]["2d"], true);  // W with 16x16 tiles
  EXPECT_EQ(c["a"]["quant"]["seed"], 9);
  EXPECT_NE(c["alpha"].get<float>(), 1.0f);
  EXPECT_EQ(c["alpha_bits"].get<std::string>().size(), 10u);
  const float ga = c["a"]["quant"]["global_scale"].get<float>(), gb = c["b"]["quant"]["global_scale"].get<float>();
  EXPECT_EQ(c["alpha"].get<float>(), ga * gb);  // alpha = S_dec_A * S_dec_B, one FP32 rounding
  std::set<std::string> models;
  for (const auto& [k, v] : c["expected"].items()) models.insert(k);
  EXPECT_EQ(models, (std::set<std::string>{"blackwell", "exact", "fp32-seq"}));
  // The Wgrad case of the NVFP4 recipe: RHT-16 on both operands, SR on dY^T only.
  const io::Json& w = m["cases"][2];
  EXPECT_EQ(w["class"], "llm-wgrad");
  EXPECT_EQ(w["a"]["quant"]["rht"], 16);
  EXPECT_EQ(w["b"]["quant"]["rht"], 16);
  EXPECT_EQ(w["a"]["quant"]["rounding"], "sr");
  EXPECT_EQ(w["b"]["quant"]["rounding"], "rne");
  // CRC of every listed file = zlib CRC-32 of the whole file.
  for (const auto& [rel, rec] : m["files"].items()) {
    const std::string b = slurp(d / "s" / rel);
    EXPECT_EQ(rec["crc32"], io::crc32_hex(io::crc32(b))) << rel;
    EXPECT_EQ(rec["bytes"], b.size()) << rel;
  }
}

TEST(VectorSuites, DeterministicAndSeeded) {
  Dir d("vectors");
  ASSERT_EQ(d.run("vectors --suite random --size 4 --seed 1 --out a").code, 0);
  ASSERT_EQ(d.run("vectors --suite random --size 4 --seed 1 --out b --threads 1").code, 0);
  ASSERT_EQ(d.run("vectors --suite random --size 4 --seed 2 --out c").code, 0);
  const io::Json ma = io::read_manifest(d / "a"), mb = io::read_manifest(d / "b"), mc = io::read_manifest(d / "c");
  EXPECT_EQ(ma["files"], mb["files"]);  // same bytes (sizes and CRCs) with any thread count
  EXPECT_EQ(ma["cases"], mb["cases"]);
  EXPECT_NE(ma["files"], mc["files"]);
  // In process: the same cases again.
  SuiteOptions o;
  o.seed = 1;
  o.size = 4;
  const std::vector<VectorCase> x = build_suite(Suite::Random, o), y = build_suite(Suite::Random, o);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].a.codes, y[i].a.codes);
    EXPECT_EQ(x[i].b.scales, y[i].b.scales);
    for (size_t k = 0; k < x[i].expected.size(); ++k)
      for (size_t e = 0; e < x[i].expected[k].size(); ++e)
        ASSERT_EQ(bits(x[i].expected[k][e]), bits(y[i].expected[k][e]));
  }
}

TEST(VectorSuites, StoredLayoutsMatchTheirDefinitions) {
  Dir d("vectors");
  ASSERT_EQ(d.run("vectors --suite random --size 5 --out s").code, 0);
  const io::Json m = io::read_manifest(d / "s");
  size_t atoms = 0, packs = 0;
  for (const auto& c : m["cases"]) {
    const size_t M = c["M"], K = c["K"], nblk = K / c["block"].get<size_t>();
    const std::vector<uint8_t> codes = io::read_npy(d / "s" / c["a"]["codes"].get<std::string>()).values<uint8_t>();
    if (!c["a"]["packed"].is_null()) {
      const std::vector<uint8_t> p = io::read_npy(d / "s" / c["a"]["packed"].get<std::string>()).values<uint8_t>();
      for (size_t r = 0; r < M; ++r)
        for (size_t k = 0; k < K; ++k) {
          const uint8_t byte = p[r * ((K + 1) / 2) + k / 2];
          ASSERT_EQ(k % 2 == 0 ? (byte & 0xF) : (byte >> 4), codes[r * K + k]);  // low nibble = even element
        }
      ++packs;
    }
    if (!c["a"]["scales_atom"].is_null()) {
      const std::vector<uint8_t> s = io::read_npy(d / "s" / c["a"]["scales"].get<std::string>()).values<uint8_t>();
      const std::vector<uint8_t> at = io::read_npy(d / "s" / c["a"]["scales_atom"].get<std::string>()).values<uint8_t>();
      ASSERT_EQ(at.size(), round_up(M, 128) * round_up(nblk, 4));
      std::vector<bool> used(at.size());
      for (size_t r = 0; r < M; ++r)
        for (size_t b = 0; b < nblk; ++b) {
          const size_t off = scale_atom_offset(r, b, nblk);
          ASSERT_EQ(at[off], s[r * nblk + b]);
          used[off] = true;
        }
      for (size_t i = 0; i < at.size(); ++i)
        if (!used[i]) {
          ASSERT_EQ(at[i], 0) << "padding byte " << i;
        }
      ++atoms;
    } else {
      EXPECT_EQ(c["kind"], "hif4");  // only HiF4 words have no atom form
    }
  }
  EXPECT_GT(atoms, 10u);
  EXPECT_GT(packs, 5u);
}

// ---------------------------------------------------------------------------------------------
// Damaged suites

TEST(VectorReplay, DamagedFilesAreReportedByNameAndNeverUsed) {
  Dir d("vectors");
  const std::vector<std::string> ids = write_smoke(d, "clean");
  ASSERT_GE(ids.size(), 4u);
  const size_t n = ids.size();
  struct Damage {
    std::string what;
    size_t case_index;
    std::string file;  // relative to the case directory
    std::string needle;
  };
  const std::vector<Damage> damages = {
      {"flip", 0, "a_codes.npy", "CRC mismatch"},
      {"truncate", 1, "d_blackwell.npy", "truncated"},
      {"delete", 2, "b_scales.npy", "missing"},
      {"append", 3, "c.npy", "size mismatch"},
      {"flip", 12, "b_scales_atom.npy", "CRC mismatch"},
  };
  for (size_t i = 0; i < damages.size(); ++i) {
    const Damage& dm = damages[i];
    SCOPED_TRACE(dm.what + " " + dm.file);
    const std::string name = "dmg" + std::to_string(i);
    fs::copy(d / "clean", d / name, fs::copy_options::recursive);
    const std::string rel = "cases/" + ids[dm.case_index] + "/" + dm.file;
    const fs::path p = d / name / rel;
    std::string b = slurp(p);
    if (dm.what == "flip") b[b.size() - 1] = static_cast<char>(b[b.size() - 1] ^ 0x10);
    if (dm.what == "truncate") b.resize(b.size() - 3);
    if (dm.what == "append") b += '\0';
    if (dm.what == "delete") fs::remove(p);
    else spit(p, b);
    const Result r = d.run("replay " + name + " --target golden");
    expect_replay_error(r, ids[dm.case_index], rel + ": " + dm.needle);
    EXPECT_NE(r.out.find(std::to_string(n - 1) + " pass, 0 fail, 1 error"), std::string::npos) << r.out;
  }

  // Unreadable manifest: one stderr line naming it.
  fs::copy(d / "clean", d / "badjson", fs::copy_options::recursive);
  spit(d / "badjson" / "manifest.json", "{ not json");
  Result r = d.run("replay badjson --target golden");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1u);
  EXPECT_NE(r.err.find("manifest.json"), std::string::npos) << r.err;

  // A file the manifest does not list has no CRC to check: refused.
  fs::copy(d / "clean", d / "unlisted", fs::copy_options::recursive);
  io::Json m = io::read_manifest(d / "unlisted");
  const std::string rel = "cases/" + ids[0] + "/c.npy";
  m["files"].erase(rel);
  io::write_manifest(d / "unlisted", m);
  expect_replay_error(d.run("replay unlisted --target golden"), ids[0], rel + ": not listed");
}

TEST(VectorReplay, WrongContentWithValidCrcIsAMismatchOrAnInconsistency) {
  Dir d("vectors");
  const std::vector<std::string> ids = write_smoke(d, "s");
  // An expected output changed (CRC patched): the comparison catches it and names the bits.
  const std::string rel = "cases/" + ids[0] + "/d_exact.npy";
  const io::NpyArray orig = io::read_npy(d / "s" / rel);
  std::vector<float> v = orig.values<float>();
  const uint32_t was = bits(v[9]);
  v[9] = std::bit_cast<float>(was ^ 1u);
  const std::vector<uint8_t> enc = io::encode_npy<float>(orig.shape, v);
  rewrite_with_valid_crc(d / "s", rel, std::string(enc.begin(), enc.end()));
  Result r = d.run("replay s --target golden");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("FAIL  " + ids[0]), std::string::npos) << r.out;
  const size_t N = orig.shape[1];
  char line[160];
  std::snprintf(line, sizeof line, "exact: 1 of %zu outputs differ; first [%zu, %zu]: expected 0x%08x, got 0x%08x",
                orig.shape[0] * N, size_t{9} / N, size_t{9} % N, was ^ 1u, was);
  EXPECT_NE(r.out.find(line), std::string::npos) << r.out << "\nwanted: " << line;
  EXPECT_NE(r.err.find("1 case(s) failed"), std::string::npos) << r.err;

  // Packed bytes that disagree with the codes (both intact on disk): the case is not used.
  const std::string prel = "cases/" + ids[1] + "/a_packed.npy";
  const io::NpyArray p = io::read_npy(d / "s" / prel);
  std::vector<uint8_t> pv = p.values<uint8_t>();
  pv[0] ^= 0x01;
  const std::vector<uint8_t> penc = io::encode_npy<uint8_t>(p.shape, pv);
  rewrite_with_valid_crc(d / "s", prel, std::string(penc.begin(), penc.end()));
  r = d.run("replay s --target golden");
  EXPECT_NE(r.out.find("ERROR " + ids[1]), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(prel + ": packed bytes disagree"), std::string::npos) << r.out;

  // A 4-bit code that does not fit its width (found by fuzz_suite_loader): one problem line naming
  // the codes file, never an exception from packing it for the packed-bytes comparison.
  const std::string cid = *std::find_if(ids.begin(), ids.end(), [](const std::string& i) {
    return i.find("-mxf4-smoke-codes") != std::string::npos;
  });
  const std::string crel = "cases/" + cid + "/a_codes.npy";
  const io::NpyArray c = io::read_npy(d / "s" / crel);
  std::vector<uint8_t> cv = c.values<uint8_t>();
  cv[0] = 0x20;
  const std::vector<uint8_t> cenc = io::encode_npy<uint8_t>(c.shape, cv);
  rewrite_with_valid_crc(d / "s", crel, std::string(cenc.begin(), cenc.end()));
  r = d.run("replay s --target golden");
  EXPECT_NE(r.out.find("ERROR " + cid), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(crel + ": code at index 0 does not fit"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------------
// The corner suite

TEST(VectorCorners, EveryClassForEveryKind) {
  std::map<std::string, std::set<std::string>> classes;
  for (const VectorCase& c : corners()) classes[config_tag(c.cfg)].insert(c.cls);
  const std::set<std::string> base = {"nan_scale",  "huge_scale", "tiny_scale",       "c_dominating", "exact_cancellation",
                                      "k_chaining", "inf_c",      "subnormal_result", "alpha"};
  const std::vector<std::string> tags = {"mxf4",          "mxf4nvf4-ue4m3-b16", "mxf4nvf4-ue8m0-b32",
                                         "mxf8f6f4-e4m3", "mxf8f6f4-e5m2",      "mxf8f6f4-e2m3",
                                         "mxf8f6f4-e3m2", "mxf8f6f4-e2m1",      "hif4"};
  ASSERT_EQ(classes.size(), tags.size());
  for (const std::string& t : tags) {
    std::set<std::string> want = base;
    want.insert(t == "hif4" ? "rn_boundary" : "trunc_boundary");
    if (t == "mxf4nvf4-ue4m3-b16") want.insert("zero_scale");
    if (t == "mxf8f6f4-e4m3" || t == "mxf8f6f4-e5m2") want.insert("special_elements");
    if (t.rfind("mxf8f6f4-", 0) == 0) want.insert("subnormal_elements");
    EXPECT_EQ(classes[t], want) << t;
  }
  // Each class shows what it is for, in the kind's hardware model.
  for (const VectorCase& c : corners()) {
    SCOPED_TRACE(c.id);
    const Model hw = c.cfg.kind->hardware_model;
    std::vector<uint32_t> d;
    for (size_t i = 0; i < c.M * c.N; ++i) d.push_back(out(c, hw, i / c.N, i % c.N));
    auto any = [&](auto pred) { return std::any_of(d.begin(), d.end(), pred); };
    auto finite = [](uint32_t u) { return (u & 0x7F800000u) != 0x7F800000u; };
    if (c.cls == "nan_scale") {
      EXPECT_TRUE(any([](uint32_t u) { return u == 0x7FFFFFFFu; }));
      EXPECT_TRUE(any(finite));
    }
    if (c.cls == "inf_c") {
      EXPECT_TRUE(any([](uint32_t u) { return u == 0x7F800000u; }));
      EXPECT_TRUE(any([](uint32_t u) { return u == 0xFF800000u; }));
      EXPECT_TRUE(any([](uint32_t u) { return u == 0x7FFFFFFFu; }));
    }
    if (c.cls == "subnormal_result") {
      EXPECT_TRUE(any([](uint32_t u) { return (u & 0x7F800000u) == 0 && (u & 0x7FFFFFu) != 0; }));
    }
    if (c.cls == "exact_cancellation") {
      EXPECT_TRUE(any([](uint32_t u) { return u == 0u; }));
    }
    if (c.cls == "c_dominating") {
      for (size_t m = 0; m < 2; ++m) {
        EXPECT_EQ(d[m * c.N], bits(c.c[m * c.N])) << "row " << m;  // C = +-2^40 wins
      }
    }
    if (c.cls == "trunc_boundary" || c.cls == "k_chaining") {
      bool differs = false;
      for (size_t i = 0; i < d.size(); ++i) differs |= d[i] != out(c, Model::Exact, i / c.N, i % c.N);
      EXPECT_TRUE(differs) << "the hardware model must differ from exact somewhere";
    }
  }
}

// SPEC §4 Blackwell: terms truncated toward zero at 2^(max_e - F); with +1 and -1 cancelling
// under unit scales, max_e = 0, so C = 2^-F survives, 2^-(F+1) vanishes, 3*2^-(F+1) becomes 2^-F
// and its negative -2^-F. The exact model keeps C itself.
TEST(VectorCorners, TruncationBoundaryBitsByHand) {
  size_t seen = 0;
  for (const VectorCase& c : corners()) {
    if (c.cls != "trunc_boundary") continue;
    ++seen;
    SCOPED_TRACE(c.id);
    const int F = c.cfg.kind->frac_bits;
    ASSERT_EQ(F, c.cfg.kind->k == 64 ? 35 : 25);
    const float t = std::ldexp(1.0f, -F);
    const std::string p = "A = +1, -1; C = ";
    const size_t r0 = row_of(c, p + "2^-" + std::to_string(F) + ":");
    const size_t r1 = row_of(c, p + "2^-" + std::to_string(F + 1) + ":");
    const size_t r2 = row_of(c, p + "3*");
    const size_t r3 = row_of(c, p + "-3*");
    EXPECT_EQ(out(c, Model::Blackwell, r0), bits(t));
    EXPECT_EQ(out(c, Model::Blackwell, r1), 0u);
    EXPECT_EQ(out(c, Model::Blackwell, r2), bits(t));
    EXPECT_EQ(out(c, Model::Blackwell, r3), bits(-t));
    for (size_t r : {r0, r1, r2, r3}) {
      EXPECT_EQ(out(c, Model::Exact, r), bits(c.c[r * c.N])) << r;
    }
    if (c.cfg.kind->k == 64) {
      // Zero products still align at exp(sA) + exp(sB) = 0: C = 2^-36 is truncated away.
      EXPECT_EQ(out(c, Model::Blackwell, row_of(c, "A = 0, C = ")), 0u);
    } else {
      // K = 32: a zero element counts at 2^-126, so C alone sets the alignment and survives.
      const size_t r = row_of(c, "A = 0, C = ");
      EXPECT_EQ(out(c, Model::Blackwell, r), bits(c.c[r * c.N]));
    }
    if (config_tag(c.cfg) == "mxf4" || config_tag(c.cfg) == "mxf4nvf4-ue8m0-b32") {
      EXPECT_EQ(out(c, Model::Blackwell, row_of(c, "A = +1 (group 0)")), bits(t));
      EXPECT_EQ(out(c, Model::Blackwell, row_of(c, "same with SA[1]")), 0u);
      EXPECT_EQ(out(c, Model::Exact, row_of(c, "same with SA[1]")), bits(t / 2));
      EXPECT_EQ(out(c, Model::Blackwell, row_of(c, "A[32] = 3")), bits(t));
      EXPECT_EQ(out(c, Model::Exact, row_of(c, "A[32] = 3")), bits(1.5f * t));
    }
    if (config_tag(c.cfg) == "mxf8f6f4-e4m3" || config_tag(c.cfg) == "mxf8f6f4-e5m2") {
      // +P, -P, x with B[2] = smallest element: x * bmin = 2^(e_P - 25) kept, half of it dropped.
      const double P = config_tag(c.cfg) == "mxf8f6f4-e4m3" ? 256.0 : 32768.0;
      const float kept = static_cast<float>(std::ldexp(P, -25));
      size_t rk = c.M, rd = c.M;
      for (size_t i = 0; i < c.M; ++i) {
        if (c.row_notes[i].find("kept") != std::string::npos && c.row_notes[i].rfind("A = +", 0) == 0) rk = i;
        if (c.row_notes[i].find("truncated") != std::string::npos && c.row_notes[i].rfind("A = +", 0) == 0 &&
            c.row_notes[i].find("-3*") == std::string::npos)
          rd = i;
      }
      ASSERT_LT(rk, c.M);
      ASSERT_LT(rd, c.M);
      ASSERT_EQ(c.N, 2u);
      EXPECT_EQ(out(c, Model::Blackwell, rk, 1), bits(kept));
      EXPECT_EQ(out(c, Model::Blackwell, rd, 1), 0u);
      EXPECT_EQ(out(c, Model::Exact, rd, 1), bits(kept / 2));
    }
  }
  EXPECT_EQ(seen, 8u);  // every kind configuration but hif4
}

// Chained instructions: C = 2^(p+24) and one product 2^p per instruction. Each instruction's sum
// C + 2^p is half an ulp above C: Blackwell truncates it (RZ), ascend-hif4 rounds the tie to even
// (C); both drop it twice. exact adds both: C + 2^(p+1), one ulp up.
TEST(VectorCorners, KChainingBitsByHand) {
  size_t seen = 0;
  for (const VectorCase& c : corners()) {
    if (c.cls != "k_chaining") continue;
    ++seen;
    SCOPED_TRACE(c.id);
    EXPECT_EQ(c.K, 2u * static_cast<size_t>(c.cfg.kind->k));
    const size_t r = row_of(c, "C = 2^");
    const float C = c.c[r * c.N];
    const float up = std::nextafter(C, INFINITY);
    EXPECT_EQ(out(c, c.cfg.kind->hardware_model, r), bits(C));
    EXPECT_EQ(out(c, Model::Exact, r), bits(up));
    EXPECT_EQ(out(c, Model::Fp32Seq, r), bits(C));  // each FMA ties to even as well
    const size_t r2 = row_of(c, "C = 2^" + std::to_string(static_cast<int>(std::log2(C))) + ", two products");
    EXPECT_EQ(out(c, c.cfg.kind->hardware_model, r2), bits(up));  // 2 * 2^p inside one instruction is kept
  }
  EXPECT_EQ(seen, 9u);
}

// SPEC §4 mxf8f6f4 (K = 32, 25 fraction bits): the smallest subnormal s of each element type
// (E4M3 0x01 = 2^-9 at exponent 1 - 7 = -6; E5M2 2^-16 at -14; E2M3 2^-3 at 0; E3M2 2^-4 at -2;
// E2M1 2^-1 at 0) times 1.0 under unit scales aligns at that exponent e, so the window's last place
// is 2^(e - 25) and C = -3*2^(e - 27) is truncated to 0: D = s. (Aligned at e - 1 instead, C
// would leave -2^(e - 26): E4M3 D = 2^-9 - 2^-32.) A[1] = 1 times B row 0 (ones): 1 aligns at 2^0,
// C is below 2^-25 and D = 1. A[0] times B[1]: every product has a zero element (exponent -126),
// C alone sets the alignment, D = C.
TEST(VectorCorners, SubnormalElementsBitsByHand) {
  struct Want {
    const char* tag;
    uint32_t d;  // s as FP32 bits
    int e;       // the exponent subnormals align at
  };
  const Want wants[] = {{"mxf8f6f4-e4m3", 0x3B000000u, -6},
                        {"mxf8f6f4-e5m2", 0x37800000u, -14},
                        {"mxf8f6f4-e2m3", 0x3E000000u, 0},
                        {"mxf8f6f4-e3m2", 0x3D800000u, -2},
                        {"mxf8f6f4-e2m1", 0x3F000000u, 0}};
  for (const Want& w : wants) {
    SCOPED_TRACE(w.tag);
    const VectorCase* c = find_case(corners(), w.tag, "subnormal_elements");
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->M, 2u);
    ASSERT_EQ(c->N, 2u);
    const float C = -3.0f * std::ldexp(1.0f, w.e - 27);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(bits(c->c[i]), bits(C)) << i;
    EXPECT_EQ(c->a.codes[0], 0x01u);  // the smallest subnormal is code 1 in every type
    EXPECT_EQ(c->b.codes[c->K + 1], 0x01u);
    EXPECT_EQ(out(*c, Model::Blackwell, 0, 0), w.d);
    EXPECT_EQ(out(*c, Model::Blackwell, 1, 1), w.d);
    EXPECT_EQ(out(*c, Model::Blackwell, 0, 1), bits(C));
    EXPECT_EQ(out(*c, Model::Blackwell, 1, 0), bits(1.0f));
  }
  // The exact model keeps C: E4M3 2^-9 - 3*2^-33 is an FP32 value (24 bits from 2^-10 to 2^-33).
  const VectorCase* e4 = find_case(corners(), "mxf8f6f4-e4m3", "subnormal_elements");
  ASSERT_NE(e4, nullptr);
  EXPECT_EQ(out(*e4, Model::Exact, 0, 0), bits(0x1p-9f - 3 * 0x1p-33f));
}

TEST(VectorCorners, SmallCasesByHand) {
  // HiF4 rounding point: RN(1 + 2^-24) = 1 (tie, even), RN(1 + 3*2^-24) = 1 + 2^-22 (tie, even),
  // RN(1 + 1.25*2^-24) = 1 + 2^-23, RN(-1 - 2^-24) = -1.
  const VectorCase* h = find_case(corners(), "hif4", "rn_boundary");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(out(*h, Model::AscendHif4, 0), bits(1.0f));
  EXPECT_EQ(out(*h, Model::AscendHif4, 1), bits(1.0f + 0x1p-22f));
  EXPECT_EQ(out(*h, Model::AscendHif4, 2), bits(1.0f + 0x1p-23f));
  EXPECT_EQ(out(*h, Model::AscendHif4, 3), bits(-1.0f));

  // UE4M3 scale codes, A = B = 1, K = 64 in 4 blocks of 16: a zero scale removes its 16 products
  // (48 left), the sign bit is ignored (0x80 = zero, 0xB8 = 1.0), 0x01 = 2^-9 gives 48 + 16 * 2^-9.
  const VectorCase* z = find_case(corners(), "mxf4nvf4-ue4m3-b16", "zero_scale");
  ASSERT_NE(z, nullptr);
  for (Model m : {Model::Blackwell, Model::Exact, Model::Fp32Seq}) {
    EXPECT_EQ(out(*z, m, 0), bits(48.0f));
    EXPECT_EQ(out(*z, m, 1), bits(48.0f));
    EXPECT_EQ(out(*z, m, 2), bits(64.0f));
    EXPECT_EQ(out(*z, m, 3), bits(48.0f + 16 * 0x1p-9f));
  }
  // Every SA zero, C = 2^-100: zero-scale groups sit at exponent -126, below C, so C survives.
  EXPECT_EQ(out(*z, Model::Blackwell, row_of(*z, "A = 1, every SA zero, C = 2^-100")), bits(0x1p-100f));

  // NaN scales: NaN whatever the products; the control row gives K (A = B = 1, unit scales).
  for (const VectorCase& c : corners()) {
    if (c.cls != "nan_scale") continue;
    const Model hw = c.cfg.kind->hardware_model;
    EXPECT_EQ(out(c, hw, 0, 0), 0x7FFFFFFFu) << c.id;
    EXPECT_EQ(out(c, hw, 1, 0), 0x7FFFFFFFu) << c.id;  // A = 0, still NaN
    EXPECT_EQ(out(c, hw, 2, 0), bits(static_cast<float>(c.K))) << c.id;
    EXPECT_EQ(out(c, hw, 2, 1), 0x7FFFFFFFu) << c.id;  // through SB
  }
  // Blackwell: a zero result is +0 even when every term is -0 and C = -0; exact keeps -0.
  const VectorCase* e = find_case(corners(), "mxf4", "exact_cancellation");
  ASSERT_NE(e, nullptr);
  const size_t r = row_of(*e, "A = -0 everywhere");
  EXPECT_EQ(out(*e, Model::Blackwell, r), 0u);
  EXPECT_EQ(out(*e, Model::Exact, r), 0x80000000u);
}

// ---------------------------------------------------------------------------------------------
// Replay targets

TEST(VectorReplay, SingleInstructionAdapterReproducesGemm) {
  // In memory over every corner case and a random suite: mma_dot chained one instruction at a
  // time must give gemm's bits for every model the adapter offers.
  std::vector<VectorCase> cases = corners();
  SuiteOptions o;
  o.size = 3;
  for (VectorCase& c : build_suite(Suite::Random, o)) cases.push_back(std::move(c));
  const DotFn dot = [](const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa, const uint32_t* sb,
                       uint32_t c) { return mma_dot(cfg, a, b, sa, sb, c); };
  auto t = make_dot_target("dot", {Model::Blackwell, Model::AscendHif4, Model::Fp32Seq, Model::Exact}, dot);
  size_t exact_skipped = 0, compared = 0;
  for (const VectorCase& c : cases) {
    for (size_t k = 0; k < c.models.size(); ++k) {
      const std::string why = t->cannot_run(c, c.models[k]);
      if (!why.empty()) {
        EXPECT_EQ(c.models[k], Model::Exact) << c.id << ": " << why;
        EXPECT_GT(c.K, static_cast<size_t>(c.cfg.kind->k));  // exact is not a chain of instructions
        ++exact_skipped;
        continue;
      }
      const std::vector<uint32_t> got = t->run(c, c.models[k]);
      ASSERT_EQ(got.size(), c.M * c.N);
      for (size_t e = 0; e < got.size(); ++e)
        ASSERT_EQ(got[e], bits(c.expected[k][e])) << c.id << " " << model_name(c.models[k]) << " output " << e;
      ++compared;
    }
  }
  EXPECT_GT(exact_skipped, 0u);
  EXPECT_GT(compared, 2 * cases.size());

  // Through the reader, on a smoke suite written in process.
  Dir d("vectors");
  const std::vector<VectorCase> smoke = build_suite(Suite::Smoke, {});
  write_suite(d / "s", Suite::Smoke, {}, smoke, {"test"}, false);
  const SuiteReader reader(d / "s");
  ASSERT_EQ(reader.size(), smoke.size());
  ReplayReport rep = replay_suite(reader, *t);
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(rep.pass, smoke.size());

  // A unit that only runs some kinds: the rest is skipped with its reason, the run still passes.
  auto nohif = make_dot_target("nohif", {Model::Blackwell}, dot, [](const MmaConfig& cfg) {
    return cfg.kind->id == MmaKindId::Hif4 ? std::string("no HiF4 datapath") : std::string();
  });
  rep = replay_suite(reader, *nohif);
  EXPECT_TRUE(rep.ok());
  EXPECT_GT(rep.skipped, 0u);
  for (const CaseReport& cr : rep.cases) {
    if (cr.status != CaseReport::Skipped) continue;
    const std::vector<std::string> lines = format_case_report(cr);
    EXPECT_EQ(lines[0].rfind("SKIP  " + cr.id, 0), 0u) << lines[0];
  }

  // A unit with a one-bit bug on kind mxf4 only (finite results come out one ulp off): exactly the
  // mxf4 cases fail, each naming its first bad output.
  auto buggy = make_dot_target("buggy", {Model::Blackwell}, [&](const MmaConfig& cfg, const uint8_t* a, const uint8_t* b,
                                                               const uint32_t* sa, const uint32_t* sb, uint32_t c) {
    const uint32_t r = mma_dot(cfg, a, b, sa, sb, c);
    return cfg.kind->id == MmaKindId::Mxf4 && (r & 0x7F800000u) != 0x7F800000u ? r ^ 1u : r;
  });
  rep = replay_suite(reader, *buggy);
  EXPECT_FALSE(rep.ok());
  size_t mxf4 = 0;
  for (const VectorCase& c : smoke) mxf4 += c.cfg.kind->id == MmaKindId::Mxf4;
  EXPECT_EQ(mxf4, 2u);  // the MXFP4 float case and the mxf4 random-code case
  EXPECT_EQ(rep.fail, mxf4);
  EXPECT_EQ(rep.skipped, 2u);  // the two hif4 cases: this unit offers blackwell only
  EXPECT_EQ(rep.pass, smoke.size() - mxf4 - 2);
  for (const CaseReport& cr : rep.cases) {
    if (cr.status != CaseReport::Fail) continue;
    EXPECT_NE(cr.id.find("-mxf4-"), std::string::npos) << cr.id;
    const std::vector<std::string> lines = format_case_report(cr);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[1].find("blackwell: "), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(" outputs differ; first ["), std::string::npos) << lines[1];
  }

  // A target that throws: an error for that case, not a crash; a target that runs nothing is not ok.
  struct Thrower : ReplayTarget {
    std::string name() const override { return "thrower"; }
    std::string cannot_run(const VectorCase&, Model m) const override { return m == Model::Exact ? "" : "no"; }
    std::vector<uint32_t> run(const VectorCase&, Model) override { throw std::runtime_error("device lost"); }
  } thrower;
  rep = replay_suite(reader, thrower);
  EXPECT_EQ(rep.error, smoke.size());
  EXPECT_NE(format_case_report(rep.cases[0])[1].find("thrower exact: device lost"), std::string::npos);
  struct Nothing : ReplayTarget {
    std::string name() const override { return "nothing"; }
    std::string cannot_run(const VectorCase&, Model) const override { return "unsupported"; }
    std::vector<uint32_t> run(const VectorCase&, Model) override { return {}; }
  } nothing;
  rep = replay_suite(reader, nothing);
  EXPECT_FALSE(rep.ok());
  EXPECT_EQ(rep.skipped, smoke.size());
  EXPECT_EQ(rep.comparisons, 0u);
}

TEST(VectorCli, BadInputsFailWithOneLine) {
  Dir d("vectors");
  ASSERT_EQ(d.run("vectors --suite smoke --out s").code, 0);
  {
    const std::vector<float> x(64, 1.0f);
    const size_t shape[2] = {2, 32};
    io::write_npy<float>(d / "x.npy", shape, x);
  }
  ASSERT_EQ(d.run("quantize --format mxfp4 --input x.npy --out q").code, 0);
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"vectors --suite tiny --out t", 2, "--suite: unknown suite 'tiny' (expected smoke, corners, random, llm or quant)"},
      {"vectors --suite corners --size 4 --out t", 2, "takes no size"},
      {"vectors --suite corners --seed 4 --out t", 2, "--seed: the corners suite is not random"},
      {"vectors --suite llm --size 100 --out t", 2, "multiple of 64"},
      {"vectors --suite random --size 0 --out t", 2, "--size: 0 is out of range"},
      {"vectors --suite smoke", 2, "--out"},
      {"vectors --suite smoke --out s", 1, "s: already exists (use --force to replace it)"},
      {"vectors --suite smoke --out no/dir/t", 1, "no/dir"},
      {"replay s --target fpga", 2, "--target: unknown target 'fpga'"},
      {"replay --target golden", 2, "no suite directory given"},
      {"replay s --dir s --target golden", 2, "give the suite directory once"},
      {"replay s", 2, "--target"},
      {"replay nowhere --target golden", 1, "nowhere/manifest.json"},
      {"replay q --target golden", 1, "not a vector suite manifest"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    const Result r = d.run(args);
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("fp4sim: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(d / "t"));
  }
  // --force replaces a suite with a complete new one; nothing is left staged.
  const Result f = d.run("vectors --suite random --size 2 --out s --force");
  EXPECT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(io::read_manifest(d / "s")["suite"], "random");
  for (const auto& e : fs::directory_iterator(d / ""))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}
