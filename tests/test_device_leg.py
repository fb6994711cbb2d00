"""benchmarks/device_leg.py: a leg of a streamed pretraining, packed here, trained
elsewhere and unpacked, resumes to the weights of an uninterrupted run.

The legs run on a lent GPU; here they run on the CPU, where the arithmetic is the same
as the uninterrupted run's, so the round trip must be exact. Each case runs in a fresh
process: the benchmark scripts set their process up before torch loads.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import device_leg  # first: the benchmarks' process settings
    import numpy as np
    import torch
    from elmofeat import BiLM
    from elmofeat.bilm import shards
    from elmofeat.bilm.corpus import TextFiles

    shards.SHARD_TOKENS, shards.BUFFER_SHARDS = 300, 2
    tmp = Path(sys.argv[2])
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    (tmp / "texts").mkdir()
    (tmp / "texts" / "a.txt").write_text("\\n".join(
        " ".join(rng.choice(words, size=rng.integers(4, 30))) for _ in range(400)))
    vectors = tmp / "vectors.txt"  # a GloVe-format file: the frozen word layer
    vectors.write_text("\\n".join(
        w + " " + " ".join(f"{v:.4f}" for v in rng.normal(size=6))
        for w in [f"extra{i}" for i in range(30)] + words[::2]))

    def bilm(folder):
        return BiLM(embedding_dim=8, hidden_dim=16, max_epochs=2, batch_size=8,
                    pretrained_vectors=str(vectors), pretrained_words=20, max_features=25,
                    freeze_embedding=True, patience=None, random_state=3, n_threads=1,
                    checkpoint_dir=str(tmp / folder), checkpoint_every=None)

    corpus = TextFiles(tmp / "texts")
    whole = bilm("whole").fit(corpus)

    returned = []
    for leg in range(int(sys.argv[3])):
        model = bilm("legs")
        grab = device_leg.capture(model, corpus)
        if leg == 0:
            assert grab.state["global_step"] == 0
        blocks = None if sys.argv[4] == "all" else int(sys.argv[4])
        pack = device_leg.pack(grab, model, tmp / f"leg{leg}", max_blocks=blocks,
                               rows_dtype=np.float32)
        out = tmp / f"out{leg}"
        torch.set_num_threads(1)  # as the fits' n_threads: sums in the same order
        result = device_leg.run(tmp / f"leg{leg}", out, "cpu", None)
        state = device_leg.returned_state(out, grab.embedding)[1]
        device_leg.write_checkpoint(state, grab.fingerprint, tmp / "legs")
        returned.append({"pack": {k: pack[k] for k in ("start", "stop_step", "blocks",
                                                        "n_device_words", "n_model_words")},
                         "result": {k: result[k] for k in ("paused", "epoch", "step_in_epoch",
                                                           "finished")}})
    resumed = bilm("legs").fit(corpus)
    a = whole.language_model_.state_dict()
    b = resumed.language_model_.state_dict()
    print(json.dumps({"legs": returned, "same_keys": sorted(a) == sorted(b),
                      "identical": all(torch.equal(a[k], b[k]) for k in a),
                      "history": [h["train_perplexity"] for h in resumed.history_],
                      "whole_history": [h["train_perplexity"] for h in whole.history_]}))
""")


def run_case(tmp_path, legs: int, blocks) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(BENCHMARKS), str(tmp_path),
                           str(legs), str(blocks)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("legs", [1, 3])
def test_legs_resume_to_the_weights_of_an_uninterrupted_run(tmp_path, legs):
    out = run_case(tmp_path, legs, 1)
    first = out["legs"][0]
    # The leg carried fewer rows of the word layer than the model has (the rows its
    # shards read, the softmax's first), and one shuffle block: it paused inside epoch 1.
    assert first["pack"]["n_device_words"] < first["pack"]["n_model_words"]
    assert first["pack"]["blocks"] == [0]
    assert first["result"] == {"paused": "last block", "epoch": 0,
                               "step_in_epoch": first["pack"]["stop_step"], "finished": False}
    for before, after in zip(out["legs"], out["legs"][1:]):  # each leg starts where one ended
        assert after["pack"]["start"] == {"epoch": before["result"]["epoch"],
                                          "step": before["result"]["step_in_epoch"]}
    assert out["same_keys"]
    assert out["identical"], (out["history"], out["whole_history"])
    # (a resumed epoch's training perplexity counts the steps since it resumed)
    assert out["history"][-1] == out["whole_history"][-1]


def test_legs_of_whole_epochs_pause_at_the_epoch_end_and_finish_the_run(tmp_path):
    out = run_case(tmp_path, 2, "all")
    one, two = out["legs"]
    assert one["result"] == {"paused": "epoch end", "epoch": 1, "step_in_epoch": 0,
                             "finished": False}
    assert two["pack"]["start"] == {"epoch": 1, "step": 0}
    assert two["result"]["finished"] and two["result"]["epoch"] == 2
    assert out["identical"], (out["history"], out["whole_history"])
