"""Identity over several dtypes: the smallest table, and a template for the others."""


def build(api):
    np = api.np
    for dt in (np.float32, np.float64, np.int8, np.int64, np.uint8, np.bool_):
        x = (api.rand(2, 3) > 0) if dt is np.bool_ else api.rand(2, 3, low=-5, high=5).astype(dt)
        api.case(f"identity_table_{np.dtype(dt).name}", [api.node("Identity", ["x"], ["y"])], {"x": x}, {"y": x.copy()})
