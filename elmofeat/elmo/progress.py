"""Progress of the stages of a fit that a user waits for: the layers' spread, the
contextual bag's sample and codebook, cross-fitting. Each is a bar with time left
under ``verbose`` (tqdm's), gone when the stage ends; silent otherwise."""

from __future__ import annotations

from tqdm.auto import tqdm

#: Documents per step of a bar over documents: small enough that a few hundred long
#: posts still move it.
DOCUMENTS_PER_STEP = 32


def stage(verbose, total: int, desc: str, unit: str = "doc"):
    """A bar for one stage of ``total`` steps (``disable``d unless ``verbose``)."""
    return tqdm(total=total, desc=desc, unit=unit, disable=not verbose, leave=False)


def layers_with_progress(layers_of, documents, token_lists, bar):
    """``layers_of(documents, token_lists)`` computed :data:`DOCUMENTS_PER_STEP`
    documents at a time where ``bar`` shows, advancing it by each step's documents: the
    same ``(layers, offsets)`` (a document's layers never depend on the others of its
    batch). A quiet fit makes one call, as before the bars."""
    from .bag import join

    # quiet, or a single step: one call, batched as before (no bar to move)
    if bar.disable or len(documents) <= DOCUMENTS_PER_STEP:
        out = layers_of(documents, token_lists)
        bar.update(len(documents))
        return out
    parts = []
    for start in range(0, len(documents), DOCUMENTS_PER_STEP):
        end = start + DOCUMENTS_PER_STEP
        parts.append(layers_of(documents[start:end],
                               None if token_lists is None else token_lists[start:end]))
        bar.update(len(parts[-1][1]) - 1)
    return join(parts)


def folds(verbose, splits, desc: str):
    """The ``(train, test)`` folds of ``splits`` (a list), with a bar of one step per
    fold."""
    with stage(verbose, len(splits), desc, unit="fold") as bar:
        for fold in splits:
            yield fold
            bar.update()
