"""fp4sim.fake_quantize against fp4sim.quantize(...).dequant on the same tensor, bit for bit; out=
written in place; the two seeds; its one-line errors."""

import numpy as np
import pytest

import fp4sim

RNG = np.random.default_rng(20261206)


def tensor(shape, scale=1.0):
    x = RNG.standard_normal(shape).astype(np.float32) * np.float32(scale)
    x.reshape(-1)[::97] *= np.float32(40.0)  # outliers, so blocks differ in scale
    x.reshape(-1)[5::101] = 0.0
    return x


def bits(a):
    return np.asarray(a).view(np.uint32)


def reference(x, format, axis, **kw):
    """quantize + dequantize; along axis 0 on the transposed tensor, transposed back."""
    if axis == 0:
        flat = x.reshape(x.shape[0], -1)
        return fp4sim.quantize(np.ascontiguousarray(flat.T), format, **kw).dequant.T.reshape(x.shape)
    return fp4sim.quantize(x, format, **kw).dequant


# (format, quantize keywords); fake_quantize gets the same with seed -> sr_seed (and rht_seed where
# the RHT signs are seeded, i.e. sizes other than 16: quantize takes them from its one seed).
CONFIGS = [
    ("nvfp4", {}),
    ("nvfp4", {"pts": "off"}),
    ("nvfp4", {"two_d": True}),
    ("nvfp4", {"rounding": "sr", "seed": 7, "stream": 3}),
    ("nvfp4", {"rht": 16, "rounding": "sr", "seed": 9}),
    ("nvfp4", {"rht": 16, "rht_bf16": True}),
    ("nvfp4", {"rht": 32, "seed": 4, "two_d": True}),
    ("nvfp4", {"rounding": "rz"}),
    ("mxfp4", {}),
    ("mxfp4", {"scale_rule": "rceil", "rounding": "sr", "seed": 11}),
    ("mxfp4", {"rounding": "sr", "seed": 0x1234, "rht": 32}),
    ("mxfp4", {"rounding": "rz"}),
    ("mxfp6-e2m3", {"scale_rule": "rceil"}),
    ("mxfp6-e3m2", {"rounding": "sr", "seed": 2}),
    ("mxfp8-e4m3", {"scale_rule": "rceil"}),
    ("mxfp8-e5m2", {"rounding": "sr", "seed": 3}),
    ("hif4", {}),
    ("hif4", {"rounding": "sr", "seed": 6}),
    ("hif4", {"rht": 64, "seed": 5}),
    ("hif4", {"rht": 16, "rounding": "sr", "seed": 8}),
]


def fake_kw(kw):
    f = dict(kw)
    seed = f.pop("seed", None)
    if seed is not None:
        f["sr_seed"] = seed
        if f.get("rht", 0) not in (0, 16):
            f["rht_seed"] = seed
    return f


IDS = [f"{f}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for f, kw in CONFIGS]


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("format,kw", CONFIGS, ids=IDS)
def test_fake_quantize_equals_quantize_dequant(format, kw, axis):
    x = tensor((192, 320))
    got = fp4sim.fake_quantize(x, format, axis=axis, **fake_kw(kw))
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_array_equal(bits(got), bits(reference(x, format, axis, **kw)))


@pytest.mark.filterwarnings("ignore:x. 1 NaN and 2 Inf:RuntimeWarning")
def test_higher_rank_and_special_values():
    x = tensor((64, 4, 128))
    x[0, 0, :5] = [np.nan, np.inf, -np.inf, -0.0, 1e-40]
    for axis in (-1, 2, 0):
        for format in ("nvfp4", "mxfp4", "hif4"):
            want = reference(x, format, axis if axis == 0 else -1)
            np.testing.assert_array_equal(bits(fp4sim.fake_quantize(x, format, axis=axis)), bits(want))


def test_out_is_written_in_place():
    x = tensor((64, 128))
    want = fp4sim.quantize(x, "mxfp4", rounding="sr", seed=1).dequant
    out = np.full_like(x, 7.0)
    ptr = out.__array_interface__["data"][0]
    r = fp4sim.fake_quantize(x, "mxfp4", out=out, rounding="sr", sr_seed=1)
    assert r is out and out.__array_interface__["data"][0] == ptr
    np.testing.assert_array_equal(bits(out), bits(want))
    # x itself as out, and a view into a larger buffer: written where they are
    y = x.copy()
    assert fp4sim.fake_quantize(y, "mxfp4", out=y, rounding="sr", sr_seed=1) is y
    np.testing.assert_array_equal(bits(y), bits(want))
    big = np.zeros((3, 64, 128), np.float32)
    fp4sim.fake_quantize(x, "mxfp4", out=big[1], rounding="sr", sr_seed=1)
    np.testing.assert_array_equal(bits(big[1]), bits(want))
    assert not big[0].any() and not big[2].any()


class DlpackOnly:
    """An array that only speaks DLPack (as a torch tensor does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_buffer_protocol_and_dlpack_inputs_are_read_in_place():
    x = tensor((32, 64))
    want = fp4sim.quantize(x, "nvfp4").dequant
    np.testing.assert_array_equal(bits(fp4sim.fake_quantize(memoryview(x), "nvfp4")), bits(want))
    np.testing.assert_array_equal(bits(fp4sim.fake_quantize(DlpackOnly(x), "nvfp4")), bits(want))
    out = np.empty_like(x)
    fp4sim.fake_quantize(x, "nvfp4", out=memoryview(out))  # a writable buffer: filled in place
    np.testing.assert_array_equal(bits(out), bits(want))


def test_threads_and_seeds():
    x = tensor((256, 256))
    one = fp4sim.fake_quantize(x, "nvfp4", rounding="sr", sr_seed=3, rht=16, rht_seed=4, threads=1)
    for t in (2, 3, 0):
        np.testing.assert_array_equal(bits(fp4sim.fake_quantize(x, "nvfp4", rounding="sr", sr_seed=3, rht=16,
                                                                rht_seed=4, threads=t)), bits(one))
    # rht_seed reaches only the RHT signs, sr_seed only the SR bits
    rne = fp4sim.fake_quantize(x, "mxfp4", rht=32, rht_seed=1)
    np.testing.assert_array_equal(bits(fp4sim.fake_quantize(x, "mxfp4", rht=32, rht_seed=1, sr_seed=99)), bits(rne))
    assert not np.array_equal(bits(fp4sim.fake_quantize(x, "mxfp4", rht=32, rht_seed=2)), bits(rne))
    sr = fp4sim.fake_quantize(x, "mxfp4", rounding="sr", sr_seed=5)
    other_rht_seed = fp4sim.fake_quantize(x, "mxfp4", rounding="sr", sr_seed=5, rht_seed=8)
    np.testing.assert_array_equal(bits(other_rht_seed), bits(sr))
    assert not np.array_equal(bits(fp4sim.fake_quantize(x, "mxfp4", rounding="sr", sr_seed=6)), bits(sr))
    # rht=16 with an explicit rht_seed: seeded signs, not TE's fixed ones
    assert not np.array_equal(bits(fp4sim.fake_quantize(x, "nvfp4", rht=16, rht_seed=4)),
                              bits(fp4sim.fake_quantize(x, "nvfp4", rht=16)))


x64 = np.zeros((4, 64), np.float32)


@pytest.mark.parametrize("call,message", [
    (lambda: fp4sim.fake_quantize(x64.astype(np.float64)), "x: dtype float64; fake_quantize needs float32"),
    (lambda: fp4sim.fake_quantize(np.zeros((4, 128), np.float32)[:, ::2]), "x: not C-contiguous"),
    (lambda: fp4sim.fake_quantize(np.zeros((4, 40), np.float32)),
     "x: axis -1 has 40 elements, not a multiple of the nvfp4 block size 16"),
    (lambda: fp4sim.fake_quantize(x64, "mxfp4", axis=0), "x: axis 0 has 4 elements, not a multiple of the mxfp4 block size 32"),
    (lambda: fp4sim.fake_quantize(x64, rht=128), "x: axis -1 has 64 elements, not a multiple of the RHT size 128"),
    (lambda: fp4sim.fake_quantize(x64, out=np.zeros((4, 32), np.float32)), "out: shape (4, 32), expected x's (4, 64)"),
    (lambda: fp4sim.fake_quantize(x64, out=np.zeros((4, 64), np.float64)), "out: dtype float64"),
    (lambda: fp4sim.fake_quantize(x64, out=np.zeros((4, 128), np.float32)[:, ::2]), "out: not C-contiguous"),
    (lambda: fp4sim.fake_quantize(x64, out=np.broadcast_to(np.float32(0), (4, 64))), "out: "),
    (lambda: fp4sim.fake_quantize(np.zeros((2, 4, 64), np.float32), axis=1),
     "axis: blocks run along the first (0) or the last (-1) axis, got 1 (rank 3)"),
    (lambda: fp4sim.fake_quantize(x64, axis=2), "axis: 2 is not an axis of x (rank 2)"),
    (lambda: fp4sim.fake_quantize(x64, "hif4", rounding="rz"), "--rounding rz: hif4 rounds half-up"),
    (lambda: fp4sim.fake_quantize(x64, "mxfp4", pts="off"), "--pts applies to nvfp4 only"),
    (lambda: fp4sim.fake_quantize(np.zeros((0, 64), np.float32)), "x: array has no elements"),
    (lambda: fp4sim.fake_quantize([1.0, 2.0]), "x: list is not an array"),
])
def test_errors_are_one_line(call, message):
    with pytest.raises(ValueError) as e:
        call()
    text = str(e.value)
    assert text.startswith(message) and "\n" not in text, text


def test_partial_overlap_is_refused():
    buf = np.zeros(4 * 64 + 16, np.float32)
    x = buf[:256].reshape(4, 64)
    with pytest.raises(ValueError, match="out: overlaps x without being x"):
        fp4sim.fake_quantize(x, out=buf[16:].reshape(4, 64))
