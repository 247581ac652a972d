"""Which implementation runs refrt's heavy nodes, per CPU class, read from `parity profile`'s summary and compared
with the documented path of that class (tests/python/cpu_classes.py, docs/cpu-classes.md): a float 3x3 Conv, a
MatMul and a Gemm with constant weights, a MatMul of two activations, a one-row (decode) MatMul, a bfloat16 Gemm
and Conv,
a QDQ MatMul and a QDQ Conv (fused into integer products) and a QLinearConv. Every class the host has runs here
(a class is refrt's cap + oneDNN's ONEDNN_MAX_CPU_ISA + OpenBLAS's OPENBLAS_CORETYPE); one the host lacks is
skipped naming the missing flags. The CPU's features come from /proc/cpuinfo and the OpenBLAS core from
OpenBLAS itself (openblas_get_corename through ctypes, the library `parity` links, under the class's
environment), never from refrt's own reading. These tests fail, never skip, when a path is missed, so the first
machine with a feature refrt does not use catches it. Below AVX2 (PARITY_REFRT_ISA=scalar) nothing may run on
oneDNN."""
import json
import os
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
import pytest
from conftest import PARITY
from cpu_classes import CLASS_VARIABLES, CLASSES, expected, host_flags, missing, onednn_isa
from onnx import TensorProto, helper, numpy_helper

FLAGS = host_flags()
AVX2 = {"avx2", "fma"} <= FLAGS
AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= FLAGS
HOST_CLASSES = [c for c in CLASSES if not missing(c, FLAGS)]
# The class this host is with nothing forced: its widest AVX-512 class, else avx2_vnni / avx2.
NATIVE = ([c for c in HOST_CLASSES if c.startswith("avx512") or c == "amx"] or HOST_CLASSES or ["none"])[-1]


def _save(path, nodes, inputs, output, inits, opset=18, out_type=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(output, out_type, [])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _models(tmp_path):
    """name -> (model path, the node whose implementation is checked, kind: float or int8)."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    out = {}
    x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 28, 28])
    x2 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 256])
    _save(tmp_path / "conv.onnx", [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", pads=[1, 1, 1, 1])],
          [x4], "y", {"w": rng.standard_normal((64, 32, 3, 3)).astype(f32), "b": rng.standard_normal(64).astype(f32)})
    out["conv3x3"] = ("conv.onnx", "conv", "float")
    _save(tmp_path / "matmul.onnx", [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], [x2], "y",
          {"w": rng.standard_normal((256, 512)).astype(f32)})
    out["matmul_weights"] = ("matmul.onnx", "matmul", "float")
    _save(tmp_path / "gemm.onnx", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)], [x2], "y",
          {"w": rng.standard_normal((512, 256)).astype(f32), "c": rng.standard_normal(512).astype(f32)})
    out["gemm_linear"] = ("gemm.onnx", "gemm", "float")
    xw = helper.make_tensor_value_info("w", TensorProto.FLOAT, [256, 512])
    _save(tmp_path / "matmul_act.onnx", [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], [x2, xw], "y",
          {})
    out["matmul_activations"] = ("matmul_act.onnx", "matmul", "float")
    x1 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])
    _save(tmp_path / "matmul_decode.onnx", [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], [x1], "y",
          {"w": rng.standard_normal((256, 512)).astype(f32)})
    out["matmul_decode"] = ("matmul_decode.onnx", "matmul", "float")
    _save(tmp_path / "gemm_decode.onnx", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)],
          [x1], "y", {"w": rng.standard_normal((512, 256)).astype(f32), "c": rng.standard_normal(512).astype(f32)})
    out["gemm_decode"] = ("gemm_decode.onnx", "gemm", "float")
    xb = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [16, 256])
    _save(tmp_path / "gemm_bf16.onnx", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)], [xb],
          "y", {"w": rng.standard_normal((512, 256)).astype(ml_dtypes.bfloat16),
                "c": rng.standard_normal(512).astype(ml_dtypes.bfloat16)}, out_type=TensorProto.BFLOAT16)
    out["gemm_linear_bf16"] = ("gemm_bf16.onnx", "gemm", "bf16")
    xc = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 32, 28, 28])
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", pads=[1, 1, 1, 1])
    _save(tmp_path / "conv_bf16.onnx", [conv], [xc], "y",
          {"w": rng.standard_normal((64, 32, 3, 3)).astype(ml_dtypes.bfloat16),
           "b": rng.standard_normal(64).astype(ml_dtypes.bfloat16)}, opset=22, out_type=TensorProto.BFLOAT16)
    out["conv3x3_bf16"] = ("conv_bf16.onnx", "conv", "bf16")
    bf16 = TensorProto.BFLOAT16
    attention = [helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
                 helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale"),
                 helper.make_node("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
                 helper.make_node("MatMul", ["p", "v"], ["y"], name="pv")]
    _save(tmp_path / "attention_decode_bf16.onnx", attention,
          [helper.make_tensor_value_info("q", bf16, [1, 4, 1, 32]),
           helper.make_tensor_value_info("kt", bf16, [1, 4, 32, 300]),
           helper.make_tensor_value_info("v", bf16, [1, 4, 300, 32])], "y",
          {"scale": np.array(0.125, ml_dtypes.bfloat16)}, out_type=bf16)
    out["attention_decode_bf16"] = ("attention_decode_bf16.onnx", "qk", "bf16")  # the fused node keeps its name
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dqx"),
             helper.make_node("DequantizeLinear", ["w", "ws"], ["wf"], name="dqw", axis=1),
             helper.make_node("MatMul", ["xf", "wf"], ["acc"], name="qmatmul"),
             helper.make_node("QuantizeLinear", ["acc", "ys", "yz"], ["yq"], name="qy"),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dqy")]
    _save(tmp_path / "qdq_matmul.onnx", nodes, [x2], "y",
          {"xs": np.array(0.02, f32), "xz": np.array(128, np.uint8),
           "w": rng.integers(-127, 128, (256, 512)).astype(np.int8), "ws": np.full(512, 0.01, f32),
           "ys": np.array(0.05, f32), "yz": np.array(128, np.uint8)}, opset=13)
    out["qdq_matmul"] = ("qdq_matmul.onnx", "qmatmul", "int8")
    conv_nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
                  helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dqx"),
                  helper.make_node("DequantizeLinear", ["w", "ws"], ["wf"], name="dqw", axis=0),
                  helper.make_node("Conv", ["xf", "wf"], ["acc"], name="qconv", pads=[1, 1, 1, 1]),
                  helper.make_node("QuantizeLinear", ["acc", "ys", "yz"], ["yq"], name="qy"),
                  helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dqy")]
    w8 = rng.integers(-127, 128, (64, 32, 3, 3)).astype(np.int8)
    _save(tmp_path / "qdq_conv.onnx", conv_nodes, [x4], "y",
          {"xs": np.array(0.02, f32), "xz": np.array(128, np.uint8), "w": w8, "ws": np.full(64, 0.01, f32),
           "ys": np.array(0.05, f32), "yz": np.array(128, np.uint8)}, opset=13)
    out["qdq_conv"] = ("qdq_conv.onnx", "qconv", "int8")
    xq = helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 32, 28, 28])
    qlinear = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], name="qlinear",
                               pads=[1, 1, 1, 1])
    graph = helper.make_graph([qlinear], "g", [xq], [helper.make_tensor_value_info("y", TensorProto.UINT8, [])],
                              [numpy_helper.from_array(v, k) for k, v in {
                                  "xs": np.array(0.02, f32), "xz": np.array(128, np.uint8), "w": w8,
                                  "ws": np.full(64, 0.01, f32), "wz": np.zeros(64, np.int8),
                                  "ys": np.array(0.05, f32), "yz": np.array(128, np.uint8)}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "qlinear_conv.onnx"))
    out["qlinear_conv"] = ("qlinear_conv.onnx", "qlinear", "int8")
    return out


def _class_env(extra):
    env = {k: v for k, v in os.environ.items() if k not in CLASS_VARIABLES}
    env.update(extra)
    return env


def _impls(tmp_path, env_extra, threads=2):
    """name -> (impl, kind, summary's machine facts) for every model, profiled by `parity profile`."""
    env = _class_env(env_extra)
    result = {}
    for name, (file, node, kind) in _models(tmp_path).items():
        out = tmp_path / f"prof_{name}"
        proc = subprocess.run([str(PARITY), "profile", str(tmp_path / file), "--random", "--threads", str(threads),
                               "--runs", "1", "--warmup", "0", "--out", str(out)],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads((out / "summary.json").read_text())
        impl = [r["impl"] for r in summary["by_node"] if r["node"] == node]
        assert impl, f"{name}: node {node} not in the profile: {[r['node'] for r in summary['by_node']]}"
        result[name] = (impl[0], kind, summary["machine"])
    return result


def _openblas_library():
    """The OpenBLAS `parity` runs with (its dynamic linker's answer)."""
    out = subprocess.run(["ldd", str(PARITY)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"(libopenblas[^ ]*) => (\S+)", out) or re.search(r"(libblas[^ ]*) => (\S+)", out)
    assert found, f"parity links no OpenBLAS: {out}"
    return found.group(2)


def _openblas_core(env_extra):
    """OpenBLAS's core as OpenBLAS itself reports it under the class's environment (it reads OPENBLAS_CORETYPE
    when the library loads): an oracle apart from refrt's profile."""
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); lib.openblas_get_corename.restype = ctypes.c_char_p;"
            " print(lib.openblas_get_corename().decode().strip())")
    proc = subprocess.run([sys.executable, "-c", code, _openblas_library()], capture_output=True, text=True,
                          env=_class_env(env_extra), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _check_class(impls, cls, core):
    """Every node took its documented path under `cls` (OpenBLAS on `core`); the machine facts agree."""
    wrong = []
    for name, (impl, _, machine) in impls.items():
        want = expected(cls, name, core)
        if not re.fullmatch(want, impl):
            wrong.append(f"{name}: {impl!r}, documented {want!r}")
        if machine["openblas_core"] != core:
            wrong.append(f"{name}: profile says OpenBLAS core {machine['openblas_core']!r}, OpenBLAS says {core!r}")
        if machine["onednn_isa"] != onednn_isa(cls):
            wrong.append(f"{name}: oneDNN ISA {machine['onednn_isa']!r}, the class's is {onednn_isa(cls)!r}")
    assert not wrong, f"class {cls}:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize("cls", list(CLASSES))
def test_each_cpu_class_takes_its_documented_path(tmp_path, cls):
    if missing(cls, FLAGS):
        pytest.skip(f"this host lacks {', '.join(missing(cls, FLAGS))} (/proc/cpuinfo)")
    env = CLASSES[cls][0]
    _check_class(_impls(tmp_path, env), cls, _openblas_core(env))


def test_the_host_with_nothing_forced_is_its_own_class(tmp_path):
    assert AVX2, "refrt's development and CI hosts have AVX2; this test is written for them"
    _check_class(_impls(tmp_path, {}), NATIVE, _openblas_core({}))


def test_a_wrong_path_or_label_fails_the_check(tmp_path):
    """The check itself can fail: a forced other path (oneDNN's matmul or refrt's packed GEMM switched off), a planted
    wrong label, and a profile whose OpenBLAS core disagrees with OpenBLAS's own answer are each caught."""
    core = _openblas_core({})
    impls = _impls(tmp_path, {})
    _check_class(impls, NATIVE, core)
    # products with weights off their documented path: oneDNN's matmul switched off at the AVX-512 levels, refrt's
    # packed AVX2 GEMM at the AVX2 level
    forced = _impls(tmp_path, {"PARITY_REFRT_MATMUL_DNNL" if AVX512 else "PARITY_REFRT_PACKED_SGEMM": "0"})
    with pytest.raises(AssertionError, match="matmul_weights"):
        _check_class(forced, NATIVE, core)
    if AVX512:  # the packed AVX-512 GEMV switched off: the decode nodes fall back to the AVX2 one
        forced = _impls(tmp_path, {"PARITY_REFRT_PACKED_GEMV": "0"})
        with pytest.raises(AssertionError, match="gemm_decode"):
            _check_class(forced, NATIVE, core)
    for name, (impl, kind, machine) in impls.items():
        for wrong in ("refrt", "refrt gemv (avx2)", "refrt packed gemv (avx512)", f"openblas sgemm (core {core})",
                      "onednn brg:avx512_core_vnni", "onednn jit_uni_int8:avx2_vnni",
                      "float32 onednn brg:avx512_core"):
            if wrong == impl:
                continue
            planted = dict(impls, **{name: (wrong, kind, machine)})
            with pytest.raises(AssertionError, match=name):
                _check_class(planted, NATIVE, core)
    name, (impl, kind, machine) = next(iter(impls.items()))
    planted = dict(impls, **{name: (impl, kind, dict(machine, openblas_core=core + "X"))})
    with pytest.raises(AssertionError, match="OpenBLAS says"):
        _check_class(planted, NATIVE, core)


def test_below_avx2_nothing_runs_on_onednn(tmp_path):
    for name, (impl, _, _) in _impls(tmp_path, {"PARITY_REFRT_ISA": "scalar"}, threads=1).items():
        assert not impl.startswith("onednn") and "gemv (avx" not in impl, f"{name} at scalar: {impl}"
