"""`json.loads` and `json.dumps` (default options) without importing `json`.

`import json` costs a hook ~8 ms: its pure-Python decoder and encoder import `re`, which imports
`enum`, `functools` and `collections`. The work itself is done by `_json`, the C accelerator
`json` uses; here it is called directly with the settings `json`'s defaults give it, so the text
and the values are the very ones `json` produces. Anything unusual — a byte string that is not
UTF-8, invalid JSON, a value JSON cannot hold, or an interpreter without `_json` — is handed to
`json` itself, which raises its own error or gives its own result.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # not CPython: `json` does it all
    _json = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_SPACE = " \t\n\r"


class _Decoder:
    """The attributes `_json.make_scanner` reads: those of `json.JSONDecoder()`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


# (typeshed types the argument as a scanner; any object with these attributes will do)
_scan = _json.make_scanner(_Decoder()) if _json is not None else None  # type: ignore[arg-type]


def _fallback() -> "Any":
    import json

    return json


def loads(text: "str | bytes") -> "Any":
    """`json.loads(text)`."""
    if _scan is None:
        return _fallback().loads(text)
    if isinstance(text, bytes):
        # `json.detect_encoding` says UTF-8 exactly when the first byte is ASCII (so no BOM) and
        # the second is not NUL; anything else goes to `json`.
        if not (text and 0 < text[0] < 0x80 and (len(text) < 2 or text[1])):
            return _fallback().loads(text)
        text = text.decode("utf-8", "surrogatepass")
    elif not isinstance(text, str):
        return _fallback().loads(text)
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - invalid JSON: `json` raises its own error
        return _fallback().loads(text)
    if end != len(text) and text[end:].strip(_SPACE):
        return _fallback().loads(text)  # extra data: `json` says where
    return value


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: object, *, ensure_ascii: bool = True, sort_keys: bool = False) -> str:
    """`json.dumps(value, ensure_ascii=…, sort_keys=…)`."""
    if _json is None:
        return str(_fallback().dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys))
    quote = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(value, str):
        return str(quote(value))
    encode = _json.make_encoder({}, _refuse, quote, None, ": ", ", ", sort_keys, False, True)
    try:
        return "".join(encode(value, 0))
    except (TypeError, ValueError, RecursionError):  # `json` raises its own error, or gives its own text
        return str(_fallback().dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys))
