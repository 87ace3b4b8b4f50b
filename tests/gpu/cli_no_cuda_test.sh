#!/usr/bin/env bash
# CTest gpu_cli_no_cuda (issue 13): the fp4sim command line does not load CUDA unless a GPU target
# is used. Facts, not times: fp4sim's ELF NEEDED list has no CUDA library; the CUDA module beside
# it does need libcudart (so the check above is not vacuous); `fp4sim --version` maps no CUDA
# library at run time (ld.so's own account, LD_DEBUG=libs).
#   cli_no_cuda_test.sh FP4SIM MODULE
set -u
bin="$1" mod="$2"
fail() { echo "gpu_cli_no_cuda: FAIL: $*"; exit 1; }
command -v readelf >/dev/null || { echo "gpu_cli_no_cuda: readelf not found (binutils)"; exit 1; }
needed="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
[ -n "$needed" ] || fail "no NEEDED entries read from $bin"
echo "fp4sim NEEDED: $(echo $needed)"
if echo "$needed" | grep -Eq '^lib(cudart|cublas|cublasLt|cuda|nvrtc|cufft|curand|cusparse)\b'; then
  fail "fp4sim links a CUDA library: $(echo "$needed" | grep -E '^lib(cu|nvrtc)' | tr '\n' ' ')"
fi
[ -f "$mod" ] || fail "the CUDA module $mod is missing"
readelf -d "$mod" | grep -q 'NEEDED.*libcudart' || fail "the module $mod does not need libcudart (test would be vacuous)"
loaded="$(LD_DEBUG=libs "$bin" --version 2>&1 >/dev/null | sed -n 's/.*calling init: //p')"
[ -n "$loaded" ] || fail "LD_DEBUG=libs reported nothing (cannot tell what was loaded)"
if echo "$loaded" | grep -Eq 'lib(cudart|cublas|cuda)[.]'; then
  fail "fp4sim --version loaded CUDA: $(echo "$loaded" | grep -E 'lib(cudart|cublas|cuda)[.]' | tr '\n' ' ')"
fi
echo "fp4sim --version initialised: $(echo "$loaded" | xargs -n1 basename | tr '\n' ' ')"
echo "gpu_cli_no_cuda: ok"
