"""Training recipes: golden's linear-layer presets (linear.hpp) plus per-switch overrides, and the
seeds of every quantized operand. Needs no torch.

A recipe's six operand options come from golden's linear_operand_options through _core, never
re-typed here: Fprop (X, W), Dgrad (dY, W^T), Wgrad (dY^T, X^T), each along its GEMM's reduction
axis; SR only on the two gradient operands (Philox streams DGRAD_SR_STREAM / WGRAD_SR_STREAM), the
Wgrad RHT with the same signs on both operands.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .. import FORMATS, _core

# Training formats: golden's recipe formats, plus mxfp8 (the MX recipe rules on E4M3 elements)
# and none (FP32 operands: the unquantized baseline).
TRAIN_FORMATS = {"nvfp4": "nvfp4", "mxfp4": "mxfp4", "mxfp8": "mxfp8-e4m3", "hif4": "hif4", "bf16": "bf16",
                 "none": None}
PRESETS = tuple(_core.linear_recipe_names()) + ("none", "fp32")
# Besides the presets, a bare format name is a recipe: that format with no stabilizer (RNE
# everywhere, no RHT; nvfp4 keeps its PTS, which is part of the format as NVIDIA defines it).
PLAIN = ("nvfp4", "mxfp4", "mxfp8", "hif4")
DGRAD_SR_STREAM = int(_core.DGRAD_SR_STREAM)
WGRAD_SR_STREAM = int(_core.WGRAD_SR_STREAM)
FPROP, DGRAD, WGRAD = 0, 1, 2
GEMM_NAMES = ("fprop", "dgrad", "wgrad")
_M64 = (1 << 64) - 1


@dataclass(frozen=True)
class Recipe:
    """One training configuration. format: a TRAIN_FORMATS key; the stabilizers as golden's
    LinearRecipe fields; bf16_layers: layer-name prefixes kept out of the 4-bit format (their
    operands rounded to BF16, FP32 GEMM)."""
    name: str
    format: str
    pts: bool = True
    two_d: bool = False
    sr: bool = False
    rht: int = 0
    scale_rule: str = "floor"
    bf16_layers: tuple[str, ...] = field(default_factory=tuple)

    @property
    def block_format(self) -> str | None:
        """The fp4sim block format of the quantized operands (None for bf16 / none)."""
        f = TRAIN_FORMATS[self.format]
        return f if f in FORMATS else None

    def label(self) -> str:
        return self.name

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["bf16_layers"] = list(self.bf16_layers)
        return d


def preset(name: str) -> Recipe:
    """A golden preset (nvfp4-paper, hif4-paper, mxfp4-paper, bf16), none / fp32, or a PLAIN format."""
    if name in ("none", "fp32"):
        return Recipe(name="none", format="none")
    if name in PLAIN:
        return Recipe(name=name, format=name)
    if name not in PRESETS:
        raise ValueError(f"--recipe: unknown recipe '{name}' (expected one of: {', '.join(PRESETS + PLAIN)})")
    return _from_golden(_core.linear_recipe(name))


def _from_golden(r: dict) -> Recipe:
    return Recipe(name=r["name"], format=r["format"], pts=bool(r["pts"]), two_d=bool(r["two_d_weights"]),
                  sr=bool(r["sr_gradients"]), rht=int(r["rht_wgrad"]), scale_rule=str(r["scale_rule"]))


def ablation_grid() -> list[Recipe]:
    """golden's ablation_recipes (the `fp4sim linear --ablation` rows): BF16, each paper recipe and
    that recipe with one stabilizer switched."""
    return [_from_golden(r) for r in _core.ablation_recipes(0)]


def with_switches(r: Recipe, name: str | None = None, format: str | None = None, sr: bool | None = None,
                  rht: int | None = None, pts: bool | None = None, two_d: bool | None = None,
                  scale_rule: str | None = None, bf16_layers=None) -> Recipe:
    """r with the given switches changed (None: keep). Changing the format resets the stabilizers
    that the new format cannot take (PTS on, 2D off, floor scales) before the explicit switches."""
    ch: dict = {}
    if format is not None:
        if format not in TRAIN_FORMATS:
            raise ValueError(f"--format: unknown format '{format}' (expected one of: {', '.join(TRAIN_FORMATS)})")
        ch["format"] = format
        if format != r.format:
            ch.update(pts=True, two_d=False, scale_rule="floor")
            if format in ("bf16", "none"):
                ch.update(sr=False, rht=0)
    for k, v in (("sr", sr), ("rht", rht), ("pts", pts), ("two_d", two_d), ("scale_rule", scale_rule)):
        if v is not None:
            ch[k] = v
    if "scale_rule" in ch:
        ch["scale_rule"] = {"ceil": "rceil"}.get(ch["scale_rule"], ch["scale_rule"])
    if bf16_layers is not None:
        ch["bf16_layers"] = tuple(bf16_layers)
    out = dataclasses.replace(r, **ch)
    if name is not None or ch:
        out = dataclasses.replace(out, name=name or _auto_name(r, out))
    validate(out)
    return out


def _auto_name(base: Recipe, r: Recipe) -> str:
    """base's name with the switches that differ, as golden's ablation labels write them."""
    if r.format != base.format:
        parts = [r.format]
        ref = Recipe(name="", format=r.format)
    else:
        parts = [base.name]
        ref = base
    if r.pts != ref.pts:
        parts.append("+pts" if r.pts else "-pts")
    if r.two_d != ref.two_d:
        parts.append("+2d" if r.two_d else "-2d")
    if r.sr != ref.sr:
        parts.append("+sr" if r.sr else "-sr")
    if r.rht != ref.rht:
        parts.append(f"rht{r.rht}" if r.rht else "-rht")
    if r.scale_rule != ref.scale_rule:
        parts.append(r.scale_rule)
    return " ".join(parts)


def validate(r: Recipe) -> None:
    """golden's validate_recipe (through linear_operand_options) for the 4-bit and MX formats; the
    same rules for none. One-line ValueError."""
    if r.format not in TRAIN_FORMATS:
        raise ValueError(f"--format: unknown format '{r.format}' (expected one of: {', '.join(TRAIN_FORMATS)})")
    if r.rht and (r.rht < 2 or r.rht & (r.rht - 1)):
        raise ValueError(f"--rht: size must be a power of two >= 2 (or 0 = off), got {r.rht}")
    if r.format == "none":
        if r.sr or r.rht or not r.pts or r.two_d or r.scale_rule != "floor":
            raise ValueError("recipe none: no stabilizer applies to unquantized operands")
        return
    try:
        if r.format == "bf16":
            if r.sr or r.rht or not r.pts or r.two_d or r.scale_rule != "floor":
                raise ValueError("no stabilizer applies to bf16 (sr, rht, pts, 2d, scale rule)")
        else:
            operand_options(r, 0, 0)
    except ValueError as e:
        raise ValueError(f"recipe {r.name}: {e}") from None


def operand_options(r: Recipe, sr_seed: int, rht_seed: int, rht_seeded: bool = False) -> list[tuple[dict, dict]]:
    """The six operands' quantize options, [fprop, dgrad, wgrad] of (A, B) dicts, from golden's
    linear_operand_options: rounding, sr_seed, stream, scale_rule, pts, two_d, rht, rht_bf16,
    rht_seed, rht_seeded, convention."""
    fmt = TRAIN_FORMATS[r.format]
    return [tuple(dict(o) for o in pair) for pair in _core.linear_operand_options(
        fmt, r.pts, r.two_d, r.sr, r.rht, r.scale_rule, "te", sr_seed & _M64, rht_seed & _M64, rht_seeded)]


def fake_quantize_kwargs(block_format: str, o: dict) -> dict:
    """fp4sim.fake_quantize keywords for one operand's options (the ones the format takes)."""
    kw = {"rounding": o["rounding"], "sr_seed": o["sr_seed"], "stream": o["stream"], "two_d": o["two_d"],
          "rht": o["rht"] or None, "rht_bf16": o["rht_bf16"]}
    if block_format == "nvfp4":
        kw["pts"] = o["pts"]
    if block_format not in ("nvfp4", "hif4"):
        kw["scale_rule"] = o["scale_rule"]
    # Unseeded size 16 is TE's fixed sign vector; every other RHT takes its signs from rht_seed.
    if o["rht"] and (o["rht_seeded"] or o["rht"] != 16):
        kw["rht_seed"] = o["rht_seed"]
    return kw


def quantize_kwargs(block_format: str, o: dict) -> dict:
    """The same operand as fp4sim.quantize keywords (its `seed` is the SR seed)."""
    kw = fake_quantize_kwargs(block_format, o)
    kw["seed"] = kw.pop("sr_seed")
    return kw


# ---- seeds ----

def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def derive_seed(seed: int, *words: int) -> int:
    """A 64-bit seed from the run seed and a path of small integers (splitmix64 chained): distinct
    paths give unrelated seeds, the same path the same seed on every machine."""
    h = _splitmix(seed & _M64)
    for w in words:
        h = _splitmix(h ^ (w & _M64))
    return h


# Purposes in derive_seed paths.
SEED_SR, SEED_RHT = 1, 2


def sr_seed(seed: int, layer: int, step: int) -> int:
    """SR key of layer `layer` at optimizer step `step`: new bits every step and layer, the same for
    the same (seed, layer, step). The two gradient operands share the key and differ by stream."""
    return derive_seed(seed, SEED_SR, layer, step)


def rht_seed(seed: int, layer: int) -> int:
    """RHT sign seed of layer `layer`: fixed over the run (as TE's fixed signs), one per layer."""
    return derive_seed(seed, SEED_RHT, layer)
