// fp4sim regress / whatif / study run as a user would (FP4SIM_CLI), as one process: the outputs do
// not depend on threads, shard sizes or unit order; case i is a function of (seed, unit, i) alone;
// injected faults are counted, written as a vector suite and replay; a run killed with SIGKILL
// resumes to the same bytes; bad input fails with one line and writes nothing. The same properties
// across MPI ranks are checked by mpi_check.sh (CTest scaleout_mpi_*).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "fp4sim/io/npy.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/synth.hpp"
#include "../sim/cli_harness.hpp"

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
using namespace fp4sim;
using Json = nlohmann::json;
using fp4sim::test::Dir;
using fp4sim::test::expect_failure;
using fp4sim::test::Result;
using fp4sim::test::slurp;

namespace {

// Every file under dir (relative path -> bytes).
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> t;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) t[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return t;
}

void expect_same_tree(const fs::path& a, const fs::path& b) {
  const auto ta = tree(a), tb = tree(b);
  ASSERT_FALSE(ta.empty()) << a;
  std::set<std::string> na, nb;
  for (const auto& [k, v] : ta) na.insert(k);
  for (const auto& [k, v] : tb) nb.insert(k);
  ASSERT_EQ(na, nb) << a << " vs " << b;
  for (const auto& [k, v] : ta) EXPECT_TRUE(v == tb.at(k)) << k << " differs between " << a << " and " << b;
}

// A run that found mismatches: exit 1, the summary on stdout, the verdict as stderr's last line
// (after the plan and timing lines).
void expect_mismatch(const Result& r, const std::string& needle) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("MISMATCH: "), std::string::npos) << r.out;
  const size_t last = r.err.rfind('\n', r.err.size() >= 2 ? r.err.size() - 2 : 0);
  const std::string line = r.err.substr(last == std::string::npos ? 0 : last + 1);
  EXPECT_EQ(line.rfind("fp4sim: error: " + needle, 0), 0u) << r.err;
}

size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

struct Csv {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  size_t col(const std::string& name) const {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end()) {
      ADD_FAILURE() << "no column " << name;
      return 0;
    }
    return static_cast<size_t>(it - head.begin());
  }
  const std::string& at(size_t row, const std::string& name) const { return rows[row][col(name)]; }
};

// Plain CSV (the study's cells hold no commas or quotes).
Csv parse_csv(const std::string& text) {
  Csv c;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    std::vector<std::string> cells;
    std::string cell;
    std::stringstream ls(line);
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    if (c.head.empty()) c.head = cells;
    else c.rows.push_back(cells);
  }
  return c;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(Regress, SameBytesWhateverThreadsShardSizesAndUnitOrder) {
  Dir d;
  const Result a = d.run("regress --cases 3000 --seed 7 --out a");
  ASSERT_EQ(a.code, 0) << a.err;
  const Result b = d.run("regress --cases 3000 --seed 7 --out b --threads 2 --shard-size 512");
  ASSERT_EQ(b.code, 0) << b.err;
  const Result c = d.run("regress --cases 3000 --seed 7 --out c --units gpu-host,models,rtl --threads 3 --shard-size 300");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out, c.out);
  EXPECT_EQ(a.out, slurp(d / "a/summary.txt"));
  expect_same_tree(d / "a", d / "b");
  expect_same_tree(d / "a", d / "c");
  EXPECT_FALSE(fs::exists(d / "a.partial"));
  EXPECT_FALSE(fs::exists(d / "a/mismatches"));  // nothing mismatched
  // The report: every unit this build has, each case counted once; GEMM units round up to whole GEMMs.
  const Json rep = Json::parse(slurp(d / "a/report.json"));
  EXPECT_EQ(rep["seed"], 7);
  EXPECT_EQ(rep["cases_per_unit"], 3000);
  EXPECT_EQ(rep["all_bit_exact"], true);
  EXPECT_EQ(rep["mismatching_outputs"], 0);
  uint64_t total = 0;
  std::set<std::string> families;
  for (const Json& u : rep["units"]) {
    const uint64_t group = u["case_group"];
    EXPECT_EQ(u["cases"].get<uint64_t>(), (3000 + group - 1) / group * group) << u["unit"];
    EXPECT_EQ(u["mismatching_outputs"], 0);
    total += u["cases"].get<uint64_t>();
    families.insert(u["family"]);
    EXPECT_NE(a.out.find(u["unit"].get<std::string>()), std::string::npos);
  }
  EXPECT_EQ(rep["outputs_checked"].get<uint64_t>(), total);
  EXPECT_TRUE(families.count("gpu-host"));
  EXPECT_NE(a.out.find("All " + std::to_string(total) + " outputs bit-identical to golden."), std::string::npos);
  // stderr: the plan and a timing line (not part of the outputs).
  EXPECT_NE(a.err.find("regress: timing ranks=1 threads=1"), std::string::npos) << a.err;
  EXPECT_NE(b.err.find("threads=2"), std::string::npos) << b.err;
}

TEST(Regress, CaseIsAFunctionOfSeedUnitAndIndexOnly) {
  Dir d;
  // Output 1000 of gpu-host (GEMM 15, outputs 960..1023) as the mismatch suite holds it, from runs
  // that cut the cases differently and count different totals.
  const Result a = d.run("regress --units gpu-host --cases 2000 --seed 7 --inject-fault 1000 --out a");
  const Result b = d.run("regress --units gpu-host --cases 6000 --seed 7 --inject-fault 1000 --shard-size 256 --threads 2 --out b");
  const Result c = d.run("regress --units gpu-host --cases 2000 --seed 8 --inject-fault 1000 --out c");
  for (const Result* r : {&a, &b, &c}) expect_mismatch(*r, "regress: 1 of ");
  const auto ta = tree(d / "a/mismatches/cases"), tb = tree(d / "b/mismatches/cases"), tc = tree(d / "c/mismatches/cases");
  ASSERT_FALSE(ta.empty());
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);  // another seed, another GEMM
  const Json m = Json::parse(slurp(d / "a/mismatches/manifest.json"));
  ASSERT_EQ(m["cases"].size(), 1u);
  const Json& cs = m["cases"][0];
  EXPECT_EQ(cs["class"], "regress-gpu-host");
  EXPECT_EQ(cs["M"].get<size_t>() * cs["N"].get<size_t>(), 64u);
  EXPECT_NE(cs["description"].get<std::string>().find("GEMM 15 (cases 960..1023)"), std::string::npos) << cs["description"];
  // The stored expected D is golden's for the stored operands: recompute it here.
  const fs::path cdir = d / ("a/mismatches/" + cs["dir"].get<std::string>());
  MmaKindId kind;
  ASSERT_TRUE(parse_mma_kind(cs["kind"].get<std::string>(), kind));
  auto fmt = [](const std::string& name) -> const ElemFormat* {
    for (const ElemFormat* f : {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2, &kUE4M3, &kUE8M0, &kE6M2, &kS1P2})
      if (f->name == name) return f;
    return nullptr;
  };
  const MmaConfig cfg = make_mma_config(kind, fmt(cs["elem_a"]), fmt(cs["elem_b"]), fmt(cs["scale_type"]), cs["block"]);
  const size_t M = cs["M"], N = cs["N"], K = cs["K"];
  auto scales = [&](const std::string& f) {
    const io::NpyArray s = io::read_npy(cdir / f);
    if (cfg.kind->scale_word32) return s.values<uint32_t>();
    const std::vector<uint8_t> b8 = s.values<uint8_t>();
    return std::vector<uint32_t>(b8.begin(), b8.end());
  };
  ASSERT_EQ(cs["expected"].size(), 1u);
  const std::string model_str = cs["expected"].begin().key();
  Model model;
  ASSERT_TRUE(parse_model(model_str, model));
  const std::vector<float> want =
      gemm(cfg, model, M, N, K, io::read_npy(cdir / "a_codes.npy").values<uint8_t>(), scales("a_scales.npy"),
           io::read_npy(cdir / "b_codes.npy").values<uint8_t>(), scales("b_scales.npy"),
           io::read_npy(cdir / "c.npy").values<float>(), 1.0f, 1);
  const std::vector<float> stored = io::read_npy(d / ("a/mismatches/" + cs["expected"][model_str].get<std::string>())).values<float>();
  ASSERT_EQ(want.size(), stored.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(std::bit_cast<uint32_t>(want[i]), std::bit_cast<uint32_t>(stored[i])) << i;
  // The report names the output and both values: the device's is golden's with bit 0 flipped.
  const Json rep = Json::parse(slurp(d / "a/report.json"));
  const Json& f = rep["units"][0]["first_mismatches"][0];
  EXPECT_EQ(f["group"], 15);
  EXPECT_EQ(f["first_output"], 1000 - 960);
  const uint32_t g = static_cast<uint32_t>(std::stoul(f["golden"].get<std::string>(), nullptr, 16));
  const uint32_t dv = static_cast<uint32_t>(std::stoul(f["device"].get<std::string>(), nullptr, 16));
  EXPECT_EQ(g, std::bit_cast<uint32_t>(want[1000 - 960]));
  EXPECT_EQ(dv, g ^ 1u);
}

TEST(Regress, InjectedFaultsAreCountedWrittenAndReplayable) {
  Dir d;
  const Result r = d.run("regress --cases 600 --seed 11 --inject-fault 3,300,599 --out f");
  ASSERT_EQ(r.code, 1) << r.err;
  const Json rep = Json::parse(slurp(d / "f/report.json"));
  const size_t units = rep["units"].size();
  EXPECT_EQ(rep["mismatching_outputs"].get<uint64_t>(), 3 * units);
  EXPECT_EQ(rep["all_bit_exact"], false);
  EXPECT_EQ(rep["mismatches"], "mismatches");
  for (const Json& u : rep["units"]) {
    EXPECT_EQ(u["mismatching_outputs"], 3) << u["unit"];
    EXPECT_EQ(u["mismatching_groups"], 3) << u["unit"];  // GEMM units: 3 different GEMMs (256 / 64 outputs each)
    EXPECT_EQ(u["first_mismatches"].size(), 3u);
  }
  expect_mismatch(r, "regress: " + std::to_string(3 * units) + " of ");
  EXPECT_EQ(r.out, slurp(d / "f/summary.txt"));
  const Json m = Json::parse(slurp(d / "f/mismatches/manifest.json"));
  EXPECT_EQ(m["cases"].size(), 3 * units);
  EXPECT_EQ(m["command"], "regress");
  // Replay: the expected outputs are golden's, so the golden target passes every case, and so does
  // the GPU kernels' host arithmetic (the faults were injected, not real).
  const Result g = d.run("replay f/mismatches --target golden --quiet");
  EXPECT_EQ(g.code, 0) << g.out << g.err;
  EXPECT_NE(g.out.find(std::to_string(3 * units) + " cases, " + std::to_string(3 * units) + " pass"), std::string::npos) << g.out;
  const Result h = d.run("replay f/mismatches --target gpu-host --quiet");
  EXPECT_EQ(h.code, 0) << h.out << h.err;
  // --max-vectors bounds the suite, not the count.
  const Result one = d.run("regress --cases 600 --seed 11 --inject-fault 3,300,599 --max-vectors 1 --out g");
  ASSERT_EQ(one.code, 1);
  EXPECT_EQ(Json::parse(slurp(d / "g/mismatches/manifest.json"))["cases"].size(), units);
  EXPECT_EQ(Json::parse(slurp(d / "g/report.json"))["mismatching_outputs"].get<uint64_t>(), 3 * units);
}

TEST(Regress, ResumeAfterSigkillGivesTheSameBytes) {
  Dir d;
  ASSERT_EQ(d.run("regress --cases 5000 --seed 3 --out ref").code, 0);
  // Killed (SIGKILL, by the test hook) after its 4th shard file: no output, the state directory
  // holds exactly the 4 finished shards.
  const Result k = d.run("regress --cases 5000 --seed 3 --shard-size 1024 --out k", "FP4SIM_TEST_KILL_AFTER_SHARDS=4");
  ASSERT_EQ(k.code, 128 + 9) << k.err;
  EXPECT_FALSE(fs::exists(d / "k"));
  ASSERT_TRUE(fs::exists(d / "k.partial/plan.txt"));
  EXPECT_EQ(count_files(d / "k.partial/shards"), 4u);
  // Without --resume the interrupted run is not silently discarded.
  expect_failure(d.run("regress --cases 5000 --seed 3 --shard-size 1024 --out k"), 1, "--resume continues it");
  // --resume with other options is refused, naming the option.
  expect_failure(d.run("regress --cases 5000 --seed 4 --shard-size 1024 --out k --resume"), 1, "'seed 3', now 'seed 4'");
  EXPECT_EQ(count_files(d / "k.partial/shards"), 4u);
  // A damaged shard and a killed write's temporary are redone / removed.
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(d / "k.partial/shards")) shards.push_back(e.path());
  std::sort(shards.begin(), shards.end());
  fs::resize_file(shards[1], fs::file_size(shards[1]) - 3);
  std::ofstream(d / "k.partial/shards/.00000007.shard.tmp-abcdefgh") << "half";
  const Result r = d.run("regress --cases 5000 --seed 3 --shard-size 1024 --out k --resume");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("3 of "), std::string::npos) << r.err;  // 3 good shards taken over
  const Result ref_out = d.run("regress --cases 5000 --seed 3 --out ref2");
  EXPECT_EQ(r.out, ref_out.out);
  expect_same_tree(d / "ref", d / "k");
  EXPECT_FALSE(fs::exists(d / "k.partial"));
  // Complete: --resume has nothing to do and says so; --force redoes it.
  expect_failure(d.run("regress --cases 5000 --seed 3 --shard-size 1024 --out k --resume"), 1, "already complete");
  EXPECT_EQ(d.run("regress --cases 5000 --seed 3 --out k --force").code, 0);
  expect_same_tree(d / "ref", d / "k");
  // Killed again, then restarted from scratch with --force: the old state is discarded.
  ASSERT_EQ(d.run("regress --cases 5000 --seed 3 --out z", "FP4SIM_TEST_KILL_AFTER_SHARDS=2").code, 128 + 9);
  EXPECT_EQ(d.run("regress --cases 5000 --seed 3 --out z --force").code, 0);
  expect_same_tree(d / "ref", d / "z");
  EXPECT_FALSE(fs::exists(d / "z.partial"));
}

TEST(Regress, BadInputsFailWithOneLineAndWriteNothing) {
  Dir d;
  fs::create_directories(d / "exists");
  std::ofstream(d / "file") << "x";
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"regress --units nosuch --out o", 2, "--units: unknown unit 'nosuch'"},
      {"regress --cases 0 --out o", 2, "--cases"},
      {"regress --cases 12x --out o", 2, "--cases"},
      {"regress --seed -1 --out o", 2, "--seed"},
      {"regress --force --resume --out o", 2, "--force and --resume cannot be combined"},
      {"regress --inject-fault 1,x --out o", 2, "--inject-fault"},
      {"regress --shard-size 0 --out o", 2, "--shard-size"},
      {"regress --max-vectors 65 --out o", 2, "--max-vectors"},
      {"regress --threads 999 --out o", 2, "--threads"},
      {"regress --cases 10 --out o stray", 2, ""},
      {"regress --cases 10 --out exists", 1, "exists: already exists (use --force to replace it)"},
      {"regress --cases 10 --out file --force", 1, "file: exists and is not a directory"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args), code, needle);
  }
  EXPECT_FALSE(fs::exists(d / "o"));
  EXPECT_FALSE(fs::exists(d / "o.partial"));
  EXPECT_FALSE(fs::exists(d / "exists.partial"));
  EXPECT_TRUE(fs::is_empty(d / "exists"));
  EXPECT_EQ(slurp(d / "file"), "x");
}

// ---------------------------------------------------------------------------------------------
TEST(WhatifSharded, ShardedKilledAndResumedCsvIsByteIdentical) {
  FP4SIM_REQUIRE_MODELS();
  Dir d;
  const std::string sweep = "whatif --m 128 --n 256 --k 512 --sweep cores=1,2,4 --sweep dram_bytes_per_cycle=32,64 ";
  ASSERT_EQ(d.run(sweep + "--out a.csv").code, 0);
  ASSERT_EQ(d.run(sweep + "--out b.csv --shard-size 1").code, 0);
  const std::string a = slurp(d / "a.csv");
  EXPECT_EQ(a, slurp(d / "b.csv"));
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 1 + 5 * 6);  // 2 + 3 formats x 6 sweep points
  const Result k = d.run(sweep + "--out c.csv --shard-size 2", "FP4SIM_TEST_KILL_AFTER_SHARDS=3");
  ASSERT_EQ(k.code, 128 + 9);
  EXPECT_FALSE(fs::exists(d / "c.csv"));
  EXPECT_EQ(count_files(d / "c.csv.partial/shards"), 3u);
  const Result r = d.run(sweep + "--out c.csv --shard-size 2 --resume");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("3 of 15 shards were done, 12 to run"), std::string::npos) << r.err;
  EXPECT_EQ(a, slurp(d / "c.csv"));
  EXPECT_FALSE(fs::exists(d / "c.csv.partial"));
  // The structural cycle model too: a configuration's row does not depend on what ran before it.
  const std::string cyc = "whatif --timing cycle --engine cube --m 64 --n 128 --k 256 --sweep cores=1,2,3 ";
  ASSERT_EQ(d.run(cyc + "--out x.csv").code, 0);
  ASSERT_EQ(d.run(cyc + "--out y.csv --shard-size 1", "FP4SIM_TEST_KILL_AFTER_SHARDS=4").code, 128 + 9);
  ASSERT_EQ(d.run(cyc + "--out y.csv --shard-size 1 --resume").code, 0);
  EXPECT_EQ(slurp(d / "x.csv"), slurp(d / "y.csv"));
  // An existing CSV needs --force (the output policy); a plain forced run discards an
  // interrupted run's state.
  ASSERT_EQ(d.run(sweep + "--out c.csv --force --shard-size 2", "FP4SIM_TEST_KILL_AFTER_SHARDS=1").code, 128 + 9);
  ASSERT_EQ(d.run(sweep + "--out c.csv --force").code, 0);
  EXPECT_FALSE(fs::exists(d / "c.csv.partial"));
  EXPECT_EQ(slurp(d / "a.csv"), slurp(d / "c.csv"));
}

// ---------------------------------------------------------------------------------------------
TEST(Study, EveryLinearLayerOnBothEnginesAndEveryFormat) {
  FP4SIM_REQUIRE_MODELS();
  Dir d;
  const Result r = d.run("study --model tiny --tokens 64 --out s.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parse_csv(slurp(d / "s.csv"));
  // tiny: hidden 256, 2 layers, 4 heads / 2 KV heads of 64, MLP 512, vocabulary 1024.
  const std::vector<std::tuple<std::string, size_t, size_t, size_t>> layers = {
      {"q_proj", 256, 256, 2},   {"k_proj", 128, 256, 2},    {"v_proj", 128, 256, 2},  {"o_proj", 256, 256, 2},
      {"gate_proj", 512, 256, 2}, {"up_proj", 512, 256, 2}, {"down_proj", 256, 512, 2}, {"lm_head", 1024, 256, 1}};
  const std::vector<std::pair<std::string, std::string>> ef = {
      {"tensor-core", "nvfp4"},      {"tensor-core", "mxfp4"},      {"tensor-core", "mxfp8-e4m3"},
      {"tensor-core", "mxfp8-e5m2"}, {"tensor-core", "mxfp6-e2m3"}, {"tensor-core", "mxfp6-e3m2"},
      {"cube", "hif4"},              {"cube", "nvfp4"},             {"cube", "mxfp4"}};
  ASSERT_EQ(csv.rows.size(), ef.size() * layers.size());
  std::map<std::string, uint64_t> forward;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& [engine, format] = ef[i / layers.size()];
    const auto& [name, n, k, inst] = layers[i % layers.size()];
    EXPECT_EQ(csv.at(i, "model"), "tiny");
    EXPECT_EQ(csv.at(i, "engine"), engine);
    EXPECT_EQ(csv.at(i, "format"), format);
    EXPECT_EQ(csv.at(i, "layer"), name);
    EXPECT_EQ(csv.at(i, "m"), "64");
    EXPECT_EQ(csv.at(i, "n"), std::to_string(n));
    EXPECT_EQ(csv.at(i, "k"), std::to_string(k));
    EXPECT_EQ(csv.at(i, "instances"), std::to_string(inst));
    EXPECT_EQ(csv.at(i, "error"), "");
    const uint64_t cycles = std::stoull(csv.at(i, "cycles"));
    EXPECT_GT(cycles, 0u);
    EXPECT_EQ(std::stoull(csv.at(i, "cycles_all_instances")), cycles * inst);
    const double util = std::stod(csv.at(i, "utilization"));
    EXPECT_GT(util, 0.0);
    EXPECT_LE(util, 1.0);
    forward[engine + " " + format] += cycles * inst;
    // The error vs FP64 of the sample (32 tokens x min(128, n) outputs, whole K), recomputed here.
    EXPECT_EQ(csv.at(i, "sample_m"), "32");
    const size_t sn = std::min<size_t>(128, n);
    EXPECT_EQ(csv.at(i, "sample_n"), std::to_string(sn));
    if (i % layers.size() == 0 || i % layers.size() == 6) {
      BlockFormat f;
      ASSERT_TRUE(parse_block_format(format, f));
      const uint64_t lseed = 0 ^ (0x9E3779B97F4A7C15ull * (i % layers.size() + 1));
      const std::vector<float> x = llm_activations(32, k, lseed), w = llm_weights(sn, k, lseed);
      const QuantizedGemm q = quantized_gemm(f, x, {}, w, {}, {}, 32, sn, k, std::nullopt, 1);
      const GemmError e = gemm_error(q.d, reference_gemm_f64(x, w, {}, 32, sn, k, 1));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4e", e.rel_err);
      EXPECT_EQ(csv.at(i, "rel_err"), buf);
      std::snprintf(buf, sizeof buf, "%.2f", e.qsnr_db);
      EXPECT_EQ(csv.at(i, "qsnr_db"), buf);
    }
  }
  // Same numerics on both engines: NVFP4 / MXFP4 errors agree row for row.
  for (size_t l = 0; l < layers.size(); ++l) {
    EXPECT_EQ(csv.at(0 * layers.size() + l, "rel_err"), csv.at(7 * layers.size() + l, "rel_err"));
    EXPECT_EQ(csv.at(1 * layers.size() + l, "rel_err"), csv.at(8 * layers.size() + l, "rel_err"));
  }
  // The summary: the forward pass per engine x format = the sum over the layers' instances.
  for (const auto& [key, cycles] : forward) {
    const std::string engine = key.substr(0, key.find(' ')), format = key.substr(key.find(' ') + 1);
    bool found = false;
    std::stringstream ss(r.out);
    for (std::string line; std::getline(ss, line);) {
      std::stringstream ls(line);
      std::string e, f, c;
      ls >> e >> f >> c;
      if (e == engine && f == format) found = c == std::to_string(cycles);
    }
    EXPECT_TRUE(found) << key << " " << cycles << " not in\n" << r.out;
  }
  EXPECT_NE(r.out.find("tiny (a small test shape), 64 tokens: 15 linear layers (8 shapes)"), std::string::npos) << r.out;
  // Sharded, killed and resumed: the same CSV.
  ASSERT_EQ(d.run("study --model tiny --tokens 64 --out t.csv --shard-size 5", "FP4SIM_TEST_KILL_AFTER_SHARDS=6").code, 128 + 9);
  const Result res = d.run("study --model tiny --tokens 64 --out t.csv --shard-size 5 --resume");
  ASSERT_EQ(res.code, 0) << res.err;
  EXPECT_EQ(slurp(d / "s.csv"), slurp(d / "t.csv"));
  EXPECT_EQ(r.out.substr(0, r.out.find("wrote")), res.out.substr(0, res.out.find("wrote")));
  // Bad input.
  expect_failure(d.run("study --model llama-3b --out u.csv"), 2, "--model: unknown model 'llama-3b'");
  expect_failure(d.run("study --tokens 0 --out u.csv"), 2, "--tokens");
  expect_failure(d.run("study --engine gpu --out u.csv"), 2, "--engine");
  expect_failure(d.run("study --engine cube --format mxfp8-e4m3 --out u.csv"), 2, "cube does not run mxfp8-e4m3");
  expect_failure(d.run("study --param nosuch=1 --out u.csv"), 2, "nosuch");
  EXPECT_FALSE(fs::exists(d / "u.csv"));
  EXPECT_FALSE(fs::exists(d / "u.csv.partial"));
}
