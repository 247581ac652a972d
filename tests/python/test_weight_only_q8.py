"""refrt's int8-activation mode of weight-only products (weight_only_accuracy=4, refrt/kernels/weight_only_q8.h)
against a numpy oracle, on every instruction path this host can run: AMX tiles (16 rows at a time, 4-bit weights),
AVX-512 VNNI, AVX-VNNI (refrt capped at avx2),
AVX2's vpmaddubsw (avx2 with AVX-VNNI masked) and scalar, each forced in its own process (PARITY_REFRT_ISA,
PARITY_REFRT_MASK_FEATURES). A path the host lacks is skipped naming the missing /proc/cpuinfo flags.

The oracle follows the documented rule, not refrt's code: numpy quantizes each row's block of K (the weights'
group, at most 256 long) to int8 with scale amax / 127 (float32 127 / amax, float32 product, round half to even),
sums the int8 x (q - zp) products exactly in int64 and scales each block's sum by float32(sa * sw) in float64. The
kernel's only other roundings are one per block (fma into a float32 sum), so it must agree within
(blocks + 2) float32 ulps of the sum of the blocks' magnitudes. Every path must also give the same bits (the same
integers, then the same float operations). The profile label names the path that ran, and the exact mode stays
the default.

Against exact float (eager torch on the dequantized weights) the int8 mode is bounded by the activations' rounding:
each |x - sa * qa| <= sa / 2, so |y - y_exact| <= sum over blocks (sa / 2) * sum_k |w[k, j]| (plus float rounding).
On the LLM family (a torchao int4 LLaMA block, captured and exported) it stays within the documented bound of
docs/weight-only.md (2e-2 of the output's largest magnitude)."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from conftest import PARITY, run_capture
from cpu_classes import CLASS_VARIABLES, host_flags
from onnx import TensorProto, helper, numpy_helper

import parity.runtime as rt

VARIABLES = (*CLASS_VARIABLES, "PARITY_REFRT_WEIGHT_ONLY_ACCURACY")
# path -> (environment, /proc/cpuinfo flags it needs)
PATHS = {
    "amx": ({"PARITY_REFRT_ISA": "amx"},
            {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "amx_tile", "amx_int8"}),
    "avx512_vnni": ({"PARITY_REFRT_ISA": "avx512_vnni"},
                    {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"}),
    "avx_vnni": ({"PARITY_REFRT_ISA": "avx2"}, {"avx2", "fma", "avx_vnni"}),
    "avx2": ({"PARITY_REFRT_ISA": "avx2", "PARITY_REFRT_MASK_FEATURES": "avx_vnni"}, {"avx2", "fma"}),
    "scalar": ({"PARITY_REFRT_ISA": "scalar"}, set()),
}
RANGE = {"int4": (-8, 7), "uint4": (0, 15), "int8": (-128, 127), "uint8": (0, 255)}
ONNX_TYPE = {"int4": TensorProto.INT4, "uint4": TensorProto.UINT4, "int8": TensorProto.INT8,
             "uint8": TensorProto.UINT8}


FLAGS = host_flags()

# name -> (K, N, block (None: per column), kind, zero points, rows, Gemm with bias)
ROWS = {
    "int4_g32_decode": (256, 200, 32, "int4", False, 1, False),
    "int4_g32_zp_rows5": (256, 130, 32, "int4", True, 5, False),
    "uint4_g128_zp_prefill": (384, 96, 128, "uint4", True, 33, False),
    "int4_g16_k_ragged": (100, 64, 16, "int4", True, 3, False),  # last group 4 long, padded inside refrt
    "int8_g32_zp": (128, 72, 32, "int8", True, 6, False),
    "uint8_g64_gemm_bias": (192, 40, 64, "uint8", True, 17, True),
    "int8_per_column": (600, 48, None, "int8", False, 2, False),  # one group of 600: blocks of 256, 256, 88
    "int4_g32_one_column": (64, 1, 32, "int4", True, 4, False),
    # 16 rows and more: AMX tiles where the host has them (the rows past the last 16 on AVX-512 VNNI)
    "int4_g32_prefill_rows40": (256, 136, 32, "int4", False, 40, False),  # last tile 8 columns wide
    "uint4_g16_ragged_rows18_zp": (100, 64, 16, "uint4", True, 18, False),
    "int4_g256_rows16_gemm_zp": (512, 80, 256, "int4", True, 16, True),  # four 64-k chunks a block
    "int4_per_column_rows17": (600, 48, None, "int4", False, 17, False),  # blocks of 256, 256, 88
}


def _case(name, rng):
    k, n, block, kind, zp, m, gemm = ROWS[name]
    lo, hi = RANGE[kind]
    q = rng.integers(lo, hi + 1, size=(k, n))
    groups = 1 if block is None else -(-k // block)
    scale = rng.uniform(0.002, 0.05, size=(groups, n)).astype(np.float32)
    z = rng.integers(lo, hi + 1, size=(groups, n)) if zp else np.zeros((groups, n), np.int64)
    x = rng.standard_normal((m, k)).astype(np.float32)
    x[0, : min(k, 8)] *= 20  # one block with a large amax
    if m > 2:
        x[2, :] = 0  # an all-zero row: scale 0, zero output
    bias = rng.standard_normal(n).astype(np.float32) if gemm else None
    # DequantizeLinear: blocked along K (opset 21), or per column (axis 1) with 1-D scale / zero point.
    if block is None:
        s_t, z_t, attrs = scale[0], z[0], dict(axis=1)
    else:
        s_t, z_t, attrs = scale, z, dict(axis=0, block_size=block)
    inits = [helper.make_tensor("w", ONNX_TYPE[kind], q.shape, q.flatten().tolist()),
             helper.make_tensor("ws", TensorProto.FLOAT, s_t.shape, s_t.flatten())]
    dq_in = ["w", "ws"]
    if zp:
        inits.append(helper.make_tensor("wz", ONNX_TYPE[kind], z_t.shape, z_t.flatten().tolist()))
        dq_in.append("wz")
    nodes = [helper.make_node("DequantizeLinear", dq_in, ["wd"], **attrs)]
    if gemm:
        inits.append(helper.make_tensor("b", TensorProto.FLOAT, [n], bias))
        nodes.append(helper.make_node("Gemm", ["x", "wd", "b"], ["y"]))
    else:
        nodes.append(helper.make_node("MatMul", ["x", "wd"], ["y"]))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return model, x, (q, scale, z, block if block is not None else k, bias)


def oracle(x, q, scale, z, group, bias):
    """(expected output, the bound on the kernel's float rounding) by the documented rule (module docstring)."""
    m, k = x.shape
    y = np.zeros((m, q.shape[1]))
    magnitude = np.zeros_like(y)
    blocks = 0
    for g0 in range(0, k, group):
        for b0 in range(g0, min(k, g0 + group), 256):
            b1 = min(b0 + 256, g0 + group, k)
            blocks += 1
            xb = x[:, b0:b1]
            amax = np.abs(xb).max(axis=1).astype(np.float32)
            safe = np.where(amax > 0, amax, np.float32(1))
            inv = np.where(amax > 0, np.float32(127) / safe, np.float32(0)).astype(np.float32)
            qa = np.rint((xb * inv[:, None]).astype(np.float32)).astype(np.int64)
            sa = (amax / np.float32(127)).astype(np.float32)
            d = qa @ (q[b0:b1].astype(np.int64) - z[g0 // group][None, :].astype(np.int64))
            term = (sa[:, None] * scale[g0 // group][None, :]).astype(np.float32).astype(np.float64) * d
            y += term
            magnitude += np.abs(term)
    if bias is not None:
        y += bias
        magnitude += np.abs(bias)
    return y, (blocks + 2) * 2.0 ** -24 * magnitude + 1e-30


def exact(x, q, scale, z, group, bias):
    """What DequantizeLinear -> MatMul computes (float activations), in float64."""
    rep = np.arange(q.shape[0]) // group
    w = ((q - z[rep]).astype(np.float32) * scale[rep]).astype(np.float64)
    return x.astype(np.float64) @ w + (0 if bias is None else bias)


_CHILD = """
import json, sys
import numpy as np
import parity.runtime as rt
folder, names, level = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
for name in names:
    kw = {} if level == "env" else {"weight_only_accuracy": int(level)}
    s = rt.InferenceSession(f"{folder}/{name}.onnx", threads=2, **kw)
    np.save(f"{folder}/{name}.{level}.y.npy", s.run(None, {"x": np.load(f"{folder}/{name}.x.npy")})[0])
"""


def _env(extra):
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(extra)
    return env


def _run(folder, env_extra, level="env", names=tuple(ROWS)):
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(folder), ",".join(names), level], env=_env(env_extra),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {name: np.load(folder / f"{name}.{level}.y.npy") for name in names}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weight_only_q8")
    rng = np.random.default_rng(46)
    out = {}
    for name in ROWS:
        model, x, params = _case(name, rng)
        (folder / f"{name}.onnx").write_bytes(model.SerializeToString())
        np.save(folder / f"{name}.x.npy", x)
        out[name] = (x, params)
    return folder, out


@pytest.fixture(scope="module")
def results(cases):
    """path -> name -> output, each path in its own process with PARITY_REFRT_WEIGHT_ONLY_ACCURACY=4."""
    folder, _ = cases
    out = {}
    for path, (env, needs) in PATHS.items():
        if not needs - FLAGS:
            sub = folder / path
            sub.mkdir(exist_ok=True)
            for name in ROWS:
                for suffix in (".onnx", ".x.npy"):
                    target = sub / f"{name}{suffix}"
                    if not target.exists():
                        target.symlink_to(folder / f"{name}{suffix}")
            out[path] = _run(sub, {**env, "PARITY_REFRT_WEIGHT_ONLY_ACCURACY": "4"})
    return out


@pytest.mark.parametrize("path", PATHS)
def test_each_path_matches_the_numpy_oracle(cases, results, path):
    missing = sorted(PATHS[path][1] - FLAGS)
    if missing:
        pytest.skip(f"this host lacks {', '.join(missing)} (/proc/cpuinfo)")
    _, data = cases
    for name, (x, params) in data.items():
        want, bound = oracle(x, *params)
        got = results[path][name].astype(np.float64)
        excess = np.abs(got - want) - bound
        assert excess.max() <= 0, (f"{path} {name}: off the oracle by {np.abs(got - want).max():.3g} "
                                   f"(bound there {bound.flat[excess.argmax()]:.3g})")
        # It is the approximation: the exact product differs by more than float rounding somewhere.
        assert np.abs(got - exact(x, *params)).max() > 1e3 * bound.max(), f"{path} {name}: exact, not int8"


def test_every_path_gives_the_same_bits(results):
    ran = list(results)
    assert ran, "no path ran"
    for path in ran[1:]:
        for name in ROWS:
            assert np.array_equal(results[path][name], results[ran[0]][name]), f"{path} vs {ran[0]}: {name}"


def test_exact_mode_is_the_default_and_level_0(cases, tmp_path):
    """No option, no variable: the exact product (float activations); level 0 and level 3 alike (ORT computes in
    float at every level but 4); the keyword overrides the variable."""
    folder, data = cases
    names = ("int4_g32_zp_rows5", "uint8_g64_gemm_bias")
    for level, env in (("env", {}), ("0", {"PARITY_REFRT_WEIGHT_ONLY_ACCURACY": "4"}), ("3", {})):
        got = _run(folder, env, level, names)
        for name in names:
            x, params = data[name]
            want = exact(x, *params)
            err = np.abs(got[name] - want).max() / np.abs(want).max()
            assert err < 1e-6, f"level {level} {name}: {err:.3g} from the exact product"
    got = _run(folder, {}, "4", names)  # the keyword alone selects the int8 mode
    for name in names:
        want, bound = oracle(data[name][0], *data[name][1])
        assert (np.abs(got[name] - want) <= bound).all(), name


def _profile_impl(model, env_extra, tmp_path, rows=2):
    out = tmp_path / "prof"
    proc = subprocess.run([str(PARITY), "profile", str(model), "--random", "--dim", f"m={rows}", "--threads", "1",
                           "--runs", "1", "--warmup", "0", "--out", str(out)], capture_output=True, text=True,
                          env=_env(env_extra), timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    return [r["impl"] for r in summary["by_node"] if r["op_type"] == "MatMul"][0]


@pytest.mark.parametrize("path", PATHS)
def test_the_label_names_the_path(cases, tmp_path, path):
    env, needs = PATHS[path]
    missing = sorted(needs - FLAGS)
    if missing:
        pytest.skip(f"this host lacks {', '.join(missing)} (/proc/cpuinfo)")
    folder, _ = cases
    model = folder / "int4_g32_zp_rows5.onnx"
    # AMX tiles take 16 rows at a time: fewer rows run (and are labelled) avx512_vnni
    small = "avx512_vnni" if path == "amx" else path
    for rows, want in ((2, small), (20, path)):
        impl = _profile_impl(model, {**env, "PARITY_REFRT_WEIGHT_ONLY_ACCURACY": "4"}, tmp_path, rows)
        assert impl == f"refrt weight-only int4 x int8 block 32 ({want})", f"{rows} rows"
    assert " x int8 " not in _profile_impl(model, env, tmp_path)  # the exact mode's own label


def test_a_bad_level_is_refused(cases, tmp_path):
    folder, _ = cases
    proc = subprocess.run([str(PARITY), "profile", str(folder / "int4_g32_decode.onnx"), "--random", "--runs", "1",
                           "--out", str(tmp_path / "p")], capture_output=True, text=True,
                          env=_env({"PARITY_REFRT_WEIGHT_ONLY_ACCURACY": "8"}), timeout=300)
    assert proc.returncode != 0
    assert "PARITY_REFRT_WEIGHT_ONLY_ACCURACY must be 0 (exact float products) to 4" in proc.stderr, proc.stderr


def test_the_distance_from_exact_float_is_the_activation_rounding(cases, results):
    """Eager torch on the dequantized weights (float32 activations) vs the int8 mode, within the rounding bound."""
    _, data = cases
    for path, outputs in results.items():
        for name, (x, (q, scale, z, group, bias)) in data.items():
            rep = np.arange(q.shape[0]) // group
            w = torch.from_numpy(((q - z[rep]).astype(np.float32) * scale[rep]).astype(np.float32))
            xt = torch.from_numpy(x)
            eager = (xt @ w + (0 if bias is None else torch.from_numpy(bias))).double().numpy()
            bound = np.zeros_like(eager)
            for g0 in range(0, q.shape[0], group):
                for b0 in range(g0, min(q.shape[0], g0 + group), 256):
                    b1 = min(b0 + 256, g0 + group, q.shape[0])
                    sa = np.abs(x[:, b0:b1]).max(axis=1).astype(np.float64) / 127
                    bound += (sa / 2)[:, None] * np.abs(w[b0:b1].double().numpy()).sum(axis=0)[None, :]
            bound += 1e-5 * (np.abs(x).astype(np.float64) @ np.abs(w.double().numpy()) + 1e-6)
            err = np.abs(outputs[name] - eager)
            assert (err <= bound).all(), f"{path} {name}: {err.max():.3g} over the rounding bound"


def test_llm_block_within_the_documented_bound(tmp_path):
    """torchao int4 (groups of 32) LLaMA block, captured and exported: the int8 mode within 2e-2 of eager (relative
    to the output's largest magnitude; measured 3.5e-3), the exact mode within 1e-5."""
    proc = run_capture("--out", tmp_path, "--filter", "^quant_llama_decoder_ao_w4g32$", "--modes", "nonstrict")
    assert proc.returncode == 0, proc.stderr
    case = tmp_path / "quant_llama_decoder_ao_w4g32" / "nonstrict"
    onnx_path = case / "model.onnx"
    subprocess.run([str(PARITY), "export", str(case / "model.pt2"), "-o", str(onnx_path)], check=True,
                   capture_output=True)
    def tensors(folder, prefix):
        files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda f: int(f.stem.split("_")[-1]))
        return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in files]

    sets = sorted(case.glob("test_data_set_*"))
    assert sets
    for level, bound in ((4, 2e-2), (0, 1e-5)):
        session = rt.InferenceSession(str(onnx_path), threads=1, weight_only_accuracy=level)
        names = [i.name for i in session.get_inputs()]
        worst = 0.0
        for ds in sets:
            got = session.run(None, dict(zip(names, tensors(ds, "input"))))
            for g, want in zip(got, tensors(ds, "output")):
                worst = max(worst, float(np.abs(g - want).max()) / float(np.abs(want).max()))
        assert worst <= bound, f"level {level}: {worst:.3g} of the output's scale from eager"
        if level == 4:
            assert worst > 1e-4, f"level 4 is {worst:.3g} from eager: the int8 mode did not run"
