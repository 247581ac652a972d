"""onnx_session seeds built from the signal / selection / loss / geometry / ROI case tables
(tests/refrt/cases): the first row of each op, its inputs turned into initializers, so that loading
the model constant-folds it and the fuzzer mutates real kernel inputs, not only node attributes.

    python tests/fuzz/standard_op_seeds.py OUT_DIR      (make_seeds.py calls standard_op_models())
"""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["signal", "selection", "losses", "image_geometry", "roi", "deform_conv"]


def standard_op_models():
    """(name, serialized ModelProto) per op of the tables above."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rows = []

    def case(name, nodes, inputs, outputs, opset=18, initializers=None, **_):
        rows.append((name, nodes, {**(initializers or {}), **inputs}, outputs, opset))

    def node(op, ins, outs, **attrs):
        return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)

    api = types.SimpleNamespace(case=case, node=node, np=np, helper=helper, TensorProto=TensorProto,
                                RNG=np.random.default_rng(0))
    for table in TABLES:
        spec = importlib.util.spec_from_file_location(f"seed_{table}", ROOT / "tests" / "refrt" / "cases" / f"{table}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.build(api)
    seen, out = set(), []
    for name, nodes, inits, outputs, opset in rows:
        op = nodes[0].op_type
        if op in seen:
            continue
        seen.add(op)
        graph = helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None)
                                                    for n in outputs],
                                  [numpy_helper.from_array(a, n) for n, a in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8 if opset <= 18 else 10
        out.append((f"op_{op}", model.SerializeToString()))
    return out


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in standard_op_models():
        (folder / f"{name}.onnx").write_bytes(data)
