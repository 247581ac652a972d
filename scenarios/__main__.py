"""python -m scenarios list [--scenarios FILE_OR_DIR[:NAME]]... [--with-builtin]: the case names, one per line."""
import argparse
import sys

from . import suite

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m scenarios")
    parser.add_argument("command", nargs="?", default="list", choices=["list"])
    parser.add_argument("--scenarios", action="append", default=[], metavar="FILE_OR_DIR[:NAME]")
    parser.add_argument("--with-builtin", action="store_true")
    args = parser.parse_args()
    try:
        cases = suite.select_cases(args.scenarios, args.with_builtin or not args.scenarios)
    except suite.SuiteError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(3)
    for case in cases:
        print(case.name)
