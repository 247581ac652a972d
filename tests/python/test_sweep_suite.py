"""The transformers sweep suite (scenarios/sweep/transformers_sweep.py): one case per model type of the
installed transformers, none dropped; a type that cannot be built is a listed capture failure with its
reason; a built one goes through the matrix end to end against eager."""
import json
import subprocess
from pathlib import Path

from test_end_to_end import PARITY, ROOT

SWEEP = ROOT / "scenarios" / "sweep" / "transformers_sweep.py"


def _cases():
    from scenarios import suite
    return {c.name: c for c in suite.load_file(SWEEP)}


def test_every_model_type_is_a_case():
    from transformers.models.auto import modeling_auto
    names = set(_cases())
    assert names == {f"hf_{t}" for t in modeling_auto.MODEL_MAPPING_NAMES}
    assert len(names) >= 150


def test_input_sets_change_every_dynamic_dim():
    case = _cases()["hf_llama"]
    (set0, _), (set1, _) = case.examples()
    ids0, mask0 = set0
    ids1, mask1 = set1
    assert ids0.shape != ids1.shape and ids0.shape[0] != ids1.shape[0] and ids0.shape[1] != ids1.shape[1]
    assert mask1[0, 0] == 0 and mask1[0, -1] == 1, "a causal LM's padded row is padded on the left"


def test_a_type_that_cannot_be_built_is_a_listed_capture_failure(tmp_path):
    from scenarios.capture import capture_case
    line = capture_case(_cases()["hf_autoformer"], "nonstrict", tmp_path)
    assert line["status"] == "capture_failed"
    assert (
        "SweepError: cannot build hf_autoformer: ValueError" in line["error"] and "prediction_length" in line["error"]
    )


def test_llama_through_the_matrix(tmp_path):
    """Set 1 pads a row on the left under the causal mask: its first queries see no key (torch gives 0)."""
    proc = subprocess.run([str(PARITY), "matrix", "--scenarios", str(SWEEP), "--filter", "^hf_llama$",
                           "--modes", "nonstrict", "--no-peers", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    report = json.loads((Path(tmp_path) / "report.json").read_text())
    assert [(c["case"], c["status"]) for c in report["cases"]] == [("hf_llama", "pass")], proc.stdout + proc.stderr
    assert proc.returncode == 0


def test_parameters_of_one_value_get_random_values():
    """A router initialised to zeros would make every top-k a tie (torch and ONNX break ties differently)."""
    import torch
    from torch import nn
    sweep = _cases()["hf_llama"].make_module.__globals__
    model = nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3))
    with torch.no_grad():
        model[0].weight.zero_()
    varied = model[0].bias.detach().clone()
    sweep["_break_constant_parameters"](model, "afmoe")
    assert model[0].weight.unique().numel() == 12
    assert model[1].weight.unique().numel() == 3 and model[1].bias.unique().numel() == 3
    assert torch.equal(model[0].bias, varied)  # already random: left alone
