"""Every modelled GPU's tensor-core (NVIDIA) or matrix-core (AMD) arithmetic, defined once.

One :class:`Rules` per architecture (how a block of products and c is summed and rounded),
one :class:`Gpu` per ``arch=`` key (its rules, the model file it comes from, what backs it),
``ALIASES`` from product names to keys; :func:`gpus` is the table of all of them
(docs/tensor_cores.md is written from it). Pure data: the arithmetic is in tensor_core
(NVIDIA, CDNA3) and matrix_core (CDNA1, CDNA2).

The parameters are those of the MATLAB models of Khattak and Mikaitis ("Accurate models of
NVIDIA tensor cores", 2025, and the matrix-core models of the same repository,
north-numerical-computing/MATLAB-tensor-core, BSD 2-Clause), read from the model files and
written here as data; docs/tensor_cores.md gives the rules they parametrise. The block-scaled
kinds (``BLOCK_SCALED``: Blackwell's mxf8f6f4, mxf4, mxf4nvf4) are MMA-Sim's (Xie et al.,
arXiv:2511.10909, 2025; microsoft/MMA-Sim, MIT); their arithmetic is in block_scaled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import checks

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALIASES",
    "ARCHS",
    "BLOCK_SCALED",
    "INPUTS",
    "OUTPUTS",
    "Gpu",
    "Rules",
    "ScaledKind",
    "gpu",
    "gpus",
    "one_per_architecture",
]

INPUTS = (
    "float16",
    "bfloat16",
    "tf32",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)
OUTPUTS = ("float32", "float16")

#: how a block is summed (docs/tensor_cores.md, one section each)
SUMS = {
    "aligned": "products and c aligned to the largest exponent, truncated, summed exactly",
    "exact": "products and c summed exactly (no alignment loss)",
    "pairwise": "products rounded to float32, then float32 additions in a pairwise tree, c last",
    "late-c": "products aligned to their largest exponent and truncated; c added after, the "
    "smaller of the two rounded down",
    "odd-even": "even and odd products aligned apart, joined rounding down, c added after",
    "two-f16": "FP8 unpacked to float16: two float16-input blocks of 16 (k mod 4 in {0, 1}, "
    "then the rest), then c added in one rounding to nearest",
}
_ROUNDING = {"rz": "toward zero", "rne": "nearest-even"}  # (words for the table)
_FP8 = ("float8_e4m3", "float8_e5m2")
_FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz")


@dataclass(frozen=True)
class Rules:
    """One architecture's arithmetic: per input format (block, neab), neab the extra fraction
    bits kept in alignment (an aligned term keeps 23 + neab; None: no alignment loss); the
    least alignment exponent per output (``floor``); the final rounding per output; the
    inputs with a float16 output; how a block is summed (``sum``, ``fp8_sum`` for FP8
    inputs); the product limit (a product of 2**128 or more overflows) and flushing of
    subnormal inputs, products and results."""

    name: str
    vendor: str
    inputs: dict
    floor: dict
    rounding: dict
    float16_out: tuple = ()
    sum: str = "aligned"
    fp8_sum: dict = field(default_factory=dict)  # output -> sum, where FP8 inputs differ
    product_limit: bool = False
    flush: bool = False
    refusals: dict = field(default_factory=dict)  # (inputs, output) -> why not modelled

    def sum_of(self, inputs: str, output: str) -> str:
        """How a block of ``inputs`` with this ``output`` is summed."""
        if inputs in _FP8 + _FNUZ and output in self.fp8_sum:
            return self.fp8_sum[output]
        return self.sum


_F16_20 = {"float32": -132, "float16": -20}
_AMPERE_IN = {"float16": (8, 1), "bfloat16": (8, 1), "tf32": (4, 1)}
_HOPPER_IN = {"float16": (16, 2), "bfloat16": (16, 2), "tf32": (8, 2)}
_RZ = {"float32": "rz", "float16": "rne"}
_RNE = {"float32": "rne", "float16": "rne"}
_AMD_NOTE = "AMD matrix-core models give a float32 output only"

VOLTA = Rules("Volta", "NVIDIA", {"float16": (4, 0)}, {"float32": -1024, "float16": -19}, _RZ,
              ("float16",))  # fmt: skip
AMPERE = Rules("Ampere", "NVIDIA", _AMPERE_IN, _F16_20, _RZ, ("float16",))
ADA = Rules(
    "Ada",
    "NVIDIA",
    {**_AMPERE_IN, "float8_e4m3": (16, -10), "float8_e5m2": (16, -10)},
    _F16_20,
    _RZ,
    ("float16",),
    refusals={
        (f, "float16"): "the Ada model files (AdaTC.m, L40STC.m) give FP8 inputs a float16 "
        "output with 10 + neab = 0 fraction bits, not a usable rule"
        for f in _FP8
    },
)
HOPPER = Rules(
    "Hopper",
    "NVIDIA",
    {**_HOPPER_IN, "float8_e4m3": (32, -10), "float8_e5m2": (32, -10)},
    {"float32": -133, "float16": -21},
    _RZ,
    ("float16", *_FP8),
    fp8_sum={"float16": "two-f16"},
)
#: Hopper's mma.sync with FP8 inputs (H200 SASS: F2FP unpack + two HMMA.16816 per instruction)
HOPPER_MMA = replace(HOPPER, inputs={**_HOPPER_IN, "float8_e4m3": (32, 2), "float8_e5m2": (32, 2)},
                     fp8_sum={"float16": "two-f16", "float32": "two-f16"})  # fmt: skip
_B200_FP8 = {
    (f, "float16"): "the B200 model (B200TC.m) gives FP8 inputs a float32 output only "
    "(mma.sync's float16 output: arch='b200-mma')"
    for f in _FP8
}
#: B200TC.m: FP8 in one block of 32 keeping 25 bits, c aligned with the products; MMA-Sim
#: (arXiv:2511.10909) gives tcgen05's kind::f8f6f4, cuBLAS's FP8 path, the same rule
BLACKWELL = Rules(
    "Blackwell",
    "NVIDIA",
    {**_HOPPER_IN, "float8_e4m3": (32, 2), "float8_e5m2": (32, 2)},
    {"float32": -133, "float16": -21},
    _RZ,
    ("float16",),
    refusals=_B200_FP8,
)
#: the B200's mma.sync with FP8 inputs: Hopper's (FP8 unpacked to float16, two float16 blocks,
#: c last; the B200's float16 blocks are Hopper's): every published B200 FP8 row, which the
#: published test program ran through mma.sync (B200TC.m's block of 32 gives 64% of them)
BLACKWELL_MMA = replace(HOPPER_MMA, name="Blackwell")
BLACKWELL_RN = Rules(
    "Blackwell, round to nearest",
    "NVIDIA",
    BLACKWELL.inputs,
    {"float32": -133, "float16": -15},
    _RNE,
    ("float16",),
    refusals=_B200_FP8,
)
CDNA1 = Rules("CDNA1", "AMD", {"float16": (4, None), "bfloat16": (2, None)}, {}, {"float32": "rne"},
              sum="exact")  # fmt: skip
CDNA2 = Rules("CDNA2", "AMD", {"float16": (4, None), "bfloat16": (4, None)}, {},
              {"float32": "rne"}, sum="pairwise", product_limit=True, flush=True)  # fmt: skip
CDNA3 = Rules(
    "CDNA3",
    "AMD",
    {**_AMPERE_IN, "float8_e4m3fnuz": (16, 1), "float8_e5m2fnuz": (16, 1)},
    {},
    {"float32": "rne"},
    sum="late-c",
    fp8_sum={"float32": "odd-even"},
    product_limit=True,
)


@dataclass(frozen=True)
class Gpu:
    """One ``arch=`` key: the GPU, its architecture's rules, the model file they come from
    and the evidence behind them (hardware rows matched, or the model only)."""

    key: str
    name: str
    rules: Rules
    source: str
    evidence: str

    @property
    def verified(self) -> str:
        """What the model of this GPU is checked against, in a sentence."""
        return self.evidence


def _rows(gpu: str, formats: str) -> str:
    return (
        f"hardware rows matched: every published {gpu} row ({formats}; 5,000 each, "
        "tests/data/tensor_cores/published)"
    )


def _model(file: str, note: str = "") -> str:
    return f"model only ({file}{note}): no hardware rows here"


_ADA_ROWS = "fp16 float32 and float16 out, bf16, tf32, E4M3 and E5M2 float32 out"
_HOPPER_ROWS = "fp16 float32 and float16 out, bf16, tf32, E4M3 and E5M2 float32 and float16 out"
_H200 = (
    "; an H200 measured here (tests/data/tensor_cores/h200_*.npz, "
    "mma.sync: fp16 float32 and float16 out, bf16, tf32, E4M3 and E5M2 float16 out, one "
    "instruction and chains; FP8 float32 out: cuBLASLt's FP8 GEMM with fast accumulation)"
)
_H100 = (
    "; an H100 80GB HBM3 measured here the same way, every row alike (h100hbm3_*.npz), and "
    "cuBLASLt's FP8 GEMM on it gives the published FP8 float32 rows"
)
_HOPPER_FP8 = (
    "; FP8 float32 out is Hopper's own FP8 path (wgmma, as cuBLAS runs it); mma.sync "
    "unpacks FP8 to float16 and gives h100-mma"
)

ARCHS = {
    g.key: g
    for g in (
        Gpu("v100", "V100", VOLTA, "V100TC.m", _rows("V100", "fp16, float32 and float16 out")),
        Gpu("a100", "A100", AMPERE, "A100TC.m",
            _rows("A100", "fp16 float32 and float16 out, bf16, tf32")),  # fmt: skip
        Gpu("a2", "A2", AMPERE, "A2TC.m", _rows("A2", "fp16 float32 and float16 out, bf16, tf32")),
        Gpu("a30", "A30", AMPERE, "A30TC.m", _model("A30TC.m calls A100TC.m")),
        Gpu("ada", "RTX 1000 Ada", ADA, "AdaTC.m", _rows("RTX 1000 Ada", _ADA_ROWS)),
        Gpu("l40s", "L40S", ADA, "L40STC.m", _rows("L40S", _ADA_ROWS)),
        Gpu("h100", "H100", HOPPER, "H100TC.m",
            _rows("H100", _HOPPER_ROWS) + _H100 + _HOPPER_FP8),  # fmt: skip
        Gpu("h200", "H200", HOPPER, "H200TC.m", _rows("H200", _HOPPER_ROWS) + _H200 + _HOPPER_FP8),
        Gpu("h100-mma", "H100 / H200 through mma.sync", HOPPER_MMA, "measured here",
            "hardware rows matched: an H200's and an H100's mma.sync with E4M3 and E5M2 "
            "inputs, float32 and float16 out, one instruction and chains (tests/data/"
            "tensor_cores/h200_fp8.npz, h100hbm3_fp8.npz); other inputs as h100"),  # fmt: skip
        Gpu("b200", "B200", BLACKWELL, "B200TC.m",
            _rows("B200", "fp16 float32 and float16 out, bf16, tf32") + "; FP8: B200TC.m's "
            "rule, MMA-Sim's for tcgen05 (cuBLAS's FP8 path), no hardware rows here; the "
            "published FP8 rows ran through mma.sync: b200-mma"),
        Gpu("b200-mma", "B200 through mma.sync", BLACKWELL_MMA, "B200TC.m",
            _rows("B200 FP8", "E4M3 and E5M2, float32 and float16 out") + ", made with mma.sync: "
            "FP8 unpacked to float16, two float16 blocks, c last, as h100-mma; other inputs as "
            "b200"),  # fmt: skip
        Gpu("b200-rn", "B200 (round-to-nearest variant)", BLACKWELL_RN, "B200TCRN.m",
            _model("B200TCRN.m, 'the B200 with final rounding mode set to RN'; the model "
                   "files do not say which instruction or setting gives it")),  # fmt: skip
        Gpu("rtx-pro-6000", "RTX PRO 6000 Blackwell", BLACKWELL, "RTXPRO6000TC.m",
            _model("RTXPRO6000TC.m calls B200TC.m")),  # fmt: skip
        Gpu("mi100", "MI100", CDNA1, "MI100MC.m", _model("MI100MC.m")),
        Gpu("mi250", "MI250 / MI210", CDNA2, "MI210MC.m", _model("MI210MC.m; MI250MC.m calls it")),
        Gpu("mi300", "MI300 / MI300A / MI300X", CDNA3, "MI300MC.m",
            _model("MI300MC.m, repository commit b4bf135; MI300AMC.m and MI300XMC.m call it")),
    )
}  # fmt: skip


@dataclass(frozen=True)
class ScaledKind:
    """One block-scaled tensor-core kind as MMA-Sim models it (Xie, Wang, Yang, Yang,
    "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and Matrix Cores", arXiv:2511.10909,
    2025; microsoft/MMA-Sim, MIT, commit c785138): the element formats of A and B, K of one
    instruction, the scale formats with the blocks each takes, the fraction bits an aligned
    term keeps, and what is aligned (``products``: each scaled product; ``groups``: each
    group of 16 products summed exactly, times its two scales). docs/tensor_cores.md, section
    "Block-scaled (Blackwell, tcgen05)", has the rules."""

    kind: str
    k: int
    elements: tuple
    scales: dict
    fraction_bits: int
    terms: str


_MX_ELEMENTS = ("float8_e4m3", "float8_e5m2", "float4_e2m1")
_MXF8F6F4 = ScaledKind("mxf8f6f4", 32, _MX_ELEMENTS, {"float8_e8m0": (32,)}, 25, "products")
_MXF4 = ScaledKind("mxf4", 64, ("float4_e2m1",), {"float8_e8m0": (32,)}, 35, "groups")
#: tcgen05.mma's block-scaled kinds (MMA-Sim's tcgen05mma_block_scale, "Blackwell": the B200)
#: and mma.sync's (its mma_block_scale, "RTX Blackwell", sm_120a: the RTX PRO 6000), which
#: also take E4M3 scales per 32 in mxf4nvf4
BLOCK_SCALED = {
    "b200": {k.kind: k for k in (_MXF8F6F4, _MXF4, replace(
        _MXF4, kind="mxf4nvf4", scales={"float8_e8m0": (32, 16), "float8_e4m3": (16,)}))},
    "rtx-pro-6000": {k.kind: k for k in (_MXF8F6F4, _MXF4, replace(
        _MXF4, kind="mxf4nvf4", scales={"float8_e8m0": (32, 16), "float8_e4m3": (32, 16)}))},
}  # fmt: skip

#: product names -> the key of the GPU with the same architecture's model
ALIASES = {
    "rtx1000": "ada",
    "rtx4090": "ada",
    "a40": "a100",
    "gh200": "h100",
    "h200-mma": "h100-mma",
    "rtx5090": "rtx-pro-6000",
    "mi210": "mi250",
    "mi300a": "mi300",
    "mi300x": "mi300",
}


def _names() -> str:
    return ", ".join(ARCHS)


def gpu(arch) -> Gpu:
    """The modelled GPU ``arch`` names (a key of ``ARCHS`` or an alias, any case)."""
    key = str(arch).lower() if isinstance(arch, str) else None
    key = ALIASES.get(key, key)
    if key not in ARCHS:
        raise ValueError(
            f"unknown arch {checks.shown(arch)}; modelled: {_names()} "
            f"(aliases: {', '.join(f'{a}={k}' for a, k in ALIASES.items())})"
        )
    return ARCHS[key]


def one_per_architecture() -> tuple[str, ...]:
    """The first key of each set of rules, in the table's order (Hopper and the B200 twice:
    their own FP8 paths and mma.sync's)."""
    first = {}
    for g in ARCHS.values():
        first.setdefault(id(g.rules), g.key)
    return tuple(first.values())


def gpus() -> pd.DataFrame:
    """Every modelled GPU: one row per ``arch=`` key and input format.

    Returns
    -------
    pandas.DataFrame
        Columns: ``arch`` (the key of ``fpx.mma(arch=...)``), ``gpu``, ``aliases``,
        ``architecture``, ``vendor``, ``inputs``, ``outputs``, ``block`` (products summed at
        once), ``alignment_bits`` (fraction bits an aligned term keeps; "exact" where none
        are lost, "float32 additions" for a pairwise tree), ``floor`` (the least alignment
        exponent per output, "none" where there is none), ``rounding`` (the final rounding
        per output), ``sum`` (how a block is summed, docs/tensor_cores.md), ``source`` (the
        model file) and ``evidence`` (hardware rows matched, or "model only"). The
        block-scaled kinds (``mma(..., scale_a=, scale_b=)``) are ``BLOCK_SCALED``, not rows
        here (docs/tensor_cores.md, "Block-scaled (Blackwell, tcgen05)").
    """
    import pandas as pd

    rows = []
    for g in ARCHS.values():
        r = g.rules
        aliases = ", ".join(a for a, k in ALIASES.items() if k == g.key)
        for fmt, (block, neab) in r.inputs.items():
            outs = [o for o in r.rounding if o == "float32" or fmt in r.float16_out]
            bits = (
                "exact" if r.sum == "exact" else "float32 additions"
                if r.sum == "pairwise" else str(23 + neab)
            )  # fmt: skip
            rows.append({
                "arch": g.key, "gpu": g.name, "aliases": aliases, "architecture": r.name,
                "vendor": r.vendor, "inputs": fmt, "outputs": ", ".join(outs), "block": block,
                "alignment_bits": bits,
                "floor": ", ".join(f"{o}: {r.floor[o]}" for o in outs if o in r.floor) or "none",
                "rounding": ", ".join(f"{o}: {_ROUNDING[r.rounding[o]]}" for o in outs),
                "sum": ", ".join(sorted({r.sum_of(fmt, o) for o in outs})),
                "source": g.source, "evidence": g.evidence,
            })  # fmt: skip
    return pd.DataFrame(rows)
