"""The program's channels: fast frame encodings, buffered frame reads, hostile programs.

The supervisor formats input frames and the program formats its ``ok`` answers without
the JSON encoder, and the program reads its input frames through a buffered reader: the
bytes must be the encoder's, and a program that tampers with its channels (reads ahead,
makes its input pipe non-blocking, answers twice, answers ahead, floods answers) gets
what it got before: nothing of a later input, and a corrupted channel is its own
``invalid_output``, followed by a fresh process.
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import arcjudge.sandbox.runtime
from arcjudge.sandbox import Limits, Program, ProgramStatus, Status

# the runtime's modules as they run: by bare name, from their own directory
sys.path.insert(0, arcjudge.sandbox.runtime.__path__[0])
try:
    framing, entry_calls, child = (
        importlib.import_module(name) for name in ("framing", "entry_calls", "child")
    )
finally:
    del sys.path[0]

G1 = ((1, 2), (3, 4))
G2 = ((0, 5, 0),)
G3 = ((7,),)
FAST = Limits(wall_seconds=2.0, total_seconds=30.0)

wires = st.builds(
    lambda w, h, data: [w, "".join(str(data.draw(st.integers(0, 9))) for _ in range(w * h))],
    st.integers(1, 5),
    st.integers(1, 5),
    st.data(),
)


@given(st.integers(0, 10**6), wires, st.sampled_from(["transform", "generate", None]))
def test_input_bytes_are_the_encoders(index: int, wire: list[object], mode: str | None) -> None:
    frame = child.input_frame(index, wire, mode)
    assert child.input_bytes(index, wire, mode) == framing.encode(frame)


@pytest.mark.parametrize(
    "item",
    [[2, "12\"4"], [2, "12\u00b34"], [True, "1234"], [2, 1234], [[1, 2], [3, 4]],
     {"seed": 3, "kwargs": {}}, [2, "\uff11\uff12"]],
)  # fmt: skip
def test_input_bytes_off_the_fast_path(item: object) -> None:
    for mode in ("transform", "generate"):
        assert child.input_bytes(4, item, mode) == framing.encode(child.input_frame(4, item, mode))


@given(st.integers(0, 10**6), wires)
def test_ok_answer_bytes_are_the_encoders(index: int, wire: list[object]) -> None:
    msg = {"k": "out", "i": index, "s": "ok", "g": wire}
    assert entry_calls.out_frame(msg) == framing.encode(msg)


@pytest.mark.parametrize(
    "msg",
    [{"k": "out", "i": 1, "s": "error", "e": "x\u2028\ud800"},
     {"k": "out", "i": 1, "s": "ok", "g": [1, "1"], "o": [1, "2"]},
     {"k": "out", "i": True, "s": "ok", "g": [1, "1"]},
     {"k": "out", "i": 1, "s": "invalid_output", "e": "not a grid: int"}],
)  # fmt: skip
def test_other_answers_go_through_the_encoder(msg: dict[str, object]) -> None:
    assert entry_calls.out_frame(msg) == framing.encode(msg)


def _pipe_with(data: bytes) -> int:
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


def test_buffered_input_reads_frames_across_and_within_reads() -> None:
    frames = [{"i": k, "x": "y" * (k * 7000)} for k in range(12)]
    fd = _pipe_with(b"")  # empty, for the end-of-file case
    assert framing.BlockingFrameInput(fd, 1 << 20).read() is None
    os.close(fd)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a writer that sends in odd pieces
        os.close(r)
        data = b"".join(framing.encode(f) for f in frames)
        for k in range(0, len(data), 4097):
            os.write(w, data[k : k + 4097])
        os._exit(0)
    os.close(w)
    try:
        reader = framing.BlockingFrameInput(r, 1 << 20)
        assert [reader.read() for _ in frames] == frames
        assert reader.read() is None
    finally:
        os.close(r)
        os.waitpid(pid, 0)


def test_buffered_input_makes_a_non_blocking_descriptor_blocking_again() -> None:
    r, w = os.pipe()
    os.set_blocking(r, False)
    pid = os.fork()
    if pid == 0:
        os.close(r)
        import time

        time.sleep(0.2)
        framing.write_frame(w, {"i": 0})
        os._exit(0)
    os.close(w)
    try:
        assert framing.BlockingFrameInput(r, 1024).read() == {"i": 0}
        assert os.get_blocking(r)
    finally:
        os.close(r)
        os.waitpid(pid, 0)


@pytest.mark.parametrize(
    ("data", "problem"),
    [(b"\x00\x00", "truncated frame"), (b"\x00\x00\x00\x05{}", "truncated frame"),
     (b"\x00\x10\x00\x00", "exceeds the 1024 cap"), (b"\x00\x00\x00\x03NaN", "non-standard"),
     (b"\x00\x00\x00\x02{\xff", "malformed frame")],
)  # fmt: skip
def test_buffered_input_rejects_what_read_frame_rejects(data: bytes, problem: str) -> None:
    for read in (
        lambda fd: framing.BlockingFrameInput(fd, 1024).read(),
        lambda fd: framing.read_frame(fd, 1024),
    ):
        fd = _pipe_with(data)
        try:
            with pytest.raises(framing.FrameError, match=problem):
                read(fd)
        finally:
            os.close(fd)


# ------------------------------------------------------------- hostile programs, for real


@pytest.fixture(scope="module", params=["process", "docker"])
def box(request):
    """One worker of each backend (docker's skips without a daemon and the image)."""
    if request.param == "docker":
        from arcjudge.sandbox.docker import DockerSandbox

        sb = DockerSandbox(workers=1, image=request.getfixturevalue("docker_image"))
    else:
        from arcjudge.sandbox.process import ProcessSandbox

        sb = ProcessSandbox(workers=1)
    yield sb
    sb.close()


def prog(text: str) -> Program:
    return Program(text.encode(), ("transform",))


def test_a_non_blocking_input_pipe_still_gets_every_input(box):
    src = (
        "import os\nos.set_blocking(4, False)\n"
        "def transform(g):\n    os.set_blocking(4, False)\n    return g\n"
    )
    r = box.run(prog(src), [G1, G2, G3], FAST)
    assert r.status is ProgramStatus.LOADED
    assert [x.grid for x in r.results] == [G1, G2, G3]


READ_AHEAD = """
import os, time
def transform(g):
    seen = b''
    for _ in range(20):  # the next input, if the supervisor ever sent it early
        try:
            os.set_blocking(4, False)
            seen += os.read(4, 1 << 16)
        except OSError:
            pass
        time.sleep(0.005)
    os.set_blocking(4, True)
    return [[min(9, len(seen))]]
"""


def test_no_later_input_can_be_read_ahead(box):
    r = box.run(prog(READ_AHEAD), [G1, G2, G3], FAST)
    assert [x.grid for x in r.results] == [((0,),)] * 3


ANSWER = """
import os, struct
def frame(obj):
    import json
    data = json.dumps(obj, separators=(',', ':')).encode()
    os.write(3, struct.pack('>I', len(data)) + data)
calls = []
"""


BAD = (Status.INVALID_OUTPUT, None)
NINE = (Status.OK, ((9,),))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # answers input i+1 before i (its count of calls restarts in each fresh process)
        ("frame({'k': 'out', 'i': len(calls), 's': 'ok', 'g': [1, '9']})",
         [BAD, NINE, BAD, BAD]),
        # answers input i twice, the forged answer first: the real one is unexpected next
        ("frame({'k': 'out', 'i': len(calls) - 1, 's': 'ok', 'g': [1, '9']})",
         [NINE, BAD, BAD, BAD]),
        # floods answers for later inputs: in a fresh process, answers given ahead (blind:
        # the inputs were not sent yet) are its answers, as they always were
        ("[frame({'k': 'out', 'i': k, 's': 'ok', 'g': [1, '9']}) for k in range(len(calls), 50)]",
         [BAD, NINE, NINE, NINE]),
    ],
)  # fmt: skip
def test_forged_answers_are_a_corrupted_channel(box, body, expected):
    src = ANSWER + f"def transform(g):\n    calls.append(1)\n    {body}\n    return g\n"
    r = box.run(prog(src), [G1, G2, G3, G1], FAST)
    assert r.status is ProgramStatus.LOADED
    assert [(x.status, x.grid) for x in r.results] == expected
    for x in r.results:
        if x.status is Status.INVALID_OUTPUT:
            assert x.error == "corrupted result channel: unexpected frame"


def test_frame_reader_whole_split_and_several_frames() -> None:
    one, two = framing.encode({"k": "out", "i": 0}), framing.encode({"k": "out", "i": 1})
    reader = framing.FrameReader(1024)
    assert reader.feed(one) == [{"k": "out", "i": 0}]
    assert reader.feed(one[:3]) == []
    assert reader.feed(one[3:] + two[:5]) == [{"k": "out", "i": 0}]
    assert reader.feed(two[5:] + one) == [{"k": "out", "i": 1}, {"k": "out", "i": 0}]
    with pytest.raises(framing.FrameError, match="exceeds the 4 cap"):
        framing.FrameReader(4).feed(one)
    with pytest.raises(framing.FrameError, match="non-standard"):
        framing.FrameReader(1024).feed(b"\x00\x00\x00\x03NaN")
