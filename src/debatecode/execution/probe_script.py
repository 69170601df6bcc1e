"""Evaluate calls against ``solution.py`` inside the sandbox (stdlib only; sent as a file).

Reads ``probe_calls.json`` (a list of call expressions), evaluates each with
the solution's names in scope under a per-call time limit, and writes one JSON
line per call to ``.dc_probes.jsonl``: the ``repr`` of the value, or the
exception's type name and message.
"""

import json
import os
import signal

_LIMIT = float(os.environ.get("DC_PROBE_TIMEOUT", "2"))
_REPR_CAP = 2000


class ProbeTimeout(Exception):
    """A call ran past its time limit."""


def _on_alarm(signum, frame):  # type: ignore[no-untyped-def]
    raise ProbeTimeout(f"call exceeded {_LIMIT:g}s")


def main() -> None:
    with open("probe_calls.json", encoding="utf-8") as handle:
        calls = json.load(handle)
    namespace: dict[str, object] = {}
    load_error = None
    try:
        with open("solution.py", encoding="utf-8") as handle:
            exec(compile(handle.read(), "solution.py", "exec"), namespace)
    except BaseException as exc:
        load_error = f"{type(exc).__name__}: {exc}"
    signal.signal(signal.SIGALRM, _on_alarm)
    with open(".dc_probes.jsonl", "w", encoding="utf-8") as out:
        for call in calls:
            record = {"call": call}
            if load_error is not None:
                record.update(outcome="raises", expected="ImportError", message=load_error)
            else:
                signal.setitimer(signal.ITIMER_REAL, _LIMIT)
                try:
                    value = eval(call, dict(namespace))
                    record.update(outcome="value", expected=repr(value)[:_REPR_CAP])
                except ProbeTimeout as exc:
                    record.update(outcome="timeout", expected="", message=str(exc))
                except BaseException as exc:
                    record.update(outcome="raises", expected=type(exc).__name__, message=str(exc)[:500])
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            out.write(json.dumps(record) + "\n")


main()
