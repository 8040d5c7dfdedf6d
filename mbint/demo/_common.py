"""Shared pieces of the demo sections: the summary (markdown and CSV) and progress."""
from __future__ import annotations

import csv
import numbers

CSV_FIELDS = ("section", "method", "h", "rtol", "quantity", "value")


class Summary:
    """Collects the CSV rows and the markdown text of the demo."""

    def __init__(self):
        self.rows = []
        self.md = []

    def add(self, section, method, quantity, value, h=None, rtol=None):
        """One CSV row; ``h`` and ``rtol`` are left empty when None."""
        self.rows.append({
            "section": section, "method": method,
            "h": "" if h is None else repr(float(h)),
            "rtol": "" if rtol is None else repr(float(rtol)),
            "quantity": quantity,
            "value": str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value)),
        })

    def text(self, *lines):
        self.md.extend(lines)

    def table(self, header, rows):
        """A markdown table; pipes inside cells are escaped."""
        def line(cells):
            return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

        self.md.append(line(header))
        self.md.append("|" + "---|" * len(header))
        self.md.extend(line(r) for r in rows)
        self.md.append("")

    def write(self, out):
        with open(out / "summary.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
            w.writeheader()
            w.writerows(self.rows)
        (out / "summary.md").write_text("\n".join(self.md) + "\n")



def progress(msg):
    """One line of progress on stdout."""
    print(f"[mbint demo] {msg}", flush=True)
