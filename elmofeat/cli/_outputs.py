"""Where the commands write, checked before any work.

An hour of pretraining must not end in "Permission denied", and an output that is one of
the inputs would replace the texts with the result. Every command checks its output
first: a file where a folder should be (or the reverse), a folder it cannot write in, a
path inside an input or an input inside the output (every input of the command: texts,
word vectors, the model it reads; with or without ``--force``), two outputs in one
place, an existing file (replaced only with ``--force``), and a model folder that holds
files already (written into only with ``--force``: the rule of
``save_pretrained(overwrite=...)``). One rule for every command: none replaces a file it
did not create, nor writes into a folder of files it did not write, unless ``--force``.
"""

from __future__ import annotations

import glob
import tempfile
from pathlib import Path

from .._files import refuse_to_replace_folder


def _existing_ancestor(path: Path) -> Path:
    """``path`` or the nearest of its parents that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _check_writable_folder(folder: Path, output, option: str = "--output") -> None:
    """A file can be created in ``folder`` (tried: permissions, read-only mounts and
    pseudo-filesystems such as /proc all answer only to a real attempt)."""
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".elmofeat-write-check-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"{option} {output}: cannot write in {folder} ({reason}); choose "
                         "another path") from None


def _check_new_parents(path: Path, output, option: str = "--output") -> Path:
    """The folder ``path``'s missing parents would be made in: an existing folder that
    can be written in (not a file where a folder should be)."""
    ancestor = _existing_ancestor(path.parent)
    if not ancestor.is_dir():
        raise ValueError(f"{option} {output}: {ancestor} is a file, not a folder")
    _check_writable_folder(ancestor, output, option)
    return ancestor


def check_output_file(output, inputs=(), what: str = "the output", *,
                      replace: bool = False) -> None:
    """``output`` can be written as a file and is none of ``inputs`` (paths, globs or
    names that are not paths); ``what``: what would be written, for the message.
    ``replace``: whether an existing file may be replaced (``--force``): a command
    replaces no file it did not create without it."""
    refuse_output_among_inputs(output, inputs, what)
    path = Path(output).expanduser()
    if path.is_dir():
        raise ValueError(f"--output {output} is a folder: give a file name")
    if path.exists() and not path.is_file():
        raise ValueError(f"--output {output} exists and is not a regular file")
    if path.exists() and not replace:
        raise FileExistsError(f"--output {output} exists: writing {what} would replace it. "
                              "Choose a new path, or pass --force to replace it")
    _check_new_parents(path, output)


def check_output_folder(output, inputs=(), what: str = "the output", *,
                        replace: bool | None = None, option: str = "--output") -> None:
    """``output`` can be made (or written in) as a folder and holds none of ``inputs``.

    ``replace``: for a model folder, whether an existing folder that holds files may be
    written into (``--force``); None: a folder the command fills with files of its own
    names (checkpoints, a report) and may write in again."""
    refuse_output_among_inputs(output, inputs, what, option)
    path = Path(output).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {output} exists and is not a folder")
    if replace is not None:
        refuse_to_replace_folder(path, replace, what, option="--force")
    if path.is_dir():
        _check_writable_folder(path, output, option)
    else:
        _check_new_parents(path, output, option)


def refuse_nested(first: tuple, second: tuple) -> None:
    """Two output folders of one command, ``(option, path)`` each, that are the same or
    one inside the other would mix their files (a checkpoint folder that is the model
    folder fails only after training)."""
    (first_option, first_path), (second_option, second_path) = first, second
    a, b = Path(first_path).expanduser().resolve(), Path(second_path).expanduser().resolve()
    if a == b or a in b.parents or b in a.parents:
        raise ValueError(f"{first_option} {first_path} and {second_option} {second_path} are "
                         "the same folder, or one is inside the other: give each its own "
                         "place")


def refuse_output_among_inputs(output, inputs, what: str, option: str = "--output") -> None:
    """An output that is one of the inputs (or inside an input folder) would replace the
    texts, or join the corpus of the next run."""
    resolved = Path(output).expanduser().resolve()
    for given in inputs:
        if any(c in given for c in "*?["):
            matches = [Path(m) for m in glob.glob(given)]
        else:
            matches = [Path(given).expanduser()]
        for path in matches:
            if not path.exists():
                continue  # a dataset name, or nothing yet
            path = path.resolve()  # symlinks and relative paths: the real place
            if path == resolved or (path.is_dir() and path in resolved.parents):
                where = "inside " if path != resolved else ""
                raise ValueError(f"{option} {output} is {where}the input {given}: writing "
                                 f"{what} there would replace or join the texts; choose "
                                 "another output path")
            if resolved in path.parents:  # even with --force: its files could be replaced
                raise ValueError(f"the input {given} is inside {option} {output}: writing "
                                 f"{what} there could replace it; choose another output "
                                 "folder")
