#!/usr/bin/env bash
# Regenerates the committed seed corpus tests/fuzz/corpus/<target>/ from scratch (nothing fetched):
# a smoke suite written by fp4sim itself, cut down to the three cases the fuzz targets' scratch suite
# holds (fuzz_common.hpp: smoke cases 0, 7, 15 of seed 0), plus a few hand-made .npy and JSON files.
#   tests/fuzz/make_corpus.sh [FP4SIM_BINARY]     (default: build/bin/fp4sim)
set -euo pipefail
cd "$(dirname "$0")/../.."
FP4SIM=${1:-build/bin/fp4sim}
OUT=tests/fuzz/corpus
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$FP4SIM" vectors --suite smoke --seed 0 --out "$TMP/smoke" >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT"/{npy,manifest,suite_loader,suite_reader}

python3 - "$TMP/smoke" "$OUT" <<'PY'
import io, json, os, sys
import numpy as np

smoke, out = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(smoke, "manifest.json")))
keep = [m["cases"][i] for i in (0, 7, 15)]
dirs = [c["dir"] + "/" for c in keep]
m["cases"] = keep
m["files"] = {k: v for k, v in m["files"].items() if any(k.startswith(d) for d in dirs)}
m["command_line"] = ["fuzz"]
manifest = json.dumps(m, separators=(",", ":")).encode()

def put(target, name, data):
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)

put("manifest", "suite.json", manifest)
put("suite_reader", "3-suite", b"\x03" + manifest)
put("suite_reader", "2-manifest", b"\x02" + manifest)
put("suite_reader", "1-json", b"\x01" + b'{"a": [1, -2.5e3, true, null, "x\\u00e9\\n"], "b": {}}')

# The loader target's first byte picks the file by its position in the files table.
for i, name in enumerate(m["files"]):
    data = open(os.path.join(smoke, name), "rb").read()
    put("suite_loader", "%02d-%s" % (i, os.path.basename(name)), bytes([i]) + data)

def npy(arr, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, arr)
    else:
        np.lib.format.write_array(b, arr, version=version)
    return b.getvalue()

seeds = {
    "f32-2d": npy(np.arange(6, dtype="<f4").reshape(2, 3)),
    "u8-1d": npy(np.arange(5, dtype="u1")),
    "u16-0d": npy(np.array(7, dtype="<u2")),
    "u32-empty": npy(np.zeros((0, 4), dtype="<u4")),
    "f32-v2": npy(np.ones((2, 2), dtype="<f4"), version=(2, 0)),
    "suite-codes": open(os.path.join(smoke, keep[1]["a"]["codes"]), "rb").read(),
    "suite-words": open(os.path.join(smoke, keep[2]["a"]["scales"]), "rb").read(),
}
for k, v in seeds.items():
    put("npy", k, v)
    put("suite_reader", "0-" + k, b"\x00" + v)
PY
echo "make_corpus.sh: $(find "$OUT" -type f | wc -l) seeds in $OUT ($(du -sk "$OUT" | cut -f1) KiB)"
