#!/usr/bin/env bash
# MPI checks of the scale-out commands (CTest scaleout_mpi_*; docs/scale-out.md):
#   mpi_check.sh regress_ranks|regress_resume|whatif_study_ranks FP4SIM MPIEXEC WORKDIR
# Every check compares the outputs of mpirun runs with those of one plain process, byte for byte,
# and proves that the ranks really ran (the timing line names the rank count).
set -euo pipefail
check=$1 F=$2 MPIEXEC=$3 W=$4
rm -rf "$W" && mkdir -p "$W" && cd "$W"
mpi() { local n=$1; shift; "$MPIEXEC" -n "$n" --oversubscribe "$@"; }
fail() { echo "mpi_check $check: FAIL: $*" >&2; exit 1; }
same() { diff -r "$1" "$2" >/dev/null || fail "$1 and $2 differ"; }

case "$check" in
regress_ranks)
  # The done-when in small: -n 1, 2 and 3 (uneven, with threads) give the same summary and bytes.
  args=(regress --cases 20000 --seed 7)
  "$F" "${args[@]}" --out p >p.out 2>p.err
  for n in 1 2 3; do
    extra=(); [ "$n" = 3 ] && extra=(--threads 2)
    mpi "$n" "$F" "${args[@]}" "${extra[@]}" --out "n$n" >"n$n.out" 2>"n$n.err"
    grep -q "regress: timing ranks=$n " "n$n.err" || fail "-n $n did not run $n ranks: $(cat n$n.err)"
    cmp -s p.out "n$n.out" || fail "stdout of -n $n differs"
    same p "n$n"
  done
  grep -q "bit-identical to golden" p.out || fail "no verdict in $(cat p.out)"
  # With mismatches (injected): the same counts, report and replayable suite from 2 ranks.
  fargs=(regress --cases 3000 --seed 5 --inject-fault 7,2000)
  set +e
  "$F" "${fargs[@]}" --out fp >fp.out 2>fp.err; rc_p=$?
  mpi 2 "$F" "${fargs[@]}" --out f2 >f2.out 2>f2.err; rc_2=$?
  set -e
  [ "$rc_p" = 1 ] && [ "$rc_2" != 0 ] || fail "fault runs exited $rc_p / $rc_2"
  cmp -s fp.out f2.out || fail "stdout of the fault runs differs"
  [ "$(grep -c 'fp4sim: error: regress: ' f2.err)" = 1 ] || fail "not one error line from 2 ranks: $(cat f2.err)"
  same fp f2
  "$F" replay f2/mismatches --target golden --quiet >/dev/null || fail "the mismatch suite does not replay"
  ;;
regress_resume)
  args=(regress --cases 20000 --seed 9 --shard-size 1024)
  "$F" "${args[@]}" --out ref >ref.out 2>/dev/null
  # Rank 1 killed with SIGKILL after its 5th shard: mpirun ends the job, nothing final is written.
  set +e
  FP4SIM_TEST_KILL_RANK=1 FP4SIM_TEST_KILL_AFTER_SHARDS=5 \
    mpi 2 -x FP4SIM_TEST_KILL_RANK -x FP4SIM_TEST_KILL_AFTER_SHARDS "$F" "${args[@]}" --out k >/dev/null 2>k.err; rc=$?
  set -e
  [ "$rc" != 0 ] || fail "the killed job exited 0"
  [ ! -e k ] || fail "a killed run left k"
  done_before=$(ls k.partial/shards | grep -c '\.shard$' || true)
  [ "$done_before" -ge 5 ] || fail "only $done_before shards kept"
  mpi 2 "$F" "${args[@]}" --out k --resume >k.out 2>k2.err
  grep -q "shards were done" k2.err || fail "no resume line: $(cat k2.err)"
  cmp -s ref.out k.out || fail "stdout after resume differs"
  same ref k
  [ ! -e k.partial ] || fail "k.partial left after the merge"
  # The whole job killed (every rank after 3 shards), resumed with another rank count.
  set +e
  FP4SIM_TEST_KILL_RANK=all FP4SIM_TEST_KILL_AFTER_SHARDS=3 \
    mpi 2 -x FP4SIM_TEST_KILL_RANK -x FP4SIM_TEST_KILL_AFTER_SHARDS "$F" "${args[@]}" --out w >/dev/null 2>w.err; rc=$?
  set -e
  [ "$rc" != 0 ] || fail "the killed job exited 0"
  mpi 3 "$F" "${args[@]}" --out w --resume >w.out 2>w2.err
  cmp -s ref.out w.out || fail "stdout after resume on 3 ranks differs"
  same ref w
  ;;
whatif_study_ranks)
  sweep=(whatif --m 256 --n 1024 --k 1024 --sweep cores=1,2,4,8,16 --sweep dram_bytes_per_cycle=32,64,128)
  "$F" "${sweep[@]}" --out p.csv >/dev/null
  mpi 2 "$F" "${sweep[@]}" --shard-size 4 --out n2.csv >/dev/null 2>n2.err
  grep -q "whatif: timing ranks=2 " n2.err || fail "whatif -n 2 did not run 2 ranks: $(cat n2.err)"
  cmp -s p.csv n2.csv || fail "whatif CSVs differ"
  cyc=(whatif --timing cycle --engine cube --m 64 --n 256 --k 512 --sweep cores=1,2,3,4)
  "$F" "${cyc[@]}" --out pc.csv >/dev/null
  mpi 2 "$F" "${cyc[@]}" --out nc.csv >/dev/null
  cmp -s pc.csv nc.csv || fail "whatif cycle CSVs differ"
  st=(study --model llama-8b --tokens 512 --format nvfp4,hif4)
  "$F" "${st[@]}" --out s1.csv >s1.out
  mpi 2 "$F" "${st[@]}" --out s2.csv >s2.out 2>s2.err
  grep -q "study: timing ranks=2 " s2.err || fail "study -n 2 did not run 2 ranks: $(cat s2.err)"
  cmp -s s1.csv s2.csv || fail "study CSVs differ"
  # header + (tensor core nvfp4, cube hif4, cube nvfp4) x 8 layers
  [ "$(wc -l < s1.csv)" = 25 ] || fail "study rows: $(wc -l < s1.csv)"
  diff <(grep -v '^wrote' s1.out) <(grep -v '^wrote' s2.out) >/dev/null || fail "study summaries differ"
  ;;
*) fail "unknown check" ;;
esac
echo "mpi_check $check: ok"
