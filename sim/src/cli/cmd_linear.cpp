// fp4sim linear: the three GEMMs of one linear layer (Fprop, Dgrad, Wgrad) under a training recipe,
// each against an FP64 reference; --ablation runs the table of recipe variants.
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/linear.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "linear [--recipe nvfp4-paper|hif4-paper|mxfp4-paper|bf16] [--m M --n N --k K --seed S]\n"
    "              [--x X.npy --w W.npy --dy DY.npy] [--model M] [--pts on|off] [--sr on|off]\n"
    "              [--rht N|off] [--2d on|off] [--scale-rule floor|rceil] [--ablation] [--json FILE]\n"
    "              [--threads T] [--force] [--durable]";

constexpr size_t kDefaultM = 256, kDefaultN = 256, kDefaultK = 256;
constexpr uint64_t kMaxElements = uint64_t{1} << 26;  // per tensor; several copies live at once

std::string recipe_list() {
  std::string s;
  for (std::string_view n : linear_recipe_names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

// "pts 2d sr rht16" style summary of the switches that apply to the format.
std::string settings(const LinearRecipe& r) {
  if (r.format == RecipeFormat::Bf16) return "-";
  std::string s;
  auto add = [&](const std::string& t) { s += (s.empty() ? "" : " ") + t; };
  if (r.format == RecipeFormat::Nvfp4) {
    add(r.pts ? "pts" : "no-pts");
    if (r.two_d_weights) add("2d");
  }
  if (r.format == RecipeFormat::Mxfp4) add(std::string("scale-") + std::string(scale_rule_name(r.scale_rule)));
  add(r.sr_gradients ? "sr" : "rn");
  add(r.rht_wgrad ? "rht" + std::to_string(r.rht_wgrad) : "no-rht");
  return s;
}

const char* kGemmText[3] = {"Y = X W^T", "dX = dY W", "dW = dY^T X"};

io::Json num(double v) { return std::isfinite(v) ? io::Json(v) : io::Json(nullptr); }

io::Json recipe_json(const LinearResult& res) {
  const LinearRecipe& r = res.recipe;
  io::Json j = {{"name", r.name},
                {"format", recipe_format_name(r.format)},
                {"pts", r.pts},
                {"2d_weights", r.two_d_weights},
                {"sr_gradients", r.sr_gradients},
                {"rht_wgrad", r.rht_wgrad},
                {"scale_rule", scale_rule_name(r.scale_rule)},
                {"model", model_name(res.model)},
                {"seed", r.seed}};
  io::Json g = io::Json::object();
  for (int i = 0; i < 3; ++i) {
    const LinearGemmResult& x = res.gemm[i];
    char bits[11];
    std::snprintf(bits, sizeof bits, "0x%08x", static_cast<unsigned>(std::bit_cast<uint32_t>(x.alpha)));
    g[std::string(linear_gemm_name(static_cast<LinearGemmId>(i)))] = {
        {"M", x.M},       {"N", x.N},
        {"K", x.K},       {"alpha", x.alpha},
        {"alpha_bits", bits}, {"rel_err", num(x.err.rel_err)},
        {"qsnr_db", num(x.err.qsnr_db)}, {"max_abs_err", num(x.err.max_abs)},
        {"bias", num(x.err.bias)}, {"n_nonfinite", x.err.n_nonfinite}};
  }
  j["gemms"] = g;
  return j;
}

FloatTensor load_matrix(const fs::path& p, const char* role) {
  FloatTensor t = load_float_tensor(p);
  if (t.array.shape.size() != 2 || t.array.size() == 0)
    throw std::runtime_error(p.string() + ": " + role + " must be a non-empty 2-D array, got shape " +
                             io::shape_string(t.array.shape));
  return t;
}

}  // namespace

int cmd_linear(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("recipe", po::value<std::string>()->value_name("R"), ("recipe: " + recipe_list() + " (default nvfp4-paper)").c_str())
      ("m", po::value<std::string>()->value_name("M"), "tokens (default 256)")
      ("n", po::value<std::string>()->value_name("N"), "output features (default 256)")
      ("k", po::value<std::string>()->value_name("K"), "input features (default 256)")
      ("seed", po::value<std::string>()->value_name("S"),
       "seed of the synthetic tensors and of the SR bits / seeded RHT signs (default 0)")
      ("x", po::value<std::string>()->value_name("X.npy"), "activations [m, k] instead of synthetic ones")
      ("w", po::value<std::string>()->value_name("W.npy"), "weights [n, k]")
      ("dy", po::value<std::string>()->value_name("DY.npy"), "output gradients [m, n]")
      ("model", po::value<std::string>()->value_name("M"),
       "numerics model (default: the hardware model of the recipe's kind; bf16: exact)")
      ("pts", po::value<std::string>()->value_name("on|off"), "nvfp4 per-tensor scale")
      ("sr", po::value<std::string>()->value_name("on|off"), "stochastic rounding of dY (Dgrad, Wgrad operands)")
      ("rht", po::value<std::string>()->value_name("N|off"), "RHT size on both Wgrad operands")
      ("2d", po::value<std::string>()->value_name("on|off"), "nvfp4 16x16 weight tiles")
      ("scale-rule", po::value<std::string>()->value_name("RULE"), "mxfp4 scale rule: floor or rceil (ceil is an alias)")
      ("convention", po::value<std::string>()->value_name("LIB"),
       "whose quantizer every operand follows: te (default), torchao, modelopt; not a training recipe: "
       "torchao and modelopt have no SR or 2D, so pair it with --sr off --2d off")
      ("ablation", po::bool_switch(), "run every paper recipe with each stabilizer switched, one row each")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the results as JSON (atomically)")
      ("force", po::bool_switch(), "replace FILE if it already exists")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  const bool ablation = vm["ablation"].as<bool>();
  for (const char* o : {"recipe", "model", "pts", "sr", "rht", "2d", "scale-rule", "convention"})
    if (ablation && vm.count(o)) throw UsageError(std::string("--ablation fixes the recipes; it cannot be combined with --") + o);
  const bool from_files = vm.count("x") || vm.count("w") || vm.count("dy");
  if (from_files && !(vm.count("x") && vm.count("w") && vm.count("dy")))
    throw UsageError("--x, --w and --dy go together");
  if (from_files && (vm.count("m") || vm.count("n") || vm.count("k")))
    throw UsageError("--x/--w/--dy cannot be combined with --m, --n or --k");
  uint64_t seed = 0;
  if (vm.count("seed")) seed = parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX);
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;

  std::vector<LinearRecipe> recipes;
  if (ablation) {
    recipes = ablation_recipes(seed);
  } else {
    LinearRecipe r;
    const std::string name = get_or(vm, "recipe", "nvfp4-paper");
    if (!linear_recipe(name, r)) throw UsageError("--recipe: unknown recipe '" + name + "' (expected one of: " + recipe_list() + ")");
    r.seed = seed;
    const bool nv = r.format == RecipeFormat::Nvfp4;
    const std::string fmt(recipe_format_name(r.format));
    // A switch that would not change anything is refused, as `fp4sim quantize` does.
    if (vm.count("pts")) {
      if (!nv) throw UsageError("--pts applies to nvfp4 recipes only, not " + fmt);
      r.pts = parse_on_off("pts", vm["pts"].as<std::string>());
    }
    if (vm.count("2d")) {
      if (!nv) throw UsageError("--2d applies to nvfp4 recipes only, not " + fmt);
      r.two_d_weights = parse_on_off("2d", vm["2d"].as<std::string>());
    }
    if (vm.count("scale-rule")) {
      if (r.format != RecipeFormat::Mxfp4) throw UsageError("--scale-rule applies to mxfp4 recipes only, not " + fmt);
      const std::string s = vm["scale-rule"].as<std::string>();
      if (!parse_scale_rule(s, r.scale_rule)) throw UsageError("--scale-rule: unknown rule '" + s + "' (expected floor or rceil)");
    }
    if (vm.count("convention")) {
      const std::string c = vm["convention"].as<std::string>();
      if (!parse_convention(c, r.convention))
        throw UsageError("--convention: unknown library '" + c + "' (expected te, torchao or modelopt)");
      if (r.format == RecipeFormat::Bf16) throw UsageError("--convention does not apply to bf16");
    }
    if (vm.count("sr")) {
      if (r.format == RecipeFormat::Bf16) throw UsageError("--sr does not apply to bf16");
      r.sr_gradients = parse_on_off("sr", vm["sr"].as<std::string>());
    }
    if (vm.count("rht")) {
      if (r.format == RecipeFormat::Bf16) throw UsageError("--rht does not apply to bf16");
      const std::string t = vm["rht"].as<std::string>();
      if (t == "off") {
        r.rht_wgrad = 0;
      } else {
        const uint64_t n = parse_uint("rht", t, 2, 1u << 16);
        if (!std::has_single_bit(n)) throw UsageError("--rht: size must be a power of two >= 2 or 'off', got " + t);
        r.rht_wgrad = static_cast<int>(n);
      }
    }
    if (vm.count("model")) {
      const std::string m = vm["model"].as<std::string>();
      Model md{};
      if (!parse_model(m, md))
        throw UsageError("--model: unknown model '" + m + "' (expected blackwell, exact, fp32-seq or ascend-hif4)");
      r.model = md;
    }
    try {
      validate_recipe(r);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("recipe ") + name + ": " + e.what());
    }
    recipes.push_back(r);
  }

  const fs::path json_path = vm.count("json") ? fs::path(vm["json"].as<std::string>()) : fs::path();
  Outputs outs(vm["force"].as<bool>());
  if (vm["force"].as<bool>() && !vm.count("json")) throw UsageError("--force: only applies to --json FILE");
  const size_t json_h = vm.count("json") ? outs.file("json", json_path) : 0;

  LinearInputs in;
  io::Json source;
  if (from_files) {
    const fs::path px = vm["x"].as<std::string>(), pw = vm["w"].as<std::string>(), pd = vm["dy"].as<std::string>();
    FloatTensor x = load_matrix(px, "X"), w = load_matrix(pw, "W"), dy = load_matrix(pd, "dY");
    in.m = x.array.shape[0];
    in.k = x.array.shape[1];
    in.n = w.array.shape[0];
    if (w.array.shape[1] != in.k)
      throw std::runtime_error(pw.string() + ": W has shape " + io::shape_string(w.array.shape) + ", expected (n, " +
                               std::to_string(in.k) + ") to match X");
    if (dy.array.shape[0] != in.m || dy.array.shape[1] != in.n)
      throw std::runtime_error(pd.string() + ": dY has shape " + io::shape_string(dy.array.shape) + ", expected (" +
                               std::to_string(in.m) + ", " + std::to_string(in.n) + ")");
    in.x = std::move(x.values);
    in.w = std::move(w.values);
    in.dy = std::move(dy.values);
    source = {{"x", px.string()}, {"w", pw.string()}, {"dy", pd.string()}, {"seed", seed}};
  } else {
    const size_t m = vm.count("m") ? parse_uint("m", vm["m"].as<std::string>(), 1, kMaxElements) : kDefaultM;
    const size_t n = vm.count("n") ? parse_uint("n", vm["n"].as<std::string>(), 1, kMaxElements) : kDefaultN;
    const size_t k = vm.count("k") ? parse_uint("k", vm["k"].as<std::string>(), 1, kMaxElements) : kDefaultK;
    for (uint64_t e : {uint64_t{m} * k, uint64_t{n} * k, uint64_t{m} * n})
      if (e > kMaxElements)
        throw UsageError("a tensor of " + std::to_string(e) + " elements exceeds the limit " + std::to_string(kMaxElements));
    in = synth_linear_inputs(m, n, k, seed);
    source = {{"x", "llm_activations"}, {"w", "llm_weights"}, {"dy", "llm_gradients"}, {"seed", seed}};
  }

  const LinearReference ref = linear_reference(in, threads);
  std::vector<LinearResult> results;
  for (const LinearRecipe& r : recipes) {
    try {
      results.push_back(run_linear(r, in, ref, threads));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("recipe " + r.name + ": " + e.what());  // dimensions do not fit the recipe
    }
  }

  if (!json_path.empty()) {
    io::Json j = io::report_header(inv.name, inv.argv);
    j["layer"] = {{"m", in.m}, {"n", in.n}, {"k", in.k}, {"source", source}};
    j["reference"] = "FP64 products of the unquantized operands, summed in order";
    j["results"] = io::Json::array();
    for (const LinearResult& res : results) j["results"].push_back(recipe_json(res));
    outs.set().write(json_h, j.dump(2) + "\n");
    outs.commit();
  }

  std::cout << "linear layer: m=" << in.m << " tokens, n=" << in.n << " out, k=" << in.k << " in; ";
  if (from_files)
    std::cout << "x, w, dy from files\n";
  else
    std::cout << "x = llm_activations, w = llm_weights, dy = llm_gradients, seed " << seed << "\n";
  std::cout << "errors against the FP64 product of the unquantized tensors; operands quantized along each GEMM's "
               "reduction axis\n\n";
  if (!ablation) {
    const LinearResult& res = results.front();
    std::cout << "recipe " << res.recipe.name << ": " << recipe_format_name(res.recipe.format) << ", "
              << settings(res.recipe) << ", model " << model_name(res.model) << "\n\n";
    std::vector<std::vector<std::string>> rows;
    for (int i = 0; i < 3; ++i) {
      const LinearGemmResult& g = res.gemm[i];
      rows.push_back({std::string(linear_gemm_name(static_cast<LinearGemmId>(i))), kGemmText[i],
                      std::to_string(g.M) + "x" + std::to_string(g.N) + "x" + std::to_string(g.K),
                      fmt_num("%.6g", g.alpha), fmt_num("%.4e", g.err.rel_err), fmt_num("%.2f", g.err.qsnr_db),
                      fmt_num("%.3e", g.err.max_abs), fmt_num("%+.2e", g.err.bias)});
    }
    print_table(std::cout, {"gemm", "computes", "MxNxK", "alpha", "rel_err", "QSNR dB", "max_abs_err", "bias"}, rows, 3);
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const LinearResult& res : results) {
      std::vector<std::string> row{res.recipe.name, std::string(recipe_format_name(res.recipe.format)),
                                   settings(res.recipe), std::string(model_name(res.model))};
      for (int i = 0; i < 3; ++i) row.push_back(fmt_num("%.4e", res.gemm[i].err.rel_err));
      for (int i = 0; i < 3; ++i) row.push_back(fmt_num("%.2f", res.gemm[i].err.qsnr_db));
      rows.push_back(row);
    }
    print_table(std::cout,
                {"recipe", "format", "settings", "model", "fprop rel", "dgrad rel", "wgrad rel", "fprop dB", "dgrad dB",
                 "wgrad dB"},
                rows, 4);
  }
  return kExitOk;
}

}  // namespace fp4sim::cli
