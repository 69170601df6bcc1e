"""Ranking a repository's files for a problem statement, read with git at one commit."""

from __future__ import annotations

from pathlib import Path

from tests.bench_swebench.solve_fixtures import OPS, STATEMENT, git, make_repo

from debatecode.bench.swebench.dataset import load_instances
from debatecode.bench.swebench.patching import patch_paths
from debatecode.bench.swebench.repos import RepoMirror, find_repo_source
from debatecode.bench.swebench.retrieval import rank_files, read_repository, retrieve, tokenize


def test_tokenize_splits_identifiers() -> None:
    assert tokenize("parseHTTPResponse_v2") == ["parse", "http", "response", "v2", "parsehttpresponse_v2"]
    assert tokenize("the clamp() of a value") == ["clamp", "value"]


def test_the_file_defining_the_named_function_ranks_first() -> None:
    files = {
        "calc/ops.py": OPS,
        "calc/strings.py": 'def shout(text):\n    return text.upper() + "!"\n',
        "tests/test_ops.py": "from calc.ops import clamp\n\ndef test_clamp():\n    assert clamp(1, 0, 2) == 1\n",
        "README.md": "# calc\n",
    }
    ranked = rank_files(files, STATEMENT, k=3)
    assert [item.path for item in ranked][:2] == ["calc/ops.py", "tests/test_ops.py"]
    assert "clamp" in ranked[0].mentions and "calc.ops" in ranked[0].mentions
    assert ranked[0].excerpt == OPS and not ranked[0].truncated
    assert len(ranked) <= 3
    assert rank_files(files, STATEMENT, k=3) == ranked


def test_ties_are_broken_by_path_and_unrelated_files_are_left_out() -> None:
    files = {"b.py": "def frob():\n    pass\n", "a.py": "def frob():\n    pass\n", "c.py": "x = 1\n"}
    ranked = rank_files(files, "frob is broken", k=5)
    assert [item.path for item in ranked] == ["a.py", "b.py"]


def test_long_files_get_a_bounded_excerpt_around_the_named_definition() -> None:
    filler = "".join(f"def helper_{n}(x):\n    return x + {n}\n\n\n" for n in range(400))
    target = "def clamp(value, low, high):\n    if value < low:\n        return low\n    return value\n"
    text = filler + target + filler
    [item] = rank_files({"calc/big.py": text}, STATEMENT, k=1, max_excerpt_chars=1500)
    assert item.truncated
    assert len(item.excerpt) <= 1500 + 200
    assert target in item.excerpt
    assert "omitted)" in item.excerpt


def test_read_repository_reads_the_given_commit_only(tmp_path: Path) -> None:
    repo, first = make_repo(tmp_path / "src")
    (repo / "calc/ops.py").write_text("LATER = True\n")
    (repo / "calc/data.bin").write_bytes(b"\0\1")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "later")
    mirror = RepoMirror("local/calc", repo, tmp_path / "mirror")
    files = read_repository(mirror, first)
    assert files["calc/ops.py"] == OPS
    assert set(files) == {"calc/__init__.py", "calc/ops.py", "calc/strings.py", "tests/test_ops.py", "README.md"}
    later = read_repository(mirror, "HEAD")
    assert later["calc/ops.py"] == "LATER = True\n" and "calc/data.bin" not in later
    ranked = retrieve(mirror, first, STATEMENT, k=2)
    assert ranked[0].path == "calc/ops.py" and ranked[0].excerpt == OPS


def test_the_file_the_gold_patch_edits_ranks_first_on_the_local_instances(tmp_path: Path) -> None:
    local = Path(__file__).resolve().parents[2] / "benchmarks" / "swebench-local"
    mirrors: dict[str, RepoMirror] = {}
    for instance in load_instances(local / "instances.jsonl"):
        if instance.repo not in mirrors:
            source = find_repo_source(local / "repos", instance.repo)
            mirrors[instance.repo] = RepoMirror(instance.repo, source, tmp_path / instance.repo.replace("/", "__"))
        [first, *_] = retrieve(mirrors[instance.repo], instance.base_commit, instance.problem_statement, k=3)
        assert {first.path} == patch_paths(instance.patch), instance.instance_id
