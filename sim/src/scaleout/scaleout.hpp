// Scale-out of the heavy commands (fp4sim regress, whatif, study) over MPI ranks and threads, with
// per-shard result files so that a killed run resumes where it stopped (docs/scale-out.md).
//
// A job is an ordered list of shards fixed by the command's options alone (never by the rank
// count). Ranks take deterministic subsets of the shards (greedy by estimated cost), each rank runs
// its shards on --threads workers and writes every finished shard atomically to
// OUT.partial/shards/; at the end the shard results are gathered to rank 0 over MPI, merged in shard
// order and the final output is written atomically, so the bytes do not depend on how many ranks or
// threads ran, nor on how often the job was interrupted and resumed.
//
// Without MPI (a build with FP4SIM_MPI=OFF, or a process not started by mpirun / srun) the world is
// one rank and everything runs in this process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fp4sim::scaleout {

// This process's rank as the launcher announced it in the environment (OMPI_COMM_WORLD_RANK,
// PMIX_RANK, PMI_RANK, SLURM_PROCID), 0 when there is none. Known before MPI is initialized: main()
// prints errors on rank 0 only (every rank parses the same command line and fails the same way).
int launcher_rank();

// True when this fp4sim was built with MPI (FP4SIM_MPI).
bool built_with_mpi();

// The ranks of this run. MPI is initialized on the first call when the process was started by a
// launcher (mpirun, mpiexec, srun with an MPI plugin); otherwise the world is this process alone.
class World {
 public:
  static World& get();
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  bool mpi() const { return mpi_; }
  // Collectives; no-ops / identities on a one-rank world.
  void barrier() const;
  std::string broadcast(std::string s) const;  // rank 0's string on every rank
  // Every rank's string on rank 0 (index = rank); the other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& mine) const;

 private:
  World();
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;
};

// Runs f on rank 0 only and hands its outcome to every rank: the returned string, or the exception
// it threw (rethrown on every rank as the same kind, UsageError or runtime_error, with the same
// message). On a one-rank world this is just f().
std::string on_root(const std::function<std::string()>& f);

// A sharded job.
struct JobSpec {
  std::string label;                 // "regress", "whatif", "study": progress and error messages
  std::filesystem::path partial;     // the job's state directory, OUT.partial
  std::string plan;                  // text naming everything that determines the results (plan.txt)
  std::vector<double> cost;          // estimated cost of each shard (its size fixes the shard count)
  bool resume = false;               // continue from the shards in `partial`
  // Without resume, an existing `partial` is an error (false: "use --resume or --force") or is
  // removed and the job starts over (true: commands that replace their output anyway).
  bool replace_stale = false;
  unsigned threads = 1;              // workers per rank (run() must then be thread-safe)
  // Computes shard s on worker w (0 <= w < threads): its result, any bytes. Throwing stops the job.
  std::function<std::string(size_t s, unsigned w)> run;
  // Rank 0, before anything is created: checks of the output (exists without --force, ...).
  std::function<void()> prepare;
  // Every rank, after the preparation (so that failed checks print nothing else): the job starts.
  std::function<void(size_t reused)> started;
  // Shards that must run on the main thread (worker 0): SystemC simulates only there.
  std::function<bool(size_t s)> main_thread_only;
  // Progress on this rank: shards done here, shards assigned here (called from the main thread).
  std::function<void(size_t done, size_t of)> progress;
};

struct JobOutcome {
  std::vector<std::string> results;  // rank 0: every shard's result, in shard order; others: empty
  size_t shards = 0, reused = 0;     // shards of the job; taken from an earlier run (--resume)
};

// Runs the job on every rank of World::get(). Returns on every rank once all shards are done and
// gathered; throws on every rank (the same message) if any rank failed, leaving `partial` for a
// --resume. The caller merges the results on rank 0 and then calls finish_job().
JobOutcome run_job(const JobSpec& spec);

// Rank 0, after the merged output is committed: removes the job's state directory.
void finish_job(const JobSpec& spec);

// OUT -> OUT.partial (a sibling of OUT; for a file out.csv: out.csv.partial).
std::filesystem::path partial_path(const std::filesystem::path& out);

// Greedy assignment of shards to ranks: shard i (in order) goes to the rank with the least cost so
// far (ties: the lowest rank). Deterministic for a given cost list and rank count.
std::vector<std::vector<size_t>> assign(const std::vector<size_t>& shards, const std::vector<double>& cost,
                                        int ranks);

// Shard files: "fp4sim-shard 1 plan=<crc32 of plan> shard=<i> bytes=<n> crc=<crc32>\n" + result.
std::string encode_shard(std::string_view plan, size_t shard, std::string_view result);
// The result, or false when the file is not a complete shard `shard` of this plan.
bool decode_shard(std::string_view plan, size_t shard, std::string_view file, std::string& result);

// Length-prefixed fields for shard results: put() appends, Reader takes them back in order.
void put(std::string& out, std::string_view field);
void put(std::string& out, uint64_t value);
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  std::string_view str();  // throws std::runtime_error on a truncated field
  uint64_t u64();
  bool done() const { return s_.empty(); }

 private:
  std::string_view s_;
};

// A job whose items are CSV rows (whatif, study): items are cut into shards of `shard_size`, each
// item's row computed by run(i) on the main thread, and rank 0 writes header + every row in item
// order to `out` atomically (io::write_file_atomic) and removes out.partial.
struct RowItem {
  std::string line;   // the CSV row, '\n' included
  std::string error;  // non-empty: the item failed (its row still goes into the CSV)
  std::string extra;  // anything the command wants back on rank 0 (summaries)
};
struct RowJobSpec {
  std::string label;
  std::filesystem::path out;
  std::string plan;
  std::string header;  // the CSV header line, '\n' included
  size_t items = 0, shard_size = 1;
  std::vector<double> item_cost;  // estimated cost of each item (empty: all equal); assignment only
  bool resume = false;
  std::function<RowItem(size_t i)> run;
  std::function<void()> prepare;  // rank 0, before anything is created
};
struct RowJobOutcome {
  size_t failed = 0;
  std::string first_error;          // of the first failed item in item order
  std::vector<std::string> extras;  // rank 0: every item's extra, in item order; others: empty
  size_t shards = 0, reused = 0;
};
// Every rank returns the same failed / first_error.
RowJobOutcome run_row_job(const RowJobSpec& spec);

// Wall seconds spent so far in run_job's phases on this rank (for the timing lines on stderr).
struct JobTiming {
  double prepare_s = 0, compute_s = 0, wait_s = 0, gather_s = 0;  // wait: for the slowest rank
  size_t shards_here = 0;
  size_t gathered_bytes = 0;             // rank 0: bytes received by the gather
  double compute_cpu_s = 0;              // CPU time of the compute phase (all threads of this rank)
  std::vector<double> rank_compute_s;    // rank 0: every rank's compute time
  std::vector<double> rank_compute_cpu_s;  // rank 0: every rank's compute CPU time
  std::vector<size_t> rank_shards;       // rank 0: shards each rank ran
};
const JobTiming& last_timing();

}  // namespace fp4sim::scaleout
