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


# A figure: a decimal number, a number with thousands separators, a percentage or a
# ratio ("1.5x").
_FIGURE = re.compile(r"(?<![\w.])(\d+\.\d+|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?%)(?=x\b|(?![\w]))")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[+-]?\d+)?")
_GENERATED = ("benchmarks.md", "api.md")


def _benchmark_sections() -> dict[str, str]:
    """docs/benchmarks.md (generated from the results files) by heading anchor: each
    section's text, its subsections included."""
    sections, open_headings = {}, []
    for line in (ROOT / "docs" / "benchmarks.md").read_text().splitlines():
        heading = re.match(r"^(#+) (.+)$", line)
        if heading:
            level = len(heading.group(1))
            open_headings = [(lv, a) for lv, a in open_headings if lv < level]
            anchor = re.sub(r"[^\w\- ]", "", heading.group(2).strip().lower()).replace(" ", "-")
            open_headings.append((level, anchor))
            sections[anchor] = ""
            continue
        for _, anchor in open_headings:
            sections[anchor] += line + "\n"
    return sections


def _cited_results(paragraph: str, sections: dict[str, str]) -> str:
    """The results a paragraph cites: sections of the generated benchmarks page, results
    files of the benchmark scripts it names, the suite's report."""
    cited = [sections.get(anchor, "") for anchor in re.findall(r"benchmarks\.md#([\w\-]+)", paragraph)]
    for name in re.findall(r"benchmarks/(?:results/)?(\w+)\.(?:py|md|json)", paragraph):
        cited += [p.read_text() for p in (ROOT / "benchmarks" / "results").glob(f"{name}.*")
                  if p.suffix in (".md", ".json")]
    # a shipped model's folder: its configuration and, for a distilled one, provenance
    for name in re.findall(r"elmofeat/models/([\w\-]+)/", paragraph):
        cited += [p.read_text() for p in (ROOT / "elmofeat" / "models" / name).glob("*.json")]
    if "report/report.md" in paragraph or "docs/report" in paragraph:
        cited += [(ROOT / "docs" / "report" / n).read_text() for n in ("report.md", "results.json")]
    return "\n".join(cited)


def figures_not_in_their_results(text: str, sections: dict[str, str]) -> list[str]:
    """Figures of the paragraphs of ``text`` that cite results but are not found in
    them: a figure is found where a number of the results, rounded to the figure's
    decimals, equals it (as it is, or as points or percent of a fraction)."""
    missing = []
    # A paragraph, or one item of a list (a citation covers its own item).
    for paragraph in re.split(r"\n\s*\n|\n(?=[-*] )", text):
        cited = _cited_results(paragraph, sections)
        if not cited:
            continue
        values = [float(v.replace(",", "")) for v in _NUMBER.findall(cited)]
        for figure in sorted(set(_FIGURE.findall(paragraph))):
            core = figure.rstrip("%").replace(",", "")
            decimals = len(core.split(".")[1]) if "." in core else 0
            if not any(round(abs(v), decimals) == float(core)
                       or round(abs(v) * 100, decimals) == float(core) for v in values):
                missing.append(f"{figure} in {paragraph.strip()[:70]!r}")
    return missing


def test_the_figure_check_finds_a_figure_missing_from_its_results():
    sections = {"speed": "| documents/s | 6,405 |\\n| ratio | 0.3512 |\n"}
    good = "It ran at 6,405 documents a second, 35.1% of idle ([speed](benchmarks.md#speed))."
    stale = ("It ran at 7,000 documents a second, 0.35 of idle, 1.5x the old speed "
             "([speed](benchmarks.md#speed)).")
    assert figures_not_in_their_results(good, sections) == []
    assert [m.split()[0] for m in figures_not_in_their_results(stale, sections)] == ["1.5", "7,000"]
    assert figures_not_in_their_results("No citation: 1.234 stays unchecked.", sections) == []
    # In a list, a citation covers its own item only.
    items = ("- 6,405 documents a second ([speed](benchmarks.md#speed)), then 7,000\n"
             "- a sample of 50,000 tokens, a constant of the code")
    assert [m.split()[0] for m in figures_not_in_their_results(items, sections)] == ["7,000"]


#: Beside the docs pages: the changelog and the shipped models' cards.
CHECKED_PAGES = [*PAGES, ROOT / "CHANGELOG.md",
                 *sorted((ROOT / "elmofeat" / "models").glob("*/README.md"))]


def test_every_figure_in_the_docs_is_found_in_the_results_it_cites():
    """README, the hand-written docs pages, the changelog and the model cards: a figure
    in a paragraph that cites a benchmark section, a benchmark script or results file,
    or the suite's report must be in those results."""
    sections = _benchmark_sections()
    missing = []
    for page in CHECKED_PAGES:
        if page.name not in _GENERATED:
            missing += [f"{page.name}: {m}" for m in figures_not_in_their_results(
                page.read_text(), sections)]
    assert missing == [], "figures not found in the results they cite:\n" + "\n".join(missing)


#: Where a figure of the docs may come from: every results file a command of the
#: repository writes, the suite's committed report, and the shipped models' configs (and
#: a distilled model's provenance, written with its weights).
RESULT_FILES = [*sorted((ROOT / "benchmarks" / "results").glob("*.md")),
                *sorted((ROOT / "benchmarks" / "results").glob("*.json")),
                ROOT / "docs" / "report" / "report.md", ROOT / "docs" / "report" / "results.json",
                *sorted((ROOT / "elmofeat" / "models").glob("*/config.json")),
                *sorted((ROOT / "elmofeat" / "models").glob("*/distillation.json"))]
#: Numbers that are not measurements: identifiers (arXiv ids), versions.
_IDENTIFIERS = re.compile(r"arXiv:\d+\.\d+|\b\d+\.\d+\.\d+\b")


def _result_values(texts) -> set:
    """(decimals, value) of every number of ``texts``, as it is and as points or percent
    of a fraction, rounded to 0 to 4 decimals."""
    values = set()
    for text in texts:
        for number in _NUMBER.findall(text):
            value = abs(float(number.replace(",", "")))
            for decimals in range(5):
                values.add((decimals, round(value, decimals)))
                values.add((decimals, round(value * 100, decimals)))
    return values


def figures_without_a_results_file(text: str, values: set) -> list[str]:
    """Figures of ``text`` (outside code blocks) that no results file holds."""
    text = _IDENTIFIERS.sub("", re.sub(r"```.*?```", "", text, flags=re.S))
    missing = []
    for paragraph in re.split(r"\n\s*\n|\n(?=[-*] )", text):
        for figure in sorted(set(_FIGURE.findall(paragraph))):
            core = figure.rstrip("%").replace(",", "")
            decimals = len(core.split(".")[1]) if "." in core else 0
            if (decimals, float(core)) not in values:
                missing.append(f"{figure} in {paragraph.strip()[:70]!r}")
    return missing


def test_the_file_check_fails_on_a_figure_without_a_file():
    values = _result_values(["| speed | 6,405 | 0.3512 |"])
    assert figures_without_a_results_file("6,405 documents a second, 35.1% of idle", values) == []
    stale = "It took 12.3456 s (arXiv:1809.06641, torch 2.13.0)\n\n```\n>>> 0.667\n```"
    assert [m.split()[0] for m in figures_without_a_results_file(stale, values)] == ["12.3456"]


def test_every_figure_in_the_docs_has_a_results_file():
    """Every figure of README, the docs pages, the changelog and the model cards is in a
    results file at HEAD (or the suite's report, or a shipped model's config): a figure
    that only an old run backed fails here."""
    values = _result_values(path.read_text() for path in RESULT_FILES)
    missing = []
    for page in CHECKED_PAGES:
        if page.name not in _GENERATED:
            missing += [f"{page.relative_to(ROOT)}: {m}"
                        for m in figures_without_a_results_file(page.read_text(), values)]
    assert missing == [], "figures that no results file holds:\n" + "\n".join(missing)
