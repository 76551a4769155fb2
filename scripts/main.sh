#!/usr/bin/env bash
# Sets up, builds a Release build in build/release and runs the main job: JIT-compiles the
# bundled ResNet-9 (tests/data/models/resnet9.onnx) with the bundled tuned schedules
# (tests/data/models/tuned.db; on a machine of another kind it uses the records of the nearest
# machine in the database that are faster here than the default schedules, timed and checked
# here first, and says so) and runs inference on its reference input, printing the latency, the
# predicted class and a per-kernel profile.
# With `--bench`, also runs the 1024^3 float32 matmul benchmark on 1 and 2 threads (weft
# schedules against the vendor-library peers).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

bash scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"${JOBS:-2}"

models=tests/data/models
build/release/weft run $models/resnet9.onnx --input $models/resnet9.input.bin --output build/release/resnet9.output.bin \
    --db $models/tuned.db --repeat 200 --profile

if [[ "${1:-}" == "--bench" ]]; then
    # OPENBLAS_CORETYPE would pin OpenBLAS to an older kernel set; let it detect the CPU.
    # oneDNN runs on libgomp, whose idle threads otherwise spin after each call and slow
    # whatever is measured next on a machine with few cores; libgomp reads this at start.
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
    for threads in 1 2; do
        env -u OPENBLAS_CORETYPE build/release/weft bench op matmul --shape 1024,1024,1024 --threads "$threads"
    done
fi
