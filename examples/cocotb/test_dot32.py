"""cocotb testbench of dot32_e2m1 (examples/sv_dpi/dot32_e2m1.sv: E2M1 K = 32 dot unit, UE8M0
scales, FP32 C and D) with fp4sim as the scoreboard (docs/cocotb.md).

Stimulus: the directed corners of examples/sv_dpi/tb_dot32.sv, then seeded random instructions
(numpy) in batches; the expected D of a whole batch comes from one fp4sim.mma_rows call (golden's
blackwell model, mxf8f6f4 kind), the DUT is driven one instruction per time step. The first
mismatch fails the test with its instruction index and fp4sim.explain_mma's explanation.

Environment: N (random instructions, default 20000), SEED (default 1), BATCH (instructions per
fp4sim call, default 4096), NO_DIRECTED=1 (random only), PLANT_BUG (0 or 1: which unit the
Makefile Verilated; only named in the messages here).
"""

import os
import time

import cocotb
import numpy as np
from cocotb.triggers import Timer

import fp4sim

KIND = dict(kind="mxf8f6f4", elem="e2m1", scale_type="ue8m0", block=32, model="blackwell")
K = 32


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    try:
        return int(text, 0) if text else default
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None


def directed():
    """tb_dot32.sv's corners (its comments give each one's expected D): A, B [n, 32] codes, SA, SB
    [n, 1], C [n] FP32 bits."""
    rows = []

    def case(a=None, b=None, sa=127, sb=127, c=0):
        ea = np.zeros(K, np.uint8)
        eb = np.zeros(K, np.uint8)
        for k, v in (a or {}).items():
            ea[k] = v
        for k, v in (b or {}).items():
            eb[k] = v
        rows.append((ea, eb, sa, sb, c))

    every = {k: 0x7 for k in range(K)}
    case()                                               # 0: all zero
    case(sa=0xFF)                                        # 1: NaN scale
    case(c=0x7FC00000)                                   # 2: NaN C
    case(c=0x7F800000)                                   # 3: +Inf C
    case(c=0x3F800000)                                   # 4: C = 1 beside zero products
    case(a={0: 0x7}, b={0: 0x7}, c=0xC0000002)           # 5: 6*6 - (2 + 2^-21): C below the products
    case(c=0xFF800000)                                   # 6: -Inf C
    case(a=every, b=every, sa=254, sb=254)               # 7: overflow
    case(a=every, b=every, sa=0, sb=0)                   # 8: underflow
    case(a={0: 0x7, 1: 0xF}, b={0: 0x7, 1: 0x7})         # 9: 6*6 - 6*6 = +0
    case(sa=200, sb=200, c=0x00000123)                   # 10: subnormal C, zeros at big scales
    case(a={k: 0xA for k in range(K)}, b={k: 0x2 for k in range(K)}, c=0x3F800000)  # 11: -1*1*32 + 1
    A = np.stack([r[0] for r in rows])
    B = np.stack([r[1] for r in rows])
    SA = np.array([[r[2]] for r in rows], np.uint8)
    SB = np.array([[r[3]] for r in rows], np.uint8)
    C = np.array([r[4] for r in rows], np.uint32)
    return A, B, SA, SB, C


def random_batch(rng: np.random.Generator, n: int):
    """tb_dot32.sv's distribution: uniform codes; scales mostly near 1 (117..137, 80 %), sometimes
    anywhere (19 %), rarely NaN (1 %); C near the products' exponent (85 %, where its alignment
    matters), +-0 (8 %), subnormal (4 %), +-Inf (2 %), NaN (1 %)."""
    A = rng.integers(0, 16, (n, K), dtype=np.uint8)
    B = rng.integers(0, 16, (n, K), dtype=np.uint8)

    def scales():
        r = rng.integers(0, 100, n)
        s = np.where(r < 80, rng.integers(117, 138, n), np.where(r < 99, rng.integers(0, 255, n), 255))
        return s.astype(np.uint8).reshape(n, 1)

    SA, SB = scales(), scales()
    sign = rng.integers(0, 2, n, dtype=np.uint32) << 31
    mant = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    e = SA[:, 0].astype(np.int64) + SB[:, 0] - 127 - 24 + rng.integers(0, 32, n)
    near = sign | (np.clip(e, 0, 254).astype(np.uint32) << 23) | mant
    r = rng.integers(0, 100, n)
    C = np.select([r < 85, r < 93, r < 97, r < 99], [near, sign, sign | mant, sign | 0x7F800000], 0x7FC00000)
    return A, B, SA, SB, C.astype(np.uint32)


def packed_ints(codes: np.ndarray) -> list:
    """[n, 32] E2M1 codes -> the 128-bit port values (element k = bits 4k+3:4k)."""
    packed = fp4sim.pack_nibbles(codes)  # low nibble = even element
    return [int.from_bytes(row, "little") for row in map(bytes, packed)]


@cocotb.test()
async def dot32_matches_fp4sim(dut):
    n = _env_int("N", 20000)
    seed = _env_int("SEED", 1)
    batch = max(1, _env_int("BATCH", 4096))
    unit = "planted-bug" if _env_int("PLANT_BUG", 0) else "correct"
    rng = np.random.default_rng(seed)
    batches = [] if os.environ.get("NO_DIRECTED") == "1" else [directed()]
    # Seconds per phase, wall clock and this process's CPU time (Verilator runs in this process, so
    # the CPU time is what the run costs on a machine shared with other work).
    spent = {"sim": [0.0, 0.0], "fp4sim": [0.0, 0.0], "stimulus": [0.0, 0.0]}

    def clock():
        return time.perf_counter(), time.process_time()

    def add(phase, t0, t1):
        spent[phase][0] += t1[0] - t0[0]
        spent[phase][1] += t1[1] - t0[1]

    # Handles and the trigger looked up once: per instruction the loop only writes, waits and reads.
    a_h, b_h, sa_h, sb_h, c_h, d_h = dut.a, dut.b, dut.sa, dut.sb, dut.c, dut.d
    step = Timer(1, units="ns")
    idx = 0
    remaining = n
    while batches or remaining > 0:
        t0 = clock()
        if batches:
            A, B, SA, SB, C = batches.pop()
        else:
            A, B, SA, SB, C = random_batch(rng, min(batch, remaining))
            remaining -= A.shape[0]
        a_ints, b_ints = packed_ints(A), packed_ints(B)
        sa_l, sb_l, c_l = SA[:, 0].tolist(), SB[:, 0].tolist(), C.tolist()
        t1 = clock()
        expected = fp4sim.mma_rows(A, B, SA, SB, C, flags=False, **KIND).d_bits.tolist()
        t2 = clock()
        for i in range(A.shape[0]):
            a_h.value = a_ints[i]
            b_h.value = b_ints[i]
            sa_h.value = sa_l[i]
            sb_h.value = sb_l[i]
            c_h.value = c_l[i]
            await step
            got = d_h.value.integer
            if got != expected[i]:
                ex = fp4sim.explain_mma(A[i], B[i], SA[i], SB[i], c_l[i], got=got, **KIND)
                dut._log.error(f"MISMATCH at instruction {idx + i} ({unit} unit, seed {seed})\n{ex['text']}")
                assert False, f"first mismatch at instruction {idx + i} ({unit} unit, seed {seed})"
        add("stimulus", t0, t1)
        add("fp4sim", t1, t2)
        add("sim", t2, clock())
        idx += A.shape[0]
    dut._log.info(f"PASS: {idx} instructions ({unit} unit) match fp4sim blackwell, seed {seed}")
    wall = sum(v[0] for v in spent.values())
    dut._log.info("time, wall (CPU) seconds: " + ", ".join(
        f"{k} {v[0]:.3f} ({v[1]:.3f})" for k, v in spent.items()) +
        f"; {1e6 * wall / max(idx, 1):.1f} us per instruction (sim = drive + Verilator + read; fp4sim = mma_rows)")
