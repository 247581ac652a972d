"""Code-shape rules the tree keeps: no C++ function over 80 lines (scripts/lint/function_length.py, itself
tested on synthetic sources, so a broken checker cannot pass the tree silently), the Python lint rules of
ruff.toml (ruff check) and the C++ layout of .clang-format."""
import importlib.util
import subprocess
import sys

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("function_length", ROOT / "scripts/lint/function_length.py")
function_length = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(function_length)


def _function(name, body_lines, signature_lines=1):
    params = ",\n".join(f"    int p{i}" for i in range(signature_lines))
    body = "\n".join(f"  x += {i};  // {{ not counted" for i in range(body_lines))
    return f"int {name}({params}) {{\n  int x = 0;\n{body}\n  return x;\n}}\n"


def test_checker_finds_a_long_function_and_counts_its_wrapped_signature():
    text = "namespace a {\n" + _function("short_one", 10) + _function("long_one", 76, signature_lines=3) + "}\n"
    found = function_length.long_functions(text, 80)
    assert [(n, sig.split("(")[0]) for n, _, sig in found] == [(82, "int long_one")]
    assert function_length.long_functions(text, 82) == []


def test_checker_skips_raw_strings_and_control_blocks():
    js = 'const char* k = R"js(\n' + "\n".join("function f() { x(); }" for _ in range(100)) + '\n)js";\n'
    loop = "void g() {\n  for (int i = 0; i < 3; ++i) {\n" + "    h(i);\n" * 60 + "  }\n}\n"
    assert function_length.long_functions(js + loop, 80) == []
    assert [n for n, _, _ in function_length.long_functions(loop, 60)] == [64]


def test_no_cpp_function_over_80_lines():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/lint/function_length.py")], capture_output=True, text=True
    )
    assert proc.returncode == 0, "functions over 80 lines (split them):\n" + proc.stdout


def test_python_passes_ruff_check():
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT)]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, "ruff check (ruff.toml; `ruff check --fix` fixes some):\n" + proc.stdout + proc.stderr


def test_cpp_follows_clang_format():
    """Every tracked C++ file is laid out as .clang-format says (clang-format 14, Debian's)."""
    files = subprocess.run(["git", "ls-files", "*.cc", "*.h", "*.cpp", "*.inc"], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout.split()
    assert len(files) > 100, files
    proc = subprocess.run(["clang-format", "--dry-run", "--Werror", "--style=file", *files], capture_output=True,
                          text=True, cwd=ROOT)
    unformatted = sorted({line.split(":")[0] for line in proc.stderr.splitlines() if ": error:" in line})
    assert proc.returncode == 0, "not clang-formatted (run `clang-format -i` on them):\n" + "\n".join(unformatted)
