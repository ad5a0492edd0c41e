"""Tiny configs, models and dummy inputs for ``transformers`` architectures (for bench/models.py).

:func:`build` takes a model type (a key of ``CONFIG_MAPPING_NAMES``), builds its config class
with the defaults, shrinks it generically (:func:`shrink`) and applies the few per-family
overrides of :data:`OVERRIDES`, builds the base model with ``AutoModel.from_config`` in eval
mode with seed 0, and makes inputs from the ``forward`` signature (:func:`make_inputs`).
Nothing is downloaded.  Any exception means "not buildable" to the caller.
"""
from __future__ import annotations

import inspect
import re
from typing import Any, Dict, List, Optional, Tuple

WIDTH = 32
FFN = 64
LAYERS = 2
HEADS = 2
HEAD_DIM = WIDTH // HEADS
VOCAB = 512
IMAGE = 64
PATCH = 8
BATCH = 2
SEQ = 8
AUDIO_SAMPLES = 4000

_TOKEN_KEY = re.compile(r"(_token_id|_token_ids|_token_index|^token_id)$")
_KV_HEADS = re.compile(r"^(num_key_value_heads|num_kv_heads|n_kv_heads?|multi_query_group_num|"
                       r"num_key_value_groups_heads)$")
_HEADS = re.compile(r"(attention_heads|^num_heads$|^n_heads?$|_num_heads$|^num_.*_heads$)")
_LAYERS = re.compile(r"^(num_hidden_layers|num_layers|n_layers?|encoder_layers|decoder_layers|"
                     r"num_(encoder|decoder|text|vision|audio)_layers|(encoder|decoder|text|vision|audio)"
                     r"_num_layers|num_hidden_layers_.*|n_(encoder|decoder)_layers)$")
_HEAD_DIM = re.compile(r"^(head_dim|attention_head_dim|d_kv|kv_channels|qk_rope_head_dim|qk_nope_head_dim|"
                       r"v_head_dim|.*_head_dim|attention_head_size)$")
_WIDTH = re.compile(r"(hidden_size$|^d_model$|^n_embd$|^n_embed$|^embed_dim$|^dim$|^hidden_dim$|_embed_dim$|"
                    r"^embedding_size$|^d_embed$|projection_dim$|^word_embed_proj_dim$|^emb_dim$|"
                    r"^embedding_dim$|^model_dim$|^proj_dim$|_hidden_dim$|^d_model_.*)")
_FFN = re.compile(r"(^intermediate_size$|_intermediate_size$|ffn_dim$|^n_inner$|ffn_hidden_size$|^mlp_dim$|"
                  r"^d_ff$|^ffn_size$|^d_inner$|^feed_forward_size$|^inner_dim$|^ff_dim$|"
                  r"^mlp_hidden_dim$|^intermediate_dim$|^ffn_hidden_dim$|^hidden_ffn_size$)")
_SMALL_FFN = re.compile(r"^(moe_intermediate_size|shared_expert_intermediate_size|expert_intermediate_size|"
                        r"moe_ffn_hidden_size)$")
_EXPERTS = re.compile(r"^(num_experts|num_local_experts|n_routed_experts|moe_num_experts|num_routed_experts)$")
_TOPK = re.compile(r"^(num_experts_per_tok|moe_topk|num_experts_per_token|moe_k|top_k_experts)$")
_SHARED_EXPERTS = re.compile(r"^(n_shared_experts|num_shared_experts|moe_num_shared_experts)$")
_ONE = re.compile(r"^(n_group|topk_group|first_k_dense_replace|num_expert_group)$")
_LORA = re.compile(r"^(kv_lora_rank|q_lora_rank)$")
_VOCAB = re.compile(r"vocab_size$")
_IMAGE = re.compile(r"^(image_size|img_size|vision_image_size)$")
_PATCH = re.compile(r"^(patch_size|patch_sizes_?)$")
_STAGE_WIDTHS = re.compile(r"^(hidden_sizes|embed_dims|dims|hidden_dims|encoder_hidden_sizes|embed_dim_list|widths)$")
_DEPTHS = re.compile(r"^(depths|encoder_depths|num_blocks|layers_per_stage|blocks_per_stage)$")

#: Per-family settings applied after the generic shrink (top-level keys; dicts go into sub-configs).
OVERRIDES: Dict[str, Dict[str, Any]] = {
    "whisper": {"max_source_positions": 32},
    "wav2vec2": {"num_conv_pos_embeddings": 16},
    "hubert": {"num_conv_pos_embeddings": 16},
    "data2vec-audio": {"num_conv_pos_embeddings": 16},
    "wavlm": {"num_conv_pos_embeddings": 16},
    "sew": {"num_conv_pos_embeddings": 16},
    "sew-d": {"num_conv_pos_embeddings": 16},
    "unispeech": {"num_conv_pos_embeddings": 16},
    "unispeech-sat": {"num_conv_pos_embeddings": 16},
    "wav2vec2-conformer": {"num_conv_pos_embeddings": 16},
    "reformer": {"axial_pos_shape": [4, 8], "axial_pos_embds_dim": [16, 16], "attn_layers": ["local", "lsh"],
                 "local_attn_chunk_length": 4, "lsh_attn_chunk_length": 4},
}


def _changed_ints(key: str, value: Any, orig_layers: Optional[int]) -> Any:
    """The shrunk value of one config entry, or the value itself."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if _KV_HEADS.search(key):
            return value if value <= 1 else HEADS
        if _HEAD_DIM.search(key):
            return min(value, HEAD_DIM)
        if _HEADS.search(key):
            return min(value, HEADS)
        if _LAYERS.search(key):
            return min(value, LAYERS)
        if _SMALL_FFN.search(key):
            return min(value, WIDTH)
        if _FFN.search(key):
            return min(value, FFN)
        if _WIDTH.search(key):
            return min(value, WIDTH)
        if _EXPERTS.search(key):
            return min(value, 4)
        if _TOPK.search(key):
            return min(value, 2)
        if _SHARED_EXPERTS.search(key) or _ONE.search(key):
            return min(value, 1)
        if _LORA.search(key):
            return min(value, 16)
        if _VOCAB.search(key):
            return min(value, VOCAB)
        if _IMAGE.search(key):
            return min(value, IMAGE)
        if _PATCH.search(key):
            return min(value, PATCH)
        if key in ("max_source_positions",):
            return min(value, 64)
        if key in ("num_conv_pos_embeddings",):
            return min(value, 16)
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) and not isinstance(v, bool)
                                                          for v in value):
        if _IMAGE.search(key):
            return type(value)(min(v, IMAGE) for v in value)
        if _PATCH.search(key):
            return type(value)(min(v, PATCH) for v in value)
        if _DEPTHS.search(key):
            return type(value)(min(v, 1) for v in value)
        if _HEADS.search(key):
            return type(value)(min(v, 1) for v in value)
        if _STAGE_WIDTHS.search(key):
            return type(value)(max(8, (v // 16) // 8 * 8) for v in value)
        if key in ("conv_dim",):
            return type(value)(min(v, WIDTH) for v in value)
    if isinstance(value, (list, tuple)) and orig_layers and len(value) == orig_layers and "layer" in key:
        return type(value)(value[:LAYERS])
    return value


def _layer_count(d: Dict[str, Any]) -> Optional[int]:
    for key in ("num_hidden_layers", "num_layers", "n_layer", "n_layers"):
        v = d.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def shrink(d: Dict[str, Any], model_type: Optional[str] = None) -> Dict[str, Any]:
    """The entries of a config dict (``config.to_dict()``) that change, sub-configs included
    (as whole shrunk dicts, so they can be passed back to the config class)."""
    changes: Dict[str, Any] = {}
    orig_layers = _layer_count(d)
    for key, value in d.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, dict) and value.get("model_type") == "timm_backbone":
            changes[key] = _resnet_backbone(value)
            continue
        if isinstance(value, dict) and "model_type" in value:
            sub = dict(value)
            sub.update(shrink(value, value.get("model_type")))
            changes[key] = sub
            continue
        if key in ("rope_parameters", "rope_scaling") and isinstance(value, dict):
            rope = _shrink_rope(value, model_type or d.get("model_type", ""))
            if rope != value:
                changes[key] = rope
            continue
        if _TOKEN_KEY.search(key):
            continue  # fixed below, once the vocabulary is known
        new = _changed_ints(key, value, orig_layers)
        if new is not value and new != value:
            changes[key] = new
    if isinstance(d.get("window_size"), int) and "depths" in d and isinstance(d.get("patch_size"), int):
        # Swin-like: four stages of 32, 16, 8, 4 patches with windows of 4.
        changes.update({"image_size": IMAGE, "patch_size": 2, "window_size": 4})
    if (model_type or "") and re.search(r"qwen.*(vl|omni)", model_type or "") and "text_config" not in d \
            and "rope_parameters" in d and not isinstance(d["rope_parameters"], dict):
        changes["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
    for key in ("use_timm_backbone", "use_pretrained_backbone"):
        if d.get(key):
            changes[key] = False
    vocab = changes.get("vocab_size", d.get("vocab_size"))
    if isinstance(vocab, int):
        fix_token_ids(d, changes, vocab)
    changes.update(OVERRIDES.get(model_type or d.get("model_type", ""), {}))
    return changes


def _shrink_rope(rope: Dict[str, Any], model_type: str) -> Dict[str, Any]:
    rope = dict(rope)
    section = rope.get("mrope_section")
    if isinstance(section, list) and section:
        half = HEAD_DIM // 2
        total = sum(section)
        new = [max(1, v * half // total) for v in section]
        new[-1] += half - sum(new)
        rope["mrope_section"] = new
    elif re.search(r"qwen.*(vl|omni)", model_type):
        rope["mrope_section"] = [2, 3, 3]
    return rope


def _resnet_backbone(timm: Dict[str, Any]) -> Dict[str, Any]:
    """A transformers ResNet in place of a timm backbone (timm is not installed)."""
    from transformers import ResNetConfig
    indices = timm.get("out_indices") or [1, 2, 3, 4]
    cfg = ResNetConfig(out_features=["stage%d" % i for i in indices if 1 <= i <= 4],
                       num_channels=timm.get("num_channels", 3)).to_dict()
    cfg.update(shrink(cfg, "resnet"))
    return cfg


def fix_token_ids(d: Dict[str, Any], changes: Dict[str, Any], vocab: int) -> None:
    """Special token ids beyond the shrunk vocabulary get distinct ids at its top."""
    spare = vocab - 1
    mapping: Dict[int, int] = {}
    for key in sorted(k for k in d if isinstance(k, str)):
        if not _TOKEN_KEY.search(key):
            continue
        value = d[key]

        def remap(v: Any) -> Any:
            nonlocal spare
            if isinstance(v, int) and not isinstance(v, bool) and v >= vocab:
                if v not in mapping:
                    mapping[v] = spare
                    spare -= 1
                return mapping[v]
            return v
        if isinstance(value, (list, tuple)):
            new = type(value)(remap(v) for v in value)
        else:
            new = remap(value)
        if new != value:
            changes[key] = new


def special_ids(cfg: Any) -> set:
    """Every special token id of the config and its sub-configs (kept out of random input_ids)."""
    out = set()
    d = cfg.to_dict() if hasattr(cfg, "to_dict") else cfg

    def walk(x: Dict[str, Any]) -> None:
        for key, value in x.items():
            if not isinstance(key, str):
                continue
            if isinstance(value, dict):
                walk(value)
            elif _TOKEN_KEY.search(key) or "token" in key and "id" in key:
                for v in (value if isinstance(value, (list, tuple)) else [value]):
                    if isinstance(v, int) and not isinstance(v, bool):
                        out.add(v)
    walk(d)
    return out


def _set_attrs(obj: Any, changes: Dict[str, Any]) -> None:
    for key, value in changes.items():
        current = getattr(obj, key, None)
        if isinstance(value, dict) and hasattr(current, "to_dict"):
            _set_attrs(current, {k: v for k, v in value.items() if k != "model_type"})
        else:
            try:
                setattr(obj, key, value)
            except Exception:
                pass


def make_config(model_type: str) -> Tuple[Any, Dict[str, Any], str]:
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    cls = CONFIG_MAPPING[model_type]
    default = cls()
    changes = shrink(default.to_dict(), model_type)
    try:
        cfg = cls(**changes)
        how = "kwargs"
    except Exception as exc:
        cfg = cls()
        _set_attrs(cfg, changes)
        how = "setattr (kwargs failed: %s: %s)" % (type(exc).__name__, str(exc)[:120])
    del AutoConfig
    return cfg, changes, how


def _vision_like(cfg: Any) -> Any:
    for key in ("vision_config", "encoder_config", "backbone_config"):
        sub = getattr(cfg, key, None)
        if sub is not None and hasattr(sub, "to_dict"):
            return sub
    return cfg


def _image_size(cfg: Any) -> Tuple[int, int]:
    size = getattr(cfg, "image_size", None) or getattr(cfg, "img_size", None) or IMAGE
    if isinstance(size, (list, tuple)):
        return int(size[0]), int(size[-1])
    if isinstance(size, dict):
        return int(size.get("height", IMAGE)), int(size.get("width", IMAGE))
    return int(size), int(size)


def make_inputs(model: Any, cfg: Any, with_pixels: bool = False) -> Dict[str, Any]:
    import torch
    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    g = torch.Generator().manual_seed(0)
    inputs: Dict[str, Any] = {}
    text_cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    vocab = getattr(text_cfg, "vocab_size", None) or getattr(cfg, "vocab_size", None) or VOCAB
    special = special_ids(cfg)
    pool = [i for i in range(4, min(int(vocab), 300)) if i not in special] or [0]
    pool_t = torch.tensor(pool)

    def ids(n: int) -> Any:
        return pool_t[torch.randint(0, len(pool), (BATCH, n), generator=g)]

    if main == "input_ids" or (main not in params and "input_ids" in params):
        inputs["input_ids"] = ids(SEQ)
        if "attention_mask" in params:
            inputs["attention_mask"] = torch.ones(BATCH, SEQ, dtype=torch.long)
    elif main == "pixel_values":
        vc = _vision_like(cfg)
        h, w = _image_size(vc) if getattr(vc, "image_size", None) else _image_size(cfg)
        channels = getattr(vc, "num_channels", None) or getattr(cfg, "num_channels", None) or 3
        inputs["pixel_values"] = torch.randn(BATCH, channels, h, w, generator=g)
    elif main == "input_values":
        inputs["input_values"] = torch.randn(BATCH, AUDIO_SAMPLES, generator=g)
    elif main == "input_features":
        mel = getattr(cfg, "num_mel_bins", None)
        src = getattr(cfg, "max_source_positions", None)
        if mel and src:  # whisper-like: (batch, mel bins, 2 * source positions)
            inputs["input_features"] = torch.randn(BATCH, mel, 2 * src, generator=g)
        else:
            feat = (getattr(cfg, "input_feat_per_channel", None) or getattr(cfg, "feature_size", None)
                    or mel or 80) * (getattr(cfg, "input_channels", None) or 1)
            inputs["input_features"] = torch.randn(BATCH, 64, feat, generator=g)
            if "attention_mask" in params:
                inputs["attention_mask"] = torch.ones(BATCH, 64, dtype=torch.long)
    else:
        raise NotImplementedError("no dummy input for main input %r" % main)
    if with_pixels:
        if "pixel_values" not in params or "pixel_values" in inputs:
            raise NotImplementedError("no pixel_values parameter")
        vc = _vision_like(cfg)
        h, w = _image_size(vc)
        channels = getattr(vc, "num_channels", None) or 3
        inputs["pixel_values"] = torch.randn(BATCH, channels, h, w, generator=g)
    if "decoder_input_ids" in params and getattr(cfg, "is_encoder_decoder", False):
        start = getattr(cfg, "decoder_start_token_id", None)
        dec = ids(SEQ - 2)
        if isinstance(start, int) and 0 <= start < vocab:
            dec[:, 0] = start
        inputs["decoder_input_ids"] = dec
    if "use_cache" in params:
        inputs["use_cache"] = False
    if "return_dict" in params:
        inputs["return_dict"] = True
    missing = [n for n, p in params.items()
               if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               and n not in inputs]
    if missing:
        raise NotImplementedError("forward needs %s" % ", ".join(missing))
    return inputs


def count_params(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def build(model_type: str) -> Tuple[Any, Dict[str, Any], Dict[str, Any]]:
    """(model, inputs, info) for one architecture; raises when it cannot be built."""
    import torch
    from transformers import AutoModel
    cfg, changes, how = make_config(model_type)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg)
    model = model.float().eval()
    n = count_params(model)
    if n > 50_000_000:
        raise MemoryError("still %.0fM parameters after shrinking" % (n / 1e6))
    errors = []
    for with_pixels in (False, True):
        try:
            inputs = make_inputs(model, cfg, with_pixels)
            with torch.no_grad():
                model(**inputs)
            break
        except Exception as exc:
            errors.append("%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:200]))
    else:
        raise RuntimeError(" | ".join(errors))
    info = {"class": type(model).__name__, "params": n, "config_how": how,
            "inputs": {k: list(v.shape) if hasattr(v, "shape") else v for k, v in inputs.items()}}
    return model, inputs, info
