#!/usr/bin/env python3
"""Times the recurrent models of scripts/gen_rnn.py (NAME.onnx with NAME.in.INPUT.bin) with ONNX
Runtime, for comparing with `weft run MODEL --input NAME=FILE ... --threads T --repeat N`.

  bench/.venv/bin/python3 scripts/bench_rnn.py bench/rnn/gru_enc_b1.onnx --threads T [--repeat N]

CPU execution provider, intra_op_num_threads=T, inter_op_num_threads=1, sequential execution,
all graph optimizations; 10 warm-up runs, then N timed runs (default 50); prints
"median_ms=<float>" and checks the outputs against NAME.out.OUTPUT.bin (stderr).
"""
import argparse
import os
import statistics
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("onnx")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
    stem = args.onnx[:-5]
    feeds = {}
    for i in s.get_inputs():
        dt = np.int64 if "int64" in i.type else np.float32
        feeds[i.name] = np.fromfile("%s.in.%s.bin" % (stem, i.name), dt).reshape(i.shape)
    outs = s.run(None, feeds)
    for o, y in zip(s.get_outputs(), outs):
        p = "%s.out.%s.bin" % (stem, o.name)
        if os.path.exists(p):
            ref = np.fromfile(p, np.float32)
            print("ort %s: max |ort - ref| = %.3g (max |ref| = %.3g)" % (o.name, np.abs(y.ravel() - ref).max(),
                                                                         np.abs(ref).max()), file=__import__("sys").stderr)
    for _ in range(10):
        s.run(None, feeds)
    t = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        s.run(None, feeds)
        t.append((time.perf_counter() - t0) * 1e3)
    print("median_ms=%.4f" % statistics.median(t))


if __name__ == "__main__":
    main()
