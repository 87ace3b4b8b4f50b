#!/usr/bin/env python3
"""Tests of scripts/energy.py (CTest, label energy). One test per command:

  test_energy.py tiny LIBERTY WORKDIR
      The model on a three-cell netlist, every number derived here by hand from the liberty's table
      values (copied below from osu018_stdcells.lib, not read through energy.py), and the same
      netlist through OpenSTA's report_power (equal to 1 %).
  test_energy.py sta LIBERTY NETDIR
      A synthesized unit (nvfp4_pts_mul): our price list counted OpenSTA's way against OpenSTA's
      vectorless report_power at two activities (total within 12 %, switching within 3 %, leakage
      within 1 %).
  test_energy.py monotone LIBERTY NETDIR STREAM_TOOL
      On the same unit: all-zero operands cost less than Gaussian ones, energy grows with the uniform
      activity, and with every net's toggle count; the simulated results equal golden's.
  test_energy.py whatif FP4SIM ENERGY_JSON WORKDIR
      `fp4sim whatif` prints energy_pj / pj_per_mac / tops_per_w equal to rtl/energy.json.
  test_energy.py run FP4SIM ENERGY_JSON WORKDIR
      `fp4sim run --quick`'s report.json carries the same per run.
"""
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import energy as E  # noqa: E402
import numpy as np  # noqa: E402


def close(what, got, want, rel):
    ok = abs(got - want) <= rel * abs(want)
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {got:.6g} vs {want:.6g} (tolerance {100 * rel:g} %)")
    return ok


def lerp(x, x0, x1, y0, y1):
    return y0 + (x - x0) / (x1 - x0) * (y1 - y0)


TINY_V = """module tiny (clk_i, a_i, q_o);
  input clk_i;
  input a_i;
  output q_o;
  wire n1, n2;
  DFFPOSX1 r0 (.CLK(clk_i), .D(a_i), .Q(n1));
  INVX1 u1 (.A(n1), .Y(n2));
  DFFPOSX1 r1 (.CLK(clk_i), .D(n2), .Q(q_o));
endmodule
"""


def tiny(liberty, work):
    """a_i -> r0 -> INVX1 -> r1 -> q_o. Driven with a_i = 1,0,1,0,...: every cycle n1 and n2 toggle
    once (alternately rising and falling), q_o likewise, the clock rises and falls."""
    os.makedirs(work, exist_ok=True)
    v, j = os.path.join(work, "tiny.v"), os.path.join(work, "tiny.json")
    open(v, "w").write(TINY_V)
    subprocess.run(["yosys", "-q", "-p", f"read_liberty -lib {liberty}; read_verilog {v}; hierarchy -top tiny; "
                    f"write_json {j}"], check=True)
    lib = E.Liberty(liberty)
    net = E.Netlist(j, "tiny", lib)
    # Simulate 2 * 64 streams of 8 cycles by hand-made inputs through energy.py's simulator.
    sim = E.Sim(net, 2)
    a = net.ports["a_i"][1][0]
    n1 = net.driver.index(next(d for d in net.driver if d and d[0].name == "DFFPOSX1" and d[2]["D"] == a))
    n2 = [i for i, d in enumerate(net.driver) if d and d[0].name == "INVX1"][0]
    q = net.ports["q_o"][1][0]
    rise = np.zeros(net.n, dtype=np.int64)
    fall = np.zeros(net.n, dtype=np.int64)
    prev = None
    cycles = 0
    for t in range(12):
        sim.V[a] = E.ONES if t % 2 == 0 else E.ZERO
        sim.V[net.clk] = E.ZERO
        sim.settle()
        if t >= 4:  # after the pipeline filled: n1, n2 and q_o all alternate
            x = sim.V ^ prev
            rise += E.popcount_rows(x & sim.V)
            fall += E.popcount_rows(x & prev)
            cycles += 128
        prev = sim.V.copy()
        sim.edge()
    ok = True
    for name, i in (("a_i", a), ("n1", n1), ("n2", n2), ("q_o", q)):
        ok &= close(f"toggles per cycle of {name}", (rise[i] + fall[i]) / cycles, 1.0, 1e-12)
        ok &= close(f"rising share of {name}", rise[i] / (rise[i] + fall[i]), 0.5, 1e-12)

    # By hand. Loads: n1 drives INVX1.A (capacitance 0.0124 ... see osu018: INVX1 pin A 0.0125 pF? the
    # liberty's value: 0.0124952); n2 drives DFFPOSX1.D 0.00882947; a_i drives DFFPOSX1.D; q_o nothing;
    # the clock two CLK pins of 0.0279235.
    c_inv_a, c_d, c_clk = None, 0.00882947, 0.0279235
    for line in open(liberty).read().split("cell (INVX1)")[1].split("pin(Y)")[0].splitlines():
        if line.strip().startswith("capacitance"):
            c_inv_a = float(line.split(":")[1].strip(" ;"))
            break
    V2 = 1.8 ** 2
    per_cycle = 0.5  # each net: half a rise and half a fall per cycle
    switching = 0.5 * V2 * (c_inv_a + c_d + c_d) * 1.0  # n1, n2, a_i: one transition per cycle each
    clock_sw = 0.5 * V2 * (2 * c_clk) * 2.0
    # DFFPOSX1 CLK pin (passive, by input slew; index 0.06, 0.24): rise 0.006865 .. 0.006943,
    # fall 0.11034 .. 0.129769; at slew 0.1 ns.
    clk_r = lerp(0.1, 0.06, 0.24, 0.006865, 0.006943)
    clk_f = lerp(0.1, 0.06, 0.24, 0.11034, 0.129769)
    clock_int = 2 * (clk_r + clk_f)
    # DFFPOSX1 D pin at slew 0.1 (index 0.06, 0.18): rise 0.045424 .. 0.045977, fall 0.08841 .. 0.087952.
    d_r = lerp(0.1, 0.06, 0.18, 0.045424, 0.045977)
    d_f = lerp(0.1, 0.06, 0.18, 0.08841, 0.087952)
    # D pins see a_i (slew 0.1, the input) and n2 (the inverter's output slew): the second from the
    # model's own slew, checked separately below against INVX1's transition table.
    s_n2 = net.slews()[n2]
    d_r2 = lerp(s_n2, 0.06, 0.18, 0.045424, 0.045977)
    d_f2 = lerp(s_n2, 0.06, 0.18, 0.08841, 0.087952)
    d_int = per_cycle * (d_r + d_f) + per_cycle * (d_r2 + d_f2)
    # DFFPOSX1 Q (related CLK): its rise/fall_power tables at the CLK slew 0.1 ns and the Q load.
    q_r = lambda load: q_power(liberty, "rise_power", load)  # noqa: E731
    q_f = lambda load: q_power(liberty, "fall_power", load)  # noqa: E731
    q_int = per_cycle * (q_r(c_inv_a) + q_f(c_inv_a)) + per_cycle * (q_r(0.0) + q_f(0.0))  # r1.Q drives nothing
    inv_r, inv_f = inv_energy(liberty, c_d, net.slews()[n1])
    inv_int = per_cycle * (inv_r + inv_f)
    leak = (0.160725 * 2 + inv_leak(liberty)) * 10.0 * 1e-6
    want_total = switching + clock_sw + clock_int + d_int + q_int + inv_int + leak
    got = E.price(net, lib, rise, fall, cycles, 10.0)
    ok &= close("switching pJ/cycle", got["switching_pj"], switching, 1e-9)
    ok &= close("clock pJ/cycle", got["clock_pj"], clock_sw + clock_int, 1e-9)
    ok &= close("internal pJ/cycle", got["internal_pj"], d_int + q_int + inv_int, 1e-9)
    ok &= close("total pJ/cycle", got["total_pj"], want_total, 1e-9)
    # The inverter's output slew from its transition tables, by hand.
    ok &= close("INVX1 output slew", s_n2, inv_slew(liberty, c_d, net.slews()[n1]), 1e-9)
    # The same netlist in OpenSTA at activity 0.5 on every net (ours counted its way).
    sta = E.sta_power(liberty, v, "tiny", 10.0, 1.0)
    ours = E.uniform(net, lib, 1.0, 10.0, "opensta")
    ok &= close("OpenSTA total (tiny)", ours["total_pj"], sta["total_pj"], 0.01)
    return ok


_LIB = {}


def liberty_text(p):
    if p not in _LIB:
        _LIB[p] = open(p).read()
    return _LIB[p]


def q_power(liberty, group, load):
    i1, i2 = index_of(liberty, "DFFPOSX1", "Q", group)
    return bilinear(i1, i2, full_table(liberty, "DFFPOSX1", "Q", group), load, 0.1)


def index_of(liberty, cell, pin, group):
    body = liberty_text(liberty).split(f"cell ({cell})")[1].split("cell (")[0].split(f"pin({pin})")[1]
    body = body.split(f"{group}(", 1)[1]
    i1 = [float(x) for x in body.split("index_1", 1)[1].split('"')[1].split(",")]
    i2 = [float(x) for x in body.split("index_2", 1)[1].split('"')[1].split(",")]
    return i1, i2


def bilinear(i1, i2, rows_all, load, slew):
    a = max(0, min(len(i1) - 2, sum(1 for x in i1 if x <= load) - 1))
    b = max(0, min(len(i2) - 2, sum(1 for x in i2 if x <= slew) - 1))
    r0 = lerp(slew, i2[b], i2[b + 1], rows_all[a][b], rows_all[a][b + 1])
    r1 = lerp(slew, i2[b], i2[b + 1], rows_all[a + 1][b], rows_all[a + 1][b + 1])
    return lerp(load, i1[a], i1[a + 1], r0, r1)


def full_table(liberty, cell, pin, group, nth=0):
    body = liberty_text(liberty).split(f"cell ({cell})")[1].split("cell (")[0].split(f"pin({pin})")[1]
    body = body.split(f"{group}(")[nth + 1]
    vals = body.split("values", 1)[1].split(");", 1)[0]
    return [[float(x) for x in r.split(",")] for r in vals.replace("\\", "").replace("(", "").split('"')[1::2]]


def inv_energy(liberty, load, slew):
    i1, i2 = index_of(liberty, "INVX1", "Y", "rise_power")
    r = bilinear(i1, i2, full_table(liberty, "INVX1", "Y", "rise_power"), load, slew)
    f = bilinear(i1, i2, full_table(liberty, "INVX1", "Y", "fall_power"), load, slew)
    return r, f


def inv_slew(liberty, load, slew):
    i1, i2 = index_of(liberty, "INVX1", "Y", "rise_transition")
    r = bilinear(i1, i2, full_table(liberty, "INVX1", "Y", "rise_transition"), load, slew)
    f = bilinear(i1, i2, full_table(liberty, "INVX1", "Y", "fall_transition"), load, slew)
    return 0.5 * (r + f)


def inv_leak(liberty):
    body = liberty_text(liberty).split("cell (INVX1)")[1]
    return float(body.split("cell_leakage_power", 1)[1].split(":")[1].split(";")[0])


def sta_check(liberty, netdir):
    lib = E.Liberty(liberty)
    top = "nvfp4_pts_mul"
    net = E.Netlist(os.path.join(netdir, "netlist.json"), top, lib)
    ok = True
    for act in (0.1, 0.3):
        sta = E.sta_power(liberty, os.path.join(netdir, "netlist.v"), top, 10.0, act)
        ours = E.uniform(net, lib, act, 10.0, "opensta")
        ok &= close(f"total at activity {act}", ours["total_pj"], sta["total_pj"], 0.12)
        ok &= close(f"switching at activity {act}", ours["switching_pj"], sta["switching_pj"], 0.03)
        ok &= close(f"leakage at activity {act}", ours["leakage_pj"], sta["leakage_pj"], 0.01)
    return ok


def monotone(liberty, netdir, tool):
    lib = E.Liberty(liberty)
    top = "nvfp4_pts_mul"
    net = E.Netlist(os.path.join(netdir, "netlist.json"), top, lib)
    ok = True
    res = {}
    for d in ("zeros", "gaussian"):
        path = os.path.join(netdir, f"test_{d}.stream")
        subprocess.run([tool, top, d, "1024", "7", path], check=True)
        rise, fall, cycles, mism, _, _ = E.simulate(net, top, E.read_stream(path))
        ok &= close(f"{d}: results differing from golden", mism, 0, 0)
        res[d] = (rise, fall, cycles, E.price(net, lib, rise, fall, cycles, 10.0))
    ez, eg = res["zeros"][3]["total_pj"], res["gaussian"][3]["total_pj"]
    print(f"{'ok  ' if ez < eg else 'FAIL'} zeros {ez:.2f} pJ < gaussian {eg:.2f} pJ")
    ok &= ez < eg
    prev = None
    for act in (0.0, 0.05, 0.1, 0.2, 0.4):
        e = E.uniform(net, lib, act, 10.0)["total_pj"]
        good = prev is None or e > prev
        print(f"{'ok  ' if good else 'FAIL'} uniform activity {act}: {e:.2f} pJ")
        ok &= good
        prev = e
    rise, fall, cycles, base = res["gaussian"]
    more = E.price(net, lib, rise * 2, fall * 2, cycles, 10.0)
    good = more["total_pj"] > base["total_pj"] and more["clock_pj"] == base["clock_pj"]
    print(f"{'ok  ' if good else 'FAIL'} twice the toggles: {more['total_pj']:.2f} > {base['total_pj']:.2f} pJ")
    ok &= good
    return ok


def whatif(fp4sim, energy_json, work):
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "whatif_energy.csv")
    subprocess.run([fp4sim, "whatif", "--m", "128", "--n", "128", "--k", "256", "--force", "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    ej = json.load(open(energy_json))
    units = {("tensor-core", "nvfp4"): "bs_dot_k64_ue4m3_b16", ("tensor-core", "mxfp4"): "bs_dot_k64_ue8m0_b32",
             ("cube", "hif4"): "hif4_pe", ("cube", "nvfp4"): "nvfp4_pe64", ("cube", "mxfp4"): "bs_dot_k64_ue8m0_b32"}
    ok, seen = True, 0
    for row in csv.DictReader(open(out)):
        for c in ("energy_pj", "pj_per_mac", "tops_per_w"):
            if c not in row:
                print(f"FAIL column {c} missing")
                return False
        u = units.get((row["engine"], row["format"]))
        if u is None or u not in ej:
            good = row["pj_per_mac"] == "" and row["energy_pj"] == ""
            print(f"{'ok  ' if good else 'FAIL'} {row['engine']} {row['format']}: no unit, empty energy cells")
            ok &= good
            continue
        seen += 1
        macs = int(row["m"]) * int(row["n"]) * int(row["k"])
        ok &= close(f"{row['engine']} {row['format']} pj_per_mac", float(row["pj_per_mac"]), ej[u]["pj_per_mac"], 1e-4)
        ok &= close(f"{row['engine']} {row['format']} tops_per_w", float(row["tops_per_w"]), ej[u]["tops_per_w"], 1e-4)
        ok &= close(f"{row['engine']} {row['format']} energy_pj", float(row["energy_pj"]),
                    macs * ej[u]["pj_per_mac"], 1e-4)
    return ok and seen > 0


def run_report(fp4sim, energy_json, work):
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "run_quick")
    subprocess.run([fp4sim, "run", "--quick", "--force", "--out", out], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    ej = json.load(open(energy_json))
    rep = json.load(open(os.path.join(out, "report.json")))
    units = {("tensor-core", "nvfp4"): "bs_dot_k64_ue4m3_b16", ("tensor-core", "mxfp4"): "bs_dot_k64_ue8m0_b32",
             ("cube", "hif4"): "hif4_pe", ("cube", "nvfp4"): "nvfp4_pe64", ("cube", "mxfp4"): "bs_dot_k64_ue8m0_b32"}
    ok, seen = True, 0
    for r in rep["runs"]:
        u = units.get((r["engine"], r["format"]))
        en = r.get("energy", "missing")
        if u is None or u not in ej:
            print(f"{'ok  ' if en is None else 'FAIL'} {r['engine']} {r['format']}: no unit, energy null")
            ok &= en is None
            continue
        seen += 1
        tag = f"{r['engine']} {r['format']}"
        ok &= en["unit"] == u and en["distribution"] == ej["_default_dist"]
        ok &= close(f"{tag} pj_per_mac", en["pj_per_mac"], ej[u]["pj_per_mac"], 1e-9)
        ok &= close(f"{tag} tops_per_w", en["tops_per_w"], ej[u]["tops_per_w"], 1e-9)
        ok &= close(f"{tag} energy_pj", en["energy_pj"], r["stats"]["macs"] * ej[u]["pj_per_mac"], 1e-9)
    return ok and seen > 0


def main(argv):
    cmd = argv[0]
    if cmd == "tiny":
        return tiny(argv[1], argv[2])
    if cmd == "sta":
        return sta_check(argv[1], argv[2])
    if cmd == "monotone":
        return monotone(argv[1], argv[2], argv[3])
    if cmd == "whatif":
        return whatif(argv[1], argv[2], argv[3])
    if cmd == "run":
        return run_report(argv[1], argv[2], argv[3])
    raise SystemExit(f"unknown test {cmd}")


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:]) else 1)
