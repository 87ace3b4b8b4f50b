#!/usr/bin/env python3
"""Cell-library half of scripts/area.sh (--json mode): stage timing with OpenSTA and the report.

  area_cells.py sta OUTDIR UNIT TOP LIBERTY
      OUTDIR/UNIT.v is the flattened netlist yosys mapped to LIBERTY (flip-flops named after the
      register they implement, e.g. `u_mid.g_reg.data_q[12]_reg`; every other name hidden).
      Renames the flip-flops to plain identifiers, sorts them into the pipeline registers
      (u_in, u_mid, u_out.g_stage[k], in that order, whatever the instance path above them: every
      unit has one fp4sim_pe_shell, so the labels drop the path),
      writes OUTDIR/UNIT.sta.v, OUTDIR/UNIT.sta.tcl, runs `sta` and writes OUTDIR/UNIT.timing.json.
      Without `sta` (or when it fails) the timing falls back to abc's delay estimate from
      OUTDIR/UNIT.log (one figure for the whole netlist) and says so ("source": "abc").

  area_cells.py report OUTDIR JSON UNIT...
      Collects OUTDIR/UNIT.{stat.txt,timing.json,time,skip} into JSON and prints the table. JSON's
      "_provenance" names the files the flow read (AREA_INPUTS, set by scripts/area.sh: the RTL
      sources in the order yosys reads them, then scripts/area.sh and this script) and the sha256
      of their contents concatenated in that order (= `cat FILES | sha256sum`).

  area_cells.py rehash JSON
      Recomputes "_provenance" of JSON from AREA_INPUTS without touching the numbers. Only honest
      when no file that a reported unit reads has changed (scripts/area.sh --rehash).

  area_cells.py ratios JSON
      Prints the HiF4 / NVFP4 ratios of docs/area.md from JSON (element array, scale path, whole
      PE, longest stage, area x delay; with the fixed-point back end and the PTS multiply).

  area_cells.py check JSON
      Exit 0 when the files named in JSON's "_provenance" (paths relative to the repository root)
      still hash to its "inputs_sha256", else print one line and exit 1 (CTest rtl_area_json_current).

Stage delay = the worst path ending at a stage's endpoints, as the minimum clock period it needs:
launch clock-to-Q (or input at t = 0) + logic + the capturing flop's setup time; outputs are
required at the clock edge (output delay 0). Ideal clock, no wire-load model (the liberty has
none), inputs driven by the liberty's smallest buffer, outputs loaded with one DFF D pin.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

CLOCK_PORT = "clk_i"
# Each unit's element array (its front end's lane products and integer tree) as a module that
# scripts/area.sh synthesizes alone: (module, instances). fmax and stage areas come from the unit.
ELEM_BLOCK = {
    "hif4_pe": ("hif4_dot64", 1),
    "nvfp4_pe64": ("fp4_dot16", 4),
    "nvfp4_pe64_fixed": ("fp4_dot16", 4),
    "bs_dot_k64_ue4m3_b16": ("fp4_dot16", 4),
    "bs_dot_k64_ue8m0_b32": ("fp4_dot16", 4),
}
PERIOD_NS = 1000.0
# Pipeline register instances (fp4sim_pipe_reg / fp4sim_pipe_chain) in data-flow order.
REG_RE = re.compile(r"^(?P<pre>(?:.*\.)?)(?P<reg>u_in|u_mid|u_out\.g_stage\[(?P<k>\d+)\]\.u_reg)\.")


def reg_order(reg, k):
    return {"u_in": 0, "u_mid": 1}.get(reg, 2 + int(k or 0))


def reg_label(reg):
    return reg.replace(".g_stage[", "[").replace("].u_reg", "]")


def plain(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def buffer_of(liberty):
    """The driving cell of abc's constraints (scripts/synth_cells.sh), looked up the same way."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import liberty_cells as lc
    with open(liberty) as f:
        return lc.buffer_cell(lc.parse(f.read()))


def liberty_cells(liberty):
    """{cell: (area, {pin: direction})} from a liberty file (flat cell / pin groups)."""
    cells, cur, pin = {}, None, None
    for line in open(liberty):
        m = re.match(r"\s*cell\s*\(\s*\"?(\w+)\"?\s*\)", line)
        if m:
            cur, pin = m.group(1), None
            cells[cur] = [0.0, {}]
            continue
        if cur is None:
            continue
        m = re.match(r"\s*area\s*:\s*([\d.]+)", line)
        if m and pin is None:
            cells[cur][0] = float(m.group(1))
        m = re.match(r"\s*pin\s*\(\s*\"?(\w+)\"?\s*\)", line)
        if m:
            pin = m.group(1)
        m = re.match(r"\s*direction\s*:\s*(\w+)", line)
        if m and pin:
            cells[cur][1][pin] = m.group(1)
    return cells


def stage_areas(outdir, unit, top, liberty, keyof, labels):
    """Combinational area (um^2) in the fan-in cone of each pipeline register and of the outputs,
    from OUTDIR/UNIT.json; keyof(flop cell name) -> register order. A cell in more than one cone
    counts as "shared"."""
    lib = liberty_cells(liberty)
    mod = json.load(open(os.path.join(outdir, unit + ".json")))["modules"][top]
    driver, is_flop = {}, {}
    for name, c in mod["cells"].items():
        pins = lib.get(c["type"], (0.0, {}))[1]
        is_flop[name] = c["type"].startswith(("DFF", "LATCH"))
        for p, bits in c["connections"].items():
            if pins.get(p) == "output":
                for b in bits:
                    driver[b] = name
    ends = {}
    for name, c in mod["cells"].items():
        if is_flop[name]:
            ends.setdefault(keyof(name), []).extend(c["connections"].get("D", []))
    ends["out"] = [b for p in mod["ports"].values() if p["direction"] == "output" for b in p["bits"]]
    owner = {}
    for key, bits in ends.items():
        seen, todo = set(), list(bits)
        while todo:
            b = todo.pop()
            cell = driver.get(b)
            if cell is None or is_flop[cell] or cell in seen:
                continue
            seen.add(cell)
            c = mod["cells"][cell]
            pins = lib[c["type"]][1]
            for p, pb in c["connections"].items():
                if pins.get(p) == "input":
                    todo.extend(pb)
        for cell in seen:
            owner[cell] = key if owner.get(cell, key) == key else "shared"
    area = {}
    for name, c in mod["cells"].items():
        if is_flop[name]:
            continue
        key = owner.get(name, "unreached")
        label = labels.get(key, key)
        area[label] = area.get(label, 0.0) + lib[c["type"]][0]
    return {k: round(v, 1) for k, v in area.items()}


def sta(outdir, unit, top, liberty):
    net = open(os.path.join(outdir, unit + ".v")).read()
    cell_re = re.compile(r"^  (DFF\w*|LATCH\w*) (\\\S+|\w+)\s+\(", re.M)
    groups = {}  # order -> (label, [instances])
    renames = {}
    for m in cell_re.finditer(net):
        inst = m.group(2)
        raw = inst[1:] if inst.startswith("\\") else inst
        g = REG_RE.match(raw)
        if g:
            key, label = reg_order(g["reg"], g["k"]), reg_label(g["reg"])
        else:
            key, label = 99, "other flops"
        new = plain(raw)
        while new in renames.values():
            new += "_"
        renames[inst] = new
        groups.setdefault(key, (label, []))[1].append(new)
    # Rename the escaped flop instances (escaped identifiers end at whitespace).
    out = cell_re.sub(lambda m: f"  {m.group(1)} {renames[m.group(2)]} (", net)
    with open(os.path.join(outdir, unit + ".sta.v"), "w") as f:
        f.write(out)

    order = sorted(groups)
    tcl = [
        f"read_liberty {liberty}",
        f"read_verilog {os.path.join(outdir, unit + '.sta.v')}",
        f"link_design {top}",
        f"create_clock -name clk -period {PERIOD_NS} [get_ports {CLOCK_PORT}]",
        f"set ins [delete_from_list [all_inputs] [get_ports {CLOCK_PORT}]]",
        "set_input_delay 0 -clock clk $ins",
        "set_driving_cell -lib_cell {} -pin {} $ins".format(*buffer_of(liberty)),
        "set_output_delay 0 -clock clk [all_outputs]",
        "set_load 0.009 [all_outputs]",
        "set all_ck {}",
    ]
    for key in order:
        insts = groups[key][1]
        tcl.append(f"set ck{key} [get_pins {{{' '.join(i + '/CLK' for i in insts)}}}]")
        tcl.append(f"set d{key} [get_pins {{{' '.join(i + '/D' for i in insts)}}}]")
        tcl.append(f"set all_ck [concat $all_ck $ck{key}]")

    def q(tag, args):
        tcl.append(f'puts "@@ {tag}"')
        tcl.append(f"report_checks -path_delay max -digits 3 -group_count 1 {args}")

    # Per register group: worst path from anywhere, and the datapath from the group before it.
    stage_keys = [k for k in order if k != 99]
    for i, key in enumerate(stage_keys):
        q(f"any {key}", f"-to $d{key}")
        q(f"data {key}", f"-from $ins -to $d{key}" if i == 0 else f"-from $ck{stage_keys[i - 1]} -to $d{key}")
    q("any out", "-from $all_ck -to [all_outputs]")
    if stage_keys:
        q("data out", f"-from $ck{stage_keys[-1]} -to [all_outputs]")
    q("comb", "-from $ins -to [all_outputs]")
    if 99 in groups:
        q("any 99", "-to $d99")
    tcl_path = os.path.join(outdir, unit + ".sta.tcl")
    with open(tcl_path, "w") as f:
        f.write("\n".join(tcl) + "\nexit\n")

    res = {"source": "opensta", "flops_by_register": {groups[k][0]: len(groups[k][1]) for k in order}}
    log = None
    if shutil.which("sta"):
        p = subprocess.run(["sta", "-no_splash", "-exit", tcl_path], capture_output=True, text=True)
        log = p.stdout + p.stderr
        with open(os.path.join(outdir, unit + ".sta.log"), "w") as f:
            f.write(log)
        if p.returncode != 0 or "@@ comb" not in log or re.search(r"^Error", log, re.M):
            res["sta_error"] = f"sta exited {p.returncode}; see {unit}.sta.log"
            log = None
    else:
        res["sta_error"] = "OpenSTA (`sta`) not installed"

    # Logic area per stage: the cone in front of each register (named like the stage).
    def keyof(cell):
        g = REG_RE.match(cell)
        return reg_order(g["reg"], g["k"]) if g else 99
    stage_keys = [k for k in order if k != 99]
    labels, prev = {}, "in"
    for key in stage_keys:
        labels[key] = f"{prev} -> {groups[key][0]}"
        prev = groups[key][0]
    labels["out"] = f"{prev} -> out"
    labels[99] = "-> other flops"
    if os.path.exists(os.path.join(outdir, unit + ".json")):
        res["logic_area_um2_by_stage"] = stage_areas(outdir, unit, top, liberty, keyof, labels)
        lib = liberty_cells(liberty)
        res["flop_area_um2_by_register"] = {}
        for m in re.finditer(r"^  (DFF\w*|LATCH\w*) (\\\S+|\w+)\s+\(", net, re.M):
            g = REG_RE.match(m.group(2).lstrip("\\"))
            label = reg_label(g["reg"]) if g else "other flops"
            d = res["flop_area_um2_by_register"]
            d[label] = d.get(label, 0.0) + lib[m.group(1)][0]

    if log is not None:
        paths = {}
        for chunk in log.split("@@ ")[1:]:
            tag, body = chunk.split("\n", 1)
            m = re.search(r"(-?[\d.]+)\s+slack \((?:MET|VIOLATED)\)", body)
            if not m:
                paths[tag] = None
                continue
            sp = re.search(r"Startpoint: (\S+)", body).group(1)
            ep = re.search(r"Endpoint: (\S+)", body).group(1)
            paths[tag] = {"delay_ns": round(PERIOD_NS - float(m.group(1)), 3), "from": sp, "to": ep}

        def start_label(sp):
            for k in order:
                if sp in groups[k][1]:
                    return groups[k][0]
            return sp  # an input port

        stages, prev = [], "in"
        for key in stage_keys + ["out"]:
            label = "out" if key == "out" else groups[key][0]
            worst, data = paths.get(f"any {key}"), paths.get(f"data {key}")
            st = {"name": f"{prev} -> {label}",
                  "delay_ns": worst["delay_ns"] if worst else 0.0,
                  "datapath_ns": data["delay_ns"] if data else 0.0}
            if worst:
                st["worst_from"] = start_label(worst["from"])
            stages.append(st)
            prev = label
        res["stages"] = stages
        if paths.get("comb"):
            res["comb_in_to_out_ns"] = paths["comb"]["delay_ns"]
        if paths.get("any 99"):
            res["other_flops_ns"] = paths["any 99"]["delay_ns"]
    else:
        # abc's own estimate (`stime -p` after mapping): the longest combinational path of the
        # whole netlist, between any flops / ports; no per-stage split.
        txt = open(os.path.join(outdir, unit + ".log")).read()
        d = re.findall(r"Delay =\s*([\d.]+) ps", txt)
        res["source"] = "abc"
        res["stages"] = [{"name": "all stages (abc estimate, no setup / clock-to-Q)",
                          "delay_ns": round(float(d[-1]) / 1000, 3) if d else None}]
    with open(os.path.join(outdir, unit + ".timing.json"), "w") as f:
        json.dump(res, f, indent=1)


def parse_stat(path):
    txt = open(path).read()
    cells = int(re.findall(r"Number of cells:\s+(\d+)", txt)[-1])
    area = float(re.findall(r"Chip area for (?:top )?module '[^']*':\s+([\d.]+)", txt)[-1])
    types = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+([A-Z]\w+X\d|DFFSR|LATCH)\s+(\d+)$", txt, re.M)}
    flops = sum(v for k, v in types.items() if k.startswith("DFF") or k == "LATCH")
    return area, cells, flops, types


ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def inputs_sha256(paths):
    """sha256 of the files' contents concatenated in the given order (paths relative to ROOT)."""
    h = hashlib.sha256()
    for p in paths:
        with open(os.path.join(ROOT, p), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def provenance():
    paths = os.environ.get("AREA_INPUTS", "").split()
    if not paths:
        sys.exit("area_cells.py: AREA_INPUTS (the files the flow reads) is not set; run scripts/area.sh")
    return {"inputs": paths, "inputs_sha256": inputs_sha256(paths),
            "liberty": os.path.basename(os.environ.get("LIBERTY", "")) or None}


def rehash(json_path):
    data = json.load(open(json_path))
    data["_provenance"] = provenance()
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"rehashed {json_path}: {data['_provenance']['inputs_sha256']}")


def check(json_path):
    regen = f"re-run scripts/area.sh --json {os.path.relpath(os.path.abspath(json_path), ROOT)}"
    try:
        prov = json.load(open(json_path))["_provenance"]
        now = inputs_sha256(prov["inputs"])
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"{json_path} cannot be checked ({type(e).__name__}: {e}): {regen}")
    if now != prov["inputs_sha256"]:
        sys.exit(f"{os.path.relpath(os.path.abspath(json_path), ROOT)} is stale: {regen}")
    print(f"{json_path} is current ({len(prov['inputs'])} inputs, sha256 {now[:12]})")


def report(outdir, json_path, names):
    data = {}
    for n in names:
        skip = os.path.join(outdir, n + ".skip")
        if os.path.exists(skip):
            data[n] = {"skipped": open(skip).read().strip()}
            continue
        area, cells, flops, types = parse_stat(os.path.join(outdir, n + ".stat.txt"))
        tm = json.load(open(os.path.join(outdir, n + ".timing.json")))
        worst = max((s["delay_ns"] or 0.0) for s in tm["stages"])
        d = {"area_um2": round(area, 1), "cells": cells, "flops": flops,
             "stages": tm["stages"], "fmax_mhz": round(1000.0 / worst, 1) if worst else None,
             "source": tm["source"]}
        for k in ("comb_in_to_out_ns", "other_flops_ns", "sta_error", "flops_by_register",
                  "logic_area_um2_by_stage", "flop_area_um2_by_register"):
            if k in tm:
                d[k] = tm[k]
        tf = os.path.join(outdir, n + ".time")
        if os.path.exists(tf):
            d["synth_s"] = int(open(tf).read().split()[0])
        d["cell_types"] = types
        # The unit's element array (lane products + integer tree) synthesized alone, same flow.
        blk, count = ELEM_BLOCK.get(n, (None, 0))
        bstat = os.path.join(outdir, f"_block_{blk}.stat.txt") if blk else None
        if bstat and os.path.exists(bstat):
            d["elem_block"] = {"module": blk, "count": count}
            d["elem_area_um2"] = round(count * parse_stat(bstat)[0], 1)
        data[n] = d
    data["_provenance"] = provenance()
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")

    lib = os.environ.get("LIB_NAME", "osu018_stdcells")
    print(f"\n## Cell-library area and stage timing ({lib}; yosys flatten + dfflibmap + abc, OpenSTA)\n")
    print("| unit | area um^2 | cells | flops | stages: worst path, ns (datapath only) | longest | fmax MHz | max/min reg-reg | timing | synth s |")
    print("|---|---:|---:|---:|---|---|---:|---:|---|---:|")
    for n in names:
        d = data[n]
        if "skipped" in d:
            print(f"| {n} | - | - | - | skipped: {d['skipped']} | - | - | - | - | - |")
            continue
        st = d["stages"]
        parts = []
        for s in st:
            dp = s.get("datapath_ns")
            parts.append(f"{s['name']}: {s['delay_ns']:.2f}" + (f" ({dp:.2f})" if dp is not None else ""))
        longest = max(st, key=lambda s: s["delay_ns"] or 0.0)
        # balance of the register-to-register stages (datapath delays, first / last excluded)
        inner = [s.get("datapath_ns", s["delay_ns"]) for s in st[1:-1]]
        bal = f"{max(inner) / min(inner):.1f}" if len(inner) > 1 and min(inner) > 0 else "-"
        print(f"| {n} | {d['area_um2']:.0f} | {d['cells']} | {d['flops']} | {'; '.join(parts)} | "
              f"{longest['name']} | {d['fmax_mhz']} | {bal} | {d['source']} | {d.get('synth_s', '-')} |")
    print("\n### Area by stage, um^2: logic in the fan-in cone of each register / of the outputs "
          "(\"shared\": in more than one cone, mostly the valid/ready handshake), and the flops\n")
    print("| unit | logic by stage | shared | flops by register |")
    print("|---|---|---:|---|")
    for n in names:
        d = data[n]
        if "logic_area_um2_by_stage" not in d:
            continue
        la = d["logic_area_um2_by_stage"]
        st = "; ".join(f"{s['name']}: {la.get(s['name'], 0.0):.0f}" for s in d["stages"] if s["name"] in la)
        fl = "; ".join(f"{k}: {v:.0f}" for k, v in d["flop_area_um2_by_register"].items())
        print(f"| {n} | {st} | {la.get('shared', 0.0):.0f} | {fl} |")
    for n in names:
        if "sta_error" in data[n]:
            print(f"\n{n}: timing is abc's estimate ({data[n]['sta_error']})")
    pes = [n for n in ("hif4_pe", "nvfp4_pe64") if n in data and "skipped" not in data[n]]
    if len(pes) == 2:
        h, v = data["hif4_pe"], data["nvfp4_pe64"]
        dh = 1000.0 / h["fmax_mhz"]
        dv = 1000.0 / v["fmax_mhz"]
        print(f"\nhif4_pe / nvfp4_pe64: area {h['area_um2'] / v['area_um2']:.2f}, "
              f"longest stage {dh / dv:.2f}, area x longest stage {h['area_um2'] * dh / (v['area_um2'] * dv):.2f}")
        lh, lv = h.get("logic_area_um2_by_stage", {}), v.get("logic_area_um2_by_stage", {})
        for s_h, s_v in zip(h["stages"], v["stages"]):
            if s_h["name"] == s_v["name"] and lv.get(s_v["name"]):
                print(f"  stage {s_h['name']}: logic area {lh.get(s_h['name'], 0.0) / lv[s_v['name']]:.2f}, "
                      f"delay {s_h['delay_ns'] / s_v['delay_ns']:.2f}")
    print(f"\nwrote {json_path}")


def blocks(u):
    """A unit's area split as docs/area.md compares PEs: element array (elem_area_um2, synthesized
    alone), registers (flops + the hold muxes in front of the input register + the handshake logic
    shared by several cones), and the rest: scale path, alignment, accumulate and round."""
    flops = sum(u["flop_area_um2_by_register"].values())
    la = u["logic_area_um2_by_stage"]
    regs = flops + la.get("in -> u_in", 0.0) + la.get("shared", 0.0)
    elem = u["elem_area_um2"]
    return {"elem": elem, "regs": regs, "scale": u["area_um2"] - elem - regs}


def ratios(json_path):
    """HiF4 / NVFP4 ratios from an area JSON (docs/area.md, "The paper's claims")."""
    d = json.load(open(json_path))
    h = d["hif4_pe"]
    hb = blocks(h)
    longest = lambda u: max(s["delay_ns"] for s in u["stages"])
    cols = [("nvfp4_pe64", ["nvfp4_pe64"]), ("nvfp4_pe64 + pts", ["nvfp4_pe64", "nvfp4_pts_mul"]),
            ("nvfp4_pe64_fixed", ["nvfp4_pe64_fixed"]),
            ("nvfp4_pe64_fixed + pts", ["nvfp4_pe64_fixed", "nvfp4_pts_mul"]),
            ("bs_dot_k64_ue4m3_b16", ["bs_dot_k64_ue4m3_b16"])]
    cols = [(n, us) for n, us in cols if all(x in d and "area_um2" in d[x] for x in us)]
    print("| hif4_pe / ... | " + " | ".join(n for n, _ in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    rows = {"element array (lane products + integer tree, synthesized alone)": lambda us: hb["elem"] / blocks(d[us[0]])["elem"],
            "scale path + accumulate (+ the PTS multiply's logic)": lambda us: hb["scale"] / sum(
                blocks(d[x])["scale"] if x != "nvfp4_pts_mul" else d[x]["area_um2"] - blocks_pts(d[x]) for x in us),
            "whole PE (+ the PTS unit)": lambda us: h["area_um2"] / sum(d[x]["area_um2"] for x in us),
            "longest stage": lambda us: longest(h) / longest(d[us[0]]),
            "area x longest stage": lambda us: h["area_um2"] * longest(h) / (sum(d[x]["area_um2"] for x in us) * longest(d[us[0]]))}
    for name, f in rows.items():
        print(f"| {name} | " + " | ".join(f"{f(us):.2f}" for _, us in cols) + " |")
    print("\n| unit | area um^2 | element array | registers | scale path + accumulate | stages (ns) | max/min reg-reg |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for n, u in d.items():
        if n.startswith("_") or "area_um2" not in u:
            continue
        st = u["stages"]
        rr = [s["delay_ns"] for s in st[1:-1]]
        b = blocks(u) if "elem_area_um2" in u else None
        cells = (f"{b['elem']:.0f} | {b['regs']:.0f} | {b['scale']:.0f}" if b else "- | - | -")
        mm = f"{max(rr) / min(rr):.2f}" if len(rr) > 1 else "-"
        print(f"| {n} | {u['area_um2']:.0f} | {cells} | " + " / ".join(f"{s['delay_ns']:.2f}" for s in st) + f" | {mm} |")


def blocks_pts(u):
    """Register area of the PTS unit (everything but its multiplier and rounding logic)."""
    la = u["logic_area_um2_by_stage"]
    return sum(u["flop_area_um2_by_register"].values()) + la.get("in -> u_in", 0.0) + la.get("shared", 0.0)


if __name__ == "__main__":
    if sys.argv[1] == "sta":
        sta(*sys.argv[2:6])
    elif sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "rehash":
        rehash(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2])
    elif sys.argv[1] == "ratios":
        ratios(sys.argv[2])
    else:
        sys.exit(__doc__)
