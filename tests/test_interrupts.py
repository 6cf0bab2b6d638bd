"""Ctrl-C and SIGTERM while archcost writes a file (issue 45): one line and exit 130 (143 for SIGTERM), no
traceback, no temporary file left beside the target, and a target that existed keeps its old bytes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a sweep of 9 million points: long enough to be stopped while it writes (about 10 s on these machines)
SWEEP = ["sweep", str(ROOT / "specs" / "qwen3-8b.arch"), "--B", "1:9", "--S", "0:1000000:1", "--no-cache"]


@pytest.mark.parametrize(("sent", "code", "line"), [(signal.SIGINT, 130, "archcost: interrupted"),
                                                     (signal.SIGTERM, 143, "archcost: terminated")])
@pytest.mark.parametrize("existing", [False, True])
def test_a_signal_while_writing_leaves_no_temporary_and_the_old_file(tmp_path, sent, code, line, existing):
    target = tmp_path / "big.csv"
    if existing:
        target.write_text("the old sweep\n")
    # the child starts with SIGINT's default action, as a shell's foreground job does: a suite started in the
    # background (`pytest &`) hands its children an ignored SIGINT, which Python then leaves ignored
    process = subprocess.Popen([sys.executable, "-m", "archcost.compiler.cli", *SWEEP, "-o", str(target)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".big.csv.*")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert list(tmp_path.glob(".big.csv.*")), "the sweep began writing"
    process.send_signal(sent)
    out, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert err.strip().splitlines() == [line] and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["big.csv"] if existing else [])
    if existing:
        assert target.read_text() == "the old sweep\n"


# A command during which a signal's exception is lost: dropped in a finalizer, where Python prints it with its
# traceback (the fuzz run's SIGTERM 2.07 s into a sweep), or wrapped by a library (pydantic-core turned one into
# a SchemaError while it built a validator, and the program reported an internal error)
STOPPED = """
import os, signal, time
from types import SimpleNamespace
from archcost.compiler import cli
from archcost.compiler.cli import commands

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.{signal})
        time.sleep(0.5)  # the handler runs here, inside the finalizer

def dropped(args):
    Finalized()  # dropped at once: its finalizer runs, and Python drops what it raises
    print("done")
    return 0

def wrapped(args):
    try:
        os.kill(os.getpid(), signal.{signal})
        time.sleep(5)
    except BaseException:
        raise RuntimeError("a library's own error in place of the stop") from None
    return 0

# the command as the program runs one: parsed, then run inside main's handlers
commands.parser_for = lambda argv: SimpleNamespace(parse_args=lambda argv: SimpleNamespace(run={command}))
cli.entry()
"""


@pytest.mark.parametrize(("sent", "code", "line"), [("SIGTERM", 143, "archcost: terminated"),
                                                    ("SIGINT", 130, "archcost: interrupted")])
@pytest.mark.parametrize("command", ["dropped", "wrapped"])
def test_a_signal_whose_exception_is_lost_still_ends_the_program_quietly(tmp_path, sent, code, line, command):
    """The program ends as the signal asked (one line, its exit code, no traceback, no internal error), where a
    finalizer dropped the signal's exception (the command's files are whole: it ran to its end) or a library
    raised its own error in its place."""
    run = subprocess.run([sys.executable, "-c", STOPPED.format(signal=sent, command=command), "eval"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert run.returncode == code, run.stderr
    assert run.stdout == ("done\n" if command == "dropped" else "")
    assert run.stderr.strip().splitlines() == [line] and "Traceback" not in run.stderr
