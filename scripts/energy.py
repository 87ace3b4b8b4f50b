#!/usr/bin/env python3
"""Energy per operation of a mapped netlist, from toggles counted in its own gate-level simulation.

Usage:
  energy.py measure --liberty L --netlist N.json --top T --period NS --k K --out R.json STREAM...
      Simulates the flattened netlist (yosys JSON of scripts/energy.sh) cycle by cycle on the
      instructions of each STREAM file (tests/energy/energy_stream), counts every net's rising and
      falling transitions, checks every result against golden's (in the stream), and prices the
      toggles with the liberty (below). Writes one entry per stream to R.json.
  energy.py uniform --liberty L --netlist N.json --top T --period NS --activity A
      The same price list with every non-clock net toggling A times per cycle (half rising): the
      number OpenSTA's vectorless report_power gives at `set_power_activity -global -activity A`.
  energy.py sta --liberty L --netlist N.v --top T --period NS --activity A
      Runs OpenSTA's report_power on the netlist at that activity; prints its total in pJ per cycle.
  energy.py report OUTDIR JSON UNIT...   rtl/energy.json from the per-unit results in OUTDIR
  energy.py check JSON                   exit 0 iff JSON's "_provenance" inputs still hash the same

The energy model (per clock cycle; one instruction enters per cycle in a full pipeline):
  - internal energy of every cell output transition: the pin's internal_power rise_power (output
    rising) or fall_power table at the net's load and the cell's input slew, averaged over the
    pin's related_pin arcs (a zero-delay simulation does not say which input caused a transition);
  - internal energy of input pins that carry their own internal_power (flip-flop CLK and D): per
    transition of the net at that pin, at the net's slew;
  - switching energy 1/2 C V^2 per transition of each net, C = the input-pin capacitances of its
    fanout (the liberty has no wire-load model, so no wire capacitance; output ports carry no load);
  - the clock: clk_i rises and falls once per cycle (ideal clock net, no clock tree: yosys builds
    none), so its switching C V^2 and the flops' CLK-pin internal energy every cycle;
  - leakage: sum of cell_leakage_power over the cells times the clock period.
  Slews: primary inputs INPUT_SLEW_NS; every cell output's slew from its rise/fall_transition
  tables at its load and its slowest input's slew (the mean of rise and fall), propagated in
  topological order. Transitions are zero-delay (one per net per cycle at most): glitches are not
  counted, so the dynamic part is a lower bound of what a timing simulation would count.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from liberty_cells import Group, LibertyError, func_to_verilog, tokenize  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT_SLEW_NS = 0.1  # primary inputs (and the clock); OpenSTA is given the same (set_input_transition)
ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
ZERO = np.uint64(0)
POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


class EnergyError(Exception):
    pass


# ---------------------------------------------------------------- liberty: tables and cells

def parse(text):
    """liberty_cells' reader, keeping complex attributes too (index_1 ("..."); values ("...", ...);),
    which the cell models do not need and its parse() skips: the tables live in them."""
    toks = tokenize(text)
    pos = 0

    def unq(t):
        return t[1:-1] if t.startswith('"') else t

    def body(g):
        nonlocal pos
        while pos < len(toks):
            t = toks[pos]
            pos += 1
            if t == "}":
                return g
            if pos < len(toks) and toks[pos] == ":":
                pos += 1
                val = []
                while toks[pos] not in (";", "}"):
                    val.append(unq(toks[pos]))
                    pos += 1
                if toks[pos] == ";":
                    pos += 1
                g.attrs[t] = " ".join(val)
            elif pos < len(toks) and toks[pos] == "(":
                pos += 1
                args = []
                while toks[pos] != ")":
                    if toks[pos] != ",":
                        args.append(unq(toks[pos]))
                    pos += 1
                pos += 1
                if pos < len(toks) and toks[pos] == "{":
                    pos += 1
                    g.groups.append(body(Group(t, args)))
                else:
                    g.attrs[t] = ", ".join(args)
                    if pos < len(toks) and toks[pos] == ";":
                        pos += 1
        return g

    libs = body(Group("root", [])).sub("library")
    if not libs:
        raise LibertyError("no library group")
    return libs[0]


class Table:
    """A liberty lookup table with its variables named; bilinear inter-/extrapolation as OpenSTA."""

    def __init__(self, group, templates):
        tmpl = templates.get(group.args[0] if group.args else "", {})
        self.vars = [tmpl.get("variable_1"), tmpl.get("variable_2")]
        idx = []
        for k in ("index_1", "index_2"):
            s = group.attrs.get(k, tmpl.get(k))
            if s is not None:
                idx.append(np.array([float(v) for v in s.replace(",", " ").split()]))
        self.idx = idx
        vals = [float(v) for v in group.attrs["values"].replace("\\", " ").replace(",", " ").split()]
        self.vals = np.array(vals).reshape([len(i) for i in idx]) if idx else np.array(vals)
        self.vars = self.vars[:len(idx)]

    @staticmethod
    def _axis(xs, x):
        if len(xs) == 1:
            return 0, 0, 0.0
        i = int(np.clip(np.searchsorted(xs, x) - 1, 0, len(xs) - 2))
        return i, i + 1, (x - xs[i]) / (xs[i + 1] - xs[i])

    def __call__(self, **at):
        """Value at the named variables (total_output_net_capacitance, input_transition_time, ...)."""
        xs = []
        for v in self.vars:
            key = "slew" if v in ("input_transition_time", "input_net_transition") else "load"
            xs.append(at[key])
        if not xs:
            return float(self.vals.reshape(-1)[0])
        if len(xs) == 1:
            i, j, f = self._axis(self.idx[0], xs[0])
            return float(self.vals[i] + f * (self.vals[j] - self.vals[i]))
        i0, i1, f = self._axis(self.idx[0], xs[0])
        j0, j1, g = self._axis(self.idx[1], xs[1])
        v = self.vals
        return float((1 - f) * ((1 - g) * v[i0, j0] + g * v[i0, j1]) + f * ((1 - g) * v[i1, j0] + g * v[i1, j1]))


def py_expr(verilog):
    """func_to_verilog's output as a Python expression over uint64 words (bitwise, 64 lanes)."""
    return verilog.replace("1'b0", "ZERO").replace("1'b1", "ONES")


class Cell:
    def __init__(self, g, templates):
        self.name = g.args[0]
        self.leakage = float(g.attrs.get("cell_leakage_power", 0.0))  # leakage_power_unit (nW here)
        pins = g.sub("pin")
        self.inputs = [p.args[0] for p in pins if p.attrs.get("direction") == "input"]
        self.outputs = [p.args[0] for p in pins if p.attrs.get("direction") == "output"]
        self.cap = {p.args[0]: float(p.attrs.get("capacitance", 0.0)) for p in pins}
        ffs = g.sub("ff")
        if g.sub("latch") or len(ffs) > 1 or any("three_state" in p.attrs for p in pins):
            self.unsupported = True
        else:
            self.unsupported = False
        names = set(self.inputs)
        self.ff = None
        if ffs:
            a = ffs[0].attrs
            names.update(ffs[0].args[:2])
            self.ff = {"iq": ffs[0].args[0], "iqn": ffs[0].args[1],
                       "next": py_expr(func_to_verilog(a["next_state"], names)),
                       "clocked_on": a["clocked_on"].replace(" ", ""),
                       "clear": py_expr(func_to_verilog(a["clear"], names)) if "clear" in a else None,
                       "preset": py_expr(func_to_verilog(a["preset"], names)) if "preset" in a else None,
                       "both": a.get("clear_preset_var1", "L")}
        self.func = {}
        for p in pins:
            if p.args[0] in self.outputs and "function" in p.attrs and not self.unsupported:
                self.func[p.args[0]] = py_expr(func_to_verilog(p.attrs["function"], names))
        # Output internal energy: per output pin, (related pin, rise table, fall table) arcs.
        self.out_power, self.in_power, self.trans = {}, {}, {}
        for p in pins:
            pn = p.args[0]
            for ip in p.sub("internal_power"):
                rp = [Table(t, templates) for t in ip.sub("rise_power")]
                fp = [Table(t, templates) for t in ip.sub("fall_power")]
                if not rp or not fp:
                    continue
                rel = ip.attrs.get("related_pin")
                if pn in self.outputs and rel is not None:
                    self.out_power.setdefault(pn, []).append((rel, rp[0], fp[0]))
                elif pn in self.inputs and rel is None:
                    self.in_power[pn] = (rp[0], fp[0])
            for tm in p.sub("timing"):
                rt, ft = tm.sub("rise_transition"), tm.sub("fall_transition")
                if pn in self.outputs and rt and ft:
                    self.trans.setdefault(pn, []).append((Table(rt[0], templates), Table(ft[0], templates)))

    def out_energy(self, pin, load, slew):
        """(rise, fall) internal energy of one output transition, mean over the related-pin arcs."""
        arcs = self.out_power.get(pin, [])
        if not arcs:
            return 0.0, 0.0
        r = sum(t(load=load, slew=slew) for _, t, _ in arcs) / len(arcs)
        f = sum(t(load=load, slew=slew) for _, _, t in arcs) / len(arcs)
        return r, f

    def out_slew(self, pin, load, slew):
        arcs = self.trans.get(pin, [])
        if not arcs:
            return slew
        return max(0.5 * (r(load=load, slew=slew) + f(load=load, slew=slew)) for r, f in arcs)


class Liberty:
    def __init__(self, path):
        try:
            lib = parse(open(path).read())
        except (OSError, LibertyError) as e:
            raise EnergyError(f"{path}: {e}")
        templates = {}
        for kind in ("power_lut_template", "lu_table_template"):
            for t in lib.sub(kind):
                templates[t.args[0]] = t.attrs
        self.voltage = float(lib.attrs.get("nom_voltage", "0") or 0)
        ops = lib.sub("operating_conditions")
        if ops and "voltage" in ops[0].attrs:
            self.voltage = float(ops[0].attrs["voltage"])
        # The units the arithmetic below assumes (energy tables then come out in pF V^2 = pJ).
        if lib.attrs.get("time_unit", "1ns").replace('"', "") != "1ns" or \
                lib.attrs.get("leakage_power_unit", "1nW").replace('"', "") != "1nW":
            raise EnergyError(f"{path}: only time_unit 1ns and leakage_power_unit 1nW are handled")
        if lib.attrs.get("capacitive_load_unit", "1, pf").replace(" ", "").lower() not in ("1,pf",):
            raise EnergyError(f"{path}: only capacitive_load_unit (1, pf) is handled")
        self.cells = {c.args[0]: Cell(c, templates) for c in lib.sub("cell")}


# ---------------------------------------------------------------- netlist and simulation

class Netlist:
    """A flattened netlist (yosys write_json) ready for bit-parallel simulation: net i's value in
    64*W independent streams is V[i] (W uint64 words); nets 0 and 1 are the constants."""

    def __init__(self, path, top, lib):
        try:
            mod = json.load(open(path))["modules"][top]
        except (OSError, KeyError, ValueError) as e:
            raise EnergyError(f"{path}: no module {top} ({e})")
        idx = {"0": 0, "1": 1, "x": 0, "z": 0}
        self.n = 2

        def net(b):
            if b not in idx:
                idx[b] = self.n
                self.n += 1
            return idx[b]

        self.ports = {}
        for pname, p in mod["ports"].items():
            self.ports[pname] = (p["direction"], [net(b) for b in p["bits"]])
        self.cells = []  # (name, Cell, {pin: net})
        for cname, c in mod["cells"].items():
            cell = lib.cells.get(c["type"])
            if cell is None:
                raise EnergyError(f"{path}: cell {cname} of type {c['type']} is not in the liberty")
            if cell.unsupported:
                raise EnergyError(f"{path}: cell type {c['type']} (latch / tri-state) is not simulated")
            conn = {pin: net(bits[0]) for pin, bits in c["connections"].items() if bits}
            self.cells.append((cname, cell, conn))
        clk = self.ports.get("clk_i")
        if clk is None:
            raise EnergyError(f"{path}: no clk_i port")
        self.clk = clk[1][0]
        self.names = {}
        for nname, nn in mod.get("netnames", {}).items():
            for i, b in enumerate(nn["bits"]):
                if b in idx and idx[b] not in self.names:
                    self.names[idx[b]] = f"{nname}[{i}]" if len(nn["bits"]) > 1 else nname
        self._build()

    def _build(self):
        n = self.n
        load = np.zeros(n)
        fanout_pins = [[] for _ in range(n)]  # (cell, pin) readers
        for _, cell, conn in self.cells:
            for pin in cell.inputs:
                if pin in conn:
                    load[conn[pin]] += cell.cap[pin]
                    fanout_pins[conn[pin]].append((cell, pin))
        self.load = load
        self.fanout_pins = fanout_pins
        driver = [None] * n
        self.flops, comb = [], []
        for name, cell, conn in self.cells:
            for pin in cell.outputs:
                if pin in conn:
                    o = conn[pin]
                    if driver[o] is not None or o < 2:
                        raise EnergyError(f"net {self.names.get(o, o)} has more than one driver")
                    driver[o] = (cell, pin, conn)
            if cell.ff:
                if cell.ff["clocked_on"] != "CLK" or conn.get("CLK") != self.clk:
                    raise EnergyError(f"flop {name} ({cell.name}) is not clocked by clk_i on its rising edge")
                self.flops.append((name, cell, conn))
            else:
                comb.append((name, cell, conn))
        self.driver = driver
        # Levels: sources are the ports, constants and flop outputs.
        level = np.full(n, -1)
        level[0] = level[1] = 0
        for d, nets in self.ports.values():
            if d == "input":
                level[nets] = 0
        for _, cell, conn in self.flops:
            for pin in cell.outputs:
                if pin in conn:
                    level[conn[pin]] = 0
        pending = {i: [conn[p] for p in cell.inputs if p in conn] for i, (_, cell, conn) in enumerate(comb)}
        readers = [[] for _ in range(n)]
        for i, ins in pending.items():
            for x in ins:
                readers[x].append(i)
        missing = {i: sum(1 for x in ins if level[x] < 0) for i, ins in pending.items()}
        ready = [i for i, m in missing.items() if m == 0]
        order = []
        while ready:
            i = ready.pop()
            _, cell, conn = comb[i]
            lv = 1 + max([level[x] for x in pending[i]] or [0])
            order.append((lv, i))
            for pin in cell.outputs:
                if pin in conn:
                    o = conn[pin]
                    level[o] = lv
                    for r in readers[o]:
                        missing[r] -= 1
                        if missing[r] == 0:
                            ready.append(r)
        if len(order) != len(comb):
            raise EnergyError("combinational loop in the netlist")
        for i in range(2, n):
            if level[i] < 0:
                level[i] = 0  # undriven: held at 0
        # Groups of identical cell outputs per level, evaluated as one numpy expression each.
        groups = {}
        for lv, i in order:
            _, cell, conn = comb[i]
            for pin in cell.outputs:
                if pin in conn:
                    groups.setdefault((lv, cell.name, pin), []).append(conn)
        self.groups = []
        for (lv, cname, pin), conns in sorted(groups.items()):
            cell = self.cells_by_type(cname)
            ins = {p: np.array([c.get(p, 0) for c in conns]) for p in cell.inputs}
            out = np.array([c[pin] for c in conns])
            fn = eval(compile(f"lambda {', '.join(cell.inputs) or '_'}: {cell.func[pin]}", cname, "eval"),
                      {"ZERO": ZERO, "ONES": ONES})
            self.groups.append((fn, cell.inputs, ins, out))
        self.comb_order = [comb[i] for _, i in sorted(order)]
        # Flops grouped by type.
        fg = {}
        for _, cell, conn in self.flops:
            fg.setdefault(cell.name, []).append(conn)
        self.flop_groups = []
        for cname, conns in fg.items():
            cell = self.cells_by_type(cname)
            ins = {p: np.array([c.get(p, 0) for c in conns]) for p in cell.inputs}
            outs = {p: np.array([c.get(p, -1) for c in conns]) for p in cell.outputs}
            env = {"ZERO": ZERO, "ONES": ONES}
            args = ", ".join(cell.inputs + [cell.ff["iq"], cell.ff["iqn"]])
            mk = lambda e: eval(f"lambda {args}: {e}", env) if e else None  # noqa: E731
            self.flop_groups.append({"cell": cell, "ins": ins, "outs": outs, "next": mk(cell.ff["next"]),
                                     "clear": mk(cell.ff["clear"]), "preset": mk(cell.ff["preset"]),
                                     "func": {p: mk(cell.func[p]) for p in cell.outputs}})

    def cells_by_type(self, name):
        if not hasattr(self, "_types"):
            self._types = {cell.name: cell for _, cell, _ in self.cells}
        return self._types[name]

    def slews(self):
        """Per net slew (ns), propagated from INPUT_SLEW_NS through the cells in level order."""
        s = np.full(self.n, INPUT_SLEW_NS)
        for _, cell, conn in self.flops:
            for pin in cell.outputs:
                if pin in conn:
                    s[conn[pin]] = cell.out_slew(pin, self.load[conn[pin]], INPUT_SLEW_NS)
        for _, cell, conn in self.comb_order:
            sin = max([s[conn[p]] for p in cell.inputs if p in conn] or [INPUT_SLEW_NS])
            for pin in cell.outputs:
                if pin in conn:
                    s[conn[pin]] = cell.out_slew(pin, self.load[conn[pin]], sin)
        return s


class Sim:
    def __init__(self, net, words):
        self.net, self.W = net, words
        self.V = np.zeros((net.n, words), dtype=np.uint64)
        self.V[1] = ONES
        self.state = [np.zeros((len(g["outs"][next(iter(g["outs"]))]), words), dtype=np.uint64)
                      for g in net.flop_groups]

    def _flop_args(self, g, st):
        return [self.V[g["ins"][p]] for p in g["cell"].inputs] + [st, ~st]

    def settle(self):
        V = self.V
        for g, st in zip(self.net.flop_groups, self.state):
            args = self._flop_args(g, st)
            for p, f in g["func"].items():
                o = g["outs"][p]
                ok = o >= 0
                V[o[ok]] = f(*args)[ok]
        for fn, pins, ins, out in self.net.groups:
            V[out] = fn(*[V[ins[p]] for p in pins])
        # Asynchronous clear / preset act on the state at once; then the logic settles again.
        changed = False
        for g, st in zip(self.net.flop_groups, self.state):
            args = self._flop_args(g, st)
            clr = g["clear"](*args) if g["clear"] else None
            pre = g["preset"](*args) if g["preset"] else None
            new = st
            if pre is not None:
                new = new | np.broadcast_to(pre, st.shape)
            if clr is not None:
                new = new & ~np.broadcast_to(clr, st.shape)
            if not np.array_equal(new, st):
                st[...] = new
                changed = True
        if changed:
            self.settle()

    def edge(self):
        for i, g in enumerate(self.net.flop_groups):
            st = self.state[i]
            args = self._flop_args(g, st)
            nxt = np.broadcast_to(g["next"](*args), st.shape).copy()
            if g["preset"]:
                nxt |= np.broadcast_to(g["preset"](*args), st.shape)
            if g["clear"]:
                nxt &= ~np.broadcast_to(g["clear"](*args), st.shape)
            self.state[i] = nxt


def popcount_rows(x):
    return POP8[x.view(np.uint8)].sum(axis=1)


# ---------------------------------------------------------------- streams and the measurement

def read_stream(path):
    with open(path, "rb") as f:
        head = json.loads(f.readline())
        n, k, s = head["n"], head["k"], head["s"]
        a = np.frombuffer(f.read(n * k), dtype=np.uint8).reshape(n, k)
        b = np.frombuffer(f.read(n * k), dtype=np.uint8).reshape(n, k)
        sa = np.frombuffer(f.read(4 * n * s), dtype="<u4").reshape(n, s)
        sb = np.frombuffer(f.read(4 * n * s), dtype="<u4").reshape(n, s)
        c = np.frombuffer(f.read(4 * n), dtype="<u4")
        d = np.frombuffer(f.read(4 * n), dtype="<u4")
        if len(d) != n:
            raise EnergyError(f"{path}: truncated stream")
    return head, a, b, sa, sb, c, d


def port_bits(values, width):
    """[n] python ints -> bool [n, width] (bit j of value i)."""
    out = np.zeros((len(values), width), dtype=bool)
    for i, v in enumerate(values):
        v = int(v)
        for j in range(width):
            out[i, j] = (v >> j) & 1
    return out


def pack_field(codes, bits):
    """[n, m] codes of `bits` bits each -> bool [n, m*bits], element j in bits j*bits .. j*bits+bits-1."""
    n, m = codes.shape
    c = codes.astype(np.uint64)
    out = np.zeros((n, m * bits), dtype=bool)
    for j in range(bits):
        out[:, j::bits] = ((c >> np.uint64(j)) & np.uint64(1)).astype(bool)
    return out


def instruction_inputs(net, top, stream):
    """{port: bool [n, width]} of the stream's instructions in the unit's port layout."""
    head, a, b, sa, sb, c, _ = stream
    n = head["n"]
    ports = {}

    def width(p):
        return len(net.ports[p][1])

    def words(x, w):  # [n, s] uint32 -> [n, w] bits, word j in bits 32j..
        bits = pack_field(x.astype(np.uint64), 32) if x.shape[1] else np.zeros((n, 0), dtype=bool)
        out = np.zeros((n, w), dtype=bool)
        out[:, :min(w, bits.shape[1])] = bits[:, :w]
        return out

    if top == "nvfp4_pts_mul":
        ports["acc_i"] = pack_field(c.reshape(n, 1).astype(np.uint64), 32)
        ports["alpha_i"] = words(sa, 32)
        return ports
    ebits = width("a_i") // head["k"]
    ports["a_i"] = pack_field(a, ebits)
    ports["b_i"] = pack_field(b, ebits)
    if width("sfa_i") == 32 * sa.shape[1]:  # HiF4: whole 32-bit scale words
        ports["sfa_i"], ports["sfb_i"] = words(sa, 32), words(sb, 32)
    else:  # 8-bit scale codes, code j in bits 8j..8j+7
        ports["sfa_i"] = pack_field(sa & 0xFF, 8)
        ports["sfb_i"] = pack_field(sb & 0xFF, 8)
    ports["c_i"] = pack_field(c.reshape(n, 1).astype(np.uint64), 32)
    if "fmt_a_i" in net.ports:  # bs_dot_k32: E2M1 x E2M1 (fp4sim_pkg::FmtE2m1)
        ports["fmt_a_i"] = port_bits([4] * n, 3)
        ports["fmt_b_i"] = port_bits([4] * n, 3)
    return ports


def simulate(net, top, stream, per_stream=16, warm=None):
    """Toggle counts (rise[n], fall[n]) over the steady-state window, cycles in the window (summed
    over the parallel streams), and the number of results that differ from golden's."""
    head = stream[0]
    n = head["n"]
    if n % (64 * per_stream):
        raise EnergyError(f"stream of {n} instructions: need a multiple of {64 * per_stream}")
    S = n // per_stream  # parallel streams, instruction s*per_stream + t in stream s at cycle t
    W = S // 64
    ins = instruction_inputs(net, top, stream)
    for p, (d, nets) in net.ports.items():
        if d == "input" and p not in ins and p not in ("clk_i", "rst_ni", "in_valid_i", "out_ready_i"):
            raise EnergyError(f"input port {p} of {top} is not driven by the stream")

    def pack_lanes(bits_sn):  # bool [S, width] -> uint64 [width, W]
        x = np.packbits(bits_sn.T.reshape(bits_sn.shape[1], W, 64), axis=2, bitorder="little")
        return x.view(np.uint64).reshape(bits_sn.shape[1], W)

    sim = Sim(net, W)
    V = sim.V
    ctl = {p: net.ports[p][1] for p in ("rst_ni", "in_valid_i", "out_ready_i") if p in net.ports}
    lat = None
    d_ref = stream[6].reshape(S, per_stream)
    got = [[] for _ in range(S)]
    drain = 8
    total = per_stream + 1 + drain
    warm = warm if warm is not None else 6
    rise = np.zeros(net.n, dtype=np.int64)
    fall = np.zeros(net.n, dtype=np.int64)
    window = 0
    prev = None
    dnets = net.ports["d_o"][1]
    vnet = net.ports["out_valid_o"][1][0]
    rnet = net.ports["in_ready_o"][1][0]
    stalls = 0
    for t in range(total):
        reset = t == 0
        feeding = 1 <= t <= per_stream
        for p, nets in ctl.items():
            val = {"rst_ni": not reset, "in_valid_i": feeding, "out_ready_i": not reset}[p]
            V[nets] = ONES if val else ZERO
        for p, bits in ins.items():
            nets = net.ports[p][1]
            if feeding:
                rows = bits.reshape(S, per_stream, -1)[:, t - 1, :]
                V[nets] = pack_lanes(rows)
            # after the last instruction the operands stay as they were (no new data driven)
        V[net.clk] = ZERO
        sim.settle()
        if feeding and not np.all(V[rnet] == ONES):
            stalls += 1
        # The window: cycles whose every pipeline stage holds a fresh instruction.
        if warm < t <= per_stream and prev is not None:
            x = V ^ prev
            rise += popcount_rows(x & V)
            fall += popcount_rows(x & prev)
            window += 1
        prev = V.copy()
        valid = np.unpackbits(V[vnet].view(np.uint8), bitorder="little").astype(bool)
        if valid.any():
            dbits = np.stack([np.unpackbits(V[b].view(np.uint8), bitorder="little") for b in dnets], axis=1)
            dval = (dbits.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1)
            for s in np.nonzero(valid)[0]:
                got[s].append(int(dval[s]))
            if lat is None:
                lat = t - 1
        sim.edge()
    mism = 0
    for s in range(S):
        g = got[s][:per_stream]
        mism += sum(1 for i, v in enumerate(g) if v != int(d_ref[s, i])) + (per_stream - len(g))
    if lat is None or warm < lat:
        raise EnergyError(f"{top}: latency {lat} cycles exceeds the warm-up of {warm}")
    return rise, fall, window * S, mism, stalls, lat


def price(net, lib, rise, fall, cycles, period_ns, convention="physical"):
    """Energy in pJ per cycle by component, from total rising / falling transitions per net over
    `cycles` cycles.

    convention "opensta" prices the same transitions the way Debian's OpenSTA 2.0.17 report_power
    does, for the cross-check: every transition of a pin costs the sum of the rise and fall tables
    (times the arc's duty: 1 for output and clock pins, 0.5 for other input pins), and only nets a
    cell drives switch (not those of input ports or the clock port). "physical" (the model): a
    rising transition costs the rise table, a falling one the fall table, every net switches."""
    sta = convention == "opensta"
    V2 = lib.voltage ** 2
    slew = net.slews()
    r = rise.astype(float) / cycles
    f = fall.astype(float) / cycles
    r[net.clk] = f[net.clk] = 1.0  # the clock rises and falls once per cycle
    r[:2] = f[:2] = 0.0
    sw = 0.5 * V2 * net.load * (r + f)  # pF V^2 = pJ
    if sta:
        sw = sw * np.array([d is not None for d in net.driver])
    internal = np.zeros(net.n)
    for _, cell, conn in net.cells:
        for pin in cell.outputs:
            if pin in conn:
                o = conn[pin]
                src = INPUT_SLEW_NS if cell.ff else max(
                    [slew[conn[p]] for p in cell.inputs if p in conn] or [INPUT_SLEW_NS])
                er, ef = cell.out_energy(pin, net.load[o], src)
                internal[o] += (r[o] + f[o]) * (er + ef) if sta else r[o] * er + f[o] * ef
        for pin, (rt, ft) in cell.in_power.items():
            if pin in conn:
                x = conn[pin]
                er, ef = rt(slew=slew[x]), ft(slew=slew[x])
                if sta:
                    internal[x] += (r[x] + f[x]) * (er + ef) * (1.0 if x == net.clk else 0.5)
                else:
                    internal[x] += r[x] * er + f[x] * ef
    leak = sum(cell.leakage for _, cell, _ in net.cells) * period_ns * 1e-6  # nW * ns = 1e-6 pJ
    clk = net.clk
    return {"internal_pj": float(internal.sum() - internal[clk]), "switching_pj": float(sw.sum() - sw[clk]),
            "clock_pj": float(internal[clk] + sw[clk]), "leakage_pj": float(leak),
            "total_pj": float(internal.sum() + sw.sum() + leak)}


def uniform(net, lib, activity, period_ns, convention="physical"):
    """Every non-clock net toggling `activity` times per cycle, half of them rising."""
    half = np.full(net.n, activity / 2.0 * 1e6)
    return price(net, lib, half, half, 1e6, period_ns, convention)


# ---------------------------------------------------------------- OpenSTA

def sta_power(liberty, netlist_v, top, period_ns, activity):
    """OpenSTA's report_power total (pJ per cycle) at a global activity, and its three groups."""
    liberty, netlist_v = os.path.abspath(liberty), os.path.abspath(netlist_v)  # sta runs elsewhere
    tcl = (f"read_liberty {liberty}\nread_verilog {netlist_v}\nlink_design {top}\n"
           f"create_clock -name clk -period {period_ns} [get_ports clk_i]\n"
           f"set_input_transition {INPUT_SLEW_NS} [all_inputs]\n"
           # Inputs launched by the clock: OpenSTA prices a pin at its clock's rate, and logic that
           # only input ports without a clock reach would otherwise get almost no activity.
           "set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk_i]]\n"
           f"set_power_activity -global -activity {activity} -duty 0.5\n"
           f"set_power_activity -input -activity {activity} -duty 0.5\n"
           "report_power -digits 6\nexit\n")
    try:
        with tempfile.TemporaryDirectory() as tmp:  # sta leaves its .history_sta in the working folder
            out = subprocess.run(["sta", "-no_splash", "-exit"], input=tcl, capture_output=True, text=True,
                                 timeout=300, cwd=tmp).stdout
    except FileNotFoundError:
        raise EnergyError("sta (OpenSTA) not found")
    m = re.search(r"^Total\s+([-\d.e+]+)\s+([-\d.e+]+)\s+([-\d.e+]+)\s+([-\d.e+]+)", out, flags=re.M)
    if not m:
        raise EnergyError("OpenSTA printed no power total:\n" + out[-2000:])
    internal, switching, leakage, total = (float(v) for v in m.groups())
    to_pj = period_ns * 1e3  # W * ns = 1e-9 J = 1e3 pJ
    return {"internal_pj": internal * to_pj, "switching_pj": switching * to_pj,
            "leakage_pj": leakage * to_pj, "total_pj": total * to_pj, "report": out}


# ---------------------------------------------------------------- rtl/energy.json

ENERGY_INPUTS = ["scripts/energy.sh", "scripts/energy.py", "tests/energy/energy_stream.cpp",
                 "scripts/gatesim.sh", "scripts/area.sh", "scripts/synth_cells.sh",
                 "scripts/liberty_cells.py", "rtl/area.json"]


def provenance():
    sv = re.search(r'^SV="(.*?)"', open(os.path.join(ROOT, "scripts/area.sh")).read(), flags=re.M | re.S)
    paths = (sv.group(1).split() if sv else []) + ENERGY_INPUTS
    h = hashlib.sha256()
    for p in paths:
        with open(os.path.join(ROOT, p), "rb") as f:
            h.update(f.read())
    return {"inputs": paths, "inputs_sha256": h.hexdigest()}


def check(json_path):
    try:
        prov = json.load(open(json_path))["_provenance"]
        h = hashlib.sha256()
        for p in prov["inputs"]:
            with open(os.path.join(ROOT, p), "rb") as f:
                h.update(f.read())
        now = h.hexdigest()
    except (OSError, KeyError, ValueError) as e:
        print(f"{json_path}: cannot check ({e})")
        return 1
    if now != prov["inputs_sha256"]:
        print(f"{json_path} is stale: its inputs changed since it was written; rerun "
              f"scripts/energy.sh --json {json_path}")
        return 1
    print(f"{json_path} is current ({len(prov['inputs'])} inputs, sha256 {now[:12]})")
    return 0


UNIT_FORMAT = {"hif4_pe": "hif4", "nvfp4_pe64": "nvfp4", "nvfp4_pe64_fixed": "nvfp4",
               "bs_dot_k64_ue4m3_b16": "nvfp4", "bs_dot_k64_ue8m0_b32": "mxfp4", "bs_dot_k32": "mxfp4",
               "nvfp4_pts_mul": "nvfp4"}
DEFAULT_DIST = "llm"


def report(liberty, outdir, json_path, units):
    """rtl/energy.json: per unit and distribution energy per instruction, pJ/MAC and TOPS/W; the
    unit's top-level energy_pj / pj_per_mac / tops_per_w are those of DEFAULT_DIST; each unit also
    gets OpenSTA's vectorless total at its measured DEFAULT_DIST toggle rate next to ours."""
    data = {}
    if os.path.exists(json_path):
        try:
            old = json.load(open(json_path))
            if check(json_path) == 0:  # keep other units' entries only if they are still current
                data = {k: v for k, v in old.items() if not k.startswith("_")}
        except ValueError:
            pass
    lib = Liberty(liberty)
    for u in units:
        r = json.load(open(os.path.join(outdir, u, "energy.json")))
        k = {"bs_dot_k32": 32, "nvfp4_pts_mul": 0}.get(u, 64)
        entry = {"format": UNIT_FORMAT.get(u, "?"), "macs_per_instruction": k, "period_ns": r["period_ns"],
                 "cells": r["cells"], "flops": r["flops"], "dist": {}}
        for d, e in r["dist"].items():
            if e["mismatches"] or e["input_stalls"]:
                raise EnergyError(f"{u} {d}: {e['mismatches']} results differ from golden, {e['input_stalls']} "
                                  "cycles with the input not ready; not written")
            x = {"energy_pj": round(e["total_pj"], 3),
                 "pj_per_mac": round(e["total_pj"] / k, 4) if k else None,
                 "tops_per_w": round(2 * k / e["total_pj"], 4) if k else None,
                 "internal_pj": round(e["internal_pj"], 3), "switching_pj": round(e["switching_pj"], 3),
                 "clock_pj": round(e["clock_pj"], 3), "leakage_pj": round(e["leakage_pj"], 4),
                 "toggle_rate": round(e["toggle_rate"], 5), "instructions": e["instructions"],
                 "window_cycles": e["window_cycles"]}
            entry["dist"][d] = x
        dflt = entry["dist"][DEFAULT_DIST]
        for c in ("energy_pj", "pj_per_mac", "tops_per_w"):
            entry[c] = dflt[c]
        net_v = os.path.join(outdir, u, "netlist.v")
        top = {"nvfp4_pe64_fixed": "nvfp4_pe64"}.get(u, u if not u.startswith("bs_dot_k64") else "bs_dot_k64")
        act = dflt["toggle_rate"]
        net = Netlist(os.path.join(outdir, u, "netlist.json"), top, lib)
        ours = uniform(net, lib, act, r["period_ns"], "opensta")
        phys = uniform(net, lib, act, r["period_ns"])
        sta = sta_power(liberty, net_v, top, r["period_ns"], act)
        entry["sta_check"] = {"activity": act, "opensta_total_pj": round(sta["total_pj"], 3),
                              "model_opensta_convention_pj": round(ours["total_pj"], 3),
                              "model_uniform_pj": round(phys["total_pj"], 3),
                              "ratio": round(ours["total_pj"] / sta["total_pj"], 4)}
        data[u] = entry
        print(f"energy: {u}: {entry['energy_pj']:.1f} pJ/instr ({DEFAULT_DIST}); OpenSTA at toggle rate {act:.3f}: "
              f"{sta['total_pj']:.1f} pJ/cycle, ours its way {ours['total_pj']:.1f} (ratio {entry['sta_check']['ratio']})")
    out = {k: data[k] for k in sorted(data)}
    out["_default_dist"] = DEFAULT_DIST
    out["_node"] = (f"OSU 0.18 um standard cells ({os.path.basename(liberty)}, typical corner, "
                    f"{lib.voltage:g} V, 25 C); no projection to another node")
    out["_clock"] = "each unit at its fmax from rtl/area.json (leakage x period); dynamic energy does not depend on it"
    out["_provenance"] = provenance()
    tmp = json_path + ".partial"
    json.dump(out, open(tmp, "w"), indent=1)
    os.replace(tmp, json_path)
    print(f"wrote {json_path}")


def print_table(json_path):
    """Markdown: pJ/MAC per unit x distribution, and the default distribution's breakdown."""
    d = json.load(open(json_path))
    units = [u for u in d if not u.startswith("_")]
    dists = list(d[units[0]]["dist"])
    print("| unit | format | " + " | ".join(dists) + " |")
    print("|---|---|" + "---:|" * len(dists))
    for u in units:
        e = d[u]
        cells = [f"{e['dist'][x]['pj_per_mac']:.2f}" if e["dist"][x]["pj_per_mac"] is not None
                 else f"{e['dist'][x]['energy_pj']:.1f} pJ/op" for x in dists]
        print(f"| {u} | {e['format']} | " + " | ".join(cells) + " |")
    dd = d["_default_dist"]
    print()
    print(f"| unit ({dd}) | pJ/instr | pJ/MAC | TOPS/W | internal | switching | clock | leakage | toggle rate | "
          "OpenSTA its way / ours its way |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for u in units:
        e = d[u]
        x = e["dist"][dd]
        s = e["sta_check"]
        pm = f"{x['pj_per_mac']:.2f}" if x["pj_per_mac"] is not None else "–"
        tw = f"{x['tops_per_w']:.3f}" if x["tops_per_w"] is not None else "–"
        print(f"| {u} | {x['energy_pj']:.1f} | {pm} | {tw} | {x['internal_pj']:.1f} | {x['switching_pj']:.1f} | "
              f"{x['clock_pj']:.1f} | {x['leakage_pj']:.3f} | {x['toggle_rate']:.3f} | "
              f"{s['opensta_total_pj']:.0f} / {s['model_opensta_convention_pj']:.0f} ({s['ratio']:.2f}) |")


# ---------------------------------------------------------------- command line

def opts(argv, names, optional=()):
    o, rest = {}, []
    i = 0
    while i < len(argv):
        if argv[i].startswith("--") and (argv[i][2:] in names or argv[i][2:] in optional):
            if i + 1 >= len(argv):
                raise EnergyError(f"{argv[i]} needs a value")
            o[argv[i][2:]] = argv[i + 1]
            i += 2
        elif argv[i].startswith("--"):
            raise EnergyError(f"unknown option {argv[i]}")
        else:
            rest.append(argv[i])
            i += 1
    for nm in names:
        if nm not in o:
            raise EnergyError(f"--{nm} is required")
    return o, rest


def main(argv):
    if not argv:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 1
    cmd, args = argv[0], argv[1:]
    if cmd == "check":
        if len(args) != 1:
            raise EnergyError("check needs one JSON file")
        return check(args[0])
    if cmd == "measure":
        o, streams = opts(args, ["liberty", "netlist", "top", "period", "k", "out"])
        lib = Liberty(o["liberty"])
        net = Netlist(o["netlist"], o["top"], lib)
        period, k = float(o["period"]), int(o["k"])
        res = {"period_ns": period, "cells": len(net.cells), "flops": len(net.flops), "nets": net.n - 2,
               "voltage_v": lib.voltage, "input_slew_ns": INPUT_SLEW_NS, "dist": {}}
        for sp in streams:
            stream = read_stream(sp)
            dist = os.path.basename(sp).split(".")[0]
            rise, fall, cycles, mism, stalls, lat = simulate(net, o["top"], stream)
            e = price(net, lib, rise, fall, cycles, period)
            data_nets = np.ones(net.n, dtype=bool)
            data_nets[:2] = False
            data_nets[net.clk] = False
            rate = float((rise + fall)[data_nets].sum()) / cycles / data_nets.sum()
            e.update({"instructions": int(stream[0]["n"]), "window_cycles": int(cycles),
                      "toggle_rate": rate, "mismatches": int(mism), "input_stalls": int(stalls),
                      "latency": int(lat)})
            res["dist"][dist] = e
            print(f"energy: {o['top']} {dist}: {e['total_pj']:.2f} pJ/instr ({e['total_pj'] / k:.3f} pJ/MAC), "
                  f"toggle rate {rate:.4f}, {mism} mismatches vs golden", flush=True)
        tmp = o["out"] + ".partial"
        json.dump(res, open(tmp, "w"), indent=1)
        os.replace(tmp, o["out"])
        return 0
    if cmd == "table":
        if len(args) != 1:
            raise EnergyError("table needs one JSON file")
        print_table(args[0])
        return 0
    if cmd == "report":
        o, rest = opts(args, ["liberty"])
        if len(rest) < 3:
            raise EnergyError("report needs OUTDIR JSON UNIT...")
        report(o["liberty"], rest[0], rest[1], rest[2:])
        return 0
    if cmd == "uniform":
        o, _ = opts(args, ["liberty", "netlist", "top", "period", "activity"], ["convention"])
        lib = Liberty(o["liberty"])
        net = Netlist(o["netlist"], o["top"], lib)
        print(json.dumps(uniform(net, lib, float(o["activity"]), float(o["period"]),
                                 o.get("convention", "physical"))))
        return 0
    if cmd == "sta":
        o, _ = opts(args, ["liberty", "netlist", "top", "period", "activity"])
        r = sta_power(o["liberty"], o["netlist"], o["top"], float(o["period"]), float(o["activity"]))
        print(r.pop("report"))
        print(json.dumps(r))
        return 0
    raise EnergyError(f"unknown command {cmd}")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (EnergyError, LibertyError, OSError, ValueError, KeyError) as e:
        print(f"energy.py: {e}", file=sys.stderr)
        sys.exit(1)
