// The fp4sim binary, run as a user would (FP4SIM_CLI = its path): quantize output against
// fp4sim::quantize in-process, manifests against the bytes on disk, every error path against
// the contract "exit != 0, one stderr line, nothing left behind".
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "fp4sim/format.hpp"
#include "fp4sim/hadamard.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/layout.hpp"
#include "fp4sim/metrics.hpp"
#include "fp4sim/quant.hpp"
#include "fp4sim/synth.hpp"

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
using namespace fp4sim;

namespace {

using test::Result;
using test::slurp;
using Sandbox = test::Dir;

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint32_t>(v[i]);
  return b;
}

// LLM-like values plus corners every quantizer must get right: exact zeros, -0, a negative value
// that rounds to zero, an FP32 subnormal, a block's worth of large values.
std::vector<float> test_tensor(size_t rows, size_t cols, uint64_t seed) {
  std::vector<float> x = llm_activations(rows, cols, seed);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = -1e-30f;
  x[3] = std::numeric_limits<float>::denorm_min();
  for (size_t i = cols; i < cols + 16 && i < x.size(); ++i) x[i] *= 1e4f;
  return x;
}

std::vector<size_t> with_last(std::vector<size_t> shape, size_t last) {
  shape.back() = last;
  return shape;
}

// Everything `fp4sim quantize` wrote into dir equals the in-process result for the same input
// and options, and the manifest describes the files exactly.
void expect_quantize_output(const fs::path& dir, BlockFormat f, const std::vector<float>& x,
                            const std::vector<size_t>& shape, const QuantOptions& opt) {
  const BlockFormatInfo& fi = info(f);
  const size_t cols = shape.back(), rows = x.size() / cols;
  const size_t B = static_cast<size_t>(fi.block);
  const Quantized q = quantize(f, x, rows, cols, opt);
  const std::vector<float> dq = dequantize(q);
  const bool four_bit = fi.elem->bits == 4;

  std::set<std::string> want{"codes.npy", "scales.npy", "dequant.npy", "manifest.json"};
  if (four_bit) want.insert("packed.npy");
  if (f == BlockFormat::Nvfp4) want.insert("global_scale.npy");
  std::set<std::string> have;
  for (const auto& d : fs::directory_iterator(dir)) have.insert(d.path().filename().string());
  EXPECT_EQ(have, want);

  const io::NpyArray codes = io::read_npy(dir / "codes.npy");
  EXPECT_EQ(codes.dtype, io::DType::U8);
  EXPECT_EQ(codes.shape, shape);
  const std::vector<uint8_t> c = codes.values<uint8_t>();
  EXPECT_EQ(c, q.codes);

  if (four_bit) {
    const io::NpyArray packed = io::read_npy(dir / "packed.npy");
    EXPECT_EQ(packed.dtype, io::DType::U8);
    EXPECT_EQ(packed.shape, with_last(shape, cols / 2));
    const std::vector<uint8_t> p = packed.values<uint8_t>();
    ASSERT_EQ(p.size() * 2, c.size());
    // Low nibble = even element, checked directly rather than through pack_nibbles.
    size_t bad = 0;
    for (size_t i = 0; i < p.size(); ++i)
      bad += (p[i] & 0x0F) != c[2 * i] || (p[i] >> 4) != c[2 * i + 1];
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(p, pack_nibbles_rows(q.codes, rows, cols));
  }

  const io::NpyArray scales = io::read_npy(dir / "scales.npy");
  EXPECT_EQ(scales.shape, with_last(shape, cols / B));
  if (fi.scale_word32) {
    EXPECT_EQ(scales.dtype, io::DType::U32);
    EXPECT_EQ(scales.values<uint32_t>(), q.scale_words);
  } else {
    EXPECT_EQ(scales.dtype, io::DType::U8);
    EXPECT_EQ(scales.values<uint8_t>(), q.scales);
  }

  const io::NpyArray deq = io::read_npy(dir / "dequant.npy");
  EXPECT_EQ(deq.dtype, io::DType::F32);
  EXPECT_EQ(deq.shape, shape);
  EXPECT_EQ(bits(deq.values<float>()), bits(dq));

  if (f == BlockFormat::Nvfp4) {
    const io::NpyArray g = io::read_npy(dir / "global_scale.npy");
    EXPECT_EQ(g.dtype, io::DType::F32);
    EXPECT_EQ(g.shape, (std::vector<size_t>{1}));
    EXPECT_EQ(bits(g.values<float>()), (std::vector<uint32_t>{std::bit_cast<uint32_t>(q.global_scale)}));
  }

  const io::Json m = io::read_manifest(dir);
  EXPECT_EQ(m["tool"], "fp4sim");
  EXPECT_EQ(m["version"], io::tool_version());
  EXPECT_EQ(m["command"], "quantize");
  EXPECT_EQ(m["format"], fi.name);
  EXPECT_EQ(m["element_type"], fi.elem->name);
  EXPECT_EQ(m["scale_type"], fi.scale->name);
  EXPECT_EQ(m["block_size"], fi.block);
  EXPECT_EQ(m["layout"]["nibble_order"], "low nibble = even element");
  EXPECT_EQ(m["layout"]["scale_layout"], "row-major");
  EXPECT_EQ(m["input"]["shape"].get<std::vector<size_t>>(), shape);
  const io::Json& o = m["options"];
  EXPECT_EQ(o["rounding"], rounding_name(effective_rounding(f, opt.rounding)));  // hif4: rne means its half-up
  EXPECT_EQ(o["seed"].get<uint64_t>(), opt.seed);
  EXPECT_EQ(o["stream"].get<uint32_t>(), opt.stream);
  EXPECT_EQ(o["scale_rule"], scale_rule_name(opt.scale_rule));
  EXPECT_EQ(o["pts"], opt.pts ? "on" : "off");
  EXPECT_EQ(o["2d"], opt.two_d);
  EXPECT_EQ(o["rht"], opt.rht);
  EXPECT_EQ(o["rht_bf16"], opt.rht_bf16);
  // Every listed file: CRC-32 and size of the bytes on disk, dtype and shape of the array.
  std::set<std::string> listed;
  for (const auto& [name, rec] : m["files"].items()) {
    listed.insert(name);
    const std::vector<uint8_t> b = io::read_file(dir / name);
    EXPECT_EQ(rec["crc32"], io::crc32_hex(io::crc32(b))) << name;
    EXPECT_EQ(rec["bytes"].get<size_t>(), b.size()) << name;
    const io::NpyArray a = io::parse_npy(b, name);
    EXPECT_EQ(rec["dtype"], io::dtype_name(a.dtype)) << name;
    EXPECT_EQ(rec["shape"].get<std::vector<size_t>>(), a.shape) << name;
  }
  want.erase("manifest.json");
  EXPECT_EQ(listed, want);
  EXPECT_TRUE(io::verify_manifest(dir).empty());
}

struct Case {
  BlockFormat format;
  std::string args;  // after --format F
  QuantOptions opt;
  size_t rows = 6;   // shape [rows / 2, 2, cols]: rank 3
  size_t cols = 128;
};

QuantOptions o_rnd(Rounding r, uint64_t seed = 0, uint32_t stream = 0) {
  QuantOptions o;
  o.rounding = r;
  o.seed = o.rht_seed = seed;
  o.stream = stream;
  return o;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (const BlockFormatInfo& fi : all_block_formats()) v.push_back({fi.id, "", {}});
  QuantOptions o;
  o = {};
  o.pts = false;
  v.push_back({BlockFormat::Nvfp4, "--pts off", o});
  o = {};
  o.two_d = true;
  v.push_back({BlockFormat::Nvfp4, "--2d", o, 40, 64});  // 40 rows: a partial 16-row tile
  o = {};
  o.rht = 16;
  v.push_back({BlockFormat::Nvfp4, "--rht 16", o});
  v.push_back({BlockFormat::Nvfp4, "--rounding sr --seed 0x1234 --stream 7", o_rnd(Rounding::Sr, 0x1234, 7)});
  o = {};
  o.scale_rule = ScaleRule::Ceil;
  v.push_back({BlockFormat::Mxfp4, "--scale-rule rceil", o});
  v.push_back({BlockFormat::Mxfp6E3M2, "--scale-rule ceil", o});  // the alias: same rule, manifest says rceil
  v.push_back({BlockFormat::Mxfp4, "--rounding sr --seed 99 --stream 3", o_rnd(Rounding::Sr, 99, 3)});
  v.push_back({BlockFormat::Mxfp6E2M3, "--rounding rna", o_rnd(Rounding::Rna)});
  v.push_back({BlockFormat::Mxfp6E3M2, "--rounding rz --scale-rule floor", o_rnd(Rounding::Rz)});
  v.push_back({BlockFormat::Mxfp8E5M2, "--rounding rz", o_rnd(Rounding::Rz)});
  o = o_rnd(Rounding::Rne, 3);
  o.rht = 32;
  v.push_back({BlockFormat::Mxfp8E4M3, "--rht 32 --seed 3", o});
  o = o_rnd(Rounding::Rne, 5);
  o.rht = 64;
  o.rht_bf16 = true;
  v.push_back({BlockFormat::Hif4, "--rht 64 --rht-bf16 --seed 5", o});
  v.push_back({BlockFormat::Hif4, "--rounding sr --seed 18446744073709551615",
               o_rnd(Rounding::Sr, 18446744073709551615ull)});
  return v;
}

const std::string kOneLinePrefix = "fp4sim: error: ";

// The error contract: the expected exit code, nothing on stdout, exactly one stderr line that
// starts with "fp4sim: error: " and carries `reason`.
void expect_error(const Result& r, int code, const std::string& reason) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines;
  std::istringstream is(r.err);
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind(kOneLinePrefix, 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(reason), std::string::npos) << lines[0] << "\nwanted: " << reason;
  EXPECT_EQ(r.err.back(), '\n');
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// quantize: outputs

TEST(CliQuantize, EveryFormatAndOptionMatchesInProcess) {
  for (const Case& c : cases()) {
    const std::string fmt(info(c.format).name);
    SCOPED_TRACE(fmt + " " + c.args);
    Sandbox s;
    const std::vector<size_t> shape{c.rows / 2, 2, c.cols};
    const std::vector<float> x = test_tensor(c.rows, c.cols, 17);
    io::write_npy<float>(s.work() / "x.npy", shape, x);
    const Result r = s.run("quantize --format " + fmt + " --input x.npy --out res " + c.args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(s.entries(), (std::set<std::string>{"x.npy", "res"}));  // no staging left
    expect_quantize_output(s.work() / "res", c.format, x, shape, c.opt);
  }
}

TEST(CliQuantize, Bf16InputIsWidenedExactly) {
  Sandbox s;
  const size_t rows = 4, cols = 64;
  std::vector<float> x = test_tensor(rows, cols, 3);
  std::vector<uint16_t> b(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    b[i] = float_to_bf16_rne(x[i]);
    x[i] = bf16_to_float(b[i]);  // the float the CLI must see
  }
  const std::vector<size_t> shape{rows, cols};
  io::write_npy<uint16_t>(s.work() / "xb.npy", shape, b);
  for (const char* f : {"nvfp4", "mxfp4", "hif4"}) {
    SCOPED_TRACE(f);
    const Result r = s.run(std::string("quantize --format ") + f + " --input xb.npy --out r --force");
    ASSERT_EQ(r.code, 0) << r.err;
    BlockFormat bf{};
    ASSERT_TRUE(parse_block_format(f, bf));
    expect_quantize_output(s.work() / "r", bf, x, shape, {});
    const io::Json m = io::read_manifest(s.work() / "r");
    EXPECT_EQ(m["input"]["dtype"], "uint16");
    EXPECT_EQ(m["input"]["interpreted_as"], "bf16 bits");
  }
}

TEST(CliQuantize, RankOneInput) {
  Sandbox s;
  const std::vector<float> x = test_tensor(1, 256, 9);
  io::write_npy<float>(s.work() / "v.npy", std::vector<size_t>{256}, x);
  const Result r = s.run("quantize --format mxfp4 --input v.npy --out r");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_quantize_output(s.work() / "r", BlockFormat::Mxfp4, x, {256}, {});
}

TEST(CliQuantize, NonFiniteInputGoesThrough) {
  // NaN / Inf handling is the golden library's; the CLI must carry it to the files unchanged.
  Sandbox s;
  std::vector<float> x = test_tensor(2, 64, 4);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[70] = -std::numeric_limits<float>::infinity();
  io::write_npy<float>(s.work() / "x.npy", std::vector<size_t>{2, 64}, x);
  for (const BlockFormatInfo& fi : all_block_formats()) {
    SCOPED_TRACE(fi.name);
    const Result r = s.run("quantize --format " + std::string(fi.name) + " --input x.npy --out r --force");
    ASSERT_EQ(r.code, 0) << r.err;
    expect_quantize_output(s.work() / "r", fi.id, x, {2, 64}, {});
    // Not silent: one warning line that counts them, and the counts in the manifest.
    EXPECT_EQ(r.err, "fp4sim: warning: x.npy: 1 NaN and 1 Inf of 128 values; quantized as the formats define them "
                     "(docs/cli.md)\n");
    const io::Json m = io::read_manifest(s.work() / "r");
    EXPECT_EQ(m["input"]["nan"].get<size_t>(), 1u);
    EXPECT_EQ(m["input"]["inf"].get<size_t>(), 1u);
  }
}

TEST(CliQuantize, ManifestRecordsCommandInputAndDefaults) {
  Sandbox s;
  const std::vector<float> x = test_tensor(2, 32, 1);
  io::write_npy<float>(s.work() / "x.npy", std::vector<size_t>{2, 32}, x);
  const Result r = s.run("quantize --format mxfp6-e3m2 --input x.npy --out r");
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Json m = io::read_manifest(s.work() / "r");
  EXPECT_EQ(m["command_line"].get<std::vector<std::string>>(),
            (std::vector<std::string>{FP4SIM_CLI, "quantize", "--format", "mxfp6-e3m2", "--input",
                                      "x.npy", "--out", "r"}));
  const std::vector<uint8_t> in = io::read_file(s.work() / "x.npy");
  EXPECT_EQ(m["input"]["file"], "x.npy");
  EXPECT_EQ(m["input"]["dtype"], "float32");
  EXPECT_EQ(m["input"]["crc32"], io::crc32_hex(io::crc32(in)));
  EXPECT_EQ(m["input"]["bytes"].get<size_t>(), in.size());
  // Every option is present, defaults included.
  const io::Json& o = m["options"];
  for (const char* k : {"rounding", "seed", "stream", "scale_rule", "pts", "2d", "rht", "rht_bf16", "force"})
    EXPECT_TRUE(o.contains(k)) << k;
  EXPECT_EQ(o["rounding"], "rne");
  EXPECT_EQ(o["scale_rule"], "floor");
  EXPECT_EQ(m["element_bits"], 6);
  EXPECT_EQ(m["bits_per_value"].get<double>(), 6.25);  // 6 + 8 / 32
  EXPECT_EQ(m["layout"]["packed"].get<std::string>().rfind("none", 0), 0u);
  EXPECT_FALSE(m.contains("nvfp4"));
  // The outputs do not depend on anything but the input and options: a second run into another
  // directory writes byte-identical files.
  ASSERT_EQ(s.run("quantize --format mxfp6-e3m2 --input x.npy --out r2").code, 0);
  const io::Json m2 = io::read_manifest(s.work() / "r2");
  EXPECT_EQ(m["files"], m2["files"]);
}

TEST(CliQuantize, Nvfp4ManifestHasGlobalScale) {
  Sandbox s;
  const std::vector<float> x = test_tensor(2, 32, 1);
  io::write_npy<float>(s.work() / "x.npy", std::vector<size_t>{2, 32}, x);
  ASSERT_EQ(s.run("quantize --format nvfp4 --input x.npy --out r").code, 0);
  const Quantized q = quantize(BlockFormat::Nvfp4, x, 2, 32);
  const io::Json m = io::read_manifest(s.work() / "r");
  EXPECT_EQ(m["nvfp4"]["global_scale"].get<float>(), q.global_scale);
  EXPECT_EQ(m["nvfp4"]["amax"].get<float>(), q.amax);
  EXPECT_EQ(m["bits_per_value"].get<double>(), 4.5);  // 4 + 8 / 16
}

TEST(CliQuantize, ForceReplacesAndPlainRunRefuses) {
  Sandbox s;
  const std::vector<float> x = test_tensor(2, 64, 2);
  io::write_npy<float>(s.work() / "x.npy", std::vector<size_t>{2, 64}, x);
  ASSERT_EQ(s.run("quantize --format nvfp4 --input x.npy --out r").code, 0);
  const std::string before = slurp(s.work() / "r" / "manifest.json");
  // Without --force: refused, the old result untouched, nothing staged left.
  expect_error(s.run("quantize --format hif4 --input x.npy --out r"), 1, "r: already exists (use --force");
  EXPECT_EQ(slurp(s.work() / "r" / "manifest.json"), before);
  EXPECT_EQ(s.entries(), (std::set<std::string>{"x.npy", "r"}));
  // With --force: the whole directory is the new result (no global_scale.npy left over).
  const Result r = s.run("quantize --format hif4 --input x.npy --out r --force");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(s.entries(), (std::set<std::string>{"x.npy", "r"}));
  expect_quantize_output(s.work() / "r", BlockFormat::Hif4, x, {2, 64}, {});
  EXPECT_TRUE(io::read_manifest(s.work() / "r")["options"]["force"].get<bool>());
}

// ---------------------------------------------------------------------------------------------
// quantize: errors

TEST(CliQuantize, BadInputsFailCleanly) {
  struct Bad {
    std::string args;
    int code;
    std::string reason;
  };
  const std::string base = "quantize --input x.npy --out out ";
  const std::vector<Bad> bad = {
      // Usage errors (exit 2).
      {base + "--format nvfp5", 2, "--format: unknown format 'nvfp5' (expected one of: nvfp4, mxfp4"},
      {"quantize --input x.npy --out out", 2, "--format: missing; this option is required (see fp4sim quantize --help)"},
      {"quantize --format nvfp4 --out out", 2, "--input: missing; this option is required"},
      {"quantize --format nvfp4 --input x.npy", 2, "--out: missing; this option is required"},
      {base + "--format nvfp4 --rounding up", 2, "--rounding: unknown mode 'up'"},
      {base + "--format mxfp4 --scale-rule round", 2, "--scale-rule: unknown rule 'round'"},
      {base + "--format nvfp4 --scale-rule ceil", 2, "--scale-rule applies to MX formats only"},
      {base + "--format hif4 --scale-rule floor", 2, "--scale-rule applies to MX formats only"},
      {base + "--format nvfp4 --pts maybe", 2, "--pts: expected 'on' or 'off'"},
      {base + "--format mxfp4 --pts off", 2, "--pts applies to nvfp4 only"},
      {base + "--format mxfp4 --2d", 2, "--2d (16x16 tile scaling) applies to nvfp4 only"},
      {base + "--format hif4 --2d", 2, "applies to nvfp4 only"},
      {base + "--format nvfp4 --rht 12", 2, "--rht: size must be a power of two"},
      {base + "--format nvfp4 --rht 1", 2, "--rht: size must be a power of two"},
      {base + "--format nvfp4 --rht abc", 2, "--rht: 'abc' is not a non-negative integer"},
      {base + "--format nvfp4 --rht 4294967296", 2, "--rht: 4294967296 is out of range"},
      {base + "--format nvfp4 --rht-bf16", 2, "--rht-bf16 needs --rht N"},
      {base + "--format nvfp4 --seed -1", 2, "--seed: '-1' is not a non-negative integer"},
      {base + "--format nvfp4 --seed 18446744073709551616", 2, "--seed: 18446744073709551616 is out of range"},
      {base + "--format nvfp4 --seed 12x", 2, "--seed: '12x' is not a non-negative integer"},
      {base + "--format nvfp4 --stream 4294967296", 2, "--stream: 4294967296 is out of range"},
      {base + "--format nvfp4 --bogus", 2, "--bogus: unknown option (see fp4sim quantize --help)"},
      {base + "--format nvfp4 extra", 2, "'extra': unexpected argument (options start with --; see fp4sim quantize --help)"},
      {"quantize --form nvfp4 --input x.npy --out out", 2, "--form: unknown option"},
      {base + "--format nvfp4 --format mxfp4", 2, "--format: given more than once"},
      {base + "--format nvfp4 --rounding", 2, "--rounding: needs a value"},
      {"quantize --format nvfp4 --input x.npy --out ''", 2, "--out: empty directory name"},
      // Runtime errors (exit 1): files and data.
      {"quantize --format nvfp4 --input missing.npy --out out", 1, "missing.npy: cannot open: No such file"},
      {"quantize --format nvfp4 --input f64.npy --out out", 1, "f64.npy: unsupported dtype '<f8'"},
      {"quantize --format nvfp4 --input u8.npy --out out", 1, "u8.npy: input dtype is uint8; expected float32 or uint16"},
      {"quantize --format nvfp4 --input fortran.npy --out out", 1, "fortran.npy: fortran_order arrays are not supported"},
      {"quantize --format nvfp4 --input big.npy --out out", 1, "big.npy: big-endian dtype '>f4'"},
      {"quantize --format nvfp4 --input trunc.npy --out out", 1, "trunc.npy: truncated data"},
      {"quantize --format nvfp4 --input garbage.npy --out out", 1, "garbage.npy: not a .npy file (bad magic)"},
      {"quantize --format nvfp4 --input scalar.npy --out out", 1, "scalar.npy: rank-0 array"},
      {"quantize --format nvfp4 --input empty.npy --out out", 1, "empty.npy: array has no elements"},
      {"quantize --format mxfp4 --input c48.npy --out out", 1,
       "c48.npy: last axis 48 is not a multiple of the mxfp4 block size 32"},
      {"quantize --format hif4 --input x.npy --out out", 1, "last axis 32 is not a multiple of the hif4 block size 64"},
      {"quantize --format nvfp4 --input c48.npy --out out --rht 32", 1,
       "c48.npy: last axis 48 is not a multiple of the RHT size 32"},
      {"quantize --format nvfp4 --input x.npy --out nodir/out", 1, "nodir/out: parent directory does not exist"},
      {"quantize --format nvfp4 --input x.npy --out afile", 1, "afile: exists and is not a directory; not replacing it"},
      {"quantize --format nvfp4 --input x.npy --out afile --force", 1, "afile: exists and is not a directory"},
  };
  Sandbox s;
  const fs::path w = s.work();
  io::write_npy<float>(w / "x.npy", std::vector<size_t>{2, 32}, test_tensor(2, 32, 1));
  io::write_npy<float>(w / "c48.npy", std::vector<size_t>{2, 48}, test_tensor(2, 48, 1));
  io::write_npy<uint8_t>(w / "u8.npy", std::vector<size_t>{2, 32}, std::vector<uint8_t>(64));
  io::write_npy<float>(w / "scalar.npy", std::vector<size_t>{}, std::vector<float>{1.0f});
  io::write_npy<float>(w / "empty.npy", std::vector<size_t>{0, 32}, std::vector<float>{});
  auto with_header = [&](const char* name, const std::string& h, size_t data_bytes) {
    std::string f = std::string("\x93NUMPY\x01\x00", 8);
    f += static_cast<char>(h.size() & 0xFF);
    f += static_cast<char>(h.size() >> 8);
    f += h + std::string(data_bytes, '\0');
    io::write_file_atomic(w / name, f);
  };
  with_header("f64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 32), }\n", 512);
  with_header("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (32, 32), }\n", 4096);
  with_header("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 32), }\n", 256);
  with_header("trunc.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 32), }\n", 255);
  io::write_file_atomic(w / "garbage.npy", std::string_view("this is not numpy\n"));
  io::write_file_atomic(w / "afile", std::string_view("keep me"));
  const std::set<std::string> before = s.entries();
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.args);
    expect_error(s.run(b.args), b.code, b.reason);
    // Nothing created: no output directory, no staging directory, no temporary file.
    EXPECT_EQ(s.entries(), before);
  }
  EXPECT_EQ(slurp(w / "afile"), "keep me");
}

// ---------------------------------------------------------------------------------------------
// help

TEST(CliHelp, OverviewAndPerCommand) {
  Sandbox s;
  const Result top = s.run("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_EQ(top.err, "");
  for (const char* cmd : {"quantize", "quality"}) EXPECT_NE(top.out.find(cmd), std::string::npos) << cmd;
  EXPECT_EQ(s.run("-h").out, top.out);
  EXPECT_EQ(s.run("help").out, top.out);

  const Result a = s.run("help quantize"), b = s.run("quantize --help"), c = s.run("quantize -h");
  EXPECT_EQ(a.code, 0);
  EXPECT_EQ(b.code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out, c.out);
  for (const char* opt : {"--format", "--input", "--out", "--rounding", "--seed", "--stream", "--scale-rule",
                          "--pts", "--2d", "--rht", "--rht-bf16", "--force"})
    EXPECT_NE(a.out.find(opt), std::string::npos) << opt;
  // --help wins over missing required options and writes nothing.
  EXPECT_EQ(s.run("quantize --format nvfp4 --help").code, 0);
  EXPECT_TRUE(s.entries().empty());

  const Result q = s.run("help quality");
  EXPECT_EQ(q.code, 0);
  for (const char* opt : {"--rows", "--cols", "--seed", "--input", "--json"})
    EXPECT_NE(q.out.find(opt), std::string::npos) << opt;

  const Result v = s.run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out, "fp4sim " + std::string(io::tool_version()) + "\n");

  expect_error(s.run(""), 2, "no command given");
  expect_error(s.run("frobnicate"), 2, "unknown command 'frobnicate'");
  expect_error(s.run("help frobnicate"), 2, "unknown command 'frobnicate'");
  expect_error(s.run("help quantize quality"), 2, "usage: fp4sim help COMMAND");
}

// ---------------------------------------------------------------------------------------------
// quality

namespace {

const io::Json& find_result(const io::Json& results, const std::string& format, const std::string& options) {
  for (const io::Json& r : results)
    if (r["format"] == format && r["options"] == options) return r;
  throw std::runtime_error("no result for " + format + " / " + options);
}

}  // namespace

TEST(CliQuality, TableAndJsonMatchInProcessMetrics) {
  Sandbox s;
  const size_t rows = 32, cols = 256;
  const Result r = s.run("quality --rows 32 --cols 256 --seed 5 --json q.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(s.entries(), (std::set<std::string>{"q.json"}));
  // 11 configurations, each one table line naming its format.
  size_t nvfp4_lines = 0, hif4_lines = 0;
  std::istringstream is(r.out);
  for (std::string l; std::getline(is, l);) {
    nvfp4_lines += l.rfind("nvfp4 ", 0) == 0;
    hif4_lines += l.rfind("hif4 ", 0) == 0;
  }
  EXPECT_EQ(nvfp4_lines, 3u);
  EXPECT_EQ(hif4_lines, 2u);
  for (const char* col : {"format", "options", "bits/val", "MSE", "QSNR dB", "bias", "zero %", "sat %", "time ms"})
    EXPECT_NE(r.out.find(col), std::string::npos) << col;

  const io::Json j = nlohmann::ordered_json::parse(slurp(s.work() / "q.json"));
  ASSERT_EQ(j["results"].size(), 11u);
  EXPECT_EQ(j["tensor"]["rows"], rows);
  EXPECT_EQ(j["tensor"]["seed"], 5);

  const std::vector<float> x = llm_activations(rows, cols, 5);
  auto check = [&](BlockFormat f, const std::string& label, const QuantOptions& opt) {
    SCOPED_TRACE(label);
    const Quantized q = quantize(f, x, rows, cols, opt);
    const std::vector<float> dq = dequantize(q);
    std::vector<float> ref = x;
    if (opt.rht != 0) rht_apply(ref, cols, opt.rht, rht_signs(opt.rht, opt.rht != 16, opt.rht_seed), false);
    const Quality want = quality(ref, dq, q);
    const io::Json& got = find_result(j["results"], std::string(info(f).name), label);
    // JSON doubles round-trip exactly (shortest representation that reads back the same).
    EXPECT_EQ(got["mse"].get<double>(), want.mse);
    EXPECT_EQ(got["qsnr_db"].get<double>(), want.qsnr_db);
    EXPECT_EQ(got["bias"].get<double>(), want.bias);
    EXPECT_EQ(got["frac_zero"].get<double>(), want.frac_zero);
    EXPECT_EQ(got["frac_saturated"].get<double>(), want.frac_saturated);
    EXPECT_EQ(got["n"].get<size_t>(), rows * cols);
    EXPECT_EQ(got["bits_per_value"].get<double>(),
              info(f).elem->bits + (info(f).scale_word32 ? 32.0 : 8.0) / info(f).block);
  };
  check(BlockFormat::Nvfp4, "PTS, 1x16", {});
  QuantOptions o;
  o.two_d = true;
  check(BlockFormat::Nvfp4, "PTS, 2D 16x16", o);
  o = {};
  o.rht = 16;
  check(BlockFormat::Nvfp4, "PTS, RHT16 (TE signs)", o);
  o = {};
  o.scale_rule = ScaleRule::Ceil;
  check(BlockFormat::Mxfp4, "scale rceil", o);
  check(BlockFormat::Mxfp8E5M2, "scale floor", {});
  check(BlockFormat::Hif4, "", {});
  o = {};
  o.rht = 64;
  check(BlockFormat::Hif4, "RHT64 (seed 0)", o);
}

TEST(CliQuality, InputFileAndSkippedConfigs) {
  Sandbox s;
  // 48 columns: nvfp4 (block 16) runs, block-32/64 formats and RHT64 cannot.
  const std::vector<float> x = test_tensor(16, 48, 8);
  io::write_npy<float>(s.work() / "t.npy", std::vector<size_t>{16, 48}, x);
  const Result r = s.run("quality --input t.npy --json q.json");
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Json j = nlohmann::ordered_json::parse(slurp(s.work() / "q.json"));
  EXPECT_EQ(j["tensor"]["source"], "t.npy");
  const io::Json& nv = find_result(j["results"], "nvfp4", "PTS, 1x16");
  const Quantized q = quantize(BlockFormat::Nvfp4, x, 16, 48);
  EXPECT_EQ(nv["mse"].get<double>(), quality(x, dequantize(q), q).mse);
  EXPECT_EQ(find_result(j["results"], "mxfp4", "scale floor")["skipped"],
            "last axis 48 is not a multiple of 32");
  EXPECT_EQ(find_result(j["results"], "hif4", "RHT64 (seed 0)")["skipped"],
            "last axis 48 is not a multiple of 64");
  EXPECT_NE(r.out.find("skipped: last axis 48 is not a multiple of 64"), std::string::npos);
}

TEST(CliQuality, BadInputsFailCleanly) {
  Sandbox s;
  io::write_npy<float>(s.work() / "t.npy", std::vector<size_t>{2, 64}, test_tensor(2, 64, 1));
  const std::set<std::string> before = s.entries();
  expect_error(s.run("quality --input t.npy --rows 4"), 2, "--input cannot be combined with --rows");
  expect_error(s.run("quality --rows 0"), 2, "--rows: 0 is out of range");
  expect_error(s.run("quality --cols x"), 2, "--cols: 'x' is not a non-negative integer");
  expect_error(s.run("quality --rows 65536 --cols 65536"), 2, "exceeds the limit");
  expect_error(s.run("quality --input nope.npy --json q.json"), 1, "nope.npy: cannot open");
  expect_error(s.run("quality --rows 16 --cols 64 --json nodir/q.json"), 1, "nodir/q.json: parent directory does not exist");
  EXPECT_EQ(s.entries(), before);
}
