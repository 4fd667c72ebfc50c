"""adam_step's ``exact`` variant: each of param', m', v' the exact real value of Adam's formula
rounded once to F (see :mod:`fpexplore.ops.adam`): a float64 evaluation with rigorous error
bounds decides almost every element; the rest use exact rationals and mpmath interval
arithmetic at increasing precision until both ends of the interval round alike."""

from __future__ import annotations

import math
from contextlib import contextmanager
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from ..formats import FormatInfo, round_f64
from ..numerics import nudge_to_odd, same_bits, two_product, two_sum
from . import _error_bounds as eb
from .formula import round_ratio

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["exact_step"]

_F64 = np.dtype(np.float64)


def exact_step(param, grad, m, v, info: FormatInfo, h, ieee: Callable) -> tuple:
    """(param', m', v') of one step (``h``: an AdamHyper), each the exact real value rounded
    once to ``info``; elements with a NaN or infinite input take ``ieee(P, G0, M, V)``'s
    float64 values, rounded to ``info``."""
    shape = param.shape
    P, G0, M, V = (np.asarray(a, dtype=_F64).reshape(-1) for a in (param, grad, m, v))
    n = P.size
    outs = [np.zeros(n, dtype=info.dtype) for _ in range(3)]
    finite = np.isfinite(P) & np.isfinite(G0) & np.isfinite(M) & np.isfinite(V)
    undecided = np.zeros(n, dtype=bool)
    with np.errstate(all="ignore"):
        if not finite.all():  # IEEE propagation of NaN and infinities, in float64
            bad = ~finite
            ref = ieee(P[bad], G0[bad], M[bad], V[bad])
            for o, r in zip(outs, ref):
                o[bad] = round_f64(np.asarray(r), info)
        if info.name == "float64":
            undecided[:] = finite
        else:
            undecided |= _adam_bounds(P, G0, M, V, info, outs, h)
            undecided &= finite
    if undecided.any():
        _adam_exact_slow(P, G0, M, V, info, outs, undecided, h)
    return tuple(o.reshape(shape) for o in outs)


def _adam_bounds(P, G0, M, V, info, outs, h) -> np.ndarray:
    """float64 evaluation with error bounds; returns the mask of undecided elements."""
    lr, beta1, beta2, eps, wd, step = (
        h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.step
    )  # fmt: skip
    b1, b2 = Fraction(beta1), Fraction(beta2)
    c1, ec1 = eb.scalar(1 - b1)
    c2, ec2 = eb.scalar(1 - b2)
    bc1, ebc1 = eb.scalar(1 - b1**step) if step <= 4096 else _bc_bounds(beta1, step)
    bc2, ebc2 = eb.scalar(1 - b2**step) if step <= 4096 else _bc_bounds(beta2, step)
    z = np.zeros_like(P)
    if wd == 0:
        g, eg = G0, z
    else:
        g, eg = eb.add(G0, z, *eb.mul(np.float64(wd), 0.0, P, z))
    undecided = np.zeros(P.size, dtype=bool)
    if wd == 0 and ec1 == 0 and ec2 == 0:
        # exact: with decimal betas, beta*m + (1 - beta)*g is often within 2**-55 of a
        # midpoint of F (e.g. (9m + g)/10 is dyadic when 9m + g is a multiple of 5)
        m1, em1 = _ro_dot2(beta1, M, c1, G0, info, outs[1], undecided)
        v1, ev1 = _ro_dot2(beta2, V, c2, G0 * G0, info, outs[2], undecided)  # g*g is exact
    else:
        m1, em1 = eb.add(*eb.mul(np.float64(beta1), 0.0, M, z), *eb.mul(np.float64(c1), ec1, g, eg))
        g2 = eb.mul(g, eg, g, eg)
        v1, ev1 = eb.add(*eb.mul(np.float64(beta2), 0.0, V, z), *eb.mul(np.float64(c2), ec2, *g2))
        eb.decide_bounds(m1, em1, info, outs[1], undecided)
        eb.decide_bounds(v1, ev1, info, outs[2], undecided)
    mh, emh = eb.div(m1, em1, np.float64(bc1), ebc1)
    vh, evh = eb.div(v1, ev1, np.float64(bc2), ebc2)
    # sqrt: decided only where the true v_hat is known to be >= 0
    nonneg = vh - evh >= 0
    s = np.sqrt(np.maximum(vh, 0.0))
    es = np.where(vh > 0, np.minimum(evh / np.where(vh > 0, s, 1.0), np.sqrt(evh)), np.sqrt(evh))
    es = es + eb.U * s + eb.TINY
    den, eden = eb.add(s, es, np.float64(eps), 0.0)
    q, eq = eb.div(mh, emh, den, eden)
    u, eu = eb.mul(np.float64(lr), 0.0, q, eq)
    p1, ep1 = eb.add(P, z, -u, eu)
    und_p = ~nonneg
    eb.decide_bounds(p1, ep1, info, outs[0], und_p)
    # an exact zero update (m' == 0 or lr == 0) is decided above only if p itself is exact:
    # signed zeros of p - (+-0) are handled by the slow path
    und_p |= (P == 0) | (m1 == 0)
    return undecided | und_p


def _ro_dot2(a: float, B: np.ndarray, c: float, D: np.ndarray, info, out, undecided):
    """a*B + c*D rounded once to F (F of at most 24 bits), elementwise, from float64 values.

    Error-free: TwoProduct for both products, TwoSum to distil the four parts into ``z + rest``
    (exactly), then round to odd in float64 from the sign of ``rest`` and once to F (Boldo &
    Melquiond). Elements where the products could under- or overflow, or the sign of ``rest`` or
    ``|rest| < ulp(z)`` is not certain, are marked undecided. Returns ``z`` and a bound on ``|a*B +
    c*D - z|`` for later use.
    """
    h1, l1 = two_product(np.float64(a), B)
    h2, l2 = two_product(np.float64(c), D)
    s, e = two_sum(h1, h2)
    t1, e1 = two_sum(l1, l2)
    t2, e2 = two_sum(e, t1)
    z, ez = two_sum(s, t2)
    r1, f1 = two_sum(e1, e2)
    r2, f2 = two_sum(ez, r1)  # a*B + c*D == z + r2 + f1 + f2 exactly
    small = np.abs(f1) + np.abs(f2)
    rest_sign = np.where(r2 != 0, r2, f1 + f2)
    safe = np.ones(z.shape, dtype=bool)
    for x, h in ((a, h1), (c, h2)):  # TwoProduct is exact away from under/overflow
        ah = np.abs(h)
        safe &= (ah == 0) | ((ah >= 2.0**-960) & (ah <= 2.0**960))
        if x != 0 and not 2.0**-900 <= abs(x) <= 2.0**900:
            safe[:] = False
    safe &= (h1 != 0) | (B == 0) | (a == 0)
    safe &= (h2 != 0) | (D == 0) | (c == 0)
    ok = safe & np.isfinite(z) & ((r2 == 0) | (np.abs(r2) > 2 * small))
    ok &= (rest_sign == 0) | ((z != 0) & (np.abs(r2) + small < eb.U * np.abs(z)))
    zero = (z == 0) & (rest_sign == 0)
    ro = nudge_to_odd(np.where(ok & ~zero, z, 1.0), np.where(ok, rest_sign, 0.0), np.uint64)
    val = round_f64(ro, info)
    # an exact zero: the IEEE sign of a*B + c*D from the (exact) signed zero products
    val = np.where(zero, round_f64(np.float64(a) * B + np.float64(c) * D, info), val)
    out[...] = np.where(ok, val, out)
    undecided |= ~ok
    return z, np.where(ok, eb.U * np.abs(z), np.inf)


def _bc_bounds(beta: float, step: int) -> tuple[float, float]:
    """1 - beta**step for large steps: an mpmath interval at 120 bits, as (float, error bound)."""
    with _iv_prec(120) as iv:
        lo, hi = _iv_ends(1 - iv.mpf(beta) ** step)
    f = float((lo + hi) / 2)
    return f, float(hi - lo) + eb.U * abs(f)


@contextmanager
def _iv_prec(prec: int):
    """mpmath's interval context at ``prec`` bits, restored afterwards (global: not thread-safe)."""
    import mpmath

    iv = mpmath.iv
    old = iv.prec
    iv.prec = prec
    try:
        yield iv
    finally:
        iv.prec = old


def _iv_ends(x) -> tuple[Fraction, Fraction]:
    """Exact ends of a finite mpmath interval."""
    from mpmath.libmp import to_rational

    return tuple(Fraction(*to_rational(end)) for end in x._mpi_)


class _X:
    """An exact real with an IEEE sign bit (for zeros): the value and whether it is negative."""

    __slots__ = ("q", "neg")

    def __init__(self, q: Fraction, neg: bool):
        self.q = q
        self.neg = neg

    @classmethod
    def of(cls, f: float) -> _X:
        return cls(Fraction(f), math.copysign(1.0, f) < 0)

    def __add__(self, o: _X) -> _X:
        s = self.q + o.q
        return _X(s, s < 0 if s != 0 else (self.neg and o.neg))

    def __mul__(self, o: _X) -> _X:
        return _X(self.q * o.q, self.neg != o.neg)

    def rounded(self, info: FormatInfo) -> float:
        """Rounded once to nearest-even in info (a Python float exactly in the format)."""
        if self.q == 0:
            return -0.0 if self.neg else 0.0
        return round_ratio(self.q.numerator, self.q.denominator, info)


def _adam_exact_slow(P, G0, M, V, info, outs, which, h) -> None:
    """Exact rationals for g, m', v'; mpmath intervals for param' (see adam_step)."""
    lr, beta1, beta2, eps, wd, step = (
        h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.step
    )  # fmt: skip
    B1, B2 = _X.of(beta1), _X.of(beta2)
    C1, C2 = _X(1 - B1.q, False), _X(1 - B2.q, False)
    WD, LR = _X.of(wd), _X.of(lr)
    bc_cache: dict = {}
    for idx in np.flatnonzero(which).tolist():
        p, g0, m, v = (float(A[idx]) for A in (P, G0, M, V))
        Pp = _X.of(p)
        g = _X.of(g0) if wd == 0 else _X.of(g0) + WD * Pp
        m1 = B1 * _X.of(m) + C1 * g
        v1 = B2 * _X.of(v) + C2 * (g * g)
        outs[1][idx] = m1.rounded(info)
        outs[2][idx] = v1.rounded(info)
        if v1.q < 0:
            outs[0][idx] = math.nan  # sqrt of a negative second moment
            continue
        if m1.q == 0 or lr == 0:
            # the update lr*(m'/bc1)/den is a signed zero (bc1, den > 0): p - (+-0), IEEE
            u_neg = m1.neg != LR.neg
            outs[0][idx] = (Pp + _X(Fraction(0), not u_neg)).rounded(info)
            continue
        if (q := _rational_step(p, m1.q, v1.q, h, bc_cache)) is not None:
            outs[0][idx] = _X(q, q < 0).rounded(info)  # (an exact zero: IEEE x - x is +0)
            continue
        prec = 128
        while True:
            with _iv_prec(prec) as iv:
                if prec not in bc_cache:
                    bc_cache[prec] = (1 - iv.mpf(beta1) ** step, 1 - iv.mpf(beta2) ** step)
                bc1, bc2 = bc_cache[prec]
                m_hat = _iv_of(iv, m1.q) / bc1
                den = iv.sqrt(_iv_of(iv, v1.q) / bc2) + iv.mpf(eps)
                lo, hi = _iv_ends(iv.mpf(p) - iv.mpf(lr) * (m_hat / den))
            if lo == hi:  # exact (a point interval); IEEE x - x is +0
                outs[0][idx] = _X(lo, lo < 0).rounded(info)
                break
            if lo != 0 and hi != 0:  # an end at zero leaves the sign of a zero result open
                rlo = _X(lo, lo < 0).rounded(info)
                rhi = _X(hi, hi < 0).rounded(info)
                if same_bits(rlo, rhi) or (math.isnan(rlo) and math.isnan(rhi)):  # (E4M3)
                    outs[0][idx] = rlo
                    break
            prec *= 2


def _rational_step(p: float, m1: Fraction, v1: Fraction, h, cache: dict) -> Fraction | None:
    """param' exactly where it is rational: ``sqrt(v1/bc2)`` rational (``v1 = 0`` included;
    the step at most 4096, its bias corrections exact Fractions). The interval loop would not
    end on such a value where it is a midpoint of the format and an interval on the way is
    not a point (sqrt(v'/bc2) = 4/3); here it is exact at once."""
    if h.step > 4096:
        return None
    if "exact" not in cache:
        cache["exact"] = tuple(1 - Fraction(b) ** h.step for b in (h.beta1, h.beta2))
    bc1, bc2 = cache["exact"]
    vh = v1 / bc2
    rn, rd = math.isqrt(vh.numerator), math.isqrt(vh.denominator)
    if rn * rn != vh.numerator or rd * rd != vh.denominator:
        return None
    return Fraction(p) - Fraction(h.lr) * (m1 / bc1) / (Fraction(rn, rd) + Fraction(h.eps))


def _iv_of(iv, q: Fraction):
    """An exact rational as an mpmath interval (a point when it fits the working precision)."""
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)
