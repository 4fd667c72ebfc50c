"""Project hygiene: import weight, environment files in sync with pyproject.toml, layout."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import fpexplore as fpx

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "IPython",
    "ipywidgets",
    "matplotlib",
    "pandas",
    "cupy",
    "ipympl",
    "tqdm",
    "numba",
    "mpmath",
)


def test_import_is_light():
    code = f"import sys, fpexplore\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# pip name -> conda-forge name where they differ
CONDA_NAME = {
    "ml-dtypes": "ml_dtypes",
    "cupy-cuda12x": "cupy",
    "nvidia-cuda-nvrtc-cu12": "cuda-nvrtc",
}


def _norm(req: str) -> str | None:
    """'ml-dtypes>=0.5' -> 'ml_dtypes>=0.5' (conda-forge spelling); None if not for Python 3.11."""
    req = req.replace(" ", "")
    if ";" in req:
        req, marker = req.split(";", 1)
        if "python_version<'3.11'" in marker.replace('"', "'"):
            return None  # the conda environments pin Python 3.11
    name = re.match(r"[A-Za-z0-9_.\-]+", req).group(0)
    key = name.lower().replace("_", "-")
    return CONDA_NAME.get(key, key) + req[len(name) :]


def _pyproject():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    proj = data["project"]
    groups = {"runtime": proj["dependencies"], **proj["optional-dependencies"]}
    return {g: {r for r in map(_norm, reqs) if r} for g, reqs in groups.items()}


def _conda(path: Path):
    env = yaml.safe_load(path.read_text())
    assert "conda-forge" in env["channels"]
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in deps, f"{path} must pin python=3.11"
    pip = [d for d in env["dependencies"] if isinstance(d, dict)]
    return {d.replace(" ", "") for d in deps if d not in ("python=3.11", "pip")}, pip


def test_environment_files_match_pyproject():
    groups = _pyproject()
    assert groups["runtime"] == {"numpy>=2.0", "ml_dtypes>=0.5", "numba>=0.60", "mpmath>=1.3"}
    full, pip = _conda(ROOT / "environment.yml")
    assert full == groups["runtime"] | groups["jupyter"] | groups["gpu"] | groups["dev"]
    assert pip == [{"pip": ["-e ."]}]
    binder, _ = _conda(ROOT / "binder" / "environment.yml")
    assert binder == groups["runtime"] | groups["jupyter"]  # no CuPy: Binder has no GPU
    assert "pip install --no-deps ." in (ROOT / "binder" / "postBuild").read_text()


def test_public_api_names():
    for name in ("FORMATS", "fma", "exact_sum", "exact_dot", "ulp_distance", "as_format"):
        assert name in fpx.__all__ and hasattr(fpx, name)
    assert set(fpx.__all__) <= set(dir(fpx))


def test_the_public_functions_are_annotated_and_typed():
    """Every public function (``fpx.exercise`` and ``fpx.explorer``, loaded lazily, too) has
    an annotation on each named parameter and on its return, and the package says so to type
    checkers: the PEP 561 marker fpexplore/py.typed exists and is in the wheel's package
    data."""
    names = set(fpx.__all__) | {"exercise", "explorer"}
    if importlib.util.find_spec("ipywidgets") is None:  # (they need it to load)
        names -= {"exercise", "explorer"}
    functions = {n: getattr(fpx, n) for n in sorted(names)}
    functions = {n: f for n, f in functions.items() if inspect.isfunction(f)}
    assert {"sum", "compare", "explain", "as_format"} <= set(functions)
    missing = []
    for name, f in functions.items():
        sig = inspect.signature(f)
        bare = [
            p.name
            for p in sig.parameters.values()
            if p.annotation is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if sig.return_annotation is inspect.Signature.empty:
            bare.append("return")
        if bare:
            missing.append(f"fpx.{name}: {', '.join(bare)}")
    assert not missing, "public functions without annotations:\n" + "\n".join(missing)
    assert (ROOT / "fpexplore" / "py.typed").is_file(), "the PEP 561 marker is missing"
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in setuptools.get("package-data", {}).get("fpexplore", [])


def test_every_op_is_a_root_function_and_in_the_readme():
    """Each op the registry finds is fpx.<op> (fpx.mean was missing although mean was an op),
    is exported, and is named in the README's list of ops and the package map."""
    readme = (ROOT / "README.md").read_text()
    ops_line = readme[readme.index("Ops: ") :].split("\n\n", 1)[0]
    listed = set(re.findall(r"`(\w+)`", ops_line))
    for op in fpx.ops():
        assert callable(getattr(fpx, op, None)), f"fpx.{op} does not exist"
        assert op in fpx.__all__, op
        assert op in listed, f"README's op list misses {op}"
        assert op in fpx.__doc__, f"the package docstring misses {op}"


def test_the_lists_are_plain_functions_and_no_module_is_callable():
    """fpx.ops(), fpx.orders(op), fpx.backends() and fpx.formats() are plain functions (no
    module made callable by swapping its class); the subpackages' modules import as usual."""
    import types

    from fpexplore.backends import replay
    from fpexplore.ops import elementwise, registry
    from fpexplore.orders import registry as order_registry
    from fpexplore.orders import summation

    for f in (fpx.ops, fpx.orders, fpx.backends, fpx.formats):
        assert isinstance(f, types.FunctionType), f
    tricks = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "fpexplore").rglob("*.py")
        if "sys.modules[__name__].__class__" in p.read_text(encoding="utf-8")
    ]
    assert not tricks, tricks
    assert elementwise.exp is fpx.exp and summation.sum is fpx.sum
    assert isinstance(replay, types.ModuleType)
    assert fpx.ops() == registry.ops() and "cdist" in fpx.ops()
    assert fpx.orders("matmul") == order_registry.orders("matmul")
    assert "tree" in fpx.orders("dot") and "numpy" not in fpx.orders("matmul")
    assert set(fpx.backends()) == {"numpy", "emulated", "cupy", "replay", "torch", "jax", "polars"}
    with pytest.raises(ValueError, match="ops with orders: sum, dot, matmul"):
        fpx.orders("cdist")


def test_the_layout_names_folders_and_leaves_modules_to_the_map():
    """The Layout section of docs/architecture.md names the repository's folders, each of
    which exists, and no module: the package map (the docstring of fpexplore/__init__.py,
    checked by test_the_package_map_is_true) is the one list of modules."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text[text.index("## Layout") :]
    block = block[block.index("```") + 3 :]
    block = block[: block.index("```")]
    tops = {line.split()[0] for line in block.splitlines() if line and not line.startswith(" ")}
    assert {"fpexplore/", "notebooks/", "tests/", "docs/"} <= tops, tops
    assert all((ROOT / t).is_dir() for t in tops), tops
    modules = set(re.findall(r"\b\w+\.py\b", block)) - {"test_project.py"}
    assert modules == {"__init__.py"}, modules


def test_readme_is_a_front_door():
    """The README stays short (<= 150 lines): the two commands, the three doors (teach,
    explore, debug my arrays), the status; every link into docs/ leads to a file there."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    heads = re.findall(r"^#+ (.+)$", readme, re.M)
    assert heads[1:2] == ["Quick start"], heads
    assert {"Teach", "Explore", "Debug my arrays", "Status"} <= set(heads), heads
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).exists(), target
    index = (ROOT / "docs" / "README.md").read_text()
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= set(re.findall(r"\]\(([\w]+\.md)\)", index)), "docs/README.md misses a page"


def test_readme_quick_start_matches_makefile_and_ci():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^(make \w+)", quick, flags=re.M)
    assert commands == ["make explore", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^explore:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "notebooks/00_explorer.ipynb" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M), (
        ".ci/run must run the README's test command verbatim"
    )


def _make_line(target: str, tool: str, uid: int, tmp_path, *args) -> list[str]:
    """The command `make -n target args` prints for ``tool`` (nothing is run), as if the
    user's id were ``uid`` (an `id` on PATH that says so)."""
    import shlex
    import shutil

    if shutil.which("make") is None:
        pytest.skip("make not installed")
    fake = tmp_path / f"bin{uid}"
    fake.mkdir(exist_ok=True)
    (fake / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (fake / "id").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path)}
    bindir = str(Path(sys.executable).parent)
    out = subprocess.run(
        ["make", "-n", "-s", target, f"BIN={bindir}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return shlex.split([x for x in out.splitlines() if f"{bindir}/{tool} " in x][-1])


def test_make_explore_and_dashboard_take_a_port(tmp_path):
    """`make explore PORT=...` and `make dashboard PORT=...` serve there (empty: Jupyter's
    and Voila's own 8888 and 8866); JUPYTER_ARGS adds to --allow-root as root, never drops it
    (it did: the arguments replaced the default that held it); the README says all this."""
    line = _make_line("explore", "jupyter", 0, tmp_path, "PORT=8890", "JUPYTER_ARGS=--no-browser")
    assert line[-3:] == ["--allow-root", "--port=8890", "--no-browser"], line
    line = _make_line("explore", "jupyter", 1000, tmp_path)
    assert not [w for w in line if w.startswith("--")], line  # not root, no port: nothing
    line = _make_line("dashboard", "voila", 0, tmp_path, "PORT=8867")
    assert line[-1] == "--port=8867" and "--allow-root" not in line, line
    line = _make_line("dashboard", "voila", 0, tmp_path)
    assert not [w for w in line if w.startswith("--port")], line  # Voila's default, 8866
    readme = (ROOT / "README.md").read_text()
    for said in ("make explore PORT=", "make dashboard PORT=", "8866", "JUPYTER_ARGS"):
        assert said in readme, said


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_stored_without_outputs(nb):
    data = json.loads(nb.read_text())
    for cell in data["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, nb.name


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_are_normalised(nb):
    """nbformat 4.5 cell ids everywhere (nbformat warns MissingIDFieldWarning and writes new
    ones on every save otherwise), and a valid notebook as nbformat reads it."""
    import warnings

    import nbformat

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # MissingIDFieldWarning included
        data = nbformat.read(nb, as_version=4)
    nbformat.validate(data)
    assert (data.nbformat, data.nbformat_minor) >= (4, 5), nb.name
    ids = [cell.get("id") for cell in data.cells]
    assert all(ids) and len(set(ids)) == len(ids), nb.name


def _tracked_text_files() -> dict[str, str]:
    """Every file git tracks that is text (UTF-8, no NUL byte), as path -> content."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    texts = {}
    for name in filter(None, out.split("\0")):
        path = ROOT / name
        if not path.is_file():  # deleted in the working tree
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def test_no_references_outside_the_repository():
    """Nothing cites a document the repository does not contain: no path of a development
    machine, no sibling checkout, no design or case notes kept elsewhere; every ``docs/...``
    path named in the package, tests, notebooks and README exists, and so does every relative
    link inside ``docs/``. (The patterns are assembled from pieces so that this file does not
    match them itself.)"""
    texts = _tracked_text_files()
    assert len(texts) > 50 and "README.md" in texts and "fpexplore/__init__.py" in texts
    sep = "/"
    outside = [
        # absolute paths of a development machine (not preceded by a host or path name)
        re.compile(r"(?<![\w.~-])" + sep + r"(?:work|home|root|Users)" + sep),
        re.compile(re.escape(sep + "tmp" + sep + "research")),
        re.compile(re.escape(".." + sep + "shared")),
        re.compile(r"\bshared" + sep + r"(?:design|cases)\.md"),
        re.compile(r"\b" + "design" + r"\.md"),  # no such file here, so any mention is outside
    ]
    hits = [
        f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for name, text in texts.items()
        for pattern in outside
        for m in pattern.finditer(text)
    ]
    assert not hits, "references outside the repository:\n" + "\n".join(hits)

    # docs/... paths named in the package, tests, notebooks and README exist
    docs_path = re.compile(r"(?<![\w.-])docs" + sep + r"[\w./-]*")
    cited = {}
    for name, text in texts.items():
        if name == "README.md" or name.startswith(("fpexplore/", "tests/", "notebooks/")):
            for m in docs_path.finditer(text):
                cited.setdefault(m.group(0).rstrip(".-"), set()).add(name)
    missing = {p: sorted(names) for p, names in cited.items() if not (ROOT / p).exists()}
    assert not missing, f"docs paths that do not exist: {missing}"
    # ... and the definitions and the case studies are cited, by files other than this one
    me = "tests/test_project.py"
    for doc in ("docs" + sep + "orders.md", "docs" + sep + "cases.md"):
        assert (ROOT / doc).is_file(), doc
        assert cited.get(doc, set()) - {me}, f"nothing cites {doc}"

    # relative links inside docs/ resolve (anchors and web addresses aside)
    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    broken = [
        f"{name}: {target}"
        for name, text in texts.items()
        if name.startswith("docs" + sep) and name.endswith(".md")
        for target in link.findall(text)
        if "://" not in target and not (ROOT / name).parent.joinpath(target).exists()
    ]
    assert not broken, "broken links in docs/: " + ", ".join(broken)


# ----------------------------------------------------------------------------- internal layers

PACKAGE = ROOT / "fpexplore"


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    """Dotted name -> (path, syntax tree) for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return out


def _imported_from(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` node of ``module`` reads from."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_module_imports_an_underscored_name_from_another():
    """What one module of fpexplore takes from another has a plain name: an underscore means
    "this module's own business". Checked: the names imported; a private module
    (``orders._kernels``, ``_optional``) may be imported as a whole."""
    modules = _modules()
    offences = []
    for name, (path, tree) in modules.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported_from(name, path, node)
            if source != "fpexplore" and not source.startswith("fpexplore."):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and f"{source}.{alias.name}" not in modules:
                    rel = path.relative_to(ROOT)
                    offences.append(f"{rel}:{node.lineno}: from {source} import {alias.name}")
    assert not offences, "underscored names imported across modules:\n" + "\n".join(offences)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, at the top or inside functions (lazy). For
    ``from pkg import name`` the edge goes to ``pkg.name`` where that is a module, else to
    ``pkg`` (its ``__init__``)."""
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, (path, tree) in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _imported_from(name, path, node)
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    target = sub if sub in modules else source
                    if target in modules and target != name:
                        graph[name].add(target)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules} - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_lazy_imports_included():
    assert _cycles(_import_graph()) == []
    # the check itself finds a planted cycle
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(planted) == [["a", "b", "c"]]


def _layers() -> list[str]:
    """The package docstring's map, top layer first: ``app/``, ..., ``orders/``, ..."""
    doc = fpx.__doc__
    return re.findall(r"^- ``([\w/]+)``", doc[doc.index("Architecture") :], re.MULTILINE)


def _layer_of(module: str, layers: list[str]) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself: it gathers the public names from every layer
    top = parts[1]
    return f"{top}/" if f"{top}/" in layers else top


def test_the_package_map_is_true():
    """Every module of fpexplore is on the package docstring's map, and imports only modules
    listed below its own entry (imports inside one subpackage aside)."""
    layers = _layers()
    assert layers[0] == "app/" and layers[-1] == "_optional" and "orders/" in layers
    graph = _import_graph()
    unlisted = sorted({_layer_of(m, layers) for m in graph} - set(layers) - {None, "__main__"})
    assert not unlisted, f"modules missing from the map in fpexplore/__init__.py: {unlisted}"
    upward = []
    for module, targets in graph.items():
        mine = _layer_of(module, layers)
        if mine is None:
            continue
        for target in targets:
            theirs = _layer_of(target, layers)
            if theirs is None or theirs == mine:
                continue
            if layers.index(theirs) < layers.index(mine):
                upward.append(f"{module} imports {target} ({theirs} is above {mine})")
    assert not upward, "imports against the map:\n" + "\n".join(sorted(upward))


def test_no_module_outside_the_library_wing_imports_it():
    """The library wing (fpexplore.libraries: the real CPU libraries' loops and backends) is
    loaded by name only, by the order registry and the backends; no other module imports it,
    lazily or not."""
    graph = _import_graph()
    wing = "fpexplore.libraries"
    inside = lambda m: m == wing or m.startswith(wing + ".")  # noqa: E731
    offences = [
        f"{m} imports {t}" for m, ts in graph.items() if not inside(m) for t in ts if inside(t)
    ]
    assert not offences, "\n".join(sorted(offences))
    assert any(inside(m) for m in graph) and graph[wing]  # the wing is there and was read


def test_the_library_wing_loads_on_first_use_of_one_of_its_orders():
    """A fresh process: ``import fpexplore`` and fpexplore's own orders leave the wing
    unloaded; a library order's name loads it, and then its orders are listed with the rest
    (fpexplore's own first, the tensor cores last)."""
    code = """
import sys
import numpy as np
import fpexplore as fpx
loaded = lambda: "fpexplore.libraries" in sys.modules
x = np.arange(1, 11, dtype=np.float32)
fpx.sum(x, "pairwise"); fpx.dot(x, x, "sequential", fma=True)
fpx.matmul(x.reshape(2, 5), x.reshape(5, 2), "tensor-core", input_rounding="tf32")
before = loaded()
value = float(fpx.sum(x, "polars"))
names = list(fpx.orders("dot"))
print(before, loaded(), value, names.index("openblas") > names.index("kahan"), names[-1])
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["False", "True", "55.0", "True", "tensor-core"]


def test_a_library_order_sets_no_fma():
    from fpexplore.orders import registry

    spec = registry.lookup("sum", "polars")
    with pytest.raises(ValueError, match="sets no fma"):
        registry.register([dataclasses.replace(spec, fma=True)])
    assert registry.lookup("sum", "polars") is spec  # refused before anything changed


def _pattern(expr: str):
    """A matcher for expressions shaped like ``expr``: each of its names stands for any
    subexpression (the same one wherever ``expr`` repeats the name, different ones for
    different names), its numbers and operators for themselves."""
    want = ast.parse(expr, mode="eval").body

    def match(node, pat, env) -> bool:
        if isinstance(pat, ast.Name):
            if not isinstance(node, ast.expr):
                return False
            seen = ast.dump(node)
            if pat.id in env:
                return env[pat.id] == seen
            if seen in env.values():
                return False
            env[pat.id] = seen
            return True
        if type(node) is not type(pat):
            return False
        for field_name, value in ast.iter_fields(pat):
            if field_name == "ctx":
                continue
            other = getattr(node, field_name)
            if isinstance(value, ast.AST):
                if not match(other, value, env):
                    return False
            elif isinstance(value, list):
                if len(value) != len(other) or not all(
                    match(o, v, env) if isinstance(v, ast.AST) else o == v
                    for o, v in zip(other, value)
                ):
                    return False
            elif value != other:
                return False
        return True

    return lambda node: match(node, want, {})


def _fast_two_sum(node) -> bool:
    """A function computing ``s = a + b`` and then ``b - (s - a)`` (Dekker's FastTwoSum)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    sums = [
        (n.targets[0].id, n.value.left, n.value.right)
        for n in ast.walk(node)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.BinOp)
        and isinstance(n.value.op, ast.Add)
    ]
    wanted = {
        ast.dump(ast.parse(f"({ast.unparse(b)}) - ({s} - ({ast.unparse(a)}))", mode="eval").body)
        for s, a, b in sums
    }
    return any(isinstance(n, ast.BinOp) and ast.dump(n) in wanted for n in ast.walk(node))


# Fingerprints of the shared numerics, whatever a copy of them is called. Each shape must
# occur in fpexplore/numerics.py only (there: once).
_SHAPES = {
    "two_sum (Knuth)": _pattern("(a - (s - t)) + (b - t)"),
    "fast_two_sum (Dekker)": _fast_two_sum,
    "Veltkamp split": _pattern("t - (t - a)"),
    "Veltkamp splitter 2**27 + 1": lambda n: (
        (isinstance(n, ast.Constant) and not isinstance(n.value, bool) and n.value == 134217729)
        or _pattern("2**27 + 1")(n)
        or _pattern("2.0**27 + 1.0")(n)
    ),
    "float32 flush threshold 2**-126": lambda n: (
        (isinstance(n, ast.Constant) and n.value == 2.0**-126)
        or _pattern("2.0**-126")(n)
        or _pattern("2**-126")(n)
    ),
    "ULP sentinel clamp 2**62": _pattern("2**62"),
    "rounding to a precision: ldexp(rint(ldexp(v, -q)), q)": lambda n: (
        isinstance(n, ast.Call)
        and getattr(n.func, "attr", getattr(n.func, "id", "")) == "ldexp"
        and bool(n.args)
        and isinstance(n.args[0], ast.Call)
        and getattr(n.args[0].func, "attr", getattr(n.args[0].func, "id", "")) == "rint"
    ),
}

# The names each primitive had in the copies it replaced (with or without underscores).
_OLD_NAMES = {
    "two_prod": "two_product",
    "ftz32": "flush_subnormals",
    "round64": "round_to_precision",
    "round_py": "round_to_precision",
    "decide": "ziv_decide",
    "odd_sum": "odd_add64_scalar",
}


@pytest.mark.parametrize("sub", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")))
def test_each_subpackage_map_is_true(sub):
    """A subpackage's docstring names every module of it, and its list (``- ``name````)
    names no module that does not exist."""
    init = PACKAGE / sub / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    modules = {p.stem for p in (PACKAGE / sub).glob("*.py")} - {"__init__"}
    listed = set(re.findall(r"^- ``(\w+)``", doc, re.M))
    assert not listed - modules, f"{sub}/__init__.py lists modules that do not exist"
    unnamed = sorted(m for m in modules if f"``{m}``" not in doc and f".{m}`" not in doc)
    assert not unnamed, f"{sub}/__init__.py does not name {unnamed}"


def test_shared_numerics_are_defined_once():
    """Each shared numeric primitive (error-free transformations, rounding to a precision,
    round to odd, the float32 flush, the ULP clamp, Ziv's decision step) has one definition,
    in fpexplore/numerics.py: no other module defines a function of that name (or of the
    name its old copies had), and no other module spells out its arithmetic."""
    modules = _modules()
    _, numerics_tree = modules.pop("fpexplore.numerics", (None, None))
    assert numerics_tree is not None, "fpexplore/numerics.py is missing"
    shared = {
        n.name for n in numerics_tree.body if isinstance(n, ast.FunctionDef) and n.name[0] != "_"
    }
    for name in ("two_sum", "two_product", "flush_subnormals", "clamp_ulps", "ziv_decide"):
        assert name in shared, name
    names = shared | set(_OLD_NAMES)
    found = {}
    for what, hit in _SHAPES.items():
        in_numerics = sum(1 for n in ast.walk(numerics_tree) if hit(n))
        assert in_numerics == 1, f"{what}: {in_numerics} occurrences in numerics.py"
    offences = []
    for path, tree in modules.values():
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bare = node.name.lstrip("_")
                if bare in names:
                    shared_name = _OLD_NAMES.get(bare, bare)
                    offences.append(
                        f"{rel}:{node.lineno}: def {node.name} (numerics.{shared_name})"
                    )
            for what, hit in _SHAPES.items():
                if hit(node):
                    found.setdefault(what, []).append(f"{rel}:{node.lineno}")
    offences += [f"{where}: {what}" for what, places in found.items() for where in places]
    assert not offences, "copies of shared numerics outside numerics.py:\n" + "\n".join(offences)


MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 90  # docstring included; a template of generated source is not counted
MAX_CLASS_LINES = 250


def _template_lines(func: ast.AST) -> int:
    """Lines of ``func`` inside string literals other than its docstring (generated source)."""
    body = getattr(func, "body", [])
    doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
    lines = set()
    for node in ast.walk(func):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node is not doc:
            if isinstance(node, ast.JoinedStr) or isinstance(node.value, str):
                lines.update(range(node.lineno + 1, node.end_lineno + 1))
    return len(lines)


def test_no_module_function_or_class_is_too_long():
    """The fitness limits of the package (docs/architecture.md): no module over 800 lines, no
    function over 90 (its docstring counted, a template of generated source not), no class
    over 250."""
    offences = []
    for path, tree in _modules().values():
        rel = path.relative_to(ROOT)
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            offences.append(f"{rel}: {n} lines (module, at most {MAX_MODULE_LINES})")
        for node in ast.walk(tree):
            length = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length -= _template_lines(node)
                limit, kind = MAX_FUNCTION_LINES, "function"
            elif isinstance(node, ast.ClassDef):
                limit, kind = MAX_CLASS_LINES, "class"
            else:
                continue
            if length > limit:
                offences.append(f"{rel}:{node.lineno}: {kind} {node.name}, {length} lines")
    assert not offences, "too long:\n" + "\n".join(offences)


def test_the_binder_badges_open_a_notebook_that_exists():
    """Two badges: JupyterLab on the explorer, and the explorer as a Voila dashboard that runs
    itself (issue 37: the badge opened a bare notebook with nothing interactive)."""
    readme = (ROOT / "README.md").read_text()
    paths = re.findall(r"mybinder\.org/v2/gh/[^)]*\?urlpath=([a-z]+/[a-z]+)/([^)\s]+)", readme)
    assert {p for p, _ in paths} == {"lab/tree", "voila/render"}, paths
    for _, nb in paths:
        assert (ROOT / nb).is_file(), nb
    env = (ROOT / "binder" / "environment.yml").read_text()
    assert "voila" in env  # the dashboard badge needs Voila's server extension on Binder
