"""Writes the ONNX backend node tests of the installed onnx package, in the backend-test layout.

    gen_node_tests.py OUT_DIR

Recent onnx wheels no longer ship the node test files, only the generators that `expect()` the
cases; this script runs those generators and writes OUT_DIR/<test_name>/model.onnx and
test_data_set_<k>/{input,output}_<i>.pb. Inputs or outputs that are not plain tensors (sequences,
optionals, maps) are written as their onnx protos (SequenceProto, OptionalProto, MapProto); the runner
reads sequences and optionals, and skips maps.

The generators stamp most models with the package's newest opset (28 for onnx 1.23). refrt
implements up to REFRT_MAX_OPSET; a model is re-stamped to that opset when none of its ops (in any
subgraph) has a schema version newer than it, i.e. when the test means exactly the same thing at that
opset. Models that need a newer schema keep their opset and are skipped by the runner.
"""

import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper


def proto_for(value, value_type, name):
    if value_type.HasField("sequence_type"):
        return numpy_helper.from_list(value, name)
    if value_type.HasField("optional_type"):
        return numpy_helper.from_optional(value, name)
    if value_type.HasField("map_type"):
        return numpy_helper.from_dict(value, name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


REFRT_MAX_OPSET = 23


def nodes_of(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.HasField("g"):
                yield from nodes_of(a.g)
            for g in a.graphs:
                yield from nodes_of(g)


def same_interface(old, new):
    """Whether two schema versions of one op take the same attributes, inputs and outputs (the
    versions after 23 mostly widen type lists: int4, float4, float8 variants)."""
    def formal(params):
        return [(p.name, p.option) for p in params]
    return (sorted(old.attributes) == sorted(new.attributes) and formal(old.inputs) == formal(new.inputs)
            and formal(old.outputs) == formal(new.outputs))


def restamp_opset(model):
    """Lowers the ai.onnx opset to REFRT_MAX_OPSET when every op has the same interface there and the
    lowered model passes onnx.checker with full type checking (so its dtypes are allowed at that opset)."""
    imports = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if len(imports) != 1 or imports[0].version <= REFRT_MAX_OPSET:
        return False
    version = imports[0].version
    for n in nodes_of(model.graph):
        if n.domain not in ("", "ai.onnx"):
            continue
        try:
            new = onnx.defs.get_schema(n.op_type, max_inclusive_version=version, domain="")
            old = onnx.defs.get_schema(n.op_type, max_inclusive_version=REFRT_MAX_OPSET, domain="")
        except onnx.defs.SchemaError:
            return False
        if new.since_version > REFRT_MAX_OPSET and not same_interface(old, new):
            return False
    lowered = onnx.ModelProto()
    lowered.CopyFrom(model)
    [o for o in lowered.opset_import if o.domain in ("", "ai.onnx")][0].version = REFRT_MAX_OPSET
    try:
        onnx.checker.check_model(lowered, full_check=True)
    except Exception:  # noqa: BLE001 - any checker complaint means "not the same test at 23"
        return False
    imports[0].version = REFRT_MAX_OPSET
    return True


def main():
    out_dir = sys.argv[1]
    warnings.simplefilter("ignore")  # the generators compute expected overflows and log(0)
    import onnx.backend.test.case.node as node_cases

    cases = node_cases.collect_testcases(None)
    restamped = 0
    tmp = out_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for case in cases:
        case_dir = os.path.join(tmp, case.name)
        os.makedirs(case_dir, exist_ok=True)
        restamped += restamp_opset(case.model)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for k, (inputs, outputs) in enumerate(case.data_sets):
            set_dir = os.path.join(case_dir, f"test_data_set_{k}")
            os.makedirs(set_dir)
            for kind, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
                for i, value in enumerate(values):
                    proto = proto_for(value, infos[i].type, infos[i].name)
                    with open(os.path.join(set_dir, f"{kind}_{i}.pb"), "wb") as f:
                        f.write(proto.SerializeToString())
    # The node tests have no case of SequenceErase or ConcatFromSequence; onnx's own "simple" model tests,
    # shipped as files in the same layout, do (sequence graphs of opset 12). Copied as they are.
    simple = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "simple")
    models = (
        sorted(d for d in os.listdir(simple) if d.startswith("test_sequence_model")) if os.path.isdir(simple) else []
    )
    for d in models:
        shutil.copytree(os.path.join(simple, d), os.path.join(tmp, d))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    with open(os.path.join(out_dir, "stamp"), "w") as f:
        f.write(f"{len(cases)} node tests and {len(models)} sequence model tests from onnx {onnx.__version__}\n")
    print(f"wrote {len(cases)} ONNX backend node tests and {len(models)} sequence model tests (onnx "
          f"{onnx.__version__}) to {out_dir}; {restamped} re-stamped to opset {REFRT_MAX_OPSET}")


if __name__ == "__main__":
    main()
