"""elmofeat.bilm.distributed: pretraining under torchrun."""

import subprocess
import sys

import pytest

from elmofeat import BiLM


@pytest.mark.parametrize("stream", [False, True])
def test_torchrun_ddp_two_processes_stay_in_sync(corpus, tmp_path, stream):
    texts = tmp_path / "corpus.txt"
    texts.write_text("\n".join(corpus))
    params = '{"embedding_dim": 16, "hidden_dim": 16, "max_epochs": 2, "batch_size": 8, "random_state": 0}'
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "elmofeat.bilm.distributed", "--texts", str(texts), "--output",
         str(tmp_path / "ddp.pt"), "--params", params, "--digest-dir", str(tmp_path / "digests"),
         *(["--stream"] if stream else [])],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "find_unused_parameters" not in result.stderr  # gradients averaged by the engine
    assert f"model saved to {(tmp_path / 'ddp.pt').resolve()}" in result.stdout
    digests = {p.name: p.read_text() for p in (tmp_path / "digests").iterdir()}
    assert set(digests) == {"rank0.txt", "rank1.txt"}
    assert digests["rank0.txt"] == digests["rank1.txt"]
    loaded = BiLM.load(tmp_path / "ddp.pt")
    from elmofeat.bilm.io import weights_digest

    assert weights_digest(loaded) == digests["rank0.txt"]
    assert loaded.n_epochs_ == 2 and loaded.history_[0]["validation_perplexity"] > 1
