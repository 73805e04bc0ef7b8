"""Config.origin: where the numbers came from (attn_models' layer of a model), kept in links and files, checked."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from attn_core import AttentionInputError, configs_equal, load_preset, share, validate_config

ORIGIN = {"model": "org/m", "layer": 2, "sentence": "the cat", "pad_to": 0, "head": 1, "bias_column": 4}


def test_origin_round_trips_through_links_and_files():
    cfg = validate_config(replace(load_preset("seed000"), origin=ORIGIN))
    for back in (share.decode_link(share.encode_link(cfg))[0], share.from_json(share.to_json(cfg))[0]):
        assert back.origin == ORIGIN and configs_equal(back, cfg)
    assert "origin" not in share.config_to_dict(load_preset("seed000"))  # absent when there is none
    assert not configs_equal(cfg, load_preset("seed000"))


@pytest.mark.parametrize("origin, message", [
    ({"layer": True}, "must be text or a whole number"),
    ({"layer": 2**40}, "must be text or a whole number"),
    ({"model": {"nested": 1}}, "must be text or a whole number"),
    ({"Model": "m"}, "entry names"),
    ({"sentence": "x" * 4_001}, "over 4,000 characters"),
    ({"k1": 1}, "entry names"),
    ({f"{'k' * (i + 1)}": 1 for i in range(9)}, "at most 8 entries"),
    ([1, 2], "JSON object"),
])
def test_a_bad_origin_in_a_file_is_refused(origin, message):
    doc = share.config_to_dict(load_preset("seed000")) | {"origin": origin}
    with pytest.raises(AttentionInputError, match=message):
        share.from_json(json.dumps(doc))


def test_edits_keep_the_origin():
    cfg = validate_config(replace(load_preset("seed000"), origin=ORIGIN))
    edited = validate_config(replace(cfg, x=np.zeros_like(cfg.x)))
    assert edited.origin == ORIGIN
