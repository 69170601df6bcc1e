"""Types of ``install_wheels.py``, which runs inside the image build, never on the host.

The script's bytes are an input of the image's content hash (``sandbox.images``), so it is
typed here rather than edited: mypy reads this stub in its place.
"""

LAUNCHER: str

def install(wheel: str, site: str, bin_dir: str | None) -> None: ...
def write_launchers(site: str, bin_dir: str) -> None: ...
def main(argv: list[str]) -> None: ...
