"""A whole numpyro-mcmc run compiles no more than NumPyro's ``MCMC.run`` of the same model.

Warmup and sampling share one compiled chunk program (NumPyro's ``sample`` adapts while
``state.i < num_warmup``), so the run compiles one program that runs NUTS transitions, as
``MCMC.run``'s ``fori_collect`` does; counted, with every other backend compilation, in a
fresh process per side (``_compile_count_worker.py``), and compared, not hard-coded.
"""

import json
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("_compile_count_worker.py")


def _count(mode: str, tmp: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, str(WORKER), mode, str(tmp / mode)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_warmup_and_sampling_compile_once_and_in_all_no_more_than_mcmc_run(tmp_path) -> None:
    ours, ref = _count("backend", tmp_path), _count("mcmc-run", tmp_path)
    assert ref["loops"] == 1, ref  # the counter sees MCMC.run's one fori_collect program
    assert ours["loops"] <= ref["loops"], (ours, ref)
    assert ours["compiles"] <= ref["compiles"], (ours, ref)
