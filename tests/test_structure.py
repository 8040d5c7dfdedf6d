"""The shape of the code (tools/structure.py): small functions, files of a readable size,
and no two files that use each other.

These are the rules of the architecture (docs/design.md, "Layers"): no C function in
csrc/ over 150 lines, no Python function in mbint/ over 120 lines (docstring included),
no file over 1000 lines except coefficient tables, no loop of C files that name each
other's external symbols and no loop of Python modules importing each other at module
level, except the one kept by design (dataset.py / trajectory.py, which import each
other inside functions)."""
import importlib.util
import pathlib
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("structure", ROOT / "tools" / "structure.py")
structure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(structure)


def test_no_function_over_the_limit():
    bad = structure.long_functions()
    assert bad == [], "\n".join(f"{p}:{line} {n}: {k} lines" for n, p, line, k in bad)


def test_no_file_over_the_limit():
    assert structure.long_files() == []


def test_no_files_using_each_other():
    loops = structure.file_loops()
    assert loops == [], [sorted(c) for c in loops]


def test_the_c_reader_sees_functions_and_uses(tmp_path):
    """The text analysis on a small tree: a function's extent, a loop of two files
    through a function and a table, and no loop through a static function."""
    src = tmp_path / "a.c"
    src.write_text(textwrap.dedent("""\
        /* a { comment } with braces */
        static int helper(int x)
        {
            return x + 1;  /* } */
        }

        int mb_a(int x,
                 int y)
        {
            const char *s = "}";
            return helper(x) + mb_b(y) + (s != 0);
        }
        """))
    funcs = structure.c_functions(src)
    assert [(n, line, k) for n, line, k in funcs] == [("helper", 2, 4), ("mb_a", 7, 6)]
    assert structure.loops({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]
    assert structure.loops({"a": {"b"}, "b": {"c"}}) == []


def test_the_python_reader_sees_module_level_imports_only():
    imports = structure.py_imports()
    # trajectory.py imports dataset.py only inside functions: no edge at module level
    assert "mbint/mbs/dataset.py" not in imports["mbint/mbs/trajectory.py"]
    assert "mbint/mbs/trajectory.py" in imports["mbint/mbs/simulate.py"]
