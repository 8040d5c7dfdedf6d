"""What the make-bench fixtures and the benchmarks share: write a benchmark's report where its
module says; whether an optional peer is installed."""


def write_report(bench, text):
    """text into bench.OUT_MD (out/...), and on stdout"""
    bench.OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    bench.OUT_MD.write_text(text)
    print(text)


def measured_rows(bench):
    """bench.run()'s rows, with bench.report(rows) written (write_report)"""
    rows = bench.run()
    write_report(bench, bench.report(rows))
    return rows


def have(name):
    """Whether the optional package ``name`` imports (a peer of the benchmarks)."""
    try:
        __import__(name)
        return True
    except Exception:
        return False
