"""benchmarks/teacher_texts.py: the distillation teacher's store (issue 69) is nested,
resumable and checked by content before use.

The script imports the benchmarks' process settings before torch, so it runs in a
child process here (pytest has loaded torch already)."""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

CHILD = r"""
import gzip, json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import teacher_texts as tt
import numpy as np

home, store = Path(sys.argv[2]), Path(sys.argv[2]) / "store"
corpus = home / "corpus"
corpus.mkdir(parents=True)
for register, patterns in tt.REGISTERS.items():
    for pattern in patterns:
        with gzip.open(corpus / pattern.replace("*", "x"), "wt") as out:
            for i in range(30):
                out.write(f"The {register} paragraph {i} opens here. It says a second "
                          f"thing about item {i}. A third sentence ends it.\n")
tt.CHUNK = 10
out = {}
out["small"] = [r["text"] for r in tt.select_texts(home, 25)]
out["large"] = [r["text"] for r in tt.select_texts(home, 35)]
tt.encode(store, home, 25, "cpu", 8)
first = {p.name: p.stat().st_mtime_ns for p in store.glob("vectors-*.npy")}
rows25, vectors25 = tt.load_teacher(store, 25)
tt.encode(store, home, 35, "cpu", 8)
after = {p.name: p.stat().st_mtime_ns for p in store.glob("vectors-*.npy")}
rows35, vectors35 = tt.load_teacher(store, 35)
out["kept"] = [n for n in first if after[n] == first[n]]
out["chunks"] = sorted(after)
out["registers"] = [r["register"] for r in rows35]
out["prefix_rows"] = rows35[:25] == rows25
out["prefix_vectors"] = float(np.abs(vectors35[:25] - vectors25).max())
out["norms"] = [float(v) for v in np.linalg.norm(vectors35, axis=1)]
out["dtype"] = str(np.load(store / "vectors-00000.npy").dtype)
path = store / "vectors-00001.npy"
data = bytearray(path.read_bytes()); data[-1] ^= 1; path.write_bytes(bytes(data))
try:
    tt.load_teacher(store, 35)
    out["corrupt"] = "loaded"
except ValueError as exc:
    out["corrupt"] = str(exc)
print(json.dumps(out))
"""


def test_the_store_is_nested_resumable_and_checked(tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, str(BENCHMARKS), str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # the 25-text set is the first 25 of the 35-text set, and each prefix mixes registers
    assert out["large"][:25] == out["small"]
    assert set(out["registers"][:10]) == {"wikipedia", "wikinews", "dialogue", "old"}
    # growing the store encodes only what changed: the two full chunks are kept
    assert out["chunks"] == ["vectors-00000.npy", "vectors-00001.npy",
                             "vectors-00002.npy", "vectors-00003.npy"]
    assert sorted(out["kept"]) == ["vectors-00000.npy", "vectors-00001.npy"]
    assert out["prefix_rows"] and out["prefix_vectors"] == 0.0
    assert out["dtype"] == "float16"
    assert all(abs(n - 1) < 1e-2 for n in out["norms"])  # the teacher's unit vectors
    assert "does not match its manifest checksum" in out["corrupt"]
