"""Every download of every page, for every kind of model, clicked in a real browser and the file opened.

Every file is named by page, model, layer and head (views/widgets/file_names.py), and a CSV starts with a UTF-8 byte
order mark, for Excel. Pages x model sources: the pretrained default, a random model with learned and with sinusoidal
positions, a BERT and a GPT-2 checkpoint directory the server's operator names (ATTNVIZ_MODEL_DIRS; the GPT-2 one
with its own byte-level BPE tokenizer), the shipped toy GPT (causal: every map is 0 above its diagonal), and the
shipped translator on the pages that offer it (its encoder on the masks page, the whole model on the encoder-decoder
page). Each cell
clicks every download button (CSV read back, .npz opened with allow_pickle=False; on the pages whose files hold the
model's trace or maps, their shapes checked against the model) and one chart's camera button (PNG or SVG, the format the
link asks for: each page gets both across its sources).
"""
import csv
import io
import json
import os
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
import torch

from harness.servers import spawn
from model.causal.reading import shown_tokens
from model.gpt import toy as gpt_toy
from model.loading.sources import packaged_model_dir
from model.positional import sinusoidal_table
from model.translator import SHIPPED
from tests.e2e.streamlit_browser import TIMEOUT, count_runs, download, wait_runs
from views.shell.registry import MODEL, PAGES

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Hello attention maps"
SRC, TGT = "The cat sat", "Le chat"
CHINESE, ENGLISH = "我有一只猫", ["<bos>", "I", "have", "a", "cat"]  # the translator's source, its own translation
TINY_BERT = "tiny-bert"  # the directory's name: its source key is dir:tiny-bert
TINY_GPT2 = "tiny-gpt2"  # dir:tiny-gpt2
TOY_TEXT = "the teacher saw a cat . the teacher saw a cat"  # the toy GPT's words (docs/toy-language.md)
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
RANDOM = {"model": "random", "d_model": 64, "heads": 2, "layers": 2, "d_ff": 128}


@dataclass(frozen=True)
class Source:
    name: str
    params: dict  # what the link says about the model
    picked: str  # how the model picker names it
    image: str  # the chart format asked for: png or svg
    causal: bool = False  # a GPT: its maps are 0 above the diagonal on every page

    def sizes(self, tiny_config: dict) -> tuple[int, int, int]:
        """(layers, heads, width) of this source's model."""
        if self.name.startswith("gpt"):
            config = json.loads(((gpt_toy.SHIPPED if self.name != "gpt2-dir" else tiny_config["gpt2_dir"]) /
                                 "config.json").read_text())
            return config["n_layer"], config["n_head"], config["n_embd"]
        if self.name == "minilm":
            config = json.loads((packaged_model_dir() / "config.json").read_text())
        elif self.name == "dir":
            config = tiny_config
        elif self.name == "translator":
            config = json.loads((SHIPPED / "config.json").read_text())
            return config["num_layers"], config["nhead"], config["d_model"]
        else:
            return self.params["layers"], self.params["heads"], self.params["d_model"]
        return config["num_hidden_layers"], config["num_attention_heads"], config["hidden_size"]


SOURCES = {s.name: s for s in (
    Source("minilm", {"model": "minilm"}, "all-MiniLM-L6-v2 (pretrained", "png"),
    Source("random-learned", {**RANDOM, "positional": "learned"}, "Random Transformer", "svg"),
    Source("random-sinusoidal", {**RANDOM, "positional": "sinusoidal"}, "Random Transformer", "png"),
    Source("dir", {"model": f"dir:{TINY_BERT}"}, f"{TINY_BERT} (server directory)", "svg"),
    Source("translator", {"model": "translator", "src": CHINESE, "tgt": ""}, "Translator (trained here", "svg"),
    Source("gpt", {"model": "gpt", "text": TOY_TEXT}, "Toy GPT (trained here", "png", causal=True),
    Source("gpt2-dir", {"model": f"dir:{TINY_GPT2}", "text": "attention is all you need",
                        "prompt": "attention is all you need"}, f"{TINY_GPT2} (server directory)", "svg", causal=True),
    Source("gpt-lens", {"model": "gpt", "part": "lens"}, "Toy GPT (trained here", "png", causal=True),
)}
LANGUAGE_MODEL = "language-model"  # its own picker of language models: the toy GPT and GPT-2 checkpoints
PICKER_PAGES = [spec.path for spec in PAGES if MODEL in spec.needs]  # pages with the model picker
TRANSLATOR_PAGES = [spec.path for spec in PAGES if spec.translator] + ["encoder-decoder"]
ONLY_TRANSLATOR = ["translate"]  # pages of the trained translator alone: no model to pick
NO_MODEL = ["tour"]  # links to the other pages: nothing to download
# pages about SmolLM2 by design (a chat model; its weights): their files are opened and checked in AppTest
# (tests/views/test_ask_page.py, tests/views/test_modern_page.py)
ONLY_LLM = ["ask", "modern"]
NOT_RANDOM = [*ONLY_TRANSLATOR, *NO_MODEL, *ONLY_LLM, LANGUAGE_MODEL]
RANDOM_PAGES = [spec.path for spec in PAGES if MODEL not in spec.needs and spec.path not in NOT_RANDOM]
PICKED = [s for s in SOURCES if s != "gpt-lens"]  # gpt-lens: the Language model page's lens part alone
CELLS = ([(p, s) for p in PICKER_PAGES for s in PICKED if s != "translator" or p in TRANSLATOR_PAGES]
         + [pytest.param(LANGUAGE_MODEL, s, id=f"{LANGUAGE_MODEL}-{s}") for s in ("gpt", "gpt2-dir", "gpt-lens")]
         + [pytest.param(p, s, id=f"{p}-{s}") for p in RANDOM_PAGES for s in ("random-learned", "random-sinusoidal")]
         + [pytest.param(p, "translator", id=f"{p}-translator") for p in ["encoder-decoder", *ONLY_TRANSLATOR]])


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> tuple[Path, dict]:
    """A random tiny Hugging Face BERT with all-MiniLM-L6-v2's tokenizer: 3 layers x 4 heads, width 32."""
    import transformers  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    directory = tmp_path_factory.mktemp("checkpoints") / TINY_BERT
    vocab = (packaged_model_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=3,
                                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(directory)
    for name in TOKENIZER_FILES:
        shutil.copy(packaged_model_dir() / name, directory / name)
    return directory, config.to_dict()


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A random tiny Hugging Face GPT-2 (3 layers x 6 heads, width 48) with a byte-level BPE tokenizer of its own."""
    from tests.model.gpt.gpt_checkpoints import gpt2_tokenizer, save_tiny_gpt2  # noqa: PLC0415 - start-up cost: transformers

    directory = tmp_path_factory.mktemp("gpt2") / TINY_GPT2
    return gpt2_tokenizer(save_tiny_gpt2(directory, "wide-ffn"))  # 40 positions: the text's 24 BPE tokens fit


@pytest.fixture(scope="session")
def dir_server(tiny_bert_dir, tiny_gpt2_dir):
    """The app with the tiny checkpoints configured by its operator: every source is offered."""
    dirs = os.pathsep.join([str(tiny_bert_dir[0]), str(tiny_gpt2_dir)])
    try:
        with spawn(ROOT / "app.py", session_ttl=None, env={"ATTNVIZ_MODEL_DIRS": dirs}) as running:
            yield running
    except RuntimeError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def tokenize():
    from transformers import AutoTokenizer  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    tokenizer = AutoTokenizer.from_pretrained(packaged_model_dir(), local_files_only=True)
    return lambda text: tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


def open_cell(page, server, path: str, source: Source):
    params = {"text": TEXT, "src": SRC, "tgt": TGT, "layer": 0, "head": 0, **source.params, "img": source.image}
    query = "&".join(f"{k}={quote(str(v))}" for k, v in params.items())
    count_runs(page)
    page.goto(f"{server.url}{'' if path == 'heatmap' else path}?{query}")
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=TIMEOUT)
    wait_runs(page, 1)
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()
    assert "Ignored" not in " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())  # the link applied
    if path in [*PICKER_PAGES, "encoder-decoder", LANGUAGE_MODEL]:  # the link's model, not the default
        picked = "Random encoder-decoder" if path == "encoder-decoder" and "random" in source.name else source.picked
        assert page.get_by_role("combobox", name="Model", exact=True).input_value().startswith(picked)


def click_download_button(page, label: str, tmp_path: Path) -> Path:
    """A download button's file; returns once the rerun its click causes has finished, so that the next click
    meets the buttons that rerun drew."""
    before = page.runs
    path = download(page, page.get_by_role("button", name=label).click, tmp_path)
    wait_runs(page, before + 1)
    return path


def read_csv(path: Path, tokens: list[str], causal: bool) -> np.ndarray:
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf"), data[:16]  # UTF-8's byte order mark: Excel reads it as UTF-8
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == ["query \\ key"] + [f"{j}:{t}" for j, t in enumerate(tokens)]
    assert [row[0] for row in rows[1:]] == [f"{i}:{t}" for i, t in enumerate(tokens)]
    probs = np.array([[float(x) for x in row[1:]] for row in rows[1:]])  # (T, T)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)  # each query's probabilities
    if causal:
        assert np.all(np.triu(probs, 1) == 0)
    return probs


def check_trace_npz(path: Path, tokens: list[str], sizes: tuple[int, int, int], sinusoidal: bool,
                    causal: bool) -> None:
    layers, heads, width = sizes
    T, hd = len(tokens), width // heads
    with np.load(path, allow_pickle=False) as npz:
        arrays = dict(npz)
    assert arrays["tokens"].tolist() == tokens and arrays["padding"].shape == (T,)
    for name in ("token", "position", "summed", "output"):
        assert arrays[f"embeddings_{name}"].shape == (T, width), name
    assert np.allclose(arrays["embeddings_position"], sinusoidal_table(T, width).numpy()) == sinusoidal
    assert sorted(k for k in arrays if k.endswith("_probs")) == sorted(f"layer{i}_probs" for i in range(layers))
    for i in range(layers):
        for name, shape in (("q", (heads, T, hd)), ("k", (heads, T, hd)), ("v", (heads, T, hd)),
                            ("scores", (heads, T, T)), ("probs", (heads, T, T)), ("context", (heads, T, hd)),
                            ("output", (T, width))):
            assert arrays[f"layer{i}_{name}"].shape == shape, f"layer{i}_{name}"
            assert np.isfinite(arrays[f"layer{i}_{name}"]).all(), f"layer{i}_{name}"
        np.testing.assert_allclose(arrays[f"layer{i}_probs"].sum(axis=-1), 1.0, atol=1e-5)
        if causal:
            assert np.all(np.triu(arrays[f"layer{i}_probs"], 1) == 0)


def check_seq2seq_npz(path: Path, src: list[str], tgt: list[str], sizes: tuple[int, int, int]) -> None:
    layers, heads, _ = sizes
    S, T = len(src), len(tgt)
    with np.load(path, allow_pickle=False) as npz:
        arrays = dict(npz)
    assert arrays["src_tokens"].tolist() == src and arrays["tgt_tokens"].tolist() == tgt
    for name, shape in (("encoder_self", (S, S)), ("decoder_self", (T, T)), ("cross", (T, S))):
        assert arrays[name].shape == (layers, heads, *shape), name
        np.testing.assert_allclose(np.nansum(arrays[name], axis=-1), 1.0, atol=1e-5)
    assert np.isnan(arrays["decoder_self"][..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]]).all()


def file_name_start(path: str, source: Source) -> str:
    """How the files of the page at /path start: page, then model (the Translate page has no model picker)."""
    if path == "translate":
        return "translate_"
    model = {"minilm": "all-MiniLM-L6-v2", "dir": TINY_BERT, "translator": "translator", "gpt": "toy-gpt",
             "gpt-lens": "toy-gpt", "gpt2-dir": TINY_GPT2}.get(
        source.name, "random-d{d_model}-h{heads}-l{layers}".format(**RANDOM))
    return f"{path}_{model}"


def check_name(file: Path, start: str, *parts: str) -> Path:
    """A downloaded file's name: ASCII, bounded, starts with page and model, and says each of parts."""
    name = file.name
    assert name.isascii() and len(name) <= 120 and name.startswith(start), name
    assert all(part in name for part in parts), (name, parts)
    return file


def check_chart_image(page, image: str, tmp_path: Path, start: str = "") -> None:
    """The first chart's camera button saves it in the format the link asked for, named by page and model."""
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    chart.hover()
    camera = chart.locator('.modebar-btn[data-title^="Download plot"]')
    file = download(page, camera.click, tmp_path)
    check_name(file, start, f".{image}")
    data = file.read_bytes()
    if image == "png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000
    else:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg") and len(root) > 0


@pytest.mark.parametrize("path, source", CELLS)
def test_every_download_opens(page, dir_server, tiny_bert_dir, tiny_gpt2_dir, tokenize, tmp_path, path, source):
    log_start = dir_server.log.stat().st_size
    page.console = []
    page.on("console", lambda m: page.console.append(m.text))
    try:
        run_cell(page, dir_server, path, SOURCES[source], {**tiny_bert_dir[1], "gpt2_dir": tiny_gpt2_dir}, tokenize,
                 tmp_path)
    except AssertionError as e:  # the server's side of it
        raise AssertionError(f"{e}\nserver log during this cell:\n{log_since(dir_server, log_start)[-4000:]}") from e
    assert "Traceback" not in log_since(dir_server, log_start)


def log_since(server, start: int) -> str:
    """What the server logged since `start` bytes."""
    with server.log.open("rb") as log:
        log.seek(start)
        return log.read().decode(errors="replace")


def run_cell(page, dir_server, path: str, source: Source, tiny_config: dict, tokenize, tmp_path: Path) -> None:
    """Open the page for the source, click each download, open the file, save one chart."""
    sizes, tokens = source.sizes(tiny_config), tokenize(TEXT)
    sinusoidal = source.params.get("positional") == "sinusoidal"
    if source.name == "translator":
        tokens, sinusoidal = list(CHINESE), True
    elif source.name == "gpt":
        tokens = TOY_TEXT.split()
    elif source.name == "gpt2-dir":
        tokens = tokenize_gpt2(tiny_config["gpt2_dir"], source.params["text"])
    open_cell(page, dir_server, path, source)
    start = file_name_start(path, source)

    opened = set()

    def clicked(label: str, *parts: str) -> Path:
        opened.add(label)
        return check_name(click_download_button(page, label, tmp_path), start, *parts)

    if path == "heatmap":
        read_csv(clicked("Download this map (CSV)", "_layer0_head0", ".csv"), tokens, causal=source.causal)
        check_trace_npz(clicked("Download the whole trace (NumPy .npz)", ".npz"), tokens, sizes, sinusoidal,
                        causal=source.causal)
    elif path == "masks":  # the page's default mask is causal
        read_csv(clicked("Download this masked map (CSV)", "_layer0_head0", ".csv"), tokens, causal=True)
        check_trace_npz(clicked("Download the whole masked trace (NumPy .npz)", ".npz"), tokens, sizes, sinusoidal,
                        causal=True)
    elif path == "encoder-decoder":
        src, tgt = (list(CHINESE), ENGLISH) if source.name == "translator" else (tokenize(SRC), tokenize(TGT))
        check_seq2seq_npz(clicked("Download these attentions (NumPy .npz)", ".npz"), src, tgt, sizes)
    elif path == "translate":
        check_decoding_npz(clicked("Download this decoding (NumPy .npz)", ".npz"), sizes)
    elif path == LANGUAGE_MODEL and source.name != "gpt-lens":
        check_writing_npz(clicked("Download this writing (NumPy .npz)", ".npz"), sizes)
        check_distribution_csv(clicked("Download step 0's distribution (CSV)", "_step0", ".csv"))
    for label in download_labels(page):  # the rest of the page's files (the views': lines, neurons, atlas...)
        if label not in opened:
            check_any_file(clicked(label))
    check_chart_image(page, source.image, tmp_path, start)
    assert not page.errors, page.errors


def tokenize_gpt2(directory: Path, text: str) -> list[str]:
    from transformers import AutoTokenizer  # noqa: PLC0415 - start-up cost: transformers takes seconds to import

    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    return list(shown_tokens(tokenizer, tokenizer(text)["input_ids"]))  # " is", not "Ġis": as the pages show them


def download_labels(page) -> list[str]:
    """The labels of the page's download buttons, in page order."""
    buttons = page.locator('[data-testid="stDownloadButton"] button')
    return [buttons.nth(i).inner_text().strip() for i in range(buttons.count())]


def check_any_file(path: Path) -> None:
    """A file a page offers, opened as its kind: a CSV with the byte order mark and one header and at least one row of
    the same width; an .npz without pickle, every array numbers or strings."""
    data = path.read_bytes()
    assert data, path.name
    if path.suffix == ".csv":
        assert data.startswith(b"\xef\xbb\xbf"), (path.name, data[:16])
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
        assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows), path.name
    else:
        assert path.suffix == ".npz", path.name
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        assert arrays and all(a.dtype.kind in "biufU" for a in arrays.values()), (path.name, {
            name: a.dtype for name, a in arrays.items()})


def check_writing_npz(path: Path, sizes: tuple[int, int, int]) -> None:
    """The Language model page's writing: every token read, the words written greedily, each step's candidates (the
    chosen word first) and every attention map, causal (NaN above the diagonal), each row summing to 1."""
    layers, heads, _ = sizes
    with np.load(path, allow_pickle=False) as npz:
        arrays = dict(npz)
    P, words = int(arrays["prompt_tokens"]), arrays["words"].tolist()
    T = P + len(words) - 1
    assert len(arrays["tokens"]) == T and arrays["candidates"][:, 0].tolist() == words  # greedy
    assert arrays["attentions"].shape == (layers, heads, T, T)
    np.testing.assert_allclose(np.nansum(arrays["attentions"], axis=-1), 1.0, atol=1e-5)
    assert np.isnan(arrays["attentions"][..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]]).all()
    assert (np.diff(arrays["candidate_probs"], axis=1) <= 1e-7).all()


def check_distribution_csv(path: Path) -> None:
    """One step's ten most likely next words, most likely first, the greedy choice marked."""
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == ["rank", "word", "probability", "probability_before_cuts", "chosen"] and len(rows) == 11
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 11)) and rows[1][4] == "1"
    assert all(float(a[2]) >= float(b[2]) for a, b in zip(rows[1:], rows[2:]))


def check_decoding_npz(path: Path, sizes: tuple[int, int, int]) -> None:
    """The Translate page's decoding of 我有一只猫: I have a cat <eos>, each step's candidates and attentions."""
    layers, heads, _ = sizes
    with np.load(path, allow_pickle=False) as npz:
        arrays = dict(npz)
    words = ENGLISH[1:] + ["<eos>"]
    assert arrays["src_tokens"].tolist() == list(CHINESE) and arrays["words"].tolist() == words
    assert arrays["inputs"].tolist() == ENGLISH and arrays["candidates"][:, 0].tolist() == words  # greedy
    T, S = len(words), len(CHINESE)
    for name, shape in (("encoder_self", (S, S)), ("decoder_self", (T, T)), ("cross", (T, S))):
        assert arrays[name].shape == (layers, heads, *shape), name
        np.testing.assert_allclose(np.nansum(arrays[name], axis=-1), 1.0, atol=1e-5)
    assert (arrays["candidate_probs"] <= 1).all() and (np.diff(arrays["candidate_probs"], axis=1) <= 1e-7).all()
