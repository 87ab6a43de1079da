"""Every page of the app, declared once: app.py's navigation, the page frame, the tests and the README read this.

Adding a page is one entry here and one module in views/ with a `view(page)` function (views/shell/frame.py says what
`page` holds). `needs` says what the frame draws and computes before it calls the page:

- "model": the model picker in the sidebar (and a random model's settings); `page.choice`
- "text": the sentence box, bound to ?text=; the page stops with a hint while it is empty; `page.text`
- "run": the forward pass of that model on that text (needs the other two); `page.run`

`translator` (with "model"): the shipped Chinese -> English translator is among the models, run as the encoder it
has (its self-attention over the Chinese characters); its text box is then the Chinese source, ?src=.

With "text", the text box and everything below it are one fragment: typing or moving a slider reruns only that
part of the page, not the sidebar. A module may also define `intro()`, drawn under the caption before the text box.
"""
from dataclasses import dataclass

from locales import N_

MODEL, TEXT, RUN = "model", "text", "run"


@dataclass(frozen=True)
class PageSpec:
    path: str  # URL path: /<path>?...; the default page is also served at /
    title: str  # English, marked N_(): shown as _(title)
    icon: str  # a Material Symbol, which Streamlit ships: shown offline, without emoji fonts
    module: str  # the page's module, with view(page) and optionally intro()
    caption: str  # one or two sentences under the title: what the page shows (English, marked N_())
    needs: frozenset[str] = frozenset()
    default: bool = False
    translator: bool = False  # the model picker offers the translator (its encoder)
    params: frozenset[str] = frozenset()  # the link parameters the page reads itself, beyond SHARED_PARAMS


# What the shell and the frame read for every page: a link carries them from page to page (the language, lecture
# mode, the tour's stop, the chart format, the model and a random model's settings, the text, the layer and head).
SHARED_PARAMS = frozenset({
    "lang", "lecture", "stage", "tour", "img", "model", "d_model", "heads", "layers", "d_ff", "activation", "norm",
    "positional", "seed", "text", "src", "layer", "head", "mean", "special"})


_ALL = frozenset({MODEL, TEXT, RUN})

PAGES: tuple[PageSpec, ...] = (
    PageSpec("heatmap", N_("Attention heatmap"), ":material/grid_on:", "views.pages.heatmap",
             N_("Each row is a query token; its cells are the softmax probabilities over the keys it attends to. "
             "Every row sums to 1."), _ALL, default=True,
             params=frozenset({"auto"})),
    PageSpec("all-heads", N_("All heads"), ":material/apps:", "views.pages.all_heads",
             N_("Every layer (rows) × every head (columns) at once, each tile a query × key attention map. "
             "Pick a head below, or click its tile, to look at it large."), _ALL,
             params=frozenset({"auto", "pool", "tile"})),
    PageSpec("softmax", N_("Softmax rows"), ":material/bar_chart:", "views.pages.softmax",
             N_("One query token's row of attention, step by step: the dot products with every key, scaled, "
             "masked, and turned into probabilities that sum to 1."), _ALL,
             params=frozenset({"query", "temp"})),
    PageSpec("steps", N_("Step by step"), ":material/stairs:", "views.pages.steps",
             N_("One encoder layer, one head, every tensor on the way: each heatmap is tokens (rows) by dimensions or "
             "keys (columns). Orange is positive, blue negative; probabilities use a fixed 0..1 scale."), _ALL,
             params=frozenset({"dim0", "row0"})),
    PageSpec("masks", N_("Masks"), ":material/filter_alt:", "views.pages.masks",
             N_("A mask decides which keys each query may attend to. Pick one and see the mask matrix, "
             "the attention under it, and how it differs from the attention without a mask."), _ALL, translator=True,
             params=frozenset({"blocked", "mask", "mask_map", "pad_to"})),
    PageSpec("positional", N_("Positional encoding"), ":material/waves:", "views.pages.positional",
             N_("Attention itself does not know the order of the tokens: each token's vector gets a position "
             "vector added. The original Transformer uses fixed sines and cosines; BERT learns one vector per "
             "position."), frozenset({MODEL}),
             params=frozenset({"pe_base", "pe_d", "pe_dims", "pe_from", "pe_n", "pe_sim", "pe_to"})),
    PageSpec("architecture", N_("Architecture"), ":material/account_tree:", "views.pages.architecture",
             N_("What the Transformer is made of: the parameters and the matrix-multiply FLOPs of every module, "
             "by the textbook's formulas checked against PyTorch, and the shape of every tensor for your sentence."),
             frozenset({TEXT})),
    PageSpec("encoder-decoder", N_("Encoder-decoder"), ":material/translate:", "views.encoder_decoder.page",
             N_("The encoder reads the source; the decoder reads the target so far. Each decoder layer first attends "
             "to earlier target tokens (masked self-attention), then to the encoder's output (cross-attention)."),
             params=frozenset({"tgt"})),
    PageSpec("translate", N_("Translate"), ":material/g_translate:", "views.translate.page",
             N_("A translator trained by this project writes Chinese as English one word at a time: step through its "
             "decoding, see where each word looks, switch heads off, and watch it learn."),
             params=frozenset({"off", "part", "snap", "tgt", "step", "beam", "decode", "draw", "temperature", "top_k",
                               "top_p"})),
    PageSpec("language-model", N_("Language model"), ":material/edit_note:", "views.language_model.page",
             N_("A GPT writes the next word: see the words it weighs and where each word it writes looks, watch an "
                "induction head copy from context, switch heads off, and watch the induction head form in training."),
             params=frozenset({"prompt", "words", "off", "part", "step", "decode", "draw", "temperature", "top_k",
                               "top_p", "probe_seed", "source", "snap"})),
    PageSpec("ask", N_("Ask"), ":material/chat:", "views.ask.page",
             N_("Ask a real chat model a question and watch it answer token by token; then pick any word of the answer "
                "and see which words of your question it drew on, in which layer and head."),
             params=frozenset({"q", "most", "off", "part", "step", "every", "grad", "evict", "decode", "draw",
                               "temperature", "top_k", "top_p"})),
    PageSpec("lines", N_("Line view"), ":material/linear_scale:", "views.pages.lines",
             N_("Tokens in two columns, a line from each query (left) to the keys it attends to (right), darker for "
                "more attention, one colour per head. Click a token to bring out its lines and its row."), _ALL,
             translator=True,
             params=frozenset({"query", "lines_heads"})),
    PageSpec("neurons", N_("Neuron view"), ":material/scatter_plot:", "views.pages.neurons",
             N_("One query in one head, dimension by dimension: its vector q, every key's vector k, their elementwise "
                "products (which add up to the dot product), the scaled score and the softmax."), _ALL,
             translator=True,
             params=frozenset({"all_keys", "query"})),
    PageSpec("atlas", N_("Head atlas"), ":material/table_view:", "views.pages.atlas",
             N_("Every head of every layer, measured on your text: how spread out it is, whether it looks at the "
                "previous or next token, at itself, at special tokens, and how far. Sort by any column; open a head "
                "on the heatmap."), _ALL, translator=True,
             params=frozenset({"prop"})),
    PageSpec("rollout", N_("Rollout and saliency"), ":material/merge_type:", "views.pages.rollout",
             N_("Where each token's representation comes from: attention rolled out through the layers with the "
                "residual connection, the attention flow, and which input tokens an output is most sensitive to "
                "(gradient × input)."), _ALL, translator=True,
             params=frozenset({"query", "target"})),
    PageSpec("compare", N_("Compare"), ":material/compare:", "views.pages.compare",
             N_("Two attention maps side by side and their difference: two sentences, two models, two layers or "
                "heads, or the map with a mask. The same query row is outlined in all three."), _ALL, translator=True,
             params=frozenset({"compare_map", "head2", "layer2", "mask2", "model2", "pair", "query", "src2", "text2"})),
    PageSpec("embeddings", N_("Sentence embeddings"), ":material/hub:", "views.pages.embeddings",
             N_("all-MiniLM-L6-v2 turns a sentence into one vector: the mean of its last layer's tokens. Compare "
                "sentences by their vectors, see where they lie, how each layer moves them, and which tokens make "
                "them."), frozenset({MODEL}),
             params=frozenset({"sent", "sents"})),
    PageSpec("modern", N_("From 2017 to today"), ":material/history:", "views.pages.modern",
             N_("What changed from the tutorials' Transformer to today's LLMs: the three blocks side by side, and each "
                "change measured on real weights: positions rotated into q and k (RoPE), RMSNorm, SwiGLU's gates, "
                "grouped-query attention and its key/value cache, what every module costs."),
             params=frozenset({"part", "query", "key", "mtext", "context"})),
    PageSpec("tour", N_("Guided tour"), ":material/route:", "views.pages.tour",
             N_("The Transformer in the order the tutorials teach it, one page at a time: each stop opens a page "
                "set up to show one idea, says what to look at, and has a link to put on a slide.")),
)


def by_path(path: str) -> PageSpec:
    """The page at /path (KeyError if there is none)."""
    for spec in PAGES:
        if spec.path == path:
            return spec
    raise KeyError(path)


def by_module(module: str) -> PageSpec:
    """The page a module draws (KeyError if it is not a page)."""
    for spec in PAGES:
        if spec.module == module:
            return spec
    raise KeyError(module)


def link_keys() -> frozenset[str]:
    """Every ?name= some page reads: the shared ones and each page's own. A link carries all of them to every page,
    so no page says anything about another page's parameters (views.shell.link_check)."""
    return SHARED_PARAMS.union(*(spec.params for spec in PAGES))
