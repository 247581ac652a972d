"""Seed corpora for the fuzz targets (tests/fuzz/fuzz_<name>.cc), generated, never committed in bulk.

    python tests/fuzz/make_seeds.py OUT [--parity build/parity] [--max-cases N]

Writes OUT/<target>/<seed> for every target:
  pt2, zip        torch.export.save archives of the smaller scenario cases (scenarios/cases) and of
                  three tiny modules (linear, conv + batch-norm buffers, cond)
  program_json    each archive's models/model.json, then NUL, then its weights config
  onnx_session    each archive exported by `parity export` (when the binary exists), one of them with
                  external data, plus hand-built models whose initializer lives in model_dir()'s w.bin
  tensor_proto    the case folders' input/output .pb files and tensors of every dtype
  external_data   byte strings in the target's own encoding (see fuzz_external_data.cc)
"""
from __future__ import annotations

import argparse
import io
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tiny_modules():
    import torch

    class Lin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)

        def forward(self, x):
            return torch.relu(self.fc(x))

    class ConvBn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 2, 3)
            self.bn = torch.nn.BatchNorm2d(2)

        def forward(self, x):
            return self.bn(self.conv(x))

    class Cond(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))

    return [("tiny_linear", Lin(), (torch.randn(2, 3),)), ("tiny_convbn", ConvBn().eval(), (torch.randn(1, 1, 5, 5),)),
            ("tiny_cond", Cond(), (torch.randn(3),))]


def scenario_modules(max_cases: int):
    """The first `max_cases` scenario blocks (zoo models are too large to be good seeds), with their
    dynamic shapes, so that the seeds carry symbolic dims, guards and range constraints."""
    sys.path.insert(0, str(ROOT))
    from scenarios import registry  # noqa: E402

    out = []
    for case in registry.all_cases():
        if len(out) >= max_cases:
            break
        try:
            args, kwargs = case.examples()[0]
            out.append((case.name, case.module(), args, kwargs, case.shapes()))
        except Exception:  # a case that needs more than a module and its inputs: skip it
            continue
    return out


def save_pt2(model, args, kwargs=None, dynamic_shapes=None) -> bytes | None:
    import torch

    try:
        ep = torch.export.export(model, args, kwargs=kwargs or {}, dynamic_shapes=dynamic_shapes)
        buf = io.BytesIO()
        torch.export.save(ep, buf)
        return buf.getvalue()
    except Exception:
        return None


def tensor_seeds():
    import numpy as np
    from onnx import numpy_helper

    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array(3, dtype=np.int64), np.zeros((0, 4), np.float16),
              np.array([True, False]), np.arange(4, dtype=np.int8), np.arange(3, dtype=np.float64),
              np.arange(5, dtype=np.uint16), np.arange(2, dtype=np.int32)]
    out = [numpy_helper.from_array(a, name=f"t{i}").SerializeToString() for i, a in enumerate(arrays)]
    typed = numpy_helper.from_array(np.arange(4, dtype=np.float32), name="typed")
    typed.ClearField("raw_data")
    typed.float_data.extend([0, 1, 2, 3])
    out.append(typed.SerializeToString())
    return out


def external_models():
    from onnx import TensorProto, helper

    models = []
    for location, offset, length in [("w.bin", "0", "16"), ("w.bin", "64", None), ("sub/w.bin", "4", "16"),
                                     ("link.bin", "0", "16"), ("../w.bin", "0", "16")]:
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
        for k, v in [("location", location), ("offset", offset), ("length", length)]:
            if v is not None:
                entry = w.external_data.add()
                entry.key, entry.value = k, v
        graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[w])
        models.append(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())
    return models


def external_data_seeds():
    # dtype, rank, dims..., location kind, entry count, then (key selector, value) per entry.
    def seed(dtype, dims, entries):
        b = bytes([dtype, len(dims)]) + bytes(d for d in dims) + bytes([1, len(entries)])
        for e in entries:
            b += e
        return b

    loc = lambda pick: bytes([0, pick])  # noqa: E731
    off = lambda v: bytes([1, 1]) + struct.pack("<H", v)  # noqa: E731
    length = lambda v: bytes([2, 1]) + struct.pack("<H", v)  # noqa: E731
    return [seed(1, [4], [loc(0), off(0), length(16)]), seed(1, [2, 2], [loc(1), off(64)]),
            seed(7, [3], [loc(3), off(0)]), seed(1, [4], [loc(6), off(0)]), seed(10, [8], [loc(0), off(4095)]),
            seed(1, [9, 9], [loc(0), length(324)]), seed(6, [1], [loc(4)])]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--parity", default=str(ROOT / "build" / "parity"))
    ap.add_argument("--max-cases", type=int, default=12)
    ap.add_argument("--max-bytes", type=int, default=256 * 1024, help="skip archives larger than this")
    args = ap.parse_args()
    out = Path(args.out)
    dirs = {t: out / t for t in ["pt2", "zip", "program_json", "onnx_session", "tensor_proto", "external_data"]}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)

    archives = {}
    for name, model, margs, kwargs, shapes in [(n, m, a, None, None) for n, m, a in tiny_modules()] + \
            scenario_modules(args.max_cases):
        data = save_pt2(model, margs, kwargs, shapes)
        if data and len(data) <= args.max_bytes:
            archives[name] = data
    for name, data in archives.items():
        (dirs["pt2"] / f"{name}.pt2").write_bytes(data)
        (dirs["zip"] / f"{name}.pt2").write_bytes(data)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            model_json = next((z.read(n) for n in z.namelist() if n.endswith("models/model.json")), None)
            config = next((z.read(n) for n in z.namelist() if n.endswith("weights/model_weights_config.json")), b"")
        if model_json:
            (dirs["program_json"] / f"{name}.json").write_bytes(model_json + b"\0" + config)
    if Path(args.parity).exists():
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, data) in enumerate(archives.items()):
                pt2 = Path(tmp) / f"{name}.pt2"
                pt2.write_bytes(data)
                onnx_path = Path(tmp) / f"{name}.onnx"
                extra = ["--external-data", "--external-data-threshold", "16"] if i == 0 else []
                res = subprocess.run([args.parity, "export", str(pt2), "-o", str(onnx_path), *extra],
                                     capture_output=True)
                if res.returncode == 0:
                    (dirs["onnx_session"] / f"{name}.onnx").write_bytes(onnx_path.read_bytes())
    for i, m in enumerate(external_models()):
        (dirs["onnx_session"] / f"external_{i}.onnx").write_bytes(m)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from standard_op_seeds import standard_op_models
    for name, m in standard_op_models():
        (dirs["onnx_session"] / f"{name}.onnx").write_bytes(m)
    for i, t in enumerate(tensor_seeds()):
        (dirs["tensor_proto"] / f"tensor_{i}.pb").write_bytes(t)
    for i, s in enumerate(external_data_seeds()):
        (dirs["external_data"] / f"seed_{i}").write_bytes(s)
    for t, d in dirs.items():
        print(f"{t}: {len(list(d.iterdir()))} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
