"""Container hygiene without Docker: owner tokens, the orphan rules, the sweep and the reaper."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from debatecode.sandbox._hygiene import ContainerReaper, OwnerToken, orphan_reason, sweep_orphans


def test_owner_token_names_this_process_and_round_trips() -> None:
    me = OwnerToken.current()
    assert OwnerToken.parse(me.label()) == me
    assert me.is_alive() is True
    assert OwnerToken.parse("not-a-token") is None
    assert OwnerToken.parse("a:b:c:d") is None


def test_a_dead_process_or_a_reused_pid_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    me = OwnerToken.current()
    assert replace(me, pid=child.pid).is_alive() is False
    assert replace(me, start_ticks=me.start_ticks + 1).is_alive() is False, "same pid, other start time: pid reused"
    assert replace(me, boot_id="another-boot").is_alive() is False


def test_another_pid_namespace_cannot_be_told() -> None:
    me = OwnerToken.current()
    assert replace(me, pid_namespace=me.pid_namespace + 1).is_alive() is None


def test_orphan_rules() -> None:
    now = time.time()
    me = OwnerToken.current()
    alive = {"debatecode.owner": me.label()}
    dead = {"debatecode.owner": replace(me, boot_id="old").label()}
    foreign = {"debatecode.owner": replace(me, pid_namespace=me.pid_namespace + 1).label()}
    assert orphan_reason(alive, 10, now, 3600) == ""
    assert "gone" in orphan_reason(dead, 10, now, 3600)
    assert orphan_reason(foreign, 10, now, 3600) == "", "a young container of another namespace is kept"
    assert "older" in orphan_reason(foreign, 7200, now, 3600)
    assert orphan_reason({}, 10, now, 3600) == "", "a young container without an owner (older debatecode) is kept"
    assert "older" in orphan_reason({}, 7200, now, 3600)
    expired = {**alive, "debatecode.expires": str(int(now - 5))}
    assert "outlived" in orphan_reason(expired, 10, now, 3600), "even a live owner's container past its job"


class FakeSweepContainer:
    def __init__(self, name: str, labels: dict[str, str], age_s: float = 5.0) -> None:
        self.name = name
        self.labels = labels
        created = datetime.now(UTC) - timedelta(seconds=age_s)
        self.attrs = {"Created": created.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}
        self.removed: dict[str, Any] | None = None

    def remove(self, **kwargs: Any) -> None:
        self.removed = kwargs


class FakeSweepClient:
    def __init__(self, containers: list[FakeSweepContainer]) -> None:
        self.listed: list[dict[str, Any]] = []
        outer = self

        class Containers:
            def list(self, **kwargs: Any) -> list[FakeSweepContainer]:
                outer.listed.append(kwargs)
                return containers

        class Volumes:
            def list(self, **kwargs: Any) -> list[Any]:
                return []

        self.containers = Containers()
        self.volumes = Volumes()


def test_sweep_removes_orphans_with_volumes_and_keeps_live_owners() -> None:
    me = OwnerToken.current()
    mine = FakeSweepContainer("live", {"debatecode.owner": me.label()})
    orphan = FakeSweepContainer("orphan", {"debatecode.owner": replace(me, boot_id="old").label()})
    legacy_old = FakeSweepContainer("legacy", {}, age_s=30 * 3600)
    client = FakeSweepClient([mine, orphan, legacy_old])
    report = sweep_orphans(client)
    assert client.listed == [{"all": True, "filters": {"label": "debatecode"}}]
    assert set(report.removed) == {"orphan", "legacy"} and set(report.kept) == {"live"}
    assert orphan.removed == {"force": True, "v": True} and mine.removed is None


def test_sweep_dry_run_removes_nothing_and_all_removes_everything() -> None:
    me = OwnerToken.current()
    mine = FakeSweepContainer("live", {"debatecode.owner": me.label()})
    orphan = FakeSweepContainer("orphan", {"debatecode.owner": replace(me, boot_id="old").label()})
    report = sweep_orphans(FakeSweepClient([mine, orphan]), dry_run=True)
    assert set(report.removed) == {"orphan"} and orphan.removed is None
    report = sweep_orphans(FakeSweepClient([mine, orphan]), everything=True)
    assert set(report.removed) == {"live", "orphan"} and mine.removed is not None


def test_reaper_kills_at_the_deadline_and_not_after_unwatch() -> None:
    killed: list[str] = []
    done = threading.Event()

    def kill(container_id: str) -> None:
        killed.append(container_id)
        done.set()

    reaper = ContainerReaper(kill)
    reaper.watch("spared", 0.1)
    reaper.watch("doomed", 0.2)
    reaper.unwatch("spared")
    assert done.wait(5)
    assert killed == ["doomed"] and reaper.reaped == ["doomed"]
    reaper.watch("later", 0.1)
    reaper.watch("later", 60)
    time.sleep(0.3)
    assert killed == ["doomed"], "a new deadline replaces the old one"
    reaper.close()
