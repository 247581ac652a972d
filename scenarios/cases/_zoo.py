"""Shared pieces of the model zoo (models_text.py, models_vision.py): architectures people ship, built
from `transformers` configs with small sizes and random weights (nothing is downloaded), wrapped so that
forward takes tensors positionally and returns tensors (not a ModelOutput)."""
import torch
from torch import nn
from torch.export import Dim

# min=2: torch.export specialises a dynamic dim whose example size is 1.
BATCH = Dim("batch", min=2, max=16)
SEQ = Dim("seq", min=2, max=64)
# Text input sets: (batch, seq) per set; set 1 differs in both dims.
TEXT_SIZES = ((2, 8), (3, 13))
VOCAB = 96


def token_inputs(with_mask=True, type_ids=False):
    """Input sets of token ids (and an attention mask with right padding in set 1) for text models."""

    def sets():
        out = []
        for k, (b, s) in enumerate(TEXT_SIZES):
            ids = torch.randint(3, VOCAB, (b, s))
            args = [ids]
            if with_mask:
                mask = torch.ones(b, s, dtype=torch.int64)
                if k == 1:
                    mask[0, -3:] = 0  # one padded row; every row keeps unmasked tokens
                args.append(mask)
            if type_ids:
                args.append(torch.zeros(b, s, dtype=torch.int64))
            out.append(tuple(args))
        return out

    return sets


def text_shapes(*names):
    """Dynamic batch and sequence for each named input (by name: forward may have optional arguments)."""
    return {n: {0: BATCH, 1: SEQ} for n in names}


class CausalLM(nn.Module):
    """Logits of a decoder-only LM for (input_ids, attention_mask), without a cache."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class Encoder(nn.Module):
    """last_hidden_state of a text encoder; token_type_ids only for the families that take them."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        return self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state


class Seq2SeqLM(nn.Module):
    """Logits of an encoder-decoder LM (teacher forcing: decoder_input_ids given)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                          use_cache=False).logits

