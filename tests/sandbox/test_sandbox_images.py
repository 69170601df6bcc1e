"""The offline image builder: wheel pins, the images directory, idempotent builds."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from debatecode.config import SandboxSettings
from debatecode.errors import SandboxError
from debatecode.sandbox.images import _split_tag, build_image, image_status, images_dir, wheel_requirements


def test_wheel_requirements_pin_pytest_and_its_runtime_deps_to_this_env() -> None:
    requirements = wheel_requirements()
    names = {requirement.split("==")[0] for requirement in requirements}
    assert {"pytest", "pluggy", "iniconfig", "packaging"} <= names
    assert f"pytest=={importlib.metadata.version('pytest')}" in requirements
    assert "colorama" not in names, "Windows-only dependencies are left out"


def test_images_dir_is_found_in_the_checkout_and_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert (images_dir() / "python" / "Dockerfile").is_file()
    monkeypatch.setenv("DEBATECODE_IMAGES_DIR", str(tmp_path))
    with pytest.raises(SandboxError, match="DEBATECODE_IMAGES_DIR"):
        images_dir()


def test_dockerfile_keeps_to_the_legacy_builder_and_offline_rules() -> None:
    text = (images_dir() / "python" / "Dockerfile").read_text()
    assert "ARG BASE=python:3.11-slim" in text
    assert "<<" not in text, "no heredocs: the engine's legacy builder rejects them"
    assert "pip install" not in text
    assert "USER 10001:10001" in text and "WORKDIR /work" in text


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("debatecode/sandbox-python:latest", ("debatecode/sandbox-python", "latest")),
        ("registry:5000/sandbox", ("registry:5000/sandbox", "latest")),
        ("sandbox", ("sandbox", "latest")),
    ],
)
def test_split_tag(image: str, expected: tuple[str, str]) -> None:
    assert _split_tag(image) == expected


@pytest.mark.docker
def test_build_is_idempotent_and_tags_the_configured_image(requires_docker: None) -> None:
    settings = SandboxSettings()
    lines: list[str] = []
    first = build_image(settings, progress=lines.append)
    second = build_image(settings, progress=lines.append)
    assert first == second and first.split(":")[-1].startswith("ctx-")
    assert any(line.startswith("up to date") for line in lines)
    assert image_status(settings).startswith("present")
