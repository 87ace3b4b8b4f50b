// fp4sim quantize (SPEC §5): one .npy tensor in, one result directory out, all or nothing.
#include <bit>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/layout.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "quantize --format F --input X.npy --out DIR [--rounding rne|rna|rz|sr] [--seed S]\n"
    "         [--stream N] [--scale-rule floor|rceil] [--pts on|off] [--2d] [--rht N]\n"
    "         [--rht-bf16] [--convention te|torchao|modelopt] [--threads T] [--force] [--durable]";

std::string format_list() {
  std::string s;
  for (const BlockFormatInfo& fi : all_block_formats()) s += (s.empty() ? "" : ", ") + std::string(fi.name);
  return s;
}

// CPU time of the whole process (all threads), for the summary line: unlike wall time it does not
// grow when other processes load the machine.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

bool is_mx(BlockFormat f) { return f != BlockFormat::Nvfp4 && f != BlockFormat::Hif4; }

using io::hex32;

struct Parsed {
  BlockFormat format{};
  QuantOptions opt;
  fs::path input, out;
  bool force = false;
};

Parsed parse(const po::variables_map& vm) {
  Parsed p;
  const std::string fmt = vm["format"].as<std::string>();
  if (!parse_block_format(fmt, p.format))
    throw UsageError("--format: unknown format '" + fmt + "' (expected one of: " + format_list() + ")");

  // Shared with `fp4sim gemm`: options that only mean something for some formats are refused
  // rather than silently ignored; one seed drives SR bits and RHT signs (SPEC §2.4).
  p.opt = parse_quant_options(vm, p.format);

  if (vm.count("threads"))
    p.opt.threads = static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024));
  else
    p.opt.threads = 0;  // all cores; the bits do not depend on it
  p.input = vm["input"].as<std::string>();
  p.out = vm["out"].as<std::string>();
  p.force = vm["force"].as<bool>();
  return p;
}

}  // namespace

int cmd_quantize(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("format", po::value<std::string>()->required()->value_name("F"),
       ("block format: " + format_list()).c_str())
      ("input", po::value<std::string>()->required()->value_name("X.npy"),
       "input tensor, float32 or uint16 (BF16 bits), rank >= 1; blocks run along the last axis")
      ("out", po::value<std::string>()->required()->value_name("DIR"),
       "output directory (created atomically; its parent must exist)")
      ("force", po::bool_switch(), "replace DIR if it already exists")
      ("threads", po::value<std::string>()->value_name("T"),
       "worker threads (default 0 = all cores; the output is the same for any T)");
  add_quant_options(od);
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;
  const Parsed p = parse(vm);
  const BlockFormatInfo& fi = info(p.format);

  // Fail before any work if the result could not be committed anyway.
  Outputs outs(p.force);
  const size_t out_h = outs.dir("out", p.out);

  const FloatTensor t = load_float_tensor(p.input);
  const io::NpyArray& in = t.array;
  if (in.shape.empty())
    throw std::runtime_error(p.input.string() +
                             ": rank-0 array; quantize needs rank >= 1 (blocks run along the last axis)");
  if (in.size() == 0)
    throw std::runtime_error(p.input.string() + ": array has no elements, shape " + io::shape_string(in.shape));
  const size_t cols = in.shape.back();
  const size_t rows = in.size() / cols;
  if (cols % static_cast<size_t>(fi.block) != 0)
    throw std::runtime_error(p.input.string() + ": last axis " + std::to_string(cols) +
                             " is not a multiple of the " + std::string(fi.name) + " block size " +
                             std::to_string(fi.block));
  if (p.opt.rht != 0 && cols % static_cast<size_t>(p.opt.rht) != 0)
    throw std::runtime_error(p.input.string() + ": last axis " + std::to_string(cols) +
                             " is not a multiple of the RHT size " + std::to_string(p.opt.rht));
  const std::vector<float>& x = t.values;

  Quantized q;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_ms();
  try {
    q = quantize(p.format, x, rows, cols, p.opt);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(p.input.string() + ": " + e.what());
  }
  const std::vector<float> deq = dequantize(q);
  const double quant_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double quant_cpu_ms = process_cpu_ms() - cpu0;

  std::vector<size_t> scale_shape = in.shape;
  scale_shape.back() = cols / static_cast<size_t>(fi.block);
  std::vector<size_t> packed_shape = in.shape;
  packed_shape.back() = cols / 2;
  const bool four_bit = fi.elem->bits == 4;

  const fs::path stage = outs.set().dir_stage(out_h);
  io::OutputWriter w(stage);
  using Job = io::OutputWriter::Job;
  const std::vector<uint8_t> packed = four_bit ? pack_nibbles_rows(q.codes, rows, cols) : std::vector<uint8_t>{};
  const size_t one = 1;
  const float gs = q.global_scale;
  std::vector<Job> jobs;
  jobs.push_back(io::OutputWriter::job<uint8_t>("codes.npy", in.shape, q.codes));
  if (four_bit) jobs.push_back(io::OutputWriter::job<uint8_t>("packed.npy", packed_shape, packed));
  if (fi.scale_word32)
    jobs.push_back(io::OutputWriter::job<uint32_t>("scales.npy", scale_shape, q.scale_words));
  else
    jobs.push_back(io::OutputWriter::job<uint8_t>("scales.npy", scale_shape, q.scales));
  jobs.push_back(io::OutputWriter::job<float>("dequant.npy", in.shape, deq));
  if (p.format == BlockFormat::Nvfp4)
    jobs.push_back(io::OutputWriter::job<float>("global_scale.npy", std::span<const size_t>(&one, 1), std::span<const float>(&gs, 1)));
  // The files are written side by side on the quantizer's threads (dequant.npy, the largest, on
  // one; the others on the rest); the manifest lists them in this order whatever the thread count.
  w.add_all(jobs, p.opt.threads != 0 ? p.opt.threads : std::max(1u, std::thread::hardware_concurrency()));

  io::Json m;
  m["tool"] = "fp4sim";
  m["version"] = io::tool_version();
  m["manifest_schema"] = io::kManifestSchema;
  m["command"] = inv.name;
  m["command_line"] = inv.argv;
  m["format"] = fi.name;
  m["element_type"] = fi.elem->name;
  m["element_bits"] = fi.elem->bits;
  m["scale_type"] = fi.scale->name;
  m["scale_container"] = fi.scale_word32 ? "uint32 word: bits 7:0 e6m2, bits 15:8 E1_8 (8 elements each), "
                                           "bits 31:16 E1_16 (4 elements each)"
                                         : "uint8 code";
  m["block_size"] = fi.block;
  m["bits_per_value"] = fi.elem->bits + (fi.scale_word32 ? 32.0 : 8.0) / fi.block;
  std::vector<std::string> not_applicable;
  if (!is_mx(p.format)) not_applicable.push_back("scale_rule");
  if (p.format != BlockFormat::Nvfp4) {
    not_applicable.push_back("pts");
    not_applicable.push_back("2d");
  }
  if (p.opt.rounding != Rounding::Sr) not_applicable.push_back("stream");
  if (p.opt.rounding != Rounding::Sr && (p.opt.rht == 0 || p.opt.rht == 16)) not_applicable.push_back("seed");
  if (p.opt.rht == 0) not_applicable.push_back("rht_bf16");
  m["options"] = {{"rounding", rounding_name(effective_rounding(p.format, p.opt.rounding))},
                  {"seed", p.opt.seed},
                  {"stream", p.opt.stream},
                  {"scale_rule", scale_rule_name(p.opt.scale_rule)},
                  {"pts", p.opt.pts ? "on" : "off"},
                  {"2d", p.opt.two_d},
                  {"rht", p.opt.rht},
                  {"rht_bf16", p.opt.rht_bf16},
                  {"rht_signs", p.opt.rht == 0 ? "none" : p.opt.rht == 16 ? "te-fixed-16" : "seeded"},
                  {"convention", convention_name(p.opt.convention)},
                  {"force", p.force}};
  m["options_without_effect"] = not_applicable;
  m["input"] = {{"file", p.input.string()},
                {"shape", in.shape},
                {"dtype", io::dtype_name(in.dtype)},
                {"interpreted_as", in.dtype == io::DType::U16 ? "bf16 bits" : "float32"},
                {"bytes", t.file_size},
                {"crc32", io::crc32_hex(t.file_crc32)},
                {"nan", t.n_nan},
                {"inf", t.n_inf}};
  m["tensor"] = {{"rows", rows}, {"cols", cols}, {"blocks", q.num_blocks()}};
  m["layout"] = {{"block_axis", "last"},
                 {"codes", "one element code per value, sign in the top bit of the element width"},
                 {"nibble_order", "low nibble = even element"},
                 {"packed", four_bit ? "packed.npy: two codes per byte, last axis halved"
                                     : "none: elements wider than 4 bits, codes.npy is the storage form"},
                 {"scale_layout", "row-major"},
                 {"dequant_domain", p.opt.rht != 0 ? "after the RHT (rotated values)" : "input"}};
  if (p.format == BlockFormat::Nvfp4) {
    m["nvfp4"] = {{"global_scale", q.global_scale},
                  {"global_scale_bits", hex32(std::bit_cast<uint32_t>(q.global_scale))},
                  {"amax", q.amax},
                  {"amax_bits", hex32(std::bit_cast<uint32_t>(q.amax))}};
  }
  m["files"] = w.files_json();
  io::write_manifest(stage, m);
  outs.commit();
  size_t bytes = 0;
  for (const io::FileRecord& f : w.files()) bytes += f.bytes;
  // One line: what was written, and the in-memory time (quantize + dequantize), which
  // scripts/cli_bench.sh sets against the whole process.
  std::printf("%s: %s %s, %zu blocks, %zu files (%.1f MB) + manifest.json; quantized in %.1f ms (cpu %.1f ms)\n",
              p.out.string().c_str(), std::string(fi.name).c_str(), io::shape_string(in.shape).c_str(),
              q.num_blocks(), w.files().size(), static_cast<double>(bytes) / 1e6, quant_ms, quant_cpu_ms);
  return kExitOk;
}

}  // namespace fp4sim::cli
