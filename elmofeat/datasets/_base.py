"""Where datasets live (the data home) and how missing files are fetched safely."""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from .._files import _UMASK, _out_of_space
from ..exceptions import DiskFullError

DATA_HOME_ENV = "ELMOFEAT_DATA"


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The folder that holds elmofeat's datasets.

    In order: the ``data_home`` argument, else the ``ELMOFEAT_DATA`` environment
    variable, else ``~/elmofeat_data``. ``~`` is expanded; the folder is not created.

    Parameters
    ----------
    data_home : str or path-like, default=None

    Returns
    -------
    path : pathlib.Path

    Examples
    --------
    >>> get_data_home("/tmp/somewhere")
    PosixPath('/tmp/somewhere')
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or os.path.join("~", "elmofeat_data")
    return Path(data_home).expanduser()


@dataclass(frozen=True)
class RemoteFile:
    """A file that can be downloaded: its name, address and checksum (``"algo:hex"``).

    Examples
    --------
    >>> RemoteFile("test.csv", "https://example.org/ag_news/test.csv", "md5:0123abcd")
    RemoteFile(filename='test.csv', url='https://example.org/ag_news/test.csv', checksum='md5:0123abcd')
    """

    filename: str
    url: str
    checksum: str


class ChecksumError(OSError):
    """A downloaded file does not have the expected checksum (it is not kept)."""


def _hasher(checksum: str):
    algorithm, _, expected = checksum.partition(":")
    if algorithm not in ("sha256", "md5") or not expected:
        raise ValueError(f"checksum must be 'sha256:<hex>' or 'md5:<hex>', got {checksum!r}")
    return hashlib.new(algorithm), expected.lower()


def _partial_path(target: Path) -> Path:
    """Where the bytes of an unfinished download of ``target`` wait to be resumed."""
    return target.with_name(f".{target.name}.part")


def _file_digest(path: Path, checksum: str) -> tuple[str, str]:
    hasher, expected = _hasher(checksum)
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest(), expected


def _download_into(partial: Path, url: str, timeout: float, progress: bool, name: str) -> None:
    """Append the rest of ``url`` to ``partial`` (an HTTP range request from its size; a
    server that ignores ranges sends the whole file, which replaces the partial bytes)."""
    offset = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url)
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # the partial bytes are not a prefix any more
            partial.unlink()
        raise
    with response:
        resumed = offset and response.status == 206 and response.headers.get(
            "Content-Range", "").startswith(f"bytes {offset}-")
        if not resumed:
            offset = 0
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length is not None else None
        size = offset
        with open(partial, "ab" if resumed else "wb") as out, tqdm(
                total=total, initial=offset, unit="B", unit_scale=True, desc=name,
                disable=not progress, leave=False) as bar:
            while chunk := response.read(1 << 20):
                out.write(chunk)
                size += len(chunk)
                bar.update(len(chunk))
    if total is not None and size != total:
        raise ConnectionError(f"connection closed after {size} of {total} bytes")


def fetch_file(
    remote: RemoteFile,
    folder: str | os.PathLike,
    *,
    n_retries: int = 2,
    delay: float = 1.0,
    timeout: float = 15.0,
    progress: bool = False,
) -> Path:
    """Download ``remote`` into ``folder``, verify its checksum, and move it in place.

    Not scikit-learn's ``sklearn.datasets.fetch_file``, which this follows (checksum,
    retries): it has no timeout, so a connection that never answers would hang the
    caller for ever. Here every wait on the network ends after ``timeout`` seconds, so
    a dead connection fails within about ``(n_retries + 1) * (timeout + delay)``
    seconds, naming the address.

    The bytes go to a hidden partial file beside the target (``.<name>.part``). A
    transfer cut off midway is resumed from where it stopped, by the next attempt or
    by the next call (an HTTP range request; a server without ranges sends the whole
    file again). Only a complete file with the right checksum is renamed to its final
    name (an atomic ``os.replace``), so the final name never holds partial or wrong
    bytes, and an existing good file is never clobbered by a bad one; bytes that fail
    the checksum are deleted. Network errors are retried ``n_retries`` times (a full
    disk is not). ``progress`` says on standard error what is being fetched, from
    where, before connecting, and shows a progress bar in bytes. Checksums are
    ``"sha256:<hex>"``; ``"md5:<hex>"`` is read for files whose publishers give only
    that.

    Returns
    -------
    path : pathlib.Path
        The verified file.

    Raises
    ------
    ChecksumError
        The downloaded bytes do not match ``remote.checksum``.
    OSError
        The download failed ``n_retries + 1`` times (the last error is chained).

    Examples
    --------
    >>> import hashlib, pathlib, tempfile
    >>> source = pathlib.Path(tempfile.mkdtemp()) / "words.txt"
    >>> _ = source.write_bytes(b"hello")
    >>> remote = RemoteFile("words.txt", source.as_uri(),
    ...                     "sha256:" + hashlib.sha256(b"hello").hexdigest())
    >>> fetch_file(remote, tempfile.mkdtemp()).read_bytes()
    b'hello'
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / remote.filename
    partial = _partial_path(target)
    _hasher(remote.checksum)  # a bad checksum spec fails before any connection
    if progress:
        print(f"elmofeat: fetching {remote.filename} from {remote.url} into {folder} "
              f"(gives up after {n_retries + 1} attempts of {timeout:g} s without an answer"
              + (f"; resuming after {partial.stat().st_size:,} bytes" if partial.exists() else "")
              + ")", file=sys.stderr, flush=True)
    for attempt in range(n_retries + 1):
        try:
            try:
                _download_into(partial, remote.url, timeout, progress, remote.filename)
            except OSError as exc:
                if _out_of_space(exc):
                    raise DiskFullError(target, exc) from exc
                raise
            digest, expected = _file_digest(partial, remote.checksum)
            if digest != expected:
                partial.unlink()
                raise ChecksumError(f"{remote.url} downloaded with checksum {digest}, expected "
                                    f"{expected}; the file was discarded")
            os.chmod(partial, 0o666 & ~_UMASK)
            os.replace(partial, target)
            return target
        except (ChecksumError, DiskFullError):
            raise
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, cut-offs
            if attempt == n_retries:
                kept = (f"; {partial.stat().st_size:,} bytes are kept in {partial} and the "
                        "next call resumes from them" if partial.exists() else "")
                raise OSError(
                    f"could not download {remote.filename} from {remote.url} after "
                    f"{n_retries + 1} attempts: {exc or type(exc).__name__}{kept}"
                ) from exc
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def missing_data_error(dataset: str, looked_at: list[Path], how_to_get: str) -> FileNotFoundError:
    """A ``FileNotFoundError`` that lists every path tried and how to get the data."""
    paths = "\n".join(f"  - {p}" for p in looked_at)
    return FileNotFoundError(
        f"{dataset} not found. Looked at:\n{paths}\n{how_to_get}\n"
        f"The data home is the data_home argument, else ${DATA_HOME_ENV}, else ~/elmofeat_data."
    )


def labelled_partitions(read: dict, descr: str):
    """A ``Bunch`` of labelled partitions read in order: ``read`` maps each partition's
    name to ``(labels, texts)``. Label ids come from every partition read (sorted
    names), so that they are the same whatever subset is loaded."""
    import numpy as np
    from sklearn.utils import Bunch

    target_names = sorted({label for labels, _ in read.values() for label in labels})
    code = {name: i for i, name in enumerate(target_names)}
    data, target, partition = [], [], []
    for part, (labels, texts) in read.items():
        data.extend(texts)
        target.extend(code[label] for label in labels)
        partition.extend([part] * len(texts))
    return Bunch(data=data, target=np.asarray(target, dtype=np.int64),
                 target_names=target_names, partition=np.asarray(partition, dtype=object),
                 DESCR=descr)
