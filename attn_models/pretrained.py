"""What every family's loaded model shares, as transformers' ``PreTrainedModel`` is the base of each of its families:
its name and config, and the plain answers the config gives (attn_models.family.LoadedModel is the interface that
asks them).

>>> from types import SimpleNamespace
>>> m = Pretrained("someone/tiny", SimpleNamespace(model_type="gpt2", n_layers=2, n_heads=4))
>>> m.family, m.n_layers, m.n_heads
('gpt2', 2, 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
        """config.json's model_type ("bert", "roberta", "xlm-roberta", "gpt2", "t5")."""
        return self.config.model_type

    @property
    def n_layers(self) -> int:
        """The layers (a T5: its encoder's)."""
        return self.config.n_layers

    @property
    def n_heads(self) -> int:
        return self.config.n_heads
