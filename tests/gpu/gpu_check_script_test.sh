#!/usr/bin/env bash
# CTest gpu_check_script*: scripts/gpu_check.sh in its GPU-only quick mode, on whatever machine the
# tests run on, so that the script cannot rot between the rare runs on a lent GPU.
#   gpu_check_script_test.sh SCRIPT [gpu_check.sh arguments: --build-dir DIR | --bin-dir DIR]
# Without a GPU (CI) the script must build what it needs, reach "no usable CUDA device" and exit 77,
# with its summary and log tarball (and nothing else) in $OUT. With a GPU, exit 0 and the same files.
set -u
script="$1"
shift
out="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check_test.XXXXXX")" || exit 1
trap 'rm -rf "$out"' EXIT
unset OUT_DIR
t0=$SECONDS
OUT="$out" bash "$script" --quick --gpu-only --deadline 400 "$@"
rc=$?
echo "gpu_check_script_test: gpu_check.sh exit $rc after $((SECONDS - t0)) s"
fail() {
  echo "gpu_check_script_test: FAIL: $*"
  exit 1
}
[ -s "$out/summary.md" ] || fail "no summary.md in \$OUT"
[ -s "$out/logs.tar.gz" ] || fail "no logs.tar.gz in \$OUT"
for f in "$out"/* "$out"/.[!.]*; do
  [ -e "$f" ] || continue
  case "$(basename "$f")" in summary.md | logs.tar.gz) ;; *) fail "unexpected file in \$OUT: $(basename "$f")" ;; esac
done
tar -tzf "$out/logs.tar.gz" | grep -q 'logs/device-tests.log' || fail "logs.tar.gz lacks the device test's log"
case "$rc" in
  77)
    grep -q 'no usable CUDA device' "$out/summary.md" || fail "exit 77 but the summary does not say 'no usable CUDA device'"
    grep -q '^exit 77: ' "$out/summary.md" || fail "the summary lacks its result line"
    ;;
  0)
    grep -q '^exit 0: ' "$out/summary.md" || fail "the summary lacks its result line"
    ;;
  *) fail "gpu_check.sh exited $rc (expected 77 without a GPU, 0 with one)" ;;
esac
echo "gpu_check_script_test: ok"
