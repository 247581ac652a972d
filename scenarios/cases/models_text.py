"""Model zoo, text: decoder LLMs, encoders and encoder-decoders from `transformers` configs (small sizes,
random weights, nothing downloaded), each with a dynamic batch and sequence and two input sets."""
import torch
import transformers as tf
from torch import nn
from torch.export import Dim

from ..registry import Case, register
from ._zoo import BATCH, SEQ, TEXT_SIZES, VOCAB, CausalLM, Encoder, Seq2SeqLM, text_shapes, token_inputs

# Shared small sizes: 2 layers, hidden 32, 4 heads (2 key/value heads where the family has GQA).
_DEC = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=128)
_ENC = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=128)


def _causal(name, factory, description):
    register(Case(name=name, make_module=lambda: CausalLM(factory()), input_sets=token_inputs(),
                  dynamic_shapes=text_shapes("input_ids", "attention_mask"), description=description))


def _encoder(name, factory, description, type_ids=False):
    names = ("input_ids", "attention_mask", "token_type_ids") if type_ids else ("input_ids", "attention_mask")
    register(Case(name=name, make_module=lambda: Encoder(factory()), input_sets=token_inputs(type_ids=type_ids),
                  dynamic_shapes=text_shapes(*names), description=description))


# --- decoder-only LLMs ---
_causal("model_llama", lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**_DEC, num_key_value_heads=2)),
        "LLaMA: RMSNorm, rotary embeddings (non-persistent inv_freq buffer), GQA, SwiGLU")
_causal("model_mistral", lambda: tf.MistralForCausalLM(tf.MistralConfig(**_DEC, num_key_value_heads=2)),
        "Mistral: LLaMA-like with GQA")
_causal("model_qwen2", lambda: tf.Qwen2ForCausalLM(tf.Qwen2Config(**_DEC, num_key_value_heads=2)),
        "Qwen2: biased QKV projections, GQA")
_causal("model_qwen3", lambda: tf.Qwen3ForCausalLM(tf.Qwen3Config(**_DEC, num_key_value_heads=2, head_dim=8)),
        "Qwen3: per-head q/k RMSNorm")
_causal("model_phi3", lambda: tf.Phi3ForCausalLM(tf.Phi3Config(**_DEC, num_key_value_heads=2, pad_token_id=0)),
        "Phi-3: fused qkv and gate_up projections")
_causal("model_gemma", lambda: tf.GemmaForCausalLM(tf.GemmaConfig(**_DEC, num_key_value_heads=2, head_dim=8)),
        "Gemma: scaled embeddings, GeGLU, (1 + w) RMSNorm")
_causal("model_gpt2", lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                                                               n_positions=128)),
        "GPT-2: learned positions, Conv1D projections, tanh GELU")
_causal("model_gpt_neox", lambda: tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(**_DEC)),
        "GPT-NeoX: parallel attention/MLP residual, partial rotary")
_causal("model_opt", lambda: tf.OPTForCausalLM(tf.OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64,
                                                            num_hidden_layers=2, num_attention_heads=4,
                                                            word_embed_proj_dim=32, max_position_embeddings=128)),
        "OPT: learned positions offset by the attention mask's cumsum")
_causal("model_bloom", lambda: tf.BloomForCausalLM(tf.BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2,
                                                                  n_head=4)),
        "BLOOM: ALiBi position biases")
_causal("model_falcon", lambda: tf.FalconForCausalLM(tf.FalconConfig(vocab_size=VOCAB, hidden_size=32,
                                                                     num_hidden_layers=2, num_attention_heads=4,
                                                                     new_decoder_architecture=True,
                                                                     num_kv_heads=2)),
        "Falcon: new decoder architecture, rotary, grouped KV heads")


class LlamaDecodeStep(nn.Module):
    """One decode step of a LLaMA with its KV cache as tensors: (input_ids of one new token, past keys and
    values per layer) -> (logits, present keys and values per layer). No padding, so no attention mask."""

    def __init__(self):
        super().__init__()
        self.model = tf.LlamaForCausalLM(tf.LlamaConfig(**_DEC, num_key_value_heads=2))

    def forward(self, input_ids, k0, v0, k1, v1):
        cache = tf.DynamicCache(config=self.model.config)
        for layer, (k, v) in enumerate(((k0, v0), (k1, v1))):
            cache.update(k, v, layer)
        out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True)
        present = out.past_key_values
        return (out.logits, *[t for layer in range(2) for t in (present.layers[layer].keys,
                                                                  present.layers[layer].values)])


def _decode_inputs():
    sets = []
    for b, past in ((2, 5), (3, 9)):
        ids = torch.randint(3, VOCAB, (b, 1))
        cache = [torch.randn(b, 2, past, 8) for _ in range(4)]
        sets.append((ids, *cache))
    return sets


# Dim.AUTO for the cache length: torch 2.13's range solver cannot prove the guard
# min(8 + 8*past, 16 + 16*past) == 8 + 8*past for a named Dim, though it holds for every past >= 0.
_PAST = Dim.AUTO
register(Case(name="model_llama_decode_step", make_module=LlamaDecodeStep, input_sets=_decode_inputs,
              dynamic_shapes=({0: BATCH}, *({0: BATCH, 2: _PAST} for _ in range(4))),
              description="LLaMA decode step: one new token, KV cache of 2 layers in and out as tensors"))

# --- encoders ---
_encoder("model_bert", lambda: tf.BertModel(tf.BertConfig(**_ENC)),
         "BERT: non-persistent position_ids buffer, token types", type_ids=True)
_encoder("model_roberta", lambda: tf.RobertaModel(tf.RobertaConfig(**_ENC, pad_token_id=1)),
         "RoBERTa: positions from the padding mask's cumsum")
_encoder("model_distilbert", lambda: tf.DistilBertModel(tf.DistilBertConfig(vocab_size=VOCAB, dim=32, hidden_dim=64,
                                                                          n_layers=2, n_heads=4,
                                                                          max_position_embeddings=128)),
         "DistilBERT")
_encoder("model_albert", lambda: tf.AlbertModel(tf.AlbertConfig(**_ENC, embedding_size=16)),
         "ALBERT: factorised embeddings, shared layers")
_encoder("model_electra", lambda: tf.ElectraModel(tf.ElectraConfig(**_ENC, embedding_size=16)),
         "ELECTRA discriminator encoder")
_encoder("model_deberta_v2", lambda: tf.DebertaV2Model(tf.DebertaV2Config(**_ENC, max_relative_positions=32,
                                                                        position_buckets=16)),
         "DeBERTa-v2: disentangled relative attention")


# --- encoder-decoders ---
def _seq2seq_inputs():
    sets = []
    for (b, s), t in zip(TEXT_SIZES, (5, 7)):
        sets.append((torch.randint(3, VOCAB, (b, s)), torch.ones(b, s, dtype=torch.int64),
                     torch.randint(3, VOCAB, (b, t))))
    return sets


_TGT = Dim("target", min=2, max=64)
for _name, _factory, _desc in (
        ("model_t5", lambda: tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64,
                                                                        num_layers=2, num_heads=4,
                                                                        decoder_start_token_id=0)),
         "T5: relative position buckets, encoder-decoder with cross attention"),
        ("model_bart", lambda: tf.BartForConditionalGeneration(tf.BartConfig(vocab_size=VOCAB, d_model=32,
                                                                            encoder_layers=2, decoder_layers=2,
                                                                            encoder_attention_heads=4,
                                                                            decoder_attention_heads=4,
                                                                            encoder_ffn_dim=64, decoder_ffn_dim=64,
                                                                            max_position_embeddings=128)),
         "BART: encoder-decoder with learned positions")):
    register(Case(name=_name, make_module=(lambda f=_factory: Seq2SeqLM(f())), input_sets=_seq2seq_inputs,
                  dynamic_shapes=({0: BATCH, 1: SEQ}, {0: BATCH, 1: SEQ}, {0: BATCH, 1: _TGT}), description=_desc))
