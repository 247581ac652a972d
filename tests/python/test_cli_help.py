"""The README's command list against the binary: every command `parity --help` lists is in the README's
"Command line" block and back, and each command's options there are exactly those `parity <command>
--help` declares (each option is declared once, in its cli/cmd_<name>.cc, with CLI11). Also checks that
the one tolerance table is what the binary and scenarios/peers.py use."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")


def readme_commands() -> dict[str, set[str]]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Command line", 1)[1].split("```", 2)[1]
    commands: dict[str, set[str]] = {}
    current = None
    for line in block.splitlines():
        if line.startswith("parity "):
            current = line.split()[1]
            commands.setdefault(current, set())
        if current:
            commands[current] |= set(OPTION.findall(line.split(current, 1)[1] if line.startswith("parity ") else line))
    return commands


def help_text(*args: str) -> str:
    proc = subprocess.run([str(PARITY), *args, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def declared_options(command: str) -> list[set[str]]:
    """Each option of `parity <command> --help` as its set of names (`-j,--jobs` is one option)."""
    options = []
    for line in help_text(command).splitlines():
        m = re.match(r"\s+((?:-[\w-]+,?)+)", line)
        if m and m.group(1) not in ("-h,--help",):
            options.append(set(m.group(1).rstrip(",").split(",")))
    return options


def test_readme_lists_every_command_and_nothing_else():
    listed = set(re.findall(r"^\s{2}(\w+)\s{2,}", help_text().split("Subcommands:", 1)[1].split("\n\n", 1)[0], re.M))
    assert listed == set(readme_commands()), (listed, set(readme_commands()))


@pytest.mark.parametrize("command", sorted(readme_commands()))
def test_readme_options_are_the_declared_ones(command):
    readme = readme_commands()[command]
    declared = declared_options(command)
    missing = [sorted(names) for names in declared if not names & readme]
    unknown = sorted(o for o in readme if not any(o in names for names in declared))
    assert not missing and not unknown, f"README lacks {missing}, README names undeclared {unknown}"


def test_opset_range_is_checked_once_for_every_command():
    for command in (["export", "x", "-o", "y"], ["verify", "x"], ["matrix"]):
        proc = subprocess.run([str(PARITY), *command, "--opset", "99"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "--opset" in proc.stderr and "18" in proc.stderr, proc.stderr


def test_peers_use_the_one_tolerance_table():
    from scenarios import peers
    table = json.loads((ROOT / "common" / "tolerances.json").read_text())
    assert peers.TOLERANCES == {k: (v["atol"], v["rtol"]) for k, v in table.items() if isinstance(v, dict)}
    assert "bfloat16" in peers.TOLERANCES
