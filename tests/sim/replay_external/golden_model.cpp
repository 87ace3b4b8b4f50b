// An exec model for the replay tests (tests/sim/replay_external/test_replay_external.cpp): answers every request
// from fp4sim's golden mma_dot, or misbehaves on purpose where an option says so.
//   --wrong CASE:M:N:S   D + 1 (one ulp) for that instruction (case number, element, step; decimal)
//   --die-at R           exit with status 3 when request R (1-based) arrives, without answering it
//   --garbage-at R       answer request R with a line that is no result
//   --stop-at R          exit with status 0 before answering request R (too few lines)
//   --hang-at R          stop answering at request R, and wait
//   --only WORD          answer "unsupported ..." for every other configuration word (hex)
//   --flags              also give the flags (golden's instruction_flags)
//   --wrong-flags CASE:M:N:S  with --flags: one flag bit flipped for that instruction
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fp4sim/io/lines.hpp"
#include "fp4sim/mma.hpp"
#include "replay_serve.h"

namespace {

struct Options {
  long wrong[4] = {-1, -1, -1, -1}, wrong_flags[4] = {-1, -1, -1, -1};
  unsigned long die_at = 0, garbage_at = 0, stop_at = 0, hang_at = 0, n = 0;
  long only = -1;
  bool flags = false;
};

bool at(const long w[4], const fp4sim_request* r) {
  return w[0] == static_cast<long>(r->case_num) && w[1] == static_cast<long>(r->m) &&
         w[2] == static_cast<long>(r->n) && w[3] == static_cast<long>(r->s);
}

void parse_at(const char* s, long w[4]) {
  if (std::sscanf(s, "%ld:%ld:%ld:%ld", &w[0], &w[1], &w[2], &w[3]) != 4) {
    std::fprintf(stderr, "golden_model: expected CASE:M:N:S, got %s\n", s);
    std::exit(2);
  }
}

int answer(const fp4sim_request* r, void* ctx, uint32_t* d, int* flags, const char** why) {
  Options& o = *static_cast<Options*>(ctx);
  ++o.n;
  if (o.n == o.die_at) {  // a crash after the answers so far were handed over
    std::fflush(stdout);
    std::_Exit(3);
  }
  if (o.n == o.stop_at) {
    std::fflush(stdout);
    std::_Exit(0);
  }
  if (o.n == o.hang_at) {
    std::fflush(stdout);
    pause();
  }
  if (o.n == o.garbage_at) {
    std::printf("this is no answer\n");
    std::fflush(stdout);
  }
  if (o.only >= 0 && r->config != static_cast<uint32_t>(o.only)) {
    *why = "golden_model --only refuses this configuration";
    return 1;
  }
  const fp4sim::MmaConfig cfg = fp4sim::lines::config_from_word(r->config);
  *d = fp4sim::mma_dot(cfg, r->a, r->b, r->sa, r->sb, r->c);
  if (o.flags) {
    *flags = fp4sim::lines::instruction_flags(cfg, r->a, r->b, r->sa, r->sb, r->c, *d);
    if (at(o.wrong_flags, r)) *flags ^= fp4sim::lines::kFlagInexact;
  }
  if (at(o.wrong, r)) *d += 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--wrong") parse_at(v, o.wrong), ++i;
    else if (a == "--wrong-flags") parse_at(v, o.wrong_flags), ++i;
    else if (a == "--die-at") o.die_at = std::strtoul(v, nullptr, 10), ++i;
    else if (a == "--garbage-at") o.garbage_at = std::strtoul(v, nullptr, 10), ++i;
    else if (a == "--stop-at") o.stop_at = std::strtoul(v, nullptr, 10), ++i;
    else if (a == "--hang-at") o.hang_at = std::strtoul(v, nullptr, 10), ++i;
    else if (a == "--only") o.only = std::strtol(v, nullptr, 16), ++i;
    else if (a == "--flags") o.flags = true;
    else {
      std::fprintf(stderr, "golden_model: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  return fp4sim_serve(answer, &o);
}
