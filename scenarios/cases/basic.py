"""First cases: linear regression, the official exporter docs' MLP (tensor, dict and list inputs), an MLP."""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register


class LinearRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        return self.linear(x)


register(Case(
    name="linear_regression",
    make_module=LinearRegression,
    input_sets=lambda: [(torch.randn(b, 3),) for b in (4, 9)],
    dynamic_shapes=({0: Dim("batch")},),
    description="y = xW^T + b with a dynamic batch",
))


class MLPModel(nn.Module):
    """The MLP of torch.onnx's documentation: a tensor, a dict and a list, concatenated."""

    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(8, 8, bias=True)
        self.fc1 = nn.Linear(8, 4, bias=True)
        self.fc2 = nn.Linear(4, 2, bias=True)
        self.fc3 = nn.Linear(2, 2, bias=True)
        self.fc_combined = nn.Linear(8 + 8 + 8, 8, bias=True)

    def forward(self, tensor_x: torch.Tensor, input_dict: dict, input_list: list):
        dict_tensor = input_dict["tensor_x"]
        list_tensor = input_list[0]
        combined = torch.cat([tensor_x, dict_tensor, list_tensor], dim=1)
        combined = torch.sigmoid(self.fc_combined(combined))
        combined = torch.sigmoid(self.fc0(combined))
        combined = torch.sigmoid(self.fc1(combined))
        combined = torch.sigmoid(self.fc2(combined))
        return self.fc3(combined)


_BATCH = Dim("batch")


def _mlp_docs_inputs():
    # Three distinct tensors: torch.export would merge identical tensor objects into one input.
    return [(torch.rand(b, 8), {"tensor_x": torch.rand(b, 8)}, [torch.rand(b, 8)]) for b in (97, 5)]


register(Case(
    name="mlp_docs",
    make_module=MLPModel,
    input_sets=_mlp_docs_inputs,
    # One Dim object shared by the three tensors: they must have the same batch (torch.cat on dim 1).
    dynamic_shapes=({0: _BATCH}, {"tensor_x": {0: _BATCH}}, [{0: _BATCH}]),
    description="torch.onnx docs' MLP: tensor, dict and list inputs sharing a dynamic batch",
))


register(Case(
    name="mlp_batch",
    make_module=lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10)),
    input_sets=lambda: [(torch.randn(b, 16),) for b in (3, 17)],
    dynamic_shapes=({0: Dim("batch", min=1, max=1024)},),
    description="Linear-ReLU-Linear with a Dim('batch', min=1, max=1024)",
))
