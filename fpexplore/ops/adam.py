"""The Adam optimizer step ``adam_step``: formula variants (divide-then-multiply,
multiply-then-divide, their fused form, torch.optim.Adam's CPU order) and ``exact`` (every output
the correctly rounded exact real step); ``adam_run`` / ``adam_pass_rates`` over several steps.

Arrays keep their storage format F; every elementwise operation is rounded once to F
(:class:`fpexplore.ops.formula.RoundedArith`); ``fma`` is :func:`fpexplore.fma`. Case reproduced
(docs/cases.md section 5): the Ascend NPU ``apply_adam`` article (multiply-then-divide vs
divide-then-multiply agree on ~99.99 % of the elements in float32).

The variant ``torch`` of :func:`adam_step` (its docstring gives the formulas) is
``torch.optim.Adam`` on the CPU (``foreach`` False and True alike; defaults
``amsgrad=False, maximize=False``): ``exp_avg.lerp_(g, 1 - beta1)`` (the vectorized CPU ``lerp`` is
``lerp-fma``, ``vec::fmadd``), ``exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)`` (ATen's
CPU ``addcmul`` is ``self + (value*t1)*t2`` with the last multiply-add fused),
``(exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps)`` and ``addcdiv_`` (``self + (value*t1)/t2``: multiply,
then divide). Checked against PyTorch 2.14.1 (CPU, float32, 10,000 parameters, 10 steps, foreach
False and True; tests/test_adam_torch.py): m and v are bit-identical at every step; param too with
``sqrt="torch"``, while with the default IEEE ``sqrt`` a few parameters per step differ by an ulp or
two (PyTorch's ``sqrt`` is not correctly rounded). For float16/bfloat16 PyTorch computes each kernel
in float32 and rounds once; here every operation is rounded to F. PyTorch's CUDA kernels are
compiled with FMA contraction.

The variant ``exact``: each of param', m', v' is the exact real value of Adam's formula
(``m' = beta1*m + (1-beta1)*g``, ``v' = beta2*v + (1-beta2)*g**2``,
``param' = param - lr*(m'/bc1)/(sqrt(v'/bc2) + eps)``, ``g = grad + wd*param``), with the
hyperparameters taken as the exact values of the given floats and ``bc = 1 - beta**step`` exact (no
rounding anywhere), rounded once to F. Exact zeros get IEEE's sign rules. float16/bfloat16/float32:
a float64 evaluation with rigorous error bounds decides almost every element; the rest, and all of
float64 (the slow case), use exact rationals and ``mpmath`` interval arithmetic at increasing
precision until both ends of the interval round to the same value (this terminates: a rational
result is reached exactly). Elements with a NaN or infinite input get the float64 IEEE value of the
div-then-mul formula rounded to F.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES
from ..data import generate
from ..formats import FormatInfo, coerce, format_info, scalar_out
from ..held import as_held, has_nan, held
from ..metrics import pass_rate
from .adam_exact import exact_step
from .formula import RoundedArith, check_held_fits, held_fits
from .opspec import OpSpec, OpTable, pick
from .variant import EXACT, FORMULA, LIBRARY, Settings, Variant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "ADAM_MOMENTS",
    "ADAM_SQRT",
    "OP_TABLE",
    "AdamHyper",
    "adam_held",
    "adam_pass_rates",
    "adam_run",
    "adam_step",
]

_F64 = np.dtype(np.float64)

MAX_STEP = 2**63 - 1  # an int64 step counter

ADAM_MOMENTS = {
    "lerp": "m + w*(g - m) (w < 0.5) or g - (g - m)*(1 - w), w = 1 - beta1, each op rounded "
    "(ATen Lerp.h as written); v = beta2*v + ((1 - beta2)*g)*g",
    "lerp-fma": "fma(w, g - m, m) (w < 0.5) or fma(w - 1, g - m, g) (ATen's vectorized CPU "
    "lerp_vec); v as for lerp",
    "mul-add": "m = beta1*m + (1 - beta1)*g; v = beta2*v + ((1 - beta2)*g)*g, each op rounded",
}

_ADAM_VARIANTS = (
    Variant("div-then-mul", "param - lr*(m_hat/(sqrt(v_hat) + eps))", FORMULA),
    Variant(
        "div-then-mul+fma", "fma(-lr, m_hat/(sqrt(v_hat) + eps), param): one rounding", FORMULA
    ),
    Variant("mul-then-div", "param - (lr*m_hat)/(sqrt(v_hat) + eps)", FORMULA),
    Variant(
        "torch",
        "torch.optim.Adam on the CPU: param + (-(lr/bc1)*m)/(sqrt(v)/sqrt(bc2) + eps); "
        "m and v bit for bit as torch 2.14.1 (10^4 float32 params x 10 steps, foreach off and "
        "on, AMD EPYC Zen 4), param too with sqrt='torch' (docs/framework_orders.md)",
        LIBRARY,
    ),
    Variant("exact", "every output the correctly rounded exact real Adam step", EXACT),
)

_F64 = np.dtype(np.float64)


# ----------------------------------------------------------------------------- Adam: inputs


def _real(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (numbers.Real, np.floating, np.integer)
    ):
        raise TypeError(
            f"{name} must be a real number (Python or NumPy scalar), got {checks.shown(value)}"
        )
    f = math.inf if isinstance(value, int) and abs(value) >= 2**1024 - 2**970 else float(value)
    if not math.isfinite(f):
        raise ValueError(f"{name} must be finite, got {checks.shown(value)}")
    if f != value:  # an int past 2**53, a Fraction, a long double: compared exactly
        raise TypeError(f"{name}={checks.shown(value)} is not exactly representable as a float")
    return f


@dataclass(frozen=True)
class AdamHyper:
    """Adam's hyperparameters and step number as ``torch.optim.Adam`` holds them (Python floats,
    an int), checked as :func:`adam_step` says (TypeError: wrong type, ValueError: out of range)."""

    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float = 0.0
    step: int = 1

    def __post_init__(self):
        put = object.__setattr__  # (frozen: the checked values replace the given ones)
        for name in ("lr", "beta1", "beta2", "eps", "weight_decay"):
            put(self, name, _real(name, getattr(self, name)))
        if self.lr < 0:
            raise ValueError(f"lr must be >= 0, got {checks.shown(self.lr)}")
        for name, b in (("beta1", self.beta1), ("beta2", self.beta2)):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {checks.shown(b)}")
        if not self.eps > 0:
            raise ValueError(f"eps must be > 0, got {checks.shown(self.eps)}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {checks.shown(self.weight_decay)}")
        # 1 for the first step; beyond int64 Python's float ** int cannot form beta**step
        put(self, "step", checks.integer("step", self.step, 1, MAX_STEP))


def _moments_for(variant: str, moments: str | None) -> str:
    """The moments formula of a step: the given one, else the variant's own default."""
    if moments is None:
        return "lerp-fma" if variant == "torch" else "lerp"
    if variant == "exact":  # (pass 15: taken and ignored)
        raise ValueError("adam_step: the variant 'exact' takes no moments= (the exact step)")
    return checks.choice("moments", moments, tuple(ADAM_MOMENTS))


ADAM_SQRT = ("ieee", "torch")


def _check_sqrt(variant: str, sqrt) -> None:
    if not callable(sqrt) and (not isinstance(sqrt, str) or sqrt not in ADAM_SQRT):
        raise ValueError(
            f"unknown sqrt {checks.shown(sqrt)} for adam_step; valid: 'ieee', 'torch' or a callable"
        )
    if variant == "exact" and (callable(sqrt) or sqrt != "ieee"):
        raise ValueError("adam_step: the variant 'exact' takes only sqrt='ieee'")
    if isinstance(sqrt, str) and sqrt == "torch":
        _torch("adam_step(sqrt='torch')")


def _torch(what: str):
    from .._optional import require

    return require("torch", what)


def _sqrt_of(sqrt, info: FormatInfo):
    """RoundedArith's square root for adam_step's ``sqrt=``: "ieee", torch's, or the caller's."""
    if sqrt == "torch":
        return lambda a: _torch_sqrt(a, info)
    return sqrt


def _torch_sqrt(a: np.ndarray, info: FormatInfo) -> np.ndarray:
    """``torch.sqrt`` of the whole array at once (PyTorch's own CPU kernel), in F."""
    torch = _torch("adam_step(sqrt='torch')")
    a = np.ascontiguousarray(a, dtype=info.dtype)
    if info.name == "bfloat16":  # NumPy has no bfloat16: through the bits
        t = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
        return torch.sqrt(t).view(torch.int16).numpy().view(info.dtype)
    return torch.sqrt(torch.from_numpy(a.copy())).numpy()


def _adam_arrays(param, grad, m, v):
    names = ("param", "grad", "m", "v")
    if (h := held((param, grad, m, v), "adam_step", names)) is not None:  # FP8, FP6, FP4
        arrays, info = h[0], format_info(h[1])
    else:
        arrays, info = coerce(param, grad, m, v, what="adam_step", names=names)
    shapes = [a.shape for a in arrays]
    if len(set(shapes)) != 1:
        raise ValueError(
            "adam_step: param, grad, m and v must have the same shape, got "
            + ", ".join(map(str, shapes))
        )
    return arrays, info


# ----------------------------------------------------------------------------- Adam: step


def adam_step(
    param: ArrayLike,
    grad: ArrayLike,
    m: ArrayLike,
    v: ArrayLike,
    step: int,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float = 0.0,
    variant: str = "div-then-mul",
    moments: str | None = None,
    sqrt: str | Callable = "ieee",
) -> tuple:
    """One Adam step, in the inputs' format F.

    Parameters
    ----------
    param, grad, m, v : arrays of one shape and one format F of ``fpx.FORMATS``
        ``m`` and ``v`` are the moments after step ``step - 1`` (zeros before the first).
    step : int >= 1
        The number of this step (1 for the first), as PyTorch's ``state["step"]`` after increment.
    lr, beta1, beta2, eps, weight_decay : real numbers
        ``lr >= 0``, ``0 <= beta < 1``, ``eps > 0``, ``weight_decay >= 0``, all finite.
    variant : {"div-then-mul", "div-then-mul+fma", "mul-then-div", "torch", "exact"}
    moments : one of ``ADAM_MOMENTS``: "lerp", "lerp-fma", "mul-add", or None (the default)
        None: "lerp-fma" for the variant "torch" (what PyTorch's CPU kernels compute), else "lerp".
    sqrt : "ieee" (default), "torch" or a callable
        The square root of the formula variants. "ieee": correctly rounded (NumPy's ``np.sqrt``).
        "torch": the installed PyTorch's own ``torch.sqrt`` applied to the whole array at once,
        as the optimizer applies it to the whole state tensor (PyTorch's CPU float32 ``sqrt`` is
        not correctly rounded: about 1 in 5 elements differs from IEEE by one ulp, and which
        ones depends on the array's length; needs ``pip install torch``). A callable gets an
        array in F and must return an array of the same shape and format. The variant "exact"
        takes only "ieee".

    Returns
    -------
    param, m, v : arrays in F, after the step

    Notes
    -----
    Hyperparameters mirror PyTorch's ``torch.optim.Adam`` (``_single_tensor_adam``): they are Python
    floats; scalar-only arithmetic is done in float64 by Python, ``bc1 = 1 - beta1**step`` and ``bc2
    = 1 - beta2**step`` (Python's ``float ** int``, i.e. the C library's ``pow``), ``1 - beta``,
    ``lr/bc1``, ``math.sqrt(bc2)``; every scalar is then rounded once to F where it meets a tensor
    (as ATen's CPU kernels convert a Python scalar to the tensor's dtype for float32/float64). For
    float16/bfloat16 PyTorch computes inside each kernel in float32; here every operation is rounded
    to F ("F throughout").

    With ``RN`` = round to F and ``c(x)`` = the float64 scalar x rounded to F::

        g   = grad                              if weight_decay == 0
            = RN(grad + RN(c(wd) * param))      otherwise (Adam's L2 term, grad.add(param, wd))
        w   = c(1 - beta1)
        m'  = lerp:     RN(m + RN(w * RN(g - m)))              if |w| < 0.5
                        RN(g - RN(RN(g - m) * RN(1 - w)))      otherwise
              lerp-fma: fma(w, RN(g - m), m)  /  fma(RN(w - 1), RN(g - m), g)
              mul-add:  RN(RN(c(beta1) * m) + RN(w * g))
        v'  = RN(RN(c(beta2) * v) + RN(RN(c(1 - beta2) * g) * g))   (all three; except
              torch:    fma(RN(c(1 - beta2) * g), g, RN(c(beta2) * v))  in every moments)
        m_hat = RN(m' / c(bc1));  v_hat = RN(v' / c(bc2));  den = RN(RN(sqrt(v_hat)) + c(eps))
        div-then-mul:      param' = RN(param - RN(c(lr) * RN(m_hat / den)))
        div-then-mul+fma:  param' = fma(-c(lr), RN(m_hat / den), param)
        mul-then-div:      param' = RN(param - RN(RN(c(lr) * m_hat) / den))
        torch:             den = RN(RN(RN(sqrt(v')) / c(sqrt(bc2))) + c(eps))
                           param' = RN(param + RN(RN(c(-(lr/bc1)) * m') / den))

    ``mul-then-div`` has no FMA form: its last product feeds a division, not an addition.
    The variants ``torch`` and ``exact`` are described in :mod:`fpexplore.ops.adam`.
    """
    OP_TABLE.lookup("adam_step", variant)
    moments = _moments_for(variant, moments)
    _check_sqrt(variant, sqrt)
    h = AdamHyper(lr, beta1, beta2, eps, weight_decay, step)
    return _step(param, grad, m, v, h, variant, moments, sqrt)


def _step(param, grad, m, v, h: AdamHyper, variant: str, moments: str, sqrt):
    """:func:`adam_step` with its arguments checked (``moments`` resolved)."""
    (param, grad, m, v), info = _adam_arrays(param, grad, m, v)
    return _computed((param, grad, m, v), info, h, variant, moments, sqrt)


def adam_held(param, grad, m, v, name: str, step: int, **kw) -> tuple:
    """:func:`adam_step` (its keywords) of the values of the held format ``name``: FP8, FP6 or
    FP4 values in float32, a format of fpx.format's in float64, of one shape. Every
    operation rounded once to it (fma's product exact in float64, its sum once), the exact
    variant each output once; arrays of ml_dtypes' type (float64 for fpx.format's). Formats
    up to precision 25 and emax 511 (float64 arithmetic rounds correctly to them)."""
    variant = kw.pop("variant", "div-then-mul")
    OP_TABLE.lookup("adam_step", variant)
    moments = _moments_for(variant, kw.pop("moments", None))
    sqrt = kw.pop("sqrt", "ieee")
    _check_sqrt(variant, sqrt)
    arrays = [np.asarray(a, dtype=np.float64) for a in (param, grad, m, v)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("adam_step: param, grad, m and v must have the same shape")
    h = AdamHyper(step=step, **kw)
    return _computed(arrays, format_info(name), h, variant, moments, sqrt)


def _computed(arrays, info: FormatInfo, h: AdamHyper, variant: str, moments: str, sqrt):
    """(param', m', v') of the values ``arrays`` of ``info`` (held: checked, in their type)."""
    if not info.storage:
        _check_held(info, sqrt)
    if variant == "exact":
        out = exact_step(*arrays, info, h, _ieee(h))
    else:
        F = RoundedArith(info, _sqrt_of(sqrt, info))
        out = _adam_formula(F, *arrays, variant, moments, h)
    if not info.storage:
        return tuple(scalar_out(np.asarray(as_held(a, info.name))) for a in out)
    return tuple(scalar_out(np.asarray(a, dtype=info.dtype)) for a in out)


def _check_held(info: FormatInfo, sqrt) -> None:
    check_held_fits("adam_step", info)
    if sqrt != "ieee":
        raise ValueError(
            f"adam_step: sqrt={checks.shown(sqrt)} with {info.name} data: its square root is "
            "the correctly rounded one, sqrt='ieee' (torch has no such format)"
        )


def _adam_formula(F, param, grad, m, v, variant: str, moments: str, h: AdamHyper):
    lr, beta1, beta2, eps, wd, step = (
        h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.step
    )  # fmt: skip
    bc1 = 1.0 - beta1**step
    bc2 = 1.0 - beta2**step
    g = grad if wd == 0 else F.add(grad, F.mul(F.const(wd), param))
    w = F.const(1.0 - beta1)
    if moments == "mul-add":
        m1 = F.add(F.mul(F.const(beta1), m), F.mul(w, g))
    else:
        diff = F.sub(g, m)
        small = abs(float(w)) < 0.5
        if moments == "lerp":
            if small:
                m1 = F.add(m, F.mul(w, diff))
            else:
                m1 = F.sub(g, F.mul(diff, F.sub(F.const(1.0), w)))
        elif small:
            m1 = F.fma(w, diff, m)
        else:
            m1 = F.fma(F.sub(w, F.const(1.0)), diff, g)
    if variant == "torch":  # addcmul_: (value * g) * g + beta2 * v, the last step fused
        v1 = F.fma(F.mul(F.const(1.0 - beta2), g), g, F.mul(F.const(beta2), v))
    else:
        v1 = F.add(F.mul(F.const(beta2), v), F.mul(F.mul(F.const(1.0 - beta2), g), g))
    if variant == "torch":
        den = F.add(F.div(F.sqrt(v1), F.const(math.sqrt(bc2))), F.const(eps))
        p1 = F.add(param, F.div(F.mul(F.const(-(lr / bc1)), m1), den))
        return p1, m1, v1
    m_hat = F.div(m1, F.const(bc1))
    v_hat = F.div(v1, F.const(bc2))
    den = F.add(F.sqrt(v_hat), F.const(eps))
    lr_f = F.const(lr)
    if variant == "mul-then-div":
        p1 = F.sub(param, F.div(F.mul(lr_f, m_hat), den))
    else:
        r = F.div(m_hat, den)
        if variant == "div-then-mul+fma":
            p1 = F.fma(-lr_f, r, param)
        else:
            p1 = F.sub(param, F.mul(lr_f, r))
    return p1, m1, v1


def _ieee(h: AdamHyper):
    """exact_step's value of elements with a NaN or infinite input: the float64 IEEE
    div-then-mul formula (mul-add moments)."""

    def ieee(P, G0, M, V):
        F64 = RoundedArith(format_info("float64"))
        return _adam_formula(F64, P, G0, M, V, "div-then-mul", "mul-add", h)

    return ieee


# ----------------------------------------------------------------------------- runs


def adam_run(
    param: ArrayLike,
    grads: Iterable,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float = 0.0,
    variant: str = "div-then-mul",
    moments: str | None = None,
    sqrt: str | Callable = "ieee",
    m: ArrayLike | None = None,
    v: ArrayLike | None = None,
    first_step: int = 1,
) -> Iterator[tuple]:
    """Run Adam over a sequence of gradients, each step by :func:`adam_step` (arguments are
    checked at the call, before any step runs).

    Parameters
    ----------
    grads : an array whose first axis is the step, or any iterable of arrays shaped like param
    m, v : the moments to start from (default zeros: a fresh optimizer)
    first_step : the number of the first step
    param, lr, beta1, beta2, eps, weight_decay, variant, moments, sqrt : as in :func:`adam_step`

    Yields
    ------
    step, param, m, v : int and arrays, after each step
    """
    OP_TABLE.lookup("adam_step", variant)
    moments = _moments_for(variant, moments)
    _check_sqrt(variant, sqrt)
    first_step = checks.integer("first_step", first_step, 1, MAX_STEP)  # (pass 35: "step")
    h = AdamHyper(lr, beta1, beta2, eps, weight_decay, first_step)  # errors now, not later
    (p,), _ = coerce(param, what="adam_run")
    m, v = (np.zeros_like(p) if a is None else a for a in (m, v))
    grads = grads if isinstance(grads, np.ndarray) else _gradients(grads)
    return _adam_steps(p, m, v, grads, h, variant, moments, sqrt)


def _adam_steps(p, m, v, grads, h: AdamHyper, variant, moments, sqrt):
    for k, g in enumerate(grads):
        if np.shape(g) != p.shape:  # (pass 35: the step's own message named no grads[k])
            raise ValueError(f"adam_run: grads[{k}] has shape {np.shape(g)}, param {p.shape}")
        p, m, v = _step(p, g, m, v, h, variant, moments, sqrt)
        yield h.step, p, m, v
        h = replace(h, step=h.step + 1)


def adam_pass_rates(
    param: ArrayLike,
    grads: Iterable,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float = 0.0,
    a: str | dict = "div-then-mul",
    b: str | dict = "mul-then-div",
    moments: str | None = None,
    m: ArrayLike | None = None,
    v: ArrayLike | None = None,
    first_step: int = 1,
) -> np.ndarray:
    """Per-step pass rate of ``param`` between two Adam variants run side by side: both start
    from the same ``param``, ``m``, ``v`` and see the same ``grads``, each evolving its own
    state (so differences can compound).

    Parameters
    ----------
    a, b : variant names or dicts of :func:`adam_step` keywords (``{"variant": ...,
        "moments": ..., "sqrt": ...}``; a dict without "moments" uses ``moments``)
    param, grads, m, v, first_step : as in :func:`adam_run`
    lr, beta1, beta2, eps, weight_decay, moments : as in :func:`adam_step`

    Returns
    -------
    numpy.ndarray of float64
        Element s: the :func:`pass_rate` of the two params after step ``first_step + s``
        (NaN for an empty param, as :func:`pass_rate` of empty arrays).
    """
    spec = []
    for name, s in (("a", a), ("b", b)):
        if isinstance(s, str):
            s = {"variant": s}
        if not isinstance(s, dict) or set(s) - {"variant", "moments", "sqrt"}:
            raise ValueError(
                f"{name} must be a variant name or a dict with keys 'variant', 'moments' and "
                f"'sqrt', got {checks.shown(s)}"
            )
        spec.append({"variant": "div-then-mul", "moments": moments, **s})
    hyper = dict(lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay)
    start = dict(m=m, v=v, first_step=first_step)
    grads_a, grads_b = _tee(grads)
    run_a = adam_run(param, grads_a, **hyper, **start, **spec[0])
    run_b = adam_run(param, grads_b, **hyper, **start, **spec[1])
    rates = [pass_rate(pa, pb) for (_, pa, _, _), (_, pb, _, _) in zip(run_a, run_b)]
    return np.asarray(rates, dtype=np.float64)


def _tee(grads):
    """The gradients twice; an iterator is streamed (the runs in step: one gradient held)."""
    if isinstance(grads, np.ndarray):
        return grads, grads
    return itertools.tee(_gradients(grads), 2)


def _gradients(grads):
    """``grads`` as an iterator, checked now (not when first iterated)."""
    try:
        return iter(grads)
    except TypeError:
        raise TypeError(
            f"grads must be an array (first axis: the step) or an iterable of arrays, got "
            f"{type(grads).__name__}"
        ) from None


_ADAM_HYPER = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}
_ADAM_STEP = 2  # compare's step when none is given: the moments are those after step 1


def _adam_inputs(n, fmt, distribution, seed, params):
    """n parameters from the distribution; gradients normal; moments after one step with a
    previous gradient; this is step ``step`` (default 2). Hyperparameters: lr=1e-3, betas
    (0.9, 0.999), eps=1e-8 unless given (``lr=``, ``beta1=``, ...); ``hyper`` holds them and
    the step. The table measures the new parameters."""
    p = generate(distribution, n, fmt, seed)
    g0 = generate("normal", n, fmt, seed + 1)
    g = generate("normal", n, fmt, seed + 2)
    if fmt in SMALL_DTYPES:  # FP8, FP6, FP4: ml_dtypes' types
        p, g0, g = (a.astype(SMALL_DTYPES[fmt]) for a in (p, g0, g))
    zero = np.zeros_like(p)
    h = {k: params.get(k, v) for k, v in _ADAM_HYPER.items()}
    if format_info(fmt).user_defined:  # (float64 values, the format named)
        _, m, v = adam_held(p, g0, zero, zero, fmt, 1, **h)
    else:
        _, m, v = adam_step(p, g0, zero, zero, 1, variant="div-then-mul", **h)
    h["step"] = _adam_step_of({}, params)
    return {"format": fmt, "param": p, "grad": g, "m": m, "v": v, "hyper": h}


def _keyword_check(name: str) -> Callable:
    """compare's op parameter ``name`` (a hyperparameter, ``step`` or ``moments``) checked as
    adam_step checks it, before anything runs; the value passed on as given."""

    def check(v):
        if name == "moments":
            _moments_for("torch", v)
        else:
            AdamHyper(**{**_ADAM_HYPER, name: v})
        return v

    return check


def _adam_step_of(hyper, params) -> int:
    """The number of the step compare runs: ``step=`` (an op parameter) or the inputs'
    ``hyper["step"]`` (both: they must agree), else 2; checked (an int >= 1)."""
    given = [
        checks.integer(name, value, 1, MAX_STEP)
        for name, value in (("step", params.get("step")), ('hyper["step"]', hyper.get("step")))
        if value is not None
    ]
    if len(given) == 2 and given[0] != given[1]:
        raise ValueError(
            f"adam_step: step={given[0]} but the inputs' hyper says step {given[1]}: give one"
        )
    return given[0] if given else _ADAM_STEP


def _adam_call(name, settings, inputs, params):
    kw = pick(params, ("moments",))
    kw.update(settings)
    hyper = inputs["hyper"]
    if not isinstance(hyper, dict):
        raise TypeError(
            f"adam_step's input hyper must be a dict of {', '.join(_ADAM_HYPER)} (and step), "
            f"got {checks.shown(hyper)}"
        )
    unknown = sorted(set(hyper) - set(_ADAM_HYPER) - {"step"}, key=str)
    missing = [k for k in _ADAM_HYPER if k not in hyper and k != "weight_decay"]
    if unknown or missing:
        raise ValueError(
            f"adam_step's input hyper takes {', '.join(_ADAM_HYPER)} and step"
            + (f"; unknown {', '.join(map(checks.shown, unknown))}" if unknown else "")
            + (f"; missing {', '.join(missing)}" if missing else "")
        )
    step = _adam_step_of(hyper, params)
    h = {k: v for k, v in hyper.items() if k != "step"}
    arrays = [inputs[k] for k in ("param", "grad", "m", "v")]
    if format_info(inputs["format"]).user_defined:  # (float64 values, the format named)
        return adam_held(*arrays, inputs["format"], step, variant=name, **h, **kw)[0]
    return adam_step(*arrays, step, variant=name, **h, **kw)[0]


_ADAM_SETTINGS = {
    v: Settings(
        {
            "moments": (None, checks.choice_check("moments", ADAM_MOMENTS)),
            "sqrt": ("ieee", checks.choice_check("sqrt", ("ieee", "torch"))),
        },
        why_no_fma="its fused form is the variant 'div-then-mul+fma'",
    )
    for v in ("div-then-mul", "div-then-mul+fma", "mul-then-div", "torch")
}


def _available(fmt: str) -> list[str]:
    """Every variant; none of a held format past precision 25 or emax 511, nor of FP6 and
    FP4: a zero moment over eps, which rounds to 0 there, is 0/0, a NaN they cannot hold."""
    info = format_info(fmt)
    fits = held_fits(info) and (info.storage or has_nan(info.name))
    return [v.name for v in _ADAM_VARIANTS] if fits else []


OP_TABLE = OpTable(
    OpSpec(
        "adam_step",
        "one Adam optimizer step (moments: " + ", ".join(ADAM_MOMENTS) + ")",
        _ADAM_VARIANTS,
        inputs=_adam_inputs,
        call=_adam_call,
        reference=lambda inputs, params, fmt: _adam_call(  # (moments=: the variants', pass 25)
            "exact", {}, inputs, {k: v for k, v in params.items() if k != "moments"}
        ),
        default_variants=("div-then-mul", "mul-then-div", "div-then-mul+fma", "torch"),
        default_n=1000,  # float64's exact reference is mpmath intervals for every element
        available=_available,
        bytes_per_element=160.0,
        settings=_ADAM_SETTINGS,
        keywords={k: _keyword_check(k) for k in (*_ADAM_HYPER, "step", "moments")},
        rank=21,
    ),
)
