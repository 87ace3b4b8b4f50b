// Sharded jobs over MPI ranks and threads; see scaleout.hpp and docs/scale-out.md.
#include "scaleout/scaleout.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <stdexcept>
#include <thread>

#include <time.h>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"

#if FP4SIM_HAVE_MPI
#include <dlfcn.h>
#include <unistd.h>

#include "scaleout/mpi_module.hpp"
#endif

namespace fp4sim::scaleout {
namespace {

namespace fs = std::filesystem;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x >= 0 && x < (1L << 30) ? static_cast<int>(x) : fallback;
}

// Started by a launcher that lets MPI find its peers (mpirun's ORTE, PMIx, PMI-1/2).
[[maybe_unused]] bool launched_by_mpi() {
  return env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK") || env("PMI_SIZE");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this process (every thread): what a rank computed, whatever else ran on its core.
double process_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

JobTiming g_timing;

#if FP4SIM_HAVE_MPI
// The MPI module (mpi_module.hpp): beside this executable (/proc/self/exe), else in the build
// tree's bin/ (for test programs elsewhere in it); FP4SIM_MPI_MODULE names it explicitly.
const MpiModuleApi& mpi_module() {
  static const MpiModuleApi* api = [] {
    std::vector<std::string> paths;
    if (const char* e = env("FP4SIM_MPI_MODULE")) {
      paths.push_back(e);
    } else {
      char buf[4096];
      const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      const std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
      if (exe.rfind('/') != std::string::npos) paths.push_back(exe.substr(0, exe.rfind('/') + 1) + kMpiModuleFile);
      paths.push_back(std::string(FP4SIM_MPI_MODULE_BUILD_DIR) + "/" + kMpiModuleFile);
    }
    std::string tried;
    for (const std::string& p : paths) {
      // RTLD_GLOBAL: OpenMPI's own plugins (dlopen'ed by libmpi) resolve symbols of libmpi.
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
      using Entry = const MpiModuleApi* (*)();
      const auto entry = h ? reinterpret_cast<Entry>(dlsym(h, kMpiModuleEntry)) : nullptr;
      const MpiModuleApi* a = entry ? entry() : nullptr;
      if (a && a->abi == kMpiModuleAbi) return a;  // never dlclose'd: MPI lives in it until exit
      const char* why = h ? nullptr : dlerror();
      tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : p + ": not a module of this build");
    }
    throw std::runtime_error("started by an MPI launcher, but the MPI module " + std::string(kMpiModuleFile) +
                             " could not be loaded (" + tried + "; set FP4SIM_MPI_MODULE to its path)");
  }();
  return *api;
}
#endif

std::string shard_name(size_t s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08zu.shard", s);
  return buf;
}

}  // namespace

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const int r = env_int(name, -1);
    if (r >= 0) return r;
  }
  return 0;
}

bool built_with_mpi() { return FP4SIM_HAVE_MPI != 0; }

World& World::get() {
  static World w;
  return w;
}

World::World() {
  const int tasks = env_int("SLURM_STEP_NUM_TASKS", 1);
#if FP4SIM_HAVE_MPI
  if (launched_by_mpi()) {
    // Only the main thread calls MPI (worker threads compute shards): MPI_THREAD_FUNNELED.
    mpi_module().init(rank_, size_);
    mpi_ = true;
  }
#endif
  // Several processes that each believe to be alone would all write the same files: refuse.
  const int launched = std::max(env_int("OMPI_COMM_WORLD_SIZE", 1), env_int("PMI_SIZE", 1));
  if (!mpi_ && launched > 1)
    throw std::runtime_error("started as " + std::to_string(launched) +
                             " MPI ranks, but this fp4sim was built without MPI (configure with -DFP4SIM_MPI=ON)");
  if (!mpi_ && tasks > 1 && env("SLURM_PROCID"))
    throw std::runtime_error(
        "srun started " + std::to_string(tasks) + " tasks but " +
        (built_with_mpi() ? std::string("none of them found an MPI launcher: run srun --mpi=pmix (or set MpiDefault=pmix)")
                          : std::string("this fp4sim was built without MPI (configure with -DFP4SIM_MPI=ON)")));
  const int announced = env_int("OMPI_COMM_WORLD_SIZE", size_);
  if (mpi_ && announced != size_)
    throw std::runtime_error("MPI sees " + std::to_string(size_) + " ranks, the launcher started " +
                             std::to_string(announced));
}

void World::barrier() const {
#if FP4SIM_HAVE_MPI
  if (mpi_) mpi_module().barrier();
#endif
}

std::string World::broadcast(std::string s) const {
#if FP4SIM_HAVE_MPI
  if (mpi_) mpi_module().broadcast(s);
#endif
  return s;
}

std::vector<std::string> World::gather(const std::string& mine) const {
  if (!mpi_) return {mine};
#if FP4SIM_HAVE_MPI
  return mpi_module().gather(mine, rank_);
#else
  return {mine};
#endif
}

std::string on_root(const std::function<std::string()>& f) {
  const World& w = World::get();
  if (w.size() == 1) return f();
  std::string msg;
  if (w.root()) {
    // The outcome's kind first: '0' value, '1' runtime error, '2' usage error. (Built with append,
    // not "0" + ...: GCC 12 warns -Wrestrict on that form.)
    try {
      const std::string v = f();
      msg.assign(1, '0').append(v);
    } catch (const cli::UsageError& e) {
      msg.assign(1, '2').append(e.what());
    } catch (const std::bad_alloc&) {
      msg.assign(1, '1').append("out of memory");
    } catch (const std::exception& e) {
      msg.assign(1, '1').append(e.what());
    }
  }
  msg = w.broadcast(msg);
  if (msg.empty()) throw std::runtime_error("internal error: empty broadcast");
  if (msg[0] == '2') throw cli::UsageError(msg.substr(1));
  if (msg[0] == '1') throw std::runtime_error(msg.substr(1));
  return msg.substr(1);
}

fs::path partial_path(const fs::path& out) {
  fs::path p = out;
  if (p.filename().empty()) p = p.parent_path();
  return p.parent_path() / (p.filename().string() + ".partial");
}

std::vector<std::vector<size_t>> assign(const std::vector<size_t>& shards, const std::vector<double>& cost, int ranks) {
  std::vector<std::vector<size_t>> out(static_cast<size_t>(ranks));
  std::vector<double> load(static_cast<size_t>(ranks), 0.0);
  for (size_t s : shards) {
    const size_t r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[r].push_back(s);
    load[r] += s < cost.size() ? cost[s] : 1.0;
  }
  return out;
}

std::string encode_shard(std::string_view plan, size_t shard, std::string_view result) {
  char head[160];
  std::snprintf(head, sizeof head, "fp4sim-shard 1 plan=%s shard=%zu bytes=%zu crc=%s\n",
                io::crc32_hex(io::crc32(plan)).c_str(), shard, result.size(), io::crc32_hex(io::crc32(result)).c_str());
  return std::string(head) + std::string(result);
}

bool decode_shard(std::string_view plan, size_t shard, std::string_view file, std::string& result) {
  const size_t nl = file.find('\n');
  if (nl == std::string_view::npos) return false;
  const std::string head(file.substr(0, nl + 1));
  const std::string_view body = file.substr(nl + 1);
  char want[160];
  std::snprintf(want, sizeof want, "fp4sim-shard 1 plan=%s shard=%zu bytes=%zu crc=%s\n",
                io::crc32_hex(io::crc32(plan)).c_str(), shard, body.size(), io::crc32_hex(io::crc32(body)).c_str());
  if (head != want) return false;
  result.assign(body);
  return true;
}

void put(std::string& out, std::string_view field) {
  put(out, static_cast<uint64_t>(field.size()));
  out.append(field);
}
void put(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}
uint64_t Reader::u64() {
  if (s_.size() < 8) throw std::runtime_error("shard result truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s_[static_cast<size_t>(i)])) << (8 * i);
  s_.remove_prefix(8);
  return v;
}
std::string_view Reader::str() {
  const uint64_t n = u64();
  if (s_.size() < n) throw std::runtime_error("shard result truncated");
  std::string_view v = s_.substr(0, n);
  s_.remove_prefix(n);
  return v;
}

const JobTiming& last_timing() { return g_timing; }

JobOutcome run_job(const JobSpec& spec) {
  const World& world = World::get();
  g_timing = JobTiming{};
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n_shards = spec.cost.size();
  const fs::path shard_dir = spec.partial / "shards";
  JobOutcome outcome;
  outcome.shards = n_shards;

  // ---- prepare (rank 0): the state directory, the shards already done ----
  std::vector<std::string> reused(world.root() ? n_shards : 0);
  std::vector<char> have(world.root() ? n_shards : 0, 0);
  std::string missing_list = on_root([&]() -> std::string {
    if (spec.prepare) spec.prepare();
    std::error_code ec;
    const bool exists = fs::exists(spec.partial, ec);
    if (exists && !fs::is_directory(spec.partial))
      throw io::IoError(spec.partial.string() + ": exists and is not a directory");
    if (exists && !spec.resume) {
      if (!spec.replace_stale)
        throw std::runtime_error(spec.partial.string() +
                                 ": an earlier run was interrupted here (--resume continues it, --force starts over)");
      std::fprintf(stderr, "%s: discarding the interrupted run in %s (--resume would have continued it)\n",
                   spec.label.c_str(), spec.partial.string().c_str());
      fs::remove_all(spec.partial);
    }
    if (exists && spec.resume) {
      std::string plan;
      try {
        const std::vector<uint8_t> bytes = io::read_file(spec.partial / "plan.txt");
        plan.assign(bytes.begin(), bytes.end());
      } catch (const io::IoError&) {
        throw std::runtime_error(spec.partial.string() + ": not a job directory of fp4sim " + spec.label +
                                 " (no plan.txt); delete it or use --force");
      }
      if (plan != spec.plan) {
        // Name the first option that differs.
        size_t a = 0, b = 0;
        std::string la, lb;
        while (a < plan.size() || b < spec.plan.size()) {
          const size_t ea = std::min(plan.find('\n', a), plan.size()), eb = std::min(spec.plan.find('\n', b), spec.plan.size());
          la = plan.substr(a, ea - a);
          lb = spec.plan.substr(b, eb - b);
          if (la != lb) break;
          a = ea + 1;
          b = eb + 1;
        }
        throw std::runtime_error("--resume: " + spec.partial.string() + " was started with other options ('" + la +
                                 "', now '" + lb + "'); give the same options, or --force to start over");
      }
      fs::create_directories(shard_dir);
      for (const auto& e : fs::directory_iterator(shard_dir)) {
        const std::string name = e.path().filename().string();
        size_t idx = 0;
        bool ok = name.size() == 14 && name.compare(8, 6, ".shard") == 0 &&
                  std::all_of(name.begin(), name.begin() + 8, [](char c) { return c >= '0' && c <= '9'; });
        if (ok) {
          idx = std::stoul(name.substr(0, 8));
          ok = idx < n_shards && !have[idx];
        }
        if (ok) {
          const std::vector<uint8_t> bytes = io::read_file(e.path());
          ok = decode_shard(spec.plan, idx, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                            reused[idx]);
        }
        if (ok) {
          have[idx] = 1;
        } else {
          fs::remove(e.path());  // a temporary of a killed write, or a damaged shard: redone
        }
      }
    } else {
      io::StagingDir stage(spec.partial);
      io::write_file_atomic(stage.path() / "plan.txt", spec.plan);
      fs::create_directory(stage.path() / "shards");
      stage.commit(false);
    }
    std::string list;
    for (size_t s = 0; s < n_shards; ++s)
      if (!have[s]) put(list, static_cast<uint64_t>(s));
    return list;
  });
  std::vector<size_t> missing;
  for (Reader r(missing_list); !r.done();) missing.push_back(static_cast<size_t>(r.u64()));
  outcome.reused = n_shards - missing.size();
  if (spec.started) spec.started(outcome.reused);
  if (world.root() && outcome.reused)
    std::fprintf(stderr, "%s: resuming %s: %zu of %zu shards were done, %zu to run\n", spec.label.c_str(),
                 spec.partial.string().c_str(), outcome.reused, n_shards, missing.size());
  g_timing.prepare_s = seconds_since(t0);

  // ---- compute: this rank's shards on `threads` workers, each written as it finishes ----
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu1 = process_cpu_s();
  const std::vector<size_t> mine = assign(missing, spec.cost, world.size())[static_cast<size_t>(world.rank())];
  std::vector<std::string> results(mine.size());
  std::vector<size_t> main_only, shared;
  for (size_t j = 0; j < mine.size(); ++j)
    (spec.main_thread_only && spec.main_thread_only(mine[j]) ? main_only : shared).push_back(j);
  std::atomic<size_t> next_shared{0}, done{0}, written{0};
  std::atomic<bool> stop{false};
  std::mutex err_mu;
  std::string error;
  const int kill_after = env_int("FP4SIM_TEST_KILL_AFTER_SHARDS", -1);
  const char* kill_rank = env("FP4SIM_TEST_KILL_RANK");
  const bool kill_me = kill_after >= 0 && (!kill_rank || std::string(kill_rank) == "all" ||
                                           std::string(kill_rank) == std::to_string(world.rank()));
  auto do_one = [&](size_t j, unsigned w) {
    try {
      results[j] = spec.run(mine[j], w);
      const std::string file = encode_shard(spec.plan, mine[j], results[j]);
      io::write_file_atomic(shard_dir / shard_name(mine[j]),
                            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(file.data()), file.size()),
                            io::Durability::Deferred);
      if (kill_me && static_cast<int>(++written) >= kill_after) std::raise(SIGKILL);  // test hook (docs/scale-out.md)
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(err_mu);
      if (error.empty()) error = e.what();
      stop = true;
    }
    ++done;
  };
  auto worker = [&](unsigned w) {
    for (size_t j; !stop && (j = next_shared++) < shared.size();) do_one(shared[j], w);
  };
  const unsigned threads = std::max(1u, spec.threads);
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(worker, w);
  for (size_t j : main_only) {
    if (stop) break;
    do_one(j, 0);
    if (spec.progress) spec.progress(done, mine.size());
  }
  for (size_t j; !stop && (j = next_shared++) < shared.size();) {
    do_one(shared[j], 0);
    if (spec.progress) spec.progress(done, mine.size());
  }
  for (std::thread& t : pool) t.join();
  g_timing.compute_s = seconds_since(t1);
  g_timing.compute_cpu_s = process_cpu_s() - cpu1;
  g_timing.shards_here = mine.size();

  // ---- gather to rank 0 (after a barrier, so that gather_s is the gather alone) ----
  const auto tw = std::chrono::steady_clock::now();
  world.barrier();
  g_timing.wait_s = seconds_since(tw);
  const auto t2 = std::chrono::steady_clock::now();
  std::string payload;
  put(payload, error);
  put(payload, static_cast<uint64_t>(g_timing.compute_s * 1e9));
  put(payload, static_cast<uint64_t>(g_timing.compute_cpu_s * 1e9));
  put(payload, static_cast<uint64_t>(error.empty() ? mine.size() : 0));
  if (error.empty())
    for (size_t j = 0; j < mine.size(); ++j) {
      put(payload, static_cast<uint64_t>(mine[j]));
      put(payload, results[j]);
    }
  results.clear();
  const std::vector<std::string> all = world.gather(payload);
  payload.clear();
  on_root([&]() -> std::string {
    for (size_t r = 0; r < all.size(); ++r) {
      Reader rd(all[r]);
      const std::string err(rd.str());
      if (!err.empty())
        throw std::runtime_error(spec.label + (world.size() > 1 ? ": rank " + std::to_string(r) + ": " : ": ") + err +
                                 " (finished shards are kept in " + spec.partial.string() + "; --resume continues)");
    }
    outcome.results.resize(n_shards);
    g_timing.rank_compute_s.assign(all.size(), 0.0);
    g_timing.rank_compute_cpu_s.assign(all.size(), 0.0);
    g_timing.rank_shards.assign(all.size(), 0);
    for (size_t s = 0; s < n_shards; ++s)
      if (have[s]) outcome.results[s] = std::move(reused[s]);
    for (size_t r = 0; r < all.size(); ++r) {
      g_timing.gathered_bytes += all[r].size();
      Reader rd(all[r]);
      rd.str();
      g_timing.rank_compute_s[r] = static_cast<double>(rd.u64()) * 1e-9;
      g_timing.rank_compute_cpu_s[r] = static_cast<double>(rd.u64()) * 1e-9;
      const uint64_t n = rd.u64();
      g_timing.rank_shards[r] = n;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t s = rd.u64();
        if (s >= n_shards || have[s]) throw std::runtime_error("internal error: shard " + std::to_string(s) + " twice");
        have[s] = 1;
        outcome.results[s] = std::string(rd.str());
      }
    }
    for (size_t s = 0; s < n_shards; ++s)
      if (!have[s]) throw std::runtime_error("internal error: shard " + std::to_string(s) + " missing after the gather");
    return "";
  });
  g_timing.gather_s = seconds_since(t2);
  return outcome;
}

RowJobOutcome run_row_job(const RowJobSpec& rs) {
  JobSpec spec;
  spec.label = rs.label;
  spec.partial = partial_path(rs.out);
  spec.plan = rs.plan;
  const size_t shard = std::max<size_t>(1, rs.shard_size);
  const size_t n_shards = (rs.items + shard - 1) / shard;
  spec.cost.assign(n_shards, 0.0);
  for (size_t i = 0; i < rs.items; ++i) spec.cost[i / shard] += i < rs.item_cost.size() ? rs.item_cost[i] : 1.0;
  spec.resume = rs.resume;
  spec.replace_stale = true;  // the CSV is replaced anyway
  spec.prepare = rs.prepare;
  spec.run = [&](size_t s, unsigned) {
    std::string out;
    const size_t b = s * shard, e = std::min(rs.items, b + shard);
    put(out, static_cast<uint64_t>(e - b));
    for (size_t i = b; i < e; ++i) {
      const RowItem it = rs.run(i);
      put(out, it.line);
      put(out, it.error);
      put(out, it.extra);
    }
    return out;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const JobOutcome job = run_job(spec);
  RowJobOutcome res;
  res.shards = job.shards;
  res.reused = job.reused;
  const std::string verdict = on_root([&]() -> std::string {
    std::string csv = rs.header;
    for (const std::string& r : job.results) {
      Reader rd(r);
      const uint64_t n = rd.u64();
      for (uint64_t i = 0; i < n; ++i) {
        csv.append(rd.str());
        const std::string_view err = rd.str();
        if (!err.empty() && res.failed++ == 0) res.first_error = std::string(err);
        res.extras.emplace_back(rd.str());
      }
    }
    if (res.extras.size() != rs.items) throw std::runtime_error("internal error: " + rs.label + " rows missing after the merge");
    io::write_file_atomic(rs.out, csv);
    finish_job(spec);
    std::string v;
    put(v, static_cast<uint64_t>(res.failed));
    put(v, res.first_error);
    return v;
  });
  if (World::get().size() > 1 && World::get().root()) {
    std::string per_rank;
    for (size_t r = 0; r < g_timing.rank_compute_s.size(); ++r) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.3f/%.3f/%zu", r ? "," : "", g_timing.rank_compute_s[r],
                    g_timing.rank_compute_cpu_s[r], g_timing.rank_shards[r]);
      per_rank += buf;
    }
    std::fprintf(stderr, "%s: timing ranks=%d shards=%zu reused=%zu compute_s/cpu_s/shards=%s gather_bytes=%zu gather_s=%.6f wall_s=%.3f\n",
                 rs.label.c_str(), World::get().size(), job.shards, job.reused, per_rank.c_str(), g_timing.gathered_bytes,
                 g_timing.gather_s, seconds_since(t0));
  }
  Reader rd(verdict);
  res.failed = static_cast<size_t>(rd.u64());
  res.first_error = std::string(rd.str());
  return res;
}

void finish_job(const JobSpec& spec) {
  // The shard files are unlinked by several threads: on a journaling file system each lone unlink
  // of a file whose blocks are on disk waits for a journal commit (about 4 ms here, where ext4 is
  // mounted with online discard), concurrent ones share commits (0.2 ms each with 8 threads).
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(spec.partial / "shards", ec), end; !ec && it != end; it.increment(ec))
    files.push_back(it->path());
  const size_t n_threads = std::min<size_t>(8, files.size() / 16 + 1);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < n_threads; ++t)
    pool.emplace_back([&files, t, n_threads] {
      std::error_code e;
      for (size_t i = t; i < files.size(); i += n_threads) fs::remove(files[i], e);
    });
  for (std::thread& th : pool) th.join();
  fs::remove_all(spec.partial, ec);
}

}  // namespace fp4sim::scaleout
