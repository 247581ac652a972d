"""python -m scenarios list: the case names, one per line."""
import sys

from .registry import all_cases

if __name__ == "__main__":
    if sys.argv[1:] not in ([], ["list"]):
        print("usage: python -m scenarios [list]", file=sys.stderr)
        sys.exit(2)
    for case in all_cases():
        print(case.name)
