"""The harness methods solve mode uses: an instance's context, a patched tree, tests in the instance sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.bench.swebench import SWEBenchHarness, SWEBenchInstance

from .conftest import REPOS

pytestmark = pytest.mark.docker


async def test_run_patch_runs_the_visible_tests_and_hides_test_patch(
    requires_docker: None, tmp_path: Path, local_instances: list[SWEBenchInstance]
) -> None:
    instance = next(i for i in local_instances if i.instance_id.endswith("confparse-1"))
    harness = SWEBenchHarness([instance], repos_dir=REPOS, out=tmp_path)
    try:
        context = await harness.context(instance)
        assert context.images.instance.tag.startswith("debatecode/swebench-instance:")
        prepared, run = await harness.run_patch(context, instance.patch)
        assert prepared.patch.method == "git apply --verbose" and prepared.test_patch_files == []
        assert run is not None
        assert run.exit_code == 0 and run.ledger_json, run.stdout[-2000:]
        hidden = instance.FAIL_TO_PASS[0].split("::")[-1]
        assert hidden not in run.stdout, "solve mode does not see the tests of test_patch"
        conftest = "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+x = 1\n"
        prepared, run = await harness.run_patch(context, conftest)
        assert [r.path for r in prepared.restored] == ["conftest.py"] and run is not None
        prepared, run = await harness.run_patch(context, "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n")
        assert run is None and not prepared.patch.applied
    finally:
        await harness.aclose()
