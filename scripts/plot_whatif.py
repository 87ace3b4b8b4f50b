#!/usr/bin/env python3
"""Plots an `fp4sim whatif` CSV (docs/whatif.md) into PNGs.

Usage: scripts/plot_whatif.py out/whatif.csv [--x KEY] [--out DIR]   (default DIR: the CSV's folder)

Writes, per engine present in the CSV:
  whatif_<engine>_util.png   utilization vs KEY (default: the first parameter column that takes more
                             than one value, i.e. the first --sweep), one series per format (the best
                             row over the other parameters at each point);
  whatif_<engine>_area.png   MAC/cycle vs area (million transistors, docs/area.md), one point per
                             configuration, coloured by format: the efficient frontier is upper left.
Needs matplotlib (Debian: python3-matplotlib); uses the Agg backend, no display.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_whatif.py: matplotlib is missing (apt-get install python3-matplotlib)")


def swept_column(head, rows):
    """The first parameter column (the columns before `engine`) holding more than one value."""
    for c in head[: head.index("engine")]:
        if len({r[c] for r in rows if r[c] != ""}) > 1:
            return c
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--x", default=None, help="parameter column for the utilization plot's x axis")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out, exist_ok=True)
    with open(args.csv, newline="") as f:
        reader = csv.DictReader(f)
        head = reader.fieldnames or []
        rows = [r for r in reader if not r.get("error") and r["cycles"]]
    if not rows:
        sys.exit("plot_whatif.py: no rows in " + args.csv)
    written = []
    for engine in sorted({r["engine"] for r in rows}):
        er = [r for r in rows if r["engine"] == engine]
        formats = sorted({r["format"] for r in er})
        # Utilization vs the swept parameter: best over the other parameters.
        pname = args.x or swept_column(head, er)
        if pname and all(r[pname].lstrip("-").isdigit() for r in er):
            fig, ax = plt.subplots(figsize=(6, 4))
            for fmt in formats:
                best = defaultdict(float)
                for r in er:
                    if r["format"] == fmt:
                        x = int(r[pname])
                        best[x] = max(best[x], float(r["utilization"]))
                xs = sorted(best)
                ax.plot(xs, [best[x] for x in xs], marker="o", label=fmt)
            if min(int(r[pname]) for r in er) > 0:
                ax.set_xscale("log", base=2)
            ax.set_xlabel(pname)
            ax.set_ylabel("best utilization")
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{engine}: utilization vs {pname}")
            ax.grid(True, alpha=0.3)
            ax.legend()
            path = os.path.join(out, f"whatif_{engine}_util.png")
            fig.tight_layout()
            fig.savefig(path, dpi=120)
            plt.close(fig)
            written.append(path)
        # Throughput vs area (rows of a format with a synthesized unit).
        if any(r["area_mm2"] for r in er):
            fig, ax = plt.subplots(figsize=(6, 4))
            for fmt in formats:
                pts = [(float(r["area_mm2"]), 1e6 * float(r["macs_per_cycle"]) * float(r["fmax_mhz"]))
                       for r in er if r["format"] == fmt and r["area_mm2"] and r["macs_per_cycle"]]
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, label=fmt, alpha=0.7)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("dot-product units, mm^2 (OSU 0.18 um cells, rtl/area.json)")
            ax.set_ylabel("MAC/s (at the unit's fmax)")
            ax.set_title(f"{engine}: throughput vs area")
            ax.grid(True, alpha=0.3, which="both")
            ax.legend()
            path = os.path.join(out, f"whatif_{engine}_area.png")
            fig.tight_layout()
            fig.savefig(path, dpi=120)
            plt.close(fig)
            written.append(path)
    for p in written:
        print("wrote", p)


if __name__ == "__main__":
    main()
