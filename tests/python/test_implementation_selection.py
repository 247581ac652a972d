"""Which implementation runs refrt's hot nodes on this CPU, read from `parity profile`'s summary. A float 3x3
Conv, a MatMul and a Gemm with constant weights (and a bfloat16 Gemm: native bfloat16 products where the CPU
has AVX-512 BF16), a QDQ MatMul and a QDQ Conv (fused into integer products) and a
QLinearConv run on oneDNN wherever the CPU has AVX2: with an AVX-512 kernel where it has AVX-512, an exact VNNI /
AMX int8 kernel where it has VNNI, and also when OpenBLAS falls back to its generic core
(OPENBLAS_CORETYPE=Prescott, what it does on a CPU newer than its table). The one exception, by measurement: a
float GEMM on an AVX2-only CPU whose OpenBLAS core has AVX2 kernels stays on OpenBLAS. The CPU's features come
from /proc/cpuinfo, not from refrt's own CPUID reading. These tests fail, never skip, when a path is missed,
so the first machine with a feature refrt does not use catches it. Below AVX2 (PARITY_REFRT_ISA=scalar)
nothing may run on oneDNN."""
import json
import os
import subprocess

import ml_dtypes
import numpy as np
import onnx
import pytest
from conftest import PARITY
from onnx import TensorProto, helper, numpy_helper


def _flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


FLAGS = _flags()
AVX2 = {"avx2", "fma"} <= FLAGS
AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= FLAGS
VNNI512 = AVX512 and "avx512_vnni" in FLAGS
BF16_512 = AVX512 and "avx512_bf16" in FLAGS  # Zen 4, Cooper Lake, Sapphire Rapids and newer


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
    xb = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [16, 256])
    _save(tmp_path / "gemm_bf16.onnx", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)], [xb],
          "y", {"w": rng.standard_normal((512, 256)).astype(ml_dtypes.bfloat16),
                "c": rng.standard_normal(512).astype(ml_dtypes.bfloat16)}, out_type=TensorProto.BFLOAT16)
    out["gemm_linear_bf16"] = ("gemm_bf16.onnx", "gemm", "bf16")
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


def _impls(tmp_path, env_extra, threads=2):
    """name -> (impl, summary's machine facts) for every model, profiled by `parity profile`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PARITY_REFRT_ISA", "OPENBLAS_CORETYPE")}
    env.update(env_extra)
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


def _check(impls, level):
    for name, (impl, kind, _) in impls.items():
        where = f"{name} at {level}: {impl}"
        if level == "scalar":
            assert not impl.startswith("onednn"), where
            continue
        if kind == "bf16":
            # Native bfloat16 products (oneDNN's avx512_core_bf16 / AMX kernels) where refrt's level has
            # AVX-512 BF16; below it, the float32 path with the weights widened once.
            if level == "native" and BF16_512:
                assert impl.startswith("onednn") and "bf16" in impl, where
            else:
                assert "bf16" not in impl and (level == "scalar" or impl.startswith("float32 ")), where
            continue
        if kind == "int8":
            # Exact 8-bit products need VNNI (or AMX); without them (or capped below them: avx512 is
            # AVX-512 without VNNI) refrt's own exact int16 kernel runs.
            if level == "native" and VNNI512:
                assert impl.startswith("onednn") and ("vnni" in impl or "amx" in impl), where
            elif level == "avx512":
                assert impl == "refrt", where
            else:
                assert impl == "refrt" or (impl.startswith("onednn") and "vnni" in impl), where
            continue
        machine = impls[name][2]
        openblas_avx2 = machine["openblas_core"] and not machine["openblas_generic"]
        if level == "avx2" and name != "conv3x3" and openblas_avx2:
            # Float GEMMs on an AVX2 CPU stay on OpenBLAS when its core has AVX2 kernels (measured faster than
            # oneDNN 2.6's gemm:jit; dnnl_common.h, float_gemm_prefers_onednn); a generic core goes to oneDNN.
            assert impl == f"openblas sgemm (core {machine['openblas_core']})", where
            continue
        assert impl.startswith("onednn "), where
        if level == "avx2":
            assert "avx2" in impl, where
        else:
            assert "avx512" in impl, where


def test_hot_nodes_take_onednn_at_the_cpus_level(tmp_path):
    assert AVX2, "refrt's development and CI hosts have AVX2; this test is written for them"
    impls = _impls(tmp_path, {})
    _check(impls, "native" if AVX512 else "avx2")
    machine = next(iter(impls.values()))[2]
    assert machine["onednn"].startswith("oneDNN ") and machine["onednn_isa"]
    assert ("avx512" in machine["onednn_isa"]) == AVX512, machine


def test_hot_nodes_take_onednn_when_openblas_does_not_know_the_cpu(tmp_path):
    impls = _impls(tmp_path, {"OPENBLAS_CORETYPE": "Prescott"})
    _check(impls, "native" if AVX512 else "avx2")
    machine = next(iter(impls.values()))[2]
    assert machine["openblas_core"] == "Prescott" and machine["openblas_generic"] is True, machine


def test_avx2_with_a_generic_openblas_takes_onednn(tmp_path):
    impls = _impls(tmp_path, {"PARITY_REFRT_ISA": "avx2", "OPENBLAS_CORETYPE": "Prescott"}, threads=1)
    assert next(iter(impls.values()))[2]["openblas_generic"] is True
    _check(impls, "avx2")
    assert all(impl.startswith("onednn") for impl, kind, _ in impls.values() if kind == "float"), impls


@pytest.mark.parametrize("level", ["scalar", "avx2", "avx512"])
def test_each_isa_cap_takes_its_own_path(tmp_path, level):
    if level == "avx512" and not AVX512:
        pytest.skip("this CPU has no AVX-512 (the cap would run at its own level, tested above)")
    _check(_impls(tmp_path, {"PARITY_REFRT_ISA": level}, threads=1), level)
