"""Module-directory files compiled once by the supervisor (``runtime/modcode.py``)."""

from __future__ import annotations

import base64
import hashlib
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from arcjudge.sandbox import Program, ProgramStatus, Status
from arcjudge.sandbox.runtime import modcode

G = ((1, 2), (3, 4))


def test_imported_names_are_read_from_import_lines():
    text = textwrap.dedent(
        """
        from dsl import *
        import helper, other as o
          import indented
        from . import relative
        from pkg.sub import x
        # import commented
        x = "import quoted"
        """
    ).encode()
    assert modcode.imported_names(text) == ["dsl", "helper", "other", "indented", "pkg"]


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "dsl.py").write_text("from helper import *\nimport json\ndef f(x):\n    return x\n")
    (second / "dsl.py").write_text("def f(x):\n    return 'shadowed'\n")
    (second / "helper.py").write_text("def g(x):\n    return x\n")
    (second / "unused.py").write_text("def h(x):\n    return x\n")
    (second / "broken.py").write_text("def broken(:\n")
    return first, second


def test_a_job_gets_the_files_it_imports_first_directory_first(tmp_path):
    first, second = _dirs(tmp_path)
    code = modcode.ModuleCode().for_job(
        b"from dsl import f\nimport broken\n", [str(first), str(second)], ["/v/0", "/v/1"]
    )
    # dsl from the first directory (as sys.path finds it), helper through dsl's own
    # imports, nothing unused, nothing that does not compile (the program meets the error)
    assert sorted(code) == ["/v/0/dsl.py", "/v/1/helper.py"]
    digest, blob = code["/v/0/dsl.py"]
    assert digest == hashlib.sha256((first / "dsl.py").read_bytes()).hexdigest()
    compiled = marshal.loads(base64.b64decode(blob))
    assert compiled.co_filename == "/v/0/dsl.py"  # tracebacks name the program's path


def test_files_over_the_cap_are_left_to_the_program(tmp_path, monkeypatch):
    _, second = _dirs(tmp_path)
    monkeypatch.setattr(modcode, "MAX_FILE_BYTES", 25)
    code = modcode.ModuleCode().for_job(b"import helper\nimport dsl\n", [str(second)], ["/v"])
    assert sorted(code) == ["/v/helper.py"]  # dsl.py (32 bytes) is over the cap, helper.py (23) not


def test_code_sent_with_a_job_and_kept_stays_within_its_budgets(tmp_path, monkeypatch):
    _, second = _dirs(tmp_path)
    cache = modcode.ModuleCode()
    one = cache.for_job(b"import helper\n", [str(second)], ["/v"])
    size = len(one["/v/helper.py"][1])
    monkeypatch.setattr(modcode, "MAX_JOB_CODE", size)
    both = cache.for_job(b"import helper\nimport unused\n", [str(second)], ["/v"])
    assert sorted(both) == ["/v/helper.py"]  # the second file would pass the job's budget
    monkeypatch.setattr(modcode, "MAX_KEPT_CODE", size)
    (second / "third.py").write_text("def t(x):\n    return x\n")
    cache.for_job(b"import third\n", [str(second)], ["/v"])
    assert cache._kept <= size and len(cache._compiled) == 1  # the older ones were dropped


def test_compiled_code_is_kept_by_content(tmp_path, monkeypatch):
    _, second = _dirs(tmp_path)
    calls = []
    real = compile

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    # modcode looks builtins up in its pinned copy (runtime/pinned.py), not in builtins
    monkeypatch.setitem(modcode.pinned.BUILTINS, "compile", counting)
    cache = modcode.ModuleCode()
    one = cache.for_job(b"import helper\n", [str(second)], ["/v"])
    assert cache.for_job(b"import helper\n", [str(second)], ["/v"]) == one
    assert calls == ["/v/helper.py"]
    # the same bytes written again (same size, mtime put back): still the same code;
    # other bytes of the same size and mtime: compiled again
    path = second / "helper.py"
    stat = path.stat()
    path.write_text("def g(x):\n    return 7\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.for_job(b"import helper\n", [str(second)], ["/v"]) != one
    assert calls == ["/v/helper.py", "/v/helper.py"]


def test_the_loader_uses_the_code_only_for_the_same_bytes(tmp_path):
    """A file whose bytes differ from the compiled one's is compiled from source."""
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "same.py").write_text("VALUE = 'source'\n")
    (mods / "changed.py").write_text("VALUE = 'source'\n")
    forged = base64.b64encode(marshal.dumps(compile("VALUE = 'given'\n", "x", "exec"))).decode()
    digest = hashlib.sha256(b"VALUE = 'source'\n").hexdigest()
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(modcode.__file__).parent)!r})
        import modcode
        sys.path.insert(0, {str(mods)!r})
        modcode.install({{
            {str(mods / "same.py")!r}: [{digest!r}, {forged!r}],
            {str(mods / "changed.py")!r}: ["0" * 64, {forged!r}],
        }}, [{str(mods)!r}])
        import same, changed, json
        print(same.VALUE, changed.VALUE, json.__spec__.loader.__class__.__name__)
        """
    )
    out = subprocess.run(
        [sys.executable, "-B", "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    # the matching file takes the given code (here deliberately different, to see it),
    # the other its own source; the standard library keeps the default loader
    assert out == ["given", "source", "SourceFileLoader"]


def test_programs_import_precompiled_files_with_the_same_results(sandbox, tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "dsl.py").write_text("from helper import *\ndef double(g):\n    return g + g\n")
    (mods / "helper.py").write_text("def boom(g):\n    raise ValueError('boom from helper')\n")
    source = (
        b"from dsl import *\n"
        b"def verify(I):\n"
        b"    import dsl, sys\n"
        b"    if I[0][0] == 9:\n"
        b"        boom(I)\n"
        b"    loader = dsl.__spec__.loader\n"
        b"    given = getattr(type(loader), 'code', {})\n"
        b"    return double(I) if dsl.__file__ in given else I\n"
    )
    program = Program(source, ("verify",), (str(mods),), "tuple")
    result = sandbox.run(program, [G, ((9,),)])
    assert result.status is ProgramStatus.LOADED, result.error
    # the program's dsl came with the supervisor's code, and works as from source
    assert result.results[0].grid == G + G
    second = result.results[1]
    assert second.status is Status.ERROR
    assert 'helper.py", line 2, in boom' in second.error and "boom from helper" in second.error


def test_a_program_cannot_change_the_code_the_next_program_gets(sandbox, tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "dsl.py").write_text("VALUE = 1\n")
    poison = Program(
        b"import dsl, marshal, base64, sys\n"
        b"def verify(I):\n"
        b"    loader = type(dsl.__spec__.loader)\n"
        b"    for path in list(getattr(loader, 'code', {})):\n"
        b"        loader.code[path] = ['x', base64.b64encode(marshal.dumps(compile('VALUE = 2', 'p', 'exec'))).decode()]\n"  # noqa: E501
        b"    dsl.VALUE = 2\n"
        b"    try:\n"
        b"        open(dsl.__file__, 'w').write('VALUE = 2\\n')\n"
        b"    except OSError:\n"
        b"        pass\n"
        b"    return [[dsl.VALUE]]\n",
        ("verify",),
        (str(mods),),
    )
    honest = Program(b"import dsl\ndef verify(I):\n    return [[dsl.VALUE]]\n", ("verify",),
                     (str(mods),))  # fmt: skip
    for _ in range(3):
        assert sandbox.run(poison, [G]).results[0].grid == ((2,),)
        assert sandbox.run(honest, [G]).results[0].grid == ((1,),)
    assert (mods / "dsl.py").read_text() == "VALUE = 1\n"


def test_a_fifo_in_a_module_directory_never_blocks_the_supervisor(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    code = modcode.ModuleCode().for_job(b"import fifo\n", [str(tmp_path)], ["/v"])
    assert code == {}


def test_only_files_the_program_may_read_reach_its_job_frame(tmp_path):
    """Round three: the supervisor (root) never hands a program a file it could not read.

    A symlink out of the module directory (a task file, another source's directory), a
    file only its owner may read and a device are left out; a symlink to a file of the
    same directory is taken (what the program would read there too).
    """
    mods, other = tmp_path / "mods", tmp_path / "other-source"
    mods.mkdir()
    other.mkdir()
    secret = tmp_path / "task.json"
    secret.write_text('{"test": [{"output": [[4]]}]}')  # a JSON file compiles as Python
    (other / "private.py").write_text("KEY = 'other team'\n")
    (mods / "real.py").write_text("VALUE = 1\n")
    (mods / "leak.py").symlink_to(secret)
    (mods / "cross.py").symlink_to(other / "private.py")
    (mods / "relative.py").symlink_to("../task.json")
    (mods / "alias.py").symlink_to("real.py")
    (mods / "zero.py").symlink_to("/dev/zero")
    (mods / "owner_only.py").write_text("TOKEN = 1\n")
    os.chmod(mods / "owner_only.py", 0o600)
    source = b"import leak, cross, relative, alias, zero, owner_only, real\n"
    code = modcode.ModuleCode().for_job(source, [str(mods)], ["/v"])
    assert sorted(code) == ["/v/alias.py", "/v/real.py"]
    blobs = b"".join(base64.b64decode(blob) for _, blob in code.values())
    assert b"other team" not in blobs and b"output" not in blobs
