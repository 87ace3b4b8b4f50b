// The structural cycle model (docs/models.md "Structure"): one sc_module per hardware unit, joined
// by bounded channels (sc_channel.hpp). The cycle count is the time the simulation reaches when the
// last byte of D is stored; nothing here computes an end time.
//
//   TileScheduler ──tiles──> per core ...                         MemorySystem (shared)
//   tensor core:  TmaProducer ─jobs─> LoadEngine(TMA) ─full─> MmaIssuer ─cp─> TmemCopy ─cp_done─┐
//                      ^ smem_free <──────────────────────────────── MmaPipe <─mma─ (issuer) <──┘
//                 MmaPipe ─acc(+depth)─> Epilogue ─> QuantizeUnit ─> StoreUnit ─> MemorySystem
//   cube:         Mte2Producer ─jobs─> LoadEngine(MTE2) ─l1_full─> Mte1 ─l0─> CubeArray
//                 CubeArray ─acc(+depth)─> FixPipe ─> QuantizeUnit ─> StoreUnit ─> MemorySystem
//   LoadEngine ─req─> MemorySystem: its die's L2 port (round robin over cores, LRU hit / miss, misses
//                                   merged) ─> HBM port ─fill(+dram_latency)─> L2 port ─reply(+l2_latency)─>
//                                   far bytes: die link ─> home die's L2 port ─> link ─> near copy
//
// Elaborated once per process with `slots` cores per engine (reserve_cores); a job resets the
// channels and token pools of the cores it uses and runs sc_start() until no event is left.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "hbm.hpp"
#include "model.hpp"
#include "sc_channel.hpp"

namespace fp4sim::models::detail {

bool g_tracing = false;
bool g_aborting = false;

std::vector<sc_core::sc_event*>& wake_list() {
  static std::vector<sc_core::sc_event*> v;
  return v;
}

namespace {

sc_core::sc_event& resume_event() {  // the next job starts (units parked by an abort resume)
  static sc_core::sc_event* e = new sc_core::sc_event();
  return *e;
}
int64_t g_slots[2] = {0, 0};
uint64_t g_starts = 0;
std::string g_job_error;  // what made the current job fail (a unit's exception)

// The current job fails: the first error is kept and every unit is woken to unwind.
void fail_job(const std::string& why) {
  if (g_aborting) return;
  g_job_error = why;
  g_aborting = true;
  wake_all();
}

// One hardware unit's thread: `round` forever. A failed job unwinds it (Aborted); an exception of
// the unit's own fails the job and aborts the other units. Either way it parks until the next job
// and then starts over at the top of its loop, like a unit after reset.
template <class F>
void unit_loop(F&& round) {
  for (;;) {
    try {
      round();
    } catch (const Aborted&) {
      sc_core::wait(resume_event());
    } catch (const std::exception& e) {
      fail_job(e.what());
      sc_core::wait(resume_event());
    }
  }
}

// One activation of a method unit (an SC_METHOD: no thread stack, so that thousands of cores fit
// in one process; docs/models.md "Processes"). `step` runs the unit's phases until one has to wait,
// and re-triggers the method on what a thread would have waited on (pop_ready, push_ready, hold),
// so the unit's timing equals the thread form's. A failed job resets the phase and parks it.
template <class F>
void unit_method(int& phase, F&& step) {
  if (g_aborting) {
    phase = 0;
    sc_core::next_trigger(resume_event());
    return;
  }
  try {
    step();
  } catch (const std::exception& e) {
    fail_job(e.what());
    phase = 0;
    sc_core::next_trigger(resume_event());
  }
}
// A method unit stays busy for n cycles: true when it has to wait (re-triggered then).
bool hold(uint64_t n) {
  if (n) sc_core::next_trigger(cycles_time(n));
  return n != 0;
}

using sc_core::sc_module;
using sc_core::sc_module_name;

// ---------------------------------------------------------------------------------------------
// The job every unit reads (set before sc_start, constant during it).

struct Job {
  const Params* p = nullptr;
  const Shape* s = nullptr;
  const Mapping* m = nullptr;
  const Workload* w = nullptr;
  Geometry g;
  Result* r = nullptr;  // null: timing only
  const Progress* progress = nullptr;
  uint64_t t0 = 0;      // cycle the job started
  uint64_t tiles_done = 0;
  uint64_t tiles = 0;   // units this job stores (all, or the first tile_limit): tiles, or split-K parts
  // Split-K: partial tiles stored per output tile (a last part waits for all S - 1 of its tile) and
  // their values [tile][part] (functional runs).
  std::vector<uint32_t> partials_done;
  std::vector<std::vector<float>> partials;
  sc_core::sc_event* partial_stored = nullptr;
  bool functional() const { return r != nullptr; }
  uint64_t now() const { return now_cycles() - t0; }
};
Job g_job;

// A stall cause index into stall_causes(engine).
using Cause = uint8_t;
Cause cause_of(std::string_view name) {
  const auto& v = stall_causes(g_job.p->engine);
  return static_cast<Cause>(std::find(v.begin(), v.end(), name) - v.begin());
}

constexpr const char* kLevelNames[] = {"global_store", "tmem_scale", "smem_read", "tmem_accumulator", "l0a", "l0b", "l0c"};

// Per-core statistics; summed into Stats at the end.
struct CoreStats {
  uint64_t compute = 0, busy_until = 0, instructions = 0;
  uint64_t multicast_in = 0;  // bytes received from the cluster's peers' multicast loads
  bool started = false;
  std::vector<uint64_t> stall;
  // Bytes a core moves itself, by level (kLevelNames).
  enum Level { kGlobalStore, kTmemScale, kSmemRead, kTmemAcc, kL0a, kL0b, kL0c, kLevels };
  uint64_t bytes[kLevels] = {};
  void reset(size_t causes) {
    compute = busy_until = instructions = multicast_in = 0;
    started = false;
    stall.assign(causes, 0);
    std::fill(std::begin(bytes), std::end(bytes), 0);
  }
  // The datapath starts work at `t` after idling since busy_until: charge the gap to `c`.
  void idle_until(uint64_t t, Cause c) {
    if (t > busy_until) stall[c] += t - busy_until;
    busy_until = std::max(busy_until, t);
  }
};

// ---------------------------------------------------------------------------------------------
// A bandwidth-limited port: each transfer occupies bytes / bandwidth cycles, kept as a fraction so
// that many small requests share a cycle (a 16 KiB/cycle L2 moves four 4 KiB requests per cycle).
// take() books a transfer and returns the cycle it ends in (relative to now); the caller's thread
// is held back only while the port is booked beyond the current cycle (its backlog), so the port
// never runs ahead of its bandwidth and never idles while work waits.
class Port {
 public:
  void reset() { free_ = 0; }
  uint64_t take(uint64_t bytes, double bytes_per_cycle) {
    wait_cycles(book(bytes, bytes_per_cycle));
    return end() - g_job.now();
  }
  // take() for a method unit: books the transfer, returns the cycles the caller is held back.
  uint64_t book(uint64_t bytes, double bytes_per_cycle) { return book_at(g_job.now(), bytes, bytes_per_cycle); }
  uint64_t end() const { return end_at(g_job.now()); }
  // book() and end() as at job cycle t >= now (a unit that accounts for its own waits ahead of
  // the simulation, LoadEngine::receive).
  uint64_t book_at(uint64_t t, uint64_t bytes, double bytes_per_cycle) {
    free_ = std::max(free_, static_cast<double>(t)) + static_cast<double>(bytes) / bytes_per_cycle;
    const uint64_t floor_end = static_cast<uint64_t>(free_ + 1e-9);
    return floor_end > t ? floor_end - t : 0;
  }
  uint64_t end_at(uint64_t t) const { return std::max<uint64_t>(static_cast<uint64_t>(std::ceil(free_ - 1e-9)), t); }

 private:
  double free_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Memory system: an L2 slice, an HBM port and a link out per die, shared by the cores.

struct MemResp {
  uint64_t tag = 0;
  uint32_t bytes = 0;
};
struct MemReq {
  uint64_t key = 0;  // which bytes (same data, same key: the L2 hits on it)
  uint32_t bytes = 0;
  bool write = false;
  uint64_t tag = 0;
  Channel<MemResp>* reply = nullptr;
  uint8_t src = 0;  // the die of the requesting core (set by its die's L2 port)
  // Where the bytes lie in memory, for HBM's channels, banks and rows: rows of `seg` bytes (0: one
  // contiguous run) `stride` apart, the first at `row`, the request starting `skip` bytes into it.
  uint64_t row = 0;
  uint32_t skip = 0, seg = 0;
  uint64_t stride = 0;
};

// LRU over request keys, capacity in bytes. Every L2 request looks a key up among tens of
// thousands of lines: an open-addressed table (one cache line per probe) and an index-linked list,
// instead of a node-based hash map and std::list (several cache misses per lookup).
class L2Cache {
 public:
  void reset(uint64_t capacity) {
    cap_ = capacity, used_ = 0;
    nodes_.clear(), spare_.clear();
    head_ = tail_ = kNil;
    table_.assign(64, Slot{});
    count_ = 0;
  }
  bool contains(uint64_t key) const { return table_[find(key)].node != kNil; }
  bool hit(uint64_t key) {
    const size_t s = find(key);
    if (table_[s].node == kNil) return false;
    const uint32_t i = table_[s].node;
    unlink(i);
    push_front(i);
    return true;
  }
  void insert(uint64_t key, uint64_t bytes) {
    if (hit(key) || bytes > cap_) return;
    while (used_ + bytes > cap_) {  // evict the least recently used
      const uint32_t v = tail_;
      used_ -= nodes_[v].bytes;
      erase(find(nodes_[v].key));
      unlink(v);
      spare_.push_back(v);
    }
    uint32_t i;
    if (spare_.empty()) {
      i = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back({});
    } else {
      i = spare_.back();
      spare_.pop_back();
    }
    nodes_[i].key = key, nodes_[i].bytes = bytes;
    push_front(i);
    if (2 * (count_ + 1) > table_.size()) grow();
    const size_t s = find(key);
    table_[s] = {key, i};
    ++count_;
    used_ += bytes;
  }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    uint64_t key = 0, bytes = 0;
    uint32_t prev = kNil, next = kNil;
  };
  struct Slot {
    uint64_t key = 0;
    uint32_t node = kNil;  // kNil: empty
  };
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (table_.size() - 1); }
  // The key's slot, or the empty slot where it would go (linear probing, load <= 1/2).
  size_t find(uint64_t key) const {
    size_t s = home(key);
    while (table_[s].node != kNil && table_[s].key != key) s = (s + 1) & (table_.size() - 1);
    return s;
  }
  // Empties slot s and moves later entries of its probe run back (no tombstones).
  void erase(size_t s) {
    const size_t mask = table_.size() - 1;
    for (size_t j = (s + 1) & mask; table_[j].node != kNil; j = (j + 1) & mask) {
      const size_t h = home(table_[j].key);
      const bool stays = s <= j ? (s < h && h <= j) : (s < h || h <= j);
      if (stays) continue;
      table_[s] = table_[j];
      s = j;
    }
    table_[s].node = kNil;
    --count_;
  }
  void grow() {
    std::vector<Slot> old = std::move(table_);
    table_.assign(2 * old.size(), Slot{});
    for (const Slot& e : old)
      if (e.node != kNil) table_[find(e.key)] = e;
  }
  void unlink(uint32_t i) {
    Node& n = nodes_[i];
    (n.prev == kNil ? head_ : nodes_[n.prev].next) = n.next;
    (n.next == kNil ? tail_ : nodes_[n.next].prev) = n.prev;
  }
  void push_front(uint32_t i) {
    nodes_[i].prev = kNil, nodes_[i].next = head_;
    (head_ == kNil ? tail_ : nodes_[head_].prev) = i;
    head_ = i;
  }
  uint64_t cap_ = 0, used_ = 0;
  std::vector<Node> nodes_;
  std::vector<uint32_t> spare_;  // free node indices
  std::vector<Slot> table_;      // size a power of two
  size_t count_ = 0;
  uint32_t head_ = kNil, tail_ = kNil;  // most / least recently used
};

// Per die: an L2 slice (its port, LRU, MSHRs), its HBM port, its link out to the other dies.
//   own cores' loads / stores ──> L2 port ── homed here ──> hit: reply (+l2_latency)
//                                   │                     miss: MSHR ─> dram_queue ─> HBM port ─fill─┘
//                                   └─ homed on die e ──> near copy hit: reply
//                                                         miss: MSHR ─> link (credit) ─> die e's L2 port (`in`)
//   die e's L2 port ── the bytes ──> die e's link ──(+crossing)──> xfill: near copy, reply (+l2_latency)
// A die's L2 keeps a copy of the far bytes its cores read (as the partitioned L2 of A100 / H100
// does for the SMs attached to it), so each die pulls a far line over the link once while it stays
// in its L2; D is written through to its home die.
// Every queue is bounded: a request channel (64), `in` (link credits), the link, the HBM queue; the
// fill channels never fill (at most l2_mshrs fills in flight). The port takes a request only when
// the resources it needs are free (an MSHR and a place in the HBM queue for a new miss, an MSHR and
// a credit for a far miss, a credit for a far write, a place in the HBM queue for a write); one that
// has to wait stays at the head of its core's channel until a fill, a credit or a place comes back,
// so a full HBM queue or too few MSHRs back up the request channels and through them the load
// engines. (With more than two dies `in` and `xfill` have a producer per other die: pushes of one
// cycle then keep the kernel's process order, which is fixed for a given elaboration.)
class MemorySystem : public sc_module, ChannelListener {
 public:
  static constexpr size_t kMaxDies = 8;
  // Per core slot: loads and stores (separate, so that a store's link time never blocks a load).
  std::vector<std::unique_ptr<Channel<MemReq>>> req;
  uint64_t dram_read = 0, dram_write = 0, l2_read = 0, l2_write = 0, link_bytes = 0;

  SC_HAS_PROCESS(MemorySystem);
  MemorySystem(const sc_module_name& nm, size_t slots) : sc_module(nm), nreq_(2 * slots) {
    for (size_t i = 0; i < 2 * slots; ++i) {  // [2i] loads of core i, [2i + 1] its stores
      req.push_back(std::make_unique<Channel<MemReq>>("core" + std::to_string(i / 2) + (i % 2 ? "_store" : "_load"), 64));
      req.back()->listen(this, i);
    }
    queued_.assign((2 * slots + 63) / 64, 0);
    for (size_t d = 0; d < kMaxDies; ++d) {
      const std::string n = kMaxDies > 1 && d ? "die" + std::to_string(d) + "_" : "";
      dies_.push_back(std::make_unique<Die>(n));
      Die& x = *dies_.back();
      x.fill.listen(this, nreq_ + 3 * d);
      x.in.listen(this, nreq_ + 3 * d + 1);
      x.xfill.listen(this, nreq_ + 3 * d + 2);
      wake_list().push_back(&x.wake);
      sc_core::sc_spawn_options o;
      sc_core::sc_spawn([this, d] { l2_port(d); }, sc_core::sc_gen_unique_name("l2_port"), &o);
      sc_core::sc_spawn([this, d] { dram_port(d); }, sc_core::sc_gen_unique_name("dram_port"), &o);
      sc_core::sc_spawn([this, d] { link(d); }, sc_core::sc_gen_unique_name("die_link"), &o);
      sc_core::sc_spawn([this, d] { write_tail(d); }, sc_core::sc_gen_unique_name("hbm_writes"), &o);
    }
  }
  void trace(sc_core::sc_trace_file* f, const std::string& prefix) {  // core 0's requests, die 0's HBM queues
    for (auto* ch : {req[0].get(), req[1].get(), &dies_[0]->dram_q, &dies_[0]->fill}) ch->trace(f, prefix);
  }
  // `active`: the cores that get tiles (the first ones); they are split evenly over the dies (a
  // CTA scheduler fills both dies), the idle rest go to the last die.
  void reset(const Params& p, size_t cores, size_t active, bool no_allocate) {
    for (size_t i = 0; i < 2 * cores; ++i) req[i]->reset(64);
    ndies_ = static_cast<size_t>(std::clamp<int64_t>(p.dies, 1, kMaxDies));
    // A die's share of the chip.
    const uint64_t cap = no_allocate ? 0 : static_cast<uint64_t>(p.l2_bytes) / ndies_;  // (no line fits: every fill passes)
    const size_t mshrs = static_cast<size_t>(p.l2_mshrs), credits = static_cast<size_t>(p.die_link_queue);
    for (size_t d = 0; d < kMaxDies; ++d) {
      Die& x = *dies_[d];
      x.dram_q.reset(static_cast<size_t>(p.dram_queue));
      x.fill.reset(mshrs + 1);
      x.xfill.reset(mshrs + 1);
      x.in.reset(credits * kMaxDies);
      x.link_q.reset(credits);
      x.cache.reset(cap);
      x.pending.clear();
      x.l2.reset(), x.dram.reset(), x.xbw.reset();
      x.mshrs = x.far_mshrs = 0;
      x.writes_end = 0;
      // Die d has the active cores [ceil(d * active / dies), ceil((d + 1) * active / dies)).
      x.lo = d < ndies_ ? 2 * ((d * active + ndies_ - 1) / ndies_) : 0;
      x.hi = d + 1 < ndies_ ? 2 * (((d + 1) * active + ndies_ - 1) / ndies_) : d + 1 == ndies_ ? 2 * cores : 0;
      x.next = x.lo;
      x.credits.fill(credits);
      // (sleeping and wake_at are the port thread's own: a sleeping port stays asleep across jobs)
    }
    dram_read = dram_write = l2_read = l2_write = link_bytes = 0;
    active_ = std::max<size_t>(1, active);
    l2_bw_ = static_cast<double>(p.l2_bytes_per_cycle) / static_cast<double>(ndies_);
    dram_bw_ = static_cast<double>(p.dram_bytes_per_cycle) / static_cast<double>(ndies_);
    // HBM's timings are nanoseconds: in cycles of the job's clock.
    banked_ = p.hbm_channels > 0;
    if (banked_) {
      const double cyc_per_ns = g_job.s->clock_mhz / 1000.0;
      HbmTiming t;
      t.channels = static_cast<uint32_t>(p.hbm_channels / static_cast<int64_t>(ndies_));
      t.banks = static_cast<uint32_t>(p.hbm_banks);
      t.page_bytes = static_cast<uint64_t>(p.hbm_page_bytes);
      t.interleave = static_cast<uint64_t>(p.hbm_interleave_bytes);
      t.bus = dram_bw_ / t.channels;
      t.rcd = static_cast<double>(p.hbm_t_rcd_ns) * cyc_per_ns;
      t.rp = static_cast<double>(p.hbm_t_rp_ns) * cyc_per_ns;
      t.ras = static_cast<double>(p.hbm_t_ras_ns) * cyc_per_ns;
      t.faw = static_cast<double>(p.hbm_t_faw_ns) * cyc_per_ns;
      t.turnaround = static_cast<double>(p.hbm_t_turnaround_ns) * cyc_per_ns;
      t.open_page = p.hbm_page_policy == HbmPage::Open;
      // dram_latency is an access to a precharged bank (its activate included): what the rest of
      // the path adds to the DRAM's own time.
      path_latency_ = std::max(0.0, static_cast<double>(p.dram_latency) - t.rcd);
      for (size_t d = 0; d < ndies_; ++d) dies_[d]->hbm.reset(t);
    }
  }
  // HBM bytes whose access had to open a row (0 with the ideal port).
  uint64_t row_open_bytes() const {
    uint64_t n = 0;
    for (size_t d = 0; banked_ && d < ndies_; ++d) n += dies_[d]->hbm.opened;
    return n;
  }

 private:
  struct LinkItem {
    MemReq r;
    bool reply = false;  // a read's data back to a core of another die (else a request to die `to`)
    uint8_t to = 0;
  };
  struct Die {
    explicit Die(const std::string& n)
        : dram_q(n + "dram_queue", 64), fill(n + "dram_fill", 1), in(n + "die_in", 1), xfill(n + "die_fill", 1),
          link_q(n + "die_link", 1) {}
    Channel<MemReq> dram_q, fill, in;
    Channel<MemReq> xfill;  // far bytes arriving for this die's near copy (its far misses)
    Channel<LinkItem> link_q;
    L2Cache cache;
    Port l2, dram, xbw;
    HbmDie hbm;
    sc_core::sc_event wrote;   // a write went to HBM: the job runs until writes_end
    uint64_t writes_end = 0;
    std::unordered_map<uint64_t, std::vector<MemReq>> pending;  // misses in flight and the requests merged on them
    size_t mshrs = 0;      // misses in flight to HBM
    size_t far_mshrs = 0;  // far misses in flight to their home dies (for the near copy; a separate
                           // pool: sharing one with the home misses could wait in a cycle over the dies)
    std::array<size_t, kMaxDies> credits{};   // free `in` slots of each other die for this die's requests
    size_t lo = 0, hi = 0, next = 0;          // this die's request channels [lo, hi), round robin
    sc_core::sc_event wake;                   // the sleeping port's wake-up
    uint64_t wake_at = UINT64_MAX;            // cycle wake is notified for while sleeping
    bool sleeping = false;
    uint64_t round_cycle = UINT64_MAX;        // cycle of the port's last round
  };
  size_t die_of_channel(size_t i) const { return std::min(ndies_ - 1, (i / 2) * ndies_ / active_); }
  size_t home(uint64_t key) const {
    return ndies_ == 1 ? 0 : static_cast<size_t>(((key * 0xD6E8FEB86659FD93ull) >> 32) % ndies_);
  }
  void wake(Die& x, uint64_t ready) {
    if (x.sleeping && ready < x.wake_at) {
      x.wake_at = ready;
      const uint64_t now = now_cycles();
      x.wake.notify(ready > now ? cycles_time(ready - now) : sc_core::SC_ZERO_TIME);
    }
  }
  // The die's L2 port moves r's bytes; a read's reply then travels l2_latency (and the link back
  // to a core of another die), a write goes on to HBM.
  void transfer(Die& x, size_t d, const MemReq& r) {
    const uint64_t done = x.l2.take(r.bytes, l2_bw_);
    if (r.write) {
      l2_write += r.bytes;
      x.dram_q.push(r, done);  // write-through: D goes on to HBM
    } else if (r.src == d) {
      l2_read += r.bytes;
      r.reply->push({r.tag, r.bytes}, done + static_cast<uint64_t>(g_job.p->l2_latency));
    } else {
      x.link_q.push({r, true, r.src}, done);  // for the requesting die's near copy (its port adds l2_latency)
    }
  }
  // A push into a request, fill, xfill or `in` channel (ChannelListener). The port only acts on visible
  // items, so a sleeping port is woken when the new item becomes visible, if that is before the
  // wake-up it already has (a push never makes an item visible earlier than its own cycle).
  void pushed(size_t i, uint64_t ready) override {
    if (i < nreq_) {
      queued_[i >> 6] |= uint64_t{1} << (i & 63);
      wake(*dies_[die_of_channel(i)], ready);
    } else {
      wake(*dies_[(i - nreq_) / 3], ready);
    }
  }
  void emptied(size_t i) override {
    if (i < nreq_) queued_[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
  // The first request channel in [from, to) whose visible front the port can take now.
  size_t first_takeable(Die& x, size_t d, size_t from, size_t to) const {
    for (size_t w = from >> 6; (w << 6) < to; ++w) {
      uint64_t bits = queued_[w];
      if (w == from >> 6) bits &= ~uint64_t{0} << (from & 63);
      for (; bits; bits &= bits - 1) {
        const size_t i = (w << 6) + static_cast<size_t>(std::countr_zero(bits));
        if (i >= to) return kNone;
        if (!req[i]->can_pop()) continue;
        const MemReq& h = req[i]->front();
        const size_t e = home(h.key);
        if (e == d ? takeable_here(x, h) : takeable_far(x, e, h)) return i;
      }
    }
    return kNone;
  }
  // A request of this die's cores homed on die e: a write needs a credit; a read hits the near copy,
  // merges with a far miss in flight, or needs an MSHR and a credit.
  static bool takeable_far(Die& x, size_t e, const MemReq& h) {
    if (h.write || (x.credits[e] > 0 && x.far_mshrs < static_cast<size_t>(g_job.p->l2_mshrs))) return x.credits[e] > 0;
    return !new_miss(x, h);
  }
  // A read that needs a new MSHR (not in L2, no miss on its bytes in flight).
  static bool new_miss(Die& x, const MemReq& r) {
    return !r.write && !x.cache.contains(r.key) && x.pending.find(r.key) == x.pending.end();
  }
  // A request homed on this die that the port can take now: a write needs a place in the HBM
  // queue, a new miss an MSHR and a place in the HBM queue (the port never blocks on that queue, so
  // fills, hits and the other die's requests keep moving while HBM is busy).
  static bool takeable_here(Die& x, const MemReq& h) {
    if (h.write) return x.dram_q.can_push();
    if (x.mshrs < static_cast<size_t>(g_job.p->l2_mshrs) && x.dram_q.can_push()) return true;
    return !new_miss(x, h);
  }
  // A request homed on this die.
  void serve(Die& x, size_t d, const MemReq& r) {
    if (r.write || x.cache.hit(r.key)) {
      transfer(x, d, r);
    } else if (auto it = x.pending.find(r.key); it != x.pending.end()) {
      it->second.push_back(r);  // a miss on the same bytes is in flight: wait for its fill
    } else {
      x.pending[r.key].push_back(r);
      ++x.mshrs;
      x.dram_q.push(r);
    }
  }
  void l2_port(size_t d) {
    Die& x = *dies_[d];
    unit_loop([&] {
      if (g_job.p->dram_latency == 0 && now_cycles() != x.round_cycle) {
        // With no HBM latency a fill can become visible in the cycle the DRAM port pushes it (in the
        // first delta of that cycle, after its own wait): let it run first, so that the fill goes
        // before this cycle's requests whatever order the kernel runs the two threads in.
        x.round_cycle = now_cycles();
        check_abort();
        sc_core::wait(sc_core::SC_ZERO_TIME);
        check_abort();
      }
      if (x.fill.can_pop()) {  // fills first: they release merged misses and free an MSHR
        const MemReq f = x.fill.pop();
        x.cache.insert(f.key, f.bytes);
        auto it = x.pending.find(f.key);
        std::vector<MemReq> waiters = std::move(it->second);
        x.pending.erase(it);
        --x.mshrs;
        for (const MemReq& r : waiters) transfer(x, d, r);
        return;  // the next round
      }
      if (x.xfill.can_pop()) {  // far bytes for the near copy: kept, and on to the cores that wait
        const MemReq f = x.xfill.pop();
        x.cache.insert(f.key, f.bytes);
        auto it = x.pending.find(f.key);
        std::vector<MemReq> waiters = std::move(it->second);
        x.pending.erase(it);
        --x.far_mshrs;
        for (const MemReq& r : waiters) transfer(x, d, r);
        return;
      }
      // Requests from the other dies next (a credit goes back to the sender as it is taken).
      if (x.in.can_pop() && takeable_here(x, x.in.front())) {
        const MemReq r = x.in.pop_now();
        Die& s = *dies_[r.src];
        ++s.credits[d];
        wake(s, now_cycles());
        serve(x, d, r);
        return;
      }
      // Round robin over this die's cores' channels, starting after the last one served: the first
      // visible request the port can take (a far one needs a credit, a new miss an MSHR; one that
      // cannot go waits at the head of its core's channel while the other cores' requests pass).
      const size_t lo = x.lo, hi = x.hi, start = x.next < hi && x.next >= lo ? x.next : lo;
      size_t c = first_takeable(x, d, start, hi);
      if (c == kNone) c = first_takeable(x, d, lo, start);
      if (c != kNone) {
        x.next = c + 1;
        MemReq r = req[c]->pop_now();
        r.src = static_cast<uint8_t>(d);
        const size_t e = home(r.key);
        if (e == d) {
          serve(x, d, r);
        } else if (r.write) {  // D goes to its home die
          --x.credits[e];
          x.link_q.push({r, false, static_cast<uint8_t>(e)});
        } else if (x.cache.hit(r.key)) {  // the near copy
          transfer(x, d, r);
        } else if (auto it = x.pending.find(r.key); it != x.pending.end()) {
          it->second.push_back(r);  // a far miss on the same bytes is in flight
        } else {  // a far miss: the home die sends the bytes for the near copy
          x.pending[r.key].push_back(r);
          ++x.far_mshrs;
          --x.credits[e];
          x.link_q.push({r, false, static_cast<uint8_t>(e)});
        }
        return;
      }
      // Sleep until the next request, fill or far request becomes visible. Visible requests here
      // all wait (for an MSHR, a credit or a place in the HBM queue): a fill, a credit or a pop of
      // the HBM queue wakes the port for them.
      const uint64_t now = now_cycles();
      uint64_t fr = std::min(x.fill.front_ready(), x.xfill.front_ready());
      if (!x.in.can_pop()) fr = std::min(fr, x.in.front_ready());
      for (size_t w = lo >> 6; (w << 6) < hi; ++w)
        for (uint64_t bits = queued_[w]; bits; bits &= bits - 1) {
          const size_t i = (w << 6) + static_cast<size_t>(std::countr_zero(bits));
          if (i < lo || i >= hi) continue;
          if (const uint64_t r = req[i]->front_ready(); r > now) fr = std::min(fr, r);
        }
      check_abort();
      x.wake_at = fr;
      if (fr != UINT64_MAX) x.wake.notify(fr > now ? cycles_time(fr - now) : sc_core::SC_ZERO_TIME);
      x.sleeping = true;
      sc_core::wait(x.wake);
      x.sleeping = false;
      check_abort();
    });
  }
  void dram_port(size_t d) {
    Die& x = *dies_[d];
    unit_loop([&] {
      const MemReq r = x.dram_q.pop();
      wake(x, now_cycles());  // a place in the queue: the port may take a miss or a write again
      // The die's HBM bandwidth paces the port (the queue backs up behind it); with channels and
      // banks, a request is done when its chunks are through their banks and channel buses.
      // (Both from the cycle the request reached the controller.)
      const uint64_t arrived = g_job.now();
      uint64_t done = x.dram.take(r.bytes, dram_bw_), lat = static_cast<uint64_t>(g_job.p->dram_latency);
      if (banked_) {
        const double end = x.hbm.access(static_cast<double>(arrived), r.row, r.skip, r.bytes, r.seg, r.stride, r.write);
        const double now = static_cast<double>(g_job.now());
        if (end > now) done = std::max(done, static_cast<uint64_t>(std::ceil(end - now - 1e-9)));
        lat = static_cast<uint64_t>(std::llround(path_latency_));
      }
      if (r.write) {
        // The job ends when the last byte of D is in HBM; the port goes on with the next request
        // while the write finishes.
        dram_write += r.bytes;
        x.writes_end = std::max(x.writes_end, g_job.now() + done);
        x.wrote.notify(sc_core::SC_ZERO_TIME);
      } else {
        dram_read += r.bytes;
        x.fill.push(r, done + lat);
      }
    });
  }
  // Holds the job open until the last write given to the banks is in HBM.
  void write_tail(size_t d) {
    Die& x = *dies_[d];
    unit_loop([&] {
      sc_core::wait(x.wrote);
      check_abort();
      while (g_job.now() < x.writes_end) wait_cycles(x.writes_end - g_job.now());
    });
  }
  // The die's outgoing link: requests (a write carries its bytes) and replies (a read's bytes) at
  // die_link_bytes_per_cycle, each die_link_latency later at the far end. Never blocks: a request
  // holds a credit for its `in` slot, a reply an MSHR of the requesting die (its `xfill` place).
  void link(size_t d) {
    Die& x = *dies_[d];
    unit_loop([&] {
      const LinkItem it = x.link_q.pop();
      const uint64_t bytes = it.reply || it.r.write ? it.r.bytes : 0;
      const uint64_t done = x.xbw.take(bytes, static_cast<double>(g_job.p->die_link_bytes_per_cycle));
      link_bytes += bytes;
      const uint64_t lat = done + static_cast<uint64_t>(g_job.p->die_link_latency);
      // A reply's bytes cross as the home die's port moves them; the requesting die's port then
      // replies to its cores with the L2 latency (one L2 latency on the way, as for a near hit, so
      // that every reply enters a core's response queue with the same delay, in order).
      if (it.reply) dies_[it.to]->xfill.push(it.r, lat);
      else dies_[it.to]->in.push(it.r, lat);
    });
  }

  static constexpr size_t kNone = SIZE_MAX;
  const size_t nreq_;
  std::vector<std::unique_ptr<Die>> dies_;
  std::vector<uint64_t> queued_;  // bit i: request channel i is not empty
  size_t active_ = 1, ndies_ = 1;
  double l2_bw_ = 1, dram_bw_ = 1;  // per die
  bool banked_ = false;             // HBM channels and banks (else the ideal port alone)
  double path_latency_ = 0;         // dram_latency less the activate
};

// Which bytes a request carries: operand, first row, rows, first K element, K extent.
uint64_t mem_key(uint64_t operand, uint64_t r0, uint64_t rows, uint64_t k0, uint64_t kk) {
  uint64_t h = 0x9E3779B97F4A7C15ull * (operand + 1);
  for (uint64_t v : {r0, rows, k0, kk}) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
  }
  return h;
}

constexpr uint64_t kRequestBytes = 4096;  // largest single memory request (a TMA box / MTE2 burst)

// A rectangle of one operand to load: rows x k elements (and their scales), or FP32 C (k: columns).
struct Slab {
  uint8_t operand = 0;  // 0 A, 1 B, 2 C, kPartialOperand + p: split-K part p's partial tile
  size_t r0 = 0, rows = 0, k0 = 0, kk = 0;
};
constexpr uint8_t kPartialOperand = 16;  // (8 and 9: the scales of A and B; 3: D)
bool fp32_rows(uint8_t operand) { return operand == 2 || operand >= kPartialOperand; }  // C and partials: FP32, k = columns
// Where the bytes lie (for HBM's channels and banks): each operand in its own region, A and B
// K-major, C and D row-major, the scale factors of one tile's K step together (as the 128 x 4
// scale-factor layout of the Blackwell kernels keeps them).
uint64_t region(uint64_t operand) { return (operand + 1) << 44; }
// A request of the memory system: `bytes` of key `key`, in rows of `seg` bytes `stride` apart.
MemReq request(uint64_t key, uint64_t bytes, uint64_t row, uint64_t skip, uint64_t seg, uint64_t stride) {
  MemReq r;
  r.key = key, r.bytes = static_cast<uint32_t>(bytes);
  r.row = row, r.skip = static_cast<uint32_t>(skip);
  const bool runs = seg != stride && skip + bytes > seg;  // more than one row, not adjacent
  r.seg = runs ? static_cast<uint32_t>(seg) : 0, r.stride = runs ? stride : 0;
  return r;
}
// Requests of a slab: runs of whole rows up to kRequestBytes; scales as their own requests.
template <class F>
void for_each_request(const Shape& s, const Slab& sl, F&& f) {
  const bool c = fp32_rows(sl.operand);
  const double per_row = c ? 4.0 * static_cast<double>(sl.kk) : static_cast<double>(sl.kk) * s.eb;
  const uint64_t row_bytes = c ? 4 * s.N : static_cast<uint64_t>(static_cast<double>(s.K) * s.eb);
  const uint64_t col0 = c ? 4 * sl.k0 : static_cast<uint64_t>(static_cast<double>(sl.k0) * s.eb);
  const size_t rows_per = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(kRequestBytes) / per_row));
  for (size_t r = 0; r < sl.rows; r += rows_per) {
    const size_t n = std::min(rows_per, sl.rows - r);
    const uint64_t bytes = static_cast<uint64_t>(std::ceil(static_cast<double>(n) * per_row));
    f(request(mem_key(sl.operand, sl.r0 + r, n, sl.k0, sl.kk), bytes, region(sl.operand) + (sl.r0 + r) * row_bytes + col0,
              0, static_cast<uint64_t>(std::ceil(per_row)), row_bytes));
  }
  if (!c) {
    const uint64_t sbytes = sl.rows * (sl.kk / s.block) * s.sb;
    const uint64_t at = region(sl.operand + 8) + (sl.r0 * (s.K / s.block) + (sl.k0 / s.block) * sl.rows) * s.sb;
    for (uint64_t b = 0; b < sbytes; b += kRequestBytes) {
      const uint64_t n = std::min(kRequestBytes, sbytes - b);
      f(request(mem_key(sl.operand + 8, sl.r0, sl.rows, sl.k0, b), n, at + b, 0, n, n));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens

// One load job (a tensor-core SMEM stage / a cube L1 chunk) and what travels with it downstream.
struct Stage {
  Tile tile;
  uint32_t step = 0;    // K stage (tensor core) / L1 chunk (cube)
  uint32_t slot = 0;    // SMEM stage / L1 B slot
  uint32_t aslot = 0;   // cube: L1 A slot
  bool load_a = true;   // cube: A not already resident
  bool first = false, last = false;  // first / last of its tile
  uint64_t peer_bytes = 0;  // TMA multicast: bytes of the stage the cluster's peers load for this core
  Cause cause = 0;      // why the consumer of this token may have waited
  std::vector<Slab> slabs;
};

// ---------------------------------------------------------------------------------------------
// Shared units

// Hands out output tiles in raster order to the cores that ask (first asked, first served).
class TileScheduler : public sc_module {
 public:
  Channel<uint32_t> want{"want", 1u << 20};
  sc_core::sc_event partial_stored;  // split-K: a partial tile is stored (Job::partials_done)
  std::vector<std::unique_ptr<Channel<Tile>>> tiles;
  SC_HAS_PROCESS(TileScheduler);
  TileScheduler(const sc_module_name& nm, size_t slots) : sc_module(nm) {
    for (size_t i = 0; i < slots; ++i) tiles.push_back(std::make_unique<Channel<Tile>>("tile" + std::to_string(i), 1));
    SC_THREAD(run);
  }
  void clear(size_t cores) {  // no tile and no ask in flight
    want.reset(1u << 20);
    for (size_t i = 0; i < cores; ++i) tiles[i]->reset(1);
  }
  void reset(size_t cores, size_t grid) {  // the first `grid` cores ask for tiles
    clear(cores);
    for (size_t i = 0; i < grid; ++i) want.preload(static_cast<uint32_t>(i));  // every core idle: id order
    next_ = 0;
  }

 private:
  // Asks take a cycle to arrive; the asks of one cycle are served in core order, so the
  // assignment does not depend on the order the cores' threads ran in.
  void run() {
    std::vector<uint32_t> ask;
    unit_loop([&] {
      ask.assign(1, want.pop());
      while (want.can_pop()) ask.push_back(want.pop());
      std::sort(ask.begin(), ask.end());
      for (uint32_t c : ask)
        if (next_ < g_job.tiles) tiles[c]->push(g_job.g.unit(*g_job.s, *g_job.m, next_++));
    });
  }
  size_t next_ = 0;
};

// Loads the slabs of each job through the memory system; a job is done when all its bytes have
// crossed the core's load link. Jobs complete in order.
class LoadEngine : public sc_module {
 public:
  static constexpr size_t kInflight = 16;
  Channel<Stage> jobs{"jobs", 2}, inflight{"inflight", kInflight}, done{"done", 2};
  Channel<MemResp> resp{"resp", 1u << 30};
  Channel<MemReq>* mem = nullptr;
  CoreStats* st = nullptr;
  std::function<void(const Stage&)> land;  // functional: copy the bytes into the buffer

  SC_HAS_PROCESS(LoadEngine);
  explicit LoadEngine(const sc_module_name& nm) : sc_module(nm) {
    SC_THREAD(issue);
    SC_THREAD(receive);
  }
  void reset(size_t done_capacity) {
    jobs.reset(2), inflight.reset(kInflight), done.reset(done_capacity), resp.reset(1u << 30);
    seq_ = rtag_ = 0, left_.fill(0);
    link_.reset();
  }

 private:
  void issue() {
    unit_loop([&] {
      Stage j = jobs.pop();
      const uint64_t tag = seq_++;
      int64_t n = 0;
      for (const Slab& sl : j.slabs)
        for_each_request(*g_job.s, sl, [&](MemReq r) {
          // One cycle to the L2: the port sees each cycle's requests together, whatever order the
          // cores' threads ran in (same seed, same cycles, whatever the job history).
          r.tag = tag, r.reply = &resp;
          mem->push(r, 1);
          ++n;
        });
      // +=: while this thread was blocked pushing (the L2 queue is bounded), receive() may already
      // have counted early responses of this tag against it.
      left(tag) += n;
      inflight.push(std::move(j));
    });
  }
  // Each response crosses the link in turn: it is taken when it is visible and the link has
  // finished the bytes before it (to the cycle), exactly as one wait per response would take it.
  // The thread keeps that cycle `t` itself and only waits for real when the next response is not
  // queued yet (one activation per burst of responses, not two per response): nothing but this
  // thread reads the response queue or the link, and a later push can only go behind the queued
  // responses.
  void receive() {
    unit_loop([&] {
      Stage j = inflight.pop();
      const uint64_t tag = rtag_++;
      const uint64_t bw = static_cast<uint64_t>(g_job.p->core_load_bytes_per_cycle);
      uint64_t t = g_job.now();
      while (left(tag) > 0) {
        if (resp.empty()) {
          wait_cycles(t - g_job.now());
          while (resp.empty()) wait_event(resp.written());
          t = g_job.now();
        }
        t = std::max(t, resp.front_ready() - g_job.t0);
        const MemResp r = resp.pop_now();
        t += link_.book_at(t, r.bytes, bw);
        --left(r.tag);
      }
      // TMA multicast: the peers' slices cross this core's link too; they were loaded alongside
      // its own (the cluster's cores issue a stage's slices together), so they follow them.
      if (j.peer_bytes) {
        t += link_.book_at(t, j.peer_bytes, bw);
        st->multicast_in += j.peer_bytes;
      }
      wait_cycles(link_.end_at(t) - g_job.now());  // the job's last byte is across the link
      if (land && g_job.functional()) land(j);
      done.push(std::move(j));
    });
  }
  // Responses still due of a tag (< 0: early ones). Tags in flight are the ones between rtag_ and
  // seq_: at most the inflight queue, the one receive() holds and the one issue() is pushing.
  int64_t& left(uint64_t tag) { return left_[tag % left_.size()]; }
  static_assert(64 >= 2 + kInflight);
  Port link_;
  uint64_t seq_ = 0, rtag_ = 0;
  std::array<int64_t, 64> left_{};  // (a power of two above 2 + kInflight)
};

// A finished output tile on its way out (values when functional).
struct TileOut {
  Tile tile;
  std::vector<float> d;
};

// Output quantize unit: amax, scale and encode of each block at quant_elems_per_cycle (golden's rule
// for the format). Without one it is the tensor core's registers -> SMEM staging of D in out_dtype
// (Shape::smem_stage), and a pass-through on the cube (FixPipe converts on the way out).
class QuantizeUnit : public sc_module {
 public:
  Channel<TileOut> in{"quant_in", 2}, out{"quant_out", 2};
  SC_HAS_PROCESS(QuantizeUnit);
  explicit QuantizeUnit(const sc_module_name& nm) : sc_module(nm) { SC_METHOD(run); }
  void reset() {
    in.reset(2), out.reset(2);
    phase_ = 0;
  }

 private:
  int phase_ = 0;  // 0 take a tile, 1 quantized, 2 hand it on
  TileOut t_;
  void run() {
    unit_method(phase_, [&] {
      for (;;) {
        if (phase_ == 0) {
          if (!pop_ready(in)) return;
          t_ = in.pop_now();
          phase_ = 1;
          if (g_job.s->out_block &&
              hold(ceil_div(t_.tile.rows * t_.tile.cols, static_cast<uint64_t>(g_job.p->quant_elems_per_cycle))))
            return;
          // Without a quantize unit the tensor core's epilogue converts D to out_dtype in registers and
          // stages it in SMEM for the TMA store.
          if (const uint64_t st = g_job.s->smem_stage(*g_job.p, t_.tile.rows, t_.tile.cols); st && hold(st)) return;
        } else if (phase_ == 1) {
          if (g_job.s->out_block && g_job.functional()) quantize_tile(*g_job.p, *g_job.s, t_.tile, t_.d.data(), *g_job.r);
          phase_ = 2;
        } else {
          if (!push_ready(out)) return;
          out.push_now(std::move(t_));
          phase_ = 0;
        }
      }
    });
  }
};

// Writes each tile's D (FP32 or quantized) over the core's store link into the memory system.
class StoreUnit : public sc_module {
 public:
  Channel<TileOut>* in = nullptr;
  Channel<MemReq>* mem = nullptr;
  CoreStats* st = nullptr;
  SC_HAS_PROCESS(StoreUnit);
  explicit StoreUnit(const sc_module_name& nm) : sc_module(nm) { SC_METHOD(run); }
  void reset() {
    link_.reset();
    phase_ = 0;
  }

 private:
  Port link_;
  int phase_ = 0;  // 0 take a tile, 1 next request, 2 across the link, 3 into the memory system
  TileOut t_;
  uint64_t left_ = 0, off_ = 0, done_ = 0;
  uint32_t b_ = 0;
  void run() {
    unit_method(phase_, [&] {
      for (;;) {
        switch (phase_) {
          case 0: {
            if (!pop_ready(*in)) return;
            t_ = in->pop_now();
            const Tile& tl = t_.tile;
            if (g_job.functional() && tl.partial())
              g_job.partials[tl.index * (tl.splits - 1) + tl.split] = t_.d;
            else if (g_job.functional())
              for (size_t r = 0; r < tl.rows; ++r)
                std::copy_n(t_.d.data() + r * tl.cols, tl.cols, g_job.r->d.data() + (tl.r0 + r) * g_job.s->N + tl.c0);
            // A split-K part stores its FP32 partial tile.
            left_ = tl.partial() ? tl.rows * tl.cols * 4 : g_job.s->out_bytes(tl.rows, tl.cols);
            st->bytes[CoreStats::kGlobalStore] += left_;
            off_ = 0;
            phase_ = 1;
            break;
          }
          case 1:
            if (!left_) {
              phase_ = 0;
              if (t_.tile.partial()) {  // the tile's last part may go once all its partials are out
                ++g_job.partials_done[t_.tile.index];
                g_job.partial_stored->notify(sc_core::SC_ZERO_TIME);
              }
              ++g_job.tiles_done;
              if (g_job.progress && *g_job.progress)
                (*g_job.progress)(static_cast<double>(g_job.tiles_done) / static_cast<double>(g_job.tiles));
              break;
            }
            b_ = static_cast<uint32_t>(std::min(left_, kRequestBytes));
            phase_ = 2;
            if (hold(link_.book(b_, static_cast<uint64_t>(g_job.p->core_store_bytes_per_cycle)))) return;
            break;
          case 2:
            done_ = link_.end() - g_job.now();
            phase_ = 3;
            break;
          default:
            if (!push_ready(*mem)) return;
            // Like a load, a store reaches the L2 one cycle after it has crossed the link.
            {
              // D row-major in its own region: the tile's rows of out_bytes(1, cols), N's apart
              // (a split-K partial tile: FP32 rows in its part's region, as its last part loads it).
              const Shape& s = *g_job.s;
              const Tile& tl = t_.tile;
              const bool part = tl.partial();
              const uint64_t op = part ? kPartialOperand + tl.split : 3;
              const uint64_t seg = part ? 4 * tl.cols : std::max<uint64_t>(1, s.out_bytes(1, tl.cols)),
                             stride = part ? 4 * s.N : s.out_bytes(1, s.N), col0 = part ? 4 * tl.c0 : s.out_bytes(1, tl.c0);
              MemReq r = request(part ? mem_key(op, tl.r0 + off_ / seg, 0, tl.c0, tl.cols) : mem_key(3, tl.r0, tl.c0, off_, 0), b_,
                                 region(op) + (tl.r0 + off_ / seg) * stride + col0, off_ % seg, seg, stride);
              r.write = true;
              mem->push_now(r, done_ + 1);
            }
            left_ -= b_;
            off_ += kRequestBytes;
            phase_ = 1;
        }
      }
    });
  }
};

// Slabs of one tile step: A (real rows), B, and C with the tile's first step.
std::vector<Slab> step_slabs(const Tile& t, size_t k0, size_t kk, bool with_a, bool first, bool last = false) {
  std::vector<Slab> v;
  if (with_a) v.push_back({0, t.r0, t.rows, k0, kk});
  v.push_back({1, t.c0, t.cols, k0, kk});
  if (first && g_job.s->has_c && !t.partial()) v.push_back({2, t.r0, t.rows, t.c0, t.cols});
  // Split-K: the last part's last step also loads the other parts' FP32 partial tiles (the fixup).
  if (last && t.sums())
    for (uint32_t p = 0; p + 1 < t.splits; ++p) v.push_back({static_cast<uint8_t>(kPartialOperand + p), t.r0, t.rows, t.c0, t.cols});
  return v;
}

// TMA multicast: of a slab shared by `f` cores of a cluster this core loads slice `i` (rows split
// into f nearly equal parts); the rest, its peers' slices, it receives from them (returned bytes).
uint64_t multicast_slice(Slab& sl, size_t f, size_t i) {
  if (f <= 1) return 0;
  const Shape& s = *g_job.s;
  const size_t per = ceil_div(sl.rows, f), r0 = std::min(sl.rows, i * per), n = std::min(per, sl.rows - r0);
  const uint64_t all = s.operand_bytes(sl.rows, sl.kk), own = s.operand_bytes(n, sl.kk);
  sl.r0 += r0, sl.rows = n;
  return all - own;
}

// Functional buffers of one operand step: codes and scales of A and B (K-major, one code per byte).
struct OperandBuf {
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;  // C of the tile (first step only)
};
void fill_operands(const Tile& t, size_t k0, size_t kk, bool with_a, bool first, OperandBuf& o) {
  const Workload& w = *g_job.w;
  const Shape& s = *g_job.s;
  const size_t nb = kk / s.block, nblk = s.K / s.block;
  if (with_a) {
    o.a.resize(t.rows * kk), o.sa.resize(t.rows * nb);
    copy_block(w.a, s.K, t.r0, t.rows, k0, kk, o.a.data());
    copy_block(w.sa, nblk, t.r0, t.rows, k0 / s.block, nb, o.sa.data());
  }
  o.b.resize(t.cols * kk), o.sb.resize(t.cols * nb);
  copy_block(w.b, s.K, t.c0, t.cols, k0, kk, o.b.data());
  copy_block(w.sb, nblk, t.c0, t.cols, k0 / s.block, nb, o.sb.data());
  if (first) {
    o.c.assign(t.rows * t.cols, 0.0f);
    if (s.has_c && !t.partial()) copy_block(w.c, s.N, t.r0, t.rows, t.c0, t.cols, o.c.data());
  }
}
// Columns [k0, k0 + kk) of a K-major block of `rows` x `ld` (codes or scales).
template <class T>
std::vector<T> slice(const std::vector<T>& src, size_t rows, size_t ld, size_t k0, size_t kk) {
  std::vector<T> v(rows * kk);
  for (size_t r = 0; r < rows; ++r) std::copy_n(src.data() + r * ld + k0, kk, v.data() + r * kk);
  return v;
}

// ---------------------------------------------------------------------------------------------
// What every core has around its own units: the tile request ports, the output quantize unit and
// the store unit, its statistics, and its datapath's busy flag (traced for core 0).

class CoreShell : public sc_module {
 public:
  QuantizeUnit quant{"quantize"};
  StoreUnit store{"store"};
  CoreStats st;
  Channel<Tile>* tile_in = nullptr;
  Channel<uint32_t>* want = nullptr;
  uint32_t id = 0;
  sc_core::sc_signal<bool> busy{"busy"};

  explicit CoreShell(const sc_module_name& nm) : sc_module(nm) {
    store.st = &st;
    store.in = &quant.out;
  }

 protected:
  void reset_shell(EngineKind e) {
    st.reset(stall_causes(e).size());
    quant.reset();
    store.reset();
  }
  void trace_shell(sc_core::sc_trace_file* f, const std::string& prefix, const std::string& datapath) {
    quant.in.trace(f, prefix);
    quant.out.trace(f, prefix);
    sc_core::sc_trace(f, busy, prefix + datapath + ".busy");
  }
  // The datapath computes for `cycles` cycles (the busy flag shows it in the trace).
  void compute_for(uint64_t cycles) {
    if (g_tracing && id == 0) busy.write(true);
    wait_cycles(cycles);
    if (g_tracing && id == 0) busy.write(false);
  }
};

// ---------------------------------------------------------------------------------------------
// Tensor core (one SM)

struct MmaOp {
  Tile tile;
  uint32_t slot = 0, sf = 0, acc = 0, instr = 0;
  size_t k_base = 0;  // first K element of the stage
  bool first_of_stage = false, last_of_stage = false, first_of_tile = false, last_of_tile = false;
  Cause cause = 0;
};
struct AccTok {
  Tile tile;
  uint32_t acc = 0;
};
// tcgen05.cp of one stage's scale factors: from SMEM stage `slot` into TMEM scale slot `sf`.
struct CpOp {
  Tile tile;
  uint32_t slot = 0, sf = 0;
  size_t kk = 0;
};

class TensorCoreSm : public CoreShell {
 public:
  // Channels between the units (sized per job).
  Channel<uint32_t> smem_free{"smem_free", 64}, sf_free{"sf_free", 2}, acc_free{"acc_free", 2};
  Channel<CpOp> cp_q{"cp_queue", 2};
  Channel<uint32_t> cp_done{"cp_done", 2};
  Channel<MmaOp> mma_q{"mma_queue", 4};
  Channel<AccTok> acc_full{"acc_full", 2};
  LoadEngine tma{"tma"};

  // Every channel of this SM in a VCD (the signals are made here: elaboration time only).
  void trace(sc_core::sc_trace_file* f, const std::string& prefix) {
    for (auto* ch : {&smem_free, &sf_free, &acc_free, &cp_done}) ch->trace(f, prefix);
    cp_q.trace(f, prefix);
    mma_q.trace(f, prefix);
    acc_full.trace(f, prefix);
    tma.jobs.trace(f, prefix + "tma.");
    tma.inflight.trace(f, prefix + "tma.");
    tma.done.trace(f, prefix + "tma.");
    trace_shell(f, prefix, "mma_pipe");
  }

  SC_HAS_PROCESS(TensorCoreSm);
  explicit TensorCoreSm(const sc_module_name& nm) : CoreShell(nm) {
    SC_THREAD(producer);
    SC_THREAD(issuer);
    SC_METHOD(tmem_copy);
    SC_THREAD(pipe);
    set_stack_size(4 << 20);  // the datapath (golden gemm / a Verilated unit) runs on this thread
    SC_METHOD(epilogue);
    tma.st = &st;
    tma.land = [this](const Stage& s) { land(s); };
  }
  void reset() {
    const Mapping& m = *g_job.m;
    reset_shell(EngineKind::TensorCore);
    smem_free.reset(64), sf_free.reset(2), acc_free.reset(2);
    for (int64_t i = 0; i < m.stages; ++i) smem_free.preload(static_cast<uint32_t>(i));
    for (uint32_t i = 0; i < 2; ++i) sf_free.preload(i);
    for (uint32_t i = 0; i < g_job.g.nacc; ++i) acc_free.preload(i);
    cp_q.reset(2), cp_done.reset(2), mma_q.reset(4), acc_full.reset(2);
    tma.reset(static_cast<size_t>(m.stages));
    if (g_job.functional()) {
      smem_.resize(static_cast<size_t>(m.stages));
      tmem_sf_.resize(2);
      acc_.resize(g_job.g.nacc);
    }
    last_acc_ = UINT32_MAX;
    last_start_ = 0;
    ep_phase_ = cp_phase_ = 0;
  }

 private:
  // TMA-issuing warp: for each K stage of each tile, wait for a free SMEM stage, issue its loads.
  void producer() {
    unit_loop([&] {
      const Tile t = tile_in->pop();
      const size_t kt = static_cast<size_t>(g_job.m->tile_k);
      for (size_t k = t.ks0; k < t.ks1; ++k) {
        // Split-K: a last part issues its last step once the other parts of its tile have stored
        // their partial tiles, which that step loads.
        while (k + 1 == t.ks1 && t.sums() && g_job.partials_done[t.index] + 1 < t.splits) {
          sc_core::wait(*g_job.partial_stored);
          check_abort();
        }
        Stage s;
        s.tile = t;
        s.step = static_cast<uint32_t>(k);
        s.slot = smem_free.pop();
        s.first = k == t.ks0, s.last = k + 1 == t.ks1;
        s.slabs = step_slabs(t, k * kt, std::min(kt, g_job.s->K - k * kt), true, s.first, s.last);
        // A is shared along N (slice by the tile's n block), B along M (by its m block).
        const size_t nt = t.c0 / static_cast<size_t>(g_job.m->tile_n);
        s.peer_bytes = multicast_slice(s.slabs[0], g_job.g.mcast_a, nt % g_job.g.mcast_a) +
                       multicast_slice(s.slabs[1], g_job.g.mcast_b, t.mb % g_job.g.mcast_b);
        std::erase_if(s.slabs, [](const Slab& sl) { return sl.rows == 0; });
        tma.jobs.push(std::move(s));
      }
      want->push(id, 1);  // ask for the next tile while this one's loads are in flight
    });
  }
  void land(const Stage& s) {
    const size_t kt = static_cast<size_t>(g_job.m->tile_k), k0 = s.step * kt;
    fill_operands(s.tile, k0, std::min(kt, g_job.s->K - k0), true, s.first, smem_[s.slot]);
  }
  // MMA warp: per stage tcgen05.cp of the scale factors, then the stage's tcgen05.mma instructions.
  void issuer() {
    unit_loop([&] {
      Stage s = tma.done.pop();
      Cause c = cause_of("operand_load");
      uint32_t acc = acc_cur_;
      if (s.first) {
        const uint64_t t1 = now_cycles();
        acc = acc_cur_ = acc_free.pop();
        if (now_cycles() > t1) c = cause_of("accumulator_busy");
      }
      const uint32_t sf = sf_free.pop();
      const size_t kk = std::min<size_t>(static_cast<size_t>(g_job.m->tile_k),
                                         g_job.s->K - s.step * static_cast<size_t>(g_job.m->tile_k));
      const uint32_t n = static_cast<uint32_t>(kk / g_job.s->kin);
      MmaOp op;
      op.tile = s.tile, op.slot = s.slot, op.sf = sf, op.acc = acc;
      op.k_base = s.step * static_cast<size_t>(g_job.m->tile_k);
      cp_q.push({s.tile, s.slot, sf, kk});
      for (uint32_t i = 0; i < n; ++i) {
        op.instr = i;
        op.first_of_stage = i == 0, op.last_of_stage = i + 1 == n;
        op.first_of_tile = s.first && i == 0, op.last_of_tile = s.last && i + 1 == n;
        op.cause = c;
        mma_q.push(op);
        c = cause_of("operand_load");
      }
    });
  }
  // tcgen05.cp: the stage's scale factors SMEM -> TMEM at tmem_cp_bytes_per_cycle.
  // (A method unit: phases 0 take, 1 copied, 2 signal.)
  void tmem_copy() {
    unit_method(cp_phase_, [&] {
      for (;;) {
        if (cp_phase_ == 0) {
          if (!pop_ready(cp_q)) return;
          cp_ = cp_q.pop_now();
          cp_phase_ = 1;
          const uint64_t bytes = (cp_.tile.rows + cp_.tile.cols) * (cp_.kk / g_job.s->block) * g_job.s->sb;
          if (hold(ceil_div(bytes, static_cast<uint64_t>(g_job.p->tmem_cp_bytes_per_cycle)))) return;
        } else if (cp_phase_ == 1) {
          st.bytes[CoreStats::kTmemScale] += (cp_.tile.rows + cp_.tile.cols) * (cp_.kk / g_job.s->block) * g_job.s->sb;
          if (g_job.functional()) {  // the MMA reads its scales from TMEM, not from SMEM
            tmem_sf_[cp_.sf].sa = smem_[cp_.slot].sa;
            tmem_sf_[cp_.sf].sb = smem_[cp_.slot].sb;
          }
          cp_phase_ = 2;
        } else {
          if (!push_ready(cp_done)) return;
          cp_done.push_now(cp_.sf);
          cp_phase_ = 0;
        }
      }
    });
  }
  // The MMA datapath: dot_lanes units, one K_instr dot product each per cycle.
  void pipe() {
    unit_loop([&] {
      const MmaOp op = mma_q.pop();
      st.started = true;
      st.idle_until(g_job.now(), op.cause);
      if (op.first_of_stage) {
        (void)cp_done.pop();
        st.idle_until(g_job.now(), cause_of("scale_copy"));
      }
      const uint64_t depth = static_cast<uint64_t>(g_job.p->pipeline_depth);
      if (op.acc == last_acc_ && !op.first_of_tile && last_start_ + depth > g_job.now()) {
        wait_cycles(last_start_ + depth - g_job.now());
        st.idle_until(g_job.now(), cause_of("accumulator_dependency"));
      }
      const Shape& s = *g_job.s;
      const uint64_t n = op.tile.cols;
      // The instruction's rows (128; a cta_group::2 pair's 256) whatever M is, and N a multiple of 8:
      // a narrower tile computes its padded rows and columns.
      const uint64_t compute = ceil_div(s.mma_m * round_up(n, 8), static_cast<uint64_t>(g_job.p->dot_lanes));
      const uint64_t opnd = static_cast<uint64_t>(std::ceil(static_cast<double>((s.mma_m + n) * s.kin) * s.eb));
      const uint64_t read = ceil_div(opnd, static_cast<uint64_t>(g_job.p->smem_read_bytes_per_cycle));
      const uint64_t occupancy = std::max(compute, read);
      last_start_ = g_job.now();
      last_acc_ = op.acc;
      if (g_job.functional()) execute(op);
      st.bytes[CoreStats::kSmemRead] += opnd;
      st.bytes[CoreStats::kTmemAcc] += 2 * 4 * s.mma_m * n;
      compute_for(occupancy);
      st.compute += compute;
      st.stall[cause_of("smem_bandwidth")] += occupancy - compute;
      st.busy_until = g_job.now();
      ++st.instructions;
      if (op.last_of_stage) {
        smem_free.push(op.slot);
        sf_free.push(op.sf);
      }
      if (op.last_of_tile) acc_full.push({op.tile, op.acc}, depth);
    });
  }
  void execute(const MmaOp& op) {
    const Shape& s = *g_job.s;
    const Tile& t = op.tile;
    OperandBuf& b = smem_[op.slot];
    const size_t kt = b.b.size() / t.cols;  // this stage's K
    std::vector<float>& acc = acc_[op.acc];
    if (op.first_of_tile) acc = smem_[op.slot].c;  // C via TMEM, or +0 (enable_input_d = 0)
    const OperandBuf& sf = tmem_sf_[op.sf];
    if (!g_job.w->datapath) {
      // Golden gemm over the stage's K passes the accumulator from instruction to instruction as
      // the chain of single instructions does (same bits): one call at the stage's last instruction.
      if (op.last_of_stage) acc = run_step(*g_job.w, {t.r0, t.c0, op.k_base}, t.rows, t.cols, kt, b.a, sf.sa, b.b, sf.sb, acc);
    } else {  // a datapath hook sees every instruction
      const size_t k0 = op.instr * s.kin, nb = s.kin / s.block;
      const std::vector<uint8_t> a = slice(b.a, t.rows, kt, k0, s.kin), bb = slice(b.b, t.cols, kt, k0, s.kin);
      const std::vector<uint32_t> sa = slice(sf.sa, t.rows, kt / s.block, k0 / s.block, nb),
                                  sb = slice(sf.sb, t.cols, kt / s.block, k0 / s.block, nb);
      acc = run_step(*g_job.w, {t.r0, t.c0, op.k_base + k0}, t.rows, t.cols, s.kin, a, sa, bb, sb, acc);
    }
    if (op.last_of_tile && t.sums()) add_partials(g_job.partials, t, acc);  // the split-K fixup
  }
  // Epilogue warps: tcgen05.ld of the accumulator, then the accumulator slot is free again.
  // (A method unit: phases 0 take, 1 loaded, 2 free the accumulator, 3 hand the tile on.)
  void epilogue() {
    unit_method(ep_phase_, [&] {
      for (;;) {
        const uint64_t bytes = ep_a_.tile.rows * ep_a_.tile.cols * 4;
        switch (ep_phase_) {
          case 0:
            if (!pop_ready(acc_full)) return;
            ep_a_ = acc_full.pop_now();
            ep_phase_ = 1;
            if (hold(ceil_div(ep_a_.tile.rows * ep_a_.tile.cols * 4, static_cast<uint64_t>(g_job.p->tmem_ld_bytes_per_cycle))))
              return;
            break;
          case 1:
            st.bytes[CoreStats::kTmemAcc] += bytes;
            ep_o_ = TileOut{ep_a_.tile, {}};
            if (g_job.functional()) ep_o_.d = acc_[ep_a_.acc];
            ep_phase_ = 2;
            break;
          case 2:
            if (!push_ready(acc_free)) return;
            acc_free.push_now(ep_a_.acc);
            ep_phase_ = 3;
            break;
          default:
            if (!push_ready(quant.in)) return;
            quant.in.push_now(std::move(ep_o_));
            ep_phase_ = 0;
        }
      }
    });
  }
  int ep_phase_ = 0, cp_phase_ = 0;
  AccTok ep_a_;
  TileOut ep_o_;
  CpOp cp_;

  std::vector<OperandBuf> smem_, tmem_sf_;  // SMEM stages; TMEM scale-factor slots (scales only)
  std::vector<std::vector<float>> acc_;  // TMEM accumulators
  uint32_t acc_cur_ = 0, last_acc_ = UINT32_MAX;
  uint64_t last_start_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Cube (one AI core)

struct L0Tok {
  Tile tile;
  uint32_t l0 = 0, step = 0;
  size_t k0 = 0, kk = 0;
  bool first = false, last = false;
  Cause cause = 0;
};

class CubeCore : public CoreShell {
 public:
  Channel<uint32_t> l1b_free{"l1b_free", 2}, l0_free{"l0_free", 2}, l0c_free{"l0c_free", 2};
  Channel<L0Tok> l0_full{"l0_full", 2};
  Channel<AccTok> acc_full{"acc_full", 2};
  LoadEngine mte2{"mte2"};

  void trace(sc_core::sc_trace_file* f, const std::string& prefix) {
    for (auto* ch : {&l1b_free, &l0_free, &l0c_free}) ch->trace(f, prefix);
    l0_full.trace(f, prefix);
    acc_full.trace(f, prefix);
    mte2.jobs.trace(f, prefix + "mte2.");
    mte2.inflight.trace(f, prefix + "mte2.");
    mte2.done.trace(f, prefix + "mte2.");
    trace_shell(f, prefix, "cube_array");
  }

  SC_HAS_PROCESS(CubeCore);
  explicit CubeCore(const sc_module_name& nm) : CoreShell(nm) {
    wake_list().push_back(&a_released_);
    SC_THREAD(producer);
    SC_THREAD(mte1);
    SC_THREAD(cube);
    set_stack_size(4 << 20);  // the datapath runs on this thread
    SC_METHOD(fixpipe);
    mte2.st = &st;
    mte2.land = [this](const Stage& s) { land(s); };
  }
  void reset() {
    reset_shell(EngineKind::Cube);
    l1b_free.reset(2), l0_free.reset(2), l0c_free.reset(2);
    for (uint32_t i = 0; i < 2; ++i) l1b_free.preload(i), l0_free.preload(i), l0c_free.preload(i);
    l0_full.reset(2), acc_full.reset(2);
    mte2.reset(2);
    a_mb_[0] = a_mb_[1] = -1;
    a_users_[0] = a_users_[1] = 0;
    if (g_job.functional()) l1a_.resize(2), l1b_.resize(2), l0_.resize(2), l0c_.resize(2);
    last_start_ = 0;
    fx_phase_ = 0;
  }

 private:
  // The scalar unit's MTE2 instructions: per L1 chunk of each tile, wait for a free L1 slot, load.
  // A (whole K in one chunk, raster along N) stays in its L1 slot while tiles of the same m block
  // follow; its slot is reference counted.
  void producer() {
    unit_loop([&] {
      const Tile t = tile_in->pop();
      const size_t l1k = std::min<size_t>(static_cast<size_t>(g_job.m->l1_k), g_job.s->K);
      const bool resident = g_job.g.chunks == 1 && g_job.m->raster == Raster::AlongN;
      for (size_t c = 0; c < g_job.g.chunks; ++c) {
        Stage s;
        s.tile = t;
        s.step = static_cast<uint32_t>(c);
        s.first = c == 0, s.last = c + 1 == g_job.g.chunks;
        s.slot = l1b_free.pop();
        // A slot: reuse one holding this m block, else take a slot nobody reads.
        int slot = -1;
        if (resident)
          for (int i = 0; i < 2; ++i)
            if (a_mb_[i] == static_cast<int64_t>(t.mb)) slot = i;
        s.load_a = slot < 0;
        while (slot < 0) {
          for (int i = 0; i < 2 && slot < 0; ++i)
            if (a_users_[i] == 0) slot = i;
          if (slot < 0) wait_event(a_released_);
        }
        if (s.load_a) a_mb_[slot] = resident ? static_cast<int64_t>(t.mb) : -1;
        ++a_users_[slot];
        s.aslot = static_cast<uint32_t>(slot);
        const size_t k0 = c * l1k;
        s.slabs = step_slabs(t, k0, std::min(l1k, g_job.s->K - k0), s.load_a, s.first);
        mte2.jobs.push(std::move(s));
      }
      want->push(id, 1);
    });
  }
  void land(const Stage& s) {
    const size_t l1k = std::min<size_t>(static_cast<size_t>(g_job.m->l1_k), g_job.s->K), k0 = s.step * l1k;
    const size_t kk = std::min(l1k, g_job.s->K - k0);
    fill_operands(s.tile, k0, kk, false, s.first, l1b_[s.slot]);
    if (s.load_a) fill_operands(s.tile, k0, kk, true, false, l1a_[s.aslot]);
  }
  // MTE1: each K step of the chunk from L1 into a free L0A / L0B slot (both moves in parallel).
  void mte1() {
    unit_loop([&] {
      const uint64_t t0 = now_cycles();
      const Stage c = mte2.done.pop();
      const bool waited_l1 = now_cycles() > t0;
      const Shape& sh = *g_job.s;
      const size_t l1k = std::min<size_t>(static_cast<size_t>(g_job.m->l1_k), sh.K), ck0 = c.step * l1k;
      const size_t ckk = std::min(l1k, sh.K - ck0), kt = static_cast<size_t>(g_job.m->tile_k);
      const size_t steps = ceil_div(ckk, kt);
      for (size_t i = 0; i < steps; ++i) {
        L0Tok tok;
        tok.tile = c.tile;
        tok.k0 = ck0 + i * kt, tok.kk = std::min(kt, ckk - i * kt);
        tok.first = c.first && i == 0, tok.last = c.last && i + 1 == steps;
        tok.l0 = l0_free.pop();
        const uint64_t ab = sh.operand_bytes(c.tile.rows, tok.kk), bb = sh.operand_bytes(c.tile.cols, tok.kk);
        wait_cycles(ceil_div(std::max(ab, bb), static_cast<uint64_t>(g_job.p->mte1_bytes_per_cycle)));
        st.bytes[CoreStats::kL0a] += ab, st.bytes[CoreStats::kL0b] += bb;
        tok.cause = cause_of(waited_l1 && i == 0 ? "l1_load" : "l0_load");
        if (g_job.functional()) {
          OperandBuf& l0 = l0_[tok.l0];
          const OperandBuf &la = l1a_[c.aslot], &lb = l1b_[c.slot];
          const size_t off = i * kt, nb = tok.kk / sh.block;
          l0.a = slice(la.a, c.tile.rows, ckk, off, tok.kk);
          l0.sa = slice(la.sa, c.tile.rows, ckk / sh.block, off / sh.block, nb);
          l0.b = slice(lb.b, c.tile.cols, ckk, off, tok.kk);
          l0.sb = slice(lb.sb, c.tile.cols, ckk / sh.block, off / sh.block, nb);
          if (tok.first) l0.c = lb.c;
        }
        l0_full.push(tok);
      }
      l1b_free.push(c.slot);
      --a_users_[c.aslot];
      a_released_.notify(sc_core::SC_ZERO_TIME);
    });
  }
  // The PE array: rows x cols PEs, each a pe_k-element dot product per cycle, accumulating in L0C.
  void cube() {
    unit_loop([&] {
      const L0Tok t = l0_full.pop();
      st.started = true;
      st.idle_until(g_job.now(), t.cause);
      if (t.first) {
        acc_cur_ = l0c_free.pop();
        st.idle_until(g_job.now(), cause_of("l0c_busy"));
      } else {
        const uint64_t depth = static_cast<uint64_t>(g_job.p->pipeline_depth);
        if (last_start_ + depth > g_job.now()) {
          wait_cycles(last_start_ + depth - g_job.now());
          st.idle_until(g_job.now(), cause_of("accumulator_dependency"));
        }
      }
      const uint64_t R = static_cast<uint64_t>(g_job.p->rows), C = static_cast<uint64_t>(g_job.p->cols);
      const uint64_t compute =
          ceil_div(t.tile.rows, R) * ceil_div(t.tile.cols, C) * ceil_div(t.kk, static_cast<uint64_t>(g_job.p->pe_k));
      last_start_ = g_job.now();
      if (g_job.functional()) {
        OperandBuf& l0 = l0_[t.l0];
        std::vector<float>& acc = l0c_[acc_cur_];
        if (t.first) acc = l0.c;
        acc = run_step(*g_job.w, {t.tile.r0, t.tile.c0, t.k0}, t.tile.rows, t.tile.cols, t.kk, l0.a, l0.sa, l0.b,
                       l0.sb, acc);
      }
      st.bytes[CoreStats::kL0c] += 2 * 4 * t.tile.rows * t.tile.cols;
      compute_for(compute);
      st.compute += compute;
      st.busy_until = g_job.now();
      ++st.instructions;
      l0_free.push(t.l0);
      if (t.last) acc_full.push({t.tile, acc_cur_}, static_cast<uint64_t>(g_job.p->pipeline_depth));
    });
  }
  // FixPipe: L0C out at fixpipe_bytes_per_cycle, then the L0C half is free.
  // (A method unit: phases 0 take, 1 out of L0C, 2 free the L0C half, 3 hand the tile on.)
  void fixpipe() {
    unit_method(fx_phase_, [&] {
      for (;;) {
        switch (fx_phase_) {
          case 0:
            if (!pop_ready(acc_full)) return;
            fx_a_ = acc_full.pop_now();
            fx_phase_ = 1;
            if (hold(ceil_div(fx_a_.tile.rows * fx_a_.tile.cols * 4, static_cast<uint64_t>(g_job.p->fixpipe_bytes_per_cycle))))
              return;
            break;
          case 1:
            fx_o_ = TileOut{fx_a_.tile, {}};
            if (g_job.functional()) fx_o_.d = l0c_[fx_a_.acc];
            fx_phase_ = 2;
            break;
          case 2:
            if (!push_ready(l0c_free)) return;
            l0c_free.push_now(fx_a_.acc);
            fx_phase_ = 3;
            break;
          default:
            if (!push_ready(quant.in)) return;
            quant.in.push_now(std::move(fx_o_));
            fx_phase_ = 0;
        }
      }
    });
  }
  int fx_phase_ = 0;
  AccTok fx_a_;
  TileOut fx_o_;

  std::vector<OperandBuf> l1a_, l1b_, l0_;
  std::vector<std::vector<float>> l0c_;
  int64_t a_mb_[2] = {-1, -1};
  int a_users_[2] = {0, 0};
  sc_core::sc_event a_released_;
  uint32_t acc_cur_ = 0;
  uint64_t last_start_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The chip: a pool of core slots per engine, their scheduler and memory system.

template <class Core>
struct Chip {
  MemorySystem mem;
  TileScheduler sched;
  std::vector<std::unique_ptr<Core>> cores;
  Chip(const std::string& name, size_t slots) : mem((name + "_mem").c_str(), slots), sched((name + "_sched").c_str(), slots) {
    for (size_t i = 0; i < slots; ++i) {
      cores.push_back(std::make_unique<Core>((name + "_core" + std::to_string(i)).c_str()));
      Core& c = *cores.back();
      c.id = static_cast<uint32_t>(i);
      c.tile_in = sched.tiles[i].get();
      c.want = &sched.want;
      load_engine(c).mem = mem.req[2 * i].get();
      c.store.mem = mem.req[2 * i + 1].get();
    }
  }
  static LoadEngine& load_engine(Core& c) {
    if constexpr (std::is_same_v<Core, TensorCoreSm>) return c.tma;
    else return c.mte2;
  }
};

struct System {
  Chip<TensorCoreSm> tc;
  Chip<CubeCore> cube;
  System(size_t tc_slots, size_t cube_slots) : tc("tc", tc_slots), cube("cube", cube_slots) {}
};

sc_core::sc_trace_file* g_trace = nullptr;
std::string g_trace_final;

System& system() {
  static std::unique_ptr<System> sys;
  if (!sys) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // keep fp4sim's stdout clean
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    // Thread stacks are allocated when simulation starts; the pool's idle threads cost memory, not time.
    const int64_t tc = std::max(g_slots[0], default_params(EngineKind::TensorCore).cores);
    const int64_t cu = std::max(g_slots[1], default_params(EngineKind::Cube).cores);
    g_slots[0] = tc, g_slots[1] = cu;
    sys = std::make_unique<System>(static_cast<size_t>(tc), static_cast<size_t>(cu));
  }
  return *sys;
}
bool g_elaborated = false;

template <class Core>
Stats run_on(Chip<Core>& chip, const Params& p, const Shape& s, const Mapping& m, const Workload& w, Result* r,
             const Progress& progress, uint64_t tile_limit) {
  const size_t cores = static_cast<size_t>(p.cores);
  if (p.cores > g_slots[p.engine == EngineKind::TensorCore ? 0 : 1])
    throw std::invalid_argument("models: cores=" + std::to_string(p.cores) + " exceeds the " +
                                std::to_string(g_slots[p.engine == EngineKind::TensorCore ? 0 : 1]) +
                                " core slots elaborated in this process (reserve_cores before the first job)");
  g_job = Job{};
  g_job.p = &p, g_job.s = &s, g_job.m = &m, g_job.w = &w, g_job.r = r, g_job.progress = &progress;
  g_job.g = geometry(p, s, m);
  g_job.tiles = tile_limit && !r ? std::min<uint64_t>(tile_limit, g_job.g.units()) : g_job.g.units();
  g_job.partials_done.assign(g_job.g.splits > 1 ? g_job.g.tiles() : 0, 0);
  g_job.partials.assign(g_job.g.splits > 1 && r ? g_job.g.tiles() * (g_job.g.splits - 1) : 0, {});
  g_job.partial_stored = &chip.sched.partial_stored;
  g_job.t0 = now_cycles();
  const size_t grid = static_cast<size_t>(grid_of(p, s, m));
  chip.mem.reset(p, cores, std::min<size_t>(grid, g_job.tiles), m.l2_no_allocate);
  chip.sched.reset(cores, grid);
  for (size_t i = 0; i < cores; ++i) chip.cores[i]->reset();
  g_aborting = false;
  g_job_error.clear();
  resume_event().notify(sc_core::SC_ZERO_TIME);  // units parked by a failed job start over
  sc_core::sc_start();
  ++g_starts;
  g_elaborated = true;
  if (!g_job_error.empty() || g_job.tiles_done != g_job.tiles) {
    const std::string why = !g_job_error.empty() ? g_job_error
                                                 : "models: deadlock: the simulation ran out of events with " +
                                                       std::to_string(g_job.tiles_done) + " of " +
                                                       std::to_string(g_job.tiles) + " tiles stored";
    if (!g_aborting) {  // a deadlock: wake every unit so that it unwinds and parks
      g_aborting = true;
      wake_all();
      sc_core::sc_start();
    }
    // Drop the tokens the failed job left in the channels (a later job may not use these cores).
    chip.mem.reset(p, cores, cores, false);
    chip.sched.clear(cores);  // (no asks: the scheduler would hand out tiles to the next job of the other engine)
    for (size_t i = 0; i < cores; ++i) chip.cores[i]->reset();
    throw std::runtime_error(why);
  }
  Stats st;
  st.timing = Timing::Cycle;
  st.mapping = m;
  fill_rooflines(p, s, st);
  st.sim_time_ps = g_job.now() * kClockPs;
  // The launch and prologue come before the first load, serially: no core has a tile meanwhile.
  st.cycles = g_job.now() + s.launch;
  st.launch_cycles = s.launch;
  st.clock_mhz = s.clock_mhz;
  st.tiles = g_job.g.tiles();
  const auto& causes = stall_causes(p.engine);
  std::vector<uint64_t> stall(causes.size(), 0);
  std::map<std::string, uint64_t> bytes;
  uint64_t multicast = 0;  // bytes the cores received from their peers' multicast loads
  for (size_t i = 0; i < cores; ++i) {
    CoreStats& c = chip.cores[i]->st;
    st.compute_cycles += c.compute;
    st.instructions += c.instructions;
    for (size_t k = 0; k < causes.size(); ++k) stall[k] += c.stall[k];
    // After its last instruction a core waits for the others (or never got a tile).
    stall[c.started ? cause_of("tail") : cause_of("no_tile")] += g_job.now() - c.busy_until;
    stall[cause_of("no_tile")] += s.launch;
    for (int k = 0; k < CoreStats::kLevels; ++k) bytes[kLevelNames[k]] += c.bytes[k];
    multicast += c.multicast_in;
  }
  for (size_t k = 0; k < causes.size(); ++k) st.stalls.emplace_back(std::string(causes[k]), stall[k]);
  bytes["dram_read"] = chip.mem.dram_read, bytes["dram_write"] = chip.mem.dram_write;
  bytes["l2_read"] = chip.mem.l2_read, bytes["l2_write"] = chip.mem.l2_write;
  bytes["die_link"] = chip.mem.link_bytes;
  bytes["dram_row_open"] = chip.mem.row_open_bytes();
  bytes[p.engine == EngineKind::TensorCore ? "smem_write" : "l1_write"] = chip.mem.l2_read + multicast;
  for (std::string_view l : byte_levels(p.engine)) st.bytes.emplace_back(std::string(l), bytes[std::string(l)]);
  return st;
}

}  // namespace

Stats run_cycle(const Params& p, const Shape& s, const Mapping& m, const Workload& w, Result* r,
                const Progress& progress, uint64_t tile_limit) {
  System& sys = system();
  if (p.engine == EngineKind::TensorCore) return run_on(sys.tc, p, s, m, w, r, progress, tile_limit);
  return run_on(sys.cube, p, s, m, w, r, progress, tile_limit);
}

}  // namespace fp4sim::models::detail

namespace fp4sim::models {

void reserve_cores(EngineKind e, int64_t cores) {
  int64_t& slot = detail::g_slots[e == EngineKind::TensorCore ? 0 : 1];
  if (detail::g_elaborated || detail::g_trace) {
    if (cores > slot)
      throw std::invalid_argument("models: reserve_cores(" + std::to_string(cores) +
                                  ") after the first job; this process has " + std::to_string(slot) + " slots");
    return;
  }
  slot = std::max(slot, cores);
}

uint64_t sim_time_ps() { return sc_core::sc_time_stamp().value(); }
uint64_t sim_starts() { return detail::g_starts; }

void open_trace(const std::string& path) {
  using namespace detail;
  if (g_trace) throw std::logic_error("models: a trace is already open");
  if (g_starts) throw std::logic_error("models: open_trace must come before the first job (SystemC adds no traces later)");
  g_trace_final = path;
  if (g_trace_final.size() < 4 || g_trace_final.compare(g_trace_final.size() - 4, 4, ".vcd") != 0) g_trace_final += ".vcd";
  const std::string tmp = g_trace_final + ".partial";  // SystemC appends ".vcd"
  System& s = system();
  g_trace = sc_core::sc_create_vcd_trace_file(tmp.c_str());
  if (!g_trace) throw std::runtime_error("models: cannot create the trace " + path);
  g_trace->set_time_unit(1, sc_core::SC_NS);  // one tick per cycle
  // Core 0 of each engine and the memory systems: enough to see which queue a stall waits on.
  s.tc.cores[0]->trace(g_trace, "tensor_core.sm0.");
  s.tc.mem.trace(g_trace, "tensor_core.mem.");
  s.cube.cores[0]->trace(g_trace, "cube.core0.");
  s.cube.mem.trace(g_trace, "cube.mem.");
  g_tracing = true;
}

void close_trace() {
  using namespace detail;
  if (!g_trace) return;
  // The kernel writes a time step when it leaves it: one idle cycle records the last values.
  sc_core::sc_start(cycles_time(1));
  sc_core::sc_close_vcd_trace_file(g_trace);
  g_trace = nullptr;
  g_tracing = false;
  const std::string tmp = g_trace_final + ".partial.vcd";
  if (std::rename(tmp.c_str(), g_trace_final.c_str()) != 0)
    throw std::runtime_error("models: cannot rename " + tmp + " to " + g_trace_final);
}

}  // namespace fp4sim::models
