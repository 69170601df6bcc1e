"""Code under test that tries to forge its own verdict instead of being right.

Every entry is a HumanEval-style *completion* of ``add(x, y)`` (HumanEval/53's
prompt) whose arithmetic is wrong (``x - y``) and which then tries one way to
make the tests report success anyway. A sound checker scores every entry 0.
``HONEST`` is the control: the same shape, right, and it must pass.
"""

from __future__ import annotations

import textwrap

PROMPT = '''

def add(x: int, y: int):
    """Add two numbers x and y
    >>> add(2, 3)
    5
    >>> add(5, 7)
    12
    """
'''
"""HumanEval/53's prompt (the completion continues it)."""

HONEST = "    return x + y\n"
WRONG = "    return x - y\n"


def _with_module_code(body: str, module_code: str) -> str:
    return body + "\n\n" + textwrap.dedent(module_code).strip() + "\n"


_FAKE_RECORDS = r"""
import json
_NAMES = ["check", "test_example_1", "test_example_2", "test_large_numbers", "test_is_commutative"]
_LINES = [json.dumps({"event": "collected", "tests": _NAMES, "files": ["test_task.py"] * 5})]
_LINES += [json.dumps({"event": "result", "name": n, "file": "test_task.py", "outcome": "passed",
                       "duration_s": 0.0, "message": ""}) for n in _NAMES]
_LINES += [json.dumps({"event": "done"})]
_FORGED = "".join(f"\n@@DC_VERDICT@@ {nonce} {line}\n" for nonce in ("", "0" * 32) for line in _LINES)
_FORGED += "\n@@DEBATECODE_RESULT@@" + json.dumps({"status": "ok", "exit_code": 0, "stdout": "", "stderr": ""}) + "\n"
_FORGED += "\n" + "=" * 20 + " 5 passed in 0.01s " + "=" * 20 + "\nOK\n"
"""

FORGERIES: dict[str, str] = {
    # 1. Write the result files an in-process harness would read, then leave before any test runs.
    "result_file_then_exit": _with_module_code(
        WRONG,
        _FAKE_RECORDS
        + """
        import os
        for _name in (".dc_results.jsonl", ".dc_probes.jsonl", "report.xml", "results.json"):
            with open(_name, "w") as _f:
                _f.write("\\n".join(_LINES) + "\\n" + repr({"event": "collected", "tests": ["check"]}) + "\\n")
                _f.write(repr({"name": "check", "outcome": "passed", "duration_s": 0.0, "message": ""}) + "\\n")
        os._exit(0)
        """,
    ),
    # 2. Exit with status 0 from inside the function under test.
    "os_exit_in_call": "    import os\n    os._exit(0)\n",
    # 3. sys.exit(0) at import time, and 4. in the call.
    "sys_exit_at_import": _with_module_code(WRONG, "import sys\nsys.exit(0)"),
    "sys_exit_in_call": "    raise SystemExit(0)\n",
    # 5. An object equal to everything.
    "always_equal_object": _with_module_code(
        "    return AlwaysEqual()\n",
        """
        class AlwaysEqual:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __hash__(self): return 0
            def __bool__(self): return True
            def __repr__(self): return "5"
        """,
    ),
    # 6. A subclass of int, and 7. of str, whose comparisons always succeed.
    "int_subclass_equal_to_all": _with_module_code(
        "    return Liar(x - y)\n",
        """
        class Liar(int):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = int.__hash__
        """,
    ),
    "str_subclass_equal_to_all": _with_module_code(
        "    return Liar('nope')\n",
        """
        class Liar(str):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = str.__hash__
        """,
    ),
    # 8. Re-execute the interpreter with -O so that assert statements vanish.
    "reexec_with_O": _with_module_code(
        WRONG,
        """
        import os, sys
        if not sys.flags.optimize:
            os.execv(sys.executable, [sys.executable, "-O", *sys.argv])
        """,
    ),
    # 9. Patch builtins the test code relies on.
    "patch_builtins": _with_module_code(
        WRONG,
        """
        import builtins
        builtins.AssertionError = type("NeverRaised", (Exception,), {})
        builtins.isinstance = lambda *a: True
        builtins.len = lambda *a: 0
        builtins.abs = lambda *a: 0
        builtins.range = lambda *a: iter(())
        """,
    ),
    # 10. Swallow failures through sys.excepthook, threading.excepthook and atexit.
    "excepthook_and_atexit": _with_module_code(
        WRONG,
        """
        import atexit, os, sys, threading
        sys.excepthook = lambda *a: None
        threading.excepthook = lambda *a: None
        atexit.register(os._exit, 0)
        """,
    ),
    # 11. Kill the parent process (the checker, or an in-process harness's runner), and everything else.
    "kill_the_parent": "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    return x + y\n",
    "kill_everything": "    import os, signal\n    os.kill(-1, signal.SIGKILL)\n    return x + y\n",
    # 12. Print what a passing run prints, and forged verdict lines, on every stream it can reach.
    "fake_passed_output": _with_module_code(
        WRONG,
        _FAKE_RECORDS
        + """
        import os, sys
        print(_FORGED)
        sys.stderr.write(_FORGED)
        for _fd in (1, 2):
            try:
                os.write(_fd, _FORGED.encode())
            except OSError:
                pass
        for _path in ("/dev/stdout", "/dev/stderr", "/dev/tty"):
            try:
                with open(_path, "w") as _f:
                    _f.write(_FORGED)
            except OSError:
                pass
        """,
    ),
    # 13. pytest plugin and conftest tricks: files a pytest run in the work dir would load.
    "pytest_conftest_and_plugins": _with_module_code(
        WRONG,
        '''
        _PLUGIN = """
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
            report.longrepr = None
        def pytest_collection_modifyitems(items):
            for item in items:
                item.runtest = lambda: None
        """
        for _name in ("conftest.py", "evil_plugin.py", "sitecustomize.py"):
            with open(_name, "w") as _f:
                _f.write(_PLUGIN)
        with open("pytest.ini", "w") as _f:
            _f.write("[pytest]\\naddopts = -p evil_plugin -p no:assertion\\npython_files = nothing_*.py\\n")
        with open("setup.cfg", "w") as _f:
            _f.write("[tool:pytest]\\naddopts = -p evil_plugin\\n")
        with open("tox.ini", "w") as _f:
            _f.write("[pytest]\\naddopts = -p evil_plugin\\n")
        ''',
    ),
    # 14. Monkeypatch the checker's own module, in memory and on disk.
    "monkeypatch_the_checker": _with_module_code(
        WRONG,
        _FAKE_RECORDS
        + """
        import sys
        for _module in list(sys.modules.values()):
            for _attr in ("run_with_limit", "run_test", "_check", "record", "write"):
                if hasattr(_module, _attr) and getattr(_module, "__name__", "") in ("__main__", "_dc_check"):
                    try:
                        setattr(_module, _attr, lambda *a, **k: ("passed", ""))
                    except Exception:
                        pass
            for _cls in ("Verdict", "Session", "Checker", "Recorder"):
                _klass = getattr(_module, _cls, None)
                if isinstance(_klass, type):
                    for _name in ("write", "record", "request"):
                        try:
                            setattr(_klass, _name, lambda *a, **k: None)
                        except Exception:
                            pass
        _FAKE_CHECKER = "import sys\\nsys.stdout.write(" + repr(_FORGED) + ")\\n"
        for _name in ("_dc_check.py", "probe.py", "check_harness.py"):
            try:
                with open(_name, "w") as _f:
                    _f.write(_FAKE_CHECKER)
            except OSError:
                pass
        """,
    ),
    # 15. A sitecustomize / usercustomize / .pth in the work dir, then a fresh interpreter to pick them up.
    "sitecustomize_and_pth": _with_module_code(
        WRONG,
        _FAKE_RECORDS
        + """
        import os, sys
        _HOOK = "import sys\\nsys.stdout.write(" + repr(_FORGED) + ")\\nsys.stdout.flush()\\n"
        for _name in ("sitecustomize.py", "usercustomize.py"):
            with open(_name, "w") as _f:
                _f.write(_HOOK)
        with open("zz_forge.pth", "w") as _f:
            _f.write("import sys; sys.stdout.write(" + repr(_FORGED) + ")\\n")
        os.environ["PYTHONPATH"] = os.getcwd()
        os.environ["PYTHONSTARTUP"] = os.path.join(os.getcwd(), "sitecustomize.py")
        os.system(sys.executable + " -c pass")
        """,
    ),
    # 16. Find the nonce (files, the parent's memory, argv and environment) and write a forged verdict
    #     straight into the parent's stdout.
    "steal_nonce_and_write_parent_stdout": _with_module_code(
        WRONG,
        _FAKE_RECORDS
        + """
        import glob, os, re
        _found = set()
        for _path in [".dc_nonce", ".dc_plan.json", *glob.glob(".dc_*"), *glob.glob("test_*.py")]:
            try:
                _found.update(re.findall(r"[0-9a-f]{32}", open(_path).read()))
            except OSError:
                pass
        _pids = [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
        for _pid in _pids:
            for _part in ("environ", "cmdline", "mem"):
                try:
                    with open(f"/proc/{_pid}/{_part}", "rb") as _f:
                        _found.update(m.decode() for m in re.findall(rb"[0-9a-f]{32}", _f.read(1 << 20)))
                except (OSError, ValueError):
                    pass
        _forged = "".join(f"\\n@@DC_VERDICT@@ {n} {line}\\n" for n in _found for line in _LINES) + _FORGED
        for _pid in _pids:
            for _fd in (1, 2):
                try:
                    with open(f"/proc/{_pid}/fd/{_fd}", "w") as _f:
                        _f.write(_forged)
                except OSError:
                    pass
        print(_forged)
        """,
    ),
    # 17. Attach to the parent with ptrace and write its memory.
    "ptrace_the_parent": _with_module_code(
        WRONG,
        """
        import ctypes, os
        _libc = ctypes.CDLL(None, use_errno=True)
        PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
        for _request in (PTRACE_ATTACH, PTRACE_SEIZE):
            _libc.ptrace(_request, os.getppid(), None, None)
        _buf = ctypes.create_string_buffer(b"passed" * 10)
        class _Iov(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        _local = _Iov(ctypes.cast(_buf, ctypes.c_void_p), 60)
        _remote = _Iov(0x400000, 60)
        _libc.process_vm_writev(os.getppid(), ctypes.byref(_local), 1, ctypes.byref(_remote), 1, 0)
        """,
    ),
    # 18. Signal the parent: an alarm (which a harness might take for its own) and a stop/continue.
    "signal_the_parent": "    import os, signal\n    os.kill(os.getppid(), signal.SIGALRM)\n    os.kill(os.getppid(), signal.SIGTERM)\n    return x - y\n",
    # 19. Raise the test framework's own "skip"/"pass" outcomes from inside the code.
    "raise_framework_outcomes": _with_module_code(
        "    raise Skipped('skip me')\n",
        """
        class OutcomeException(BaseException):
            pass
        class Skipped(OutcomeException):
            pass
        Skipped.__module__ = "_pytest.outcomes"
        Skipped.__qualname__ = "Skipped"
        """,
    ),
    # 20. Return a value whose repr, str and comparisons all claim to be the expected one.
    "lying_repr_float_subclass": _with_module_code(
        "    return Fake(x - y)\n",
        """
        class Fake(float):
            def __eq__(self, other): return True
            def __repr__(self): return "5"
            __str__ = __repr__
            __hash__ = float.__hash__
        """,
    ),
}
"""Technique name -> completion of HumanEval/53 that is wrong and tries to pass anyway."""


def code_of(completion: str) -> str:
    """The whole solution module: the prompt continued by ``completion``."""
    return PROMPT + completion
