"""The shape of the code: long functions, long files and files that use each other.

    python tools/structure.py          # a report; exit status 1 when a rule is broken

Rules (tests/test_structure.py holds the tree to them):

- no C function in csrc/ over 150 lines, no Python function in mbint/ over 120 lines
  (its docstring included, its signature not: annotations spread it over more lines);
- no source file over 1000 lines, except coefficient tables (csrc/methods/tableaus*.c);
- no loop of C files that use each other (file A uses file B when A names a function or
  variable with external linkage that B defines), and no loop of Python modules that
  import each other at module level, except the ones listed in ALLOWED_LOOPS.

The C analysis reads the sources as text: definitions start at column 0 and end at the
first line that is a lone "}"; comments, strings and character constants are removed
before identifiers are collected.  That is the style of csrc/ (and what a compiler's
symbol table would say: `nm` on the objects finds the same loops).
"""
from __future__ import annotations

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
C_FUNCTION_MAX = 150
PY_FUNCTION_MAX = 120
FILE_MAX = 1000
#: files exempt from FILE_MAX: coefficient data
DATA_FILES = re.compile(r"csrc/methods/tableaus.*\.c$")
#: loops kept by design: Trajectory.save / to_xarray write through dataset, and
#: dataset.from_xarray rebuilds a Trajectory (each side imports the other lazily or
#: at module level)
ALLOWED_LOOPS = [{"mbint/mbs/dataset.py", "mbint/mbs/trajectory.py"}]

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_DEF = re.compile(r"^(?!static\b)(?!typedef\b)(?!extern\b)[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(",
                  re.M)
_VAR = re.compile(r"^(?!static\b)(?!typedef\b)(?!extern\b)(?:const\s+)?[A-Za-z_]\w*\s+\**"
                  r"([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*=", re.M)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_FUNC_START = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(")


def c_files():
    return sorted(p for p in (ROOT / "csrc").rglob("*.c"))


def py_files():
    return sorted(p for p in (ROOT / "mbint").rglob("*.py"))


def rel(p):
    return p.relative_to(ROOT).as_posix()


def strip_c(text):
    """C text without comments, strings and character constants (newlines kept)."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _STRING.sub('""', text)


def c_functions(path):
    """(name, first line, number of lines) of every function defined in a C file."""
    lines = strip_c(path.read_text()).split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _FUNC_START.match(lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            # the definition's body: the first "{" at column 0 (or ending the header
            # lines), then the first lone "}" at column 0
            j = i
            while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and "{" in lines[j]:
                k = j
                while k < len(lines) and lines[k].rstrip() != "}":
                    k += 1
                out.append((m.group(1), i + 1, k - i + 1))
                i = k + 1
                continue
        i += 1
    return out


def py_functions(path):
    """(qualified name, first line, number of lines) of every function of a module: its
    lines from the first of its body (the docstring) on; the signature is not counted, so
    that type annotations, which spread it over more lines, do not count as length."""
    tree = ast.parse(path.read_text())
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child.lineno,
                            child.end_lineno - child.body[0].lineno + 1))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree, "")
    return out


def long_functions():
    bad = []
    for p in c_files():
        bad += [(n, rel(p), a, k) for n, a, k in c_functions(p) if k > C_FUNCTION_MAX]
    for p in py_files():
        bad += [(n, rel(p), a, k) for n, a, k in py_functions(p) if k > PY_FUNCTION_MAX]
    return bad


def long_files():
    out = []
    for p in c_files() + sorted((ROOT / "csrc").rglob("*.h")) + py_files():
        n = p.read_text().count("\n")
        if n > FILE_MAX and not DATA_FILES.search(rel(p)):
            out.append((rel(p), n))
    return out


def c_uses():
    """file -> set of files whose external symbols it names."""
    defs, idents = {}, {}
    for p in c_files():
        text = strip_c(p.read_text())
        # only what is outside any function body can be a definition
        names = set(_DEF.findall(text)) | set(_VAR.findall(text))
        defs[rel(p)] = names
        idents[rel(p)] = set(_IDENT.findall(text))
    owner = {}
    for f, names in defs.items():
        for s in names:
            owner.setdefault(s, f)
    return {f: {owner[s] for s in ids if s in owner and owner[s] != f}
            for f, ids in idents.items()}


def py_imports():
    """module file -> module files it imports at module level (not inside functions)."""
    files = {rel(p): p for p in py_files()}
    mods = {}
    for r in files:
        name = r[:-3].replace("/", ".")
        if name.endswith(".__init__"):
            name = name[:-9]
        mods[name] = r
    compiled = {"_core"} | {p.name.split(".")[0] for p in (ROOT / "mbint").rglob("*.so")}
    out = {}
    for r, p in files.items():
        pkg = r[:-3].replace("/", ".").rsplit(".", 1)[0]
        if r.endswith("__init__.py"):
            pkg = r[:-12].replace("/", ".")
        deps = set()
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                # a submodule is imported itself; any other name is an attribute of base
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods or a.name in compiled
                         else base for a in node.names]
            else:
                continue
            deps |= {mods[n] for n in names if n in mods and mods[n] != r}
        out[r] = deps
    return out


def loops(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return comps


def file_loops():
    """Loops of C files and of Python modules, except ALLOWED_LOOPS."""
    found = loops(c_uses()) + loops(py_imports())
    return [c for c in found if c not in ALLOWED_LOOPS]


def main():
    bad = 0
    for name, path, line, n in long_functions():
        print(f"function over the limit: {path}:{line} {name} ({n} lines)")
        bad += 1
    for path, n in long_files():
        print(f"file over {FILE_MAX} lines: {path} ({n})")
        bad += 1
    for comp in file_loops():
        print(f"files using each other: {sorted(comp)}")
        bad += 1
    allowed = [c for c in loops(py_imports()) + loops(c_uses()) if c in ALLOWED_LOOPS]
    for comp in allowed:
        print(f"(by design: {sorted(comp)})")
    longest = sorted(((k, rel(p), n) for p in c_files() for n, a, k in c_functions(p)),
                     reverse=True)[:5]
    print("longest C functions:", ", ".join(f"{n} {k}" for k, p, n in longest))
    longest = sorted(((k, rel(p), n) for p in py_files() for n, a, k in py_functions(p)),
                     reverse=True)[:5]
    print("longest Python functions:", ", ".join(f"{n} {k}" for k, p, n in longest))
    print("ok" if not bad else f"{bad} rule(s) broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
