#!/usr/bin/python3
"""Writes the malformed ONNX models the CLI tests feed to `weft run` (run by hand; the outputs
are committed). Needs python3-onnx (Debian 12: apt-get install python3-onnx).

  unsupported_op.onnx      a node of op type "FooBar" (node "mystery")
  bad_initializer.onnx     initializer "W" with dims [4, 4] but 12 floats of raw data
  external_escape.onnx     initializer "W" stored externally at "../../etc/passwd"
  tiny_relu.onnx           a valid model: y = Relu(x), x of shape [2, 3] (for wrong-shape tests)
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = os.path.dirname(os.path.abspath(__file__)) if len(sys.argv) < 2 else sys.argv[1]


def save(model, name):
    onnx.save(model, os.path.join(out, name), save_as_external_data=False)


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
opset = [helper.make_opsetid("", 13)]

g = helper.make_graph([helper.make_node("FooBar", ["x"], ["y"], name="mystery")], "g", [x], [y])
save(helper.make_model(g, opset_imports=opset), "unsupported_op.onnx")

w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4, 4], raw_data=b"\0" * 48)
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x], [y], initializer=[w])
save(helper.make_model(g, opset_imports=opset), "bad_initializer.onnx")

w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 3], data_location=TensorProto.EXTERNAL)
w.external_data.add(key="location", value="../../etc/passwd")
xw = helper.make_tensor_value_info("W", TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"], name="add")], "g", [x], [y], initializer=[w])
save(helper.make_model(g, opset_imports=opset), "external_escape.onnx")

g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
save(helper.make_model(g, opset_imports=opset), "tiny_relu.onnx")
