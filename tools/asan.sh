#!/usr/bin/env bash
# make asan: the Python test suite against an AddressSanitizer build of mbint._core.
#
# The extension is rebuilt with -fsanitize=address into build/asan (a copy of the
# package, so the normal in-place build is untouched), libasan is preloaded into the
# interpreter, and pytest runs the suite from there.  Any ASan report aborts the
# process (halt_on_error) and fails the run.  Leak detection is off: CPython itself
# keeps memory until exit.  Left out, with the reason:
#   - the C harness (tests/test_c_harness.py): it builds its own ASan/UBSan programs
#     and is run by `make test`;
#   - tests that measure resident memory (test_binding.py, *_do_not_leak, *_peak_rss):
#     ASan's shadow memory and quarantine add to the process's RSS on purpose (the 3-D
#     chain's peak-RSS test grew by 50 MB under ASan against its 40 MB bound).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=$ROOT/.venv/bin/python
OUT=$ROOT/build/asan
rm -rf "$OUT" "$ROOT/build/asan-tmp"
mkdir -p "$OUT"
cp -r mbint "$OUT/"
find "$OUT/mbint" -name '*.so' -delete
CFLAGS="-fsanitize=address -fno-omit-frame-pointer -O1 -g" LDFLAGS="-fsanitize=address" \
  "$PY" setup.py -q build_ext --build-lib "$OUT" --build-temp "$ROOT/build/asan-tmp"
# libstdc++ is preloaded with libasan so that ASan's __cxa_throw interceptor finds the
# real one (matplotlib's C++ extensions throw exceptions internally)
LIBASAN="$(${CC:-cc} -print-file-name=libasan.so) $(${CXX:-g++} -print-file-name=libstdc++.so)"
echo "ASan build in $OUT, preloading $LIBASAN"
cd "$OUT"
# matplotlib draws through the Agg backend (no display)
env LD_PRELOAD="$LIBASAN" \
    ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1" \
    MPLBACKEND=Agg PYTHONPATH="$OUT" MBINT_NB_QUICK=1 \
    "$ROOT/.venv/bin/pytest" -q -p no:cacheprovider --rootdir="$ROOT" -c "$ROOT/pyproject.toml" \
    "$ROOT/tests" --ignore="$ROOT/tests/test_c_harness.py" --ignore="$ROOT/tests/benchmarks" \
    -k "not do_not_leak and not peak_rss" "$@"
