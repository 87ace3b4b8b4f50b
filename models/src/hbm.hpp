// Internal: the HBM of one die as pseudo-channels of banks (docs/models.md "HBM"). No SystemC: the
// memory system's HBM port calls access() for each request it takes, in the order it takes them,
// and gets the cycle its last byte leaves the DRAM.
//
// Each request is one or more contiguous segments (whole rows of a tile: a K slice of each operand
// row, strided by the row's length in memory), cut at `interleave` bytes into chunks. A chunk's
// pseudo-channel is a hash of its interleave granule (the address hashing GPUs use to spread
// strided streams); its bank a hash of its page span (a page of every pseudo-channel), its row
// the page span itself. Per chunk:
//   - row hit (open page, the bank holds the row): its column access can start at once;
//   - closed bank: activate (tRCD) first;
//   - row conflict: precharge (tRP, no earlier than tRAS after the row's activate) then activate.
//   An activate also waits for the pseudo-channel's four-activate window (tFAW).
//   The chunk's bytes then cross the pseudo-channel's data bus, which is booked in the order the
//   chunks come (so it never exceeds its bandwidth) but not held for a bank that is still opening
//   its row: the data leaves when both the bus has carried it and the bank has read it (a controller
//   that serves ready banks while others activate). A switch between reads and writes on a bus costs
//   the turnaround (a controller without write batching).
// `closed` page policy precharges after every access (auto-precharge): no hits, no conflicts.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace fp4sim::models {

struct HbmTiming {
  uint32_t channels = 1;          // pseudo-channels of this die
  uint32_t banks = 1;             // banks per pseudo-channel
  uint64_t page_bytes = 1024;     // row buffer of one pseudo-channel
  uint64_t interleave = 256;      // bytes per pseudo-channel before the address moves to the next
  double bus = 1;                 // one pseudo-channel's bytes per cycle
  double rcd = 0, rp = 0, ras = 0, faw = 0, turnaround = 0;  // cycles
  bool open_page = true;
};

class HbmDie {
 public:
  uint64_t opened = 0;  // bytes of the chunks that had to open their row (an activate)

  void reset(const HbmTiming& t) {
    t_ = t;
    banks_.assign(static_cast<size_t>(t.channels) * t.banks, Bank{});
    pcs_.assign(t.channels, Pc{});
    opened = 0;
  }
  // A request at cycle `now`: `bytes` in rows of `seg` bytes (0: one contiguous run) that start
  // `stride` bytes apart, the first row at `row` and the request `skip` bytes into it. Returns the
  // cycle its last byte has left the DRAM.
  double access(double now, uint64_t row, uint64_t skip, uint64_t bytes, uint64_t seg, uint64_t stride, bool write) {
    if (seg == 0) seg = skip + bytes, stride = seg;
    double end = now;
    for (uint64_t left = bytes; left > 0; row += stride, skip = 0) {
      const uint64_t a = row + skip, len = std::min(seg - skip, left);
      for (uint64_t c = a; c < a + len;) {
        const uint64_t next = std::min(a + len, (c / t_.interleave + 1) * t_.interleave);
        end = std::max(end, chunk(now, c, next - c, write));
        c = next;
      }
      left -= len;
    }
    return end;
  }

 private:
  struct Bank {
    uint64_t row = kNoRow;
    double act = -1e300;       // last activate
    double ready = 0;          // free for the next access (open page) / precharged (closed page)
  };
  struct Pc {
    double bus = 0;            // data bus booked until
    int8_t dir = -1;           // direction of the last chunk on the bus (1 write, 0 read, -1 none yet)
    std::array<double, 4> acts{-1e300, -1e300, -1e300, -1e300};  // last four activates (tFAW)
    uint32_t next_act = 0;
  };
  static constexpr uint64_t kNoRow = ~uint64_t{0};
  static uint64_t mix(uint64_t v) {
    v ^= v >> 31;
    v *= 0x9E3779B97F4A7C15ull;
    return v ^ (v >> 29);
  }
  double chunk(double now, uint64_t addr, uint64_t bytes, bool write) {
    const uint64_t pc_i = mix(addr / t_.interleave) % t_.channels;
    const uint64_t span = addr / (t_.page_bytes * t_.channels);  // the page span: a row of every pseudo-channel
    Pc& pc = pcs_[pc_i];
    Bank& b = banks_[pc_i * t_.banks + mix(span ^ 0x5bd1e995u) % t_.banks];
    const double xfer = static_cast<double>(bytes) / t_.bus;
    double col;
    if (t_.open_page && b.row == span) {
      col = std::max(now, b.ready);
    } else {
      double act = std::max(now, b.ready);
      if (t_.open_page && b.row != kNoRow) {  // close the open row first
        act = std::max(act, b.act + t_.ras) + t_.rp;
      }
      double& oldest = pc.acts[pc.next_act];
      act = std::max(act, oldest + t_.faw);
      oldest = act;
      pc.next_act = (pc.next_act + 1) % 4;
      b.act = act;
      col = act + t_.rcd;
      opened += bytes;
    }
    // The bus: booked in arrival order, a turnaround when the direction changes.
    const double turn = pc.dir >= 0 && pc.dir != static_cast<int8_t>(write) ? t_.turnaround : 0.0;
    pc.bus = std::max(pc.bus + turn, now) + xfer;
    pc.dir = static_cast<int8_t>(write);
    // The bank is busy with the chunk's column accesses for its transfer time (whatever the bus).
    const double read = col + xfer;
    if (t_.open_page) {
      b.row = span;
      b.ready = read;
    } else {  // auto-precharge once the access and tRAS are done
      b.row = kNoRow;
      b.ready = std::max(b.act + t_.ras, read) + t_.rp;
    }
    return std::max(pc.bus, read);
  }

  HbmTiming t_;
  std::vector<Bank> banks_;
  std::vector<Pc> pcs_;
};

}  // namespace fp4sim::models
