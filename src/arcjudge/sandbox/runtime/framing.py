"""Length-prefixed JSON frames over pipes (standard library only).

Every message between the harness, the supervisor and a program's child process is one
frame: a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. Readers cap
the length and parse strictly, because the peer may be hostile.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
import os
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import pinned
else:
    try:  # the harness imports this module from the package, the supervisor by bare name
        from . import pinned
    except ImportError:
        import pinned

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    JsonObject: TypeAlias = dict[str, Any]
    """A decoded JSON object (a frame): the types of its values are checked where read."""

pinned.pin(globals())  # this module runs beside programs: see pinned.py

_HEADER = struct.Struct(">I")
_pack = _HEADER.pack
_unpack = _HEADER.unpack
_unpack_from = _HEADER.unpack_from
_write = os.write
_read = os.read
_set_blocking = os.set_blocking
_len = len
_bytes = bytes
_join = "".join
_decode = bytes.decode
_encode_text = str.encode


class FrameError(Exception):
    """A peer sent something that is not a well-formed frame."""


def _reject_constant(name: str) -> object:
    raise FrameError(f"non-standard JSON constant {name}")


def _not_json(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _c_codec() -> tuple[Callable[[object, int], Any], Callable[[str, int], tuple[object, int]]]:
    """The C encoder and scanner of the ``json`` package, made once.

    They are what ``json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode`` and
    ``json.JSONDecoder(parse_constant=...).decode`` use, called directly: those methods
    are Python code that looks up ``len``, ``isinstance`` and ``list`` in the builtins a
    program may change, and every frame a program sends goes through here.
    """
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    make_scanner = getattr(json.scanner, "c_make_scanner", None)
    escape = getattr(json.encoder, "c_encode_basestring_ascii", None)
    if make_encoder is None or make_scanner is None or escape is None:  # pragma: no cover
        raise ImportError("the json package's C accelerator (_json) is missing")
    encoder: Callable[[object, int], Any] = make_encoder(
        None, _not_json, escape, None, ":", ",", False, False, False
    )
    scanner: Callable[[str, int], tuple[object, int]] = make_scanner(
        json.JSONDecoder(parse_constant=_reject_constant)
    )
    return encoder, scanner


_c_encode, _c_scan = _c_codec()


def _encode_json(obj: object) -> str:
    """``obj`` as compact JSON, ASCII only, no NaN (``json.dumps``' text, byte for byte)."""
    return _join(_c_encode(obj, 0))


def _decode_json(text: str) -> object:
    """Parse one JSON value that fills ``text`` (no whitespace around it)."""
    try:
        value, end = _c_scan(text, 0)
    except StopIteration as stop:
        raise ValueError(f"no JSON value at {stop.value}") from None
    if end != _len(text):
        raise ValueError(f"extra data at {end}")
    return value


def encode(obj: object) -> bytes:
    """Return the frame bytes for a JSON-serializable object.

    Args:
        obj: Plain data (dicts, lists, str, int, float, bool, None).

    Returns:
        The header and payload, ready to write.
    """
    payload = _encode_text(_encode_json(obj))
    return _pack(_len(payload)) + payload


def write_frame(fd: int, obj: object) -> None:
    """Write one frame to a file descriptor, retrying short writes.

    Args:
        fd: A blocking file descriptor.
        obj: Plain data to send.
    """
    data = memoryview(encode(obj))
    while data:
        n = _write(fd, data)
        data = data[n:]


def decode_payload(payload: bytes) -> object:
    """Parse a frame payload strictly (no NaN/Infinity, UTF-8 only).

    Args:
        payload: The bytes after the header.

    Returns:
        The parsed object.

    Raises:
        FrameError: If the payload is not strict JSON.
    """
    try:
        return _decode_json(_decode(payload, "utf-8"))
    except FrameError:
        raise
    except Exception as exc:
        raise FrameError(f"malformed frame: {type(exc).__name__}") from None


class FrameReader:
    """Incremental frame parser for a non-blocking reader."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[object]:
        """Add received bytes and return the frames they complete.

        Args:
            data: Bytes read from the pipe.

        Returns:
            Parsed frames, in order.

        Raises:
            FrameError: On an oversized or malformed frame.
        """
        if not self._buf and _len(data) >= _HEADER.size:  # the common case: one whole frame
            (length,) = _unpack_from(data)
            if length == _len(data) - _HEADER.size and length <= self.max_bytes:
                return [decode_payload(data[_HEADER.size :])]
        self._buf += data
        frames = []
        while _len(self._buf) >= _HEADER.size:
            (length,) = _unpack_from(self._buf)
            if length > self.max_bytes:
                raise FrameError(f"frame of {length} bytes exceeds the {self.max_bytes} cap")
            end = _HEADER.size + length
            if _len(self._buf) < end:
                break
            frames.append(decode_payload(bytes(self._buf[_HEADER.size : end])))
            del self._buf[:end]
        return frames


def read_frame(fd: int, max_bytes: int) -> object | None:
    """Read exactly one frame from a blocking descriptor.

    Args:
        fd: A blocking file descriptor.
        max_bytes: Largest payload accepted.

    Returns:
        The parsed frame, or ``None`` at end of file before a header.

    Raises:
        FrameError: On a truncated, oversized or malformed frame.
    """
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (length,) = _unpack(header)
    if length > max_bytes:
        raise FrameError(f"frame of {length} bytes exceeds the {max_bytes} cap")
    payload = _read_exact(fd, length)
    if payload is None:
        raise FrameError("truncated frame")
    return decode_payload(payload)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = bytearray()
    while _len(chunks) < n:
        chunk = _read(fd, n - _len(chunks))
        if not chunk:
            if chunks:
                raise FrameError("truncated frame")
            return None
        chunks += chunk
    return bytes(chunks)


class BlockingFrameInput:
    """Frames from a blocking descriptor, read in large chunks (fewer system calls).

    Reads what the pipe holds, up to 64 KiB at a time, and keeps bytes beyond the frame
    for the next call. A descriptor found non-blocking (the untrusted program in the same
    process may have made it so: it only hurts itself) is made blocking again.
    """

    def __init__(self, fd: int, max_bytes: int) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self._buf = bytearray()

    def _fill(self) -> int:
        while True:
            try:
                chunk = _read(self.fd, 65536)
            except BlockingIOError:
                _set_blocking(self.fd, True)
                continue
            self._buf += chunk
            return _len(chunk)

    def read(self) -> object | None:
        """Read exactly one frame (as :func:`read_frame` does).

        Returns:
            The parsed frame, or ``None`` at end of file before a header.

        Raises:
            FrameError: On a truncated, oversized or malformed frame.
            OSError: When the descriptor cannot be read.
        """
        buf = self._buf
        while _len(buf) < _HEADER.size:
            if not self._fill():
                if buf:
                    raise FrameError("truncated frame")
                return None
        (length,) = _unpack_from(buf)
        if length > self.max_bytes:
            raise FrameError(f"frame of {length} bytes exceeds the {self.max_bytes} cap")
        end = _HEADER.size + length
        while _len(buf) < end:
            if not self._fill():
                raise FrameError("truncated frame")
        payload = _bytes(buf[_HEADER.size : end])
        del buf[:end]
        return decode_payload(payload)
