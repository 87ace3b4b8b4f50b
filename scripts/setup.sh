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
# `fp4sim train` (docs/training.md; the package's [train] extra) and its CI test: PyTorch for the CPU.
# PyPI's torch wheel requires the CUDA toolkit wheels (several GB); TORCH_PKGS go in without
# dependencies — torch plus the four CUDA libraries it loads at import that the image's CUDA 13 does
# not provide (TOOLCHAIN.md) — and TRAIN_PKGS, the pure-Python rest and matplotlib, with theirs.
TORCH_PKGS=(torch==2.15.0 nvidia-cufile==1.20.0.107 nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2
            nvidia-nccl-cu13==2.30.7)
TRAIN_PKGS=(filelock==4.3.2 fsspec==2026.9.0 sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1 jinja2==3.1.6
            markupsafe==3.0.3 typing_extensions==4.15.0 matplotlib==3.11.2 contourpy==1.3.3 cycler==0.12.1
            fonttools==4.69.1 kiwisolver==1.5.1 pillow==13.0.0 pyparsing==3.3.2 python-dateutil==2.9.0.post0
            packaging==26.4 six==1.17.0)
PY=${PYTHON:-python3}
# pip_pinned WHAT [--no-deps] PKG==V ...: installs the list unless every pin is already present.
pip_pinned() {
  local what=$1 flags=()
  shift
  if [ "$1" = --no-deps ]; then flags=(--no-deps); shift; fi
  if "$PY" - "$@" <<'PYEOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    sys.exit(0 if all(version(n) == v for n, v in (a.split("==") for a in sys.argv[1:])) else 1)
except PackageNotFoundError:
    sys.exit(1)
PYEOF
  then
    echo "setup: $what present ($*)"
  else
    echo "setup: pip installing $what ($*)"
    "$PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q "${flags[@]}" "$@"
  fi
}
pip_pinned "Python packages" "${PY_PKGS[@]}"
pip_pinned "PyTorch (CPU use)" --no-deps "${TORCH_PKGS[@]}"
pip_pinned "training packages" "${TRAIN_PKGS[@]}"

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
