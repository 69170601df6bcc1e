"""Repository sources and specs: bundles, mirrors, repos.toml, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.bench.swebench import RepoRegistry, RepoSpec, SWEBenchInputError, SWEBenchInstance, default_repos_dir
from debatecode.bench.swebench.repos import REPOS_FILE, RepoMirror, find_repo_source

from .conftest import DATASET, REPOS, git


def test_the_default_repos_dir_is_next_to_the_dataset() -> None:
    assert default_repos_dir(DATASET) == REPOS.resolve()


def test_the_local_specs_are_shipped_and_valid(local_instances: list[SWEBenchInstance]) -> None:
    registry = RepoRegistry.from_toml(REPOS / REPOS_FILE)
    assert set(registry.repos) == {i.repo for i in local_instances}
    for instance in local_instances:
        spec = registry.spec_for(instance)
        assert spec.log_parser == "parse_log_pytest" and spec.eval_type == "pass_and_fail"
    assert registry.spec_for(local_instances[-1]).pythonpath == ["src"]


def test_a_bundle_source_gives_a_mirror_with_the_instance_commits(
    tmp_path: Path, local_instances: list[SWEBenchInstance]
) -> None:
    instance = local_instances[0]
    source = find_repo_source(REPOS, instance.repo)
    assert source.name == "debatecode-local__strutils.bundle"
    mirror = RepoMirror(instance.repo, source, tmp_path / "mirror")
    assert mirror.has_commit(instance.base_commit) and not mirror.has_commit("0" * 40)
    assert "pyproject.toml" in mirror.files(instance.base_commit)
    tree = mirror.worktree(instance.base_commit, tmp_path / "tree")
    assert (tree / "pyproject.toml").is_file()
    mirror.remove_worktree(tree)
    with pytest.raises(SWEBenchInputError, match="has no commit 0000000"):
        mirror.require_commit("0000000", field="base_commit", instance_id=instance.instance_id)


def test_a_plain_clone_is_a_source_too(tmp_path: Path, repo: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    repos = tmp_path / "repos"
    repos.mkdir()
    repo.rename(repos / "owner__name")
    assert find_repo_source(repos, "owner/name") == repos / "owner__name"
    with pytest.raises(SWEBenchInputError, match=r"no source for repository 'owner/other'.*--repos-dir"):
        find_repo_source(repos, "owner/other")


def test_bad_specs_are_named(tmp_path: Path, local_instances: list[SWEBenchInstance]) -> None:
    path = tmp_path / REPOS_FILE
    path.write_text('[repos."a/b"]\nlog_parsr = "parse_log_pytest"\n')
    with pytest.raises(SWEBenchInputError, match="log_parsr"):
        RepoRegistry.from_toml(path)
    path.write_text("not toml [")
    with pytest.raises(SWEBenchInputError, match="not a valid TOML file"):
        RepoRegistry.from_toml(path)
    registry = RepoRegistry({local_instances[0].repo: RepoSpec(log_parser="parse_log_nothing")})
    with pytest.raises(SWEBenchInputError, match="unknown log parser 'parse_log_nothing'"):
        registry.spec_for(local_instances[0])
