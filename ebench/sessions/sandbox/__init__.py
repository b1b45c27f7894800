"""The exec_code sandbox (code mode): the solver's Python, with the domain tools as functions.

    runner = ExecCode(call_tool, domain.tools, limits=Limits())   # one per trial
    result = runner.run(code, on_call=None)                       # an ExecResult
    runner.close()                                                # or `with ExecCode(...)`

Each block runs in its own CPython worker process, forked by a zygote (zygote.py: confine.py
applies the OS layers, then execs worker.py, which preloads and forks); tool calls are proxied to
the parent, which runs them with `call_tool`.
No state persists between blocks. See isolation.py for the layers and what they guarantee.
"""

from .limits import Limits
from .result import CallRecord, ExecResult
from .runner import ExecCode, SandboxError
from .schema import EXEC_CODE_TOOL, exec_code_tool

__all__ = ["EXEC_CODE_TOOL", "CallRecord", "ExecCode", "ExecResult", "Limits", "SandboxError", "exec_code_tool"]
