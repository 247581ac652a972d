"""The ATen schema sweep: one case per ATen overload whose schema makes it hard to export, run on torch's
own OpInfo samples (torch.testing._internal.common_methods_invocations.op_db).

    parity matrix --scenarios scenarios/sweep/aten_schema_sweep.py --official all -j 2 --out out/aten-sweep
    python scenarios/sweep/aten_schema_sweep.py summary out/aten-sweep/report.json     # per overload
    python scenarios/sweep/aten_schema_sweep.py map          # rebuild aten_schema_sweep.json (new torch)

An overload of `torch.ops.aten` is selected when its schema has a dynamic-size output (torch's tags
`dynamic_output_shape` or `data_dependent_output`), a SymInt list argument (`SymInt[]`) or a return that
is not one Tensor (numbers, bools, lists of tensors). It becomes a case `aten_<op>_<overload>` when an
OpInfo sample reaches it: `map` exports the first samples of every OpInfo (non-strict, every dim
Dim.AUTO) and records which selected overloads each program holds, before and after
run_decompositions; per overload it keeps the most focused OpInfo (named like the op, fewest other ops)
and up to SAMPLES of its samples that reach it. The table (aten_schema_sweep.json beside this file) is
what the cases are made from, so loading the suite does not export anything; a selected overload no
sample reaches is listed there with the reason, and counted in docs/aten-sweep.md.

A case's program calls the OpInfo's function on each chosen sample (tensors are the program's inputs,
every other argument a constant), and returns every tensor and number of the results. Input set 0 is
the samples themselves (float32, else int64, else bool, CPU); set 1 has the same shapes and each
tensor's values permuted and one moved between zero and nonzero (a bool flipped), so that data-dependent sizes change
between the sets; when eager cannot run that (a matrix no longer positive definite, say), set 1 is the
permutation alone, else a copy of set 0. Every dim is Dim.AUTO where the table found the non-strict
export to accept it (torch specialises what it must), else static.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import zlib
from pathlib import Path

import torch
import torch.utils._pytree as pytree
from torch import nn
from torch.export import Dim

from parity import Case, register

TABLE = Path(__file__).with_suffix(".json")
# The table's sha256, rewritten by `map`: capture caches a case by its source file's text (this file), so
# a new table must change this file too.
TABLE_DIGEST = "00fbd08e40375e05"
SAMPLES = 3  # samples per case
SCAN = 4  # samples per OpInfo looked at by `map`
DTYPES = (torch.float32, torch.int64, torch.bool)
_SYMINT_LIST = re.compile(r"SymInt\[\d*\]")


def schema_reasons(op) -> list[str]:
    """Why the overload `op` is in the sweep (empty: it is not)."""
    schema = op._schema
    why = []
    if torch.Tag.dynamic_output_shape in op.tags:
        why.append("dynamic_output_shape")
    if torch.Tag.data_dependent_output in op.tags:
        why.append("data_dependent_output")
    # The Python binding prints a SymInt[] argument's type as List[int]; the schema's own text keeps it.
    if _SYMINT_LIST.search(str(schema).split("->")[0]):
        why.append("symint_list_arg")
    if any(str(r.type) != "Tensor" for r in schema.returns):
        why.append("non_tensor_return")
    return why


def selected_overloads() -> dict[str, list[str]]:
    """'aten.nonzero.default' -> reasons, for every selected overload of the installed torch. From the schema
    registry: `dir(torch.ops.aten)` lists only the packets already looked up in this process."""
    out = {}
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        packet = getattr(torch.ops.aten, schema.name[len("aten::"):], None)
        op = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
        if isinstance(op, torch._ops.OpOverload):
            why = schema_reasons(op)
            if why:
                out[str(op)] = why
    return dict(sorted(out.items()))


def case_name(overload: str) -> str:
    """'aten.nonzero.default' -> 'aten_nonzero_default'."""
    return overload.replace(".", "_")


# ---- samples --------------------------------------------------------------------------------------------

def _opinfo(name: str, variant: str):
    from torch.testing._internal.common_methods_invocations import op_db

    for info in op_db:
        if info.name == name and info.variant_test_name == variant:
            return info
    raise SweepError(f"no OpInfo {name!r} (variant {variant!r}) in this torch")


def _dtype(info):
    supported = info.supported_dtypes("cpu")
    return next((d for d in DTYPES if d in supported), None)


def _samples(info, dtype, count: int):
    """The OpInfo's first `count` samples as (structure, leaves) with tensors detached and contiguous."""
    out = []
    for sample in info.sample_inputs("cpu", dtype, requires_grad=False):
        if len(out) == count:
            break
        leaves, spec = pytree.tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
        leaves = [x.detach().clone().contiguous() if isinstance(x, torch.Tensor) else x for x in leaves]
        out.append((spec, leaves))
    return out


class SweepError(RuntimeError):
    pass


class OpProgram(nn.Module):
    """Calls `op` once per sample; tensors come in as the program's inputs, every other leaf is a constant."""

    def __init__(self, op, samples):
        super().__init__()
        self.op = op
        self.specs = [spec for spec, _ in samples]
        # Per sample, each leaf: True for a tensor (the next program input), else the constant itself.
        self.leaves = [[True if isinstance(x, torch.Tensor) else (x,) for x in leaves] for _, leaves in samples]
        self.counts = [sum(isinstance(x, torch.Tensor) for x in leaves) for _, leaves in samples]

    def forward(self, tensors):
        # One argument, the tuple of tensors: torch.export and capture pair a tuple argument's dynamic_shapes
        # entry with its tensors one by one (a *tensors signature would give the whole spec to the first).
        results, start = [], 0
        for spec, consts, count in zip(self.specs, self.leaves, self.counts):
            given = iter(tensors[start:start + count])
            start += count
            leaves = [next(given) if c is True else c[0] for c in consts]
            inp, args, kwargs = pytree.tree_unflatten(leaves, spec)
            results.append(self.op(inp, *args, **kwargs))
        return tuple(x for x in pytree.tree_leaves(results) if isinstance(x, (torch.Tensor, int, float)))


def _tensors(samples) -> list[torch.Tensor]:
    return [x for _, leaves in samples for x in leaves if isinstance(x, torch.Tensor)]


def _changed(t: torch.Tensor, generator, zero: bool) -> torch.Tensor:
    """`t`'s values permuted; with `zero`, one value moved between zero and nonzero (0, or 1 where it was 0;
    a bool flipped), so that counts change: how many are nonzero, unique or selected, how often one repeats."""
    flat = t.reshape(-1)
    if flat.numel() < 2:
        return t.clone()
    flat = flat[torch.randperm(flat.numel(), generator=generator)].clone()
    if zero:
        flat[0] = ~flat[0] if flat.dtype == torch.bool else (1 if flat[0] == 0 else 0)
    return flat.reshape(t.shape)


def _same_kind(a, b) -> bool:
    """Eager on set 1 gives what it gives on set 0 in kind: the same structure, dtypes, and no new NaN/inf."""
    la, lb = pytree.tree_leaves(a), pytree.tree_leaves(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.dtype != y.dtype or x.dim() != y.dim():
                return False
            if x.is_floating_point() and bool(torch.isfinite(x).all()) and not bool(torch.isfinite(y).all()):
                return False
    return True


def _second_set(module, first: list, seed: int) -> tuple[list, str]:
    """Input set 1 and how it was made (docs: the module docstring)."""
    with torch.no_grad():
        expected = module(tuple(first))
    for how, zero in (("permuted, one value zeroed or set to 1", True), ("permuted", False)):
        generator = torch.Generator().manual_seed(seed)
        second = [_changed(t, generator, zero) for t in first]
        try:
            with torch.no_grad():
                if _same_kind(expected, module(tuple(second))):
                    return second, how
        except Exception:  # noqa: BLE001 - eager refuses these values: try the next way
            pass
    return [t.clone() for t in first], "a copy of set 0"


def _case(overload: str, row: dict) -> Case:
    name = case_name(overload)
    seed = zlib.crc32(name.encode())
    built: dict = {}

    def parts():
        if not built:
            try:
                info = _opinfo(row["opinfo"], row["variant"])
                dtype = getattr(torch, row["dtype"])
                with torch.random.fork_rng():
                    torch.manual_seed(seed)
                    every = _samples(info, dtype, max(row["samples"]) + 1)
                    samples = [every[i] for i in row["samples"]]
                module = OpProgram(info.op, samples)
                first = _tensors(samples)
                second, how = _second_set(module, first, seed)
            except SweepError:
                raise
            except Exception as e:  # the report lists why, never drops the overload
                why = str(e).splitlines()[0][:300] if str(e) else ""
                raise SweepError(f"cannot build {name}: {type(e).__name__}: {why}") from e
            built.update(module=module, sets=[(tuple(first),), (tuple(second),)], how=how)
        return built

    def shapes():  # forward(tensors): one argument, the tuple of tensors
        if not row.get("dynamic"):
            return None
        return (tuple({d: Dim.AUTO for d in range(t.dim())} for t in parts()["sets"][0][0]),)

    variant = f" ({row['variant']})" if row["variant"] else ""
    return Case(name=name, make_module=lambda: parts()["module"], input_sets=lambda: parts()["sets"],
                dynamic_shapes=shapes, source=__file__,
                description=f"{overload} [{', '.join(row['reasons'])}] on OpInfo {row['opinfo']}{variant} "
                            f"samples {row['samples']} ({row['dtype']})")


def table_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_table() -> dict:
    if not TABLE.is_file():
        return {"torch_version": None, "overloads": {}}
    text = TABLE.read_text()
    if table_digest(text) != TABLE_DIGEST:
        raise SweepError(f"{TABLE.name} changed without `map` (digest {table_digest(text)}, this file says "
                         f"{TABLE_DIGEST!r}): rebuild it with `python {Path(__file__).name} map`")
    return json.loads(text)


def left_out(table: dict) -> dict[str, str]:
    """Reached overloads whose OpInfo `map` found to differ between two eager runs (skipped_opinfos), though a
    sample of it had been kept before that run: empty_strided, new_empty, new_empty_strided return
    uninitialised memory, so eager is no oracle of their values (the 2026-12-06 table kept them; `map`
    now drops every sample of such an OpInfo)."""
    skipped = table.get("skipped_opinfos", {})
    return {ov: f"OpInfo {row['opinfo']}: {skipped[row['opinfo']]} (uninitialised memory: eager is no oracle)"
            for ov, row in table["overloads"].items() if row.get("opinfo") in skipped}


_TABLE = load_table()
LEFT_OUT = left_out(_TABLE)
for _overload, _row in _TABLE["overloads"].items():
    if _row.get("opinfo") and _overload not in LEFT_OUT:
        register(_case(_overload, _row))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _aten_sweep_tools import main

    sys.exit(main(sys.modules[__name__]))
