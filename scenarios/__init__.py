"""Parity scenarios: PyTorch modules with input sets and dynamic shapes, captured with torch.export."""
