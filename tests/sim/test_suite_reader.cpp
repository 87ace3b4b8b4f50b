// The header-only suite reader (fp4sim/suite_reader.hpp, for kernel test binaries) against fp4sim's
// own readers on generated suites: the same cases, codes, scales, inputs, C, alpha and expected bits;
// its CRC-32, .npy and JSON parsers against io::crc32, io::parse_npy and nlohmann; its nibble and
// scale-atom layouts against golden's layout.hpp; damaged files refused by both.
#include "fp4sim/suite_reader.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/layout.hpp"
#include "fp4sim/mma.hpp"

namespace fs = std::filesystem;
namespace sr = fp4sim::suite;
using fp4sim::test::Dir;

namespace {

// smoke (float-sourced cases, every format), corners (specials, one- and two-row B) and random with
// M = N = 20 (not a multiple of anything), generated once by the CLI.
class SuiteReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new Dir("suite_reader");
    for (const char* args : {"vectors --suite smoke --seed 3 --out smoke", "vectors --suite corners --out corners",
                             "vectors --suite random --size 20 --seed 9 --out random"}) {
      const fp4sim::test::Result r = dir_->run(args);
      ASSERT_EQ(r.code, 0) << args << ": " << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path path(const std::string& name) { return *dir_ / name; }
  static Dir* dir_;
};
Dir* SuiteReaderTest::dir_ = nullptr;

std::vector<uint32_t> float_bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float f : v) out.push_back(std::bit_cast<uint32_t>(f));
  return out;
}

TEST_F(SuiteReaderTest, EveryCaseEqualsTheRealReaders) {
  using namespace fp4sim;
  for (const char* name : {"smoke", "corners", "random"}) {
    const sr::Suite s(path(name).string());
    const vectors::SuiteReader real(path(name));
    ASSERT_EQ(s.cases().size(), real.size()) << name;
    EXPECT_EQ(s.manifest().suite, name);
    for (size_t i = 0; i < real.size(); ++i) {
      const vectors::LoadedCase lc = real.load(i);
      ASSERT_TRUE(lc.problems.empty()) << lc.id;
      const vectors::VectorCase& v = lc.data;
      const sr::CaseData d = s.load_case(i);
      const sr::CaseInfo& c = *d.info;
      SCOPED_TRACE(c.id);
      EXPECT_EQ(c.id, v.id);
      EXPECT_EQ(c.cls, v.cls);
      EXPECT_EQ(c.kind, v.cfg.kind->name);
      EXPECT_EQ(c.elem_a, v.cfg.elem_a->name);
      EXPECT_EQ(c.elem_b, v.cfg.elem_b->name);
      EXPECT_EQ(c.scale_type, v.cfg.scale->name);
      EXPECT_EQ(c.block, v.cfg.block);
      EXPECT_EQ(c.instruction_k, v.cfg.kind->k);
      EXPECT_EQ(c.scale_words(), v.cfg.kind->scale_word32);
      EXPECT_EQ(std::make_tuple(c.M, c.N, c.K), std::make_tuple(v.M, v.N, v.K));
      EXPECT_EQ(c.rows, v.row_notes);
      EXPECT_EQ(c.cols, v.col_notes);
      EXPECT_EQ(std::bit_cast<uint32_t>(d.alpha), std::bit_cast<uint32_t>(v.alpha));
      EXPECT_EQ(float_bits(d.c), float_bits(v.c));
      for (auto [side, op, ref, rows, elem] :
           {std::make_tuple('a', &d.a, &v.a, v.M, v.cfg.elem_a), std::make_tuple('b', &d.b, &v.b, v.N, v.cfg.elem_b)}) {
        SCOPED_TRACE(side);
        EXPECT_EQ(op->codes, ref->codes);
        EXPECT_EQ(op->scales, ref->scales);
        EXPECT_EQ(float_bits(op->input), float_bits(ref->input));
        // The stored packed bytes and atom buffer, unpacked by the header, give the codes and scales.
        if (elem->bits == 4) {
          ASSERT_EQ(op->packed.size(), rows * ((v.K + 1) / 2));
          EXPECT_EQ(sr::unpack_nibbles_rows(op->packed.data(), rows, v.K), ref->codes);
          EXPECT_EQ(op->packed, pack_nibbles_rows(ref->codes, rows, v.K));
        } else {
          EXPECT_TRUE(op->packed.empty());
        }
        if (!v.cfg.kind->scale_word32) {
          const size_t nblk = v.K / static_cast<size_t>(v.cfg.block);
          const std::vector<uint8_t> s8 = sr::scales_from_atom(op->scales_atom.data(), op->scales_atom.size(), rows, nblk);
          EXPECT_EQ(std::vector<uint32_t>(s8.begin(), s8.end()), ref->scales);
        }
      }
      ASSERT_EQ(d.expected.size(), v.models.size());
      for (size_t m = 0; m < v.models.size(); ++m) {
        EXPECT_EQ(d.expected[m].first, model_name(v.models[m]));
        EXPECT_EQ(d.expected[m].second, float_bits(v.expected[m]));
      }
    }
  }
}

// The padding rule of docs/vectors.md (suite_reader.hpp's pad_case): every suite case padded past a
// tcgen05 tile (M to 128 rows, N to 16, K by at least one more instruction, to a multiple of 256) gives
// the same bits in D[m < M, n < N] for every model. Zero-filling A's extra K columns instead (+0
// products) is shown to change some outputs (a -0 becomes +0), so the check can see a wrong rule.
TEST_F(SuiteReaderTest, PaddingToTileShapesKeepsEveryBit) {
  using namespace fp4sim;
  size_t outputs = 0, zero_fill_changed = 0;
  for (const char* name : {"smoke", "corners", "random"}) {
    const sr::Suite s(path(name).string());
    const vectors::SuiteReader real(path(name));
    for (size_t i = 0; i < s.cases().size(); ++i) {
      const sr::CaseData d = s.load_case(i);
      const sr::CaseInfo& c = *d.info;
      const MmaConfig cfg = real.load(i).data.cfg;
      const size_t ik = static_cast<size_t>(c.instruction_k);
      const size_t M2 = round_up(c.M + 1, 128), N2 = round_up(c.N + 1, 16), K2 = round_up(c.K + ik, 256);
      const sr::PaddedCase p = sr::pad_case(d, M2, N2, K2);
      SCOPED_TRACE(c.id);
      ASSERT_EQ(p.a.codes.size(), M2 * K2);
      if (!p.a.packed.empty()) {
        EXPECT_EQ(sr::unpack_nibbles_rows(p.a.packed.data(), M2, K2), p.a.codes);
      }
      if (!c.scale_words()) {
        const std::vector<uint8_t> s8(p.b.scales.begin(), p.b.scales.end());
        EXPECT_EQ(p.b.scales_atom, scales_to_atom(s8, N2, K2 / static_cast<size_t>(c.block)));
      }
      sr::OperandData zero_a = p.a;  // the wrong rule: +0 in A's padded K columns
      for (size_t m = 0; m < c.M; ++m)
        for (size_t k = c.K; k < K2; ++k) zero_a.codes[m * K2 + k] = 0;
      for (const auto& [model_name_, want] : d.expected) {
        Model model{};
        ASSERT_TRUE(parse_model(model_name_, model));
        const std::vector<float> got = gemm(cfg, model, M2, N2, K2, p.a.codes, std::span<const uint32_t>(p.a.scales),
                                            p.b.codes, std::span<const uint32_t>(p.b.scales), p.c, d.alpha);
        const std::vector<float> zf = gemm(cfg, model, M2, N2, K2, zero_a.codes, std::span<const uint32_t>(p.a.scales),
                                           p.b.codes, std::span<const uint32_t>(p.b.scales), p.c, d.alpha);
        for (size_t m = 0; m < c.M; ++m)
          for (size_t n = 0; n < c.N; ++n) {
            ++outputs;
            EXPECT_EQ(std::bit_cast<uint32_t>(got[m * N2 + n]), want[m * c.N + n]) << model_name_ << " " << m << "," << n;
            zero_fill_changed += std::bit_cast<uint32_t>(zf[m * N2 + n]) != want[m * c.N + n];
          }
      }
    }
  }
  EXPECT_GT(outputs, 10000u);
  EXPECT_GT(zero_fill_changed, 0u);
}

TEST(SuiteReaderParts, Crc32MatchesIoCrc32) {
  const std::string check = "123456789";
  EXPECT_EQ(sr::crc32(reinterpret_cast<const uint8_t*>(check.data()), check.size()), 0xCBF43926u);
  std::mt19937_64 rng(1);
  for (size_t n : {0, 1, 7, 64, 1000, 65537}) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    EXPECT_EQ(sr::crc32(b), fp4sim::io::crc32(b)) << n;
    // Incremental, as zlib's.
    const size_t h = n / 3;
    EXPECT_EQ(sr::crc32(b.data() + h, n - h, sr::crc32(b.data(), h)), fp4sim::io::crc32(b)) << n;
  }
}

TEST(SuiteReaderParts, LayoutsMatchGolden) {
  std::mt19937_64 rng(2);
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1, 1}, {3, 7}, {5, 64}, {130, 33}}) {
    std::vector<uint8_t> codes(rows * cols);
    for (auto& c : codes) c = static_cast<uint8_t>(rng() & 0xF);
    const std::vector<uint8_t> p = sr::pack_nibbles_rows(codes.data(), rows, cols);
    EXPECT_EQ(p, fp4sim::pack_nibbles_rows(codes, rows, cols));
    EXPECT_EQ(sr::unpack_nibbles_rows(p.data(), rows, cols), codes);
  }
  for (auto [rows, scols] : {std::pair<size_t, size_t>{1, 1}, {8, 4}, {33, 5}, {129, 9}, {300, 2}}) {
    std::vector<uint8_t> s(rows * scols);
    for (auto& x : s) x = static_cast<uint8_t>(rng());
    EXPECT_EQ(sr::scale_atom_bytes(rows, scols), fp4sim::scale_atom_bytes(rows, scols));
    const std::vector<uint8_t> a = sr::scales_to_atom(s.data(), rows, scols);
    EXPECT_EQ(a, fp4sim::scales_to_atom(s, rows, scols));
    EXPECT_EQ(sr::scales_from_atom(a.data(), a.size(), rows, scols), s);
    for (size_t r = 0; r < rows; r += 7)
      for (size_t c = 0; c < scols; ++c) EXPECT_EQ(sr::scale_atom_offset(r, c, scols), fp4sim::scale_atom_offset(r, c, scols));
  }
  EXPECT_THROW(sr::scales_from_atom(nullptr, 511, 1, 1), sr::Error);
}

std::vector<uint8_t> npy(int major, const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) f.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  f.insert(f.end(), header.begin(), header.end());
  f.resize(f.size() + data_bytes, 0x5A);
  return f;
}

TEST(SuiteReaderParts, NpyAgreesWithIoParseNpy) {
  // Accepted by both, with the same dtype, shape and bytes.
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> good = {
      {npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24), "float32"},
      {npy(2, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,)}", 5), "uint8"},
      {npy(1, "{'shape': (), 'fortran_order': False, 'descr': '<u4'}", 4), "uint32"},
      {npy(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (0, 4), }", 0), "uint16"},
  };
  for (const auto& [f, dt] : good) {
    const sr::Array a = sr::parse_npy(f, "t.npy");
    const fp4sim::io::NpyArray b = fp4sim::io::parse_npy(f, "t.npy");
    EXPECT_EQ(a.dtype, dt);
    EXPECT_EQ(a.dtype, fp4sim::io::dtype_name(b.dtype));
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.data, b.data);
  }
  // Refused by both, and the header's message names the file.
  const std::vector<std::vector<uint8_t>> bad = {
      {},
      {0x93, 'N', 'U', 'M'},
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 23),        // truncated data
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 25),        // trailing data
      npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4),           // big endian
      npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8),           // float64
      npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", 4),            // Fortran order
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", 12),           // not a tuple
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0),
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", 0),
      npy(1, "{'descr': '<f4', 'fortran_order': False}", 0),                            // no shape
      npy(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4),
      npy(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4),           // version 4.0
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_THROW(fp4sim::io::parse_npy(bad[i], "t.npy"), fp4sim::io::NpyError) << i;
    try {
      sr::parse_npy(bad[i], "t.npy");
      ADD_FAILURE() << "accepted bad file " << i;
    } catch (const sr::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("t.npy: ", 0), 0u) << e.what();
    }
  }
}

// The header's .npy writer: every dtype it reads, read back by fp4sim's io::read_npy and by its own
// reader; header padded so the data starts 64-aligned (the NPY format's rule since NumPy 1.14).
TEST(SuiteReaderParts, NpyWriterRoundTripsThroughBothReaders) {
  Dir d("npy_writer");
  const std::string dir = d.work().string();
  const std::vector<float> f = {1.0f, -0.0f, std::bit_cast<float>(0x7FFFFFFFu), 3.5f, 1e-40f, -2.0f};
  const std::vector<uint8_t> u8 = {0, 1, 127, 255, 16};
  const std::vector<uint16_t> u16 = {0, 65535, 258};
  const std::vector<uint32_t> u32 = {0xDEADBEEFu, 0u, 1u, 0x7FFFFFFFu};
  sr::write_npy(dir + "/f.npy", f, {2, 3});
  sr::write_npy(dir + "/u8.npy", u8, {5});
  sr::write_npy(dir + "/u16.npy", u16, {1, 3});
  sr::write_npy(dir + "/u32.npy", u32, {2, 1, 2});
  sr::write_npy(dir + "/empty.npy", std::vector<float>{}, {0, 4});
  struct Want {
    const char* file;
    fp4sim::io::DType dtype;
    const char* name;
    std::vector<size_t> shape;
    std::vector<uint8_t> bytes;
  };
  auto raw = [](const auto& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    return std::vector<uint8_t>(p, p + v.size() * sizeof(v[0]));
  };
  const Want wants[] = {{"f.npy", fp4sim::io::DType::F32, "float32", {2, 3}, raw(f)},
                        {"u8.npy", fp4sim::io::DType::U8, "uint8", {5}, raw(u8)},
                        {"u16.npy", fp4sim::io::DType::U16, "uint16", {1, 3}, raw(u16)},
                        {"u32.npy", fp4sim::io::DType::U32, "uint32", {2, 1, 2}, raw(u32)},
                        {"empty.npy", fp4sim::io::DType::F32, "float32", {0, 4}, {}}};
  for (const Want& w : wants) {
    const std::string p = dir + "/" + w.file;
    const fp4sim::io::NpyArray a = fp4sim::io::read_npy(p);
    EXPECT_EQ(a.dtype, w.dtype) << w.file;
    EXPECT_EQ(a.shape, w.shape) << w.file;
    EXPECT_EQ(a.data, w.bytes) << w.file;
    const sr::Array b = sr::read_npy(p);
    EXPECT_EQ(b.dtype, w.name) << w.file;
    EXPECT_EQ(b.shape, w.shape) << w.file;
    EXPECT_EQ(b.data, w.bytes) << w.file;
    const std::vector<uint8_t> file = sr::read_file(p);
    EXPECT_EQ((file.size() - w.bytes.size()) % 64, 0u) << w.file;
    EXPECT_EQ(file[file.size() - w.bytes.size() - 1], '\n') << w.file;
  }
  // Wrong element count, and a path that cannot be written: an error, and nothing left behind.
  EXPECT_THROW(sr::write_npy(dir + "/bad.npy", f, {4, 2}), sr::Error);
  EXPECT_THROW(sr::write_npy(dir + "/no/such/dir/x.npy", f, {6}), sr::Error);
  EXPECT_FALSE(fs::exists(dir + "/bad.npy"));
  EXPECT_FALSE(fs::exists(dir + "/bad.npy.partial"));
  EXPECT_EQ(d.entries(), (std::set<std::string>{"empty.npy", "f.npy", "u16.npy", "u32.npy", "u8.npy"}));
}

// A harness's outputs written with the header's writer are what `fp4sim check` reads: the expected
// D of every case and model, as a kernel that computed them would save them, checks equal; one bit
// off in one file fails.
TEST_F(SuiteReaderTest, CheckAcceptsOutputsWrittenWithTheNpyWriter) {
  const sr::Suite s(path("corners").string());
  const std::string res = (*dir_ / "npy_results").string();
  size_t files = 0;
  std::string first;
  for (size_t i = 0; i < s.cases().size(); ++i) {
    const sr::CaseInfo& c = s.cases()[i];
    const sr::CaseData d = s.load_case(i);
    for (const auto& [model, bits] : d.expected) {
      std::vector<float> out(bits.size());
      for (size_t e = 0; e < bits.size(); ++e) out[e] = std::bit_cast<float>(bits[e]);
      const std::string rel = "cases/" + c.id + "/d_" + model + ".npy";
      fs::create_directories(fs::path(res) / "cases" / c.id);
      sr::write_npy(res + "/" + rel, out, {c.M, c.N});
      if (first.empty()) first = rel;
      ++files;
    }
  }
  fp4sim::test::Result r = dir_->run("check corners --results npy_results --quiet");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::to_string(files) + " result files compared bit for bit"), std::string::npos) << r.out;
  // One bit flipped in the first file's first element.
  std::vector<float> v = sr::read_npy(res + "/" + first).values<float>();
  v[0] = std::bit_cast<float>(std::bit_cast<uint32_t>(v[0]) ^ 1u);
  const sr::Array a = sr::read_npy(res + "/" + first);
  sr::write_npy(res + "/" + first, v, a.shape);
  r = dir_->run("check corners --results npy_results --quiet");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
}

// The header's JSON value equals nlohmann's, recursively (numbers compared as doubles).
void expect_same(const sr::Json& a, const nlohmann::ordered_json& b, const std::string& where) {
  switch (a.type()) {
    case sr::Json::Type::Null: EXPECT_TRUE(b.is_null()) << where; break;
    case sr::Json::Type::Bool: EXPECT_EQ(a.as_bool(), b.get<bool>()) << where; break;
    case sr::Json::Type::String: EXPECT_EQ(a.as_string(), b.get<std::string>()) << where; break;
    case sr::Json::Type::Number: EXPECT_EQ(a.as_double(), b.get<double>()) << where; break;
    case sr::Json::Type::Array:
      ASSERT_TRUE(b.is_array()) << where;
      ASSERT_EQ(a.size(), b.size()) << where;
      for (size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where + "[" + std::to_string(i) + "]");
      break;
    case sr::Json::Type::Object: {
      ASSERT_TRUE(b.is_object()) << where;
      ASSERT_EQ(a.size(), b.size()) << where;
      auto it = b.begin();
      for (const auto& [k, v] : a.members()) {
        EXPECT_EQ(k, it.key()) << where;  // key order kept
        expect_same(v, it.value(), where + "." + k);
        ++it;
      }
      break;
    }
  }
}

TEST_F(SuiteReaderTest, JsonParserAgreesWithNlohmann) {
  for (const char* name : {"smoke", "corners"}) {
    const std::string text = fp4sim::test::slurp(path(name) / "manifest.json");
    expect_same(sr::Json::parse(text), nlohmann::ordered_json::parse(text), name);
  }
  const std::string misc = R"({"a": [1, -2.5e3, 0, true, false, null, "x\"\\\/\b\f\n\r\tq\u00e9\ud83d\ude00"], "": {}})";
  expect_same(sr::Json::parse(misc), nlohmann::ordered_json::parse(misc), "misc");
  EXPECT_EQ(sr::Json::parse("18446744073709551615").as_u64(), 18446744073709551615ull);
  EXPECT_THROW(sr::Json::parse("18446744073709551616").as_u64(), sr::Error);
  for (const std::string& bad : std::vector<std::string>{"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "tru",
                                "[1] 2", "\"a\nb\"", "{1: 2}", std::string(100000, '[')}) {
    EXPECT_THROW(sr::Json::parse(bad), sr::Error) << bad.substr(0, 20);
    EXPECT_FALSE(nlohmann::ordered_json::accept(bad)) << bad.substr(0, 20);
  }
}

TEST_F(SuiteReaderTest, DamagedFilesAreRefusedByBothReaders) {
  fs::copy(path("smoke"), path("damaged"), fs::copy_options::recursive);
  const sr::Suite s(path("damaged").string());
  const sr::CaseInfo& c = s.cases().at(1);
  const fs::path f = path("damaged") / c.a.packed;
  std::string bytes = fp4sim::test::slurp(f);
  bytes.back() ^= 0x10;
  std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
  try {
    s.load_case(1);
    ADD_FAILURE() << "damaged file accepted";
  } catch (const sr::Error& e) {
    EXPECT_EQ(std::string(e.what()), c.a.packed + ": CRC mismatch");
  }
  EXPECT_FALSE(fp4sim::vectors::SuiteReader(path("damaged")).load(1).problems.empty());
  EXPECT_NO_THROW(s.load_case(0));
  // A path outside the files table, or outside the suite, is refused before any read.
  EXPECT_THROW(s.load("cases/../manifest.json"), sr::Error);
  EXPECT_THROW(s.load("/etc/passwd"), sr::Error);
  EXPECT_THROW(s.load("cases/nothing.npy"), sr::Error);
  // Not a suite.
  EXPECT_THROW(sr::Suite(path("nothing").string()), sr::Error);
  EXPECT_THROW(sr::parse_manifest("{\"suite_schema\": 2, \"files\": {}, \"cases\": []}"), sr::Error);
}

}  // namespace
