"""What a model card and the recipe's table read from the data and the results: each
training file's licence (the data's SOURCES.md) and paired differences between rows.

Plain Python, no torch: tests import it directly (``_common`` must come before torch).
"""

from __future__ import annotations

import re
from pathlib import Path


def sources_table(home: Path) -> list[tuple[re.Pattern, str]]:
    """``(file-name pattern, licence and origin)`` of every corpus row of SOURCES.md."""
    rows = []
    for line in (home / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or not cells[0].endswith((".txt.gz", "_heldout")):
            continue
        name = cells[0].split(",")[0].strip()  # "x_train.txt.gz, _heldout": the first
        # "wikipedia_train_00..03.txt.gz" names four shards
        pattern = "".join(r"\d\d" if re.fullmatch(r"\d\d\.\.\d\d", part) else re.escape(part)
                          for part in re.split(r"(\d\d\.\.\d\d)", name))
        rows.append((re.compile(pattern + "$"), cells[-1]))
    return rows


def licence_of(path: Path, table) -> str:
    for pattern, licence in table:
        if pattern.match(path.name):
            return licence
    raise ValueError(f"{path.name} has no row in SOURCES.md")


def paired_cell(row: dict, other: dict, task: str) -> str:
    """``row`` minus ``other`` on the same splits of ``task``, in points: the mean, and
    with several splits ± the std of the differences and the splits ``row`` is above on.
    Rows are :mod:`general_recipe`'s (``row["scores"][task]["splits"]``)."""
    import numpy as np

    mine, theirs = row["scores"][task]["splits"], other["scores"][task]["splits"]
    differences = 100 * (np.asarray(mine) - np.asarray(theirs))
    if len(differences) == 1:
        return f"{differences[0]:+.2f}"
    return (f"{differences.mean():+.2f} ± {differences.std(ddof=1):.2f}, "
            f"{int((differences > 0).sum())}/{len(differences)}")
