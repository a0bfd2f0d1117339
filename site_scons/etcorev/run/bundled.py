"""A bundled program's run, for `scons run`: the runner checks every test case on the
target and prints one line each (examples/corev/executor_runner/corev_executor_runner.cpp,
RUNNER_BUNDLED):

    Test case 0: PASS max |diff| 0.0000000298023224 at output 0 index 4
    Test case 1: FAIL output 0 index 3: expected 0.5, got -0.5 (max |diff| 1 at output 0 index 3)
    Test case 2: no expected outputs

and exits with status 1 when one failed. This reads those lines back.
"""

import re
from dataclasses import dataclass
from typing import List, Optional

_LINE = re.compile(r"^Test case (\d+): (PASS|FAIL|no expected outputs) ?(.*)$", re.M)


@dataclass(frozen=True)
class Result:
    index: int
    status: str        # "PASS", "FAIL" or "no expected outputs"
    detail: str        # the rest of the line


def parse(text: str) -> List[Result]:
    return [Result(int(m.group(1)), m.group(2), m.group(3).strip()) for m in _LINE.finditer(text)]


def check(text: str, cases: int) -> Optional[str]:
    """None when every one of the `cases` test cases ran and passed, else why not (for
    `scons run`'s "Run failed: ..." line): the first failed case, named with what the
    runner said about it (output, index, expected and actual values)."""
    results = parse(text)
    failed = [r for r in results if r.status == "FAIL"]
    if failed:
        first = failed[0]
        return "test case %d failed: %s; %d of %d test cases failed" % (
            first.index, first.detail, len(failed), cases)
    if len(results) < cases:
        return "the program reported %d of the bundled program's %d test cases" % (
            len(results), cases)
    return None


def summary(text: str, cases: int) -> str:
    """The summary table's outputs column: how many test cases passed."""
    results = parse(text)
    passed = sum(r.status != "FAIL" for r in results)
    return "%d/%d test cases passed" % (passed, cases)
