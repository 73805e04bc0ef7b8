"""What every family's loaded model shares, as transformers' ``PreTrainedModel`` is the base of each of its families:
its name and config, and the plain answers the config gives (attn_models.family.LoadedModel is the interface that
asks them).

>>> from types import SimpleNamespace
>>> m = Pretrained("someone/tiny", SimpleNamespace(model_type="gpt2", n_layers=2, n_heads=4))
>>> m.family, m.n_layers, m.n_heads, m.n_kv_heads, m.kv_head(3), m.rope_base, m.window
('gpt2', 2, 4, 4, 3, None, None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attn_core import kv_head_of


@dataclass(frozen=True, eq=False)
class Pretrained:
    """The base of each family's loaded model (attn_models.Model, CausalLM, Translator), their first two fields.

    Attributes
    ----------
    name : str
        The source it was loaded from (a Hub repo id, or a folder on the server).
    config : BertConfig, Gpt2Config or T5Config
        The family's config (each family's class says which).
    """

    name: str
    config: Any

    @property
    def family(self) -> str:
        """config.json's model_type ("bert", "roberta", "xlm-roberta", "gpt2", "llama", "mistral", "qwen2", "t5")."""
        return self.config.model_type

    @property
    def n_layers(self) -> int:
        """The layers (a T5: its encoder's)."""
        return self.config.n_layers

    @property
    def n_heads(self) -> int:
        return self.config.n_heads

    @property
    def n_kv_heads(self) -> int:
        """The key/value heads of a layer: fewer than n_heads with grouped-query attention (a Llama's
        num_key_value_heads), else n_heads."""
        return getattr(self.config, "n_kv_heads", self.config.n_heads)

    @property
    def rope_base(self) -> float | None:
        """RoPE's base θ when its attention turns queries and keys by their positions (a Llama's rope_theta), else
        None (positions added to the input, or learned relative ones)."""
        return getattr(self.config, "rope_theta", None)

    @property
    def window(self) -> int | None:
        """The sliding window of its attention (a Mistral's: each query sees itself and window − 1 before), or None."""
        return getattr(self.config, "window", None)

    def kv_head(self, head: int) -> int:
        """The key/value head query head ``head`` reads (attn_core.kv_head_of): ``head`` itself unless its layers
        share keys and values among query heads (grouped-query attention), whose heads a page may group by it."""
        return kv_head_of(head, self.n_heads, self.n_kv_heads)
