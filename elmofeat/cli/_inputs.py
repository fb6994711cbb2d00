"""Where the command line finds texts: a text file, a CSV/Parquet column or a dataset."""

from __future__ import annotations

import argparse
from pathlib import Path

# The partitions of the datasets that have them, beside the suite's tasks (whose texts
# a task's name gives, as the suite reads them): "ag_news:train" is the 120k-row file.
_PARTITIONS = {"ag_news:train": ("load_ag_news", "train"), "ag_news:test": ("load_ag_news", "test"),
               "r8:train": ("load_r8", "train"), "r8:test": ("load_r8", "test")}


def dataset_sources() -> tuple[str, ...]:
    """The dataset names the commands read texts from: every task of the suite's registry
    (:data:`elmofeat.suite.tasks.TASKS`) and the partitions above."""
    from ..suite.tasks import TASKS

    return tuple(sorted({*TASKS, *_PARTITIONS}))


def _checked_argument(convert, accept, wanted: str, doc: str):
    """An argparse ``type``: ``convert`` the text, and refuse a value ``accept`` does not
    take, saying what is ``wanted`` (checked before any data is read)."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {value}")
        return value

    parse.__doc__ = doc
    return parse


positive_int_argument = _checked_argument(int, lambda v: v >= 1, "an integer >= 1",
                                          "An integer >= 1.")
n_jobs_argument = _checked_argument(int, lambda v: v != 0,
                                    "an integer other than 0 (-1: every CPU)",
                                    "joblib's ``n_jobs``: an integer other than 0.")
positive_seconds_argument = _checked_argument(
    float, lambda v: 0 < v < float("inf"), "a number of seconds > 0",
    "A finite number of seconds > 0.")


def seed_argument(text: str) -> int:
    """An argparse ``type`` for ``--seed``: an integer from 0 to 2**32 - 1 (what NumPy and
    scikit-learn take as a seed), checked before any work."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 4294967295, got "
                                         f"{text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 4294967295, got {value}")
    return value


def threads(text: str):
    """An argparse ``type`` for ``--threads``: ``auto`` or an integer >= 1."""
    return "auto" if text == "auto" else positive_int_argument(text)


def _not_text(path, exc: UnicodeDecodeError) -> ValueError:
    return ValueError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at position "
                      f"{exc.start}): give a text file with one document a line, or a CSV, TSV or "
                      "Parquet file")


def _column(frame, column, path):
    if column is None:
        if "text" in frame.columns:
            column = "text"
        elif len(frame.columns) == 1:
            column = frame.columns[0]
        else:
            raise ValueError(f"{path} has several columns ({', '.join(map(str, frame.columns))}): "
                             "choose one with --column")
    if column not in frame.columns:
        raise ValueError(f"{path} has no column {column!r} (columns: "
                         f"{', '.join(map(str, frame.columns))})")
    values = frame[column]
    return ["" if value is None or value != value else str(value) for value in values]


def _read_json(path, lines: bool):
    """A JSON Lines file (one object a line) or a JSON array of objects, as a table."""
    import pandas as pd

    try:
        frame = pd.read_json(path, lines=lines, dtype=False)
    except ValueError as exc:  # pandas' words ("all scalar values ...") would mislead
        raise ValueError(
            f"{path} is not " + ("JSON Lines: one JSON object a line" if lines else
                                 "a JSON array of objects, one per document")
            + f", with the text under a key (see --column) ({type(exc).__name__})") from None
    if not isinstance(frame, pd.DataFrame) or not all(isinstance(c, str) for c in frame.columns):
        raise ValueError("expected one JSON object per document, with the text under a key "
                         "(see --column)")
    return frame


def read_texts(source: str, column: str | None = None, data_home=None) -> list[str]:
    """Documents from ``source``.

    * ``*.csv`` / ``*.tsv`` / ``*.parquet`` / ``*.jsonl`` (``*.ndjson``; ``*.json``: an
      array of objects): one document per row or object, from ``column`` (default: the
      column or key named ``text``, or the only one); missing values become empty
      documents.
    * any other existing file: one document per line (UTF-8).
    * a dataset name: a task of the suite, its texts as the suite reads them (``ag_news``:
      the 7,600-row partition, ``r8``: train + test, ``cr``, ``mpqa``), or one partition,
      e.g. ``r8:train``.
    """
    path = Path(source)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv", ".parquet", ".jsonl", ".ndjson", ".json"):
            import pandas as pd

            try:
                if suffix == ".parquet":
                    frame = pd.read_parquet(path)
                elif suffix in (".jsonl", ".ndjson", ".json"):
                    frame = _read_json(path, lines=suffix != ".json")
                else:
                    frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str,
                                        keep_default_na=False)
            except UnicodeDecodeError as exc:
                raise _not_text(path, exc) from None
            except (ValueError, OSError) as exc:  # pyarrow / parser errors
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ValueError(f"{path} could not be read as {suffix[1:].upper()}: {first}") from None
            return _column(frame, column, path)
        if column is not None:
            raise ValueError(f"--column applies to CSV, TSV, JSON Lines and Parquet files, "
                             f"not to {path}")
        try:
            with open(path, encoding="utf-8") as handle:
                return [line.rstrip("\r\n") for line in handle]
        except UnicodeDecodeError as exc:
            raise _not_text(path, exc) from None
    if source in _PARTITIONS:
        from .. import datasets

        loader, subset = _PARTITIONS[source]
        return getattr(datasets, loader)(data_home, subset=subset).data
    from ..suite.tasks import TASKS

    if source in TASKS:
        return list(TASKS[source].load(data_home).data)
    if path.is_dir():
        raise ValueError(f"{path} is a folder: give a text, CSV, TSV or Parquet file")
    raise FileNotFoundError(f"{source}: no such file, and not a dataset name "
                            f"({', '.join(dataset_sources())})")
