"""The documentation: generated pages are current, links resolve, examples exist."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _build_api_module():
    spec = importlib.util.spec_from_file_location("build_api", ROOT / "docs" / "build_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_generated_from_the_current_docstrings():
    build_api = _build_api_module()
    assert (ROOT / "docs" / "api.md").read_text() == build_api.build(), (
        "docs/api.md is stale: run python docs/build_api.py")


def test_every_documented_object_has_an_example():
    build_api = _build_api_module()
    missing = []
    for module_name, names in build_api.PUBLIC:
        module = importlib.import_module(module_name)
        for name in names:
            if ">>>" not in (getattr(module, name).__doc__ or ""):
                missing.append(f"{module_name}.{name}")
    assert not missing, f"no runnable example in: {missing}"


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(target)
    assert not broken, f"broken links in {page.name}: {broken}"


def test_every_script_and_test_file_the_docs_cite_exists():
    # A figure is only as good as the command behind it: a docstring once cited a
    # benchmarks/suite.py that no longer existed.
    sources = [*PAGES, *sorted((ROOT / "elmofeat").rglob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py"))]
    cited = {match for path in sources
             for match in re.findall(r"\b(?:benchmarks|tests)/[a-z_]+\.py\b", path.read_text())}
    assert cited, "the pattern should find the cited scripts"
    missing = sorted(path for path in cited if not (ROOT / path).is_file())
    assert not missing, f"cited but missing: {missing}"
