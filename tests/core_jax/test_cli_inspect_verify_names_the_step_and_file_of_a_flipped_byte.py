"""`pipekit-train inspect --verify DIR` recomputes the CRC-32 of every array of each committed
step of a real run and exits 1 naming the damaged step and array folder when one byte of an
array file was flipped; on the intact folder it exits 0. Plain `inspect` still reads only
files and JSON (no jax import) and so cannot see the flipped byte: that is what --verify is
for. Before, `inspect` had no --verify and never checked the arrays' CRC records."""

from __future__ import annotations

import subprocess
import sys

from _ckpt_helpers import child_env
from _program_helpers import make_program, toy_loop

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver
from pipekit_train.jax.checkpoint import Checkpointer
from pipekit_train.testing import biggest_data_file, flip_bytes


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "inspect", *args],
        capture_output=True,
        text=True,
        env=child_env(JAX_PLATFORMS="cpu"),
        timeout=120,
    )


def test_verify_passes_a_clean_run_and_names_a_flipped_byte(tmp_path, python_without):
    ckpt_dir = tmp_path / "ckpt"
    program = make_program(warmup_steps=4, sample_steps=6)
    ckpt = Checkpointer(ckpt_dir, keep_last=2, fingerprint={"program": "toy-two-phase"})
    loop = toy_loop(callbacks=[Checkpoint(every_n_steps=5, keep_last=2)], checkpoint_dir=ckpt_dir)
    run_driver(loop, program, program.initial_carry, data=None, checkpointer=ckpt)
    ckpt.close()

    clean = _cli(str(ckpt_dir), "--verify")
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert "verified: every array of 2 step(s) matches its checksum record" in clean.stdout

    damaged = biggest_data_file(ckpt_dir / "10")
    flip_bytes(damaged)
    inspect = f"raise SystemExit(main(['inspect', {str(ckpt_dir)!r}]))"
    plain = python_without(f"from pipekit_train.cli import main\n{inspect}", "jax")
    assert plain.returncode == 0, plain.stderr[-2000:]  # files only: the byte goes unseen

    found = _cli(str(ckpt_dir), "--verify")
    assert found.returncode == 1, found.stdout + found.stderr
    array_dir = damaged.parent.relative_to(ckpt_dir / "10").as_posix()  # e.g. state/packed__…
    named = [line for line in found.stderr.splitlines() if line.startswith("step 10 is damaged")]
    assert len(named) == 1 and f"{ckpt_dir / '10' / array_dir}" in named[0], found.stderr
    assert "crc32" in named[0] and "step 5 " not in found.stderr
    table = {line.split()[0]: line.split()[1] for line in found.stdout.splitlines()[1:]}
    assert table == {"5": "yes", "10": "NO"}
