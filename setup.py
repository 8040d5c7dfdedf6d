"""Build mbint._core: the C kernels (csrc/core, methods, linalg, problems) and the
binding (csrc/python), linked against LAPACK/BLAS and SUNDIALS from Debian."""
import glob
import os
import sys

import numpy as np
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tools"))
import gen_status  # noqa: E402

gen_status.main()

KERNEL_DIRS = ["core", "methods", "linalg", "mbs", "problems"]
sources = []
for d in KERNEL_DIRS + ["python"]:
    sources += sorted(glob.glob(os.path.join("csrc", d, "*.c")))

ext = Extension(
    "mbint._core",
    sources=sources,
    include_dirs=[np.get_include()] + [os.path.join("csrc", d) for d in KERNEL_DIRS],
    libraries=["sundials_cvode", "sundials_ida", "sundials_arkode", "sundials_nvecserial",
               "sundials_sunmatrixdense", "sundials_sunlinsoldense", "klu", "umfpack", "lapack", "blas", "m"],
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
)

setup(ext_modules=[ext])
