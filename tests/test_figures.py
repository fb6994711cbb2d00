"""The report's figures read at a glance (issue 73): drawn from the committed report's
results, each figure is inspected before it is saved."""

import json
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from elmofeat.suite import figures  # noqa: E402
from elmofeat.suite.paired import paired_differences  # noqa: E402
from elmofeat.suite.report import summarize  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "report" / "results.json"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Every figure of the committed report, kept open as it would be saved."""
    results = json.loads(RESULTS.read_text())
    kept = {}
    original = figures._save

    def keep(figure, path):
        kept[path.name] = figure
        original(figure, path)

    figures._save = keep
    try:
        figures.draw_figures(results, summarize(results), tmp_path_factory.mktemp("figures"))
    finally:
        figures._save = original
    return results, kept


def test_the_headline_shows_each_rows_difference_from_tfidf_on_one_scale(drawn):
    """It used to draw accuracy bars cut at another value in each panel, with no legend."""
    results, kept = drawn
    figure = kept["suite_accuracy.png"]
    panels = [ax for ax in figure.axes if ax.get_xlabel()]
    assert len(panels) == len(results["datasets"])
    assert len({ax.get_xlim() for ax in panels}) == 1  # one common scale
    low, high = panels[0].get_xlim()
    assert low < 0 < high
    gaps = paired_differences(results)
    for ax, key in zip(panels, results["datasets"]):
        assert not ax.patches  # dots and intervals, no bars
        dots = sorted(float(line.get_xdata()[0]) for line in ax.lines
                      if line.get_marker() == "o" and len(line.get_xdata()) == 1)
        expected = sorted(100 * gap["mean"] for gap in gaps[key].values())
        np.testing.assert_allclose(dots, expected, atol=1e-9)
    legend = figure.legends[0]
    assert {text.get_text() for text in legend.get_texts()} >= {"the shipped biLM"}


def test_a_twenty_class_grid_stays_a_page_with_numbers_only_where_they_fit(drawn):
    """The 20 Newsgroups grid used to be 4,983 x 3,780 pixels with 400 numbers a panel."""
    _, kept = drawn
    figure = kept["20ng_confusion.png"]
    width, height = figure.get_size_inches() * 110
    assert width <= 2000 and height <= 2000
    grid = figure.axes[0]
    numbers = [text for text in grid.texts]
    assert 0 < len(numbers) < 20 * 20 / 2


def test_no_title_promises_a_line_style_that_is_not_drawn(drawn):
    _, kept = drawn
    for name, figure in kept.items():
        for ax in figure.axes:
            assert "dashed" not in ax.get_title(), name
