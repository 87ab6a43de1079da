"""The line view's lines: the strongest keys of each query, bounded in number, their weights the map's."""
import numpy as np

from viz.lecture import for_projector
from viz.lines import MAX_SEGMENTS, lines_of, lines_spec


def test_each_query_keeps_its_strongest_keys_within_the_bound():
    rng = np.random.default_rng(0)
    maps = rng.random((3, 50, 50)).astype(np.float32)
    maps /= maps.sum(-1, keepdims=True)
    drawn, k, share = lines_of(maps, [0, 2], max_segments=300, min_weight=0.0)
    assert k == 3  # 300 lines / (50 queries x 2 heads)
    assert sum(q.size for q, _k, _w in drawn.values()) <= 300
    queries, keys, weights = drawn[2]
    np.testing.assert_allclose(weights, maps[2][queries, keys])
    for q in range(50):
        assert set(keys[queries == q]) == set(np.argsort(-maps[2, q])[:3])
    expected = np.sort(maps[[0, 2]], axis=-1)[..., -3:].sum() / 100
    assert abs(share - expected) < 1e-5


def test_weak_lines_are_left_out_and_512_tokens_stay_bounded():
    maps = np.full((1, 4, 4), 0.25, dtype=np.float32)
    maps[0, 0] = [0.97, 0.01, 0.01, 0.01]
    drawn, _k, _share = lines_of(maps, [0], min_weight=0.02)
    queries, keys, _w = drawn[0]
    assert keys[queries == 0].tolist() == [0]  # the 0.01 lines are not drawn
    big = np.full((12, 512, 512), 1 / 512, dtype=np.float32)
    drawn, k, _share = lines_of(big, list(range(12)), min_weight=0.0)
    assert k == 1 and sum(q.size for q, _k, _w in drawn.values()) == MAX_SEGMENTS  # ties too: exactly the bound


def test_the_selected_querys_lines_are_drawn_bright_and_its_token_marked():
    maps = np.eye(3, dtype=np.float32)[None]
    drawn, _k, _share = lines_of(maps, [0])
    fig = lines_spec(["a", "b", "<c>"], drawn, 1, "t").figure()
    bright = [tr for tr in fig.data if tr.line.width == 3]
    assert len(bright) == 1 and list(bright[0].y) == [1, 1]
    tokens = fig.data[-2]  # the left column: what a click selects
    assert list(tokens.text) == ["a", "b", "&lt;c&gt;"] and tokens.marker.color[1] == "#d62728"


def test_on_a_projector_the_token_columns_are_20_px_and_thinned_when_they_would_overlap():
    maps = np.full((1, 60, 60), 1 / 60, dtype=np.float32)
    drawn, _k, _share = lines_of(maps, [0])
    short = for_projector(
        lines_spec(["a", "b", "c"], lines_of(maps[:, :3, :3] * 20, [0])[0], 0, "t").figure().to_dict(), 480)
    assert short["layout"]["font"]["size"] == 20 and list(short["data"][-2]["text"]) == ["a", "b", "c"]
    assert short["layout"]["title"]["text"] == "t"
    long = for_projector(lines_spec([f"w{i}" for i in range(60)], drawn, 0, "t").figure().to_dict(), 480)
    for column in long["data"][-2:]:  # 330 px of room, 20 px a label: one in 4, the hover still names each
        assert [i for i, label in enumerate(column["text"]) if label] == list(range(0, 60, 4))
        assert column["customdata"][5] == "w5" and "%{customdata}" in column["hovertemplate"]
    assert long["layout"]["title"]["text"] == "t (60 tokens, one label in 4)"
