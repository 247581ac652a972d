"""Lists the CompositeImplicitAutograd ATen overloads of the installed torch that torch.export can leave in
a program, as JSON, for `parity coverage --composite`:
{"torch": version, "ops": [...], "excluded": {reason: [...]}}.

torch.export's training IR (non-strict and strict) records the ATen ops Python called: a composite op
(one with a CompositeImplicitAutograd kernel, e.g. meshgrid, diff, conv_transpose2d) stays as it is until
run_decompositions(). Every overload registered with such a kernel counts, except the classes that cannot
reach an inference program, each listed under its reason (so that nothing is dropped silently).
"""
import json
import re
import sys

import torch

_EXCLUDED_NAME = [
    (re.compile(r"backward"), "autograd backward formulas (only in joint training graphs)"),
    (re.compile(r"sparse|mkldnn|_nested|nested_|_to_cpu|to_dense|to_padded"),
     "sparse, mkldnn and nested layouts (not dense tensors)"),
    (re.compile(r"quantize|fbgemm|qparams|_saturate_weight|_wrapped_"), "quantized-engine helpers (fbgemm, qparams)"),
    (re.compile(r"^_test_|_cufft|cudnn|_nnpack|vulkan|xla|_propagate_|_debug_|_version|_is_zerotensor|"
                r"output_nr|retains_grad|is_leaf|get_gradients|_backward$|_has_compatible"),
     "test, device-backend and autograd-state helpers"),
]


def _returns_tensor(schema) -> bool:
    return any(isinstance(r.type, (torch.TensorType, torch.ListType, torch.OptionalType)) and "Tensor" in str(r.type)
               for r in schema.returns)


def composite_overloads():
    """(kept, excluded) for every aten overload with a CompositeImplicitAutograd kernel."""
    kept, excluded = [], {}
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        if not name.startswith("aten::") or not torch._C._dispatch_has_kernel_for_dispatch_key(
            name, "CompositeImplicitAutograd"
        ):
            continue
        op, _, overload = name[len("aten::"):].partition(".")
        try:
            schema = getattr(getattr(torch.ops.aten, op), overload or "default")._schema
        except AttributeError:
            continue
        key = f"aten::{op}.{overload or 'default'}"
        reason = None
        if (
            schema.overload_name == "out"
            or schema.overload_name.endswith("_out")
            or any(a.is_out for a in schema.arguments)
        ):
            reason = "out= variants (a program holds the functional form)"
        elif schema.is_mutable:
            reason = "in-place and mutating variants (Parity's in-place rule maps them to the functional form)"
        elif not _returns_tensor(schema):
            reason = "return no tensor (evaluated while tracing, never a graph node)"
        else:
            reason = next((why for pattern, why in _EXCLUDED_NAME if pattern.search(op)), None)
        if reason:
            excluded.setdefault(reason, []).append(key)
        else:
            kept.append(key)
    return kept, excluded


def main() -> int:
    kept, excluded = composite_overloads()
    json.dump({"torch": torch.__version__, "ops": kept, "excluded": excluded}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
