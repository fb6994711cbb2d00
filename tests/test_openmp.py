"""The OpenMP wait policy that ``import elmofeat`` sets (elmofeat._openmp)."""

import os
import subprocess
import sys

import pytest

from elmofeat._openmp import SPIN_COUNT, limit_openmp_spinning


def test_sets_the_spin_count_where_the_user_chose_none():
    environ = {"PATH": "/bin"}
    limit_openmp_spinning(environ)
    assert environ == {"PATH": "/bin", "GOMP_SPINCOUNT": str(SPIN_COUNT)}


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


def _fresh_import(**extra_environment):
    """What a new process sees after ``import elmofeat``: its spin count, whether torch
    was loaded by the import, and what a worker it starts inherits."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    environment.update(extra_environment)
    code = ("import os, subprocess, sys, elmofeat\n"
            "child = subprocess.run([sys.executable, '-c', "
            "'import os; print(os.environ.get(\"GOMP_SPINCOUNT\"))'],"
            " capture_output=True, text=True, check=True).stdout.strip()\n"
            "print(os.environ.get('GOMP_SPINCOUNT'), 'torch' in sys.modules, child)")
    out = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


def test_import_sets_it_before_torch_loads_and_workers_inherit_it():
    assert _fresh_import() == [str(SPIN_COUNT), "False", str(SPIN_COUNT)]


def test_import_keeps_the_users_wait_policy():
    assert _fresh_import(GOMP_SPINCOUNT="300000") == ["300000", "False", "300000"]
    assert _fresh_import(OMP_WAIT_POLICY="PASSIVE") == ["None", "False", "None"]
