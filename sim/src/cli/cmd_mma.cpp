// fp4sim mma (SPEC §5): element codes and scale codes in, the FP32 result of a numerics model out.
#include <bit>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/mma.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "mma --kind mxf4|mxf4nvf4|mxf8f6f4|hif4 [--block 16|32] [--scale-type ue4m3|ue8m0]\n"
    "           [--elem E | --elem-a E --elem-b E] --a A.npy --b B.npy --sfa SA.npy --sfb SB.npy\n"
    "           [--c C.npy] [--model blackwell|exact|fp32-seq|ascend-hif4] --out D.npy [--threads T]\n"
    "           [--force] [--durable]";

template <size_t N>
std::string name_list(const std::array<const ElemFormat*, N>& list) {
  std::string s;
  for (const ElemFormat* f : list)
    if (f) s += (s.empty() ? "" : ", ") + std::string(f->name);
  return s;
}

std::string kind_list() {
  std::string s;
  for (const MmaKind& k : all_mma_kinds()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

template <size_t N>
const ElemFormat* pick(const char* option, const std::string& name, const std::array<const ElemFormat*, N>& allowed,
                       const MmaKind& kind) {
  for (const ElemFormat* f : allowed)
    if (f && f->name == name) return f;
  throw UsageError("--" + std::string(option) + ": '" + name + "' is not allowed for kind " + std::string(kind.name) +
                   " (allowed: " + name_list(allowed) + ")");
}

std::string shape_of(const io::NpyArray& a) { return io::shape_string(a.shape); }

// Reads a rank-2 array of the given dtype; the message names the file and what was expected.
io::NpyArray load_matrix(const fs::path& p, io::DType want, const char* role) {
  io::NpyArray a;
  try {
    a = io::read_npy(p);
  } catch (const io::NpyError& e) {
    throw io::NpyError(npy_dtype_hint(e.what(), std::string(io::dtype_name(want)) + " '" +
                                                    std::string(io::dtype_descr(want)) + "'"));
  }
  if (a.dtype != want)
    throw std::runtime_error(p.string() + ": " + role + " must be " + std::string(io::dtype_name(want)) + ", got " +
                             std::string(io::dtype_name(a.dtype)));
  if (a.shape.size() != 2)
    throw std::runtime_error(p.string() + ": " + role + " must be a 2-D array, got shape " + shape_of(a));
  return a;
}

void expect_shape(const fs::path& p, const io::NpyArray& a, size_t r, size_t c, const char* role) {
  if (a.shape[0] != r || a.shape[1] != c)
    throw std::runtime_error(p.string() + ": " + role + " has shape " + shape_of(a) + ", expected (" +
                             std::to_string(r) + ", " + std::to_string(c) + ")");
}

// Codes wider than the element format are refused: the usual cause is a packed (two per byte) file
// where unpacked codes are expected.
void check_codes(const fs::path& p, const std::vector<uint8_t>& codes, size_t cols, const ElemFormat& f) {
  if (f.bits >= 8) return;
  const unsigned limit = 1u << f.bits;
  for (size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] >= limit) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%02x", codes[i]);
      throw std::runtime_error(p.string() + ": code " + buf + " at [" + std::to_string(i / cols) + ", " +
                               std::to_string(i % cols) + "] does not fit " + std::to_string(f.bits) + "-bit " +
                               std::string(f.name) + " (codes must be unpacked, one per byte)");
    }
  }
}

}  // namespace

int cmd_mma(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("kind", po::value<std::string>()->required()->value_name("K"), ("MMA kind: " + kind_list()).c_str())
      ("block", po::value<std::string>()->value_name("B"), "scale block size (default: the kind's first)")
      ("scale-type", po::value<std::string>()->value_name("T"), "ue4m3 or ue8m0 (mxf4nvf4; default ue4m3)")
      ("elem", po::value<std::string>()->value_name("E"), "element type of A and B (mxf8f6f4; default e4m3)")
      ("elem-a", po::value<std::string>()->value_name("E"), "element type of A alone (mxf8f6f4)")
      ("elem-b", po::value<std::string>()->value_name("E"), "element type of B alone (mxf8f6f4)")
      ("a", po::value<std::string>()->required()->value_name("A.npy"), "uint8 element codes [M, K], unpacked")
      ("b", po::value<std::string>()->required()->value_name("B.npy"), "uint8 element codes [N, K], unpacked")
      ("sfa", po::value<std::string>()->required()->value_name("SA.npy"),
       "scale codes of A [M, K/block]: uint8, or uint32 words for hif4")
      ("sfb", po::value<std::string>()->required()->value_name("SB.npy"), "scale codes of B [N, K/block]")
      ("c", po::value<std::string>()->value_name("C.npy"), "float32 accumulator input [M, N] (default all +0)")
      ("model", po::value<std::string>()->value_name("M"),
       "blackwell, exact, fp32-seq or ascend-hif4 (default: the kind's hardware model)")
      ("out", po::value<std::string>()->required()->value_name("D.npy"),
       "float32 result [M, N], written atomically; its folder must exist")
      ("flags", po::value<std::string>()->value_name("FLAGS.npy"),
       "also write uint8 [M, N] IEEE-style exception flags of each D against the exact C + A.B (SoftFloat bits: "
       "01 inexact, 02 underflow, 04 overflow, 10 invalid; docs/numerics.md)")
      ("force", po::bool_switch(), "replace D.npy / FLAGS.npy if they already exist")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)");
  add_numerics_option(od);
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  MmaKindId kid{};
  const std::string kname = vm["kind"].as<std::string>();
  if (!parse_mma_kind(kname, kid)) throw UsageError("--kind: unknown kind '" + kname + "' (expected one of: " + kind_list() + ")");
  const MmaKind& kind = mma_kind(kid);
  if (vm.count("elem") && (vm.count("elem-a") || vm.count("elem-b")))
    throw UsageError("--elem cannot be combined with --elem-a / --elem-b");
  const ElemFormat* ea = nullptr;
  const ElemFormat* eb = nullptr;
  if (vm.count("elem")) ea = eb = pick("elem", vm["elem"].as<std::string>(), kind.elems, kind);
  if (vm.count("elem-a")) ea = pick("elem-a", vm["elem-a"].as<std::string>(), kind.elems, kind);
  if (vm.count("elem-b")) eb = pick("elem-b", vm["elem-b"].as<std::string>(), kind.elems, kind);
  const ElemFormat* st = nullptr;
  if (vm.count("scale-type")) st = pick("scale-type", vm["scale-type"].as<std::string>(), kind.scales, kind);
  int block = 0;
  if (vm.count("block")) block = static_cast<int>(parse_uint("block", vm["block"].as<std::string>(), 1, 1024));
  MmaConfig cfg;
  try {
    cfg = make_mma_config(kid, ea, eb, st, block);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(e.what()) + ": block " + std::to_string(block) + " with scale " +
                     std::string((st ? st : kind.scales[0])->name));
  }
  Model model = kind.hardware_model;
  if (vm.count("model")) {
    const std::string m = vm["model"].as<std::string>();
    if (!parse_model(m, model))
      throw UsageError("--model: unknown model '" + m + "' (expected blackwell, exact, fp32-seq or ascend-hif4)");
    try {
      validate_mma_config(cfg, model);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--model " + m + ": " + e.what());
    }
  }
  cfg.model = model;
  const Model preset = model;
  model = apply_numerics(vm, cfg, model);
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  const fs::path out = vm["out"].as<std::string>();
  Outputs outs(vm["force"].as<bool>());
  const size_t out_h = outs.file("out", out);
  const fs::path flags_path = vm.count("flags") ? fs::path(vm["flags"].as<std::string>()) : fs::path();
  const size_t flags_h = vm.count("flags") ? outs.file("flags", flags_path) : 0;

  const fs::path pa = vm["a"].as<std::string>(), pb = vm["b"].as<std::string>();
  const fs::path psa = vm["sfa"].as<std::string>(), psb = vm["sfb"].as<std::string>();
  const io::NpyArray a = load_matrix(pa, io::DType::U8, "A");
  const io::NpyArray b = load_matrix(pb, io::DType::U8, "B");
  const size_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
  if (M == 0 || K == 0) throw std::runtime_error(pa.string() + ": A is empty, shape " + shape_of(a));
  if (N == 0) throw std::runtime_error(pb.string() + ": B is empty, shape " + shape_of(b));
  if (b.shape[1] != K)
    throw std::runtime_error(pb.string() + ": B has shape " + shape_of(b) + " but A has K = " + std::to_string(K) +
                             " (B is [N, K], K-major)");
  const bool per_instruction = model == Model::Blackwell || model == Model::AscendHif4 ||
                              (model == Model::Custom && cfg.numerics.k > 0);
  const size_t step = !per_instruction          ? static_cast<size_t>(cfg.block)
                      : model == Model::Custom ? std::lcm(static_cast<size_t>(cfg.block), static_cast<size_t>(cfg.numerics.k))
                                               : static_cast<size_t>(kind.k);
  if (K % step != 0)
    throw std::runtime_error(pa.string() + ": K = " + std::to_string(K) + " is not a multiple of " +
                             std::to_string(step) +
                             (model == Model::Custom && per_instruction
                                  ? " (the block " + std::to_string(cfg.block) + " and --numerics k=" +
                                        std::to_string(cfg.numerics.k) + ")"
                                  : (per_instruction ? " (the instruction K of " : " (the block of ") +
                                        std::string(kind.name) + ")"));
  const size_t nblk = K / static_cast<size_t>(cfg.block);
  const io::DType sdt = kind.scale_word32 ? io::DType::U32 : io::DType::U8;
  const io::NpyArray sa = load_matrix(psa, sdt, "SA");
  const io::NpyArray sb = load_matrix(psb, sdt, "SB");
  expect_shape(psa, sa, M, nblk, "SA");
  expect_shape(psb, sb, N, nblk, "SB");
  std::vector<float> c;
  if (vm.count("c")) {
    const fs::path pc = vm["c"].as<std::string>();
    const io::NpyArray ca = load_matrix(pc, io::DType::F32, "C");
    expect_shape(pc, ca, M, N, "C");
    c = ca.values<float>();
  }
  const std::vector<uint8_t> ac = a.values<uint8_t>(), bc = b.values<uint8_t>();
  check_codes(pa, ac, K, *cfg.elem_a);
  check_codes(pb, bc, K, *cfg.elem_b);

  std::vector<float> d;
  if (kind.scale_word32) {
    d = gemm(cfg, model, M, N, K, ac, std::span<const uint32_t>(sa.values<uint32_t>()), bc,
             std::span<const uint32_t>(sb.values<uint32_t>()), c, 1.0f, threads);
  } else {
    d = gemm(cfg, model, M, N, K, ac, std::span<const uint8_t>(sa.values<uint8_t>()), bc,
             std::span<const uint8_t>(sb.values<uint8_t>()), c, 1.0f, threads);
  }
  const size_t shape[2] = {M, N};
  outs.set().write(out_h, io::encode_npy<float>(shape, d));
  if (!flags_path.empty()) {
    // Every output's accumulator (no alpha here) against the exact value of its whole dot product.
    std::vector<uint32_t> wa, wb;
    if (kind.scale_word32) {
      wa = sa.values<uint32_t>(), wb = sb.values<uint32_t>();
    } else {
      const std::vector<uint8_t> ba = sa.values<uint8_t>(), bb = sb.values<uint8_t>();
      wa.assign(ba.begin(), ba.end()), wb.assign(bb.begin(), bb.end());
    }
    std::vector<uint8_t> fl(M * N);
    for (size_t i = 0; i < M; ++i)
      for (size_t j = 0; j < N; ++j)
        fl[i * N + j] = mma_flags_k(cfg, K, ac.data() + i * K, bc.data() + j * K, wa.data() + i * nblk,
                                    wb.data() + j * nblk, c.empty() ? 0u : std::bit_cast<uint32_t>(c[i * N + j]),
                                    std::bit_cast<uint32_t>(d[i * N + j]));
    outs.set().write(flags_h, io::encode_npy<uint8_t>(shape, fl));
  }
  outs.commit();
  std::cout << out.string() << ": float32 " << io::shape_string(shape) << ", kind " << kind.name << " ("
            << cfg.elem_a->name << " x " << cfg.elem_b->name << ", " << cfg.scale->name << " per " << cfg.block
            << "), model " << model_name(preset);
  if (model == Model::Custom) std::cout << " with numerics " << format_numerics(cfg.numerics);
  std::cout << ", K = " << K;
  if (per_instruction) {
    const size_t n = K / (model == Model::Custom ? static_cast<size_t>(cfg.numerics.k) : static_cast<size_t>(kind.k));
    std::cout << " (" << n << (n == 1 ? " instruction)" : " instructions chained)");
  }
  std::cout << "\n";
  return kExitOk;
}

}  // namespace fp4sim::cli
