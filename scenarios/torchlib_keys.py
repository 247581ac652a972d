"""Lists the ATen keys of the official exporter's translation library (onnxscript's torch_lib registry)
as JSON, for `parity coverage --torchlib`: {"onnxscript": version, "torch": version, "keys": [...]}.

A key is "aten::op.overload", or "aten::op" when torch_lib registers one function for the op's default
overload and every overload it does not register separately (the official dispatcher falls back from
"aten::op.overload" to "aten::op"). Only read here: Parity's export path never calls onnxscript.
"""
import json
import sys


def torchlib_aten_keys() -> list[str]:
    import onnxscript.function_libs.torch_lib.ops  # noqa: F401  (importing registers every function)
    from onnxscript.function_libs.torch_lib import registration

    return sorted(k for k in registration.default_registry._registry if k.startswith("aten::"))


def main() -> int:
    import onnxscript
    import torch

    json.dump({"onnxscript": onnxscript.__version__, "torch": torch.__version__, "keys": torchlib_aten_keys()},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
