"""The Hugging Face architectures tools/hf_sweep.py runs: tiny configs, no downloads.

ARCHS maps a name to (family, kind, model class name, config class name,
config keyword arguments). The kind says which inputs the model takes and
whether it generates (see hf_sweep.inputs_for). Sizes are shrunk to a hidden
width of 32, two layers and a vocabulary of 128 so a model builds in well
under a second; everything else is the architecture's default, so each keeps
its own attention, position encoding, norm and activation. Dropout, layer
drop, drop path, SpecAugment masking and router noise are switched off in
tiny_config(): their random masks cannot match the CPU's (hf_sweep also
checks that two CPU train steps agree bitwise, so one that slips through
shows up as a mismatch rather than hiding in a loose tolerance).
"""

V = 128  # vocabulary
H, L, NH, FF = 32, 2, 4, 64  # hidden width, layers, heads, feed-forward width
POS = 64  # max positions
SPECIAL = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)

# Llama-style decoders share one shape: grouped-query attention with 2 key/value heads.
LLAMA = dict(vocab_size=V, hidden_size=H, intermediate_size=FF, num_hidden_layers=L, num_attention_heads=NH,
             num_key_value_heads=2, max_position_embeddings=POS, **SPECIAL)
BERT = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH, intermediate_size=FF,
            max_position_embeddings=POS, pad_token_id=0)
BART = dict(vocab_size=V, d_model=H, encoder_layers=L, decoder_layers=L, encoder_attention_heads=NH,
            decoder_attention_heads=NH, encoder_ffn_dim=FF, decoder_ffn_dim=FF, max_position_embeddings=POS,
            decoder_start_token_id=2, forced_eos_token_id=None, **SPECIAL)
T5 = dict(vocab_size=V, d_model=H, d_ff=FF, d_kv=8, num_layers=L, num_decoder_layers=L, num_heads=NH,
          decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
VIT = dict(image_size=32, patch_size=8, num_channels=3, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH,
           intermediate_size=FF, num_labels=10)
AUDIO = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH, intermediate_size=FF,
             conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16,
             num_conv_pos_embedding_groups=4, num_labels=10, classifier_proj_size=16)


def _with(base, **kw):
    return {**base, **kw}


ARCHS = {
    # decoder language models: causal LM loss, greedy generate with the KV cache
    "gpt2": ("decoder", "causal", "GPT2LMHeadModel", "GPT2Config",
             dict(vocab_size=V, n_positions=POS, n_embd=H, n_layer=L, n_head=NH, **SPECIAL)),
    "llama": ("decoder", "causal", "LlamaForCausalLM", "LlamaConfig", LLAMA),
    "mistral": ("decoder", "causal", "MistralForCausalLM", "MistralConfig", _with(LLAMA, sliding_window=16)),
    "qwen2": ("decoder", "causal", "Qwen2ForCausalLM", "Qwen2Config", LLAMA),
    "qwen3": ("decoder", "causal", "Qwen3ForCausalLM", "Qwen3Config", _with(LLAMA, head_dim=8)),
    "gemma": ("decoder", "causal", "GemmaForCausalLM", "GemmaConfig", _with(LLAMA, head_dim=8)),
    "gemma2": ("decoder", "causal", "Gemma2ForCausalLM", "Gemma2Config",
               _with(LLAMA, head_dim=8, query_pre_attn_scalar=8, sliding_window=16)),
    "phi": ("decoder", "causal", "PhiForCausalLM", "PhiConfig", LLAMA),
    "phi3": ("decoder", "causal", "Phi3ForCausalLM", "Phi3Config", LLAMA),
    "opt": ("decoder", "causal", "OPTForCausalLM", "OPTConfig",
            dict(vocab_size=V, hidden_size=H, ffn_dim=FF, num_hidden_layers=L, num_attention_heads=NH,
                 word_embed_proj_dim=H, max_position_embeddings=POS, **SPECIAL)),
    "gpt_neox": ("decoder", "causal", "GPTNeoXForCausalLM", "GPTNeoXConfig",
                 _with(LLAMA, num_key_value_heads=NH)),
    "falcon": ("decoder", "causal", "FalconForCausalLM", "FalconConfig",
               dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH, **SPECIAL)),
    "mixtral": ("decoder (MoE)", "causal", "MixtralForCausalLM", "MixtralConfig",
                _with(LLAMA, num_local_experts=4, num_experts_per_tok=2)),
    "qwen2_moe": ("decoder (MoE)", "causal", "Qwen2MoeForCausalLM", "Qwen2MoeConfig",
                  _with(LLAMA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=FF,
                        shared_expert_intermediate_size=FF)),
    "bloom": ("decoder", "causal", "BloomForCausalLM", "BloomConfig",
              dict(vocab_size=V, hidden_size=H, n_layer=L, n_head=NH, **SPECIAL)),
    "gptj": ("decoder", "causal", "GPTJForCausalLM", "GPTJConfig",
             dict(vocab_size=V, n_positions=POS, n_embd=H, n_layer=L, n_head=NH, rotary_dim=4, **SPECIAL)),
    "gpt_neo": ("decoder", "causal", "GPTNeoForCausalLM", "GPTNeoConfig",
                dict(vocab_size=V, max_position_embeddings=POS, hidden_size=H, num_layers=L, num_heads=NH,
                     attention_types=[[["global", "local"], 1]], window_size=16, **SPECIAL)),
    "codegen": ("decoder", "causal", "CodeGenForCausalLM", "CodeGenConfig",
                dict(vocab_size=V, n_positions=POS, n_ctx=POS, n_embd=H, n_layer=L, n_head=NH, rotary_dim=4,
                     **SPECIAL)),
    "stablelm": ("decoder", "causal", "StableLmForCausalLM", "StableLmConfig", LLAMA),
    "olmo": ("decoder", "causal", "OlmoForCausalLM", "OlmoConfig", LLAMA),
    "starcoder2": ("decoder", "causal", "Starcoder2ForCausalLM", "Starcoder2Config", LLAMA),
    "granite": ("decoder", "causal", "GraniteForCausalLM", "GraniteConfig", LLAMA),
    "cohere": ("decoder", "causal", "CohereForCausalLM", "CohereConfig", LLAMA),
    "biogpt": ("decoder", "causal", "BioGptForCausalLM", "BioGptConfig", _with(BERT, **SPECIAL)),
    "xglm": ("decoder", "causal", "XGLMForCausalLM", "XGLMConfig",
             dict(vocab_size=V, d_model=H, num_layers=L, attention_heads=NH, ffn_dim=FF,
                  max_position_embeddings=POS, **SPECIAL)),
    # encoders: masked-LM loss
    "bert": ("encoder", "masked", "BertForMaskedLM", "BertConfig", BERT),
    "roberta": ("encoder", "masked", "RobertaForMaskedLM", "RobertaConfig", _with(BERT, pad_token_id=1)),
    "xlm_roberta": ("encoder", "masked", "XLMRobertaForMaskedLM", "XLMRobertaConfig", _with(BERT, pad_token_id=1)),
    "distilbert": ("encoder", "masked", "DistilBertForMaskedLM", "DistilBertConfig",
                   dict(vocab_size=V, dim=H, n_layers=L, n_heads=NH, hidden_dim=FF, max_position_embeddings=POS)),
    "albert": ("encoder", "masked", "AlbertForMaskedLM", "AlbertConfig", _with(BERT, embedding_size=16)),
    "electra": ("encoder", "masked", "ElectraForMaskedLM", "ElectraConfig", _with(BERT, embedding_size=16)),
    "deberta_v2": ("encoder", "masked", "DebertaV2ForMaskedLM", "DebertaV2Config",
                   _with(BERT, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=16)),
    "deberta": ("encoder", "masked", "DebertaForMaskedLM", "DebertaConfig",
                _with(BERT, relative_attention=True, pos_att_type=["p2c", "c2p"])),
    "mpnet": ("encoder", "masked", "MPNetForMaskedLM", "MPNetConfig", _with(BERT, pad_token_id=1)),
    "modernbert": ("encoder", "masked", "ModernBertForMaskedLM", "ModernBertConfig",
                   _with(BERT, global_attn_every_n_layers=2, local_attention=8, **SPECIAL)),
    "megatron_bert": ("encoder", "masked", "MegatronBertForMaskedLM", "MegatronBertConfig", BERT),
    "ernie": ("encoder", "masked", "ErnieForMaskedLM", "ErnieConfig", BERT),
    "convbert": ("encoder", "masked", "ConvBertForMaskedLM", "ConvBertConfig", _with(BERT, embedding_size=H)),
    # encoder-decoders: seq2seq loss, greedy generate with the KV cache
    "t5": ("encoder-decoder", "seq2seq", "T5ForConditionalGeneration", "T5Config", T5),
    "mt5": ("encoder-decoder", "seq2seq", "MT5ForConditionalGeneration", "MT5Config", T5),
    "bart": ("encoder-decoder", "seq2seq", "BartForConditionalGeneration", "BartConfig", BART),
    "mbart": ("encoder-decoder", "seq2seq", "MBartForConditionalGeneration", "MBartConfig", BART),
    "pegasus": ("encoder-decoder", "seq2seq", "PegasusForConditionalGeneration", "PegasusConfig", BART),
    "marian": ("encoder-decoder", "seq2seq", "MarianMTModel", "MarianConfig",
               _with(BART, decoder_start_token_id=0, decoder_vocab_size=V)),
    "blenderbot": ("encoder-decoder", "seq2seq", "BlenderbotForConditionalGeneration", "BlenderbotConfig", BART),
    "whisper": ("encoder-decoder (audio)", "whisper", "WhisperForConditionalGeneration", "WhisperConfig",
                _with(BART, num_mel_bins=8, max_source_positions=16, max_target_positions=POS,
                      decoder_start_token_id=3, suppress_tokens=None, begin_suppress_tokens=None)),
    # vision: image-classification loss
    "vit": ("vision", "image", "ViTForImageClassification", "ViTConfig", VIT),
    "deit": ("vision", "image", "DeiTForImageClassification", "DeiTConfig", VIT),
    "beit": ("vision", "image", "BeitForImageClassification", "BeitConfig",
             _with(VIT, use_relative_position_bias=True)),
    "dinov2": ("vision", "image", "Dinov2ForImageClassification", "Dinov2Config", VIT),
    "convnext": ("vision", "image", "ConvNextForImageClassification", "ConvNextConfig",
                 dict(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10)),
    "convnextv2": ("vision", "image", "ConvNextV2ForImageClassification", "ConvNextV2Config",
                   dict(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10)),
    "swin": ("vision", "image", "SwinForImageClassification", "SwinConfig",
             dict(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4,
                  num_labels=10)),
    "resnet": ("vision", "image", "ResNetForImageClassification", "ResNetConfig",
               dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic", num_labels=10)),
    "regnet": ("vision", "image", "RegNetForImageClassification", "RegNetConfig",
               dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8, num_labels=10)),
    "segformer": ("vision", "image", "SegformerForImageClassification", "SegformerConfig",
                  dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                       patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
                       num_labels=10)),
    "clip": ("vision-text", "clip", "CLIPModel", "CLIPConfig",
             dict(text_config=_with(BERT, max_position_embeddings=POS, projection_dim=16, **SPECIAL),
                  vision_config=dict(VIT, projection_dim=16), projection_dim=16)),
    "siglip": ("vision-text", "clip", "SiglipModel", "SiglipConfig",
               dict(text_config=_with(BERT, max_position_embeddings=POS), vision_config=VIT)),
    # audio: sequence-classification loss on raw waveforms
    "wav2vec2": ("audio", "audio", "Wav2Vec2ForSequenceClassification", "Wav2Vec2Config", AUDIO),
    "hubert": ("audio", "audio", "HubertForSequenceClassification", "HubertConfig", AUDIO),
    "wavlm": ("audio", "audio", "WavLMForSequenceClassification", "WavLMConfig", AUDIO),
    "data2vec_audio": ("audio", "audio", "Data2VecAudioForSequenceClassification", "Data2VecAudioConfig", AUDIO),
}


def tiny_config(name):
    """The architecture's config with its tiny sizes and no randomness in train mode."""
    import transformers

    _, _, _, config_cls, kw = ARCHS[name]
    cfg = getattr(transformers, config_cls)(**kw)
    for c in [cfg] + [getattr(cfg, s) for s in ("text_config", "vision_config") if hasattr(cfg, s)]:
        for k, v in list(vars(c).items()):
            # dropout, *_pdrop (GPT-2 family), layerdrop, drop_path_rate, mask_time_prob, router noise ...
            if isinstance(v, float) and ("drop" in k or k.endswith("_prob") or k == "router_jitter_noise"):
                setattr(c, k, 0.0)
    return cfg
