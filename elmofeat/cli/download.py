"""``elmofeat download``: fetch the datasets the main job and the docs read."""

from __future__ import annotations

# The names and descriptions, without the loaders (--help imports no heavy package).
NAMES = {
    "ag_news": "AG News test partition", "r8": "R8", "cr": "CR", "mpqa": "MPQA",
    "20ng": "20 Newsgroups bydate", "glove-50d": "GloVe 6B 50d", "glove-100d": "GloVe 6B 100d",
}
#: elmofeat.datasets._downloads.MAIN_JOB, kept here so that --help loads nothing
MAIN_JOB = ("ag_news", "r8", "cr", "mpqa", "20ng", "glove-50d")


def add_arguments(parser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="datasets to fetch: " + ", ".join(f"{k} ({v})" for k, v in NAMES.items())
                        + "; 'all' for every one (default: what `elmofeat benchmark` reads: "
                        + " ".join(MAIN_JOB) + ")")
    parser.add_argument("--data-home", default=None,
                        help="where the datasets live (default: $ELMOFEAT_DATA, else ~/elmofeat_data)")
    parser.add_argument("--check", action="store_true",
                        help="fetch nothing: list what is missing and exit 1 if anything is")


def run(args) -> int:
    from ..datasets import download_datasets, get_data_home, missing_datasets

    names = list(NAMES) if "all" in args.names else (list(dict.fromkeys(args.names)) or list(MAIN_JOB))
    home = get_data_home(args.data_home)
    if args.check:
        missing = missing_datasets(names, home)
        for name in names:
            print(f"{name}: {'missing' if name in missing else 'present'} in {home}")
        return 1 if missing else 0
    fetched = download_datasets(names, home)
    print(f"elmofeat download: {len(fetched)} fetched, {len(names) - len(fetched)} already "
          f"present in {home}")
    return 0
