"""Corpora larger than memory: text files read lazily, one document a line.

:class:`TextFiles` names plain or gzip text files (paths, folders or glob patterns) and
iterates over their lines again on every pass, like gensim's ``LineSentence``: nothing
is read until iterated, and only one line is held at a time. 
:func:`elmofeat.bilm.training_data.streamed_source` decides how
:meth:`BiLM.fit <elmofeat.BiLM.fit>` reads its ``X``.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import os
from pathlib import Path
from typing import Iterator
import zlib

TEXT_SUFFIXES = (".txt", ".txt.gz", ".gz", ".text")


class TextFiles:
    """Documents from text files, one per line, read lazily on every iteration.

    Parameters
    ----------
    paths : str, path or sequence of them
        Files, folders (every ``.txt``, ``.text`` and ``.gz`` file inside, recursively)
        or glob patterns (``"corpus/*.txt.gz"``). ``.gz`` files are decompressed on the
        fly. Files are read in sorted order of their paths, each line a document
        (without its line break); blank lines are skipped.
    encoding : str, default="utf-8"
        An ASCII-compatible encoding (UTF-8, Latin-1...): lines are split at line feeds
        before they are decoded.
    errors : str, default="strict"
        How undecodable bytes are handled (``open``'s ``errors``): ``"strict"`` raises
        an error naming the file and line; ``"replace"`` substitutes U+FFFD.

    Attributes
    ----------
    files : list of Path
        The files, in reading order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("first document\\n\\nsecond one\\n")
    >>> corpus = TextFiles(folder)
    >>> list(corpus)
    ['first document', 'second one']
    >>> list(corpus) == list(corpus)  # every pass reads the files again
    True
    """

    def __init__(self, paths, *, encoding: str = "utf-8", errors: str = "strict"):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        try:
            paths = list(paths)
        except TypeError:
            raise TypeError(f"paths must be a path, a glob pattern or a sequence of them, got "
                            f"{type(paths).__name__}") from None
        if not paths:
            raise ValueError("TextFiles needs at least one path")
        for path in paths:
            if not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"paths must be str or path-like, got {type(path).__name__}")
        self.paths = paths
        self.encoding = encoding
        self.errors = errors
        self.files = _resolve(paths)

    def __repr__(self) -> str:
        return f"TextFiles({len(self.files)} files: {', '.join(p.name for p in self.files[:3])}" + (
            ", ...)" if len(self.files) > 3 else ")")

    def __iter__(self) -> Iterator[str]:
        for path in self.files:
            yield from self._lines(path)

    def _lines(self, path: Path) -> Iterator[str]:
        # Bytes split at line feeds, then decoded line by line: an error names its line.
        raw = gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")
        number = 0
        with raw:
            try:
                for number, line in enumerate(raw, start=1):
                    text = line.decode(self.encoding, self.errors).rstrip("\r\n")
                    if text.strip():
                        yield text
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}, line {number}: not {self.encoding} text "
                                 f"({exc.reason}); pass errors='replace' to read it "
                                 "anyway") from None
            except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
                raise ValueError(f"{path}: cannot be read past line {number}: {exc}") from None

    def fingerprint(self) -> str:
        """Names, sizes and modification times of the files: what a resumed pretraining
        checks before it reuses its encoded copy of the corpus."""
        digest = hashlib.sha256(f"{self.encoding}/{self.errors}".encode())
        for path in self.files:
            stat = path.stat()
            digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns};".encode())
        return digest.hexdigest()


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _resolve(paths) -> list[Path]:
    files: list[Path] = []
    for item in paths:
        text = os.fspath(item)
        path = Path(text)
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.is_file() and p.name.endswith(TEXT_SUFFIXES)]
            if not found:
                raise ValueError(f"{path} holds no text file (.txt, .text or .gz)")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif glob.has_magic(text):
            found = [Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file()]
            if not found:
                raise FileNotFoundError(f"no file matches {text!r}")
            files.extend(found)
        else:
            raise FileNotFoundError(f"no such file or folder: {text}")
    unique = sorted(set(files), key=lambda p: str(p))
    return unique
