"""The OpenMP wait policy: an opt-in of the user or of the ``elmofeat`` command
(elmofeat.runtime.openmp), never a side effect of ``import elmofeat``."""

import os
import subprocess
import sys

import pytest

import elmofeat
from elmofeat.runtime.openmp import SPIN_COUNT, limit_openmp_spinning


def test_sets_the_spin_count_where_the_user_chose_none():
    environ = {"PATH": "/bin"}
    limit_openmp_spinning(environ)
    assert environ == {"PATH": "/bin", "GOMP_SPINCOUNT": str(SPIN_COUNT)}
    assert elmofeat.limit_openmp_spinning is limit_openmp_spinning  # the public opt-in


@pytest.mark.parametrize("setting", [{"GOMP_SPINCOUNT": "300000"}, {"OMP_WAIT_POLICY": "ACTIVE"},
                                     {"GOMP_SPINCOUNT": ""}])
def test_the_users_setting_wins(setting):
    environ = dict(setting)
    assert limit_openmp_spinning(environ) is False
    assert environ == setting


def test_says_when_torch_was_imported_first():
    import torch  # noqa: F401  (already imported by the test session; made explicit)

    environ = {}
    assert limit_openmp_spinning(environ) is False  # too late here, children still inherit it
    assert environ["GOMP_SPINCOUNT"] == str(SPIN_COUNT)


def _fresh_process(code, **extra_environment):
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    environment.update(extra_environment)
    out = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


def test_import_sets_nothing():
    code = ("import os, sys, elmofeat\n"
            "print(os.environ.get('GOMP_SPINCOUNT'), 'torch' in sys.modules)")
    assert _fresh_process(code) == ["None", "False"]


def test_opting_in_before_torch_reaches_torch_and_workers():
    code = ("import os, subprocess, sys, elmofeat\n"
            "effect = elmofeat.limit_openmp_spinning()\n"
            "child = subprocess.run([sys.executable, '-c', "
            "'import os; print(os.environ.get(\"GOMP_SPINCOUNT\"))'],"
            " capture_output=True, text=True, check=True).stdout.strip()\n"
            "print(os.environ.get('GOMP_SPINCOUNT'), effect, child)")
    assert _fresh_process(code) == [str(SPIN_COUNT), "True", str(SPIN_COUNT)]
    assert _fresh_process(code, GOMP_SPINCOUNT="300000") == ["300000", "False", "300000"]
    assert _fresh_process(code, OMP_WAIT_POLICY="PASSIVE") == ["None", "False", "None"]


def test_the_command_opts_in_for_its_own_process(monkeypatch):
    """``elmofeat`` (the program) makes both process-level opt-ins; ``main`` (what
    programs and tests call) makes neither."""
    from elmofeat.runtime import malloc as _malloc
    from elmofeat import cli

    seen = {}
    for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"):
        monkeypatch.setenv(name, "")  # recorded, so that the test leaves them as they were
        monkeypatch.delenv(name)
    monkeypatch.setattr(_malloc, "enabled", False)

    def fake_main():
        seen["spin"] = os.environ.get("GOMP_SPINCOUNT")
        seen["malloc"] = elmofeat.get_config()["malloc_tuning"]
        return 0

    monkeypatch.setattr(cli, "main", fake_main)
    assert cli.entry_point() == 0
    assert seen == {"spin": str(SPIN_COUNT), "malloc": True}
