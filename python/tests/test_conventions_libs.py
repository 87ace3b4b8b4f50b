"""Bit-exactness of `fp4sim quantize --convention torchao|modelopt` against the real libraries.

Skips unless torch, torchao and modelopt import (they are not dependencies of fp4sim). Each
library's quantizer runs on BF16-valued tensors with zero blocks, ties, -0, tiny blocks and large
ranges; its codes and scales must equal fp4sim's bit for bit. The CLI is run as a subprocess:
env FP4SIM_CLI, default build/bin/fp4sim. Versions checked: docs/formats.md, "Conventions".
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchao")
pytest.importorskip("modelopt")
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import to_mx  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale  # noqa: E402
from modelopt.torch.quantization.qtensor.mxfp4_tensor import MXFP4QTensor  # noqa: E402
from modelopt.torch.quantization.qtensor.mxfp8_tensor import MXFP8QTensor  # noqa: E402
from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor  # noqa: E402

CLI = os.environ.get("FP4SIM_CLI", str(Path(__file__).resolve().parents[2] / "build" / "bin" / "fp4sim"))
if not Path(CLI).exists():
    pytest.skip(f"fp4sim CLI not found at {CLI}", allow_module_level=True)


def bf16_values(rows, cols, seed):
    """BF16-valued float32 rows with the cases that separate the conventions."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(2.0) ** rng.integers(-8, 8, (rows, 1))
    x[0, :32] = 0.0                                   # all-zero blocks
    x[1, :32] = -0.0                                  # all -0 blocks
    x[1, 32:48] = np.linspace(-6, 6, 16)              # ties after scaling
    x[2, :32] = rng.standard_normal(32) * 2.0 ** -120  # tiny blocks (scale clamps, flush)
    x[3, ::7] = -0.0                                  # -0 inside ordinary blocks
    x[4, :16] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5, -6]
    b = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) & 0xFFFF0000  # RNE to BF16
    return b.view(np.float32)


def fp4sim(tmp_path, x, fmt, convention, *extra):
    inp, out = tmp_path / f"x_{fmt}_{convention}.npy", tmp_path / f"q_{fmt}_{convention}"
    np.save(inp, x)
    subprocess.run([CLI, "quantize", "--format", fmt, "--input", str(inp), "--out", str(out),
                    "--convention", convention, *extra], check=True, capture_output=True)
    assert json.loads((out / "manifest.json").read_text())["options"]["convention"] == convention
    return np.load(out / "codes.npy").reshape(x.shape), np.load(out / "scales.npy").reshape(x.shape[0], -1)


def unpack4(p):
    p = p.view(torch.uint8).numpy()
    return np.stack([p & 0xF, p >> 4], axis=-1).reshape(*p.shape[:-1], -1)


def compare(codes, scales, ref_codes, ref_scales):
    np.testing.assert_array_equal(scales, ref_scales.reshape(scales.shape))
    np.testing.assert_array_equal(codes, ref_codes.reshape(codes.shape))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torchao_nvfp4(tmp_path, seed):
    x = bf16_values(16, 256, seed)
    t = torch.from_numpy(x)
    s, d = nvfp4_quantize(t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t))))
    compare(*fp4sim(tmp_path, x, "nvfp4", "torchao"), unpack4(d), s.view(torch.uint8).numpy())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_modelopt_nvfp4(tmp_path, seed):
    x = bf16_values(16, 256, seed)
    qt, s, _ = NVFP4QTensor.quantize(torch.from_numpy(x), 16)
    compare(*fp4sim(tmp_path, x, "nvfp4", "modelopt"), unpack4(qt._quantized_data), s.view(torch.uint8).numpy())


TORCHAO_MX = [("mxfp4", torch.float4_e2m1fn_x2), ("mxfp6-e2m3", DTYPE_FP6_E2M3), ("mxfp6-e3m2", DTYPE_FP6_E3M2),
              ("mxfp8-e4m3", torch.float8_e4m3fn), ("mxfp8-e5m2", torch.float8_e5m2)]


@pytest.mark.parametrize("fmt,dtype", TORCHAO_MX)
@pytest.mark.parametrize("rule", ["floor", "ceil"])
def test_torchao_mx(tmp_path, fmt, dtype, rule):
    x = bf16_values(16, 256, 3)
    mode = ScaleCalculationMode.FLOOR if rule == "floor" else ScaleCalculationMode.RCEIL
    s, d = to_mx(torch.from_numpy(x), dtype, 32, mode)
    ref = unpack4(d) if fmt == "mxfp4" else d.view(torch.uint8).numpy()
    compare(*fp4sim(tmp_path, x, fmt, "torchao", "--scale-rule", rule), ref, s.view(torch.uint8).numpy())


def test_modelopt_mxfp4(tmp_path):
    x = bf16_values(16, 256, 4)
    qt, s = MXFP4QTensor.quantize(torch.from_numpy(x), 32)
    compare(*fp4sim(tmp_path, x, "mxfp4", "modelopt", "--scale-rule", "ceil"), unpack4(qt._quantized_data),
            s.numpy())


def test_modelopt_mxfp8(tmp_path):
    x = bf16_values(16, 256, 5)
    qt, s = MXFP8QTensor.quantize(torch.from_numpy(x))
    compare(*fp4sim(tmp_path, x, "mxfp8-e4m3", "modelopt", "--scale-rule", "ceil"),
            qt._quantized_data.view(torch.uint8).numpy(), s.numpy())


@pytest.mark.parametrize("convention", ["torchao", "modelopt"])
def test_nvfp4_all_zero_tensor(tmp_path, convention):
    """S_dec = 0: both libraries divide 0 by 0; the NaN scales and the codes it leaves must match."""
    x = np.zeros((2, 32), np.float32)
    x[0, 3] = -0.0
    t = torch.from_numpy(x)
    if convention == "torchao":
        s, d = nvfp4_quantize(t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t))))
    else:
        qt, s, _ = NVFP4QTensor.quantize(t.clone(), 16)
        d = qt._quantized_data
    compare(*fp4sim(tmp_path, x, "nvfp4", convention), unpack4(d), s.view(torch.uint8).numpy())
