"""The versions the tests ran with: Python, NumPy and SciPy (with their BLAS), SUNDIALS,
the system BLAS/LAPACK the C core links, the C compiler and the CPU.  Printed by
``make test`` (``python tests/versions.py``) and in pytest's header (tests/conftest.py),
so that a failure report says which libraries produced it."""
import glob
import os
import platform
import shutil
import subprocess
import sys
import sysconfig


def _run(*cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return r.stdout if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _py_blas(module):
    try:
        blas = module.__config__.CONFIG["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '?')}"
    except Exception:
        return "?"


def _dpkg_version(package):
    for line in _run("dpkg-query", "-W", "-f=${Version}", package).splitlines():
        return line.strip()
    return ""


def _sundials():
    version = _dpkg_version("libsundials-dev")
    if version:
        return f"{version} (libsundials-dev)"
    for header in glob.glob("/usr/include/sundials/sundials_config.h") + \
            glob.glob("/usr/local/include/sundials/sundials_config.h"):
        with open(header) as fh:
            for line in fh:
                if line.startswith("#define SUNDIALS_VERSION "):
                    return f"{line.split()[2].strip(chr(34))} ({header})"
    return "not found"


def _system_blas():
    """the BLAS/LAPACK mbint._core has loaded (LD_LIBRARY_PATH or alternatives may change
    them), else what the system's libblas.so.3 and liblapack.so.3 point to"""
    try:
        import mbint._core  # noqa: F401
        with open("/proc/self/maps") as fh:
            libs = {line.split()[-1] for line in fh if "/" in line}
        keys = ("libblas", "liblapack", "libopenblas", "libatlas", "libmkl", "libblis")
        loaded = sorted(p for p in libs if any(k in os.path.basename(p) for k in keys)
                        and "site-packages" not in p)
        if loaded:
            return ", ".join(os.path.realpath(p) for p in loaded)
    except (ImportError, OSError):
        pass
    out = []
    for lib in ("libblas.so.3", "liblapack.so.3"):
        paths = [p for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                             "/usr/lib64", "/usr/lib") for p in [os.path.join(d, lib)]
                 if os.path.exists(p)]
        out.append(f"{lib} -> {os.path.realpath(paths[0])}" if paths else f"{lib} not found")
    return ", ".join(out)


def _compiler():
    """the extension's compiler (setup.py: $CC or Python's) and the C test programs' (cc)"""
    out = []
    for role, cc in (("extension", os.environ.get("CC") or sysconfig.get_config_var("CC")),
                     ("tests/c", "cc")):
        cc = (cc or "cc").split()[0]
        exe = shutil.which(cc)
        first = _run(exe, "--version").splitlines() if exe else []
        out.append(f"{role} {cc}: {first[0] if first else 'not found'}")
    return "; ".join(out)


def _cpu():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def lines():
    out = [f"python {platform.python_version()} ({sys.executable})"]
    try:
        import numpy
        out.append(f"numpy {numpy.__version__} (BLAS: {_py_blas(numpy)})")
    except ImportError:
        out.append("numpy not installed")
    try:
        import scipy
        out.append(f"scipy {scipy.__version__} (BLAS: {_py_blas(scipy)})")
    except ImportError:
        out.append("scipy not installed")
    out.append(f"sundials {_sundials()}")
    out.append(f"BLAS/LAPACK of mbint._core: {_system_blas()}")
    out.append(f"compiler {_compiler()}")
    env = {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS_", "OMP_NUM"))}
    out.append(f"cpu {_cpu()}" + (f"; {env}" if env else ""))
    return out


if __name__ == "__main__":
    print("\n".join("versions: " + line for line in lines()))
