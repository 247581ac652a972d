"""The CPU classes Parity claims, and the implementation each heavy node takes in each (docs/cpu-classes.md).

A class is a set of environment variables that makes this host behave as that CPU for every library refrt
calls: refrt's level (PARITY_REFRT_ISA), oneDNN's (ONEDNN_MAX_CPU_ISA, which refrt applies too) and OpenBLAS's
core (OPENBLAS_CORETYPE). A class runs only on a host that has its features (`missing`). Used by
test_implementation_selection.py and scripts/cpu_classes.py."""
import re

# name -> (environment, /proc/cpuinfo flags the host needs, what it stands for)
CLASSES = {
    # AVX-VNNI masked for refrt's own kernels too (its weight-only int8 mode picks AVX-VNNI where the CPU has it).
    "avx2": ({"PARITY_REFRT_ISA": "avx2", "PARITY_REFRT_MASK_FEATURES": "avx_vnni", "ONEDNN_MAX_CPU_ISA": "AVX2",
              "OPENBLAS_CORETYPE": "Prescott"},
             {"avx2", "fma"},
             "AVX2 without VNNI (Zen 2/3, Haswell to Comet Lake), OpenBLAS on its generic core (a CPU newer than "
             "its table)"),
    "avx2_vnni": ({"PARITY_REFRT_ISA": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2_VNNI", "OPENBLAS_CORETYPE": "Haswell"},
                  {"avx2", "fma", "avx_vnni"},
                  "AVX2 + AVX-VNNI without AVX-512 (Alder Lake and later client cores), OpenBLAS on its AVX2 core"),
    "avx512_core": ({"PARITY_REFRT_ISA": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
                    {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"},
                    "AVX-512 without VNNI (Skylake-SP)"),
    "avx512_core_vnni": ({"PARITY_REFRT_ISA": "avx512_vnni", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_VNNI"},
                         {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"},
                         "AVX-512 + VNNI (Cascade Lake, Ice Lake)"),
    "avx512_core_bf16": ({"PARITY_REFRT_ISA": "avx512_bf16", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"},
                         {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16"},
                         "AVX-512 + VNNI + BF16 without AMX (Zen 4/5, Cooper Lake)"),
    "amx": ({"PARITY_REFRT_ISA": "amx", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX"},
            {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16", "amx_tile",
             "amx_int8", "amx_bf16"},
            "AVX-512 + AMX (Sapphire Rapids, Emerald Rapids)"),
}

# The variables a class sets; removed from the environment before a class's own are applied.
CLASS_VARIABLES = ("PARITY_REFRT_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "OPENBLAS_CORETYPE",
                   "PARITY_REFRT_MASK_FEATURES")

# OpenBLAS cores with AVX2 (or wider) kernels; on any other core an AVX2 CPU's float GEMMs go to oneDNN.
OPENBLAS_AVX2_CORES = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"}

# The heavy nodes of test_implementation_selection.py's models, and what each is.
NODES = {
    "conv3x3": "float32 Conv 3x3, 32 -> 64 channels, 28x28",
    "matmul_weights": "float32 MatMul [16, 256] x weights [256, 512]",
    "gemm_linear": "float32 Gemm (Linear) [16, 256] x weights^T, bias",
    "matmul_activations": "float32 MatMul of two activations [16, 256] x [256, 512]",
    "matmul_decode": "float32 MatMul, one row (decode) [1, 256] x weights [256, 512]",
    "gemm_decode": "float32 Gemm (Linear), one row (decode) [1, 256] x weights^T, bias",
    "gemm_linear_bf16": "bfloat16 Gemm (Linear) with bfloat16 weights",
    "conv3x3_bf16": "bfloat16 Conv 3x3, 32 -> 64 channels, 28x28, bfloat16 weights",
    "attention_decode_bf16": "bfloat16 attention chain, one query row over a 300-key cache (fused)",
    "qdq_matmul": "int8 QDQ MatMul (fused into an integer product)",
    "qdq_conv": "int8 QDQ Conv 3x3",
    "qlinear_conv": "QLinearConv 3x3 (uint8 x int8)",
}

_ONEDNN_ISA = {"avx2": "avx2", "avx2_vnni": "avx2_vnni", "avx512_core": "avx512_core",
               "avx512_core_vnni": "avx512_core_vnni", "avx512_core_bf16": "avx512_core_bf16",
               "amx": "avx512_core_amx"}


def host_flags():
    """This host's CPU flags, as /proc/cpuinfo lists them."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def missing(cls, flags):
    """The /proc/cpuinfo flags `cls` needs that this host lacks (empty: the class runs here)."""
    return sorted(CLASSES[cls][1] - flags)


def onednn_isa(cls):
    """The ISA oneDNN reports (get_effective_cpu_isa) under the class."""
    return _ONEDNN_ISA[cls]


def expected(cls, node, openblas_core):
    """A regular expression the node's implementation label must match in full under `cls`, where OpenBLAS
    runs `openblas_core` (read from OpenBLAS itself). These are the documented paths (docs/cpu-classes.md)."""
    avx512 = cls.startswith("avx512") or cls == "amx"
    core = re.escape(openblas_core)
    # float32 GEMMs: oneDNN at the AVX-512 levels, and at the AVX2 level when OpenBLAS runs a generic core
    # (dnnl_common.h, float_gemm_prefers_onednn); OpenBLAS's own AVX2 core otherwise.
    float_on_openblas = not avx512 and openblas_core.lower() in OPENBLAS_AVX2_CORES
    f_isa = "avx512_core" if avx512 else "avx2"
    # Products with constant weights: oneDNN's brgemm at the AVX-512 levels, refrt's packed AVX2 GEMM below
    # (refrt/src/sgemm_packed.h), whatever OpenBLAS's core.
    weights = rf"onednn brg:{f_isa}" if avx512 else r"refrt packed sgemm \(avx2\)"
    if node == "conv3x3":
        return rf"onednn jit:{f_isa}"
    if node in ("matmul_weights", "gemm_linear"):
        return weights
    if node == "matmul_activations":
        return rf"openblas sgemm \(core {core}\)" if float_on_openblas else rf"onednn sgemm \({onednn_isa(cls)}\)"
    if node in ("matmul_decode", "gemm_decode"):
        # one row x constant weights: refrt's packed AVX-512 GEMV (refrt/src/gemv_packed.h), its AVX2 GEMV below
        return r"refrt packed gemv \(avx512\)" if avx512 else r"refrt gemv \(avx2\)"
    if node == "gemm_linear_bf16":
        # native bfloat16 products where the class has AVX-512 BF16; float32 products (weights widened once) below
        if cls == "amx":
            return r"onednn brg:avx512_core_amx_bf16"
        if cls == "avx512_core_bf16":
            return r"onednn brg:avx512_core_bf16"
        return "float32 " + weights
    if node == "conv3x3_bf16":
        # native bfloat16 convolutions where the class has AVX-512 BF16 (channels-last brgconv); below, X widened and
        # the float32 conv
        if cls == "amx":
            return r"onednn brgconv:avx512_core_amx_bf16"
        if cls == "avx512_core_bf16":
            return r"onednn brgconv:avx512_core_bf16"
        return rf"float32 onednn jit:{f_isa}"
    if node == "attention_decode_bf16":
        # fused, in float32 on the bfloat16 cache, which refrt's AVX2 GEMV reads in place at every class here; the
        # softmax rows' exp on vmath's AVX-512 build at the AVX-512 classes
        return rf"float32 refrt fused attention \({'avx512' if avx512 else 'avx2'}\) \+ refrt half gemv \(avx2\)"
    # int8: oneDNN's exact kernels (VNNI or AMX); without them refrt's own exact int16 GEMM (its AVX-512 tile at
    # the AVX-512 levels). oneDNN 2.6's int8 MatMul on avx2_vnni is its gemm:jit, which refrt does not take
    # (int8_impl_is_exact): refrt there too.
    qgemm = rf"refrt qgemm \({'avx512' if avx512 else 'avx2'}\)"
    if cls == "amx":
        return {"qdq_matmul": r"onednn brg:avx512_core_amx_int8"}.get(node, r"onednn jit:avx512_core_amx_int8")
    if cls in ("avx512_core_vnni", "avx512_core_bf16"):
        return {"qdq_matmul": r"onednn brg:avx512_core_vnni"}.get(node, r"onednn jit_int8:avx512_core_vnni")
    if cls == "avx2_vnni":
        return {"qdq_matmul": qgemm}.get(node, r"onednn jit_uni_int8:avx2_vnni")
    return qgemm
