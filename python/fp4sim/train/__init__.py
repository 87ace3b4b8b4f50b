"""fp4sim.train: hardware-exact FP4 training emulation of a small byte-level GPT (docs/training.md).

Every linear layer's Fprop, Dgrad and Wgrad quantize their operands along the GEMM's reduction axis
per a recipe taken from golden (linear.hpp's presets and linear_operand_options); the GEMMs run in
FP32 or through the bit-accurate MMA models. `python -m fp4sim.train --help` for the command.

The recipes (fp4sim.train.recipe) need no torch; QuantLinear, QuantLinearFunction, QuantContext,
GPT and train_one import torch when first used.
"""

from __future__ import annotations

from .recipe import PRESETS, TRAIN_FORMATS, Recipe, ablation_grid, operand_options, preset, with_switches

__all__ = ["PRESETS", "TRAIN_FORMATS", "Recipe", "ablation_grid", "operand_options", "preset", "with_switches",
           "QuantLinear", "QuantLinearFunction", "QuantContext", "GPT", "Config", "train_one"]

_LAZY = {"QuantLinear": "layers", "QuantLinearFunction": "layers", "QuantContext": "layers", "GPT": "model",
         "Config": "run", "train_one": "run"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'fp4sim.train' has no attribute '{name}'")
