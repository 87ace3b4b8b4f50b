// fp4sim gemm: float operands quantized into a block format, multiplied by a numerics model,
// compared with the FP64 product of the unquantized operands.
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/linear.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "gemm --format F --a A.npy --b B.npy [--c C.npy] [--model M] --out D.npy\n"
    "            [--rounding rne|rna|rz|sr] [--seed S] [--stream N] [--scale-rule floor|rceil]\n"
    "            [--pts on|off] [--2d] [--rht N] [--rht-bf16] [--json FILE] [--threads T] [--force] [--durable]";

std::string format_list() {
  std::string s;
  for (const BlockFormatInfo& fi : all_block_formats()) s += (s.empty() ? "" : ", ") + std::string(fi.name);
  return s;
}

using io::hex32;

FloatTensor load_matrix(const fs::path& p, const char* role) {
  FloatTensor t = load_float_tensor(p);
  if (t.array.shape.size() != 2)
    throw std::runtime_error(p.string() + ": " + role + " must be a 2-D array, got shape " +
                             io::shape_string(t.array.shape));
  return t;
}

io::Json num(double v) { return std::isfinite(v) ? io::Json(v) : io::Json(nullptr); }

}  // namespace

int cmd_gemm(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("format", po::value<std::string>()->required()->value_name("F"), ("block format: " + format_list()).c_str())
      ("a", po::value<std::string>()->required()->value_name("A.npy"),
       "A [M, K], float32 or uint16 (BF16 bits); quantized along K")
      ("b", po::value<std::string>()->required()->value_name("B.npy"), "B [N, K] (K-major, like A)")
      ("c", po::value<std::string>()->value_name("C.npy"), "float32 [M, N], added in the epilogue")
      ("model", po::value<std::string>()->value_name("M"),
       "blackwell, exact, fp32-seq or ascend-hif4 (default: the hardware model of the format's kind)")
      ("out", po::value<std::string>()->required()->value_name("D.npy"), "float32 result [M, N] (atomic)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the run and its error metrics as JSON")
      ("force", po::bool_switch(), "replace D.npy / FILE if they already exist")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)");
  add_quant_options(od);
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  BlockFormat f{};
  const std::string fmt = vm["format"].as<std::string>();
  if (!parse_block_format(fmt, f))
    throw UsageError("--format: unknown format '" + fmt + "' (expected one of: " + format_list() + ")");
  const QuantOptions qa = parse_quant_options(vm, f);
  // B draws its SR bits from the next stream: the same bits on both operands would correlate their
  // rounding errors. Both keep the same RHT signs, which the product needs (Q Q^T = I).
  QuantOptions qb = qa;
  qb.stream = qa.stream + 1u;
  const MmaConfig cfg = mma_config_for(f);
  std::optional<Model> model;
  if (vm.count("model")) {
    const std::string m = vm["model"].as<std::string>();
    Model md{};
    if (!parse_model(m, md))
      throw UsageError("--model: unknown model '" + m + "' (expected blackwell, exact, fp32-seq or ascend-hif4)");
    try {
      validate_mma_config(cfg, md);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--model " + m + " cannot run format " + fmt + ": " + e.what());
    }
    model = md;
  }
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  // Both outputs checked now, both committed at the end (or neither).
  const fs::path out = vm["out"].as<std::string>();
  Outputs outs(vm["force"].as<bool>());
  const size_t out_h = outs.file("out", out);
  const fs::path json_path = vm.count("json") ? fs::path(vm["json"].as<std::string>()) : fs::path();
  const size_t json_h = vm.count("json") ? outs.file("json", json_path) : 0;

  const fs::path pa = vm["a"].as<std::string>(), pb = vm["b"].as<std::string>();
  const FloatTensor a = load_matrix(pa, "A");
  const FloatTensor b = load_matrix(pb, "B");
  const size_t M = a.array.shape[0], K = a.array.shape[1], N = b.array.shape[0];
  if (M == 0 || K == 0) throw std::runtime_error(pa.string() + ": A is empty, shape " + io::shape_string(a.array.shape));
  if (N == 0) throw std::runtime_error(pb.string() + ": B is empty, shape " + io::shape_string(b.array.shape));
  if (b.array.shape[1] != K)
    throw std::runtime_error(pb.string() + ": B has shape " + io::shape_string(b.array.shape) + " but A has K = " +
                             std::to_string(K) + " (B is [N, K], K-major)");
  std::vector<float> c;
  if (vm.count("c")) {
    const fs::path pc = vm["c"].as<std::string>();
    const io::NpyArray ca = io::read_npy(pc);
    if (ca.dtype != io::DType::F32)
      throw std::runtime_error(pc.string() + ": C must be float32, got " + std::string(io::dtype_name(ca.dtype)));
    if (ca.shape.size() != 2 || ca.shape[0] != M || ca.shape[1] != N)
      throw std::runtime_error(pc.string() + ": C has shape " + io::shape_string(ca.shape) + ", expected (" +
                               std::to_string(M) + ", " + std::to_string(N) + ")");
    c = ca.values<float>();
  }

  QuantizedGemm q;
  try {
    q = quantized_gemm(f, a.values, qa, b.values, qb, c, M, N, K, model, threads);
  } catch (const std::invalid_argument& e) {
    // Shape-dependent conditions (K versus block, instruction K, RHT size) are about the data.
    throw std::runtime_error(pa.string() + ": " + e.what());
  }
  const std::vector<double> ref = reference_gemm_f64(a.values, b.values, c, M, N, K, threads);
  const GemmError err = gemm_error(q.d, ref);

  const size_t shape[2] = {M, N};
  outs.set().write(out_h, io::encode_npy<float>(shape, q.d));
  if (!json_path.empty()) {
    io::Json j = io::report_header(inv.name, inv.argv);
    j["format"] = fmt;
    j["kind"] = q.cfg.kind->name;
    j["model"] = model_name(q.model);
    j["M"] = M;
    j["N"] = N;
    j["K"] = K;
    j["alpha"] = q.alpha;
    j["alpha_bits"] = hex32(std::bit_cast<uint32_t>(q.alpha));
    j["options"] = {{"rounding", rounding_name(qa.rounding)},
                    {"seed", qa.seed},
                    {"stream_a", qa.stream},
                    {"stream_b", qb.stream},
                    {"scale_rule", scale_rule_name(qa.scale_rule)},
                    {"pts", qa.pts ? "on" : "off"},
                    {"2d", qa.two_d},
                    {"rht", qa.rht},
                    {"rht_bf16", qa.rht_bf16}};
    j["error"] = {{"rel_err", num(err.rel_err)}, {"qsnr_db", num(err.qsnr_db)}, {"max_abs_err", num(err.max_abs)},
                  {"bias", num(err.bias)},       {"n", err.n},                  {"n_nonfinite", err.n_nonfinite},
                  {"n_skipped", err.n_skipped}};
    j["out"] = out.string();
    outs.set().write(json_h, j.dump(2) + "\n");
  }
  outs.commit();
  std::cout << "gemm " << M << "x" << N << "x" << K << ": format " << fmt << " on kind " << q.cfg.kind->name
            << ", model " << model_name(q.model) << ", alpha " << fmt_num("%.9g", q.alpha) << " (" << hex32(std::bit_cast<uint32_t>(q.alpha))
            << ")\n";
  std::cout << "error vs FP64 of the unquantized operands: rel_err " << fmt_num("%.6e", err.rel_err) << "  qsnr_db "
            << fmt_num("%.3f", err.qsnr_db) << "  max_abs_err " << fmt_num("%.6e", err.max_abs) << "  bias "
            << fmt_num("%+.3e", err.bias);
  if (err.n_nonfinite) std::cout << "  (" << err.n_nonfinite << " non-finite outputs)";
  if (err.n_skipped) std::cout << "  (" << err.n_skipped << " outputs with a non-finite reference skipped)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace fp4sim::cli
