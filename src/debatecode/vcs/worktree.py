"""Per-session git history of code versions: one worktree and one branch per session.

The output folder ``out_dir`` is (or becomes) a git repository of its own. Each
debate session works in ``out_dir/.worktrees/<session-id>`` on the branch
``debate/<session-id>``, and every code version that changes a file becomes one
commit there, with trailers that tie it to the debate::

    Debate-Session: 3f2a9c...
    Agent: agent-1
    Phase: proposal
    Tests: 3/5

Git runs as ``debatecode <debatecode@localhost>`` with signing, hooks and
line-ending conversion off, so the user's git config (or its absence) never
changes what is recorded. A session in a new output folder starts no git
process: libgit2 (pygit2) writes ``git init`` (``_new_repository``), ``git
worktree add`` / ``list`` / ``prune`` / ``remove`` (``_linked_worktrees``) and
each plain file's commit (blob, trees, commit, branch, reflog, index;
``_commits``), and reads ``HEAD``. Where its result might not be git's
(attributes, an executable bit, a non-empty ``HEAD`` to check out, a resumed
branch, an unusual configuration or environment: ``_config``) git's own
commands do it. Git, GitPython and libgit2 errors leave this module only as
``VersionControlError`` naming the path. Objects here are not thread-safe.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath

from debatecode.errors import VersionControlError
from debatecode.safe_paths import PathOutsideRoot, is_name, path_under
from debatecode.vcs import history
from debatecode.vcs._commits import HeadState, SessionCommits, open_repository
from debatecode.vcs._config import (
    add_blocker,
    attribute_files_outside_tree,
    git_config,
    in_process_blocker,
    init_blocker,
)
from debatecode.vcs._git import (
    BRANCH_PREFIX,
    INITIAL_MESSAGE,
    LOG_FORMAT,
    MAIN_BRANCH,
    SESSION_TRAILER,
    WORKTREES_DIR,
    CommitInfo,
    DirectWriteRefused,
    compose_message,
    git,
    git_environment,
    git_errors,
    parse_log,
    unified_diff,
)
from debatecode.vcs._linked_worktrees import (
    add_new_branch,
    common_dir_of,
    link_intact,
    parse_worktree_list,
    registered,
    remove,
    worktrees_locked,
)
from debatecode.vcs._new_repository import exclude_worktrees, has_commits, init_repository, start_history

__all__ = ["BRANCH_PREFIX", "WORKTREES_DIR", "CommitInfo", "SessionWorktree", "VersionRepository"]


logger = logging.getLogger(__name__)


class VersionRepository:
    """The git repository at an output folder, holding one branch per debate session.

    Opening it creates the folder and ``git init``s it when it is not a
    repository yet (in process where certain: the repository then appears
    whole), gives it an empty first commit on ``main`` when it has no
    commits, and excludes ``.worktrees/`` from its status. A folder nested in
    another repository gets a repository of its own, so debates never add
    branches to the enclosing project.
    """

    def __init__(self, out_dir: str | Path, *, create: bool = True) -> None:
        """Open or create the version repository at ``out_dir``.

        With ``create=False`` (for reading a history back) a folder that is not
        a repository yet is an error instead of being initialised.

        Raises:
            VersionControlError: the folder cannot be created, is a broken
                repository (or, with ``create=False``, none), or git fails.
        """
        self.path = Path(out_dir).resolve()
        self._environment = git_environment()
        if not create and not (self.path / ".git").exists():
            raise VersionControlError(f"{self.path} holds no debatecode version history (no git repository)")
        self._git_repo: git.Repo | None = None
        with git_errors(self.path, "open the version repository"):
            self.path.mkdir(parents=True, exist_ok=True)
            created = not (self.path / ".git").exists() and self._initialise()
            self._libgit2 = open_repository(self.path)
            self._git_dir = Path(self._libgit2.path)
            self._common = common_dir_of(self._git_dir)
            if not has_commits(self._libgit2):
                self._start_history(created)
            exclude_worktrees(self._common)

    def __repr__(self) -> str:
        return f"VersionRepository({str(self.path)!r})"

    def __enter__(self) -> VersionRepository:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop GitPython's helper processes. Session worktrees stay as they are."""
        if self._git_repo is not None:
            self._git_repo.close()
        self._libgit2.free()

    @property
    def _repo(self) -> git.Repo:
        """GitPython's view of the repository, made on first use: sessions in a new folder never need it."""
        if self._git_repo is None:
            with git_errors(self.path, "open the version repository"):
                self._git_repo = git.Repo(self.path)
                self._git_repo.git.update_environment(**self._environment)
        return self._git_repo

    def open_session(self, session_id: str) -> SessionWorktree:
        """The worktree of a session on branch ``debate/<session_id>``, created or re-attached.

        A new session's branch starts at the repository's ``HEAD``. A resumed
        session gets its existing branch back: the worktree is reused when it is
        still there, and checked out again when it was removed.

        Raises:
            VersionControlError: the id cannot name a branch, the worktree path
                is taken by something else, or git fails.
        """
        if not is_name(session_id) or ".." in session_id or session_id.endswith((".lock", ".")):
            raise VersionControlError(
                f"cannot open a worktree in {self.path}: session id {session_id!r} cannot name a branch "
                "(use letters, digits, '.', '_' and '-')"
            )
        branch = BRANCH_PREFIX + session_id
        try:
            path = path_under(self.path, WORKTREES_DIR, session_id, what="worktree")
        except PathOutsideRoot as exc:
            raise VersionControlError(f"cannot open a worktree in {self.path}: {exc}") from exc
        with git_errors(path, f"open the worktree of session {session_id}"):
            in_process = self._in_process_blocker() is None
            if (path / ".git").is_file() and not (in_process and link_intact(self._common_dir, path)):
                # A worktree moved along with out_dir: re-link it before pruning.
                self._repo.git.worktree("repair", str(path), with_exceptions=False)
            with worktrees_locked(self._common_dir):  # no other debatecode process adds or prunes meanwhile
                self._add_worktree(path, branch, in_process)
        return SessionWorktree(self, session_id, path, branch)

    def _add_worktree(self, path: Path, branch: str, in_process: bool) -> None:
        """Make ``path`` the worktree of ``branch``: reuse a registered one, else add it (and the branch if new)."""
        registered = self._registered_worktrees()
        if path in registered:
            if registered[path] != branch:
                raise VersionControlError(f"worktree {path} is on {registered[path]!r}, expected {branch!r}")
            return
        if path.exists():
            if not path.is_dir() or any(path.iterdir()):
                raise VersionControlError(f"{path} exists but is not a git worktree; move it away and retry")
            path.rmdir()
        if self._add_in_process(path, branch):
            return
        if in_process and f"refs/heads/{branch}" in self._libgit2.references:  # a resumed session
            self._repo.git.worktree("add", "--quiet", str(path), branch)
            return
        try:  # a new session's branch first: it needs no check, and git refuses a branch that exists
            self._repo.git.worktree("add", "--quiet", "-b", branch, str(path), "HEAD")
        except git.GitCommandError:
            if not self._branch_exists(branch):
                raise
            self._repo.git.worktree("add", "--quiet", str(path), branch)

    def session_branches(self) -> list[str]:
        """The names of all ``debate/...`` branches, sorted.

        Raises:
            VersionControlError: git fails.
        """
        with git_errors(self.path, "list the session branches"):
            output = self._repo.git.for_each_ref("--format=%(refname:short)", f"refs/heads/{BRANCH_PREFIX}")
        return sorted(line for line in output.splitlines() if line)

    def log(self, branch: str | None = None) -> list[CommitInfo]:
        """The commits reachable from ``branch`` (default: ``HEAD``), newest first.

        Raises:
            VersionControlError: the branch does not exist, or git fails.
        """
        ref = branch or "HEAD"
        with git_errors(self.path, f"read the history of {ref}"):
            output = self._repo.git.log(f"--format={LOG_FORMAT}", ref, "--", strip_newline_in_stdout=False)
        return parse_log(output)

    def resolve(self, ref: str) -> str:
        """The full sha of the commit ``ref`` (a branch, tag or sha) names.

        Raises:
            VersionControlError: ``ref`` names no commit.
        """
        return history.resolve(self._repo, self.path, ref)

    def file_history(self, relpath: str, branch: str | None = None) -> list[CommitInfo]:
        """The commits of ``branch`` (default: ``HEAD``) that changed ``relpath``, newest first.

        Renames are followed. Works on a session whose worktree was removed.

        Raises:
            VersionControlError: the path leaves the repository, the branch does not exist, or git fails.
        """
        return history.file_history(self._repo, self.path, branch or "HEAD", relpath)

    def blame(self, relpath: str, branch: str | None = None) -> list[history.BlameLine]:
        """Each line of ``relpath`` on ``branch`` (default: ``HEAD``) with the commit (and agent) that wrote it.

        Raises:
            VersionControlError: the file is not on the branch, the branch does not exist, or git fails.
        """
        return history.blame(self._repo, self.path, branch or "HEAD", relpath)

    def show_file(self, relpath: str, ref: str) -> str:
        """The content of ``relpath`` in commit ``ref``.

        Raises:
            VersionControlError: the file is not in that commit, ``ref`` does not exist, or git fails.
        """
        return history.show_file(self._repo, self.path, ref, relpath)

    def diff_files(self, old: tuple[str, str] | None, new: tuple[str, str]) -> str:
        """Unified diff between two committed files, each given as ``(ref, relpath)``; ``old=None`` is empty.

        Raises:
            VersionControlError: a file or commit does not exist, or git fails.
        """
        return history.diff_files(self._repo, self.path, old, new)

    def find_file(self, ref: str, content: str, prefer: tuple[str, ...] = ()) -> str | None:
        """The path of a file in commit ``ref`` holding exactly ``content`` (``prefer``-red paths first), or None.

        Raises:
            VersionControlError: ``ref`` does not exist, or git fails.
        """
        return history.find_file(self._repo, self.path, ref, content, prefer)

    def export(self, ref: str, dest: str | Path) -> list[str]:
        """Write the files of commit ``ref`` into the empty or new folder ``dest``; return their paths.

        Raises:
            VersionControlError: ``dest`` is not empty, ``ref`` does not exist, or git or the file system fails.
        """
        return history.export_tree(self._repo, self.path, ref, Path(dest))

    def _remove_worktree(self, path: Path) -> None:
        in_process = self._in_process_blocker() is None
        with git_errors(path, "remove the worktree"):
            if path.is_dir():
                # --force: a worktree left by a crash may hold uncommitted files;
                # every version worth keeping is already committed on the branch.
                if in_process:
                    try:
                        with worktrees_locked(self._common_dir):
                            remove(self._libgit2, self._common_dir, path)
                        return
                    except DirectWriteRefused as exc:
                        logger.info("git removes the worktree %s: %s", path, exc)
                self._repo.git.worktree("remove", "--force", str(path))  # also drops its entry in .git/worktrees
            elif not in_process or self._prune_in_process() is None:
                self._repo.git.worktree("prune")

    @property
    def _common_dir(self) -> Path:
        return self._common

    def _in_process_blocker(self) -> str | None:
        """Why this repository's session-level git work (worktrees) must run as git's commands, or None."""
        return in_process_blocker(git_config(self._common_dir))

    def _initialise(self) -> bool:
        """Make the folder a repository; True when ``git init`` ran as a process (its history is still to start).

        In process, the new repository appears whole: layout, first commit on ``main``, exclude line.
        """
        blocker = init_blocker(git_config(None))  # not the new repository's: another process may be making it
        if blocker is None:
            try:
                init_repository(self.path, MAIN_BRANCH, start_history)
                return False
            except DirectWriteRefused as exc:
                blocker = str(exc)
        logger.info("git init runs in %s: %s", self.path, blocker)
        init = git.Git(self.path)
        init.update_environment(**self._environment)
        init.init(f"--initial-branch={MAIN_BRANCH}", "--quiet")
        return True

    def _add_in_process(self, path: Path, branch: str) -> bool:
        """``git worktree add -b <branch> <path> HEAD`` without a process; False when git's command must do it."""
        common = self._common_dir
        if self._git_dir != common:
            blocker: str | None = "the output folder is itself a linked worktree"
        else:
            blocker = add_blocker(git_config(common))
        if blocker is None:
            try:
                add_new_branch(self._libgit2, common, path, branch)
                return True
            except DirectWriteRefused as exc:
                blocker = str(exc)
        logger.debug("git adds the worktree %s: %s", path, blocker)
        return False

    def _start_history(self, created: bool) -> None:
        """Give ``main`` an empty first commit (objects and ref only: files in the folder stay untracked).

        ``created``: this object just ran ``git init``, so ``main`` has no
        commit unless another process made it meanwhile (``update-ref`` finds out).
        """
        g = self._repo.git
        if created and self._in_process_blocker() is None:
            # git init wrote HEAD -> main; write what mktree, commit-tree and update-ref would, without the processes
            try:
                start_history(self._libgit2)
            except DirectWriteRefused:
                if not self._branch_exists(MAIN_BRANCH):  # else another process just started it
                    raise
            return
        if created or not self._branch_exists(MAIN_BRANCH):
            empty_tree = g.mktree()
            first = g.commit_tree(empty_tree, "-m", INITIAL_MESSAGE)
            try:
                g.update_ref(f"refs/heads/{MAIN_BRANCH}", first, "")  # "": only if it does not exist yet
            except git.GitCommandError:
                if not self._branch_exists(MAIN_BRANCH):  # else another process just started it
                    raise
        head = self._git_dir / "HEAD"
        if head.read_text(encoding="utf-8").strip() != f"ref: refs/heads/{MAIN_BRANCH}":  # git init wrote it so
            g.symbolic_ref("HEAD", f"refs/heads/{MAIN_BRANCH}")

    def _branch_exists(self, branch: str) -> bool:
        status, _, _ = self._repo.git.show_ref(
            "--verify", "--quiet", f"refs/heads/{branch}", with_extended_output=True, with_exceptions=False
        )
        return status == 0

    def _registered_worktrees(self) -> dict[Path, str | None]:
        """The linked worktrees, once those whose folders are gone are forgotten (so their branches can be checked out again).

        A repository without any linked worktree needs no git call to say so.
        """
        try:
            if not os.listdir(self._common_dir / "worktrees"):
                return {}
        except (FileNotFoundError, NotADirectoryError):  # none, or the last one removed meanwhile
            return {}
        if self._in_process_blocker() is None:
            remaining = self._prune_in_process()
            if remaining is not None:
                return remaining
        self._repo.git.worktree("prune")  # an entry only git's rules can judge, or git does all
        remaining = self._prune_in_process() if self._in_process_blocker() is None else None
        return remaining if remaining is not None else self._worktrees()

    def _prune_in_process(self) -> dict[Path, str | None] | None:
        """The registered worktrees once libgit2 pruned those whose folder is gone; None when git's prune must run."""
        return registered(self._libgit2, self._common_dir)

    def _worktrees(self) -> dict[Path, str | None]:
        """Registered worktree path -> checked-out branch (None when detached), as ``git worktree list`` says."""
        return parse_worktree_list(self._repo.git.worktree("list", "--porcelain", "-z", strip_newline_in_stdout=False))


class SessionWorktree:
    """The checked-out branch ``debate/<session_id>`` in which one session commits its versions."""

    def __init__(self, repository: VersionRepository, session_id: str, path: Path, branch: str) -> None:
        """Attach to an existing worktree; use ``VersionRepository.open_session``.

        Raises:
            VersionControlError: the path is not a git worktree.
        """
        self.session_id = session_id
        self.path = path
        self.branch = branch
        self._repository = repository
        self._closed = False
        self._git_repo: git.Repo | None = None
        self._real_path = os.path.realpath(path)
        with git_errors(path, "open the worktree"):
            self._libgit2 = open_repository(path)
            self._head = SessionCommits(self._libgit2)
            common = common_dir_of(Path(self._libgit2.path))
            config = git_config(common)
            self._outside_attributes = attribute_files_outside_tree(config, common)
            blocker = in_process_blocker(config)
            self._in_process = blocker is None
        if blocker is not None:
            logger.info("session %s: git makes every commit (%s)", session_id, blocker)

    def __repr__(self) -> str:
        return f"SessionWorktree({self.session_id!r}, {str(self.path)!r})"

    @property
    def _repo(self) -> git.Repo:
        """GitPython's view of the worktree, made on first use: in-process commits never need it."""
        if self._git_repo is None:
            with git_errors(self.path, "open the worktree"):
                self._git_repo = git.Repo(self.path)
                self._git_repo.git.update_environment(**git_environment())
        return self._git_repo

    def __enter__(self) -> SessionWorktree:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close(remove_worktree=True)

    def head(self) -> str:
        """The sha of the branch's newest commit.

        Raises:
            VersionControlError: the worktree is closed, or git fails.
        """
        self._check_open("read HEAD")
        with git_errors(self.path, "read HEAD"):
            return self._head.head_sha()

    def commit_version(self, relpath: str, content: str, message: str, trailers: dict[str, str] | None = None) -> str:
        """Write ``content`` to ``relpath`` and commit it; return the sha that holds it.

        Only ``relpath`` is committed, and only when its content differs from
        the branch's ``HEAD``. When it does not, no commit is made (an empty
        commit would add noise to ``git log -p`` and ``git blame``) and the
        current ``HEAD`` sha is returned: whatever happens, the returned commit's
        tree holds exactly ``content`` at ``relpath``. The provenance of a repeat
        (which agent, which phase) lives in the ``code_versions`` row, not in git.

        The message gets a ``Debate-Session: <id>`` trailer, then ``trailers``
        in the given order (for example ``Agent``, ``Phase``, ``Tests``).

        Raises:
            VersionControlError: the path leaves the worktree, a trailer is not a
                single ``Key: value`` line, the worktree is closed, or git fails.
        """
        self._check_open(f"commit {relpath}")
        target, rel = self._resolve(relpath)
        extra = dict(trailers or {})
        if extra.pop(SESSION_TRAILER, self.session_id) != self.session_id:
            raise VersionControlError(f"cannot commit in {self.path}: {SESSION_TRAILER} must be {self.session_id}")
        text = compose_message(
            message or f"debatecode: update {rel}", {SESSION_TRAILER: self.session_id, **extra}, self.path
        )
        data = content.encode("utf-8")
        with git_errors(self.path, f"commit {rel}"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            state = self._state_at_head(rel, target, data)
            if state is None:
                self._stage_compare_commit(rel, text)
            elif state.changed:
                if self._in_process:
                    try:
                        return self._head.commit(rel, data, text, state.parent)
                    except DirectWriteRefused as exc:
                        logger.info("git commits %s in %s: %s", rel, self.path, exc)
                try:
                    if not state.tracked:  # ``git commit -- <path>`` takes only paths git already knows
                        self._repo.git.add("--", rel)
                    self._repo.git.commit("--quiet", "--no-verify", "-m", text, "--", rel)
                except git.GitCommandError:
                    self._stage_compare_commit(rel, text)  # git saw the file otherwise: its full check decides
            return self._head.head_sha()

    def diff_from_previous(self, relpath: str, content: str) -> str:
        """Unified diff from ``relpath`` as committed on the branch to ``content``.

        Empty when they are equal; against ``/dev/null`` when the file is not
        committed yet.

        Raises:
            VersionControlError: the path leaves the worktree, names a folder, the
                worktree is closed, or git fails.
        """
        self._check_open(f"diff {relpath}")
        _, rel = self._resolve(relpath)
        with git_errors(self.path, f"read {rel} at HEAD"):
            entry = self._head.entry(rel)
            if entry is None:
                return unified_diff(None, content, rel)
            if entry.kind != "blob":
                raise VersionControlError(f"cannot diff {rel} in {self.path}: it is a {entry.kind}, not a file")
            previous = self._head.content(entry).decode("utf-8", errors="replace")
        return unified_diff(previous, content, rel)

    def log(self, branch: str | None = None) -> list[CommitInfo]:
        """The commits of ``branch`` (default: this session's branch), newest first.

        Raises:
            VersionControlError: the branch does not exist, or git fails.
        """
        return self._repository.log(branch or self.branch)

    def file_history(self, relpath: str) -> list[CommitInfo]:
        """The commits of this session's branch that changed ``relpath``, newest first.

        Raises:
            VersionControlError: the path leaves the repository, or git fails.
        """
        return self._repository.file_history(relpath, self.branch)

    def blame(self, relpath: str) -> list[history.BlameLine]:
        """Each line of ``relpath`` as committed on this session's branch, with the commit (and agent) that wrote it.

        Raises:
            VersionControlError: the file is not committed on the branch, or git fails.
        """
        return self._repository.blame(relpath, self.branch)

    def close(self, remove_worktree: bool = True) -> None:
        """Stop using the worktree; with ``remove_worktree``, delete its folder and prune it.

        The branch ``debate/<session_id>`` always stays, so the session can be
        inspected with ``git log`` and resumed with ``open_session``. Closing
        twice is harmless.

        Raises:
            VersionControlError: the worktree cannot be removed.
        """
        if self._closed:
            return
        self._closed = True
        if self._git_repo is not None:
            self._git_repo.close()
        self._libgit2.free()
        if remove_worktree:
            self._repository._remove_worktree(self.path)

    def _state_at_head(self, rel: str, target: Path, data: bytes) -> HeadState | None:
        """How ``rel`` stands against ``HEAD``, or None when only git can tell.

        Only git can tell when it might store other bytes than ``data`` (an attributes file may filter or convert
        them) or another mode than a plain file's.
        """
        if self._attributes_may_apply(rel) or target.stat().st_mode & 0o111:
            return None
        return self._head.state(rel, data)

    def _stage_compare_commit(self, rel: str, text: str) -> None:
        """Stage ``rel`` and commit it if the staged file differs from ``HEAD``, asking git each step."""
        g = self._repo.git
        g.add("--", rel)
        changed, _, stderr = g.diff(
            "--cached", "--quiet", "HEAD", "--", rel, with_extended_output=True, with_exceptions=False
        )
        if changed not in (0, 1):
            raise VersionControlError(f"cannot compare {rel} with HEAD in {self.path}: {stderr}")
        if changed:
            g.commit("--quiet", "--no-verify", "-m", text, "--", rel)

    def _attributes_may_apply(self, rel: str) -> bool:
        if self._outside_attributes:
            return True
        folder = self.path
        for part in ("", *PurePosixPath(rel).parent.parts):
            folder = folder / part
            if (folder / ".gitattributes").exists():
                return True
        return False

    def _check_open(self, action: str) -> None:
        if self._closed:
            raise VersionControlError(f"cannot {action} in {self.path}: the session worktree is closed")

    def _resolve(self, relpath: str) -> tuple[Path, str]:
        """The file's path on disk and its path in the repository, checked to stay inside."""
        pure = PurePosixPath(relpath.replace("\\", "/"))
        if not relpath or pure.is_absolute() or ".." in pure.parts or ".git" in pure.parts or not pure.parts:
            raise VersionControlError(f"{relpath!r} is not a file path inside worktree {self.path}")
        target = self.path.joinpath(*pure.parts)
        real = os.path.realpath(target)
        if not real.startswith(self._real_path + os.sep):
            raise VersionControlError(f"{relpath!r} leads outside worktree {self.path} (through a symlink)")
        return target, pure.as_posix()
