"""What elmofeat records of the machine (elmofeat.runtime.host): the CPU's description
and identity, read from /proc/cpuinfo's text."""

import subprocess
import sys
from pathlib import Path

from elmofeat.runtime.host import cpu_description, cpu_identity

# Two processors of an x86 virtual machine; the second differs so that reading past
# the first block would show.
X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1
flags\t\t: fpu sse avx512f avx512_bf16

processor\t: 1
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 8
flags\t\t: fpu amx_bf16 avx512_bf16
"""

ARM = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd0c
"""


def test_identity_names_vendor_family_model_and_stepping_of_the_first_processor():
    assert cpu_identity(X86) == "AuthenticAMD family 25 model 17 stepping 1"


def test_identity_of_an_arm_cpu_names_implementer_part_and_variant():
    assert cpu_identity(ARM) == "implementer 0x41 part 0xd0c variant 0x1"


def test_identity_is_empty_where_cpuinfo_holds_none():
    assert cpu_identity("") == ""
    assert cpu_identity("processor\t: 0\nmodel name\t: Some CPU\n") == ""


def test_description_reads_the_first_processor_and_its_bf16_units():
    assert cpu_description(X86) == "AMD EPYC (AVX-512 BF16)"
    intel = X86.split("\n\n")[1]
    assert cpu_description(intel) == "Intel(R) Xeon(R) Processor (AMX, AVX-512 BF16)"
    assert cpu_description(ARM) == "unknown CPU (no bf16 matrix units)"


def test_benchmarks_name_the_cpu_identity_on_their_machine_line():
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    code = ("import _common; print(_common.machine_line({'cpu_count': 2, 'cpu': 'X (Y)', "
            "'cpu_identity': 'V family 1 model 2', 'platform': 'P'})); "
            "print(_common.machine_line({'cpu_count': 2, 'cpu': 'X (Y)', 'platform': 'P'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=benchmarks, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert out == ["2 CPUs, X (Y) [V family 1 model 2], P", "2 CPUs, X (Y), P"]
