// The one output policy of every command (docs/cli.md "Outputs") and the small defects of issue 15,
// run against the real fp4sim binary: exact messages, exit codes, and the files left behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/quant.hpp"
#include "fp4sim/synth.hpp"

namespace fp4sim {
namespace {

namespace fs = std::filesystem;
using test::Dir;
using test::Result;
using test::slurp;

// One stderr line, exactly `line`, the exit code, nothing on stdout.
void expect_exact_error(const Result& r, int code, const std::string& line) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.err, "fp4sim: error: " + line + "\n");
  EXPECT_EQ(r.out, "");
}

std::vector<float> tensor(size_t rows, size_t cols, uint64_t seed) { return llm_activations(rows, cols, seed); }

// A small workspace: x.npy (float [4, 64]), a.npy / b.npy for gemm, mma operands, a file and a folder.
void populate(const Dir& d) {
  io::write_npy<float>(d / "x.npy", std::vector<size_t>{4, 64}, tensor(4, 64, 1));
  io::write_npy<float>(d / "a.npy", std::vector<size_t>{8, 64}, tensor(8, 64, 2));
  io::write_npy<float>(d / "b.npy", std::vector<size_t>{16, 64}, tensor(16, 64, 3));
  io::write_npy<uint8_t>(d / "ca.npy", std::vector<size_t>{2, 64}, std::vector<uint8_t>(128, 0x2));
  io::write_npy<uint8_t>(d / "cb.npy", std::vector<size_t>{2, 64}, std::vector<uint8_t>(128, 0x3));
  io::write_npy<uint8_t>(d / "sa.npy", std::vector<size_t>{2, 2}, std::vector<uint8_t>(4, 127));
  io::write_npy<uint8_t>(d / "sb.npy", std::vector<size_t>{2, 2}, std::vector<uint8_t>(4, 127));
  io::write_file_atomic(d / "afile", std::string_view("keep me"));
  fs::create_directory(d / "adir");
}

const std::string kMma = "mma --kind mxf4 --a ca.npy --b cb.npy --sfa sa.npy --sfb sb.npy";
const std::string kGemm = "gemm --format nvfp4 --a a.npy --b b.npy";

// Every command that writes: (command line without the output, output option, output is a folder).
struct Writer {
  std::string args;
  std::string option;
  bool dir;
  bool models;  // needs the SystemC models
};
std::vector<Writer> writers() {
  return {
      {"quantize --format nvfp4 --input x.npy", "--out", true, false},
      {"vectors --suite smoke", "--out", true, false},
      {kMma, "--out", false, false},
      {kGemm + " --out d.npy", "--json", false, false},
      {kGemm + " --json g.json", "--out", false, false},
      {"linear --m 64 --n 64 --k 64", "--json", false, false},
      {"quality --rows 4 --cols 64", "--json", false, false},
      {"run --m 8 --n 16 --k 64 --no-vectors --timing analytic", "--out", true, true},
      {"whatif --m 8 --n 16 --k 64 --engine cube --format hif4", "--out", false, true},
  };
}

// ---------------------------------------------------------------------------------------------
// An existing output: refused without --force (untouched, nothing else written), replaced with it.

TEST(CliPolicy, ExistingOutputNeedsForceEverywhere) {
  for (const Writer& w : writers()) {
    SCOPED_TRACE(w.args);
    if (w.models && !test::models_built()) continue;  // FP4SIM_SYSTEMC=OFF: no run / whatif
    Dir d("policy");
    populate(d);
    const std::string target = w.dir ? "adir" : "afile";
    const std::set<std::string> before = d.entries();
    expect_exact_error(d.run(w.args + " " + w.option + " " + target), 1,
                       target + ": already exists (use --force to replace it)");
    EXPECT_EQ(d.entries(), before);
    EXPECT_EQ(slurp(d / "afile"), "keep me");
    // The other kind: --force cannot help, so it is not suggested.
    const std::string other = w.dir ? "afile" : "adir";
    expect_exact_error(d.run(w.args + " " + w.option + " " + other + " --force"), 1,
                       other + (w.dir ? ": exists and is not a directory; not replacing it"
                                      : ": is a directory; not replacing it"));
    EXPECT_EQ(d.entries(), before);
    // With --force: replaced.
    const Result r = d.run(w.args + " " + w.option + " " + target + " --force");
    ASSERT_EQ(r.code, 0) << r.err;
    if (w.dir) {
      EXPECT_FALSE(fs::is_empty(d / "adir"));
    } else {
      EXPECT_NE(slurp(d / "afile"), "keep me");
    }
  }
}

TEST(CliPolicy, MissingParentFolderIsAnErrorAndNothingIsCreated) {
  for (const Writer& w : writers()) {
    SCOPED_TRACE(w.args);
    if (w.models && !test::models_built()) continue;
    Dir d("policy");
    populate(d);
    const std::set<std::string> before = d.entries();
    expect_exact_error(d.run(w.args + " " + w.option + " nodir/o"), 1, "nodir/o: parent directory does not exist");
    // A file where the folder should be: named, not std::filesystem's own text.
    expect_exact_error(d.run(w.args + " " + w.option + " afile/o"), 1, "afile/o: 'afile' is not a directory");
    EXPECT_EQ(d.entries(), before);
  }
}

// Several outputs are checked before any work and committed together.
TEST(CliPolicy, GemmWritesBothOutputsOrNeither) {
  Dir d("policy");
  populate(d);
  const std::set<std::string> before = d.entries();
  expect_exact_error(d.run(kGemm + " --out d.npy --json nodir/g.json"), 1, "nodir/g.json: parent directory does not exist");
  expect_exact_error(d.run(kGemm + " --out d.npy --json afile"), 1, "afile: already exists (use --force to replace it)");
  expect_exact_error(d.run(kGemm + " --out d.npy --json d.npy"), 1, "d.npy: named as two different outputs");
  EXPECT_EQ(d.entries(), before);
  const Result r = d.run(kGemm + " --out d.npy --json g.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(d / "d.npy"));
  EXPECT_TRUE(fs::exists(d / "g.json"));
}

// A runtime failure after the outputs were declared (a bad operand) leaves nothing either.
TEST(CliPolicy, FailureAfterTheChecksLeavesNothing) {
  Dir d("policy");
  populate(d);
  io::write_npy<float>(d / "bad_b.npy", std::vector<size_t>{16, 32}, tensor(16, 32, 3));
  const std::set<std::string> before = d.entries();
  const Result r = d.run("gemm --format nvfp4 --a a.npy --b bad_b.npy --out d.npy --json g.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "fp4sim: error: bad_b.npy: B has shape (16, 32) but A has K = 64 (B is [N, K], K-major)\n");
  EXPECT_EQ(d.entries(), before);
}

TEST(CliPolicy, DotIsNoOutputDirectoryName) {
  Dir d("policy");
  populate(d);
  expect_exact_error(d.run("quantize --format nvfp4 --input x.npy --out ."), 1,
                     ".: not a usable output directory name (name a new directory, e.g. out)");
  expect_exact_error(d.run("vectors --suite smoke --out .."), 1,
                     "..: not a usable output directory name (name a new directory, e.g. out)");
  expect_exact_error(d.run("quantize --format nvfp4 --input x.npy --out ''"), 2, "--out: empty directory name");
}

// ---------------------------------------------------------------------------------------------
// Signals: an interrupted command leaves nothing behind, and dies of the signal.

// Waits until an entry whose name starts with `prefix` appears in `dir` (the command's stage).
bool wait_for_entry(const fs::path& dir, const std::string& prefix, pid_t pid) {
  for (int i = 0; i < 6000; ++i) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) return false;  // finished before it could be signalled
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

void interrupt_and_check(const std::vector<std::string>& args, const std::string& stage_prefix, int sig) {
  Dir d("policy_sig");
  populate(d);
  const std::set<std::string> before = d.entries();
  const pid_t pid = d.spawn(args);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_entry(d.work(), stage_prefix, pid)) << "the command never staged its output";
  ASSERT_EQ(::kill(pid, sig), 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(st)) << "exit status " << st << "; stderr: " << d.stderr_text();
  if (WIFSIGNALED(st)) {
    EXPECT_EQ(WTERMSIG(st), sig);
  }
  EXPECT_EQ(d.entries(), before) << "left behind after signal " << sig;
}

TEST(CliPolicy, SigintAndSigtermMidRunLeaveNothing) {
  // An llm suite of 4096 tokens computes for seconds after staging its folder (1024 tokens took
  // under one second once the quantizers got faster, and a signal under load could come too late).
  const std::vector<std::string> args = {"vectors", "--suite", "llm", "--size", "4096", "--threads", "1", "--out", "big"};
  interrupt_and_check(args, "big.tmp-", SIGINT);
  interrupt_and_check(args, "big.tmp-", SIGTERM);
}

TEST(CliPolicy, SigintDuringRunLeavesNeitherFolderNorTrace) {
  FP4SIM_REQUIRE_MODELS();
  interrupt_and_check({"run", "--quick", "--threads", "1", "--out", "o", "--trace", "t.vcd"}, "o.tmp-", SIGINT);
}

// report.md explains its table's columns.
TEST(CliPolicy, RunReportHasAColumnLegend) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("policy");
  const Result r = d.run("run --m 8 --n 16 --k 64 --no-vectors --timing analytic --out o");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(d / "o" / "report.md");
  for (const char* col : {"**engine**", "**bit-exact**", "**equal/total**", "**cycles**", "**MACs/cycle**", "**util**",
                          "**top stall**", "**rel err**", "**QSNR dB**", "**time/golden**"})
    EXPECT_NE(md.find(col), std::string::npos) << col;
  // Run again: refused without --force, replaced with it.
  expect_exact_error(d.run("run --m 8 --n 16 --k 64 --no-vectors --timing analytic --out o"), 1,
                     "o: already exists (use --force to replace it)");
  EXPECT_EQ(d.run("run --m 8 --n 16 --k 64 --no-vectors --timing analytic --out o --force").code, 0);
}

// ---------------------------------------------------------------------------------------------
// Messages: one style, "fp4sim: error: NAME: reason".

TEST(CliPolicy, OptionMessagesNameTheOption) {
  Dir d("policy");
  populate(d);
  const std::string q = "quantize --format nvfp4 --input x.npy --out o ";
  expect_exact_error(d.run(q + "extra"), 2,
                     "'extra': unexpected argument (options start with --; see fp4sim quantize --help)");
  expect_exact_error(d.run(q + "--bogus"), 2, "--bogus: unknown option (see fp4sim quantize --help)");
  expect_exact_error(d.run("quantize --input x.npy --out o"), 2,
                     "--format: missing; this option is required (see fp4sim quantize --help)");
  expect_exact_error(d.run(q + "--rounding"), 2, "--rounding: needs a value");
  expect_exact_error(d.run(q + "--seed 1 --seed 2"), 2, "--seed: given more than once");
  expect_exact_error(d.run("linear --m 0"), 2, "--m: 0 is out of range [1, 67108864]");
  expect_exact_error(d.run("vectors --suite random --size 0 --out v"), 2, "--size: 0 is out of range [1, 1048576]");
  if (test::models_built()) {
    expect_exact_error(d.run("run --m 0"), 2, "--m: 0 is out of range [8, 65536]");
    expect_exact_error(d.run("whatif --m 0"), 2, "--m: 0 is out of range [1, 1048576]");
  }
  EXPECT_FALSE(fs::exists(d / "o"));
}

TEST(CliPolicy, DtypeErrorsListOnlyWhatTheOptionTakes) {
  Dir d("policy");
  populate(d);
  std::string f = std::string("\x93NUMPY\x01\x00", 8);
  const std::string h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 32), }\n";
  f += static_cast<char>(h.size());
  f += '\0';
  f += h + std::string(512, '\0');
  io::write_file_atomic(d / "f64.npy", f);
  expect_exact_error(d.run("quantize --format nvfp4 --input f64.npy --out o"), 1,
                     "f64.npy: unsupported dtype '<f8' (expected float32 '<f4' or uint16 '<u2' (BF16 bits))");
  expect_exact_error(d.run("mma --kind mxf4 --a f64.npy --b cb.npy --sfa sa.npy --sfb sb.npy --out d.npy"), 1,
                     "f64.npy: unsupported dtype '<f8' (expected uint8 '|u1')");
}

// ---------------------------------------------------------------------------------------------
// Output on success, counting, progress.

TEST(CliPolicy, QuantizePrintsOneSummaryLine) {
  Dir d("policy");
  populate(d);
  const Result r = d.run("quantize --format nvfp4 --input x.npy --out o");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::regex_match(r.out, std::regex("o: nvfp4 \\(4, 64\\), 16 blocks, 5 files \\(0\\.0 MB\\) \\+ "
                                                 "manifest\\.json; quantized in [0-9]+\\.[0-9] ms \\(cpu [0-9]+\\.[0-9] ms\\)\n")))
      << r.out;
}

TEST(CliPolicy, VectorsAndReplayCountTheSameArrays) {
  Dir d("policy");
  const Result v = d.run("vectors --suite smoke --out s");
  ASSERT_EQ(v.code, 0) << v.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(v.out, m, std::regex(", ([0-9]+) expected D arrays \\(([0-9]+) values\\)"))) << v.out;
  const std::string arrays = m[1];
  const Result r = d.run("replay s --target golden --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("; " + arrays + " D arrays compared bit for bit"), std::string::npos) << r.out << v.out;
}

TEST(CliPolicy, VectorsProgressOnRequest) {
  Dir d("policy");
  const Result quiet = d.run("vectors --suite smoke --out s1");
  ASSERT_EQ(quiet.code, 0);
  EXPECT_EQ(quiet.err, "");  // stderr is a file here: no progress unless asked
  const Result r = d.run("vectors --suite smoke --out s2 --progress");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^vectors: [0-9]+ of [0-9]+ cases \\([0-9]+%\\), [0-9]+ s\n")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("vectors: ([0-9]+) of \\1 cases \\(100%\\), [0-9]+ s\n$"))) << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 11);  // one line per 10 % at most
}

// A replay target that cannot run says why once, not once per case.
TEST(CliPolicy, ReplaySkipReasonPrintedOnce) {
  Dir d("policy");
  ASSERT_EQ(d.run("vectors --suite smoke --out s").code, 0);
  const Result help = d.run("replay --help");
  if (help.out.find("gpu (") == std::string::npos) GTEST_SKIP() << "this fp4sim has no gpu replay target";
  const Result r = d.run("replay s --target gpu");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present: nothing is skipped";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("^SKIP  ([0-9]+) cases: no GPU: [^\n]+\n"))) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;  // the reason, the summary
  EXPECT_NE(r.out.find("skipped; 0 D arrays compared"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------------
// --threads and --durable change no byte of the results.

TEST(CliPolicy, ThreadsAndDurableChangeNoOutputByte) {
  Dir d("policy");
  io::write_npy<float>(d / "x.npy", std::vector<size_t>{96, 256}, tensor(96, 256, 7));
  for (const std::string fmt : {"nvfp4", "mxfp4", "hif4", "mxfp8-e4m3"}) {
    SCOPED_TRACE(fmt);
    const std::string base = "quantize --format " + fmt + " --rounding sr --seed 5 --input x.npy --force --out ";
    ASSERT_EQ(d.run(base + "t1 --threads 1").code, 0);
    ASSERT_EQ(d.run(base + "t3 --threads 3").code, 0);
    ASSERT_EQ(d.run(base + "td --durable").code, 0);
    const io::Json m = io::read_manifest(d / "t1");
    for (const auto& [name, rec] : m["files"].items()) {
      EXPECT_EQ(slurp(d / "t1" / name), slurp(d / "t3" / name)) << name;
      EXPECT_EQ(slurp(d / "t1" / name), slurp(d / "td" / name)) << name;
    }
  }
  const std::string lin = "linear --m 64 --n 64 --k 128 --seed 3 --sr on --rht 16 --json ";
  ASSERT_EQ(d.run(lin + "l1.json --threads 1").code, 0);
  ASSERT_EQ(d.run(lin + "l3.json --threads 3").code, 0);
  io::Json a = io::Json::parse(slurp(d / "l1.json")), b = io::Json::parse(slurp(d / "l3.json"));
  a.erase("command_line");
  b.erase("command_line");
  EXPECT_EQ(a.dump(), b.dump());
}

// Inputs of 1 MiB and more are read straight into memory (cli.cpp read_f32_direct): the same codes as
// in process, the manifest's size and CRC-32 those of the whole file, the same errors.
TEST(CliPolicy, LargeInputsReadDirectlyGiveTheSameResult) {
  Dir d("policy");
  const std::vector<float> x = tensor(512, 1024, 4);
  io::write_npy<float>(d / "x.npy", std::vector<size_t>{512, 1024}, x);
  const Result r = d.run("quantize --format mxfp4 --input x.npy --out o");
  ASSERT_EQ(r.code, 0) << r.err;
  const Quantized q = quantize(BlockFormat::Mxfp4, x, 512, 1024, QuantOptions{});
  EXPECT_EQ(io::read_npy(d / "o" / "codes.npy").values<uint8_t>(), q.codes);
  EXPECT_EQ(io::read_npy(d / "o" / "scales.npy").values<uint8_t>(), q.scales);
  const std::string file = slurp(d / "x.npy");
  const io::Json m = io::read_manifest(d / "o");
  EXPECT_EQ(m["input"]["bytes"].get<size_t>(), file.size());
  EXPECT_EQ(m["input"]["crc32"].get<std::string>(), io::crc32_hex(io::crc32(file)));
  io::write_file_atomic(d / "trunc.npy", std::string_view(file).substr(0, file.size() - 1));
  expect_exact_error(d.run("quantize --format mxfp4 --input trunc.npy --out t"), 1,
                     "trunc.npy: truncated data: shape (512, 1024) of <f4 needs 2097152 bytes, file has 2097151");
  EXPECT_FALSE(fs::exists(d / "t"));
}

// The manifests' CRC-32 (slicing-by-16, and carry-less multiplication folding from 64 bytes on)
// against a bit-at-a-time reference: every length up to 300 and some large ones, at odd offsets,
// and chained.
TEST(CliPolicy, Crc32FastPathsMatchTheBitwiseReference) {
  auto bitwise = [](std::span<const uint8_t> d, uint32_t prev) {
    uint32_t c = ~prev;
    for (uint8_t b : d) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
  };
  std::vector<uint8_t> buf(70000);
  uint64_t z = 0x9E3779B97F4A7C15ull;
  for (uint8_t& b : buf) {
    z ^= z << 13, z ^= z >> 7, z ^= z << 17;
    b = static_cast<uint8_t>(z);
  }
  const std::span<const uint8_t> all(buf);
  for (size_t n = 0; n <= 300; ++n)
    for (size_t off : {size_t{0}, size_t{1}, size_t{7}}) ASSERT_EQ(io::crc32(all.subspan(off, n)), bitwise(all.subspan(off, n), 0)) << n << " " << off;
  for (size_t n : {size_t{1023}, size_t{4096}, size_t{65537}, size_t{69990}}) {
    EXPECT_EQ(io::crc32(all.subspan(3, n)), bitwise(all.subspan(3, n), 0)) << n;
    EXPECT_EQ(io::crc32(all.subspan(3 + 100, n - 100), io::crc32(all.subspan(3, 100))), bitwise(all.subspan(3, n), 0)) << n;
  }
}

// NaN / Inf inputs go through as the formats define them, with one warning that counts them.
TEST(CliPolicy, NonFiniteInputsAreCountedOnStderr) {
  Dir d("policy");
  std::vector<float> x = tensor(2, 64, 9);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = std::numeric_limits<float>::quiet_NaN();
  x[77] = std::numeric_limits<float>::infinity();
  io::write_npy<float>(d / "x.npy", std::vector<size_t>{2, 64}, x);
  const Result r = d.run("quality --input x.npy");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "fp4sim: warning: x.npy: 2 NaN and 1 Inf of 128 values; quantized as the formats define them "
                   "(docs/cli.md)\n");
}

}  // namespace
}  // namespace fp4sim
