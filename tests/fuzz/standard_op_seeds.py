"""onnx_session seeds built from the signal / selection / loss / geometry / ROI / sequence case tables
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
    from onnx import TensorProto, helper

    rows = []

    def case(name, nodes, inputs, outputs, opset=18, initializers=None, **_):
        rows.append((name, nodes, {**(initializers or {}), **inputs}, outputs, opset))

    def node(op, ins, outs, **attrs):
        return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)

    rng = np.random.default_rng(0)
    api = types.SimpleNamespace(
        case=case,
        node=node,
        np=np,
        helper=helper,
        TensorProto=TensorProto,
        RNG=rng,
        rand=lambda *s, dtype=np.float32, low=-1.0, high=1.0: rng.uniform(low, high, s).astype(dtype),
        ints=lambda *s, dtype=np.int64, low=-9, high=10: rng.integers(low, high, s).astype(dtype),
    )
    for table in TABLES:
        spec = importlib.util.spec_from_file_location(
            f"seed_{table}", ROOT / "tests" / "refrt" / "cases" / f"{table}.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.build(api)
    seen, out = set(), []
    for name, nodes, inits, outputs, opset in rows:
        op = nodes[0].op_type
        if op in seen:
            continue
        seen.add(op)
        out.append((f"op_{op}", seed_model(name, nodes, inits, outputs, opset)))
    rows.clear()  # api.case appends the sequence table's rows here
    out += sequence_op_models(api, rows, seen)
    return out


def seed_model(name, nodes, inits, outputs, opset):
    """Inputs as initializers; a sequence input (a list of arrays) built by SequenceConstruct from them."""
    from onnx import TensorProto, helper, numpy_helper
    tensors, built = {}, []
    for n, a in inits.items():
        if isinstance(a, list):
            parts = [f"{n}_{k}" for k in range(len(a))]
            tensors.update(zip(parts, a))
            built.append(helper.make_node("SequenceConstruct", parts, [n], name=f"construct_{n}"))
        else:
            tensors[n] = a
    outs = [helper.make_tensor_sequence_value_info(n, TensorProto.UNDEFINED, None) if isinstance(a, list)
            else helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n, a in outputs.items()]
    graph = helper.make_graph(built + list(nodes), name, [], outs,
                              [numpy_helper.from_array(a, n) for n, a in tensors.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 18 else 10
    return model.SerializeToString()


SEQUENCE_OPS = ["SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceInsert", "SequenceErase",
                "SequenceLength", "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional",
                "OptionalHasElement", "OptionalGetElement"]


def sequence_op_models(api, rows, seen):
    """One seed per sequence/optional op: the first row of tests/refrt/cases/sequences.py that uses it."""
    spec = importlib.util.spec_from_file_location("seed_sequences", ROOT / "tests" / "refrt" / "cases" / "sequences.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(api)
    out = []
    for op in SEQUENCE_OPS:
        row = next((r for r in rows if any(n.op_type == op for n in r[1])), None)
        if row and op not in seen:
            seen.add(op)
            out.append((f"op_{op}", seed_model(*row)))
    return out


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in standard_op_models():
        (folder / f"{name}.onnx").write_bytes(data)
