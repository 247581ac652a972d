"""scenarios/suite.py in-process: which cases a suite file defines, picks by name, name clashes, shards."""
import textwrap

import pytest
import torch
from conftest import ROOT  # noqa: F401  (puts the source tree on sys.path)

from scenarios import registry, suite

CASE = """
import torch
from scenarios.registry import Case, register

def sets():
    return [(torch.randn(2, 3),), (torch.randn(4, 3),)]

{body}
"""


def write(folder, name, body):
    path = folder / name
    path.write_text(textwrap.dedent(CASE.format(body=textwrap.dedent(body))))
    return path


def test_registered_and_module_level_cases_of_a_folder_sorted_without_private_files(tmp_path):
    write(tmp_path, "b.py", 'register(Case(name="beta", make_module=lambda: torch.nn.Linear(3, 2), input_sets=sets))')
    write(tmp_path, "a.py", 'alpha = Case(name="alpha", make_module=lambda: torch.nn.Tanh(), input_sets=sets)')
    write(tmp_path, "_helpers.py", 'raise RuntimeError("never imported as a suite")')
    cases = suite.select_cases([str(tmp_path)], builtin=False)
    assert [c.name for c in cases] == ["alpha", "beta"]
    assert cases[0].source_file() == str(tmp_path / "a.py")  # capture's cache follows the suite file
    assert "alpha" not in registry._CASES and "beta" not in registry._CASES  # the built-in registry stays as it was


def test_a_pick_by_case_name_variable_or_function(tmp_path):
    path = write(tmp_path, "s.py", '''
        first = Case(name="first_case", make_module=lambda: torch.nn.Tanh(), input_sets=sets)

        def scaled():
            """a model built by a function"""
            return torch.nn.Linear(3, 2), sets(), None
        ''')
    assert [c.name for c in suite.select_cases([f"{path}:first_case"], False)] == ["first_case"]
    assert [c.name for c in suite.select_cases([f"{path}:first"], False)] == ["first_case"]
    (case,) = suite.select_cases([f"{path}:scaled"], False)
    assert case.name == "scaled" and case.description == "a model built by a function"
    # Seeded by its name: the same weights on every call, a fresh module each time.
    a, b = case.module(), case.module()
    assert a is not b and torch.equal(a.weight, b.weight)
    assert [tuple(x[0].shape) for x, _ in case.examples()] == [(2, 3), (4, 3)]
    with pytest.raises(suite.SuiteError, match=r"s\.py: no case or function named 'nope' \(there are: .*first_case"):
        suite.select_cases([f"{path}:nope"], False)


def test_errors_name_the_file(tmp_path):
    empty = write(tmp_path, "empty.py", "x = 1")
    with pytest.raises(suite.SuiteError, match=r"empty\.py: defines no Case"):
        suite.select_cases([str(empty)], False)
    broken = write(tmp_path, "broken.py", "1 / 0")
    with pytest.raises(suite.SuiteError, match=r"broken\.py: ZeroDivisionError"):
        suite.select_cases([str(broken)], False)
    with pytest.raises(suite.SuiteError, match="no such suite file"):
        suite.select_cases([str(tmp_path / "missing.py")], False)
    clash = write(tmp_path, "clash.py", 'mlp_docs = Case(name="mlp_docs", make_module=torch.nn.Tanh, input_sets=sets)')
    assert [c.name for c in suite.select_cases([str(clash)], False)] == ["mlp_docs"]  # instead of the built-in one
    with pytest.raises(suite.SuiteError, match=r"clash\.py: case name 'mlp_docs' is also defined by the built-in"):
        suite.select_cases([str(clash)], True)


def test_shards_partition_the_pairs_round_robin():
    cases = [registry.Case(name=n, make_module=torch.nn.Tanh, input_sets=list) for n in "abcde"]
    modes = ["strict", "nonstrict"]
    every = suite.pairs(cases, modes)
    shares = [suite.pairs(cases, modes, (k, 3)) for k in (1, 2, 3)]
    assert sorted((c.name, m) for share in shares for c, m in share) == sorted((c.name, m) for c, m in every)
    assert [(c.name, m) for c, m in shares[1]] == [(c.name, m) for i, (c, m) in enumerate(every) if i % 3 == 1]
    assert suite.parse_shard("3/3") == (3, 3) and suite.parse_shard("") is None
    for bad in ("0/3", "4/3", "x", "1/2/3"):
        with pytest.raises(suite.SuiteError, match="K/N"):
            suite.parse_shard(bad)
