# make test  : install what is missing (Debian packages, .venv), build, run the tests
# make demo  : same set-up, then simulate the papers' mechanisms into out/
# make bench : benchmarks against SciPy / SUNDIALS (long; not part of make test)
# make docs  : the documentation (Sphinx, warnings as errors) in docs/_build/html
PY      := .venv/bin/python
# chromium: the headless browser of tests/test_view3d.py's screenshot (WebGL on SwiftShader)
APT_PKGS := libsundials-dev liblapack-dev libblas-dev libsuitesparse-dev chromium
CC      ?= cc

.PHONY: deps venv build test demo bench docs ctest asan clean

deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

.venv/.stamp: pyproject.toml setup.py
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip setuptools wheel numpy
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	touch $@

venv: deps .venv/.stamp

build: venv
	$(PY) setup.py -q build_ext --inplace

# the suite on every core (pytest-xdist; TEST_JOBS=1 runs it in one process)
TEST_JOBS ?= auto

test: build
	@$(PY) tests/versions.py
	$(PY) -m pytest -q -n $(TEST_JOBS) tests

demo: build
	$(PY) -m mbint demo

bench: build
	$(PY) -m pytest -q tests/benchmarks -o addopts="" -s
	$(PY) tools/bench_summary.py --out out/bench_summary.png

# the notebooks are rendered with their stored outputs (tools/run_notebooks.py makes them)
docs: build
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

# AddressSanitizer: the C test programs (ASan + UBSan) and the whole Python suite
# against an ASan build of the extension (tools/asan.sh)
asan: build
	$(PY) -m pytest -q tests/test_c_harness.py
	bash tools/asan.sh

clean:
	rm -rf build out mbint/*.so .pytest_cache docs/_build docs/generated docs/notebooks
