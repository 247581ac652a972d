"""The `parity` command that `pip install` puts on PATH: runs the package's binary (or, in a checkout, the
developer build) with the environment it needs (_paths.binary_env)."""
from __future__ import annotations

import os
import sys

from ._paths import ParityError, binary_env, parity_bin


def main() -> None:
    try:
        binary = str(parity_bin())
    except ParityError as e:
        sys.exit(f"parity: {e}")
    os.execve(binary, [binary, *sys.argv[1:]], binary_env())


if __name__ == "__main__":
    main()
