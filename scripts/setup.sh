#!/usr/bin/env bash
# Installs the Debian packages fp4sim builds against. Idempotent: packages already present are
# skipped without touching apt, so a warm machine pays nothing. CI runs this as root on a fresh box.
set -euo pipefail

PKGS=(
  cmake ninja-build g++ pkg-config
  libgtest-dev libbenchmark-dev
  libboost-program-options1.81-dev libboost-json1.81-dev
  nlohmann-json3-dev
  libsystemc-dev verilator yosys
  qflow-tech-osu018 opensta z3
  python3-numpy python3-matplotlib
  # libFuzzer + ASan/UBSan runtimes for scripts/fuzz.sh
  clang libclang-rt-14-dev
  # MPI scale-out (Boost.MPI brings OpenMPI and mpirun); a one-node Slurm for scripts/slurm_check.sh
  libboost-mpi1.81-dev
  slurm-wlm munge
)

# --- Python packages (docs/python.md): pinned PyPI versions, installed into the `python3` on PATH
# (pyenv's on the CI image; a Debian-managed /usr/bin/python3 refuses pip: activate a venv first).
# nanobind and scikit-build-core build the module (`pip install --no-build-isolation .` uses these);
# ml_dtypes and pytest are for the tests. Skipped, without touching the network, when all are present.
PY_PKGS=(numpy==2.4.6 ml_dtypes==0.6.0 nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0 cocotb==1.8.1)
PY=${PYTHON:-python3}
if "$PY" - "${PY_PKGS[@]}" <<'PYEOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    sys.exit(0 if all(version(n) == v for n, v in (a.split("==") for a in sys.argv[1:])) else 1)
except PackageNotFoundError:
    sys.exit(1)
PYEOF
then
  echo "setup: Python packages present (${PY_PKGS[*]})"
else
  echo "setup: pip installing ${PY_PKGS[*]}"
  "$PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q "${PY_PKGS[@]}"
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
