"""The Dockerfiles of the three image layers (legacy-builder syntax: no heredocs, no RUN --mount)."""

from __future__ import annotations

__all__ = ["BASE_DOCKERFILE", "ENV_DOCKERFILE", "INSTANCE_DOCKERFILE"]

BASE_DOCKERFILE = """\
# debatecode SWE-bench base layer: the sandbox image plus the grader plugin.
ARG BASE
FROM ${BASE}
USER root
COPY debatecode_swebench_grader.py /opt/swebench/grader/debatecode_swebench_grader.py
RUN python3 -I -c "import os, shutil, sysconfig; d = sysconfig.get_paths()['purelib']; os.makedirs(d, exist_ok=True); shutil.copy('/opt/swebench/grader/debatecode_swebench_grader.py', d)" \\
    && mkdir -p /work /opt/swebench \\
    && chmod 1777 /work
ENV PYTHONPATH= \\
    PYTHONDONTWRITEBYTECODE=1 \\
    PYTHONUNBUFFERED=1 \\
    HOME=/tmp \\
    LANG=C.UTF-8
LABEL org.opencontainers.image.title="debatecode SWE-bench base"
USER 10001:10001
WORKDIR /work
"""

ENV_DOCKERFILE = """\
# debatecode SWE-bench env layer: the repository's Python dependencies, installed offline
# from wheels downloaded on the host (pip runs from its own wheel and is not kept).
ARG BASE
FROM ${BASE}
USER root
COPY wheels/ /tmp/debatecode-wheels/
COPY requirements/ /tmp/debatecode-requirements/
RUN cd /tmp/debatecode-requirements \\
    && python3 -E -s "$(ls /tmp/debatecode-wheels/pip-*.whl | head -n 1)/pip" install \\
       --no-index --find-links /tmp/debatecode-wheels --no-cache-dir --break-system-packages \\
       --root-user-action=ignore --disable-pip-version-check --no-warn-script-location --progress-bar off \\
       -r all.txt \\
    && rm -rf /tmp/debatecode-wheels /tmp/debatecode-requirements \\
    && python3 -I -c "import pytest, sys; print('pytest', pytest.__version__, 'on Python', sys.version.split()[0])"
USER 10001:10001
"""

INSTANCE_DOCKERFILE = """\
# debatecode SWE-bench instance layer: the repository at base_commit, read-only for the sandbox user.
ARG BASE
FROM ${BASE}
USER root
COPY repo/ /opt/swebench/repo/
RUN chmod -R a+rX,go-w /opt/swebench/repo
USER 10001:10001
"""
