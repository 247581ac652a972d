"""Lists C++ functions longer than a limit (default 80 lines), longest first; exits 1 if there are any.

    python scripts/lint/function_length.py [--limit N] [PATH ...]

A function is a brace block opened on a line that ends a signature (a `)` and `{`, not a control
statement, a namespace, a class or an initializer); its length runs from the signature's first line to its closing brace,
lambdas and local classes included. Raw string literals (the report's inline JavaScript and CSS) are
skipped: they are not C++. A heuristic, not a parser: it is exact on this tree's formatting.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_PATHS = ["common", "exporter", "refrt", "verify", "cli", "python/src", "tests", "benchmarks", "scenarios"]
SUFFIXES = {".cc", ".h", ".cpp", ".inc"}
SIGNATURE_END = re.compile(
    r"^\s*(?!(if|for|while|switch|catch|do|else|return|namespace|class|struct|enum|union|extern)\b)"
    r"[^;{}=]*\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*(//.*)?$")
RAW_OPEN = re.compile(r'R"(\w*)\(')


def code_only(line):
    """The line without string/char literals and // comments (so their braces do not count)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def signature_start(lines, i):
    """The first line of a signature that ends on line i (parameters may wrap over several lines)."""
    while i > 0:
        prev = lines[i - 1].strip()
        if not prev or prev.endswith((";", "{", "}", ":")) or prev.startswith(("//", "#")):
            break
        i -= 1
    return i


def long_functions(text, limit):
    """(length, first line number, signature line) of every function in `text` longer than `limit`."""
    found, depth, start, start_depth, raw_end = [], 0, None, 0, None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if raw_end is not None:  # inside a raw string literal
            if raw_end in line:
                raw_end = None
            continue
        opened = RAW_OPEN.search(line)
        if opened and ")" + opened.group(1) + '"' not in line[opened.end():]:
            raw_end = ")" + opened.group(1) + '"'
            line = line[:opened.start()]
        if start is None and SIGNATURE_END.match(line):
            start, start_depth = signature_start(lines, i), depth
        code = code_only(line)
        depth += code.count("{") - code.count("}")
        if start is not None and depth <= start_depth:
            if i - start + 1 > limit:
                found.append((i - start + 1, start + 1, lines[start].strip()))
            start = None
    return found


def scan(paths, limit):
    out = []
    for base in paths:
        base = pathlib.Path(base)
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.suffix in SUFFIXES)
        for f in files:
            for n, line, sig in long_functions(f.read_text(errors="replace"), limit):
                out.append((n, f"{f}:{line}", sig))
    return sorted(out, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    paths = args.paths or [ROOT / p for p in DEFAULT_PATHS]
    found = scan(paths, args.limit)
    for n, where, sig in found:
        print(f"{n:4d} lines  {where}  {sig[:90]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
