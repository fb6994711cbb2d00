"""20 Newsgroups, the "bydate" split: long, informal Usenet posts in 20 topics."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from sklearn.utils import Bunch

from .._files import atomic_path
from ._base import RemoteFile, fetch_file, get_data_home, labelled_partitions, missing_data_error

FOLDER = "20ng"
FILES = {"train": "20news-bydate-train.jsonl.xz", "test": "20news-bydate-test.jsonl.xz"}
#: What the bydate split holds: a file with other groups or another count is damaged or
#: partial, and its integer targets would name other groups than the other file's.
GROUPS = ("alt.atheism", "comp.graphics", "comp.os.ms-windows.misc",
          "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "comp.windows.x",
          "misc.forsale", "rec.autos", "rec.motorcycles", "rec.sport.baseball",
          "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med", "sci.space",
          "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
          "talk.politics.misc", "talk.religion.misc")
POSTS = {"train": 11_314, "test": 7_532}
#: Jason Rennie's bydate archive, where scikit-learn's fetch_20newsgroups gets it (the
#: same address and SHA-256 as scikit-learn's ``ARCHIVE``).
ARCHIVE = RemoteFile(
    "20news-bydate.tar.gz", "https://ndownloader.figshare.com/files/5975967",
    "sha256:8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610")


def _archive_records(archive: Path) -> dict:
    """Each part's posts in the archive (``20news-bydate-<part>/<group>/<number>``), as
    ``{"label", "filename", "text"}`` records sorted by group, then file number; the
    text decoded as latin-1, as scikit-learn decodes it."""
    import tarfile

    records = {part: [] for part in FILES}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or not parts[0].startswith("20news-bydate-"):
                continue
            part = parts[0][len("20news-bydate-"):]
            if part in records:
                text = tar.extractfile(member).read().decode("latin-1")
                records[part].append({"label": parts[1], "filename": parts[2], "text": text})
    for part, rows in records.items():
        rows.sort(key=lambda r: (r["label"], int(r["filename"]) if r["filename"].isdigit()
                                 else r["filename"]))
    return records


def fetch_20newsgroups_bydate(data_home=None, *, progress: bool = True) -> Path:
    """Download the bydate archive and write the two files the loader reads.

    The archive (about 14 MB, checksum pinned) is fetched into ``<data_home>/20ng/``,
    its posts written as ``20news-bydate-{train,test}.jsonl.xz`` (each written whole
    or not at all), checked as the loader checks them, then the archive is removed.

    Returns
    -------
    folder : pathlib.Path
        ``<data_home>/20ng``.
    """
    folder = get_data_home(data_home) / FOLDER
    archive = fetch_file(ARCHIVE, folder, progress=progress)
    for part, rows in _archive_records(archive).items():
        with atomic_path(folder / FILES[part]) as temporary:
            with lzma.open(temporary, "wt", encoding="utf-8") as out:
                for row in rows:
                    out.write(json.dumps(row) + "\n")
        _read(folder / FILES[part], part)
    archive.unlink()
    return folder


def _read(path: Path, part: str) -> tuple[list[str], list[str]]:
    """The labels and texts of one xz-compressed JSON Lines file (``label``, ``text``),
    checked to be the whole ``part`` of the bydate split (its groups and its count)."""
    labels, texts = [], []
    try:
        with lzma.open(path, "rt", encoding="utf-8") as lines:
            for lineno, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:  # the file's line, not the record's
                    raise ValueError(f"{path}:{lineno}: not a JSON object ({exc.msg}, at "
                                     f"column {exc.colno})") from None
                if not isinstance(record, dict) or not isinstance(record.get("label"), str) \
                        or not isinstance(record.get("text"), str):
                    raise ValueError(f"{path}:{lineno}: expected an object with a 'label' and "
                                     "a 'text' string")
                labels.append(record["label"])
                texts.append(record["text"])
    except (lzma.LZMAError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not an intact xz-compressed JSON Lines file: {exc}") from None
    others = sorted(set(labels) - set(GROUPS))
    if others:
        raise ValueError(f"{path} holds groups the bydate split does not "
                         f"({', '.join(others[:3])}): it is not 20 Newsgroups' {part} file")
    if len(texts) != POSTS[part] or len(set(labels)) != len(GROUPS):
        raise ValueError(
            f"{path} holds {len(texts):,} posts in {len(set(labels))} groups; the bydate "
            f"split's {part} file holds {POSTS[part]:,} in {len(GROUPS)}: it is damaged or "
            "partial. Restore it (scikit-learn's fetch_20newsgroups(subset="
            f"'{part}', remove=()) gives the posts)")
    return labels, texts


def load_20newsgroups(data_home=None, subset="train", *, download_if_missing=False) -> Bunch:
    """Load 20 Newsgroups ("bydate" split: 20 groups, posts as written).

    Reads ``<data_home>/20ng/20news-bydate-train.jsonl.xz`` and ``-test.jsonl.xz``
    (xz-compressed JSON Lines, one post an object: ``label`` the group's name, ``text``
    the post with its mail headers, quoted replies and signature, as scikit-learn's
    ``fetch_20newsgroups(subset=..., remove=())`` gives it). The posts are long: a
    median of about 176 words, some of thousands.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home` (``$ELMOFEAT_DATA`` if unset).
    subset : {"train", "test", "all"}, default="train"
        11,314 training and 7,532 test posts; ``"all"`` is train then test. A file
        with another count of posts or other groups (damaged or partial) is refused.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        ``data`` (list of str), ``target`` (ndarray of int), ``target_names``
        (sorted group names; ``target`` indexes them), ``partition`` and ``DESCR``.

    Examples
    --------
    >>> from elmofeat.datasets import load_20newsgroups
    >>> news = load_20newsgroups(subset="test")
    >>> len(news.data), len(news.target_names), news.target_names[0]
    (7532, 20, 'alt.atheism')
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    home = get_data_home(data_home)
    parts = ("train", "test") if subset == "all" else (subset,)
    paths = {part: home / FOLDER / FILES[part] for part in parts}
    missing = [path for path in paths.values() if not path.is_file()]
    if missing and download_if_missing:
        fetch_20newsgroups_bydate(home)
        missing = []
    if missing:
        raise missing_data_error(
            "20 Newsgroups",
            missing,
            "Put 20news-bydate-train.jsonl.xz and 20news-bydate-test.jsonl.xz in "
            "<data_home>/20ng/: one JSON object a line, {\"label\": group, \"text\": post}, "
            "xz-compressed; `elmofeat download 20ng` (or download_if_missing=True) "
            "fetches and writes them.",
        )
    read = {part: _read(path, part) for part, path in paths.items()}
    return labelled_partitions(
        read, "20 Newsgroups, bydate split: Usenet posts from 20 groups, with headers, quotes "
              f"and signatures. Partitions loaded: {', '.join(parts)} from {home}.")
