"""The training loop, its progress bar, the final table, the JSON of the curves and the PNG."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import torch

from . import recipe as R
from .layers import QuantContext
from .model import GPT, Corpus, load_corpus


@dataclass
class Config:
    """Model, data and optimizer settings (the CLI's flags)."""
    steps: int = 600
    batch: int = 16
    context: int = 128
    layers: int = 4
    d_model: int = 128
    heads: int = 4
    lr: float = 3e-3
    warmup: int = 30
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    seed: int = 0
    threads: int = 1
    gemm: str = "float32"
    corpus_bytes: int = 8 << 20
    eval_every: int = 100
    eval_batches: int = 8

    def check(self) -> None:
        for k in ("steps", "batch", "context", "layers", "d_model", "heads", "threads", "corpus_bytes",
                  "eval_every", "eval_batches"):
            if getattr(self, k) < 1:
                raise ValueError(f"--{k.replace('_', '-')}: must be >= 1, got {getattr(self, k)}")
        if self.warmup < 0:
            raise ValueError(f"--warmup: must be >= 0, got {self.warmup}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"--lr: must be a positive number, got {self.lr}")
        if self.gemm not in ("float32", "hardware"):
            raise ValueError(f"--gemm: unknown mode '{self.gemm}' (expected float32 or hardware)")


def setup_torch(threads: int) -> None:
    """Deterministic kernels on a fixed number of threads (the bits do not depend on the count:
    tests/test_train.py checks 1 against 2)."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)


class Progress:
    """One line on stderr, rewritten in place on a terminal (every 10 % otherwise)."""

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None):
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = 1 if self.tty else max(1, total // 10)

    def update(self, step: int, loss: float, tok_s: float, val: float | None) -> None:
        if not self.enabled or (step % self.every and step != self.total):
            return
        w = 24
        fill = w * step // self.total
        bar = "#" * fill + "." * (w - fill)
        v = f" val {val:.4f}" if val is not None else ""
        line = f"{self.label:<24} [{bar}] {step}/{self.total} loss {loss:.4f}{v} {tok_s / 1e3:.1f}k tok/s"
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        if self.tty and step == self.total:
            self.stream.write("\n")
        self.stream.flush()


def _lr(cfg: Config, step: int) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def evaluate(model: GPT, batches) -> float:
    model.eval()
    with torch.no_grad():
        tot = sum(float(model(x, y)) for x, y in batches)
    model.train()
    return tot / len(batches)


_CORPUS: dict = {}


def corpus(cfg: Config) -> Corpus:
    key = (cfg.corpus_bytes, cfg.context)
    if key not in _CORPUS:
        _CORPUS[key] = Corpus(load_corpus(cfg.corpus_bytes), cfg.context)
    return _CORPUS[key]


class Trainer:
    """One model, optimizer and batch stream under one recipe. The same cfg.seed gives the same
    initial weights and batches for every recipe (a paired comparison)."""

    def __init__(self, recipe: R.Recipe, cfg: Config):
        cfg.check()
        setup_torch(cfg.threads)
        self.recipe, self.cfg = recipe, cfg
        self.data = corpus(cfg)
        torch.manual_seed(cfg.seed)
        self.qctx = QuantContext(recipe, gemm=cfg.gemm, seed=cfg.seed, threads=cfg.threads)
        self.model = GPT(self.qctx, cfg.layers, cfg.d_model, cfg.heads, cfg.context)
        named = list(self.model.named_parameters())
        decay = [p for n, p in named if p.dim() == 2 and "weight" in n]
        other = [p for n, p in named if not (p.dim() == 2 and "weight" in n)]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                      {"params": other, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.95),
                                     foreach=False)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.step_no = 0

    def step(self) -> float:
        """One optimizer step; returns the batch's training loss."""
        cfg, step = self.cfg, self.step_no
        self.qctx.step = step
        for g in self.opt.param_groups:
            g["lr"] = _lr(cfg, step)
        x, y = self.data.batch(self.gen, cfg.batch)
        loss = self.model(x, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip, foreach=False)
        self.opt.step()
        self.step_no += 1
        return float(loss.detach())


def train_one(recipe: R.Recipe, cfg: Config, progress: bool = True, label: str | None = None) -> dict:
    """Trains one model with `recipe`; returns its record (curves, final validation loss, timing)."""
    t = Trainer(recipe, cfg)
    val_set = t.data.val_batches(cfg.batch, cfg.eval_batches)
    bar = Progress(cfg.steps, label or f"{recipe.name} ({cfg.gemm})", enabled=progress)
    train_curve, val_curve, times = [], [], []
    tokens = cfg.batch * cfg.context
    val = None
    for step in range(cfg.steps):
        t0 = time.perf_counter()
        lv = t.step()
        times.append(time.perf_counter() - t0)
        train_curve.append(lv)
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            val = evaluate(t.model, val_set)
            val_curve.append([step + 1, val])
        recent = times[-20:]
        bar.update(step + 1, lv, tokens * len(recent) / sum(recent), val)
    steady = sorted(times[min(3, len(times) - 1):])
    step_s = steady[len(steady) // 2]
    return {"recipe": recipe.to_json(), "label": label or recipe.name, "gemm": cfg.gemm, "seed": cfg.seed,
            "config": dataclasses.asdict(cfg), "train_loss": train_curve, "val_loss": val_curve,
            "final_val_loss": val_curve[-1][1], "step_ms": step_s * 1e3, "tokens_per_s": tokens / step_s,
            "nonfinite": not math.isfinite(val_curve[-1][1])}


def bench(recipes: list[tuple[R.Recipe, Config]], rounds: int, warm: int = 2) -> list[dict]:
    """Step time of each (recipe, cfg), measured side by side: every round runs one step of each
    in turn, so that a change of machine load falls on all of them alike. Median over the rounds
    after `warm` untimed ones."""
    trainers = [Trainer(r, c) for r, c in recipes]
    times: list[list[float]] = [[] for _ in trainers]
    for i in range(warm + rounds):
        for t, ts in zip(trainers, times):
            t0 = time.perf_counter()
            t.step()
            if i >= warm:
                ts.append(time.perf_counter() - t0)
    out = []
    for (r, c), ts in zip(recipes, times):
        ts = sorted(ts)
        out.append({"label": r.name, "gemm": c.gemm, "step_ms": 1e3 * ts[len(ts) // 2],
                    "min_ms": 1e3 * ts[0], "rounds": rounds})
    return out


def bench_table(rows: list[dict]) -> str:
    base = next((r for r in rows if r["label"] == "none"), None)
    lines = ["| recipe | GEMM | ms/step (median) | min | vs none |", "|---|---|---:|---:|---:|"]
    for r in rows:
        rel = f"{r['step_ms'] / base['step_ms']:.2f}x" if base else ""
        lines.append(f"| {r['label']} | {r['gemm']} | {r['step_ms']:.1f} | {r['min_ms']:.1f} | {rel} |")
    return "\n".join(lines)


def table(runs: list[dict], baseline: dict | None) -> str:
    """Markdown table of the runs: final validation loss, relative to the baseline, step time."""
    rows = ["| recipe | GEMM | val loss | vs baseline | ms/step | tokens/s |", "|---|---|---:|---:|---:|---:|"]
    for r in runs:
        rel = ""
        if baseline is not None:
            rel = f"{100 * (r['final_val_loss'] / baseline['final_val_loss'] - 1):+.2f} %"
        rows.append(f"| {r['label']} | {r['gemm']} | {r['final_val_loss']:.4f} | {rel} | {r['step_ms']:.1f} | "
                    f"{r['tokens_per_s']:.0f} |")
    return "\n".join(rows)


def need_matplotlib():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot(runs: list[dict], path: str, title: str) -> None:
    """Training (smoothed) and validation loss of every run against the step. The y range leaves out
    the first fifth of the steps (the fall from ln 256), where curves differ least; a long legend
    goes beside the axes."""
    plt = need_matplotlib()
    many = len(runs) > 8
    fig, ax = plt.subplots(figsize=(12, 6) if many else (8, 5))
    lo, hi = math.inf, -math.inf
    for r in runs:
        tl = r["train_loss"]
        k = max(1, len(tl) // 50)
        sm = [sum(tl[max(0, i - k + 1):i + 1]) / len(tl[max(0, i - k + 1):i + 1]) for i in range(len(tl))]
        line, = ax.plot(range(1, len(tl) + 1), sm, lw=1, alpha=0.6)
        ax.plot([s for s, _ in r["val_loss"]], [v for _, v in r["val_loss"]], "o-", ms=3, color=line.get_color(),
                label=f"{r['label']} ({r['gemm']})")
        late = [v for v in sm[len(sm) // 5:] + [v for _, v in r["val_loss"]] if math.isfinite(v)]
        if late:
            lo, hi = min(lo, min(late)), max(hi, max(late))
    if math.isfinite(lo) and hi > lo:
        ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats / byte): train smoothed, validation dots")
    ax.set_title(title)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path + ".tmp", dpi=110, format="png")  # whole, then renamed into place
    os.replace(path + ".tmp", path)
    plt.close(fig)


def write_json(obj, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)
