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
  # MPI scale-out (Boost.MPI brings OpenMPI and mpirun); a one-node Slurm for scripts/slurm_check.sh
  libboost-mpi1.81-dev
  slurm-wlm munge
)

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
