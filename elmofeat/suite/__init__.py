"""The task suite behind ``elmofeat benchmark``: TF-IDF and GloVe anchors, SVD,
skip-gram, ELMo (three mixes, with and without GloVe) and the hybrid on AG News, R8, CR
and MPQA, each feeding the same LogisticRegression.

``elmofeat benchmark`` runs it; from Python::

    settings = BenchmarkSettings.quick_run()
    results = run_benchmark(settings, data_home="../shared/data")
    write_report(results, "report/")
"""

from .._lazy import lazy_attributes
from .catalog import DATASETS

_EXPORTS = {
    "METHODS": ".methods",
    "write_report": ".report",
    "run_benchmark": ".run",
    "BenchmarkSettings": ".settings",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = ["DATASETS", "METHODS", "BenchmarkSettings", "run_benchmark", "write_report"]
