#!/usr/bin/env python3
"""Single-op ONNX models of the convolutions and pools CNNs spend their time in, for per-kernel
comparisons of weft with ONNX Runtime:

  /usr/bin/python3 bench/conv_ops.py OUTDIR          (needs Debian's python3-onnx and numpy)

writes OUTDIR/NAME.onnx and OUTDIR/NAME.input.bin (random input, fixed seed) for each model below
(opset 13, batch 1, random weights), then, for example:

  build/rel/weft run OUTDIR/stem_silu.onnx --input OUTDIR/stem_silu.input.bin --threads 1 --repeat 200
  env -u OPENBLAS_CORETYPE bench/.venv/bin/python3 bench/ort_peer.py OUTDIR/stem_silu.onnx --threads 1 --repeat 200

NAME           what (a layer of which network)
stem_silu      3 -> 32 channels, 3x3 stride 2 at 224x224, SiLU (EfficientNet's stem)
stem_relu6     the same with Clip(0, 6) (MobileNetV2's stem)
stem7          3 -> 64, 7x7 stride 2 at 224x224, ReLU (ResNet's stem)
dw_s2_96       depthwise 3x3 stride 2, 96 channels at 112x112, SiLU
dw_s1_32       depthwise 3x3, 32 channels at 112x112, SiLU
dw5_s2_144     depthwise 5x5 stride 2, 144 channels at 56x56, SiLU
dw3_14_480     depthwise 3x3, 480 channels at 14x14, SiLU
dw5_14_672     depthwise 5x5, 672 channels at 14x14, SiLU
dw5_7_1152     depthwise 5x5, 1152 channels at 7x7, SiLU
pw_16_96       pointwise 16 -> 96 at 112x112, SiLU
pw_64_256_56   pointwise 64 -> 256 at 56x56, ReLU (ResNet-50's bottleneck 1x1 convs, this and the next five)
pw_512_128_28  pointwise 512 -> 128 at 28x28, ReLU
pw_256_1024_14 pointwise 256 -> 1024 at 14x14, ReLU
pw_1024_256_14 pointwise 1024 -> 256 at 14x14, ReLU
pw_512_2048_7  pointwise 512 -> 2048 at 7x7, ReLU
pw_2048_512_7  pointwise 2048 -> 512 at 7x7, ReLU
pw_s2_512_1024 pointwise stride 2, 512 -> 1024 at 28x28 (ResNet-50's downsampling shortcuts)
pw_s2_1024_2048 pointwise stride 2, 1024 -> 2048 at 14x14
maxpool64      3x3 stride 2 max-pool, 64 channels at 112x112 (ResNet)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, C, H, F, OH, inits, rng):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, F, OH, OH])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name + ".onnx"))
    rng.standard_normal((1, C, H, H)).astype(np.float32).tofile(os.path.join(out, name + ".input.bin"))


def conv(out, rng, name, C, F, H, k, s, p, group, act):
    W = (rng.standard_normal((F, C // group, k, k)) * 0.2).astype(np.float32)
    B = (rng.standard_normal(F) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c" if act else "y"], kernel_shape=[k, k], strides=[s, s],
                              pads=[p] * 4, group=group)]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")]
    if act == "silu":
        nodes += [helper.make_node("Sigmoid", ["c"], ["g"]), helper.make_node("Mul", ["c", "g"], ["y"])]
    elif act == "relu":
        nodes += [helper.make_node("Relu", ["c"], ["y"])]
    elif act == "relu6":
        nodes += [helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
    save(out, name, nodes, C, H, F, (H + 2 * p - k) // s + 1, inits, rng)


def main(argv):
    if len(argv) != 2:
        print("usage: bench/conv_ops.py OUTDIR", file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    conv(out, rng, "stem_silu", 3, 32, 224, 3, 2, 1, 1, "silu")
    conv(out, rng, "stem_relu6", 3, 32, 224, 3, 2, 1, 1, "relu6")
    conv(out, rng, "stem7", 3, 64, 224, 7, 2, 3, 1, "relu")
    conv(out, rng, "dw_s2_96", 96, 96, 112, 3, 2, 1, 96, "silu")
    conv(out, rng, "dw_s1_32", 32, 32, 112, 3, 1, 1, 32, "silu")
    conv(out, rng, "dw5_s2_144", 144, 144, 56, 5, 2, 2, 144, "silu")
    conv(out, rng, "dw3_14_480", 480, 480, 14, 3, 1, 1, 480, "silu")
    conv(out, rng, "dw5_14_672", 672, 672, 14, 5, 1, 2, 672, "silu")
    conv(out, rng, "dw5_7_1152", 1152, 1152, 7, 5, 1, 2, 1152, "silu")
    conv(out, rng, "pw_16_96", 16, 96, 112, 1, 1, 0, 1, "silu")
    for C, F, H in ((64, 256, 56), (512, 128, 28), (256, 1024, 14), (1024, 256, 14), (512, 2048, 7), (2048, 512, 7)):
        conv(out, rng, "pw_%d_%d_%d" % (C, F, H), C, F, H, 1, 1, 0, 1, "relu")
    for C, F, H in ((512, 1024, 28), (1024, 2048, 14)):
        conv(out, rng, "pw_s2_%d_%d" % (C, F), C, F, H, 1, 2, 0, 1, None)
    pool = [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)]
    save(out, "maxpool64", pool, 64, 112, 64, 56, [], rng)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
