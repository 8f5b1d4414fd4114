"""Seeded random text for the corpora: the same seed draws the same corpus on every machine, and every
value is assembled at run time, so the repository holds no literal a secret scanner would flag."""

import base64
import random
import string
import uuid

DIGITS = string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_HEX = "0123456789ABCDEF"
BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
BASE32 = BASE32_LOWER.upper()
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


class Draw:
    """Random strings, bytes and UUIDs from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def rnd(self, alphabet: str, length: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(length))

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def raw(self, length: int) -> bytes:
        return bytes(self.rng.getrandbits(8) for _ in range(length))


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def begin(label: str) -> str:
    return "-----" + "BEGIN " + label + "-----"


def end(label: str) -> str:
    return "-----" + "END " + label + "-----"
