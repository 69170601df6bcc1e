"""The two-process checker (``sandbox/_guest/checker.py``) pinned through its three entry points.

The checker owns the tests and the verdict; the code under test runs in a
forked child and answers with plain data. These tests run real jobs on the
Docker-free ``DummySandbox`` (no isolation: the code here is written by the
tests) through ``run_checks`` (light mode), ``CandidateTester`` (pytest mode) and
``Prober`` (probe mode), and pin what tests see of the code under test:
exact types, objects behind handles, callbacks, exceptions, output, time
limits and the work dir.
"""

from __future__ import annotations

import textwrap

import pytest
from tests.support.dummy_sandbox import DummySandbox

from debatecode.config import SandboxSettings
from debatecode.execution.probes import Prober, ProbeResult
from debatecode.execution.results import TestReport
from debatecode.execution.tester import CandidateTester
from debatecode.sandbox.base import Limits
from debatecode.sandbox.checks import CheckJob, CheckResult, run_checks
from debatecode.task import parse_task

PER_TEST_S = 5.0
SHORT_S = 0.5
"""Per-test limit of the tests that time out on purpose."""


async def light(
    code: str, tests: str, *, per_test_s: float = PER_TEST_S, entry_point: str | None = None
) -> CheckResult:
    job = CheckJob(
        code=textwrap.dedent(code), tests=textwrap.dedent(tests), entry_point=entry_point, test_timeout_s=per_test_s
    )
    (result,) = await run_checks(DummySandbox(), [job], limits=Limits(timeout_s=30))
    return result


def outcomes(result: CheckResult) -> dict[str, str]:
    return {test.name: test.outcome for test in result.tests}


def message(result: CheckResult, name: str) -> str:
    return next(test.message for test in result.tests if test.name == name)


def assert_all_passed(result: CheckResult) -> None:
    failures = {test.name: test.message[-1500:] for test in result.tests if test.outcome != "passed"}
    assert not failures and result.passed, failures or result.stderr[-1500:]


def task_text(code_block: str, examples: str = ">>> double(2)\n4\n", entry_point: str = "double") -> str:
    return (
        f"---\ntitle: Pinned\nentry_point: {entry_point}\ntime_limit: 5s\n---\nA task for the checker's tests.\n\n"
        f"## Examples\n{examples}\n## Tests\n```python\n{textwrap.dedent(code_block)}```\n"
    )


async def pytest_mode(task: str, code: str) -> TestReport:
    runner = CandidateTester(parse_task(task), DummySandbox(), SandboxSettings())
    return await runner.run(textwrap.dedent(code))


def case_outcomes(report: TestReport) -> dict[str, str]:
    return {case.name: case.outcome for case in report.cases}


# --------------------------------------------------------------------------- plain data


ROUND_TRIP_CODE = """
    def echo(value):
        return value

    def kind(value):
        return type(value).__name__

    def make():
        return {
            "int": 10**40, "neg": -7, "float": 0.1, "nan": float("nan"), "inf": float("inf"),
            "ninf": float("-inf"), "nzero": -0.0, "text": "h\u00e9llo \u4e16\u754c \U0001f600",
            "lone": "a\\ud800b", "bytes": b"\\x00\\xff ok", "bytearray": bytearray(b"ba"),
            "complex": complex(1.5, -2), "tuple": (1, "a"), "list": [1, "a"],
            "keys": {1: "one", (2, 3): "pair", None: "none", 2.5: "f", frozenset({4}): "fs", b"k": "b"},
            "set": {1, 2}, "frozenset": frozenset({"x"}), "none": None, "true": True, "false": False,
            "nested": [({"a": [1, (2, {3})]}, frozenset({(4, 5)}))],
        }
"""


async def test_plain_data_returned_by_the_code_keeps_exact_types_and_values() -> None:
    tests = """
        import math
        def test_values():
            v = make()
            assert type(v) is dict
            assert type(v["int"]) is int and v["int"] == 10**40 and v["neg"] == -7
            assert type(v["float"]) is float and v["float"] == 0.1
            assert type(v["nan"]) is float and math.isnan(v["nan"])
            assert v["inf"] == math.inf and v["ninf"] == -math.inf
            assert type(v["nzero"]) is float and v["nzero"] == 0 and math.copysign(1.0, v["nzero"]) == -1.0
            assert v["text"] == "h\u00e9llo \u4e16\u754c \U0001f600" and len(v["text"]) == 10
            assert v["lone"] == "a\\ud800b" and len(v["lone"]) == 3
            assert type(v["bytes"]) is bytes and v["bytes"] == b"\\x00\\xff ok"
            assert type(v["bytearray"]) is bytearray and v["bytearray"] == bytearray(b"ba")
            assert type(v["complex"]) is complex and v["complex"] == complex(1.5, -2)
            assert type(v["tuple"]) is tuple and v["tuple"] == (1, "a")
            assert type(v["list"]) is list and v["list"] == [1, "a"]
            assert v["keys"] == {1: "one", (2, 3): "pair", None: "none", 2.5: "f", frozenset({4}): "fs", b"k": "b"}
            assert list(v["keys"]) == [1, (2, 3), None, 2.5, frozenset({4}), b"k"]
            assert type(v["set"]) is set and v["set"] == {1, 2}
            assert type(v["frozenset"]) is frozenset and v["frozenset"] == frozenset({"x"})
            assert v["none"] is None and v["true"] is True and v["false"] is False
            assert v["nested"] == [({"a": [1, (2, {3})]}, frozenset({(4, 5)}))]
            assert type(v["nested"][0]) is tuple and type(v["nested"][0][0]["a"][1]) is tuple
    """
    assert_all_passed(await light(ROUND_TRIP_CODE, tests))


async def test_plain_data_passed_to_the_code_arrives_with_exact_types_and_comes_back() -> None:
    tests = """
        import math
        VALUES = [
            (0, "int"), (True, "bool"), (False, "bool"), (None, "NoneType"), (1.0, "float"), (-0.0, "float"),
            ("\\ud800\U0001f600", "str"), (b"\\xff", "bytes"), (bytearray(b"x"), "bytearray"), (2j, "complex"),
            ((1,), "tuple"), ([1], "list"), ({(1, 2): {3}}, "dict"), ({1}, "set"), (frozenset({1}), "frozenset"),
        ]
        def test_kinds_on_the_other_side():
            assert [kind(value) for value, _ in VALUES] == [name for _, name in VALUES]
        def test_echo_is_identity_on_values_and_types():
            for value, _ in VALUES:
                back = echo(value)
                assert type(back) is type(value) and back == value, (value, back)
            assert echo(True) is True and type(echo(1)) is int
            assert math.copysign(1.0, echo(-0.0)) == -1.0
            assert math.isnan(echo(float("nan"))) and echo(float("-inf")) == -math.inf
            assert echo({"k": [(1, 2.5, "s", b"b", None)]}) == {"k": [(1, 2.5, "s", b"b", None)]}
    """
    assert_all_passed(await light(ROUND_TRIP_CODE, tests))


@pytest.mark.xfail(
    strict=True, reason="JSON escapes both the same way: the wire cannot tell a surrogate pair from its character"
)
async def test_a_surrogate_pair_spelled_as_two_code_points_stays_two_code_points() -> None:
    tests = """
        def test_pair():
            assert len(echo("\\ud83d\\ude00")) == 2
    """
    assert_all_passed(await light(ROUND_TRIP_CODE, tests))


async def test_collections_types_and_named_tuples_arrive_as_their_plain_base() -> None:
    code = """
        import collections
        Point = collections.namedtuple("Point", "x y")
        def counter():
            return collections.Counter("aab")
        def ordered():
            return collections.OrderedDict([("b", 1), ("a", 2)])
        def default():
            d = collections.defaultdict(list)
            d["k"].append(1)
            return d
        def point():
            return Point(1, 2)
    """
    tests = """
        def test_counter_is_a_dict():
            value = counter()
            assert type(value) is dict and value == {"a": 2, "b": 1}
        def test_ordered_dict_is_a_dict_in_order():
            value = ordered()
            assert type(value) is dict and list(value.items()) == [("b", 1), ("a", 2)]
        def test_defaultdict_is_a_dict():
            value = default()
            assert type(value) is dict and value == {"k": [1]}
        def test_named_tuple_is_a_tuple():
            value = point()
            assert type(value) is tuple and value == (1, 2)
    """
    assert_all_passed(await light(code, tests))


async def test_int_and_str_subclass_returns_fail_the_test_naming_subclass() -> None:
    code = """
        class Sneaky(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        class Text(str):
            pass
        def number():
            return Sneaky(3)
        def text():
            return Text("abc")
        def nested():
            return [1, {"k": Text("abc")}]
    """
    tests = """
        def test_int_subclass():
            assert number() == 4
        def test_str_subclass():
            assert text() == "abc"
        def test_nested_str_subclass():
            assert nested() == [1, {"k": "abc"}]
        def test_still_running_after():
            assert isinstance(3, int)
    """
    result = await light(code, tests)
    assert outcomes(result) == {
        "test_int_subclass": "error",
        "test_str_subclass": "error",
        "test_nested_str_subclass": "error",
        "test_still_running_after": "passed",
    }
    assert "Sneaky (a subclass of int)" in message(result, "test_int_subclass")
    for name in ("test_str_subclass", "test_nested_str_subclass"):
        assert "Text (a subclass of str)" in message(result, name)


# --------------------------------------------------------------------------- candidate objects


OBJECTS_CODE = """
    class Stack:
        def __init__(self):
            self.items = []
            self.label = "new"
        def push(self, item):
            self.items.append(item)
            return self
        def pop(self):
            return self.items.pop()
        def __len__(self):
            return len(self.items)
        def describe(self):
            return f"{self.label}:{len(self.items)}"
        def me(self):
            return self

    class Agreeable:
        def __eq__(self, other):
            return True
        def __hash__(self):
            return 0

    def countdown(n):
        while n > 0:
            yield n
            n -= 1
"""


async def test_candidate_objects_have_methods_and_attributes() -> None:
    tests = """
        def test_methods():
            stack = Stack()
            stack.push(1)
            stack.push("two")
            assert stack.describe() == "new:2"
            assert stack.pop() == "two" and stack.describe() == "new:1"
            assert stack.me() == stack and stack.push(3) == stack
        def test_attribute_get_and_set():
            stack = Stack()
            assert stack.label == "new" and stack.items == []
            stack.label = "renamed"
            stack.push(5)
            assert stack.label == "renamed" and stack.items == [5]
            assert stack.describe() == "renamed:1"
        def test_generator_iterates():
            assert list(countdown(3)) == [3, 2, 1]
            assert [n * 2 for n in countdown(2)] == [4, 2]
            it = iter(countdown(1))
            assert next(it) == 1
            assert next(it, "end") == "end"
        def test_ranges_views_and_builtin_iterators_arrive_as_themselves():
            assert spans() == (range(3), range(1, 10, 2))
            keys, values, items = views()
            assert keys == {"a", "b"} and list(keys) == ["a", "b"] and type(keys) is type({}.keys())
            assert list(values) == [1, 2] and list(items) == [("a", 1), ("b", 2)] and items == {("a", 1), ("b", 2)}
            assert list(map_twice([1, 2])) == [2, 4]
        def test_an_endless_generator_is_cut_at_the_cap_and_says_so():
            numbers = naturals()
            assert next(numbers) == 0 and next(numbers) == 1
            try:
                list(numbers)
            except RuntimeError as exc:
                assert "more than 10000 items" in str(exc)
            else:
                raise AssertionError("no error past the cap")
    """
    code = (
        OBJECTS_CODE
        + """
    def spans():
        return range(3), range(1, 10, 2)
    def views():
        d = {"a": 1, "b": 2}
        return d.keys(), d.values(), d.items()
    def map_twice(xs):
        return map(lambda x: 2 * x, xs)
    def naturals():
        n = 0
        while True:
            yield n
            n += 1
"""
    )
    assert_all_passed(await light(code, tests))


async def test_no_operator_of_a_candidate_object_runs_its_code_and_each_fails_with_a_clear_message() -> None:
    operations = {
        "len": "len(stack)",
        "truth": "bool(stack)",
        "iteration": "list(stack)",
        "arithmetic": "stack - 1",
        "reflected": "1 - stack",
        "abs": "abs(stack)",
        "order": "stack < 1",
        "index": "[1, 2][stack]",
        "item": "stack[0]",
        "contains": "1 in stack",
        "float": "float(stack)",
        "round": "round(stack)",
        "format": "f'{stack:>5}'",
    }
    tests = "".join(
        f"def test_{label}():\n    stack = Stack()\n    {expression}\n" for label, expression in operations.items()
    )
    tests += "def test_str_and_repr_are_made_here():\n    assert str(Stack()) == repr(Stack()) == '<Stack object of the code under test>'\n"
    code = (
        OBJECTS_CODE
        + """
    class Stack(Stack):
        def __len__(self): raise SystemExit("len ran in the checker")
        def __bool__(self): raise SystemExit("bool ran")
        def __iter__(self): raise SystemExit("iter ran")
        def __sub__(self, other): raise SystemExit("sub ran")
        def __rsub__(self, other): raise SystemExit("rsub ran")
        def __abs__(self): raise SystemExit("abs ran")
        def __lt__(self, other): raise SystemExit("lt ran")
        def __index__(self): raise SystemExit("index ran")
        def __getitem__(self, i): raise SystemExit("getitem ran")
        def __contains__(self, x): raise SystemExit("contains ran")
        def __float__(self): raise SystemExit("float ran")
        def __round__(self, n=None): raise SystemExit("round ran")
        def __format__(self, spec): raise SystemExit("format ran")
        def __str__(self): raise SystemExit("str ran")
        def __repr__(self): raise SystemExit("repr ran")
"""
    )
    result = await light(code, tests)
    outcomes = {test.name: (test.outcome, test.message) for test in result.tests}
    assert outcomes.pop("test_str_and_repr_are_made_here")[0] == "passed", outcomes
    for name, (outcome, text) in outcomes.items():
        assert outcome == "error", (name, outcome, text)
        assert "<Stack object of the code under test> is not plain data, so a test cannot" in text, (name, text)
        assert " ran" not in text, (name, text)


async def test_isinstance_against_a_class_of_the_code() -> None:
    tests = """
        import solution
        def test_isinstance():
            stack = Stack()
            assert isinstance(stack, solution.Stack) and isinstance(stack, Stack)
            assert not isinstance(stack, solution.Agreeable)
            assert not isinstance(3, Stack) and not isinstance(stack, int)
    """
    assert_all_passed(await light(OBJECTS_CODE, tests))


async def test_candidate_objects_equal_only_themselves_whatever_their_eq_says() -> None:
    tests = """
        def test_two_objects_never_equal():
            a, b = Agreeable(), Agreeable()
            assert not (a == b) and a != b
            assert not (a == 1) and not (a == "anything") and not (a == None)
        def test_an_object_equals_itself():
            a = Agreeable()
            assert a == a and not (a != a)
        def test_the_same_object_reached_twice_equals_itself():
            stack = Stack()
            assert stack.me() == stack and stack.push(1) == stack.me()
            assert stack.me() != Stack()
    """
    assert_all_passed(await light(OBJECTS_CODE, tests))


# --------------------------------------------------------------------------- callbacks


async def test_the_code_calls_functions_the_test_passes() -> None:
    code = """
        def apply(function, value):
            return function(value)
        def apply_guarded(function, value):
            try:
                return function(value)
            except Exception as exc:
                return "caught: " + type(exc).__name__ + " " + str(exc)
        def make_stack():
            return [3]
    """
    tests = """
        def test_lambda_callback():
            assert apply(lambda v: v * 10, 4) == 40
            assert apply(str.upper, "abc") == "ABC"
        def test_callback_gets_and_returns_exact_types():
            assert apply(lambda v: (type(v).__name__, v), (1, b"x")) == ("tuple", (1, b"x"))
        def test_nested_callbacks():
            assert apply(lambda v: apply(lambda w: w + 1, v) * 2, 1) == 4
        def test_a_raising_callback_reaches_the_test_with_its_builtin_type():
            def bad(v):
                raise ValueError("bad value " + str(v))
            try:
                apply(bad, 4)
            except ValueError as exc:
                assert "bad value 4" in str(exc)
            else:
                raise AssertionError("no ValueError")
        def test_the_code_can_catch_a_raising_callback():
            def bad(v):
                raise KeyError(v)
            result = apply_guarded(bad, 4)
            assert result.startswith("caught: ") and "KeyError" in result
    """
    assert_all_passed(await light(code, tests))


# --------------------------------------------------------------------------- exceptions


EXCEPTIONS_CODE = """
    import sys

    class MyError(Exception):
        pass

    class NotFound(KeyError):
        pass

    def fail(kind):
        if kind == "mine":
            raise MyError("custom")
        if kind == "notfound":
            raise NotFound("nf")
        if kind == "value":
            raise ValueError("bad")
        if kind == "key":
            return {}["missing"]
        if kind == "stop":
            raise StopIteration("over")
        if kind == "exit":
            sys.exit(0)
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "base":
            raise GeneratorExit
        return "fine"
"""


async def test_exceptions_of_the_code_are_catchable_by_their_class() -> None:
    tests = """
        import solution
        def expect(kind, klass):
            try:
                fail(kind)
            except klass as exc:
                return exc
            raise AssertionError(f"{kind} did not raise {klass}")
        def test_custom_class_through_the_module_and_the_name():
            exc = expect("mine", solution.MyError)
            assert str(exc) == "custom" and type(exc) is MyError
            assert expect("mine", MyError) and isinstance(exc, Exception)
            assert solution.MyError.__name__ == "MyError"
        def test_custom_subclass_of_a_builtin_is_caught_as_the_builtin_too():
            expect("notfound", solution.NotFound)
            expect("notfound", KeyError)
            expect("notfound", LookupError)
        def test_builtin_exceptions_are_themselves():
            assert type(expect("value", ValueError)) is ValueError
            assert type(expect("key", KeyError)) is KeyError
            assert type(expect("stop", StopIteration)) is StopIteration
        def test_no_exception():
            assert fail("none") == "fine"
    """
    assert_all_passed(await light(EXCEPTIONS_CODE, tests))


async def test_system_exit_and_keyboard_interrupt_in_the_code_are_ordinary_test_errors() -> None:
    tests = """
        def test_exit():
            fail("exit")
        def test_interrupt():
            fail("interrupt")
        def test_generator_exit():
            fail("base")
        def test_exit_caught_as_exception():
            try:
                fail("exit")
            except Exception:
                return
            raise AssertionError("not caught")
        def test_later_test_still_runs():
            assert fail("none") == "fine"
    """
    result = await light(EXCEPTIONS_CODE, tests)
    assert outcomes(result) == {
        "test_exit": "error",
        "test_interrupt": "error",
        "test_generator_exit": "error",
        "test_exit_caught_as_exception": "passed",
        "test_later_test_still_runs": "passed",
    }
    assert not result.passed and result.status == "error"
    assert "SystemExit" in message(result, "test_exit")
    assert "KeyboardInterrupt" in message(result, "test_interrupt")


# --------------------------------------------------------------------------- names, output, limits, files


async def test_module_constants_are_plain_values_in_light_mode() -> None:
    code = """
        LIMIT = 10
        NAMES = ("a", "b")
        TABLE = {1: [2.5]}
        def double(x):
            return 2 * x
    """
    tests = """
        import solution
        from solution import LIMIT as CAP
        def test_constants():
            assert LIMIT == 10 and type(LIMIT) is int and CAP == 10
            assert NAMES == ("a", "b") and type(NAMES) is tuple
            assert TABLE == {1: [2.5]} and solution.TABLE == {1: [2.5]}
            assert double(LIMIT) == 20
    """
    assert_all_passed(await light(code, tests))


async def test_names_bound_in_top_level_blocks_are_visible_but_not_those_of_a_main_guard() -> None:
    code = """
        import sys
        try:
            from math import comb
        except ImportError:
            def comb(n, k):
                return 0
        if sys.version_info >= (3,):
            def double(x):
                return 2 * x
            LIMIT = 10
        else:
            LIMIT = 0
        if __name__ == "__main__":
            double = None
            ONLY_AS_SCRIPT = 1
    """
    tests = """
        def test_names():
            assert double(2) == 4 and LIMIT == 10 and type(LIMIT) is int and comb(5, 2) == 10
        def test_main_guard_names_are_not_defined():
            try:
                ONLY_AS_SCRIPT
            except NameError:
                return
            raise AssertionError("defined")
        def check(candidate):
            assert candidate(3) == 6
    """
    result = await light(code, tests, entry_point="double")
    assert_all_passed(result)
    assert outcomes(result) == {
        "test_names": "passed",
        "test_main_guard_names_are_not_defined": "passed",
        "check": "passed",
    }


async def test_a_module_that_raises_on_import_is_one_load_error_with_its_message() -> None:
    result = await light(
        "def f():\n    return 1\nraise RuntimeError('no config here')\n", "def test_f():\n    assert f() == 1\n"
    )
    assert outcomes(result) == {"<load>": "error"} and not result.passed
    assert "RuntimeError: no config here" in message(result, "<load>")


async def test_a_module_that_exits_on_import_is_a_load_error() -> None:
    result = await light("import sys\nsys.exit(0)\n", "def test_f():\n    assert True\n")
    assert outcomes(result) == {"<load>": "error"} and not result.passed
    assert "SystemExit" in message(result, "<load>")


async def test_an_endless_test_times_out_alone_and_the_next_test_passes() -> None:
    code = """
        import os
        def spin():
            while True:
                pass
        def inc(x):
            return x + 1
        def pid():
            return os.getpid()
    """
    tests = """
        PIDS = []
        def test_a_spins():
            PIDS.append(pid())
            spin()
        def test_b_after():
            assert inc(1) == 2
            assert pid() not in PIDS  # a new candidate process
        def test_c_again():
            assert inc(2) == 3
    """
    result = await light(code, tests, per_test_s=SHORT_S)
    assert outcomes(result) == {"test_a_spins": "timeout", "test_b_after": "passed", "test_c_again": "passed"}
    assert result.tests[0].duration_s < SHORT_S + 1.5


async def test_a_candidate_that_dies_mid_call_errors_that_test_and_the_next_test_passes() -> None:
    code = """
        import os
        def die():
            os._exit(3)
        def inc(x):
            return x + 1
    """
    tests = """
        def test_a_dies():
            die()
        def test_b_after():
            assert inc(1) == 2
    """
    result = await light(code, tests)
    assert outcomes(result) == {"test_a_dies": "error", "test_b_after": "passed"}
    assert "exited or closed its pipe" in message(result, "test_a_dies")


async def test_an_import_that_never_finishes_is_one_quick_load_error() -> None:
    tests = "".join(f"def test_{i}():\n    assert f() == 1\n" for i in range(5))
    result = await light("while True:\n    pass\ndef f():\n    return 1\n", tests, per_test_s=SHORT_S)
    assert outcomes(result) == {"<load>": "error"}
    assert "importing the solution ran longer than its limit of 0.5s" in message(result, "<load>")
    assert result.duration_s < SHORT_S + 3


async def test_the_code_sees_only_itself_and_the_checker_in_the_work_dir() -> None:
    code = """
        import os
        AT_IMPORT = sorted(os.listdir("."))
        def listing():
            return [AT_IMPORT, sorted(os.listdir("."))]
    """
    tests = "def test_listing():\n    assert listing() == [['_dc_check.py', 'solution.py']] * 2\n"
    assert_all_passed(await light(code, tests))


async def test_humaneval_check_gets_the_entry_point() -> None:
    tests = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate is double\n"
    result = await light("def double(x):\n    return 2 * x\n", tests, entry_point="double")
    assert_all_passed(result)
    assert outcomes(result) == {"check": "passed"}


# --------------------------------------------------------------------------- pytest mode


PYTEST_CODE = """
    import os
    LIMIT = 10
    AT_IMPORT = sorted(os.listdir("."))

    class MyError(Exception):
        pass

    def double(x):
        return 2 * x

    def shout(word):
        print(word.upper())
        print("done")
        return len(word)

    def boom():
        raise MyError("kaboom")

    def listing():
        return AT_IMPORT
"""

PYTEST_TESTS = """
    import pytest
    import solution

    def test_star_import_brings_constants_as_plain_values():
        assert LIMIT == 10 and type(LIMIT) is int
        assert double(LIMIT) == 20

    def test_custom_exception_with_pytest_raises():
        with pytest.raises(solution.MyError, match="kaboom"):
            boom()
        with pytest.raises(MyError):
            boom()

    def test_builtin_exception_with_pytest_raises():
        with pytest.raises(TypeError):
            double()

    def test_only_the_code_and_the_checker_in_the_work_dir():
        assert listing() == ["_dc_check.py", "solution.py"]
"""

PRINTING_EXAMPLES = """>>> shout("hi")
HI
done
2
>>> double(3)
6
"""


async def test_pytest_mode_constants_star_import_exceptions_printing_and_work_dir() -> None:
    report = await pytest_mode(task_text(PYTEST_TESTS, PRINTING_EXAMPLES), PYTEST_CODE)
    failures = {case.name: case.message[-1500:] for case in report.cases if case.outcome != "passed"}
    assert not failures, failures or report.output
    assert case_outcomes(report) == {
        "test_example_1": "passed",
        "test_example_2": "passed",
        "test_star_import_brings_constants_as_plain_values": "passed",
        "test_custom_exception_with_pytest_raises": "passed",
        "test_builtin_exception_with_pytest_raises": "passed",
        "test_only_the_code_and_the_checker_in_the_work_dir": "passed",
    }
    assert report.all_passed


async def test_pytest_mode_wrong_printed_output_fails_the_example() -> None:
    code = PYTEST_CODE.replace('print("done")', 'print("nope")')
    report = await pytest_mode(task_text(PYTEST_TESTS, PRINTING_EXAMPLES), code)
    outcomes_ = case_outcomes(report)
    assert outcomes_["test_example_1"] == "failed" and outcomes_["test_example_2"] == "passed"
    failed = next(case for case in report.cases if case.name == "test_example_1")
    assert "nope" in failed.message


async def test_pytest_mode_an_import_that_never_finishes_errors_every_test_quickly() -> None:
    task = task_text("def test_a():\n    assert double(1) == 2\n\ndef test_b():\n    assert double(2) == 4\n")
    task = task.replace("time_limit: 5s", "time_limit: 0.5s")
    report = await pytest_mode(task, "while True:\n    pass\ndef double(x):\n    return 2 * x\n")
    # A doctest example turns any exception into a mismatch ("failed"); a test function's is an "error".
    assert case_outcomes(report) == {"test_example_1": "failed", "test_a": "error", "test_b": "error"}
    assert all("failed to load" in case.message for case in report.cases), [case.message for case in report.cases]
    assert all(case.duration_s < 0.3 for case in report.cases[1:]), [case.duration_s for case in report.cases]
    assert report.duration_s < 8


# --------------------------------------------------------------------------- probe mode


PROBE_CODE = """
    class Fake(float):
        def __repr__(self):
            return "42"

    class MyError(Exception):
        pass

    def f(x):
        if x == "fake":
            return Fake(1.0)
        if x == "spin":
            while True:
                pass
        if x == "mine":
            raise MyError("custom")
        if x < 0:
            raise ValueError("negative")
        return {"x": (x, 0.1 + 0.2, b"b", {x})}
"""


async def test_probes_report_values_computed_here_raises_and_timeouts() -> None:
    calls = ['f("fake")', "f(-1)", 'f("mine")', 'f("spin")', "f(1)"]
    runner = Prober(DummySandbox(), Limits(timeout_s=30), per_call_s=SHORT_S)
    results = await runner.run(textwrap.dedent(PROBE_CODE), calls)
    by_call = {result.call: result for result in results}
    fake = by_call['f("fake")']
    assert fake.outcome == "raises" and fake.expected != "42" and "subclass of float" in fake.message
    assert by_call["f(-1)"] == ProbeResult("f(-1)", "raises", "ValueError", "negative")
    assert (by_call['f("mine")'].outcome, by_call['f("mine")'].expected) == ("raises", "MyError")
    assert by_call['f("spin")'].outcome == "timeout"
    assert by_call["f(1)"] == ProbeResult("f(1)", "value", "{'x': (1, 0.30000000000000004, b'b', {1})}", "")


async def test_probes_of_code_that_does_not_load_raise_import_error() -> None:
    runner = Prober(DummySandbox(), Limits(timeout_s=30), per_call_s=SHORT_S)
    (result,) = await runner.run("raise ValueError('nope')\ndef f(x):\n    return x\n", ["f(1)"])
    assert (result.outcome, result.expected) == ("raises", "ImportError") and "nope" in result.message


async def test_probe_work_dir_holds_only_the_code_and_the_checker() -> None:
    code = "import os\nSEEN = sorted(os.listdir('.'))\ndef f(x):\n    return SEEN\n"
    runner = Prober(DummySandbox(), Limits(timeout_s=30), per_call_s=2)
    (result,) = await runner.run(code, ["f(2)"])
    assert (result.outcome, result.expected) == ("value", "['_dc_check.py', 'solution.py']")


async def test_an_entry_point_made_at_run_time_is_found_in_light_mode() -> None:
    code = "def _make():\n    return lambda a, b: a + b\nglobals()['add'] = _make()\n"
    tests = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
    (result,) = await run_checks(DummySandbox(), [CheckJob(code=code, tests=tests, entry_point="add")])
    assert result.passed, result.tests
