"""Token patterns that files may carry: elmofeat's vetted ones and the user's trusted ones.

A module of its own, importing nothing heavy: ``elmofeat.set_config`` (imported with
``elmofeat``, and so by ``elmofeat --help``) sets the trusted patterns.
"""

from __future__ import annotations

#: scikit-learn's token pattern: runs of 2 or more word characters.
DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"

#: The token patterns elmofeat vets, by name: each repeats one character class (or
#: one word-character run between boundaries) at a single level, so Python's engine
#: matches it in time linear in the text. A pattern a file carries must be one of these
#: (or trusted: :func:`check_token_pattern`).
VETTED_TOKEN_PATTERNS = {
    "words": DEFAULT_TOKEN_PATTERN,  # scikit-learn's: runs of 2 or more word characters
    "words_and_punctuation": r"(?u)\b\w+\b|[^\w\s]",  # the biLM's: words, and each sign
    "all_words": r"(?u)\b\w+\b",  # runs of 1 or more word characters
    "non_space": r"\S+",  # whatever whitespace separates
}

# Patterns the user trusts in files, beside the vetted ones (elmofeat.set_config).
_trusted_token_patterns: frozenset = frozenset()


def set_trusted_token_patterns(patterns) -> None:
    """Replace the token patterns trusted in files (see :func:`check_token_pattern`)."""
    global _trusted_token_patterns
    if isinstance(patterns, str) or not all(isinstance(p, str) for p in patterns):
        raise TypeError("trusted_token_patterns must be a list of str (regular "
                        f"expressions), got {patterns!r}")
    _trusted_token_patterns = frozenset(patterns)


def trusted_token_patterns() -> tuple:
    return tuple(sorted(_trusted_token_patterns))


def check_token_pattern(pattern, source: str, also_trusted=()) -> None:
    r"""Refuse a token pattern read from a file (a model folder, a :meth:`BiLM.save`
    file, a skops file) unless it is one of :data:`VETTED_TOKEN_PATTERNS` or the user
    trusts it (``elmofeat.set_config(trusted_token_patterns=[...])``; ``also_trusted``:
    patterns the caller vouches for).

    Python's regular-expression engine backtracks with no time limit, so a crafted
    pattern such as ``(\w+\s?)+$`` takes hours on a 60-character text. Which patterns
    can do that is not decidable from their text by a short list of forbidden shapes
    (comments, verbose mode and optional bodies got past one), so a file may carry only
    a pattern elmofeat vetted, or one its user named. A pattern given in code
    (``BiLM(token_pattern=...)``) is the user's own and is not checked; pickles (and
    ``copy.deepcopy``, joblib's workers) carry it as it is, because loading a pickle
    runs its code anyway: load pickles you made or trust only."""
    if not isinstance(pattern, str):
        return  # None (a tokenizer is given) or a wrong type: parameter validation says
    if (pattern in VETTED_TOKEN_PATTERNS.values() or pattern in _trusted_token_patterns
            or pattern in also_trusted):
        return
    names = ", ".join(f"{name} {value!r}" for name, value in VETTED_TOKEN_PATTERNS.items())
    raise ValueError(
        f"{source} carries token_pattern {pattern!r}, which is not one of elmofeat's "
        f"vetted patterns ({names}). A regular expression from a file runs in this "
        "process, and Python's engine can take exponential time on a short text with "
        "some patterns. If you trust this file's pattern, allow it first: "
        f"elmofeat.set_config(trusted_token_patterns=[{pattern!r}])")
