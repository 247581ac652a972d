"""Re-decomposes the ops of a saved program that Parity cannot translate, with torch's own decompositions.

    python -m scenarios.decompose MODEL.pt2 -o OUT.pt2 [--ops aten::x.y,...] [--parity BUILD/parity]

Only those ops are decomposed (the rest of the program, and its readable high-level ops, stay as they are);
the list comes from `parity coverage --program MODEL.pt2 --missing` unless --ops gives it. The result is a
new .pt2 (the user's Dim names in extra/parity_dims.json are carried over) that `parity export` reads alone.
Exit 0 when every listed op was decomposed, 1 when some have no decomposition in torch, 2 for usage errors.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def missing_ops(pt2: Path, parity: str) -> list[str]:
    result = subprocess.run([parity, "coverage", "--program", str(pt2), "--missing"], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"error: {parity} coverage --program {pt2} failed: {result.stderr.strip()}")
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def overload_of(key: str):
    """'aten::relu_.default' -> torch.ops.aten.relu_.default, or None."""
    namespace, _, rest = key.partition("::")
    op, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), op), overload or "default")
    except AttributeError:
        return None


def is_retraced_away(key: str) -> bool:
    """vmap's markers (torch::_functorch.predispatch._add_batch_dim, _remove_batch_dim, the nesting
    counters): any run_decompositions() retraces the program through functorch, which applies the batching
    rules and leaves plain batched ATen ops, so these need no table entry."""
    return key.startswith("torch::_functorch.")


def decomposition_table(keys: list[str]) -> tuple[dict, list[str]]:
    """torch's decompositions of just `keys` (the core-ATen table, then every registered decomposition)."""
    from torch._decomp import decomposition_table as every_decomposition

    core = torch.export.default_decompositions()
    table, lacking = {}, []
    for key in keys:
        if is_retraced_away(key):
            continue
        op = overload_of(key)
        fn = None if op is None else core.get(op) or every_decomposition.get(op)
        if fn is None and op is not None and op._can_decompose():
            # A CompositeImplicitAutograd op decomposes through its own definition, wrapped the way
            # torch.export does it (op.decompose directly would re-enter the table and recurse).
            from torch._export.utils import _get_decomp_for_cia
            fn = _get_decomp_for_cia(op)
        if fn is None:
            lacking.append(key)
        else:
            table[op] = fn
    return table, lacking


def decompose(src: Path, dst: Path, keys: list[str]) -> list[str]:
    """Writes `dst` with `keys` decomposed; returns the keys torch has no decomposition for."""
    ep = torch.export.load(str(src))
    table, lacking = decomposition_table(keys)
    if table or any(is_retraced_away(k) for k in keys):
        ep = ep.run_decompositions(decomp_table=table)
    extra = {}
    with zipfile.ZipFile(src) as z:
        for name in z.namelist():
            if name.endswith("extra/parity_dims.json"):
                extra["parity_dims.json"] = z.read(name).decode()
    tmp = dst.with_name(f".{dst.stem}.{os.getpid()}.tmp.pt2")  # torch.export.save wants a .pt2 name
    torch.export.save(ep, str(tmp), extra_files=extra)
    os.replace(tmp, dst)
    return lacking


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.decompose", description=__doc__.split("\n")[0])
    parser.add_argument("pt2", type=Path)
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--ops", default="", help="comma-separated ATen keys (default: what Parity lacks)")
    parser.add_argument("--parity", default=os.environ.get("PARITY_BIN", str(ROOT / "build" / "parity")))
    args = parser.parse_args(argv)
    if not args.pt2.is_file():
        parser.error(f"{args.pt2}: no such file")
    keys = [k.strip() for k in args.ops.split(",") if k.strip()] or missing_ops(args.pt2, args.parity)
    if not keys:
        print(f"{args.pt2}: every op already has a translation; nothing to decompose", file=sys.stderr)
    lacking = decompose(args.pt2, args.out, keys)
    done = [k for k in keys if k not in lacking]
    print(f"wrote {args.out}: decomposed {', '.join(done) or 'nothing'}", file=sys.stderr)
    if lacking:
        print(f"no decomposition in torch {torch.__version__} for: {', '.join(lacking)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
