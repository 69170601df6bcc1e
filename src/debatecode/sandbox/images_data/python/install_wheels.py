"""Install pure-Python wheels without pip: unzip them into a site directory.

    python3 install_wheels.py WHEEL_DIR SITE_DIR [BIN_DIR]

Used while building the sandbox image, which has no pip and no network.
Only pure wheels (``*-none-any.whl``) are accepted. ``NAME.data/purelib`` and
``platlib`` trees are merged into SITE_DIR, console scripts get small
launchers in BIN_DIR, and everything is byte-compiled so that imports stay
fast on the image's read-only root.
"""

import compileall
import configparser
import os
import shutil
import sys
import zipfile

LAUNCHER = """#!/usr/bin/env python3
import sys
from {module} import {attr}
sys.exit({attr}())
"""


def install(wheel, site, bin_dir):
    name = os.path.basename(wheel)
    if not name.endswith("-none-any.whl"):
        raise SystemExit(f"not a pure-Python wheel: {name}")
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("/") or ".." in member.split("/"):
                raise SystemExit(f"unsafe path {member!r} in {name}")
        archive.extractall(site)
    for entry in os.listdir(site):
        data_dir = os.path.join(site, entry)
        if not entry.endswith(".data") or not os.path.isdir(data_dir):
            continue
        for scheme in ("purelib", "platlib"):
            tree = os.path.join(data_dir, scheme)
            if os.path.isdir(tree):
                shutil.copytree(tree, site, dirs_exist_ok=True)
        shutil.rmtree(data_dir)
    if bin_dir:
        write_launchers(site, bin_dir)
    print("installed", name)


def write_launchers(site, bin_dir):
    os.makedirs(bin_dir, exist_ok=True)
    for entry in os.listdir(site):
        points = os.path.join(site, entry, "entry_points.txt")
        if not (entry.endswith(".dist-info") and os.path.isfile(points)):
            continue
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.optionxform = str
        parser.read(points)
        if not parser.has_section("console_scripts"):
            continue
        for script, target in parser.items("console_scripts"):
            module, _, attr = target.strip().partition(":")
            path = os.path.join(bin_dir, script)
            with open(path, "w") as handle:
                handle.write(LAUNCHER.format(module=module.strip(), attr=attr.strip().split(".")[0]))
            os.chmod(path, 0o755)


def main(argv):
    if len(argv) not in (3, 4):
        raise SystemExit(__doc__)
    wheel_dir, site = argv[1], argv[2]
    bin_dir = argv[3] if len(argv) == 4 else None
    os.makedirs(site, exist_ok=True)
    wheels = sorted(f for f in os.listdir(wheel_dir) if f.endswith(".whl"))
    if not wheels:
        raise SystemExit(f"no wheels in {wheel_dir}")
    for wheel in wheels:
        install(os.path.join(wheel_dir, wheel), site, bin_dir)
    if not compileall.compile_dir(site, quiet=1):
        raise SystemExit(f"byte-compiling {site} failed")


if __name__ == "__main__":
    main(sys.argv)
