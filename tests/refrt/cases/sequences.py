"""Sequence and optional operators, and control flow carrying sequences (numpy / Python lists compute
the expectations). A Python list of arrays as an input or output is an ONNX sequence of tensors."""


def build(api):
    np, helper, TP, node = api.np, api.helper, api.TensorProto, api.node

    def vi(name, elem, shape):
        return helper.make_tensor_value_info(name, elem, shape)

    def seq_vi(name, elem):
        return helper.make_tensor_sequence_value_info(name, elem, None)

    def i64(v):
        return np.array(v, dtype=np.int64)

    # SequenceConstruct + SequenceAt with a negative position: tensors in, tensor out.
    a, b, c = api.rand(2, 3), api.rand(4, 3), api.rand(1, 3)
    api.case("sequence_construct_at_negative",
             [node("SequenceConstruct", ["a", "b", "c"], ["s"]), node("SequenceAt", ["s", "p"], ["y"])],
             {"a": a, "b": b, "c": c}, {"y": b}, opset=11, initializers={"p": i64(-2)})
    api.case("sequence_at_int32_position",
             [node("SequenceConstruct", ["a", "b", "c"], ["s"]), node("SequenceAt", ["s", "p"], ["y"])],
             {"a": a, "b": b, "c": c}, {"y": c}, initializers={"p": np.array(2, np.int32)})

    # SequenceInsert (front, middle by negative position, default back), SequenceErase, SequenceLength.
    x = [api.rand(2), api.rand(3)]
    t = api.rand(5)
    want = list(x)
    want.insert(0, t)
    api.case("sequence_insert_at_front", [node("SequenceInsert", ["s", "t", "p"], ["y"])],
             {"s": x, "t": t}, {"y": want}, initializers={"p": i64(0)})
    want = list(x)
    want.insert(len(want) - 1, t)
    api.case("sequence_insert_negative_position", [node("SequenceInsert", ["s", "t", "p"], ["y"])],
             {"s": x, "t": t}, {"y": want}, initializers={"p": i64(-1)})
    api.case("sequence_insert_default_appends", [node("SequenceInsert", ["s", "t"], ["y"])],
             {"s": x, "t": t}, {"y": x + [t]})
    xs = [api.ints(2), api.ints(3), api.ints(1), api.ints(4)]
    api.case("sequence_erase_position_1_int64", [node("SequenceErase", ["s", "p"], ["y"])],
             {"s": xs}, {"y": [xs[0], xs[2], xs[3]]}, initializers={"p": i64(1)})
    api.case("sequence_erase_default_last", [node("SequenceErase", ["s"], ["y"])], {"s": xs}, {"y": xs[:-1]})
    api.case("sequence_length", [node("SequenceLength", ["s"], ["n"])], {"s": xs}, {"n": i64(len(xs))})

    # SequenceEmpty then inserts: the declared dtype, a length of 0 then 2.
    u, v = api.ints(3, dtype=np.int32), api.ints(2, dtype=np.int32)
    api.case("sequence_empty_int32_then_insert",
             [node("SequenceEmpty", [], ["e"], dtype=TP.INT32), node("SequenceLength", ["e"], ["n0"]),
              node("SequenceInsert", ["e", "u"], ["s1"]), node("SequenceInsert", ["s1", "v", "p"], ["s2"]),
              node("SequenceLength", ["s2"], ["n2"]), node("ConcatFromSequence", ["s2"], ["y"], axis=0)],
             {"u": u, "v": v}, {"n0": i64(0), "n2": i64(2), "y": np.concatenate([v, u])},
             initializers={"p": i64(0)})

    # SplitToSequence: no split (pieces of 1, keepdims 0 squeezes), a scalar split with a shorter last
    # piece, a 1-D split; ConcatFromSequence back along the axis or stacked on a new one.
    x = api.rand(3, 5)
    api.case("split_to_sequence_scalar_split_remainder",
             [node("SplitToSequence", ["x", "k"], ["s"], axis=1)], {"x": x},
             {"s": [x[:, 0:2], x[:, 2:4], x[:, 4:5]]}, initializers={"k": i64(2)})
    api.case("split_to_sequence_1d_split_concat_roundtrip",
             [node("SplitToSequence", ["x", "k"], ["s"], axis=-1), node("ConcatFromSequence", ["s"], ["y"], axis=1)],
             {"x": x}, {"y": x}, initializers={"k": i64([1, 0, 4])})
    api.case("split_to_sequence_keepdims0_stack_new_axis_last",
             [node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
              node("ConcatFromSequence", ["s"], ["y"], axis=-1, new_axis=1)],
             {"x": x}, {"y": np.stack(list(x), axis=-1)})
    api.case("split_to_sequence_keepdims1_pieces_of_one",
             [node("SplitToSequence", ["x"], ["s"], axis=0)], {"x": x}, {"s": [x[i:i + 1] for i in range(3)]})
    parts = [api.rand(2, 3), api.rand(1, 3), api.rand(4, 3)]
    api.case("concat_from_sequence_axis0", [node("ConcatFromSequence", ["s"], ["y"], axis=0)],
             {"s": parts}, {"y": np.concatenate(parts, axis=0)})
    same = [api.rand(2, 3), api.rand(2, 3)]
    api.case("concat_from_sequence_new_axis_1", [node("ConcatFromSequence", ["s"], ["y"], axis=1, new_axis=1)],
             {"s": same}, {"y": np.stack(same, axis=1)})

    # Identity passes a sequence through (opset 14).
    api.case("identity_sequence", [node("Identity", ["s"], ["y"])], {"s": parts}, {"y": parts}, opset=14)

    # Optional: wrap, test, unwrap; an empty optional of a declared type has no element.
    x = api.rand(2, 2)
    empty_type = helper.make_tensor_type_proto(TP.FLOAT, [2, 2])
    api.case("optional_wrap_has_get",
             [node("Optional", ["x"], ["o"]), node("OptionalHasElement", ["o"], ["h"]),
              node("OptionalGetElement", ["o"], ["y"]),
              node("Optional", [], ["none"], type=empty_type), node("OptionalHasElement", ["none"], ["h0"])],
             {"x": x}, {"h": np.array(True), "y": x, "h0": np.array(False)})
    api.case("optional_of_sequence_get_length",
             [node("SequenceConstruct", ["a", "b"], ["s"]), node("Optional", ["s"], ["o"]),
              node("OptionalGetElement", ["o"], ["s2"]), node("SequenceLength", ["s2"], ["n"])],
             {"a": a, "b": b}, {"n": i64(2)})
    api.case("optional_has_element_plain_tensor_opset18", [node("OptionalHasElement", ["x"], ["h"])],
             {"x": x}, {"h": np.array(True)})

    # SequenceMap: a tensor given whole each time, and outputs whose shapes differ per element.
    xs = [api.rand(3), api.rand(3), api.rand(3)]
    bias = api.rand(3)
    body = helper.make_graph([helper.make_node("Add", ["e", "b"], ["o"])], "add_bias",
                             [vi("e", TP.FLOAT, [3]), vi("b", TP.FLOAT, [3])], [vi("o", TP.FLOAT, [3])])
    api.case("sequence_map_add_tensor", [node("SequenceMap", ["s", "bias"], ["y"], body=body)],
             {"s": xs, "bias": bias}, {"y": [e + bias for e in xs]}, opset=17)
    ragged = [api.rand(2, 3), api.rand(4, 1), api.rand(1, 5)]
    body = helper.make_graph([helper.make_node("Shape", ["e"], ["shape"]),
                              helper.make_node("ReduceSum", ["e"], ["total"], keepdims=0)], "shape_and_sum",
                             [vi("e", TP.FLOAT, None)], [vi("shape", TP.INT64, [2]), vi("total", TP.FLOAT, [])])
    api.case("sequence_map_two_outputs_ragged", [node("SequenceMap", ["s"], ["shapes", "sums"], body=body)],
             {"s": ragged}, {"shapes": [i64(e.shape) for e in ragged],
                             "sums": [np.array(e.astype(np.float64).sum(), np.float32) for e in ragged]},
             opset=17, tol=(1e-5, 1e-6))

    # Loop carrying a sequence: each iteration inserts x * i; the sequence is concatenated outside.
    x = api.rand(2)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
         helper.make_node("Mul", ["x", "i_f"], ["xi"]),
         helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"])],
        "loop_body", [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), seq_vi("s_in", TP.FLOAT)],
        [vi("cond_out", TP.BOOL, []), seq_vi("s_out", TP.FLOAT)])
    api.case("loop_carries_sequence",
             [node("SequenceEmpty", [], ["e"]), node("Loop", ["m", "", "e"], ["s"], body=body),
              node("ConcatFromSequence", ["s"], ["y"], axis=0)],
             {"x": x, "m": i64(4)}, {"y": np.concatenate([x * np.float32(i) for i in range(4)])}, opset=13)

    # If whose branches return sequences of different lengths.
    a2, b2 = api.rand(3), api.rand(3)
    then_g = helper.make_graph([helper.make_node("SequenceConstruct", ["a", "b"], ["t"])], "then", [],
                               [seq_vi("t", TP.FLOAT)])
    else_g = helper.make_graph([helper.make_node("SequenceConstruct", ["b"], ["e"])], "else", [],
                               [seq_vi("e", TP.FLOAT)])
    for flag in (True, False):
        api.case(f"if_returns_sequence_{str(flag).lower()}",
                 [node("If", ["c"], ["s"], then_branch=then_g, else_branch=else_g)],
                 {"c": np.array(flag), "a": a2, "b": b2}, {"s": [a2, b2] if flag else [b2]}, opset=13)
