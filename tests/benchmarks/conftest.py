import pathlib
import sys

# the benchmark scripts beside the tests are importable by name (bench_stiff, ...)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
