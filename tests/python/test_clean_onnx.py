"""Parity's ONNX carries no dead weight (issue 39): on a few zoo models, in every capture mode, no Identity
remains except where a graph output must alias an input, an initializer or another output; no Cast to the
dtype it already has, no Transpose of a weight read nowhere else, no BatchNormalization after a Conv. The
outputs keep the program's output names (those of the unoptimised export)."""
from collections import Counter

import onnx
import pytest
from conftest import ROOT, parity, run_capture, shared_dir

# A vision model with BatchNorm and explicit padding, an encoder-decoder, a decoder step onto a KV cache.
ZOO = ("model_mobilenet_v2", "model_bart", "model_llama_decode_step")
MODES = ("strict", "nonstrict", "decomposed")


@pytest.fixture(scope="module")
def zoo_cases(tmp_path_factory):
    def make(root):
        proc = run_capture("--out", root, "--filter", "^(" + "|".join(ZOO) + ")$", "--modes", ",".join(MODES))
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return shared_dir(tmp_path_factory, "clean_onnx_zoo", make)


def non_alias_identities(model: onnx.ModelProto) -> list[str]:
    """Identity nodes of the main graph that are not an output's alias of an input, initializer or output."""
    g = model.graph
    sources = {v.name for v in g.input} | {t.name for t in g.initializer} | {v.name for v in g.output}
    outputs = {v.name for v in g.output}
    return [n.output[0] for n in g.node
            if n.op_type == "Identity" and not (n.output[0] in outputs and n.input[0] in sources)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ZOO)
def test_exports_hold_no_dead_nodes(zoo_cases, tmp_path, case, mode):
    pt2 = zoo_cases / case / mode / "model.pt2"
    parity("export", pt2, "-o", tmp_path / "m.onnx")
    parity("export", pt2, "-o", tmp_path / "plain.onnx", "--no-optimize")
    m = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    plain = onnx.load(str(tmp_path / "plain.onnx"), load_external_data=False)
    assert non_alias_identities(m) == []
    assert [o.name for o in m.graph.output] == [o.name for o in plain.graph.output]
    assert len(m.graph.node) < len(plain.graph.node)
    ops = Counter(n.op_type for n in m.graph.node)
    assert ops["BatchNormalization"] == 0 and ops["Pad"] == 0
    weights = {t.name for t in m.graph.initializer}
    # A weight read elsewhere too (an LM head tied to the embedding) keeps its Transpose: no second copy.
    reads = Counter(i for n in m.graph.node for i in n.input)
    assert not [n.name for n in m.graph.node if n.op_type == "Transpose" and n.input[0] in weights
                and reads[n.input[0]] == 1]
    typed = {v.name: v.type.tensor_type.elem_type for v in [*m.graph.input, *m.graph.value_info]}
    same_cast = [n.name for n in m.graph.node if n.op_type == "Cast" and n.input[0] in typed
                 and n.attribute[0].i == typed[n.input[0]]]
    assert same_cast == []
    # Every value_info names a value the graph still has.
    defined = {o for n in m.graph.node for o in n.output} | {v.name for v in m.graph.input} | weights
    assert {v.name for v in m.graph.value_info} <= defined


def test_peers_node_count_counts_subgraph_bodies(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT))
    from onnx import TensorProto, helper

    from scenarios.peers import node_count
    body = helper.make_graph([helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Identity", ["t"], ["o"])],
                             "then", [], [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=other)], "g",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(g), str(tmp_path / "if.onnx"))
    assert node_count(tmp_path / "if.onnx") == 4
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    assert node_count(tmp_path / "bad.onnx") is None
