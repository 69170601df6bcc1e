"""Repositories: where their source comes from, and how each one is graded.

**Sources.** ``--repos-dir`` holds one git source per ``repo`` (``owner/name``),
looked up in this order: ``owner__name/`` (a clone or a bare mirror),
``owner__name.git/``, ``owner__name.bundle`` (a ``git bundle``) and
``owner/name/``. Each source is cloned once per run into a bare mirror; every
instance gets its own worktree of it at ``base_commit``.

**Specs.** SWE-bench keys its install and grading specs by the real repository
names. Our repositories register a ``RepoSpec`` instead: which log parser of
swebench's ``PARSER_REGISTRY`` reads the test log, the evaluation type, which
requirements files (at ``environment_setup_commit``) and extra requirements make
the environment image, and which directories go on ``sys.path``. Specs come from
``repos.toml`` in the repos directory, from ``RepoRegistry.register`` in code,
else a default: ``parse_log_pytest`` (or the parser SWE-bench maps to a known
repository), ``pass_and_fail``, ``requirements*.txt``. An instance's own
``log_parser`` / ``eval_type`` fields win over the spec.

``repos.toml``::

    [repos."debatecode-local/daterange"]
    log_parser = "parse_log_pytest"
    requirements = ["python-dateutil==2.9.0.post0"]
    pythonpath = ["."]
"""

from __future__ import annotations

import fnmatch
import logging
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from debatecode.bench.swebench._git import git, git_ok
from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.errors import SWEBenchInputError
from debatecode.input_files import MAX_CONFIG_BYTES, InputFileError, read_input_file

__all__ = [
    "REPOS_FILE",
    "RepoMirror",
    "RepoRegistry",
    "RepoSpec",
    "find_repo_source",
    "known_parsers",
    "require_swebench",
]

logger = logging.getLogger(__name__)

REPOS_FILE = "repos.toml"
"""The optional spec file in the repos directory."""


class RepoSpec(BaseModel):
    """How to build the environment of one repository and how to grade its tests."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    log_parser: str = "parse_log_pytest"
    """Name of the log parser in swebench's ``PARSER_REGISTRY``; our repositories use the generic pytest one."""
    eval_type: Literal["pass_and_fail", "fail_only"] = "pass_and_fail"
    """SWE-bench's evaluation type; ``pass_and_fail`` for every pytest repository."""
    requirements_files: list[str] = Field(default_factory=lambda: ["requirements*.txt"])
    """Glob patterns (repository-relative) of pip requirements files read at ``environment_setup_commit``."""
    requirements: list[str] = Field(default_factory=list)
    """Extra pip requirement lines for the environment image (pytest is always added, pinned, unless named)."""
    pythonpath: list[str] | None = None
    """Repository-relative directories appended to ``sys.path`` for the tests; default ``.`` plus ``src`` if present."""
    test_timeout_s: float = Field(default=300.0, gt=0)
    """Wall-clock limit of one test run."""
    memory_mb: int = Field(default=2048, ge=256)
    """Memory limit of a test container (the repository copy on tmpfs counts too)."""
    disk_mb: int = Field(default=512, ge=64)
    """Size of the container's writable ``/work`` (holds the repository copy)."""


def require_swebench() -> None:
    """Fail clearly when the ``swebench`` package (the ``bench`` extra) is not installed.

    Raises:
        ConfigError: swebench cannot be imported (the message names the extra to install).
    """
    try:
        import swebench.harness.grading  # noqa: F401
    except ImportError as exc:
        from debatecode.errors import ConfigError

        raise ConfigError(
            f"the SWE-bench bridge grades with the swebench package, which cannot be imported ({exc}). "
            "Install it with: pip install 'debatecode[bench]'"
        ) from exc


def known_parsers() -> list[str]:
    """The names in swebench's ``PARSER_REGISTRY``, sorted (imports swebench)."""
    from swebench.harness.log_parsers import PARSER_REGISTRY

    return sorted(PARSER_REGISTRY)


def _swebench_parser_name(repo: str) -> str | None:
    """The parser SWE-bench uses for one of its own Python repositories, by name."""
    from swebench.harness.log_parsers import PARSER_REGISTRY
    from swebench.harness.log_parsers.python import MAP_REPO_TO_PARSER_PY

    function = MAP_REPO_TO_PARSER_PY.get(repo)
    if function is None:
        return None
    return next((name for name, candidate in PARSER_REGISTRY.items() if candidate is function), None)


class RepoRegistry:
    """Repository name -> ``RepoSpec``; unknown repositories get the default spec."""

    def __init__(self, specs: dict[str, RepoSpec] | None = None) -> None:
        self._specs: dict[str, RepoSpec] = dict(specs or {})

    def register(self, repo: str, spec: RepoSpec) -> None:
        """Use ``spec`` for ``repo`` (``owner/name``), replacing any earlier one."""
        self._specs[repo] = spec

    @property
    def repos(self) -> list[str]:
        """The repositories with a registered spec."""
        return sorted(self._specs)

    def spec_for(self, instance: SWEBenchInstance) -> RepoSpec:
        """The spec for ``instance``: registered, else the default; the instance's own parser and type win.

        Raises:
            SWEBenchInputError: the resulting log parser is not one swebench knows.
        """
        spec = self._specs.get(instance.repo)
        if spec is None:
            spec = RepoSpec(log_parser=_swebench_parser_name(instance.repo) or "parse_log_pytest")
        update: dict[str, str] = {}
        if instance.log_parser:
            update["log_parser"] = instance.log_parser
        if instance.eval_type:
            update["eval_type"] = instance.eval_type
        if update:
            spec = spec.model_copy(update=update)
        parsers = known_parsers()
        if spec.log_parser not in parsers:
            raise SWEBenchInputError(
                "log_parser",
                f"unknown log parser {spec.log_parser!r} for {instance.repo}; swebench knows: {', '.join(parsers)}",
                field="log_parser",
                instance_id=instance.instance_id,
            )
        return spec

    @classmethod
    def from_toml(cls, path: Path) -> RepoRegistry:
        """Specs from a ``repos.toml`` (``[repos."owner/name"]`` tables); an empty registry if it is absent.

        Raises:
            SWEBenchInputError: the file is not valid TOML, or a table has an unknown key or a bad value.
        """
        if not path.exists():
            return cls()
        try:
            raw = read_input_file(path, max_bytes=MAX_CONFIG_BYTES, what="repos file")
        except InputFileError as exc:
            raise SWEBenchInputError(path, exc.reason) from exc
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SWEBenchInputError(path, f"not a valid TOML file: {exc}") from exc
        tables = data.get("repos", {})
        if not isinstance(tables, dict) or set(data) - {"repos"}:
            raise SWEBenchInputError(path, 'expected only [repos."owner/name"] tables')
        registry = cls()
        for repo, table in tables.items():
            try:
                registry.register(repo, RepoSpec.model_validate(table))
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(str(part) for part in error["loc"])
                raise SWEBenchInputError(path, f"[repos.{repo!r}]: {error['msg']}", field=field) from exc
        return registry


def find_repo_source(repos_dir: Path, repo: str) -> Path:
    """The git source of ``repo`` in ``repos_dir`` (see the module docstring for the names tried).

    Raises:
        SWEBenchInputError: none of the names exists (the message lists them).
    """
    owner, _, name = repo.partition("/")
    slug = f"{owner}__{name}"
    candidates = [repos_dir / slug, repos_dir / f"{slug}.git", repos_dir / f"{slug}.bundle", repos_dir / owner / name]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    tried = ", ".join(str(candidate) for candidate in candidates)
    raise SWEBenchInputError(
        repos_dir,
        f"no source for repository {repo!r}; tried {tried}. Put a clone, a bare mirror or a git bundle there "
        "(or pass --repos-dir).",
        field="repo",
    )


class RepoMirror:
    """A bare clone of one repository source, with worktrees at any of its commits.

    Args:
        source: a clone, a bare repository or a bundle file.
        where: an empty directory to clone into (removed with the run's temporary directory).

    Raises:
        VersionControlError: the source cannot be cloned.
    """

    def __init__(self, repo: str, source: Path, where: Path) -> None:
        self.repo = repo
        self.source = source
        self.path = where
        git("clone", "--bare", "--quiet", str(source.resolve()), str(where))

    def has_commit(self, commit: str) -> bool:
        """Whether ``commit`` names a commit of this repository.

        Raises:
            VersionControlError: git is missing.
        """
        ok, _ = git_ok("--git-dir", str(self.path), "cat-file", "-e", f"{commit}^{{commit}}")
        return ok

    def require_commit(self, commit: str, *, field: str, instance_id: str) -> None:
        """Fail clearly when an instance names a commit the source lacks.

        Raises:
            SWEBenchInputError: the commit is not in the source.
        """
        if not self.has_commit(commit):
            raise SWEBenchInputError(
                self.source, f"has no commit {commit} (the instance's {field})", field=field, instance_id=instance_id
            )

    def tree_hash(self, commit: str) -> str:
        """The hash of ``commit``'s tree: equal trees, equal content.

        Raises:
            VersionControlError: git failed.
        """
        return git("--git-dir", str(self.path), "rev-parse", f"{commit}^{{tree}}").decode().strip()

    def files(self, commit: str, patterns: list[str] | None = None) -> list[str]:
        """The file paths of ``commit``, optionally only those matching one of ``patterns`` (fnmatch).

        Raises:
            VersionControlError: git failed.
        """
        listing = git("--git-dir", str(self.path), "ls-tree", "-r", "-z", "--name-only", commit)
        names = [name for name in listing.decode("utf-8", "surrogateescape").split("\0") if name]
        if patterns is None:
            return names
        return [name for name in names if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)]

    def read(self, commit: str, path: str) -> bytes:
        """The content of ``path`` at ``commit``.

        Raises:
            VersionControlError: git failed (for example, no such file).
        """
        return git("--git-dir", str(self.path), "show", f"{commit}:{path}")

    def worktree(self, commit: str, dest: Path) -> Path:
        """Check ``commit`` out (detached) into the new directory ``dest``.

        Raises:
            VersionControlError: git failed.
        """
        git("--git-dir", str(self.path), "worktree", "add", "--force", "--detach", "--quiet", str(dest), commit)
        return dest

    def remove_worktree(self, dest: Path) -> None:
        """Forget a worktree made by ``worktree`` (its files go with their temporary directory)."""
        git_ok("--git-dir", str(self.path), "worktree", "remove", "--force", str(dest))
        git_ok("--git-dir", str(self.path), "worktree", "prune")
