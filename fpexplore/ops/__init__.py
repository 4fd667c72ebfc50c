"""Composite ops and their formula variants, each with an exact (or high-precision) reference.

- ``_registry``    ``ops()`` and ``variants(op)``: what the explorer enumerates
- ``linspace``     NumPy 1.x / 2.x and CuPy linspace semantics, lerp, fma, exact
- ``elementwise``  exp, log, sin, tanh, sqrt, pow: library results vs correctly rounded
- ``stats``        variance (two-pass, one-pass, Welford), softmax and logsumexp (naive, shifted)
- ``ml``           cdist (expanded vs direct) and the Adam step (operation orders)
"""
