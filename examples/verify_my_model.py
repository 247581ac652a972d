"""Parity on a model of one's own, from Python (run with the project venv after scripts/setup.sh):

    .venv/bin/python examples/verify_my_model.py

parity.verify captures the model with torch.export (the same capture as the scenario matrix), exports it
to ONNX with Parity's exporter, runs it on refrt and on the libtorch reference and compares both with the
eager outputs; the result prints as a short table and points at report.json / report.md / report.html.
"""
import torch
from torch import nn
from torch.export import Dim

import parity


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=3, padding=1)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = torch.relu(self.conv(x))           # [batch, 8, length]
        return self.head(h.mean(dim=-1)).softmax(dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    length = Dim("length", min=2)
    result = parity.verify(MyModel(), (torch.randn(3, 4, 10),),
                           dynamic_shapes=({0: Dim("batch"), 2: length},),
                           input_sets=[(torch.randn(5, 4, 7),)], out="out/my_model")
    print(result)
    raise SystemExit(0 if result.passed else 1)
