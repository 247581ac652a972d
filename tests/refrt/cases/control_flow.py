"""If / Loop / Scan with subgraphs that read outer-scope values (numpy computes the expectations)."""


def build(api):
    np, helper, TP = api.np, api.helper, api.TensorProto

    def vi(name, elem, shape):
        return helper.make_tensor_value_info(name, elem, shape)

    # If: each branch reads a different outer value; nested If inside the then-branch.
    x, w = api.rand(3, 4), api.rand(3, 4)
    for flag in (True, False):
        inner_then = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t2"])], "inner_then", [],
                                       [vi("t2", TP.FLOAT, [3, 4])])
        inner_else = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["e2"])], "inner_else", [],
                                       [vi("e2", TP.FLOAT, [3, 4])])
        then_g = helper.make_graph([helper.make_node("If", ["c"], ["t1"], then_branch=inner_then, else_branch=inner_else)],
                                   "then", [], [vi("t1", TP.FLOAT, [3, 4])])
        else_g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["e1"])], "else", [], [vi("e1", TP.FLOAT, [3, 4])])
        c = np.array(flag)
        want = x * w if flag else x + w
        api.case(f"if_nested_outer_scope_{str(flag).lower()}",
                 [api.node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 {"c": c, "x": x, "w": w}, {"y": want.astype(np.float32)})

    # Loop: trip count and condition; carried sum plus a scan output; the body reads outer `step`.
    step = api.rand(2, low=0.5, high=1.0)
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
         helper.make_node("Mul", ["acc_out", "i_f"], ["scan_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("acc_in", TP.FLOAT, [2])],
        [vi("cond_out", TP.BOOL, []), vi("acc_out", TP.FLOAT, [2]), vi("scan_out", TP.FLOAT, [2])])
    acc0 = api.rand(2)
    acc, rows = acc0.copy(), []
    for i in range(5):
        acc = acc + step
        rows.append(acc * np.float32(i))
    api.case("loop_trip_count_outer_scope", [api.node("Loop", ["m", "", "acc0"], ["acc", "scans"], body=body)],
             {"m": np.array(5, dtype=np.int64), "acc0": acc0, "step": step},
             {"acc": acc.astype(np.float32), "scans": np.stack(rows).astype(np.float32)})

    # Loop that stops on its condition (counts down while > 0); M is absent.
    body = helper.make_graph(
        [helper.make_node("Sub", ["n_in", "one"], ["n_out"]),
         helper.make_node("Greater", ["n_out", "zero"], ["cond_out"])],
        "countdown", [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("n_in", TP.INT64, [])],
        [vi("cond_out", TP.BOOL, []), vi("n_out", TP.INT64, [])],
        [helper.make_tensor("one", TP.INT64, [], [1]), helper.make_tensor("zero", TP.INT64, [], [0])])
    api.case("loop_condition_only_countdown", [api.node("Loop", ["", "go", "n0"], ["n"], body=body)],
             {"go": np.array(True), "n0": np.array(7, dtype=np.int64)}, {"n": np.array(0, dtype=np.int64)})

    # Scan: running sum over axis 1 in reverse, scan output along axis 1, outer bias read in the body.
    xs, bias, s0 = api.rand(2, 5), api.rand(2), api.rand(2)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_mid"]), helper.make_node("Add", ["s_mid", "bias"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "scan_body", [vi("s_in", TP.FLOAT, [2]), vi("x_t", TP.FLOAT, [2])],
        [vi("s_out", TP.FLOAT, [2]), vi("y_t", TP.FLOAT, [2])])
    s, ys = s0.copy(), [None] * 5
    for t in range(5):
        s = s + xs[:, 4 - t] + bias
        ys[t] = s
    api.case("scan_reverse_axis1_outer_scope",
             [api.node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1, scan_input_axes=[1],
                       scan_input_directions=[1], scan_output_axes=[1])],
             {"s0": s0, "xs": xs, "bias": bias},
             {"s": s.astype(np.float32), "ys": np.stack(ys, axis=1).astype(np.float32)}, opset=18, tol=(1e-5, 1e-6))

    # Scan-8: batch axis 0, sequence axis 1, per-batch sequence_lens, the second scan input reversed;
    # the scan output of the shorter sequence is padded with zeros.
    # (its own generator: drawing from api.RNG would shift every later table's values)
    rng = np.random.default_rng(8)
    xs, ws, s0 = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((2, 3, 2), (2, 3, 2), (2, 2)))
    lens = np.array([3, 2], np.int64)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_mid"]), helper.make_node("Mul", ["s_mid", "w_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "scan8_body", [vi("s_in", TP.FLOAT, [2]), vi("x_t", TP.FLOAT, [2]), vi("w_t", TP.FLOAT, [2])],
        [vi("s_out", TP.FLOAT, [2]), vi("y_t", TP.FLOAT, [2])])
    finals, ys = [], np.zeros((2, 3, 2), np.float32)
    for b in range(2):
        s, n = s0[b].copy(), lens[b]
        for t in range(n):
            s = (s + xs[b, t]) * ws[b, n - 1 - t]
            ys[b, t] = s
        finals.append(s)
    api.case("scan8_batch_sequence_lens_reverse_input",
             [api.node("Scan", ["lens", "s0", "xs", "ws"], ["s", "ys"], body=body, num_scan_inputs=2,
                       directions=[0, 1])],
             {"lens": lens, "s0": s0, "xs": xs, "ws": ws},
             {"s": np.stack(finals).astype(np.float32), "ys": ys}, opset=8, tol=(1e-5, 1e-6))
