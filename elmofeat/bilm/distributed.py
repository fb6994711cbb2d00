"""Pretrain a BiLM on several processes or machines with torchrun.

Every process runs the same ``BiLM.fit`` (the engine keeps them in step through
:mod:`elmofeat.bilm.collectives`); rank 0 writes checkpoints and the final model. On
CPU the backend is gloo, on GPUs nccl.

Example (2 processes on this machine)::

    torchrun --nproc-per-node 2 -m elmofeat.bilm.distributed \\
        --texts corpus.txt --output bilm.pt --params '{"max_epochs": 5, "random_state": 0}'

With ``--stream`` the texts are files, folders or globs streamed from disk (each
process encodes its own copy and trains on its share of every block's batches).

Across machines, add torchrun's ``--nnodes``, ``--node-rank`` and
``--rdzv-endpoint`` as usual.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch
import torch.distributed as dist

from .estimator import BiLM
from .io import weights_digest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Pretrain a BiLM under torchrun (DDP).")
    parser.add_argument("--texts", required=True, nargs="+",
                        help="text file, one document a line; with --stream, files, folders "
                        "or glob patterns (plain or gzip)")
    parser.add_argument("--stream", action="store_true",
                        help="stream the texts from disk (each process encodes its own copy "
                        "into shards) instead of reading them into memory")
    parser.add_argument("--output", required=True, help="where rank 0 saves the BiLM")
    parser.add_argument("--params", default="{}", help="BiLM parameters as JSON")
    parser.add_argument("--digest-dir", default=None,
                        help="write each rank's weight digest here (to check synchronisation)")
    args = parser.parse_args(argv)
    params = json.loads(args.params)
    device = params.get("device", "cpu")
    backend = "nccl" if str(device).startswith("cuda") else "gloo"
    dist.init_process_group(backend)
    try:
        rank = dist.get_rank()
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        if args.stream:
            from .corpus import TextFiles

            texts = TextFiles(args.texts)
        else:
            texts = Path(args.texts[0]).read_text(encoding="utf-8").splitlines()
        bilm = BiLM(**params).fit(texts)
        if args.digest_dir:
            Path(args.digest_dir).mkdir(parents=True, exist_ok=True)
            (Path(args.digest_dir) / f"rank{rank}.txt").write_text(weights_digest(bilm))
        if rank == 0:
            bilm.save(args.output)
            last = bilm.history_[-1] if bilm.history_ else {}
            ppl = last.get("validation_perplexity")
            print(f"elmofeat: pretrained on {dist.get_world_size()} processes, "
                  f"{bilm.n_epochs_} epoch(s)"
                  + (f", validation perplexity {ppl:.1f}" if ppl is not None else "")
                  + f"; model saved to {Path(args.output).resolve()}", flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
