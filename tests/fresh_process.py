"""Run code in a fresh Python process, cheaply: a child forked from a server process
that has imported the heavy modules (numpy, torch, scikit-learn, elmofeat) and nothing
else.

A file saved by one process must load in another that never saw the objects. Starting
a new interpreter for each such check paid the imports each time (about 5 s on 2 cores,
dozens of checks); a fork of multiprocessing's forkserver, preloaded, shares what was
imported and none of the test process's state: its registries, caches and objects are
the server's, which only imported modules. The child takes the caller's environment
variables and working directory, as a subprocess would.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from pathlib import Path

_PRELOAD = ["json", "warnings", "numpy", "joblib", "torch", "sklearn.linear_model",
            "sklearn.pipeline", "elmofeat"]
_CONTEXT = None


def _context():
    global _CONTEXT
    if _CONTEXT is None:
        # the test process's forkserver (nothing else in the tests starts one)
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(_PRELOAD)
    return _CONTEXT


def _child(code: str, environment: dict, cwd: str, error_path: str) -> None:
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    try:
        exec(compile(code, "<fresh process>", "exec"), {"__name__": "__main__"})
    except BaseException:
        Path(error_path).write_text(traceback.format_exc())
        raise SystemExit(1)


def run_fresh(code: str, tmp_path: Path, timeout: float = 300) -> None:
    """Run ``code`` in a fresh process; raise ``AssertionError`` with its traceback if it
    fails, ``TimeoutError`` if it runs past ``timeout`` seconds."""
    error_path = tmp_path / "fresh-process-error.txt"
    process = _context().Process(target=_child,
                                 args=(code, dict(os.environ), os.getcwd(), str(error_path)))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
        raise TimeoutError(f"the fresh process ran past {timeout} s")
    if process.exitcode != 0:
        reason = error_path.read_text() if error_path.is_file() else f"exit code {process.exitcode}"
        raise AssertionError(f"the fresh process failed:\n{reason}")
