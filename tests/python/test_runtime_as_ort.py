"""An existing ONNX Runtime test, unchanged, with `onnxruntime.InferenceSession` swapped for
`parity.runtime.InferenceSession`: test_opset_choice's check (export at opsets 18/20/23, run, compare with
eager) runs its own body on refrt through the binding."""
import types

import onnxruntime as ort
import pytest
import test_opset_choice as base
from test_opset_choice import captured  # noqa: F401  (the module's fixture, reused as is)

import parity.runtime as rt


@pytest.fixture(autouse=True)
def refrt_as_onnxruntime(monkeypatch):
    monkeypatch.setattr(base, "ort", types.SimpleNamespace(InferenceSession=rt.InferenceSession,
                                                           SessionOptions=ort.SessionOptions))


test_opset_choice_on_refrt_session = base.test_opset_picks_the_translation_and_numbers_agree
