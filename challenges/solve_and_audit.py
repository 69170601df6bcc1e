"""A user solves a task with replayed replies in Docker, then audits the session and its git history."""

from __future__ import annotations

import json
import re

from challenges._harness import REPO, Journey, expect

NEEDS_DOCKER = True


def run(journey: Journey) -> str:
    task = REPO / "examples" / "tasks" / "add.md"
    replies = REPO / "examples" / "replies" / "add.yaml"
    solved = journey.cli("solve", str(task), "--model", f"scripted:{replies}", "--sandbox", "docker", "--out", "out")
    expect(solved.returncode == 0, f"solve exited {solved.returncode}", solved.stdout + solved.stderr)
    for phase in ("dehallucination", "proposal", "critique", "review", "optimization", "adversarial", "convergence"):
        expect(f"▶ {phase}" in solved.stdout, f"phase {phase} was not shown live", solved.stdout)
    session = re.search(r"debatecode · session ([0-9a-f]{12})", solved.stdout)
    expect(session is not None, "the summary names no session", solved.stdout)
    assert session is not None
    sid = session.group(1)

    namespace: dict[str, object] = {}
    exec((journey.workdir / "out" / "solution.py").read_text(), namespace)  # our own replayed answer
    add = namespace["add"]
    expect(callable(add) and add(2, 3) == 5 and add(-4, 4) == 0, "solution.py does not add")
    report = (journey.workdir / "out" / "report.md").read_text()
    for section in ("## Final code", "## Chosen approach", "## Dissents", "## Risk register", "## Confidence"):
        expect(section in report, f"report.md lacks {section}")

    shown = journey.cli("sessions", "show", sid)
    expect(shown.returncode == 0 and "turns" in shown.stdout, "sessions show lists no turns", shown.stdout)
    expect("quality" in shown.stdout and "code versions" in shown.stdout, "no versions with quality", shown.stdout)
    log = journey.run("git", "-C", "out", "log", "--format=%B", f"debate/{sid}")
    for trailer in ("Phase: ", "Agent: ", "Quality-Score: ", "Tests: "):
        expect(trailer in log.stdout, f"the version commits carry no {trailer.strip()} trailer", log.stdout)
    audit = journey.cli("sessions", "audit", sid)
    expect(audit.returncode == 0, f"sessions audit exited {audit.returncode}", audit.stdout + audit.stderr)
    trail = json.loads(audit.stdout)
    expect(isinstance(trail, dict) and bool(trail), "the audit trail is empty", audit.stdout[:500])
    (journey.workdir / "trail.json").write_text(audit.stdout)
    replayed = journey.cli("sessions", "replay", "trail.json", "--sandbox", "docker", "--out", "replayed")
    expect(replayed.returncode == 0, f"sessions replay exited {replayed.returncode}", replayed.stdout + replayed.stderr)
    versions = log.stdout.count("Debate-Session: ")
    return f"session {sid}: solution correct, {versions} commits with trailers, the replay reproduced it"
