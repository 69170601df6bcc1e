"""Image builds under ``--jobs``: one build per tag however many instances want it, different tags side by side.

The builder's Docker calls are replaced by a stand-in (each build takes 0.3 s); the
build contexts, tags and locking are the real ones.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.bench_swebench.fake_grading import CalcBench, build_bench

from debatecode.bench.swebench import ImageBuilder, ImageSet, RepoSpec
from debatecode.bench.swebench.images import PythonTarget
from debatecode.bench.swebench.repos import RepoMirror


class SlowEngineBuilder(ImageBuilder):
    """An ImageBuilder whose engine is a dict of tags; each build sleeps, and overlaps are counted."""

    def __init__(self) -> None:
        super().__init__(base_image="fake/sandbox:latest")
        self.images = {"fake/sandbox:latest": "sha256:from"}
        self.builds: list[str] = []
        self.probes = 0
        self.running = 0
        self.most_at_once = 0
        self.guard = threading.Lock()

    def _image_id(self, tag: str) -> str | None:
        with self.guard:
            return self.images.get(tag)

    def _build(self, layer: str, context: Path, tag: str, base: str, labels: dict[str, str]) -> None:
        assert (context / "Dockerfile").is_file()
        with self.guard:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        time.sleep(0.3)
        with self.guard:
            self.running -= 1
            self.builds.append(tag)
            self.images[tag] = f"sha256:{len(self.images)}"

    async def _probe(self, base_tag: str) -> PythonTarget:
        self.probes += 1
        await asyncio.sleep(0.05)
        return PythonTarget(version="3.11", implementation="cpython", machine="x86_64", glibc="glibc 2.36")

    def _download(self, requirements_dir: Path, wheels: Path, target: PythonTarget) -> None:
        assert (requirements_dir / "all.txt").is_file()


def _mirror(bench: CalcBench, tmp_path: Path) -> RepoMirror:
    return RepoMirror("local/calc", bench.repos_dir / "local__calc", tmp_path / "mirror")


async def _ensure_all(builder: SlowEngineBuilder, mirror: RepoMirror, instances: list[Any]) -> list[ImageSet]:
    return list(await asyncio.gather(*(builder.ensure(mirror, instance, RepoSpec()) for instance in instances)))


async def test_three_instances_wanting_the_same_images_build_each_once(tmp_path: Path) -> None:
    bench = build_bench(tmp_path)
    builder = SlowEngineBuilder()
    sets = await _ensure_all(builder, _mirror(bench, tmp_path), [bench.instances[0]] * 3)
    assert sorted(Counter(builder.builds).values()) == [1, 1, 1], builder.builds
    assert builder.probes == 1, "the base image's interpreter is probed once"
    assert len({s.instance.tag for s in sets}) == 1
    assert sum(s.instance.built for s in sets) == 1, "one waiter built it, the others reused it"


async def test_different_instance_images_build_side_by_side_on_one_shared_env(tmp_path: Path) -> None:
    bench = build_bench(tmp_path)
    builder = SlowEngineBuilder()
    sets = await _ensure_all(builder, _mirror(bench, tmp_path), bench.instances[:2])
    tags = Counter(builder.builds)
    assert len({s.env.tag for s in sets}) == 1 and tags[sets[0].env.tag] == 1, "one env image for one repository"
    assert sets[0].instance.tag != sets[1].instance.tag and all(tags[s.instance.tag] == 1 for s in sets)
    assert builder.most_at_once == 2, "the two instance layers were built at the same time"
