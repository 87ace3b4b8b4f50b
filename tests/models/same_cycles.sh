#!/bin/bash
# Checks that two fp4sim binaries give the same cycle model: every CSV field of a set of cycle-timed
# whatif sweeps (both engines, pinned and mapper-chosen mappings, memory-bound and latency-free
# corners, output quantize unit, swap-AB, clusters) and the cycles, stalls and bytes of `fp4sim run`
# (the default layer and --quick, with the datapath). For changes that should only make the
# structural model faster (docs/models.md "Speed"). Not a CTest: it needs the old binary.
#   tests/models/same_cycles.sh OLD/fp4sim NEW/fp4sim [WORKDIR]
set -euo pipefail
if [ $# -lt 2 ]; then echo "usage: $0 OLD_FP4SIM NEW_FP4SIM [WORKDIR]" >&2; exit 2; fi
old=$1 new=$2 work=${3:-$(mktemp -d)}
mkdir -p "$work"
sweeps=(
  "--engine both --sweep m=1,16,200,512 --sweep n=256,1040 --k 1024"
  "--engine tensor-core --format nvfp4,mxfp8-e4m3 --m 1000 --n 768 --k 2048 --param tile_k=128 --sweep tile_n=64,128,256 --sweep stages=2,4 --sweep raster=m,n"
  "--engine both --m 512 --n 2048 --k 2048 --sweep l2_bytes=0,1048576 --sweep dram_bytes_per_cycle=64,4133 --sweep core_load_bytes_per_cycle=32,128"
  "--engine cube --format hif4,nvfp4 --m 512 --n 1024 --k 4096 --sweep l1_k=512,4096 --sweep tile_k=128,256 --sweep raster=m,n"
  "--engine cube --format hif4 --m 512 --n 4096 --k 4096 --param l1_bytes=1048576"
  "--engine both --m 300 --n 512 --k 1024 --sweep l2_latency=0,295 --sweep dram_latency=0,860 --sweep pipeline_depth=0,1,7 --sweep cores=1,3"
  "--engine both --m 256 --n 1024 --k 2048 --sweep out_format=none,nvfp4 --sweep out_dtype=fp32,bf16 --sweep quant_elems_per_cycle=1,64"
  "--engine tensor-core --format nvfp4 --m 16 --n 4096 --k 8192 --sweep swap_ab=off,on --sweep cluster_sms=1,2"
  "--engine both --format nvfp4 --m 512 --n 1024 --k 2048 --param l2_bytes=1048576 --sweep dram_latency=0,1 --sweep dram_bytes_per_cycle=1024,4096,8192 --sweep l2_latency=0,3 --sweep l2_bytes_per_cycle=4096,8192"
  "--engine both --format nvfp4 --m 4096 --n 4096 --k 4096"
  "--engine tensor-core --format nvfp4 --m 4096 --n 4096 --k 4096 --param tile_n=256 --param tile_k=128 --param stages=8 --param raster=n"
)
differ=0
for i in "${!sweeps[@]}"; do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    # shellcheck disable=SC2086
    # (a configuration that does not fit is an error row, and whatif then exits 1: compared too)
    "$bin" whatif --timing cycle --force ${sweeps[$i]} --out "$work/$b-$i.csv" > /dev/null 2>&1 || true
  done
  if ! cmp -s "$work/old-$i.csv" "$work/new-$i.csv"; then echo "differ: whatif ${sweeps[$i]}"; differ=1; fi
done
for q in --quick ""; do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    # shellcheck disable=SC2086
    "$bin" run $q --no-vectors --force --out "$work/$b-run$q" > /dev/null 2>&1 || true
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["runs"]:
    s = x["stats"] if "stats" in x else x
    print(x.get("engine"), x.get("format"), x.get("bit_exact"), json.dumps({k: s[k] for k in sorted(s) if k in ("cycles", "stalls", "bytes", "compute_cycles", "instructions", "tiles")}, sort_keys=True))
' "$work/$b-run$q/report.json" > "$work/$b-run$q.txt"
  done
  if ! cmp -s "$work/old-run$q.txt" "$work/new-run$q.txt"; then echo "differ: run $q"; differ=1; fi
done
[ $differ = 0 ] && echo "same cycles, stalls and bytes in every configuration ($work)"
exit $differ
