"""Tiny NLI models the NLI-judge tests build themselves: a T5 and a BERT classifier with a few
thousand weights, a word-level vocabulary of a few dozen words, saved with ``save_pretrained``.

They are tiny and not trained. The T5's weights are set by hand so that its verdict means
something that a test can state: it answers "1" (then its end token) when the word ``marker``
occurs anywhere in its input, and "0" otherwise. How: every encoder output is one of a few
unit directions (``marker`` one, every other word another); the decoder's start token asks
the cross-attention to look at ``marker`` tokens, and the tied embedding matrix, read as the
output layer, turns that direction into the token "1" (else "0"); after either, the end token
wins. The BERT classifier keeps its random weights: its tests compare the judge with a
softmax computed here from the same model's logits.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

__all__ = ["WORDS", "build_classifier", "build_true_t5", "tiny_answers"]

_TEXT = """
    premise hypothesis : . , the a cat sat on mat dog ran fees are is due in may june not
    library opens at am weekdays tuition late payment costs fee euros title parking marker 0 1
"""
WORDS = tuple(_TEXT.split())

_D = 16  # d_model
_MARKER_DIM, _WORD_DIM, _VERDICT_DIM, _START_DIM = 0, 1, 2, 4


def _word_level(specials: list[str], template: processors.TemplateProcessing) -> Tokenizer:
    vocab = {token: index for index, token in enumerate(specials)}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=specials[2]))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    tokenizer.post_processor = template
    tokenizer.decoder = decoders.WordPiece()  # joins the words with spaces
    return tokenizer


def _t5_tokenizer() -> PreTrainedTokenizerFast:
    template = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = _word_level(["<pad>", "</s>", "<unk>"], template)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def build_true_t5(folder: Path, *, ends: bool = True) -> Path:
    """A T5 that answers "1" when ``marker`` is in its input, else "0" (see the module docs);
    with ``ends=False`` its end token never wins, so it repeats its verdict."""
    tokenizer = _t5_tokenizer()
    vocab = tokenizer.get_vocab()
    config = T5Config(
        vocab_size=len(vocab),
        d_model=_D,
        d_ff=8,
        d_kv=_D,
        num_heads=1,
        num_layers=1,
        num_decoder_layers=1,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    model = T5ForConditionalGeneration(config)
    with torch.no_grad():
        _set_true_weights(model, vocab, ends)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _unit(dim: int, length: float = 1.0) -> torch.Tensor:
    vector = torch.zeros(_D)
    vector[dim] = length
    return vector


def _set_true_weights(model: T5ForConditionalGeneration, vocab: dict[str, int], ends: bool) -> None:
    for name, weight in model.named_parameters():
        # Self-attention and feed-forward blocks add nothing to the residual stream.
        if name.endswith(("SelfAttention.o.weight", "DenseReluDense.wo.weight")):
            weight.zero_()
    embed = model.shared.weight  # also the output layer (T5 ties them)
    embed.copy_(_unit(_WORD_DIM).expand_as(embed))
    embed[vocab["marker"]] = _unit(_MARKER_DIM)
    embed[vocab["<pad>"]] = _unit(_START_DIM)  # the decoder's start token
    embed[vocab["1"]] = _unit(_MARKER_DIM, 5.0) + _unit(_VERDICT_DIM)
    embed[vocab["0"]] = _unit(_WORD_DIM, 5.0) + _unit(_VERDICT_DIM)
    embed[vocab["</s>"]] = _unit(_VERDICT_DIM, 100.0 if ends else 0.0)
    # The encoder's end token carries no word direction into the average below.
    model.encoder.final_layer_norm.weight[_VERDICT_DIM] = 0.0
    cross = model.decoder.block[0].layer[1].EncDecAttention
    cross.v.weight.copy_(torch.eye(_D))
    cross.o.weight.copy_(torch.eye(_D))
    # Only the start token queries; its query meets the keys of marker tokens (4 × 4 × 4):
    # then the attention rests on them, else it spreads evenly over the input.
    cross.q.weight.zero_()
    cross.q.weight[_MARKER_DIM, _START_DIM] = 4.0
    cross.k.weight.zero_()
    cross.k.weight[_MARKER_DIM, _MARKER_DIM] = 1.0


def _bert_tokenizer() -> PreTrainedTokenizerFast:
    template = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 3), ("[SEP]", 1)],
    )
    tokenizer = _word_level(["[PAD]", "[SEP]", "[UNK]", "[CLS]"], template)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="[PAD]",
        sep_token="[SEP]",
        eos_token="[SEP]",
        cls_token="[CLS]",
        unk_token="[UNK]",
    )


def build_classifier(folder: Path, labels: dict[int, str], *, seed: int = 3) -> Path:
    """A random two-layer BERT sequence classifier with ``labels`` (index → name) and 64
    positions; its tokenizer sets no length limit of its own."""
    tokenizer = _bert_tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer.get_vocab()),
        hidden_size=_D,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        initializer_range=0.5,  # logits far enough from even for the verdicts to differ
        id2label=labels,
        label2id={name: index for index, name in labels.items()},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_answers() -> dict[str, object]:
    """Three ALCE-shaped answers in the tiny models' words: supported, unsupported and mixed
    statements, one and two citations."""
    docs = [
        {"title": "Fees", "text": "Tuition fees are due in May. Late fees cost euros."},
        {"title": "Library", "text": "The library opens at am on weekdays. marker"},
    ]
    outputs = [
        "Tuition fees are due in May [1]. The library opens at am [2][1].",
        "The marker is due [1]. Late fees cost euros [1][2].",
        "The library opens [2]. The cat sat [1].",
    ]
    return {"data": [{"question": "Q?", "docs": docs, "output": out} for out in outputs]}
