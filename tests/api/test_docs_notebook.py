"""docs/python-api.md's first example, run as a Jupyter notebook: nbclient executes it in a real ipykernel.

IPython (and so every Jupyter cell) strips what looks like a pasted ``>>> ``
prompt before it runs a cell. From IPython 9.16 on it does so inside a string
too, when the string's opening quotes follow ``=`` or ``(`` on their line; so the
page keeps ``>>>`` out of the first column of every line of the example.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.api.test_docs import PAGE, python_blocks

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

PROMPT = re.compile(r"^\s*>>>", re.M)
"""A line IPython's prompt stripper takes for a doctest prompt (``PromptStripper`` in ``inputtransformer2``)."""
CHECK = "print(task.entry_point, [(example.source, example.want) for example in task.examples])"


def _example() -> str:
    [block] = [block for block in python_blocks(PAGE.read_text(encoding="utf-8")) if "parse_task(" in block]
    return block


def test_no_line_of_the_example_looks_like_a_prompt_to_ipython() -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    block = _example()
    assert not PROMPT.findall(block), "a line starting with >>> can lose its prompt in a notebook cell"
    assert TransformerManager().transform_cell(block) == block


def test_the_example_runs_in_a_jupyter_notebook(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_example()), nbformat.v4.new_code_cell(CHECK)])
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the traceback, when a cell fails
    outputs = notebook.cells[1].outputs
    assert [output.get("text") for output in outputs] == ["add [('add(1, 2)\\n', '3\\n')]\n"], outputs
