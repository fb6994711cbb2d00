"""The comparison the product grew from: SVD vs skip-gram vs ELMo (three mixes) on AG
News and R8, with TF-IDF and GloVe anchors, each feeding the same LogisticRegression.

``elmofeat benchmark`` runs it; from Python::

    settings = ComparisonSettings.quick_run()
    results = run_comparison(settings, data_home="../shared/data")
    write_report(results, "report/")
"""

from .methods import METHODS, PretrainedVectorsVectorizer
from .report import write_report
from .run import run_comparison
from .settings import DATASETS, ComparisonSettings

__all__ = ["DATASETS", "METHODS", "ComparisonSettings", "PretrainedVectorsVectorizer",
           "run_comparison", "write_report"]
