"""The package's shape: imports flow one way (no module imports itself through others)."""

import ast
import os
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

PACKAGE = Path(__file__).resolve().parents[1] / "elmofeat"


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Every module of ``package`` and the package modules it imports, at any depth of
    its code (imports inside functions count: they close a circle just the same)."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parent = base.split(".")[: len(base.split(".")) - node.level + 1]
                    source = ".".join(parent + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    deps.add(target if target in modules else source)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others."""
    names = sorted(graph)
    index = {n: i for i, n in enumerate(names)}
    edges = [(index[a], index[b]) for a in names for b in graph[a]]
    rows, cols = (np.array(x, dtype=int) for x in zip(*edges)) if edges else ([], [])
    adjacency = coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(names),) * 2)
    _, labels = connected_components(adjacency, directed=True, connection="strong")
    groups = [[n for n, label in zip(names, labels) if label == k] for k in np.unique(labels)]
    return [g for g in groups if len(g) > 1]


def test_the_detector_finds_a_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def f():\n    from ..a import g\n")
    (package / "c.py").write_text("from . import a\n")
    assert import_cycles(import_graph(package)) == [["pkg.a", "pkg.sub.b"]]


def test_no_import_circle():
    graph = import_graph()
    assert "elmofeat.bilm.train" in graph and graph["elmofeat.bilm.estimator"]
    assert import_cycles(graph) == []


def code_lines(path: Path) -> int:
    """Lines of ``path`` outside docstrings (the numpydoc of a public class is long by
    design; the code around it is what must stay readable)."""
    source = path.read_text(encoding="utf-8")
    docstrings = 0
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            docstrings += body[0].end_lineno - body[0].lineno + 1
    return len(source.splitlines()) - docstrings


def test_no_module_is_longer_than_400_lines_of_code():
    sizes = {str(p.relative_to(PACKAGE.parent)): code_lines(p) for p in PACKAGE.rglob("*.py")}
    assert sizes["elmofeat/elmo/vectorizer.py"] > 100  # the count sees real modules
    assert {name: n for name, n in sizes.items() if n > 400} == {}


def test_docstrings_name_only_functions_and_methods_that_exist():
    import re

    defined, cited = set(), {}
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
        for name in re.findall(r":(?:func|meth):`~?([\w.]+)`", source):
            cited.setdefault(name.rpartition(".")[2], path.name)
    assert len(cited) > 20
    assert {name: where for name, where in cited.items() if name not in defined} == {}


def private_imports(package: Path = PACKAGE, libraries=("sklearn", "numpy", "scipy", "joblib",
                                                        "gensim", "pandas")) -> list[str]:
    """``module: name`` for every private name the package imports from another library
    (a module or a name starting with ``_``): these change without deprecation."""
    found = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                parts = node.module.split(".")
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.Import):
                parts, names = None, [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                dotted = (parts or []) + name.split(".")
                if dotted[0] in libraries and any(p.startswith("_") and not p.startswith("__")
                                                  for p in dotted[1:]):
                    found.append(f"{path.relative_to(package.parent)}: {'.'.join(dotted)}")
    return found


def test_the_detector_finds_a_private_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("from sklearn.utils._param_validation import Interval\n"
                                  "from sklearn.base import _fit_context, clone\n"
                                  "from sklearn.utils import check_random_state\n")
    assert private_imports(package) == ["pkg/a.py: sklearn.utils._param_validation.Interval",
                                        "pkg/a.py: sklearn.base._fit_context"]


def test_no_private_api_of_the_scientific_stack_is_imported():
    """scikit-learn's private _param_validation and _fit_context (and their likes)
    change without deprecation: elmofeat keeps its own validator."""
    assert private_imports() == []


# -------------------------------------------------------------- seams between packages
SUBPACKAGES = ("bilm", "elmo", "mixes", "wordvectors", "runtime", "suite", "cli", "datasets",
               "models")


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in SUBPACKAGES else None


def test_the_folders_name_the_architecture():
    for name in SUBPACKAGES:
        init = PACKAGE / name / "__init__.py"
        assert init.is_file(), name
        assert ast.get_docstring(ast.parse(init.read_text())), f"{name}/__init__.py says nothing"
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    # The top level holds only what every group shares (and the public entry points).
    assert not {"elmo.py", "svd.py", "skipgram.py", "wordvectors.py", "mix.py", "_threads.py",
                "_malloc.py", "_torch.py", "_bilm_cache.py"} & set(flat)


def test_subpackages_import_each_other_through_public_modules_only():
    """A module of one subpackage never imports a private (``_``) module of another."""
    graph = import_graph()
    crossing = sorted(
        f"{source} -> {target}" for source, targets in graph.items() for target in targets
        if _subpackage(source) and _subpackage(target) and _subpackage(source) != _subpackage(target)
        and any(part.startswith("_") and not part.startswith("__")
                for part in target.split(".")[2:]))
    assert crossing == []


def test_the_biLM_and_the_static_word_vectors_depend_one_way():
    graph = import_graph()
    assert any(t.startswith("elmofeat.wordvectors") for s in graph if s.startswith("elmofeat.bilm")
               for t in graph[s])  # the biLM reads vectors files and SVD vectors from there
    back = sorted(f"{s} -> {t}" for s in graph if s.startswith("elmofeat.wordvectors")
                  for t in graph[s] if t.startswith(("elmofeat.bilm", "elmofeat.elmo")))
    assert back == []


def test_the_vectorizer_uses_no_private_member_of_the_bilm():
    import re

    found = []
    for path in [*(PACKAGE / "elmo").glob("*.py"), *(PACKAGE / "cli").glob("*.py"),
                 *(PACKAGE / "suite").glob("*.py"), PACKAGE / "hybrid.py"]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bbilm_?\._[a-z]", line):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []


def test_benchmark_scripts_import_no_private_module_of_elmofeat():
    found = []
    for path in (PACKAGE.parent / "benchmarks").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                       else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                dotted = module.split(".") + (names if module == "elmofeat" else [])
                if dotted[0] == "elmofeat" and any(p.startswith("_") and not p.startswith("__")
                                                   for p in dotted[1:]):
                    found.append(f"{path.name}: {module} {names}")
    assert found == []


def test_benchmark_scripts_import_their_process_settings_before_torch():
    """benchmarks/_common.py makes the elmofeat command's OpenMP spin setting, which
    libgomp reads once, when torch loads: a script importing torch (or elmofeat, or
    anything importing either) before it measures another setting than the command's."""
    heavy = {"torch", "elmofeat", "numpy", "sklearn", "scipy", "gensim", "pandas"}
    found = []
    for path in sorted((PACKAGE.parent / "benchmarks").glob("*.py")):
        order = []
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                order += [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                order.append(node.module.split(".")[0])
        if "_common" in order:
            early = heavy.intersection(order[:order.index("_common")])
            if early:
                found.append(f"{path.name}: {sorted(early)} before _common")
    assert found == []


def test_benchmarks_common_refuses_a_process_where_torch_loaded_first(tmp_path):
    import subprocess
    import sys

    from elmofeat.runtime.openmp import SPIN_COUNT, USER_SETTINGS

    benchmarks = PACKAGE.parent / "benchmarks"
    env = {k: v for k, v in os.environ.items() if k not in (*USER_SETTINGS, "GOMP_SPINCOUNT")}
    late = subprocess.run([sys.executable, "-c", "import torch, _common"], cwd=benchmarks,
                          capture_output=True, text=True, env=env)
    assert late.returncode != 0 and "import _common before torch" in late.stderr
    first = subprocess.run([sys.executable, "-c", "import _common, torch, os; "
                            "print(os.environ['GOMP_SPINCOUNT'])"], cwd=benchmarks,
                           capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == str(SPIN_COUNT)


def test_no_layer_mix_branch_outside_the_registry():
    """Mixes are declared in elmofeat.mixes: nothing else branches on a mix's name."""
    import re

    branches = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
                for n, line in enumerate(p.read_text().splitlines(), 1)
                if re.search(r"layer_mix\s*(==|!=)|layer_mix in [(\[{]|\bmix\s*==\s*[\"']", line)]
    assert branches == []
