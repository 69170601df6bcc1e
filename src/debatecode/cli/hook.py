"""Git hooks for teams: install a pre-commit / pre-push hook, and run the checks it runs.

Exit status of ``hook run``: 0 nothing blocking, 1 a blocking finding (the
commit or push is refused), 2 bad input (not a repository, bad range or
config), 3 git failed.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from debatecode.cli.common import console, fail, reporting_errors, setup_logging

if TYPE_CHECKING:
    from debatecode.hooks.check import FileCheck

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

# Help text goes through rich markup, which would swallow "[hooks.git]": every bracket in it is escaped.
_CONFIG_HELP = escape("Config file (default: ./debatecode.toml if present); [hooks.git] and [hooks.thresholds] apply.")


@app.command("install")
def install(
    pre_commit: bool = typer.Option(False, "--pre-commit", help="Install the pre-commit hook (the default)."),
    pre_push: bool = typer.Option(False, "--pre-push", help="Install the pre-push hook."),
    repo: Path = typer.Option(Path("."), "--repo", help="A folder inside the git repository."),
    force: bool = typer.Option(False, "--force", help="Move an existing foreign hook to a backup and install."),
) -> None:
    """Install a git hook that runs `debatecode hook run` and blocks on blocking findings."""
    from debatecode.hooks.git import HookKind, install_hook

    wanted: dict[HookKind, bool] = {"pre-commit": pre_commit, "pre-push": pre_push}
    kinds: list[HookKind] = [kind for kind, on in wanted.items() if on] or ["pre-commit"]
    with reporting_errors():
        for kind in kinds:
            installed = install_hook(repo, kind, force=force)
            console.print(f"installed {kind} hook: {installed.path}")
            if installed.backup is not None:
                console.print(f"  the previous hook was moved to {installed.backup}")


@app.command("run")
def run(
    files: list[Path] | None = typer.Argument(None, help="Python files to check (as the pre-commit framework passes)."),
    staged: bool = typer.Option(False, "--staged", help="Check the staged content of changed Python files."),
    pushed: str | None = typer.Option(None, "--pushed", metavar="BASE..TIP", help="Check files changed in a range."),
    pre_push: str | None = typer.Option(
        None,
        "--pre-push",
        metavar="REMOTE",
        help="Read the refs being pushed from stdin, as git's pre-push hook gets them.",
    ),
    repo: Path = typer.Option(Path("."), "--repo", help="A folder inside the git repository."),
    config_file: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also list findings of checks that passed."),
) -> None:
    """Validate changed Python files with ruff, radon and bandit; exit 1 on blocking findings."""
    setup_logging(False)
    logging.getLogger("bandit").setLevel(logging.ERROR)
    chosen = sum(bool(x) for x in (files, staged, pushed, pre_push))
    if chosen > 1:
        raise fail("choose one of --staged, --pushed, --pre-push or FILES", 2)
    from debatecode.config import load_config
    from debatecode.hooks import git as githooks
    from debatecode.hooks.check import check_files

    with reporting_errors():
        config = load_config(config_file)
        if files:
            root, sources, what = Path.cwd(), githooks.files_from_paths(files), "given"
        else:
            root = githooks.repository_root(repo)
            if pushed:
                sources, what = githooks.pushed_files(root, pushed), f"changed in {pushed}"
            elif pre_push is not None:
                sources, what = githooks.pre_push_files(root, sys.stdin.read(), pre_push or None), "pushed"
            else:
                sources, what = githooks.staged_files(root), "staged"
        if not sources:
            console.print(f"debatecode: no {what} Python files to check")
            return
        checks = check_files(sources, config.hooks, config.quality, root=root)
    blocked = _print_report(checks, verbose)
    if blocked:
        raise typer.Exit(1)


def _print_report(checks: list[FileCheck], verbose: bool) -> bool:
    """Print one line per file, then one per finding; return whether anything blocks."""
    for check in checks:
        marks = []
        for result in check.results:
            marks.append(f"{result.name} {'ok' if result.passed else ('BLOCKING' if result.blocking else 'warn')}")
        verdict = "[bold red]blocked[/]" if check.blocked else ("[green]ok[/]" if check.passed else "[yellow]warn[/]")
        console.print(
            f"{verdict}  {escape(check.path)}  ({', '.join(marks)}; quality {check.quality.score:.2f})", soft_wrap=True
        )
        for result in check.results:
            if result.passed and not verbose:
                continue
            style = "bold red" if result.blocks else "yellow"
            for finding in result.findings:
                where = f"{check.path}:{finding.line}" if finding.line else check.path
                severity = f" ({finding.severity})" if finding.severity else ""
                console.print(
                    f"    {escape(where)}: [{style}]{result.name}[/] {escape(finding.rule)}{escape(severity)}: "
                    f"{escape(finding.message)}",
                    soft_wrap=True,
                )
    blocking = [(c.path, r.name) for c in checks for r in c.results if r.blocks]
    if blocking:
        names = sorted({name for _, name in blocking})
        console.print(
            f"[bold red]debatecode: blocked[/] by {len(blocking)} failing blocking check(s) ({', '.join(names)}) "
            f"in {len({path for path, _ in blocking})} of {len(checks)} file(s). "
            "Fix them, or skip the hook once with --no-verify.",
            soft_wrap=True,
        )
    else:
        console.print(f"[green]debatecode: {len(checks)} file(s) checked, nothing blocking[/]", soft_wrap=True)
    return bool(blocking)
