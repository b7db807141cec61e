"""Length-prefixed JSON frames over pipes (standard library only).

Every message between the harness, the supervisor and a program's child process is one
frame: a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. Readers cap
the length and parse strictly, because the peer may be hostile.
"""

from __future__ import annotations

import json
import os
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeAlias

    JsonObject: TypeAlias = dict[str, Any]
    """A decoded JSON object (a frame): the types of its values are checked where read."""

_HEADER = struct.Struct(">I")
_pack = _HEADER.pack
_write = os.write
_read = os.read
_len = len
_bytes = bytes


class FrameError(Exception):
    """A peer sent something that is not a well-formed frame."""


def _reject_constant(name: str) -> object:
    raise FrameError(f"non-standard JSON constant {name}")


# Made once: ``json.dumps``/``json.loads`` with options build a new one on every call.
_encode_json = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
_decode_json = json.JSONDecoder(parse_constant=_reject_constant).decode


def encode(obj: object) -> bytes:
    """Return the frame bytes for a JSON-serializable object.

    Args:
        obj: Plain data (dicts, lists, str, int, float, bool, None).

    Returns:
        The header and payload, ready to write.
    """
    payload = _encode_json(obj).encode()
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
        return _decode_json(payload.decode("utf-8"))
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
            (length,) = _HEADER.unpack_from(data)
            if length == _len(data) - _HEADER.size and length <= self.max_bytes:
                return [decode_payload(data[_HEADER.size :])]
        self._buf += data
        frames = []
        while len(self._buf) >= _HEADER.size:
            (length,) = _HEADER.unpack_from(self._buf)
            if length > self.max_bytes:
                raise FrameError(f"frame of {length} bytes exceeds the {self.max_bytes} cap")
            end = _HEADER.size + length
            if len(self._buf) < end:
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
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        raise FrameError(f"frame of {length} bytes exceeds the {max_bytes} cap")
    payload = _read_exact(fd, length)
    if payload is None:
        raise FrameError("truncated frame")
    return decode_payload(payload)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = _read(fd, n - len(chunks))
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
                os.set_blocking(self.fd, True)
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
        (length,) = _HEADER.unpack_from(buf)
        if length > self.max_bytes:
            raise FrameError(f"frame of {length} bytes exceeds the {self.max_bytes} cap")
        end = _HEADER.size + length
        while _len(buf) < end:
            if not self._fill():
                raise FrameError("truncated frame")
        payload = _bytes(buf[_HEADER.size : end])
        del buf[:end]
        return decode_payload(payload)
