#!/usr/bin/env bash
# CTest scaleout_mpi_module: MPI is a module that fp4sim loads only under a launcher. Facts, not
# times: fp4sim's ELF NEEDED list has no MPI library while the module beside it needs libmpi (so the
# check is not vacuous); `fp4sim --version` initialises no MPI library (LD_DEBUG=libs); a process
# that looks launched (OMPI_COMM_WORLD_SIZE set) but cannot load the module fails with one line
# naming it and writes nothing.
#   cli_mpi_module_test.sh FP4SIM MODULE WORKDIR
set -u
bin="$1" mod="$2" work="$3"
fail() { echo "scaleout_mpi_module: FAIL: $*"; exit 1; }
needed="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
[ -n "$needed" ] || fail "no NEEDED entries read from $bin"
if echo "$needed" | grep -Eq '^lib(mpi|boost_mpi|open-pal|open-rte|hwloc|event)'; then
  fail "fp4sim links an MPI library: $(echo $needed)"
fi
readelf -d "$mod" | grep -q 'NEEDED.*libmpi' || fail "the module $mod does not need libmpi (test would be vacuous)"
loaded="$(LD_DEBUG=libs "$bin" --version 2>&1 >/dev/null | sed -n 's/.*calling init: //p')"
[ -n "$loaded" ] || fail "LD_DEBUG=libs reported nothing"
if echo "$loaded" | grep -Eq 'lib(mpi|boost_mpi|open-pal)[.]'; then fail "fp4sim --version loaded MPI: $(echo $loaded)"; fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
err="$(OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0 FP4SIM_MPI_MODULE="$work/none/libfp4sim_mpi.so" \
       "$bin" regress --cases 10 --out r 2>&1 >/dev/null)"
code=$?
[ "$code" -ne 0 ] || fail "a missing module was not an error"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "not one line: $err"
echo "$err" | grep -q "MPI module libfp4sim_mpi.so could not be loaded" || fail "unclear message: $err"
[ -z "$(ls -A)" ] || fail "left behind: $(ls -A)"
echo "missing module: $err"
echo "scaleout_mpi_module: ok"
