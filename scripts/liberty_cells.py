#!/usr/bin/env python3
"""Verilog simulation models of a liberty file's standard cells, generated from the liberty itself.

Usage: scripts/liberty_cells.py LIBERTY OUT.v [--used NETLIST.v ...] [--plant CELL:EXPR]

For every cell (with --used: only the cells that the netlists instantiate) one module:
  - combinational output pins: `assign Y = <function>` from the pin's `function` string
    (operators: ! and postfix ' for NOT, juxtaposition, * and & for AND, + and | for OR, ^ for XOR,
    parentheses, constants 0 and 1); a `three_state` condition makes the pin Z while it holds;
  - `ff (IQ, IQN)` groups: state updated on the rising edge of `clocked_on` to `next_state`, with
    the asynchronous `clear` / `preset` (and `clear_preset_var1/2` for both at once) if present;
  - `latch (IQ, IQN)` groups: transparent while `enable`, loads `data_in`; clear / preset likewise.
Output functions that name IQ / IQN read the state. Anything else the models would need (statetable,
bus pins, test_cell) is refused with a one-line error rather than modelled wrongly.

--plant CELL:EXPR replaces the function of CELL's (single) output with EXPR, in liberty syntax: the
planted-defect mode of scripts/gatesim.sh (e.g. XOR2X1:'!(A^B)').
"""
import re
import sys


class LibertyError(Exception):
    pass


# ---------------------------------------------------------------- liberty reader (groups + attrs)

def tokenize(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = text.replace("\\\n", " ")
    return re.findall(r'"(?:[^"\\]|\\.)*"|[{}();:,]|[^\s{}();:,"]+', text)


class Group:
    def __init__(self, kind, args):
        self.kind, self.args, self.attrs, self.groups = kind, args, {}, []

    def sub(self, kind):
        return [g for g in self.groups if g.kind == kind]


def parse(text):
    toks = tokenize(text)
    pos = 0

    def unq(t):
        return t[1:-1] if t.startswith('"') else t

    def group_body(g):
        nonlocal pos
        while pos < len(toks):
            t = toks[pos]
            if t == "}":
                pos += 1
                return g
            name = t
            pos += 1
            if pos < len(toks) and toks[pos] == ":":  # simple attribute: name : value ;
                pos += 1
                val = []
                while toks[pos] != ";" and toks[pos] != "}":
                    val.append(unq(toks[pos]))
                    pos += 1
                if toks[pos] == ";":
                    pos += 1
                g.attrs[name] = " ".join(val)
            elif pos < len(toks) and toks[pos] == "(":  # group or complex attribute
                pos += 1
                args = []
                while toks[pos] != ")":
                    if toks[pos] != ",":
                        args.append(unq(toks[pos]))
                    pos += 1
                pos += 1
                if pos < len(toks) and toks[pos] == "{":
                    pos += 1
                    g.groups.append(group_body(Group(name, args)))
                elif pos < len(toks) and toks[pos] == ";":
                    pos += 1
            # anything else: a stray token; skip it
        return g

    root = Group("root", [])
    group_body(root)
    libs = root.sub("library")
    if not libs:
        raise LibertyError("no library group")
    return libs[0]


# ---------------------------------------------------------------- boolean functions -> Verilog

def func_to_verilog(expr, names):
    """Liberty boolean expression -> Verilog expression; every identifier must be in names."""
    toks = re.findall(r"[A-Za-z_][A-Za-z0-9_\[\]]*|[01]|[!'*&+|^()]|\S", expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def primary():
        nonlocal pos
        t = peek()
        if t is None:
            raise LibertyError(f"function {expr!r}: unexpected end")
        pos += 1
        if t == "!":
            v = f"~{primary()}"
        elif t == "(":
            v = f"({or_expr()})"
            if peek() != ")":
                raise LibertyError(f"function {expr!r}: missing )")
            pos += 1
        elif t in ("0", "1"):
            v = f"1'b{t}"
        elif re.match(r"[A-Za-z_]", t):
            if t not in names:
                raise LibertyError(f"function {expr!r}: unknown pin or state {t}")
            v = t
        else:
            raise LibertyError(f"function {expr!r}: unexpected {t!r}")
        while peek() == "'":  # postfix NOT
            pos += 1
            v = f"~({v})"
        return v

    def and_expr():
        nonlocal pos
        terms = [primary()]
        while True:
            t = peek()
            if t in ("*", "&"):
                pos += 1
                terms.append(primary())
            elif t is not None and (t in ("!", "(", "0", "1") or re.match(r"[A-Za-z_]", t)):
                terms.append(primary())  # juxtaposition is AND
            else:
                return " & ".join(terms) if len(terms) == 1 else "(" + " & ".join(terms) + ")"

    def xor_expr():
        nonlocal pos
        terms = [and_expr()]
        while peek() == "^":
            pos += 1
            terms.append(and_expr())
        return terms[0] if len(terms) == 1 else "(" + " ^ ".join(terms) + ")"

    def or_expr():
        nonlocal pos
        terms = [xor_expr()]
        while peek() in ("+", "|"):
            pos += 1
            terms.append(xor_expr())
        return terms[0] if len(terms) == 1 else "(" + " | ".join(terms) + ")"

    v = or_expr()
    if pos != len(toks):
        raise LibertyError(f"function {expr!r}: trailing {toks[pos]!r}")
    return v


# ---------------------------------------------------------------- cell models

# clear_preset_var values: the state when clear and preset are both active.
CPV = {"L": "1'b0", "H": "1'b1"}


def storage_block(cell, g, names):
    """Verilog for an ff or latch group; returns (declarations + logic) lines."""
    iq, iqn = g.args[0], g.args[1]
    a = g.attrs
    lines = [f"  reg {iq};", f"  wire {iqn} = ~{iq};"]
    clr = func_to_verilog(a["clear"], names) if "clear" in a else None
    pre = func_to_verilog(a["preset"], names) if "preset" in a else None
    both = CPV.get(a.get("clear_preset_var1", "L"))
    if both is None:
        raise LibertyError(f"cell {cell}: clear_preset_var1 {a['clear_preset_var1']} not modelled")
    if "clear_preset_var2" in a and a["clear_preset_var2"] != {"L": "H", "H": "L"}.get(a.get("clear_preset_var1", "L")):
        # IQN is modelled as ~IQ, which is right only when var2 is var1's complement.
        raise LibertyError(f"cell {cell}: clear_preset_var2 not the complement of var1")
    if g.kind == "ff":
        if "clocked_on_also" in a:
            raise LibertyError(f"cell {cell}: clocked_on_also not modelled")
        lines.append(f"  wire clk_e = {func_to_verilog(a['clocked_on'], names)};")
        nxt = func_to_verilog(a["next_state"], names)
        sens = ["posedge clk_e"]
        if clr:
            lines.append(f"  wire clr_e = {clr};")
            sens.append("posedge clr_e")
        if pre:
            lines.append(f"  wire pre_e = {pre};")
            sens.append("posedge pre_e")
        lines.append(f"  always @({' or '.join(sens)}) begin")
        # Async clear / preset as plain if / else if on the edge signals (a form yosys reads too);
        # with both active, the one clear_preset_var1 names wins.
        chain = [("clr_e", "1'b0")] if clr else []
        if pre:
            chain.insert(0 if both == "1'b1" else len(chain), ("pre_e", "1'b1"))
        kw = "if"
        for cond, val in chain:
            lines.append(f"    {kw} ({cond}) {iq} <= {val};")
            kw = "else if"
        lines.append(f"    {'else ' if chain else ''}{iq} <= {nxt};")
        lines.append("  end")
    else:  # latch
        en = func_to_verilog(a["enable"], names)
        din = func_to_verilog(a["data_in"], names)
        lines.append("  always_latch begin")
        chain = [(clr, "1'b0")] if clr else []
        if pre:
            chain.insert(0 if both == "1'b1" else len(chain), (pre, "1'b1"))
        chain.append((en, din))
        kw = "if"
        for cond, val in chain:
            lines.append(f"    {kw} ({cond}) {iq} = {val};")
            kw = "else if"
        lines.append("  end")
    return lines


def cell_module(cell, plant=None):
    name = cell.args[0]
    for unsupported in ("statetable", "bus", "bundle", "test_cell"):
        if cell.sub(unsupported):
            raise LibertyError(f"cell {name}: {unsupported} groups are not modelled")
    pins = cell.sub("pin")
    ins = [p.args[0] for p in pins if p.attrs.get("direction") == "input"]
    outs = [p for p in pins if p.attrs.get("direction") in ("output", "inout")]
    if not outs:
        raise LibertyError(f"cell {name}: no output pin")
    storage = cell.sub("ff") + cell.sub("latch")
    names = set(ins)
    for g in storage:
        names.update(g.args[:2])
    if plant is not None and len(outs) != 1:
        raise LibertyError(f"--plant: cell {name} has {len(outs)} outputs; plant a single-output cell")
    body = []
    for g in storage:
        body += storage_block(name, g, names)
    for p in outs:
        pn = p.args[0]
        fn = p.attrs.get("function")
        if plant is not None:
            fn = plant
        if fn is None:
            raise LibertyError(f"cell {name}: output {pn} has no function")
        v = func_to_verilog(fn, names)
        if "three_state" in p.attrs:
            v = f"({func_to_verilog(p.attrs['three_state'], names)}) ? 1'bz : {v}"
        body.append(f"  assign {pn} = {v};")
    ports = ins + [p.args[0] for p in outs]
    head = [f"module {name} ({', '.join(ports)});"]
    head += [f"  input {i};" for i in ins]
    head += [f"  output {p.args[0]};" for p in outs]
    return "\n".join(head + body + ["endmodule", ""])


def used_cells(netlists, cells):
    used = set()
    for path in netlists:
        with open(path) as f:
            for m in re.finditer(r"^\s*(\w+)\s+\S+\s*\(", f.read(), flags=re.M):
                if m.group(1) in cells:
                    used.add(m.group(1))
    return used


def buffer_cell(lib):
    """(cell, output pin) of the smallest-area non-inverting buffer of the liberty (one input,
    output function = it): the driving cell that area.sh / gatesim.sh give abc and OpenSTA, so any liberty is a drop-in."""
    best = None
    for c in lib.sub("cell"):
        pins = c.sub("pin")
        ins = [p for p in pins if p.attrs.get("direction") == "input"]
        outs = [p for p in pins if p.attrs.get("direction") == "output"]
        if len(ins) != 1 or len(outs) != 1 or c.sub("ff") or c.sub("latch"):
            continue
        if outs[0].attrs.get("function", "").strip().strip("()") != ins[0].args[0]:
            continue
        area = float(c.attrs.get("area", "inf"))
        if best is None or area < best[0]:
            best = (area, c.args[0], outs[0].args[0])
    if best is None:
        raise LibertyError("no buffer cell (one input, output function equal to it)")
    return best[1], best[2]


def main(argv):
    if argv[:1] == ["--buffer"]:
        if len(argv) != 2:
            raise LibertyError("usage: liberty_cells.py --buffer LIBERTY")
        try:
            with open(argv[1]) as f:
                print(buffer_cell(parse(f.read()))[0])
        except OSError as e:
            raise LibertyError(f"cannot read {argv[1]}: {e.strerror}")
        return
    args, used_from, plant = [], [], None
    i = 0
    while i < len(argv):
        if argv[i] == "--used" and i + 1 < len(argv):
            used_from.append(argv[i + 1])
            i += 2
        elif argv[i] == "--plant" and i + 1 < len(argv):
            plant = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            raise LibertyError(f"unknown option {argv[i]}")
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        raise LibertyError("usage: liberty_cells.py LIBERTY OUT.v [--used NETLIST.v ...] [--plant CELL:EXPR]")
    lib_path, out_path = args
    try:
        with open(lib_path) as f:
            lib = parse(f.read())
    except OSError as e:
        raise LibertyError(f"cannot read {lib_path}: {e.strerror}")
    cells = {c.args[0]: c for c in lib.sub("cell")}
    if not cells:
        raise LibertyError(f"{lib_path}: no cells")
    want = sorted(used_cells(used_from, cells)) if used_from else sorted(cells)
    plant_cell, plant_expr = None, None
    if plant:
        plant_cell, _, plant_expr = plant.partition(":")
        if plant_cell not in cells or not plant_expr:
            raise LibertyError(f"--plant {plant}: needs CELL:EXPR with a cell of the liberty")
        if plant_cell not in want:
            raise LibertyError(f"--plant {plant}: cell {plant_cell} is not used by the netlists")
    text = [f"// Cell models generated by scripts/liberty_cells.py from {lib_path.split('/')[-1]}; do not edit.",
            "// verilator lint_off DECLFILENAME", "// verilator lint_off UNUSEDSIGNAL", ""]
    if plant_cell:
        text.insert(1, f"// PLANTED DEFECT: {plant_cell} output function replaced by {plant_expr!r}")
    for n in want:
        text.append(cell_module(cells[n], plant_expr if n == plant_cell else None))
    tmp = out_path + ".partial"
    with open(tmp, "w") as f:
        f.write("\n".join(text))
    import os
    os.replace(tmp, out_path)  # nothing half-written on error
    print(f"liberty_cells.py: {len(want)} cell models -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except LibertyError as e:
        print(f"liberty_cells.py: {e}", file=sys.stderr)
        sys.exit(1)
