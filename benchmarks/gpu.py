"""biLM pretraining and inference on a GPU, against the 2-core CPU; checks on the GPU path.

Run where torch sees a CUDA device (the CPU figures it compares with are read from
``results/bilm_pretrain_speed.json`` and ``results/bilm_inference_speed.json``, measured
on the 2-core CPU machine):

* the device's bf16 matmul peak (8192 x 8192, best of several);
* whole fits, timed as a user waits for them: ``BiLM(embedding_dim=256, hidden_dim=256,
  max_epochs=E, random_state=0, device="cuda").fit`` on the 7,220 training texts of
  AG News (the split of ``bilm_pretrain_speed.py``), held-out perplexity on the other 380,
  with the default batch of 64 and with 512 (a GPU wants wide batches);
* inference: batched ``BiLM.embed_flat`` tokens/s and ``ElmoVectorizer.transform``
  documents/s over all 7,600 texts;
* checks: a document's features do not depend on the batch it is in; a model trained on
  the GPU saves, loads on the CPU and gives the same features there (within bf16's
  precision); a trainable mix fits from labels on the GPU; two fits with one seed;
* the shipped default model (``ElmoVectorizer()``'s en-base) on the GPU: its features
  against the CPU's for the same texts; the CPU-fitted vectorizer transforming on the GPU
  (its pooled features, and how many documents keep the CPU's contextual bag: codes are
  assigned on the CPU to the device's token vectors); ``transform`` documents/s with
  and without the bag, and an adaptation
  (``adapt_epochs=1``) to the 7,600 texts: seconds, and whether two with one seed agree;
* torchrun: the same fit under ``torchrun --nproc-per-node 1 -m
  elmofeat.bilm.distributed`` (nccl), its weights compared with the in-process fit's.

Writes benchmarks/results/gpu.{json,md}.
Run: python benchmarks/gpu.py [--data-home DIR] [--epochs 1 5] [--device cuda]
     [--docs N] [--dim 256]  (--docs/--dim/--device cpu for a quick check without a GPU)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, markdown_table, write_results

import numpy as np
import torch

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.bilm.io import weights_digest
from elmofeat.datasets import load_ag_news


def synchronize(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def matmul_peak(device, size=8192, repeats=10) -> float | None:
    """bf16 FLOP/s of the best of ``repeats`` square matmuls (None on a CPU: see the
    CPU benchmarks for its peak)."""
    if not str(device).startswith("cuda"):
        return None
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        a @ b
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def whole_fit(train, valid, *, device, epochs, dim, batch_size=64, seed=0):
    start = time.perf_counter()
    bilm = BiLM(embedding_dim=dim, hidden_dim=dim, max_epochs=epochs, batch_size=batch_size,
                random_state=seed, device=device).fit(train)
    synchronize(device)
    seconds = time.perf_counter() - start
    targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
    return bilm, {"epochs": len(bilm.history_), "batch_size": batch_size,
                  "seconds": seconds, "targets_per_second": targets / seconds,
                  "perplexity": bilm.perplexity(valid)}


def inference(bilm, texts, device):
    bilm.embed_flat(texts[:200])  # warm-up: kernels, autotuning
    synchronize(device)
    start = time.perf_counter()
    layers, _ = bilm.embed_flat(texts)
    synchronize(device)
    embed_seconds = time.perf_counter() - start
    # no contextual bag: as the CPU's figure (elmo_speed.py) was measured
    vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", bag_size=None, cache_dir=None,
                                device=device).fit(texts[:50])
    start = time.perf_counter()
    vectorizer.transform(texts)
    transform_seconds = time.perf_counter() - start
    return {"tokens": int(layers.shape[0]),
            "embed_tokens_per_second": layers.shape[0] / embed_seconds,
            "transform_documents_per_second": len(texts) / transform_seconds}


def checks(bilm, texts, labels, device, dim) -> dict:
    out = {}
    vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None, device=device)
    vectorizer.fit(texts[:50])
    together = vectorizer.transform(texts[:64])
    alone = np.vstack([vectorizer.transform([t]) for t in texts[:8]])
    out["batch_independence_max_abs_diff"] = float(np.abs(together[:8] - alone).max())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bilm.pt"
        bilm.save(path)
        on_cpu = BiLM.load(path, device="cpu")
        here, there = bilm.embed_flat(texts[:32])[0], on_cpu.embed_flat(texts[:32])[0]
        out["gpu_vs_cpu_max_abs_diff"] = float(np.abs(here - there).max())
        out["gpu_vs_cpu_relative_diff"] = float(np.abs(here - there).max() / np.abs(there).max())
    trainable = ElmoVectorizer(bilm, layer_mix="trainable", cache_dir=None, device=device)
    features = trainable.fit_transform(texts[:2000], labels[:2000])
    out["trainable_features_finite"] = bool(np.isfinite(features).all())
    out["trainable_layer_weights"] = [float(w) for w in trainable.layer_weights_]
    out["trainable_gamma"] = float(trainable.gamma_)
    first = BiLM(embedding_dim=dim, hidden_dim=dim, max_epochs=1, random_state=1,
                 device=device).fit(texts[:1000])
    second = BiLM(embedding_dim=dim, hidden_dim=dim, max_epochs=1, random_state=1,
                  device=device).fit(texts[:1000])
    out["same_seed_same_weights"] = weights_digest(first) == weights_digest(second)
    return out


def shipped_model(texts, device, name="en-base") -> dict:
    """The shipped default model, read on the GPU and on the CPU, and adapted on the GPU."""
    out = {"model": name}
    sample = texts[:500]
    # one seed: the contextual bag's codebook is drawn from it
    on_cpu = ElmoVectorizer(name, cache_dir=None, device="cpu", random_state=0).fit(sample)
    on_gpu = ElmoVectorizer(name, cache_dir=None, device=device, random_state=0).fit(sample)
    here, there = on_gpu.transform(sample), on_cpu.transform(sample)
    out["gpu_vs_cpu_max_abs_diff"] = float(np.abs(here - there).max())
    out["gpu_vs_cpu_relative_diff"] = float(np.abs(here - there).max() / np.abs(there).max())
    out.update(bag_agreement(on_cpu, sample, there, device))
    start = time.perf_counter()
    on_gpu.transform(texts)
    synchronize(device)
    out["transform_documents_per_second"] = len(texts) / (time.perf_counter() - start)
    # the contextual bag's codes are assigned on the CPU, whatever the device
    pooled_only = ElmoVectorizer(name, bag_size=None, cache_dir=None, device=device).fit(sample)
    start = time.perf_counter()
    pooled_only.transform(texts)
    synchronize(device)
    out["transform_no_bag_documents_per_second"] = len(texts) / (time.perf_counter() - start)
    adapted = []
    for _ in range(2):
        start = time.perf_counter()
        vectorizer = ElmoVectorizer(name, adapt_epochs=1, cache_dir=None, device=device,
                                    random_state=0).fit(texts)
        synchronize(device)
        adapted.append((time.perf_counter() - start, vectorizer.transform(sample)))
    out["adapt_seconds"] = adapted[0][0]
    out["adapted_features_finite"] = bool(np.isfinite(adapted[0][1]).all())
    out["adapt_same_seed_same_features"] = bool(np.array_equal(adapted[0][1], adapted[1][1]))
    out["adapted_vs_shipped_max_abs_diff"] = float(np.abs(adapted[0][1] - here).max())
    return out


def bag_agreement(on_cpu, sample, there, device) -> dict:
    """The CPU-fitted default vectorizer transforming ``sample`` with its biLM on
    ``device``: the pooled block's largest difference from the CPU's features ``there``
    (relative to its largest value), and the share of documents whose bag block (codes
    assigned on the CPU to token vectors computed on the device) equals the CPU's: a
    token near the boundary of two codes may take the other one."""
    names = on_cpu.get_feature_names_out().astype(str)
    bag = np.char.startswith(names, "elmo_bag")
    moved = on_cpu.set_params(device=device).transform(sample)
    on_cpu.set_params(device="cpu")
    pooled = np.abs(moved[:, ~bag] - there[:, ~bag]).max() / np.abs(there[:, ~bag]).max()
    same = (np.abs(moved[:, bag] - there[:, bag]) <= 1e-5 * np.abs(there[:, bag]).max())
    changed = (~same).sum(axis=1)
    return {"bag_size": int(bag.sum()), "moved_pooled_relative_diff": float(pooled),
            "moved_bag_documents_identical": float(np.mean(changed == 0)),
            "moved_bag_entries_changed_per_document": float(changed.mean())}


def torchrun_fit(train, *, device, dim, reference_digest) -> dict:
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(t.replace("\n", " ") for t in train), encoding="utf-8")
        params = {"embedding_dim": dim, "hidden_dim": dim, "max_epochs": 1, "random_state": 0,
                  "device": device}
        start = time.perf_counter()
        run = subprocess.run(
            [torchrun, "--nproc-per-node", "1", "-m", "elmofeat.bilm.distributed",
             "--texts", str(corpus), "--output", str(Path(tmp) / "bilm.pt"),
             "--params", json.dumps(params), "--digest-dir", tmp],
            capture_output=True, text=True)
        seconds = time.perf_counter() - start
        digest_file = Path(tmp) / "rank0.txt"
        return {"returncode": run.returncode, "seconds": seconds,
                "output": (run.stdout + run.stderr)[-1500:],
                "same_weights_as_in_process_fit": (digest_file.exists() and
                                                   digest_file.read_text() == reference_digest)}


def cpu_figures() -> dict:
    """The 2-core CPU's figures from the CPU benchmarks' result files."""
    out = {}
    try:
        whole = json.loads((RESULTS / "bilm_pretrain_speed.json").read_text())["whole"]
        out["fits"] = {fit["epochs"]: fit["elmofeat"] for fit in whole["whole_fits"]
                       if fit.get("precision", "auto") == "auto"}  # the default's fits
    except (OSError, KeyError):
        pass
    try:
        speed = json.loads((RESULTS / "bilm_inference_speed.json").read_text())["results"]
        out["embed_tokens_per_second"] = speed["bf16"]["batched_tokens_per_second"]
    except (OSError, KeyError):
        pass
    try:
        speed = json.loads((RESULTS / "elmo_speed.json").read_text())
        out["transform_documents_per_second"] = speed["transform_documents_per_second"]
    except (OSError, KeyError):
        pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--docs", type=int, default=None, help="first N texts only")
    parser.add_argument("--dim", type=int, default=256)
    args = parser.parse_args()
    device = args.device

    data = load_ag_news(args.data_home, subset="test")
    texts, labels = list(data.data[:args.docs]), np.asarray(data.target[:args.docs])
    rng = np.random.default_rng(0)
    held_out = set(rng.choice(len(texts), size=len(texts) // 20, replace=False).tolist())
    train = [t for i, t in enumerate(texts) if i not in held_out]
    valid = [t for i, t in enumerate(texts) if i in held_out]

    facts = {"device": device, "torch": torch.__version__,
             "name": torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU",
             "bf16_peak_flops": matmul_peak(device)}
    # The first fit of a process pays for CUDA's start (context, cuDNN, kernels): timed
    # here on a tiny model, so that the fits below measure the work itself.
    start = time.perf_counter()
    BiLM(embedding_dim=16, hidden_dim=16, max_epochs=1, random_state=0,
         device=device).fit(train[:200])
    synchronize(device)
    facts["first_fit_seconds"] = time.perf_counter() - start
    print(facts, flush=True)
    fits, bilm = [], None
    for batch_size in (64, 512):
        for epochs in args.epochs:
            model, stats = whole_fit(train, valid, device=device, epochs=epochs, dim=args.dim,
                                     batch_size=batch_size)
            print(stats, flush=True)
            fits.append(stats)
            if batch_size == 64 and epochs == args.epochs[0]:
                bilm = model
    speed = inference(bilm, texts, device)
    print(speed, flush=True)
    checked = checks(bilm, texts, labels, device, args.dim)
    print(checked, flush=True)
    shipped = shipped_model(texts, device)
    print(shipped, flush=True)
    distributed = torchrun_fit(train, device=device, dim=args.dim,
                               reference_digest=weights_digest(bilm)) \
        if args.epochs[0] == 1 else None
    print(distributed, flush=True)
    if distributed and distributed["returncode"]:
        raise RuntimeError(f"torchrun failed:\n{distributed['output']}")
    cpu = cpu_figures()

    rows = []
    for fit in fits:
        base = cpu.get("fits", {}).get(fit["epochs"]) if fit["batch_size"] == 64 else None
        rows.append([fit["epochs"], fit["batch_size"], f"{fit['seconds']:.1f}",
                     f"{fit['targets_per_second']:,.0f}", f"{fit['perplexity']:.1f}",
                     f"{base['targets_per_second']:,.0f}" if base else "",
                     f"{fit['targets_per_second'] / base['targets_per_second']:.1f}x"
                     if base else "",
                     f"{base['perplexity']:.1f}" if base else ""])
    peak = facts["bf16_peak_flops"]
    markdown = (
        f"### biLM on a GPU: {facts['name']}, torch {facts['torch']}\n\n"
        + (f"bf16 matmul peak of the device: {peak / 1e12:,.0f} TFLOP/s (8192 x 8192).\n\n"
           if peak else "")
        + f"The first fit in a process (a 16/16 biLM on 200 texts) took "
        f"{facts['first_fit_seconds']:.1f} s, most of it the device's start; the fits "
        "below come after it.\n\n"
        + f"Whole fits of `BiLM(embedding_dim={args.dim}, hidden_dim={args.dim}, "
        f"max_epochs=E, random_state=0, device=\"{device}\")` on {len(train):,} AG News "
        f"texts, held-out perplexity on {len(valid)}, timed from call to return; the 2-core "
        "CPU's figures are the same fit's in `bilm_pretrain_speed.py` (batch 64).\n\n"
        + markdown_table(["epochs", "batch", "seconds", "targets/s", "held-out perplexity",
                          "2-core CPU targets/s", "GPU / CPU", "2-core CPU perplexity"], rows)
        + "\n\n#### Inference\n\n"
        + markdown_table(
            ["what", "GPU", "2-core CPU"],
            [["`BiLM.embed_flat`, tokens/s", f"{speed['embed_tokens_per_second']:,.0f}",
              f"{cpu['embed_tokens_per_second']:,.0f}" if "embed_tokens_per_second" in cpu
              else ""],
             ["`ElmoVectorizer.transform`, documents/s",
              f"{speed['transform_documents_per_second']:,.0f}",
              f"{cpu['transform_documents_per_second']:,.0f}"
              if "transform_documents_per_second" in cpu else ""]])
        + "\n\nThe CPU's figures: `bilm_inference_speed.py`'s batched bf16 embed and "
        "`elmo_speed.py`'s transform (frozen mix, mean pooling, 3,000 documents); both "
        "transforms without the contextual bag (`bag_size=None`).\n\n"
        "#### Checks on the GPU path\n\n"
        + markdown_table(["check", "result"], [
            ["a document's features alone vs in a batch of 64, largest difference",
             f"{checked['batch_independence_max_abs_diff']:.2e}"],
            ["GPU-trained model saved, loaded on the CPU: largest feature difference "
             "(relative to the largest feature)",
             f"{checked['gpu_vs_cpu_max_abs_diff']:.2e} "
             f"({checked['gpu_vs_cpu_relative_diff']:.2e})"],
            ["trainable mix fitted from 2,000 labels on the GPU: features finite",
             str(checked["trainable_features_finite"])],
            ["two fits with the same seed: identical weights",
             str(checked["same_seed_same_weights"])],
            ["`torchrun --nproc-per-node 1` (nccl): exit status, seconds",
             f"{distributed['returncode']}, {distributed['seconds']:.1f}" if distributed
             else "not run"],
            ["torchrun fit: same weights as the in-process fit",
             str(distributed["same_weights_as_in_process_fit"]) if distributed
             else "not run"]])
        + f"\n\n#### The shipped default model ({shipped['model']}) on the GPU\n\n"
        + markdown_table(["check", "result"], [
            ["`ElmoVectorizer()` on the GPU vs the CPU, 500 texts: largest feature "
             "difference (relative to the largest feature)",
             f"{shipped['gpu_vs_cpu_max_abs_diff']:.2e} "
             f"({shipped['gpu_vs_cpu_relative_diff']:.2e})"],
            ["the same CPU-fitted vectorizer transforming the 500 texts on the GPU: "
             "largest difference of the pooled features (relative to the largest)",
             f"{shipped['moved_pooled_relative_diff']:.2e}"],
            [f"the same: documents whose contextual bag ({shipped['bag_size']:,} codes, "
             "assigned on the CPU to the GPU's token vectors) equals the CPU's; bag entries "
             "changed per document",
             f"{shipped['moved_bag_documents_identical']:.1%}; "
             f"{shipped['moved_bag_entries_changed_per_document']:.2f}"],
            ["`transform` on the GPU, documents/s (7,600 texts)",
             f"{shipped['transform_documents_per_second']:,.0f}"],
            ["`transform` on the GPU with `bag_size=None`, documents/s (7,600 texts)",
             f"{shipped['transform_no_bag_documents_per_second']:,.0f}"],
            ["`adapt_epochs=1` on the 7,600 texts, seconds",
             f"{shipped['adapt_seconds']:.1f}"],
            ["adapted features finite; two adaptations with one seed give the same features",
             f"{shipped['adapted_features_finite']}; "
             f"{shipped['adapt_same_seed_same_features']}"],
            ["adaptation moved the features: largest difference from the shipped model's",
             f"{shipped['adapted_vs_shipped_max_abs_diff']:.2e}"]])
        + "\n")
    write_results("gpu", {"facts": facts, "fits": fits, "inference": speed,
                          "checks": checked, "shipped": shipped, "torchrun": distributed,
                          "cpu": cpu}, markdown)


if __name__ == "__main__":
    main()
