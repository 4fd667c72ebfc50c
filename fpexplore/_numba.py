"""numba plumbing shared by every compiled kernel of fpexplore. Private; imports numba, so
only modules that load on the first call of a kernel import it.

* :func:`cached_njit`: ``nb.njit`` with numba's on-disk cache, its keys extended by a digest
  of fpexplore/numerics.py. The kernels call functions of that file (``numerics.JITTABLE``,
  registered with numba here: one source for Python and the kernels), and numba's own cache
  checks only the source file of the kernel it loads: editing numerics.py recompiles the
  kernels instead of loading machine code built from its old contents.
* :func:`hw_fma`: LLVM's ``llvm.fma`` intrinsic, ``a*b + c`` rounded once (float32 or
  float64): the CPU's fused multiply-add, or libm's correctly rounded ``fma`` where the CPU
  has none. Kernels never use fast-math, so nothing is reassociated or contracted.
* :func:`float_bits`: the bit pattern of a float64 (float32) as an int64 (int32).
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.caching import FunctionCache
from numba.extending import intrinsic, overload, register_jitable

from . import numerics

__all__ = ["cached_njit", "float_bits", "hw_fma"]

for _f in numerics.JITTABLE:  # callable from jitted code, compiled into each caller
    register_jitable(_f)

_NO_CACHE_WARNED = []
_NUMERICS_DIGEST = hashlib.sha256(Path(numerics.__file__).read_bytes()).hexdigest()


class _Cache(FunctionCache):
    """numba's cache of one function, its index keys extended by the digest of
    fpexplore/numerics.py (whose functions the kernels call; see the module docstring)."""

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), _NUMERICS_DIGEST)

    # A damaged cache file (a full disk, a copied or truncated cache: numba writes atomically,
    # so kill -9 does not do it) made numba raise UnpicklingError/EOFError on every call and
    # every warm-up, naming no folder, until someone deleted the folder by hand. Here the
    # damaged function's files are removed, the folder named, and the kernel recompiled (and
    # cached anew): the next call or `python -m fpexplore.warmup` repairs it.

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as e:
            self.repair(e)
            return None  # numba compiles it; save_overload writes fresh files

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except Exception as e:  # a damaged index read before saving
            self.repair(e)
            super().save_overload(sig, data)

    def repair(self, error: Exception) -> list:
        """Remove this function's index and data files; warn naming the folder."""
        base = self._impl.filename_base
        folder = Path(self.cache_path)
        removed = []
        for path in [folder / f"{base}.nbi", *folder.glob(f"{base}.*.nbc")]:
            try:
                path.unlink()
                removed.append(path.name)
            except FileNotFoundError:
                pass
        warnings.warn(
            f"fpexplore: numba's cache in {folder} had a damaged entry for "
            f"{self._py_func.__name__} ({type(error).__name__}: {error}); removed "
            f"{len(removed)} file(s), the kernel is compiled again",
            RuntimeWarning,
            stacklevel=3,
        )
        return removed


def cached_njit(func, **options):
    """``nb.njit(cache=True, **options)(func)`` with the cache keyed also on
    fpexplore/numerics.py, except where numba finds no writable cache folder (read-only
    package and home directory, no NUMBA_CACHE_DIR): numba then raises RuntimeError; here the
    kernels compile in every process instead."""
    disp = nb.njit(**options)(func)
    try:
        disp._cache = _Cache(disp.py_func)  # what disp.enable_caching() does, with _Cache
    except RuntimeError as e:  # "cannot cache function ...: no locator available"
        if not _NO_CACHE_WARNED:
            _NO_CACHE_WARNED.append(True)
            warnings.warn(
                f"fpexplore: {e}; its numba kernels compile in every process (seconds on first "
                "use). Set NUMBA_CACHE_DIR to a writable folder to cache them.",
                RuntimeWarning,
                stacklevel=2,
            )
    return disp


@intrinsic
def hw_fma(typingctx, a, b, c):
    """llvm.fma: a*b + c with a single rounding (float32 or float64)."""
    if not (a == b == c and isinstance(a, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        ty = args[0].type
        name = "llvm.fma.f32" if ty == ir.FloatType() else "llvm.fma.f64"
        fnty = ir.FunctionType(ty, [ty, ty, ty])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def float_bits(typingctx, x):
    """The bit pattern of a float64 (float32) scalar as an int64 (int32): a bitcast."""
    if x == types.float64:
        out = types.int64
    elif x == types.float32:
        out = types.int32
    else:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(out.bitwidth))

    return out(x), codegen


@intrinsic
def bits_float(typingctx, b):
    """The float64 with the bit pattern of an int64 scalar: a bitcast (float_bits' inverse)."""
    if b != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(b), codegen


# numerics' scalar bit views, inside kernels: bitcasts (their NumPy versions make arrays)
@overload(numerics.f64_bits)
def _overload_of_f64_bits(v):
    return lambda v: float_bits(np.float64(v))


@overload(numerics.f64_from_bits)
def _overload_of_f64_from_bits(b):
    return lambda b: bits_float(np.int64(b))
