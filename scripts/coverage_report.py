#!/usr/bin/env python3
"""Summary of an RTL coverage run (scripts/coverage.sh; docs/rtl.md "Coverage").

Usage: coverage_report.py OUTDIR UNIT...   (reads OUTDIR/<unit>.dat, OUTDIR/all.dat, OUTDIR/functional.txt)

Verilator's .dat lines are  C '<key>' <count>  with key = \\001name\\002value pairs: page
(v_line/<module>, v_branch/<module>, v_toggle/<module>), f (file), l (line), o (comment: the
block kind, or the signal bit of a toggle point), h (hierarchy). Line coverage here = every
v_line and v_branch point (statement blocks and if/case arms); toggle = v_toggle points (one per
signal bit; Verilator counts a point when the bit changes).

Datapath toggle: every toggle point except the handshake / clock / reset signals (CONTROL) and the
bits listed in EXCLUDE, each with the reason it cannot toggle under any legal stimulus.
"""
import collections
import re
import sys

CONTROL = re.compile(r'(^|\.)(clk_i|rst_ni|in_valid_i|in_ready_o|out_valid_o|out_ready_i|valid_[a-z]+|ready_[a-z]+|v_q|valid|ready)(\[|$)')

# Toggle bits that no stimulus can change, by construction (listed with the reason in the report).
# Only three provable kinds; bits above the largest *reachable* magnitude, which depend on operand
# ranges, are not excluded and show up in the list of untoggled bits.
EXCLUDE = [
    ('fp4sim_fp32_add_round', r'(a_al|b_full|b_lost)\[[0-2]\]',
     "the three guard/round/sticky positions appended as 3'b000"),
    ('*', r'(ta|tb|tsa|tsb)\[\d+\]',
     'decode-table entry fields constant over the whole table of that format (neg of an unsigned format, '
     'inf of a format without Inf, significand bits of UE8M0 = 1, bit 3 of E6M2 significands 4..7): '
     'checked against rtl/fp4sim_pkg.sv by bit, see table_const()'),
    ('*', r'(lz_o|lz|c_lz|t_lz|s_lz|dist_o|dist_i|rsh|lsh)\[\d+\]',
     'bits of an 8-bit shift amount / leading-zero count above the bit length of its static maximum '
     '(the counted width, the saturation value, or 23 for lsh)'),
]

PKG = None


def table_const(table, bit):
    """True if bit (0..15) of every 16-bit entry of fp4sim_pkg's table is the same."""
    global PKG
    if PKG is None:
        import os
        PKG = open(os.path.join(os.path.dirname(__file__), '..', 'rtl', 'fp4sim_pkg.sv')).read()
    m = re.search(r'\b' + table + r'\s*=\s*\{(.*?)\};', PKG, re.S)
    if not m:
        return False
    body = re.sub(r'//[^\n]*', '', m.group(1))
    entries = [int(x, 16) for x in re.findall(r"16'h([0-9A-Fa-f]{4})", body)]
    return bool(entries) and len({(e >> bit) & 1 for e in entries}) == 1


def param(module, key, default):
    m = re.search(r'__(?:.*_)?' + key + r'([0-9a-f]+)(?:_|$)', module)
    return int(m.group(1), 16) if m else default


def static_max_bits(module, sig):
    """Bit length of the static maximum of a shift amount / count, or None."""
    if module.startswith('fp4sim_lzc'):
        return param(module, 'W', 63).bit_length() if sig == 'lz_o' else None
    if module.startswith('fp4sim_fp32_add_prep'):
        w = max(param(module, 'T', 24), 24)
        return (w + 5).bit_length() if sig in ('c_lz', 't_lz', 'dist_o') else None
    if module.startswith('fp4sim_fp32_add_round'):
        w = param(module, 'W', 24)
        if sig == 'lsh':
            return 5
        return (w + 5).bit_length() if sig in ('s_lz', 'dist_i', 'rsh') else None
    if module.startswith('fp4sim_fix_to_fp32_rz'):
        if sig == 'lsh':
            return 5
        return 6 if sig in ('lz', 'rsh') else None  # MagW <= 63
    return None


def table_of(module, sig):
    if module.startswith('bs_k64_scale'):
        return 'DecUe4m3' if '__S0' in module else 'DecUe8m0'
    if module.startswith('nvfp4_scale'):
        return 'DecUe4m3'
    if module.startswith('hif4_scale'):
        return 'DecE6m2'
    if module.startswith('bs_k32_front') and sig in ('tsa', 'tsb'):
        return 'DecUe8m0'
    return None


def parse(path):
    pts = []
    with open(path, encoding='latin-1') as f:
        for line in f:
            if not line.startswith("C '"):
                continue
            q2 = line.rfind("'")
            key, cnt = line[3:q2], int(line[q2 + 1:].strip())
            d = {}
            for kv in key.split('\x01'):
                if '\x02' in kv:
                    k, v = kv.split('\x02', 1)
                    d[k] = v
            page = d.get('page', '')
            kind, _, module = page.partition('/')
            pts.append((kind, module, d, cnt))
    return pts


def excluded(module, sig):
    base, _, bit = sig.partition('[')
    bit = int(bit.rstrip(']')) if bit.rstrip(']').isdigit() else -1
    for m, rx, why in EXCLUDE:
        if not (m == '*' or module == m or module.startswith(m + '__')) or not re.fullmatch(rx, sig):
            continue
        if base in ('ta', 'tb', 'tsa', 'tsb'):
            t = table_of(module, base)
            if t is None or bit < 0 or not table_const(t, bit % 16):
                continue
        elif base in ('lz_o', 'lz', 'c_lz', 't_lz', 's_lz', 'dsat', 'rsh', 'lsh'):
            n = static_max_bits(module, base)
            if n is None or bit < n:
                continue
        return why
    return None


def pct(h, n):
    return f"{100.0 * h / n:6.2f} % ({h}/{n})" if n else "     - (0/0)"


def stats(pts):
    s = collections.Counter()
    for kind, module, d, cnt in pts:
        if kind in ('v_line', 'v_branch'):
            s['line_n'] += 1
            s['line_h'] += cnt > 0
        elif kind == 'v_toggle':
            sig = d.get('o', '')
            s['tog_n'] += 1
            s['tog_h'] += cnt > 0
            if CONTROL.search(sig) or excluded(module, sig):
                continue
            s['dp_n'] += 1
            s['dp_h'] += cnt > 0
    return s


def main():
    out, units = sys.argv[1], sys.argv[2:]
    print("RTL coverage (Verilator --coverage-line --coverage-toggle; functional bins from tests/rtl/coverage_bins.cpp)")
    print()
    print(f"{'unit':24s} {'line (blocks+branches)':>26s} {'toggle, all signals':>26s} {'toggle, datapath':>26s}")
    for u in units:
        s = stats(parse(f"{out}/{u}.dat"))
        print(f"{u:24s} {pct(s['line_h'], s['line_n']):>26s} {pct(s['tog_h'], s['tog_n']):>26s} {pct(s['dp_h'], s['dp_n']):>26s}")
    allp = parse(f"{out}/all.dat")
    s = stats(allp)
    print(f"{'all units':24s} {pct(s['line_h'], s['line_n']):>26s} {pct(s['tog_h'], s['tog_n']):>26s} {pct(s['dp_h'], s['dp_n']):>26s}")
    print()
    print(f"{'module (all units)':24s} {'line (blocks+branches)':>26s} {'toggle, all signals':>26s} {'toggle, datapath':>26s}")
    bymod = collections.defaultdict(list)
    for p in allp:
        bymod[p[1]].append(p)
    for m in sorted(bymod):
        s = stats(bymod[m])
        print(f"{m:24s} {pct(s['line_h'], s['line_n']):>26s} {pct(s['tog_h'], s['tog_n']):>26s} {pct(s['dp_h'], s['dp_n']):>26s}")

    print()
    miss = [(d.get('f', '?').rsplit('/', 1)[-1], int(d.get('l', 0)), kind, d.get('o', ''), module)
            for kind, module, d, cnt in allp if kind in ('v_line', 'v_branch') and cnt == 0]
    print(f"line / branch points never hit: {len(miss)}")
    for f, l, kind, o, m in sorted(set(miss)):
        print(f"  {f}:{l}  {kind} {o}  ({m})")

    print()
    tmiss = collections.defaultdict(list)
    for kind, module, d, cnt in allp:
        if kind != 'v_toggle' or cnt:
            continue
        sig = d.get('o', '')
        if CONTROL.search(sig) or excluded(module, sig):
            continue
        base, _, bit = sig.partition('[')
        tmiss[(module, base)].append(bit.rstrip(']') or '0')
    nbits = sum(len(v) for v in tmiss.values())
    print(f"datapath toggle bits never toggled: {nbits} in {len(tmiss)} signals")
    for (m, sig), bits in sorted(tmiss.items()):
        shown = ','.join(sorted(bits, key=lambda b: int(b) if b.isdigit() else 0)[:24])
        more = f" ... ({len(bits)} bits)" if len(bits) > 24 else f" ({len(bits)} bits)"
        print(f"  {m}.{sig}[{shown}]{more}")
    print()
    nex = collections.Counter()
    for kind, module, d, cnt in allp:
        if kind == 'v_toggle' and not CONTROL.search(d.get('o', '')):
            why = excluded(module, d.get('o', ''))
            if why:
                nex[why] += 1
    print(f"excluded from the datapath toggle figure (constant by construction): {sum(nex.values())} bits")
    for m, rx, why in EXCLUDE:
        print(f"  {nex[why]:5d}  {m} {rx}: {why}")

    print()
    fb = collections.defaultdict(list)
    try:
        with open(f"{out}/functional.txt") as f:
            for line in f:
                parts = line.rstrip('\n').split(' ', 3)
                if len(parts) >= 3:
                    fb[parts[0]].append((parts[1], int(parts[2]), parts[3] if len(parts) > 3 else ''))
    except FileNotFoundError:
        pass
    if not fb:
        print("functional bins: none recorded")
        return
    # Several test processes would each write a file: add the counts up.
    print(f"{'functional bins':24s} {'hit / reachable':>18s} {'unreachable':>12s}")
    for u in sorted(fb):
        agg = collections.OrderedDict()
        for name, n, why in fb[u]:
            a = agg.setdefault(name, [0, why])
            a[0] += n
        reach = [(k, v) for k, v in agg.items() if not v[1] and k != 'self_check.mismatch']
        hit = sum(1 for k, v in reach if v[0] > 0)
        unr = sum(1 for v in agg.values() if v[1])
        print(f"{u:24s} {f'{hit} / {len(reach)}':>18s} {unr:>12d}")
    for u in sorted(fb):
        agg = collections.OrderedDict()
        for name, n, why in fb[u]:
            a = agg.setdefault(name, [0, why])
            a[0] += n
        mm = agg.get('self_check.mismatch', [0])[0]
        if mm:
            print(f"  {u}: self_check.mismatch = {mm}  (the collector disagrees with golden: its bins are suspect)")
        for k, (n, why) in agg.items():
            if k == 'self_check.mismatch':
                continue
            if n == 0 and not why:
                print(f"  {u}: never hit  {k}")
            if why:
                print(f"  {u}: {k} = {n}, {why}")


main()
