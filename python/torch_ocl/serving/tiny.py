"""Tiny chat models built offline: a byte-level BPE tokenizer trained here and random weights from a config.

`transformers serve` loads a model folder; this writes one without the hub, so
`make serve` and the serving tests run on a machine with no network. The
tokenizer is trained by `tokenizers` on a fixed text, so it is the same on
every machine; the weights come from a fixed seed.
"""

from __future__ import annotations

import os

# Token ids 0-2 are the specials, as in tools/hf_models.py's SPECIAL.
SPECIALS = ["<pad>", "<s>", "</s>"]
VOCAB = 320

CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant:{% endif %}"
)

_CORPUS = """\
The quick brown fox jumps over the lazy dog. PyTorch runs on any OpenCL device by changing one string.
A tensor is a multi-dimensional array; a model is a function of tensors with learned weights.
user: hello, how are you today? assistant: I am fine, thank you. What can I do for you?
Continuous batching keeps the accelerator busy: new requests join while others are still decoding.
The key and value cache stores past attention states in pages, and a block table maps tokens to pages.
0123456789 + - * / = ( ) [ ] { } < > , . ; : ! ? ' " @ # $ % ^ & _ ~
"""

# Shapes: hidden 64, two layers, 4 query heads over 2 key/value heads (GQA); big enough that
# greedy decoding is not a run of ties, small enough to load in a fraction of a second.
_BASE = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512, pad_token_id=0, bos_token_id=1, eos_token_id=2,
             tie_word_embeddings=False)
ARCHS = {
    "llama": ("LlamaConfig", _BASE),
    "qwen2": ("Qwen2Config", _BASE),
    "gemma": ("GemmaConfig", dict(_BASE, head_dim=16)),
}


def tokenizer():
    """A PreTrainedTokenizerFast with a chat template, trained offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([_CORPUS] * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def config(arch: str = "llama"):
    import transformers

    cls, kw = ARCHS[arch]
    return getattr(transformers, cls)(**kw)


def build(path: str, arch: str = "llama", seed: int = 0) -> str:
    """Write a tiny `arch` chat model (config, float32 weights, tokenizer, generation config) to `path`."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    os.makedirs(path, exist_ok=True)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config(arch), dtype=torch.float32)
    # Random weights of std 0.02 give near-flat logits, so greedy picks would hinge on rounding;
    # a wider spread makes the argmax clear and CPU/ocl comparisons meaningful.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.15)
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0, do_sample=False)
    model.save_pretrained(path)
    tokenizer().save_pretrained(path)
    return path
