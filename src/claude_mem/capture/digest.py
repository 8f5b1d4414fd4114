"""SHA-256 without `hashlib`: importing it loads OpenSSL (several ms on every hook call).

CPython ships the builtin `_sha256` (3.11) / `_sha2` (3.12+) module; `hashlib` is the fallback.
"""

try:
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # pragma: no cover - builds without the builtin module
        from hashlib import sha256 as _sha256  # type: ignore[assignment,unused-ignore]


def sha256_hex(data: bytes) -> str:
    digest: str = _sha256(data).hexdigest()
    return digest
