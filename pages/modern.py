"""Modern attention: what Llama, Mistral, Qwen 3, Gemma 2 and BLOOM change in the seeds' attention, switched on one
at a time on the learner's own numbers (grouped-query heads, RoPE, QK-norm, ALiBi, a sliding window, soft-capping,
the KV cache and the online softmax of FlashAttention)."""

from attn_ui.app import registry
from attn_ui.shell import edit_panel, frame

frame.page_start(registry.MODERN)
in_panel = edit_panel.sidebar()  # X and the weights, beside what they do here
edit_panel.hint()
