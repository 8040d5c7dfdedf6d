"""Generate mbint/_status.py from csrc/core/status.def (the one list of status codes)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATTERN = re.compile(r'^MB_STATUS\((\w+),\s*(-?\d+),\s*"(.*)"\)\s*$')


def parse(path=ROOT / "csrc" / "core" / "status.def"):
    rows = []
    for line in pathlib.Path(path).read_text().splitlines():
        m = PATTERN.match(line.strip())
        if m:
            rows.append((m.group(1), int(m.group(2)), m.group(3)))
    return rows


def render(rows):
    out = ['"""Status codes of the C core (generated from csrc/core/status.def by',
           'tools/gen_status.py; do not edit)."""', ""]
    for name, code, _ in rows:
        out.append(f"{name} = {code}")
    out.append("")
    out.append("MESSAGES = {")
    for name, code, msg in rows:
        out.append(f"    {code}: {msg!r},")
    out.append("}")
    out.append("")
    return "\n".join(out)


def main():
    target = ROOT / "mbint" / "_status.py"
    text = render(parse())
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


if __name__ == "__main__":
    main()
