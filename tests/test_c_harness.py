"""Build and run the C test programs of tests/c/ against the kernels, without
Python in the way (csrc/core, methods, linalg, mbs, problems; never csrc/python).
They are built with AddressSanitizer and UBSan when the compiler supports it."""
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNEL_DIRS = ["core", "methods", "linalg", "mbs", "problems"]
PROGRAMS = sorted((ROOT / "tests" / "c").glob("test_*.c"))


def _sources():
    src = []
    for d in KERNEL_DIRS:
        src += sorted((ROOT / "csrc" / d).glob("*.c"))
    return src


def _libs():
    # the kernels may call LAPACK (csrc/linalg); link it when present
    return ["-llapack", "-lblas", "-lm"]


@pytest.fixture(scope="module")
def cc():
    c = shutil.which("cc") or shutil.which("gcc")
    if c is None:
        pytest.fail("no C compiler found (cc/gcc)")
    return c


def _build(cc, prog, out, sanitize):
    inc = [f"-I{ROOT / 'csrc' / d}" for d in KERNEL_DIRS] + [f"-I{ROOT / 'tests' / 'c'}"]
    flags = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    if sanitize:
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    cmd = [cc, *flags, *inc, *map(str, _sources()), str(prog), "-o", str(out), *_libs()]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_kernels_free_of_python():
    leaks = [p for d in KERNEL_DIRS for p in (ROOT / "csrc" / d).glob("*.[ch]")
             if "Python.h" in p.read_text()]
    assert leaks == []


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_c_program(prog, cc, tmp_path, request):
    exe = tmp_path / prog.stem
    sanitize = not request.config.getoption("--no-asan")
    b = _build(cc, prog, exe, sanitize)
    if b.returncode != 0 and sanitize:
        b = _build(cc, prog, exe, False)  # compiler without sanitizer runtimes
    assert b.returncode == 0, b.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                       env={"ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin:/bin"})
    summary = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    assert summary, f"no summary line\n{r.stdout}\n{r.stderr}"
    failed = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    assert r.returncode == 0 and int(summary.group(2)) == 0, "\n".join(failed) + r.stderr
    assert int(summary.group(1)) > 0
