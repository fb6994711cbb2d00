"""The biLMs a split provides to its ELMo rows, one spec each: how each is made, what it
costs, and how the report names it.

A method names the biLM it reads (``MethodSpec.bilm``); every split makes each biLM its
methods need once, in registration order, and its rows share it. The suite registers
four: ``"default"`` (pretrained on the split's training texts with the library's
defaults), ``"glove"`` (the same, GloVe-started), ``"general"`` (the shipped general
model, loaded) and ``"adapted"`` (the general model adapted to the split's training
texts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .._registry import Registry

#: The general model of the suite's "general" rows, and its adaptation's epochs.
GENERAL_MODEL = "en-base"
ADAPT_EPOCHS = 1

#: Seconds per training token of one pretraining epoch at the default width (256), on
#: the reference 2-core machine (AMD EPYC, fp32: the run in docs/report,
#: ``benchmarks/suite_costs.py``).
EPOCH_SECONDS_PER_TOKEN = 287e-6
#: The same for one epoch of the general model's adaptation.
ADAPT_SECONDS_PER_TOKEN = 170e-6
#: Seconds per token of computing the general model's layers (128 wide, its features
#: cached between the splits that share a document), same run. The run measures it
#: only together with the first row on that biLM: the split between the two is an
#: estimate, their sum is measured.
GENERAL_REPRESENTATION_SECONDS_PER_TOKEN = 14e-6


@dataclass(frozen=True)
class BiLMSource:
    """How a split gets one biLM.

    Parameters
    ----------
    name : str
        What ``MethodSpec.bilm`` names.
    make : callable
        ``make(settings, glove, seed, documents) -> fitted BiLM``: ``documents`` are the
        split's training texts, ``glove`` the run's GloVe vectors (or None).
    seconds : callable
        ``seconds(settings, n_train_tokens) ->`` the estimated seconds of ``make`` on the
        reference machine (the progress bar's weights).
    time_label : str
        The report's row for the seconds ``make`` took.
    curve_label : str, default=None
        The name of its pretraining curve (report and perplexity figure); None for a
        model loaded as it is, which has no pretraining of its own in the run.
    linestyle : str, default="-"
        Of its curves in the perplexity figure.
    follows_settings : bool, default=True
        Whether its width follows the run's biLM settings (a shipped model's does not):
        the cost of its rows scales with it.
    representation_seconds : float, default=None
        Estimated seconds per token of computing its layers, on the reference machine;
        None: those of a biLM of the settings' width.
    verb : str, default="pretrained"
        What the run's log says ``make`` did.
    """

    name: str
    make: Callable
    seconds: Callable
    time_label: str
    curve_label: str | None = None
    linestyle: str = "-"
    follows_settings: bool = True
    representation_seconds: float | None = None
    verb: str = "pretrained"


BILM_SOURCES: Registry[BiLMSource] = Registry("biLM", BiLMSource)


def _bilm_parameter(settings, name):
    """A parameter of the biLM the settings pretrain: theirs, else the library default."""
    from ..bilm import BiLM

    return settings.bilm_params().get(name, BiLM().get_params()[name])


def width_factor(settings) -> float:
    """How much more a biLM of the settings' width costs than the default (256) one."""
    return (_bilm_parameter(settings, "embedding_dim") / 256) ** 2


def _from_scratch(glove_start: bool):
    def make(settings, glove, seed, documents):
        from ..bilm import BiLM

        params = {**settings.bilm_params(), "random_state": seed}
        if glove_start:
            params["pretrained_vectors"] = glove
        return BiLM(**params).fit(documents)

    return make


def _pretraining_seconds(settings, n_tokens):
    epochs = _bilm_parameter(settings, "max_epochs")
    return EPOCH_SECONDS_PER_TOKEN * width_factor(settings) * n_tokens * epochs + 10


def _general(settings, glove, seed, documents):
    from ..elmo.caches import shared_pretrained

    return shared_pretrained(GENERAL_MODEL)


def _adapted(settings, glove, seed, documents):
    import copy

    from ..elmo.caches import shared_pretrained

    return copy.deepcopy(shared_pretrained(GENERAL_MODEL)).set_params(
        warm_start=True, max_epochs=ADAPT_EPOCHS, random_state=seed).fit(documents)


BILM_SOURCES.register(BiLMSource(
    "default", _from_scratch(False), _pretraining_seconds, "biLM pretraining (defaults)",
    curve_label="defaults"))
BILM_SOURCES.register(BiLMSource(
    "glove", _from_scratch(True), _pretraining_seconds, "biLM pretraining (GloVe start)",
    curve_label="GloVe start", linestyle="--"))
BILM_SOURCES.register(BiLMSource(
    "general", _general, lambda settings, n_tokens: 2, f"{GENERAL_MODEL} loading",
    follows_settings=False, representation_seconds=GENERAL_REPRESENTATION_SECONDS_PER_TOKEN,
    verb="loaded"))
BILM_SOURCES.register(BiLMSource(
    "adapted", _adapted,
    lambda settings, n_tokens: ADAPT_SECONDS_PER_TOKEN * n_tokens * ADAPT_EPOCHS + 10,
    f"{GENERAL_MODEL} adaptation", follows_settings=False,
    representation_seconds=GENERAL_REPRESENTATION_SECONDS_PER_TOKEN, verb="adapted"))
