"""The order ``tensor-core``: fpx.mma (C = 0) wherever a matmul or dot order is accepted:
fpx.matmul / fpx.dot, variant specs, compare, the detective and the difference budget."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders import registry, tensor_core


def _data(fmt, shape, seed, distribution="normal"):
    n = int(np.prod(shape))
    return fpx.generate(distribution, n, fmt, seed).reshape(shape)


def _rounded(x, rounding):
    """x rounded to ``rounding`` and kept in float32 (as input_rounding= does)."""
    return np.asarray(fpx.as_format(fpx.as_format(x, rounding), "float32"))


# ----------------------------------------------------------------------------- fpx.matmul, fpx.dot


@pytest.mark.parametrize("arch", ["v100", "a100", "h100"])
def test_matmul_and_dot_are_mma_with_c_zero_on_float16(arch):
    A, B = _data("float16", (9, 40), 0), _data("float16", (40, 7), 1)
    M = fpx.matmul(A, B, "tensor-core", arch=arch)
    assert M.dtype == np.float32
    assert np.array_equal(
        fpx.to_bits(M), fpx.to_bits(fpx.mma(A, B, 0.0, arch=arch, inputs="float16"))
    )
    d = fpx.dot(A[2], np.ascontiguousarray(B[:, 3]), "tensor-core", arch=arch)
    assert d.dtype == np.float32 and fpx.to_bits(d) == fpx.to_bits(M[2, 3])


@pytest.mark.parametrize(
    ("arch", "rounding", "inputs"),
    [
        ("a100", "tf32", "tf32"),
        ("h100", "tf32", "tf32"),
        ("h100", "tf32-truncate", "tf32"),
        ("a100", "bfloat16", "bfloat16"),
        ("h100", "float8_e4m3", "float8_e4m3"),
        ("h100", "float8_e5m2", "float8_e5m2"),
    ],
)
def test_float32_inputs_take_the_format_of_the_input_rounding(arch, rounding, inputs):
    A, B = _data("float32", (6, 70), 2), _data("float32", (70, 5), 3)
    M = fpx.matmul(A, B, "tensor-core", arch=arch, input_rounding=rounding)
    want = fpx.mma(_rounded(A, rounding), _rounded(B, rounding), 0.0, arch=arch, inputs=inputs)
    assert np.array_equal(fpx.to_bits(M), fpx.to_bits(want))
    d = fpx.dot(
        A[1], np.ascontiguousarray(B[:, 4]), "tensor-core", arch=arch, input_rounding=rounding
    )
    assert fpx.to_bits(d) == fpx.to_bits(want[1, 4])


def test_bfloat16_arrays_are_bfloat16_inputs():
    A, B = _data("bfloat16", (5, 33), 4), _data("bfloat16", (33, 4), 5)
    M = fpx.matmul(A, B, "tensor-core", arch="a100")
    assert np.array_equal(M, fpx.mma(A, B, 0.0, arch="a100", inputs="bfloat16"))


def test_float32_without_input_rounding_is_refused_with_what_the_arch_takes():
    A = _data("float32", (4, 8), 6)
    with pytest.raises(
        ValueError,
        match=r"H100 tensor cores take float16, bfloat16, tf32, "
        r"float8_e4m3, float8_e5m2 inputs, not float32.*e\.g\. \+tf32",
    ):
        fpx.matmul(A, A.T.copy(), "tensor-core", arch="h100")
    with pytest.raises(ValueError, match=r"A100 tensor cores take float16, bfloat16, tf32 inputs"):
        fpx.dot(A[0], A[1], "tensor-core", arch="a100")
    with pytest.raises(ValueError, match=r"V100 tensor cores take no tf32 inputs"):
        fpx.matmul(A, A.T.copy(), "tensor-core", arch="v100", input_rounding="tf32")
    with pytest.raises(ValueError, match=r"not float64"):
        fpx.matmul(
            A.astype(np.float64), A.T.astype(np.float64), "tensor-core", input_rounding="tf32"
        )
    with pytest.raises(ValueError, match=r"unknown arch 'rtx3090'"):
        fpx.matmul(A, A.T.copy(), "tensor-core", arch="rtx3090", input_rounding="tf32")
    with pytest.raises(ValueError, match=r"the MI100 matrix cores take no tf32 inputs"):
        fpx.matmul(A, A.T.copy(), "tensor-core", arch="mi100", input_rounding="tf32")


def test_every_new_arch_is_an_order_parameter_and_a_detective_candidate():
    # the L40S (Ada), the B200 and the MI300X (an alias) as orders: fpx.mma with C = 0
    A = _rounded(_data("float32", (3, 40), 8), "tf32")
    for arch in ("l40s", "b200", "MI300X"):
        got = fpx.matmul(A, A.T.copy(), "tensor-core", arch=arch, input_rounding="tf32")
        want = fpx.mma(A, A.T.copy(), 0.0, arch=arch, inputs="tf32")
        assert np.array_equal(fpx.to_bits(got), fpx.to_bits(want))
    spec = registry.TENSOR_CORES[0]
    grid = {dict(p)["arch"] for p in spec.grid}
    assert grid == {"v100", "a100", "ada", "h100", "h100-mma", "b200", "b200-mma", "b200-rn",
                    "mi100", "mi250", "mi300"}  # fmt: skip


def test_no_accumulator_fma_or_split_k_on_the_tensor_cores():
    why = "the tensor cores' own arithmetic"
    for text in ("tensor-core(arch=h100)@float32", "tensor-core+fma+tf32"):
        with pytest.raises(ValueError, match=why):
            fpx.parse_spec(text, "matmul")
    with pytest.raises(ValueError, match="split_k does not apply to order 'tensor-core'"):
        fpx.parse_spec("tensor-core(split_k=2)", "matmul")
    A = _data("float16", (4, 8), 7)
    with pytest.raises(ValueError, match=why):
        fpx.matmul(A, A.T.copy(), "tensor-core", fma=True)
    with pytest.raises(ValueError, match=why):
        fpx.dot(A[0], A[1], "tensor-core", accumulate="float64")
    with pytest.raises(ValueError, match="split_k does not apply"):
        fpx.matmul(A, A.T.copy(), "tensor-core", split_k=2)


def test_labelled_library_verified_against_published_outputs():
    for op in ("dot", "matmul"):
        v = fpx.variants(op, details=True)["tensor-core"]
        assert v.kind == "library"
        assert (
            "verified against published hardware outputs of the V100, A100 and H100 and "
            "outputs measured on an H200, the published models elsewhere "
            "(docs/tensor_cores.md)" in v.description
        )
        assert "on GPU here" not in v.description
    assert "tensor-core" not in fpx.orders("sum")
    assert tensor_core.verified("h100") == (
        "H100 (Hopper): hardware rows matched: every published H100 row (fp16 float32 and "
        "float16 out, bf16, tf32, E4M3 and E5M2 float32 and float16 out; 5,000 each, "
        "tests/data/tensor_cores/published); an H100 80GB HBM3 measured here the same way, "
        "every row alike (h100hbm3_*.npz), and cuBLASLt's FP8 GEMM on it gives the published "
        "FP8 float32 rows; FP8 float32 out is Hopper's own FP8 path (wgmma, as cuBLAS "
        "runs it); mma.sync unpacks FP8 to float16 and gives h100-mma (docs/tensor_cores.md)"
    )
    assert tensor_core.verified("h200-mma").startswith(
        "H100 / H200 through mma.sync (Hopper): hardware rows matched: an H200's and an H100's"
    )
    assert tensor_core.verified("MI300X").startswith(
        "MI300 / MI300A / MI300X (CDNA3): model only (MI300MC.m"
    )


# ----------------------------------------------------------------------------- specs and compare


def test_compare_row_is_mma_on_the_rounded_inputs():
    spec = "tensor-core(arch=h100)+tf32"
    c = fpx.compare("matmul", n=40, variants=[spec, "sequential"], seed=3)
    A, B = c.inputs["A"], c.inputs["B"]
    want = fpx.mma(_rounded(A, "tf32"), _rounded(B, "tf32"), 0.0, arch="h100", inputs="tf32")
    got = c.results[(spec, "emulated")]
    assert np.array_equal(fpx.to_bits(got), fpx.to_bits(want))
    row = c.table.set_index("variant").loc[spec]
    # measured against the exact product of the float32 inputs: tf32 costs ~2^13 ulps
    assert row["max_abs_ulp"] == np.max(np.abs(fpx.ulp_distance(c.reference, want)))
    assert row["max_abs_ulp"] > 100


def test_compare_on_float16_data_gives_float32_rows_against_a_float32_reference():
    c = fpx.compare("matmul", format="float16", n=24, variants=["tensor-core(arch=a100)"])
    got = c.results[("tensor-core(arch=a100)", "emulated")]
    A, B = c.inputs["A"], c.inputs["B"]
    assert got.dtype == np.float32
    assert np.array_equal(got, fpx.mma(A, B, 0.0, arch="a100", inputs="float16"))
    exact32 = fpx.exact_matmul(A.astype(np.float32), B.astype(np.float32))
    row = c.table.set_index("variant").loc["tensor-core(arch=a100)"]
    assert row["max_abs_ulp"] == np.max(np.abs(fpx.ulp_distance(exact32, got)))
    d = fpx.compare("dot", format="bfloat16", n=300, variants=["tensor-core(arch=h100)"])
    a, b = d.inputs["a"], d.inputs["b"]
    want = fpx.mma(a[None, :], b[:, None], 0.0, arch="h100", inputs="bfloat16")[0, 0]
    assert fpx.to_bits(d.results[("tensor-core(arch=h100)", "emulated")]) == fpx.to_bits(want)


def test_the_order_is_offered_where_it_runs():
    from fpexplore.orders.registry import orders_for

    assert "tensor-core" in orders_for("matmul", "float16")
    assert "tensor-core" not in orders_for("matmul", "float32")  # (it needs +tf32 there)
    assert "tensor-core" in orders_for("matmul", "float32", rounded=True)
    assert "tensor-core" not in orders_for("matmul", "float64", rounded=True)


# ----------------------------------------------------------------------------- the detective


def test_the_detective_names_the_architecture_of_a_float16_result():
    """fpx.mma's float32 results of float16 inputs: the detective names the family that
    produced them, and only the architectures with the same float16 rules (Ada's are
    Ampere's, Blackwell's Hopper's: fpx.gpus()) reproduce every element."""
    A, B = _data("float16", (12, 64), 0), _data("float16", (64, 10), 1)
    same = {"v100": {"v100"}, "a100": {"a100", "ada"}, "mi300": {"mi300"}, "mi250": {"mi250"},
            "h100": {"h100", "h100-mma", "b200", "b200-mma"}, "mi100": {"mi100"}}  # fmt: skip
    observed = {a: fpx.mma(A, B, 0.0, arch=a, inputs="float16") for a in same}
    assert not np.array_equal(observed["a100"], observed["h100"])
    for arch, obs in observed.items():
        df = fpx.match_orders((A, B), obs, "matmul", top=None)
        assert df.loc[0, "variant"] == f"tensor-core(arch={arch})" and df.loc[0, "exact"]
        assert df.attrs["exact_candidates"] == len(same[arch])
        exact = {dict(p)["arch"] for p in df[df["exact"]]["params"]}
        assert exact == same[arch]
        assert df.loc[0, "params"] == {"arch": arch}


def test_the_detective_names_a100_or_h100_for_tf32_results_of_float32_data():
    A, B = _data("float32", (8, 48), 2), _data("float32", (48, 6), 3)
    At, Bt = _rounded(A, "tf32"), _rounded(B, "tf32")
    for arch, *twins in (("a100", "ada"), ("h100", "h100-mma", "b200", "b200-mma")):  # tf32 alike
        obs = fpx.mma(At, Bt, 0.0, arch=arch, inputs="tf32")
        df = fpx.match_orders((A, B), obs, "matmul", top=5)
        for i, a in enumerate([arch, *twins]):
            assert df.loc[i, "variant"] == f"tensor-core(arch={a})+tf32" and df.loc[i, "exact"]
        assert not df.loc[len(twins) + 1, "exact"]
    # a dot product: 1xK @ Kx1
    a, b = _data("float16", (300,), 4), _data("float16", (300,), 5)
    obs = fpx.mma(a[None, :], b[:, None], 0.0, arch="a100", inputs="float16")[0, 0]
    df = fpx.match_orders((a, b), obs, "dot", top=None)
    assert "tensor-core(arch=a100)" in set(df[df["exact"]]["variant"])


def test_the_detective_names_both_gpus_of_an_mma_sync_fp8_result():
    """FP8 products as mma.sync computes them (Hopper measured here, the B200's published
    rows): reproduced by h100-mma and b200-mma alike, not by the GPUs' own FP8 paths."""
    rng = np.random.default_rng(11)  # FP8 values of exponents -8 .. 8: the paths differ
    A, B = (_rounded(rng.standard_normal(s) * np.exp2(rng.integers(-6, 6, s)), "float8_e4m3")
            for s in ((6, 128), (128, 5)))  # fmt: skip
    obs = fpx.mma(A, B, 0.0, arch="h100-mma", inputs="float8_e4m3")
    assert not np.array_equal(obs, fpx.mma(A, B, 0.0, arch="h100", inputs="float8_e4m3"))
    df = fpx.match_orders((A, B), obs, "matmul", top=None)
    exact = {v for v in df[df["exact"]]["variant"] if v.startswith("tensor-core")}
    assert exact == {"tensor-core(arch=h100-mma)+float8_e4m3",
                     "tensor-core(arch=b200-mma)+float8_e4m3"}  # fmt: skip


def test_candidates_try_each_family_with_the_roundings_it_reads():
    from fpexplore.detective import candidates

    tc = [str(c) for c in candidates("matmul", "float32") if c.name == "tensor-core"]
    assert "tensor-core(arch=a100)+tf32" in tc and "tensor-core(arch=h100)+float8_e4m3" in tc
    assert "tensor-core(arch=mi300)+float8_e4m3fnuz" in tc
    assert not any(c.endswith(")") for c in tc)  # float32 data always with a rounding
    tc16 = [str(c) for c in candidates("matmul", "float16") if c.name == "tensor-core"]
    archs = ["v100", "a100", "ada", "h100", "h100-mma", "b200", "b200-mma", "b200-rn", "mi100",
             "mi250", "mi300"]  # fmt: skip
    assert tc16 == [f"tensor-core(arch={a})" for a in archs]  # one GPU per set of rules
    assert not [c for c in candidates("matmul", "float64") if c.name == "tensor-core"]


# ----------------------------------------------------------------------------- the budget


def test_budget_has_a_tensor_core_factor():
    A, B = _data("float32", (10, 64), 5), _data("float32", (64, 8), 6)
    tc = fpx.mma(_rounded(A, "tf32"), _rounded(B, "tf32"), 0.0, arch="a100", inputs="tf32")
    seq_tf32 = fpx.matmul(A, B, "sequential", input_rounding="tf32")
    bud = fpx.difference_budget((A, B), "sequential+fma", "tensor-core(arch=a100)+tf32", "matmul")
    t = bud.table
    assert list(t["step"]) == ["start", "input_rounding", "fma", "tensor_core"]
    assert list(t["config"]) == [
        "sequential+fma",
        "sequential+fma+tf32",
        "sequential+tf32",
        "tensor-core(arch=a100)+tf32",
    ]
    assert np.array_equal(fpx.to_bits(bud.end), fpx.to_bits(tc))
    # the tensor cores' share: from sequential on the same tf32 inputs to the tensor core
    share = int(np.sum(fpx.ulp_distance(seq_tf32, tc)))
    assert t.loc[3, "delta_ulp"] == share != 0
    assert int(t["delta_ulp"].sum()) == bud.total_ulp
    assert "tensor_core" in fpx.budget.FACTORS
    # back from the tensor cores: they go first, then the settings they do not have
    back = fpx.difference_budget(
        (A, B), "tensor-core(arch=a100)+tf32", "sequential@float64", "matmul"
    )
    assert list(back.table["step"]) == ["start", "tensor_core", "input_rounding", "accumulate"]
    assert back.table.loc[1, "delta_ulp"] == -share and back.total_ulp == sum(
        back.table["delta_ulp"]
    )
    # without the factor, order makes the switch
    bud = fpx.difference_budget(
        (A, B),
        "sequential",
        "tensor-core(arch=a100)+tf32",
        "matmul",
        factors=("input_rounding", "order"),
    )
    assert list(bud.table["step"]) == ["start", "input_rounding", "order"]
    assert bud.table.loc[2, "delta_ulp"] == share


def test_budget_counts_float16_data_in_the_tensor_cores_float32():
    A, B = _data("float16", (8, 40), 7), _data("float16", (40, 6), 8)
    bud = fpx.difference_budget((A, B), "sequential", "tensor-core(arch=h100)", "matmul")
    assert list(bud.table["step"]) == ["start", "tensor_core"]
    tc = fpx.mma(A, B, 0.0, arch="h100", inputs="float16")
    seq = fpx.matmul(A, B, "sequential").astype(np.float32)  # exact widening
    assert np.array_equal(bud.end, tc) and np.array_equal(bud.start, seq)
    assert bud.total_ulp == int(np.sum(fpx.ulp_distance(seq, tc))) == bud.table.loc[1, "delta_ulp"]


def test_mma_refuses_complex_inputs_naming_them():
    """Pass 18: a complex C (1+2j) or B was read as its real part, with NumPy's
    ComplexWarning the only sign."""
    A, B = np.ones((2, 4), np.float16), np.ones((4, 3), np.float16)
    with pytest.raises(TypeError, match="C: expected a floating-point or integer array"):
        fpx.mma(A, B, 1 + 2j, arch="a100")
    with pytest.raises(TypeError, match="B: expected a floating-point or integer array"):
        fpx.mma(A.astype(np.float32), B.astype(np.complex64) * 1j, 0, arch="a100", inputs="tf32")
