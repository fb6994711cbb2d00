"""The task suite behind ``elmofeat benchmark``: TF-IDF and GloVe anchors, SVD,
skip-gram, ELMo (one row per layer mix, with and without GloVe, and the shipped general
model) and the hybrid on AG News, R8, CR, MPQA and 20 Newsgroups, each feeding the same
LogisticRegression.

Tasks, methods and the biLMs the methods read are declared, one spec each, in three
registries: :data:`~elmofeat.suite.tasks.TASKS` (:mod:`~elmofeat.suite.tasks`),
:data:`~elmofeat.suite.methods.METHODS` (:mod:`~elmofeat.suite.methods`) and
:data:`~elmofeat.suite.bilms.BILM_SOURCES` (:mod:`~elmofeat.suite.bilms`); the settings,
the report, the targets and the command line's choices come from them. ``elmofeat
benchmark`` runs it; from Python::

    settings = BenchmarkSettings.quick_run()
    results = run_benchmark(settings, data_home="../shared/data")
    write_report(results, "report/")
"""

from .._lazy import lazy_attributes

_EXPORTS = {
    "BILM_SOURCES": ".bilms",
    "METHODS": ".methods",
    "TASKS": ".tasks",
    "register_method": ".methods",
    "register_task": ".tasks",
    "write_report": ".report",
    "run_benchmark": ".run",
    "BenchmarkSettings": ".settings",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = ["BILM_SOURCES", "METHODS", "TASKS", "BenchmarkSettings", "register_method",
           "register_task", "run_benchmark", "write_report"]
