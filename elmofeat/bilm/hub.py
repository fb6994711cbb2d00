"""Pretrained biLMs by name: a registry, downloads checked by SHA-256, model folders.

A *pretrained model* is a folder, as with Hugging Face and spaCy models:

* ``bilm.pt``: the weights, vocabulary and configuration (the safe BiLM file format of
  :mod:`elmofeat.bilm.io`: JSON strings and tensors, read with
  ``torch.load(weights_only=True)``), its tensors stored in 16 bits;
* ``config.json``: the same configuration, readable;
* ``README.md``: the model card (corpus, tokens seen, hardware, perplexity, scores,
  licence).

:func:`resolve` turns a name or a path into the weights file: a registered name
(:data:`REGISTRY`, :func:`register`) points at a folder shipped inside the package or
at a URL, downloaded once into the user's cache folder and checked against its pinned
SHA-256 (a mismatch is refused and the file discarded); a path is a model folder or a
``bilm.pt`` file.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from .._paths import PACKAGE_MODELS, refuse_package_models  # noqa: F401  (part of this API)
from ..exceptions import ShadowedModelWarning

WEIGHTS_NAME = "bilm.pt"
CONFIG_NAME = "config.json"
CARD_NAME = "README.md"


@dataclass(frozen=True)
class ModelSource:
    """Where a registered model's weights file is, and its SHA-256.

    Exactly one of ``folder`` (a model folder inside elmofeat's ``models`` folder) and
    ``url`` (downloaded into the cache) is set.
    """

    name: str
    sha256: str
    folder: str | None = None
    url: str | None = None
    description: str = ""
    config_sha256: str | None = None


REGISTRY: dict[str, ModelSource] = {}


def register(name: str, *, sha256: str, folder: str | None = None, url: str | None = None,
             description: str = "", replace: bool = False,
             config_sha256: str | None = None) -> ModelSource:
    """Add a model to the registry, so that ``BiLM.from_pretrained(name)`` finds it.

    Parameters
    ----------
    name : str
    sha256 : str
        Hex SHA-256 of the model's ``bilm.pt``: a file with another one is refused.
    folder : str, default=None
        A model folder inside elmofeat's ``models`` folder (for models shipped in the
        package), or any other folder (a relative path is taken from the working
        directory when registering).
    url : str, default=None
        Where to download ``bilm.pt`` from (http, https or file URL), once, into
        ``$ELMOFEAT_CACHE/models`` (the user's cache folder by default).
    description : str
    replace : bool, default=False
        Allow replacing a registered name.
    config_sha256 : str, default=None
        For a folder model: :func:`config_digest` of its ``config.json``, checked at
        every load where the file holds what defines the features beside the weights
        (the layer scales of weights saved before biLMs measured them).

    Examples
    --------
    >>> from elmofeat.bilm import hub
    >>> source = hub.register("my-model", sha256="0" * 64,
    ...                       url="https://example.org/my-model/bilm.pt")
    >>> "my-model" in hub.REGISTRY
    True
    >>> del hub.REGISTRY["my-model"]
    """
    if (folder is None) == (url is None):
        raise ValueError("register a model with exactly one of folder= and url=")
    for label, digest in (("sha256", sha256), ("config_sha256", config_sha256)):
        if label == "config_sha256" and digest is None:
            continue
        if not isinstance(digest, str) or len(digest) != 64 or any(
                c not in "0123456789abcdef" for c in digest.lower()):
            raise ValueError(f"{label} must be 64 hexadecimal digits, got {digest!r}")
    if config_sha256 is not None and folder is None:
        raise ValueError("config_sha256 applies to a folder model (a download is one file)")
    if name in REGISTRY and not replace:
        raise ValueError(f"a model named {name!r} is already registered (replace=True to "
                         "replace it)")
    if folder is not None:
        expanded = Path(folder).expanduser()
        if expanded.is_absolute():  # "~/models/m" included: stored as the path it names
            folder = str(expanded)
        elif not (PACKAGE_MODELS / folder).is_dir():
            # A relative folder that is not one of elmofeat's own: the user's, from here.
            folder = str(expanded.resolve())
    REGISTRY[name] = ModelSource(name, sha256.lower(), folder, url, description,
                                 None if config_sha256 is None else config_sha256.lower())
    return REGISTRY[name]


def config_digest(path) -> str:
    """SHA-256 of a ``config.json``'s content (its JSON, keys sorted, no whitespace):
    line endings and indentation that a checkout may change do not count, every value
    does. An unreadable file is a ``ValueError``."""
    import json

    try:
        content = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read ({exc}): it describes the model's "
                         "features; restore the model folder") from None
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


_VERIFIED: dict[tuple, str] = {}


def _verified(path: Path, sha256: str, name: str, remedy: str) -> Path:
    """``path`` after checking its SHA-256 (once per process while it is unchanged);
    ``remedy``: what brings the right file back."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if _VERIFIED.get(key) != sha256:
        found = file_sha256(path)
        if found != sha256:
            raise ValueError(
                f"the weights of pretrained model {name!r} at {path} have SHA-256 {found}, "
                f"expected {sha256}: the file is damaged or not the registered model; "
                f"{remedy}")
        _VERIFIED[key] = sha256
    return path


def cache_folder(cache_dir=None) -> Path:
    """Where downloaded models are kept: ``cache_dir``, else ``$ELMOFEAT_CACHE/models``
    (the user's cache folder, ``platformdirs``, by default)."""
    if cache_dir is not None:
        return Path(cache_dir)
    from .._paths import default_cache_dir

    return default_cache_dir() / "models"


_DOWNLOAD_AGAIN = "delete the file to download it again"


def _download(source: ModelSource, cache_dir) -> Path:
    from .._file_lock import shared_lock
    from ..datasets import ChecksumError, RemoteFile, fetch_file

    folder = cache_folder(cache_dir) / f"{source.name}-{source.sha256[:16]}"
    target = folder / WEIGHTS_NAME
    if target.is_file():
        try:
            return _verified(target, source.sha256, source.name, _DOWNLOAD_AGAIN)
        except ValueError:
            target.unlink()  # a damaged copy: fetch it again
    folder.mkdir(parents=True, exist_ok=True)
    # Parallel workers download once; without the lock each downloads (atomically).
    with shared_lock(folder / ".lock", f"the download of {source.name!r}"):
        if not target.is_file():
            try:
                fetch_file(RemoteFile(WEIGHTS_NAME, source.url, f"sha256:{source.sha256}"),
                           folder, n_retries=2, progress=True)
            except ChecksumError as exc:
                raise ValueError(f"pretrained model {source.name!r}: {exc}. The download "
                                 "was refused; the registered file may have changed at its "
                                 "source") from None
    return _verified(target, source.sha256, source.name, _DOWNLOAD_AGAIN)


def registered_name(name_or_path, *, prefer_local: bool = True) -> str | None:
    """The registered model that ``name_or_path`` names, or None for a path.

    A name that is also a file or folder in the working directory names the local
    one (as with Hugging Face's ``from_pretrained``), with a :class:`ShadowedModelWarning`
    that says so; ``prefer_local=False`` (a pickle that names a registered model) takes
    the registered one.
    """
    if not (isinstance(name_or_path, str) and name_or_path in REGISTRY):
        return None
    local = Path(name_or_path).expanduser()
    if prefer_local and (local.exists() or local.is_symlink()):
        kind = "folder" if local.is_dir() else "file" if local.exists() else "broken link"
        if not _is_model(local):
            # Not a model (notes in a folder, a broken link): the user meant the name.
            warnings.warn(
                f"{name_or_path!r} is a registered pretrained model and also a local {kind} "
                f"({local.absolute()}), which is not a model (no {WEIGHTS_NAME}, or not a "
                "BiLM file): loading the registered model", ShadowedModelWarning,
                stacklevel=3)
            return name_or_path
        warnings.warn(
            f"{name_or_path!r} is a registered pretrained model and also a local "
            f"{kind} ({local.absolute()}): loading the local "
            "one. Rename or move it to load the registered model; name the local one as a "
            f"path (Path({name_or_path!r}) or './{name_or_path}') to silence this warning",
            ShadowedModelWarning, stacklevel=3)
        return None
    return name_or_path


def _is_model(path: Path) -> bool:
    """Whether ``path`` can be a model: a folder with a weights file, or a zip file
    (``BiLM.save`` writes torch's zip format)."""
    import zipfile

    if path.is_dir():
        return (path / WEIGHTS_NAME).is_file()
    try:
        return path.is_file() and zipfile.is_zipfile(path)
    except OSError:
        return False


def resolve(name_or_path, cache_dir=None, *, prefer_local: bool = True) -> Path:
    """The weights file of a registered model name, a model folder or a weights file.

    A registered name that is also a local file or folder resolves to the local one
    (see :func:`registered_name`). :func:`resolve_named` also says which it was.

    Raises
    ------
    ValueError
        An unknown name, or a file whose SHA-256 is not the registered one.
    FileNotFoundError
        A folder without ``bilm.pt``.
    OSError
        A download that failed.
    """
    return resolve_named(name_or_path, cache_dir, prefer_local=prefer_local)[0]


def resolve_named(name_or_path, cache_dir=None, *,
                  prefer_local: bool = True) -> tuple[Path, str | None]:
    """:func:`resolve`'s weights file, and the registered model's name it is (None for
    a path)."""
    name = registered_name(name_or_path, prefer_local=prefer_local)
    if name is not None:
        return _registered_weights(REGISTRY[name], cache_dir), name
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"a pretrained model is a registered name or a path, got "
                        f"{type(name_or_path).__name__}")
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not (path / WEIGHTS_NAME).is_file():
            raise FileNotFoundError(f"{path} is not a pretrained biLM folder: it has no "
                                    f"{WEIGHTS_NAME}")
        return path / WEIGHTS_NAME, None
    if path.is_file():
        return path, None
    known = ", ".join(sorted(REGISTRY)) or "none"
    raise ValueError(f"{name_or_path!r} is neither a registered pretrained model "
                     f"(registered: {known}) nor an existing file or folder")


def _registered_weights(source: ModelSource, cache_dir) -> Path:
    """A registered model's weights file, checked (downloaded first for a URL)."""
    if source.url is not None:
        return _download(source, cache_dir)
    folder = Path(source.folder)
    if not folder.is_absolute():
        folder = PACKAGE_MODELS / folder
    # A shipped model comes back with elmofeat; a folder registered by a user, from
    # wherever its owner keeps the model.
    remedy = ("reinstall elmofeat" if PACKAGE_MODELS in folder.parents
              else f"restore the model folder {folder} (register() pins its files)")
    path = folder / WEIGHTS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"pretrained model {source.name!r} should be at {path}, "
                                f"which is missing: {remedy}")
    if source.config_sha256 is not None:
        config = folder / CONFIG_NAME
        found = config_digest(config)
        if found != source.config_sha256:
            raise ValueError(
                f"the configuration of pretrained model {source.name!r} at {config} has "
                f"digest {found}, expected {source.config_sha256}: the file was changed "
                f"or damaged; {remedy}")
    return _verified(path, source.sha256, source.name, remedy)


def registered_copy(weights: Path) -> ModelSource | None:
    """The registered folder model whose weights ``weights`` holds (a copy of a shipped
    model's folder), if any: its ``config.json`` must then be the model's too."""
    pinned = [s for s in REGISTRY.values() if s.config_sha256 is not None]
    if not pinned:
        return None
    found = file_sha256(weights)
    return next((s for s in pinned if s.sha256 == found), None)


# The models shipped with elmofeat; each folder's README.md is its card.
# en-base (the default of ElmoVectorizer): modern English, made by
# `elmofeat pretrain --recipe en-base`.
register("en-base", folder="en-base",
         sha256="995d66b40e079212eb877a39b3d1ee15eaaef2c7a5641772d00100a2d8379c41",
         config_sha256="55b4a600ea27a0eb0de297e9789b93b29b787acde88dd2b4df651ae7ff7616ae",
         description="general English biLM: GloVe-read word layer, 2 x 128-wide LSTM "
                     "layers per direction, pretrained on Wikipedia, Wikinews and "
                     "dialogue (modern English)")
# en-distil: en-base taught by all-MiniLM-L6-v2 (issue 69; its card: teacher, texts, cost,
# scores), made by `python benchmarks/distillation.py train --texts 100000 --epochs 4
# --lm-weight 0.1 --save-pretrained FOLDER` from the stored teacher vectors.
register("en-distil", folder="en-distil",
         sha256="819a59d0168e6cc71ee1af676c7fa8ea8a1df8fdbd119e37483f5c00ffc81757",
         config_sha256="cf02cdf03487641923334b9ad63bc5435ae9f18998a2fa3f2f7219291922a0cc",
         description="en-base trained further to give all-MiniLM-L6-v2's sentence vectors "
                     "from its pooled layers (distillation on 100,000 corpus texts): the "
                     "same architecture and speed, better features of long documents")
# en-small (the default of elmofeat 0.2.0; pickles that name it keep loading it): old English,
# made by `elmofeat pretrain --recipe en-small`.
register("en-small", folder="en-small",
         sha256="7546d7e0b2e151c097d354213211b075648e7997663e9c570e0d6c8fbf2a95e5",
         # its layer scales were measured after the weights were saved: in config.json
         config_sha256="04a12b8415a55906fa8b554cf7cccda52dfde71db2b0d817a86dbf464f335476",
         description="general English biLM: GloVe-read word layer, 2 x 128-wide LSTM "
                     "layers per direction, pretrained on public-domain books, the "
                     "Brown corpus and speeches")
