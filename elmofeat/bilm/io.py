"""Safe persistence of a fitted BiLM: one file of JSON strings and tensors.

The file is written with ``torch.save`` and read with ``torch.load(weights_only=True)``:
it holds only strings, numbers and tensors, so loading never runs pickled code, and
tensors are mapped to the CPU whatever device trained the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted

from ..text import check_token_pattern
from .._files import atomic_path, refuse_to_replace_folder, save_torch_atomically
from .._param_validation import validate_params
from ..text import Vocabulary
from .._stamps import version_stamps
from ..exceptions import ElmofeatVersionWarning

FORMAT = "elmofeat-bilm"
# 3: JSON configuration, vocabulary and tensors with a SHA-256 checksum of everything
# else in the file, checked when it is read (1 and 2, before the checksum and the char
# CNN's feature norm, never left development).
FORMAT_VERSION = 3
READABLE_VERSIONS = (3,)


_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _stored(tensor: torch.Tensor, dtype: str | None, name: str) -> torch.Tensor:
    """``tensor`` on the CPU, its floating values in ``dtype`` (None: as they are)."""
    tensor = tensor.detach().cpu()
    if dtype is None or not tensor.is_floating_point():
        return tensor
    target = _DTYPES[dtype]
    if target == torch.float16 and tensor.numel() and tensor.abs().max() > 65504:
        raise ValueError(f"{name} has values beyond float16's range; save it with "
                         "dtype='bfloat16' or 'float32'")
    return tensor.to(target)


def save_bilm(bilm, path, dtype: str | None = None) -> None:
    """Write ``bilm`` to ``path`` atomically (a failed save keeps the old file).

    ``dtype``: store the weights as ``"float16"``, ``"bfloat16"`` or ``"float32"``
    (None: as the model holds them). Loading always gives float32 weights.
    """
    from . import hub

    if dtype is not None and dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)} or None, got {dtype!r}")
    hub.refuse_package_models(path)
    if bilm.tokenizer is not None:
        raise ValueError(
            "a BiLM with a custom tokenizer callable cannot be saved as data; pickle it "
            "with joblib instead (and keep the tokenizer importable)"
        )
    params = {k: v for k, v in bilm.get_params().items() if k not in bilm._unsaved_params}
    params["char_filters"] = [list(f) for f in params["char_filters"]]
    fitted = {
        "history": bilm.history_,
        "n_epochs": bilm.n_epochs_,
        "pretrained_coverage": bilm.pretrained_coverage_,
        "token_input_dim": bilm.token_input_dim_,
        "n_output_words": bilm.n_output_words_,
        "trained_with_pretrained_vectors": bilm.pretrained_vectors is not None,
        "layer_scales": (None if getattr(bilm, "layer_scales_", None) is None
                         else [float(v) for v in bilm.layer_scales_]),
    }
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": json.dumps(version_stamps(bilm._stamped_packages)),
        "params": json.dumps(params),
        "fitted": json.dumps(fitted),
        "vocabulary": list(bilm.vocabulary_.tokens),
        "counts": torch.from_numpy(bilm.vocabulary_.counts.copy()),
        "state_dict": {k: _stored(v, dtype, k)
                       for k, v in bilm.language_model_.state_dict().items()},
    }
    payload["checksum"] = payload_checksum(payload)
    save_torch_atomically(payload, Path(path))


def save_pretrained_folder(bilm, folder, card: str | None = None, dtype: str = "float16",
                           overwrite: bool = False) -> Path:
    """Save a fitted biLM as a pretrained-model folder; return the weights file.

    A model folder is made for others to load: how and where this process ran the biLM
    (its run settings ``verbose``, ``n_threads``, ``checkpoint_every``, and ``device``)
    is saved at the defaults, so a user's GPU is used and no progress bar appears unasked.
    """
    import copy

    from . import hub

    bilm = copy.copy(bilm)  # the caller's biLM keeps its settings
    defaults = type(bilm)().get_params()
    resettable = (*bilm._run_settings, *bilm._placement_params)
    bilm.set_params(**{k: defaults[k] for k in resettable if k in defaults})
    # Every argument is checked before the folder is made or a file written.
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    if card is not None and not isinstance(card, str):
        raise TypeError(f"card is the model card's Markdown text (a str), got "
                        f"{type(card).__name__}")
    folder = Path(folder)
    hub.refuse_package_models(folder)
    refuse_to_replace_folder(folder, overwrite, "a pretrained model")
    folder.mkdir(parents=True, exist_ok=True)
    weights = folder / hub.WEIGHTS_NAME
    save_bilm(bilm, weights, dtype=dtype)
    params = {k: v for k, v in bilm.get_params().items() if k not in bilm._unsaved_params}
    params["char_filters"] = [list(f) for f in params["char_filters"]]
    config = {
        "format": "elmofeat-pretrained-1",
        "weights": hub.WEIGHTS_NAME,
        "weights_sha256": hub.file_sha256(weights),
        "weights_dtype": dtype,
        "params": params,
        "vocabulary_size": len(bilm.vocabulary_),
        "n_output_words": bilm.n_output_words_,
        "output_dim": bilm.output_dim_,
        "n_representations": bilm.n_representations_,
        "history": bilm.history_,
    }
    with atomic_path(folder / hub.CONFIG_NAME) as path:
        path.write_text(json.dumps(config, indent=2) + "\n")
    if card is not None:
        with atomic_path(folder / hub.CARD_NAME) as path:
            path.write_text(card)
    return weights


def payload_checksum(payload: dict) -> str:
    """SHA-256 of a saved biLM's configuration, vocabulary, counts and tensors.

    A flipped bit anywhere in them changes it, so a corrupted file is refused instead
    of loading with silently changed weights.
    """
    digest = hashlib.sha256()
    for key in ("format", "format_version", "versions", "params", "fitted"):
        digest.update(f"{key}={payload[key]!r};".encode())
    digest.update(json.dumps(payload["vocabulary"]).encode())
    digest.update(payload["counts"].numpy().tobytes())
    for name, tensor in sorted(payload["state_dict"].items()):
        digest.update(name.encode())
        digest.update(str(tuple(tensor.shape)).encode() + str(tensor.dtype).encode())
        digest.update(tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


@dataclass
class SavedBiLM:
    """The validated contents of a BiLM file, from which :meth:`BiLM.load` builds itself.

    Attributes
    ----------
    params : dict
        Constructor parameters (without ``BiLM._unsaved_params``).
    fitted : dict
        ``history``, ``n_epochs``, ``pretrained_coverage``, ``token_input_dim``.
    vocabulary : Vocabulary
    state_dict : dict of str to Tensor
        The language model's weights, on the CPU.
    """

    params: dict
    fitted: dict
    vocabulary: Vocabulary
    state_dict: dict


def read_bilm_file(path, known_params, stamped) -> SavedBiLM:
    """Read a file written by :func:`save_bilm`, checking format, checksum and versions.

    Parameters
    ----------
    path : str or path
    known_params : collection of str
        The parameters this elmofeat's ``BiLM`` has; a file with others is refused.
    stamped : collection of str
        Packages whose versions are compared with the file's (a warning names those
        that differ).

    Raises
    ------
    FileNotFoundError, ValueError
        No file, or one that is not a complete, intact BiLM file of a readable format.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no BiLM file at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(
            f"{path} is not a readable elmofeat BiLM file (truncated, corrupted or another "
            f"format): {exc}"
        ) from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not an elmofeat BiLM file")
    version = payload.get("format_version")
    if version not in READABLE_VERSIONS:
        newer = isinstance(version, int) and version > max(READABLE_VERSIONS)
        raise ValueError(
            f"{path} has BiLM file format {version}; this elmofeat reads format "
            f"{', '.join(map(str, READABLE_VERSIONS))}: "
            + ("upgrade elmofeat" if newer else "a development version before 0.1.0 wrote "
               "it; fit the model again"))
    try:
        saved = json.loads(payload["versions"])
        params = json.loads(payload["params"])
        fitted = json.loads(payload["fitted"])
        # Files written before biLMs measured their layers' spread (0.1.0's, en-small's
        # weights) have none.
        fitted = {**{key: fitted[key] for key in ("history", "n_epochs", "pretrained_coverage",
                                                  "token_input_dim", "n_output_words")},
                  "layer_scales": _layer_scales(fitted.get("layer_scales"),
                                                params.get("n_layers", 2) + 1, path)}
        vocabulary, counts, state = payload["vocabulary"], payload["counts"], payload["state_dict"]
        params["char_filters"] = tuple(tuple(f) for f in params["char_filters"])
    except KeyError as exc:
        raise ValueError(f"{path} is an incomplete elmofeat BiLM file: {exc.args[0]!r} is "
                         "missing") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path} is a damaged elmofeat BiLM file: {exc}") from None
    try:
        intact = payload.get("checksum") == payload_checksum(payload)
    except (AttributeError, TypeError, RuntimeError) as exc:
        raise ValueError(f"{path} is a damaged elmofeat BiLM file: {exc}") from None
    if not intact:
        raise ValueError(f"{path} is corrupted: its checksum does not match its contents "
                         "(a changed byte in the weights, vocabulary or configuration)")
    if not all(isinstance(w, str) for w in vocabulary):
        raise ValueError(f"{path} is a damaged elmofeat BiLM file: its vocabulary holds "
                         "something other than words")
    if len(set(vocabulary)) != len(vocabulary):
        seen = set()
        repeated = next(w for w in vocabulary if w in seen or seen.add(w))
        raise ValueError(f"{path} is a damaged elmofeat BiLM file: its vocabulary holds "
                         f"{repeated!r} twice")
    unknown = sorted(set(params) - set(known_params))
    if unknown:
        raise ValueError(f"{path} has parameters this elmofeat does not know: "
                         f"{', '.join(unknown)}; upgrade elmofeat or fit the model again")
    current = version_stamps(stamped)
    changed = [f"{p} {v} -> {current[p]}" for p, v in saved.items()
               if p in current and current[p] != v]
    if changed:
        warnings.warn(f"{path} was saved with other versions ({', '.join(changed)})",
                      ElmofeatVersionWarning, stacklevel=3)
    return SavedBiLM(params, fitted, Vocabulary(vocabulary, counts.numpy(), unknown="<unk>"), state)


class PersistenceMixin:
    """``save``, ``load`` and the pickling policy of :class:`~elmofeat.BiLM`.

    Pickles hold the weights as NumPy arrays (not tensors, not modules); files hold
    JSON and tensors (:func:`save_bilm`). Both rebuild the modules from the parameters.
    """

    def save(self, path) -> None:
        """Save to one file: JSON configuration, vocabulary and tensors (no pickled code).

        The file is written next to ``path`` and renamed into place, so a failed save
        leaves an existing file untouched. Load it with :meth:`BiLM.load`.
        """
        check_is_fitted(self, "language_model_")
        save_bilm(self, path)

    @classmethod
    def load(cls, path, device: str = "cpu", *, check_versions: bool = True,
             trusted_token_patterns=()):
        """Load a file written by :meth:`save` (with ``torch.load(weights_only=True)``).

        ``check_versions``: warn (``ElmofeatVersionWarning``) when the file was saved
        with other versions of elmofeat, torch, scikit-learn, NumPy or SciPy.
        ``trusted_token_patterns``: token patterns accepted from this file beside the
        vetted ones and those of ``elmofeat.set_config(trusted_token_patterns=...)``
        (see :func:`elmofeat.text.check_token_pattern`); any other is refused.
        """
        saved = read_bilm_file(path, known_params=cls._get_param_names(),
                               stamped=cls._stamped_packages if check_versions else ())
        bilm = cls(**{**saved.params, "device": device})
        try:
            validate_params(bilm)
            bilm._check_params_together()
            # a file from someone else: only a pattern vetted or trusted runs here
            check_token_pattern(bilm.token_pattern, "the file", trusted_token_patterns)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path} has an invalid parameter: {exc}") from None
        bilm.vocabulary_ = saved.vocabulary
        bilm.history_ = saved.fitted["history"]
        bilm.n_epochs_ = saved.fitted["n_epochs"]
        bilm.pretrained_coverage_ = saved.fitted["pretrained_coverage"]
        bilm.token_input_dim_ = saved.fitted["token_input_dim"]
        bilm.n_output_words_ = saved.fitted["n_output_words"]
        bilm.layer_scales_ = saved.fitted["layer_scales"]
        bilm.output_dim_ = 2 * bilm.embedding_dim
        bilm.n_representations_ = bilm.n_layers + 1
        try:
            bilm.language_model_ = bilm._restore_language_model(saved.state_dict)
        except (RuntimeError, TypeError, ValueError, KeyError) as exc:  # from load_state_dict
            raise ValueError(
                f"{path}: the weights do not match the saved configuration: {exc}") from exc
        return bilm

    @classmethod
    def from_pretrained(cls, name_or_path, *, device: str = "cpu", cache_dir=None):
        """A pretrained biLM by name (``"en-base"``), or from a model folder or file.

        Parameters
        ----------
        name_or_path : str or path
            A name of :data:`elmofeat.bilm.hub.REGISTRY` (``"en-base"``, the general
            English biLM shipped with elmofeat), a folder written by
            :meth:`save_pretrained`, or a file written by :meth:`save`.
        device : str, default="cpu"
        cache_dir : path, default=None
            Where a model registered by URL is downloaded (default:
            ``$ELMOFEAT_CACHE/models``, in the user's cache folder).

        Returns
        -------
        bilm : BiLM
            Fitted. For a registered model, its weights file's SHA-256 (and, for a
            shipped folder whose ``config.json`` holds its layer scales, that file's
            digest) was checked against the registry.

        Examples
        --------
        >>> from elmofeat import BiLM
        >>> bilm = BiLM.from_pretrained("en-base")
        >>> bilm.embed(["A general English model."])[0].shape
        (5, 3, 256)
        """
        from . import hub

        return load_pretrained(cls, *hub.resolve_named(name_or_path, cache_dir), device=device)

    def save_pretrained(self, folder, *, card: str | None = None, dtype: str = "float16",
                        overwrite: bool = False):
        """Save as a pretrained-model folder: ``bilm.pt`` (weights stored in ``dtype``),
        ``config.json`` and, given ``card`` (Markdown), ``README.md``. Run settings
        (``verbose``, ``n_threads``, ``checkpoint_every``) are saved at their defaults.

        A folder that exists and holds files (a model saved before, or a project's own
        ``config.json``) is refused (``FileExistsError``, nothing written) unless
        ``overwrite=True``; each file is then replaced atomically.

        :meth:`from_pretrained` loads the folder. Returns the weights file's path.
        """
        check_is_fitted(self, "language_model_")
        return save_pretrained_folder(self, folder, card=card, dtype=dtype, overwrite=overwrite)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_weights_key_", None)  # names tensors of this process only
        lm = state.pop("language_model_", None)
        if lm is not None:
            # NumPy arrays (float32), not tensors: the state also serialises with skops
            # (elmofeat.dump), which knows NumPy but not torch.
            state["_language_model_state"] = {
                k: v.detach().cpu().float().numpy() for k, v in lm.state_dict().items()}
        return state

    def __setstate__(self, state):
        state = dict(state)
        if "vocabulary_" in state:  # 0.1.0's pickles: before biLMs measured their spread
            state.setdefault("layer_scales_", None)
        weights = state.pop("_language_model_state", None)
        super().__setstate__(state)
        if weights is not None:
            self.language_model_ = self._restore_language_model(weights)

    def _restore_language_model(self, weights: dict):
        # The modules' initial values are overwritten at once; drawing them must not move
        # the user's global random state (a forked generator, put back afterwards).
        with torch.random.fork_rng(devices=[]):
            lm = self._build_language_model(len(self.vocabulary_),
                                            input_dim=self.token_input_dim_)
        # NumPy arrays (the state pickles and skops files hold).
        lm.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
        device = torch.device("cpu")
        with contextlib.suppress(ValueError):
            device = self._device  # a model trained on CUDA loads on a CPU-only machine
        return lm.to(device).eval()


def load_pretrained(cls, weights: Path, registered: str | None, device="cpu"):
    """The fitted ``cls`` of a resolved pretrained model: ``weights`` and the registered
    name it is (None for a path), as :func:`elmofeat.bilm.hub.resolve_named` gives them."""
    # A registered model's bytes are checked against its SHA-256: the versions it
    # was saved with say nothing more, and would warn every user of another NumPy.
    bilm = cls.load(weights, device=device, check_versions=registered is None)
    if bilm.layer_scales_ is None:  # a folder may hold them beside older weights
        bilm.layer_scales_ = folder_layer_scales(Path(weights), bilm.n_representations_)
        if registered is None and bilm.layer_scales_ is not None:
            _check_copy_of_registered(Path(weights))
    # A model made elsewhere runs here as this user's defaults say (no progress bars
    # or thread count of its author's), whatever the file holds.
    defaults = cls().get_params()
    return bilm.set_params(**{k: defaults[k] for k in cls._run_settings if k in defaults})


def _check_copy_of_registered(weights: Path) -> None:
    """A folder that holds a registered model's weights (a copy of en-small's folder)
    gives that model's features only with its ``config.json``, which holds its layer
    scales: the pin that guards the shipped folder guards the copy too."""
    from . import hub

    source = hub.registered_copy(weights)
    if source is None:
        return
    config = weights.parent / hub.CONFIG_NAME
    if hub.config_digest(config) != source.config_sha256:
        raise ValueError(
            f"{weights.parent} holds the weights of the pretrained model {source.name!r} "
            f"but not its config.json ({config} was changed: it holds the layer scales "
            "that define the model's features). Restore it from the model's folder, or load "
            f"the model by its name, {source.name!r}")


def weights_digest(bilm) -> str:
    """SHA-256 of a fitted BiLM's weights: equal digests, equal models.

    Used to check that torchrun processes stay in sync and to key cached representations.
    """
    digest = hashlib.sha256()
    for name, tensor in sorted(bilm.language_model_.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _layer_scales(values, n_representations: int, path) -> np.ndarray | None:
    """A saved ``layer_scales_`` (positive, finite, one per representation) or None."""
    if values is None:
        return None
    # By type first: NumPy would read "0.3" and True as numbers.
    is_number = (lambda v: isinstance(v, (int, float, np.floating, np.integer))
                 and not isinstance(v, (bool, np.bool_)))
    if (isinstance(values, (str, bytes)) or not hasattr(values, "__len__")
            or not all(is_number(v) for v in np.asarray(values, dtype=object).ravel())):
        raise ValueError(f"{path} has invalid layer scales {values!r}: expected "
                         f"{n_representations} numbers")
    scales = np.asarray(values, dtype=np.float64)
    # Within float32's normal range: below it a scale becomes 0 or a denormal, and the
    # features it divides become infinite.
    f32 = np.finfo(np.float32)
    if (scales.shape != (n_representations,) or not np.isfinite(scales).all()
            or (scales < f32.tiny).any() or (scales > f32.max).any()):
        raise ValueError(f"{path} has invalid layer scales {values!r}: expected "
                         f"{n_representations} finite numbers between {f32.tiny:.3g} and "
                         f"{f32.max:.3g} (float32's normal range)")
    return scales.astype(np.float32)


def folder_layer_scales(weights: Path, n_representations: int) -> np.ndarray | None:
    """``layer_scales`` of the ``config.json`` beside a model folder's weights, if any:
    measured after the weights were saved (``benchmarks/general_model.py scales``), so
    that shipped weights keep their pinned SHA-256."""
    config = weights.with_name("config.json")
    if not config.is_file():
        return None
    try:
        values = json.loads(config.read_text(encoding="utf-8")).get("layer_scales")
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{config} cannot be read ({exc}); it holds the layer scales of "
                         f"the weights beside it, which define their features: restore it, "
                         "or load the weights file alone") from None
    return _layer_scales(values, n_representations, config)
