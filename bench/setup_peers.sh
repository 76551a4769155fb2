#!/usr/bin/env bash
# Sets up the Python peers of the benchmarks in a virtual environment bench/.venv (git-ignored):
# ONNX Runtime (pip package onnxruntime, CPU), used by bench/ort_peer.py and bench/zoo.sh.
# Idempotent: does nothing when bench/.venv already imports onnxruntime. Needs network access to
# PyPI the first time; installs python3-venv with apt-get when the venv module is missing.
#   bash bench/setup_peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=bench/.venv
if [[ -x $venv/bin/python3 ]] && $venv/bin/python3 -c 'import onnxruntime, numpy' 2>/dev/null; then
    echo "setup_peers: $venv has onnxruntime $($venv/bin/python3 -c 'import onnxruntime; print(onnxruntime.__version__)')"
    exit 0
fi
if ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null; then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv
fi
[[ -x $venv/bin/python3 ]] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check onnxruntime numpy
echo "setup_peers: $venv has onnxruntime $($venv/bin/python3 -c 'import onnxruntime; print(onnxruntime.__version__)')"
