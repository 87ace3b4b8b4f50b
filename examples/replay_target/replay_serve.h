/* The exec side of `fp4sim replay --target exec:CMD` (docs/replay-targets.md), for a model in C or
 * C++: reads request lines on stdin, calls `answer` for each, writes one result line per request
 * on stdout. Header only, plain C99; copy it into your own harness.
 *
 * A request line is the first eleven fields of a hex line vector (docs/line-vectors.md):
 *   case m n s S config A B SA SB C
 * and the answer is "D [flags]" in hex, or "unsupported WHY" for a configuration the model does not
 * compute. Output is flushed whenever the input read so far is used up, so fp4sim's batches cost
 * one pipe round trip each, not one per line. */
#ifndef FP4SIM_REPLAY_SERVE_H
#define FP4SIM_REPLAY_SERVE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  unsigned case_num, m, n, s, S;
  uint32_t config; /* bits 31:28 kind, 27:24 model, 23:20 / 19:16 elements, 15:12 scale, 11:0 block */
  unsigned k, nscales;
  uint8_t a[64], b[64]; /* element codes, a[0] = element 0 */
  uint32_t sa[4], sb[4]; /* scales, sa[0] covers elements [0, block) */
  uint32_t c;           /* FP32 bits */
} fp4sim_request;

/* Returns 0 and writes *d (and *flags, or -1 for none), or writes `why` (a one-line reason) and
 * returns 1 for a configuration the model does not compute. */
typedef int (*fp4sim_answer_fn)(const fp4sim_request* r, void* ctx, uint32_t* d, int* flags, const char** why);

static int fp4sim_hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* `digits` hex digits at p into *v; 0 on success. */
static int fp4sim_hex_field(const char* p, size_t digits, uint32_t* v) {
  size_t i;
  *v = 0;
  for (i = 0; i < digits; ++i) {
    const int d = fp4sim_hex_digit(p[i]);
    if (d < 0) return 1;
    *v = *v << 4 | (uint32_t)d;
  }
  return 0;
}

/* Parses one request line (without '\n'); 0 on success. */
static int fp4sim_parse_request(const char* line, fp4sim_request* r) {
  const char* tok[11];
  size_t len[11];
  size_t n = 0, i;
  const char* p = line;
  uint32_t v, hdr[5];
  unsigned kind, block;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (!*p) break;
    if (n == 11) return 1;
    tok[n] = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r') ++p;
    len[n] = (size_t)(p - tok[n]);
    ++n;
  }
  if (n != 11) return 1;
  for (i = 0; i < 5; ++i) {
    if (len[i] > 8 || fp4sim_hex_field(tok[i], len[i], &v)) return 1;
    hdr[i] = v;
  }
  r->case_num = hdr[0];
  r->m = hdr[1];
  r->n = hdr[2];
  r->s = hdr[3];
  r->S = hdr[4];
  if (len[5] != 8 || fp4sim_hex_field(tok[5], 8, &r->config)) return 1;
  kind = r->config >> 28;
  block = r->config & 0xFFFu;
  r->k = kind == 2 ? 32 : 64; /* mxf8f6f4: K = 32; mxf4, mxf4nvf4, hif4: 64 */
  if (block == 0 || r->k % block || r->k / block > 4) return 1;
  r->nscales = r->k / block;
  if (len[6] != 2 * r->k || len[7] != 2 * r->k || len[8] != 8 * r->nscales || len[9] != 8 * r->nscales || len[10] != 8)
    return 1;
  for (i = 0; i < r->k; ++i) { /* most significant first: element 0 is the last two digits */
    if (fp4sim_hex_field(tok[6] + 2 * (r->k - 1 - i), 2, &v)) return 1;
    r->a[i] = (uint8_t)v;
    if (fp4sim_hex_field(tok[7] + 2 * (r->k - 1 - i), 2, &v)) return 1;
    r->b[i] = (uint8_t)v;
  }
  for (i = 0; i < r->nscales; ++i) {
    if (fp4sim_hex_field(tok[8] + 8 * (r->nscales - 1 - i), 8, &r->sa[i])) return 1;
    if (fp4sim_hex_field(tok[9] + 8 * (r->nscales - 1 - i), 8, &r->sb[i])) return 1;
  }
  return fp4sim_hex_field(tok[10], 8, &r->c);
}

/* Serves requests until end of input. Returns 0, or 1 after a malformed request (reported on stderr). */
static int fp4sim_serve(fp4sim_answer_fn answer, void* ctx) {
  static char buf[1 << 16];
  size_t have = 0, lineno = 0;
  for (;;) {
    char* start = buf;
    char* nl;
    const ssize_t got = read(0, buf + have, sizeof buf - 1 - have);
    if (got < 0) return 1;
    if (got == 0) return 0; /* a last line without '\n' is no request */
    have += (size_t)got;
    while ((nl = (char*)memchr(start, '\n', (size_t)(buf + have - start))) != NULL) {
      fp4sim_request r;
      uint32_t d = 0;
      int flags = -1;
      const char* why = "";
      *nl = '\0';
      ++lineno;
      if (fp4sim_parse_request(start, &r)) {
        fprintf(stderr, "replay model: request %lu is malformed\n", (unsigned long)lineno);
        return 1;
      }
      if (answer(&r, ctx, &d, &flags, &why)) printf("unsupported %s\n", why);
      else if (flags >= 0) printf("%08x %02x\n", (unsigned)d, (unsigned)flags);
      else printf("%08x\n", (unsigned)d);
      start = nl + 1;
    }
    have = (size_t)(buf + have - start);
    memmove(buf, start, have);
    if (have == sizeof buf - 1) {
      fprintf(stderr, "replay model: request line too long\n");
      return 1;
    }
    fflush(stdout); /* every request read so far is answered: hand the batch back */
  }
}

#endif
