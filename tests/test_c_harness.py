"""Build and run the C test programs of tests/c/ against the kernels, without
Python in the way (csrc/core, methods, linalg, mbs, problems; never csrc/python).

The kernels are compiled once per session into a static library (in parallel),
with AddressSanitizer and UBSan when the compiler supports them; each test
program is linked against it and must print "N passed, 0 failed"."""
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNEL_DIRS = ["core", "methods", "linalg", "mbs", "problems"]
PROGRAMS = sorted((ROOT / "tests" / "c").glob("test_*.c"))
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]


def _sources():
    src = []
    for d in KERNEL_DIRS:
        src += sorted((ROOT / "csrc" / d).glob("*.c"))
    return src


def _libs():
    # the kernels call LAPACK (csrc/linalg) and SUNDIALS (csrc/methods/sundials_*.c)
    sundials = ["-lsundials_cvode", "-lsundials_ida", "-lsundials_arkode",
                "-lsundials_nvecserial", "-lsundials_sunmatrixdense", "-lsundials_sunlinsoldense"]
    return [*sundials, "-lklu", "-lumfpack", "-llapack", "-lblas", "-lm"]


def _flags(sanitize):
    inc = [f"-I{ROOT / 'csrc' / d}" for d in KERNEL_DIRS] + [f"-I{ROOT / 'tests' / 'c'}"]
    # a call through a kernel table with its arguments in the wrong order (a context
    # pointer where a vector is due) compiles with a warning only: those are errors here
    strict = ["-Werror=incompatible-pointer-types", "-Werror=int-conversion",
              "-Werror=discarded-qualifiers", "-Werror=implicit-function-declaration"]
    flags = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter", *strict, *inc]
    return flags + (SANITIZE if sanitize else [])


def _compile_kernels(cc, outdir, sanitize):
    objs = []

    def one(src):
        obj = outdir / (src.parent.name + "_" + src.stem + ".o")
        r = subprocess.run([cc, *_flags(sanitize), "-c", str(src), "-o", str(obj)],
                           capture_output=True, text=True)
        return obj, r

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for obj, r in ex.map(one, _sources()):
            if r.returncode != 0:
                return None, r.stderr
            objs.append(obj)
    lib = outdir / "libmbkernels.a"
    r = subprocess.run(["ar", "rcs", str(lib), *map(str, objs)], capture_output=True, text=True)
    return (lib, "") if r.returncode == 0 else (None, r.stderr)


@pytest.fixture(scope="session")
def kernels(tmp_path_factory, request):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler found (cc/gcc)")
    sanitize = not request.config.getoption("--no-asan")
    lib, err = _compile_kernels(cc, tmp_path_factory.mktemp("kernels"), sanitize)
    if lib is None and sanitize:  # a compiler without sanitizer runtimes
        sanitize = False
        lib, err = _compile_kernels(cc, tmp_path_factory.mktemp("kernels_plain"), False)
    assert lib is not None, err
    return cc, lib, sanitize


def test_kernels_free_of_python():
    leaks = [p for d in KERNEL_DIRS for p in (ROOT / "csrc" / d).glob("*.[ch]")
             if "Python.h" in p.read_text()]
    assert leaks == []


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_c_program(prog, kernels, tmp_path):
    cc, lib, sanitize = kernels
    exe = tmp_path / prog.stem
    b = subprocess.run([cc, *_flags(sanitize), str(prog), str(lib), "-o", str(exe), *_libs()],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600,
                       env={"ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin:/bin"})
    summary = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    assert summary, f"no summary line\n{r.stdout}\n{r.stderr}"
    failed = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    assert r.returncode == 0 and int(summary.group(2)) == 0, "\n".join(failed) + r.stderr
    assert int(summary.group(1)) > 0
