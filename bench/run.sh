#!/usr/bin/env bash
# The benchmark tables of the README, in one run each (medians; ratios are within one run):
#   bench/run.sh matmul [DB]   weft's schedules (naive, default, manual, tuned with DB) against
#                              OpenBLAS and oneDNN, four shapes, 1 and 2 threads
#   bench/run.sh models [DB]   the bundled models, default (and tuned with DB) against PyTorch
# Run from the repository root after scripts/main.sh has built build/release.
set -euo pipefail
what=${1:-matmul}
db=${2:-}
weft=build/release/weft
dbarg=()
[[ -n "$db" ]] && dbarg=(--db "$db")
case "$what" in
matmul)
    # OpenBLAS must pick its AVX-512 kernels; libgomp's idle threads must not spin between peers.
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
    echo "kernel,shape,schedule,threads,median_us,gflops"
    for shape in 1024,1024,1024 32,512,512 128,3072,768 128,768,3072 1,1000,512; do
        for t in 1 2; do
            env -u OPENBLAS_CORETYPE "$weft" bench op matmul --shape "$shape" --threads "$t" --csv --min-time 1 "${dbarg[@]}" 2>/dev/null |
                tail -n +2
        done
    done
    ;;
models)
    echo "model,threads,schedule,median_ms"
    for m in mlp resnet9 resnet9_b32 transformer transformer_s64; do
        for t in 1 2; do
            "$weft" bench model tests/data/models/$m.onnx --threads "$t" --csv --repeat 200 "${dbarg[@]}" 2>/dev/null | tail -n +2
        done
    done
    ;;
*) echo "usage: bench/run.sh matmul|models [DB]" >&2; exit 2 ;;
esac
