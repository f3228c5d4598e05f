"""``make check-bounds`` in CI, on its subset (issue 27 §5): the Epic kernel's cases that reach both block-function
variants, the war-engine rules and the turn's shooting run bounds-checked (scripts/check_bounds.py --subset, in its
own cache); the script first checks that an index past the end does raise, so this test cannot pass unchecked."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_kernel_subset_runs_in_bounds():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_bounds.py"), "--subset"], cwd=ROOT,
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 out of bounds" in run.stdout
