#!/usr/bin/env python3
"""Checks an `fp4sim whatif` CSV (docs/whatif.md) for monotone cycles: more of a resource never makes
a configuration slower.

Usage: scripts/check_monotone.py FILE.csv KEY [KEY ...]

For each KEY (a parameter column such as l0a_bytes or dram_bytes_per_cycle), rows that agree on every
other parameter and on engine, format, m, n, k and timing form a group; within a group no row may
take more cycles than a row with a smaller KEY. Rows where KEY does not apply (empty cell) are not
compared on it. Every row must have run (empty `error` column). Prints one line per violation and a
summary; exits 0 when all holds, 1 on a violation or a failed row, 2 on a bad CSV or KEY.
Standard library only (python3 -I works).
"""
import csv
import sys
from collections import defaultdict

IDENTITY = ["engine", "format", "m", "n", "k", "timing"]


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) < 3 else sys.stdout)
        return 2 if len(argv) < 3 else 0
    path, keys = argv[1], argv[2:]
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        head = reader.fieldnames or []
        rows = list(reader)
    if "engine" not in head or "cycles" not in head:
        print(f"check_monotone: {path}: not an fp4sim whatif CSV (no engine / cycles column)", file=sys.stderr)
        return 2
    params = head[: head.index("engine")]  # the parameter columns come first
    for key in keys:
        if key not in params:
            print(f"check_monotone: {key} is not a parameter column of {path}", file=sys.stderr)
            return 2
    if not rows:
        print(f"check_monotone: {path}: no rows", file=sys.stderr)
        return 1
    bad = 0
    for i, r in enumerate(rows):
        if r.get("error") or not r["cycles"]:
            print(f"row {i + 2}: failed: {r.get('error') or 'no cycles'}")
            bad += 1
    comparisons = 0
    for key in keys:
        groups = defaultdict(list)
        for i, r in enumerate(rows):
            if r[key] == "" or not r["cycles"]:
                continue
            ident = tuple(r[c] for c in params + IDENTITY if c != key)
            groups[ident].append((int(r[key]), int(r["cycles"]), i))
        for members in groups.values():
            members.sort()
            # Non-increasing along the key: compare each row with every row of a smaller key value.
            for a in range(len(members)):
                for b in range(a + 1, len(members)):
                    va, ca, ia = members[a]
                    vb, cb, ib = members[b]
                    if vb == va:
                        continue
                    comparisons += 1
                    if cb > ca:
                        bad += 1
                        r = rows[ib]
                        print(
                            f"row {ib + 2} ({r['engine']} {r['format']} {r['m']}x{r['n']}x{r['k']}): "
                            f"{key}={vb} takes {cb} cycles, more than {ca} at {key}={va} (row {ia + 2})"
                        )
    print(
        f"check_monotone: {path}: {len(rows)} rows, {comparisons} comparisons over {', '.join(keys)}: "
        + ("ok" if bad == 0 else f"{bad} violations / failed rows")
    )
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
