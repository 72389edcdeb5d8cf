"""Install each built wheel the way a user would, and check it works on its own.

Called by ``nox -s wheels`` after ``uv build --package X --no-sources`` for every distribution::

    python scripts/check_wheels.py --dist DIST_DIR --work WORK_DIR [--only NAME ...] [--jobs N]

For every distribution, in a fresh ``python -m venv`` with plain pip (``uv pip`` for the ones
that pull in torch, whose CUDA build pip would download anew each time): install it from DIST_DIR
(``--find-links``; its third-party dependencies come from the package index, the
pipekit-train-* ones are pinned to the wheels just built), ``pip check``, import every module it
ships from site-packages, and load every ``pipekit_train.backends`` entry point it brings. For
core, also assert that jax, torch, keras and numpyro are not installed and that the
``pipekit-train backends`` command runs. Then the README examples (``README_EXAMPLES``): each
``python`` block of the distribution's README (and, for equinox, the top README's example) runs
in that venv, in a scratch folder, after installing only what the block's first line names
(``# pip install …``) — so a README that needs an extra it does not name fails here, as it
would for a user. Finally, one venv gets the core wheel first and the equinox wheel added
afterwards, proving the ``pipekit_train.adapters`` namespace works from wheels.

The venvs are built a few at a time (``--jobs``); each one's output is printed as one block.
They are deleted when every check passed (unless ``--keep``) and kept for a look otherwise.
Exits non-zero, after checking everything, if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Distributions that pull in torch: installed with `uv pip` (see Job.pip_install).
VIA_UV = {"pipekit-train-lightning"}

# distribution → the import paths it ships
MODULES: dict[str, list[str]] = {
    "pipekit-train-core": ["pipekit_train", "pipekit_train.adapters"],
    "pipekit-train-equinox": ["pipekit_train.adapters.equinox"],
    "pipekit-train-bayes": ["pipekit_train.adapters.bayes"],
    "pipekit-train-numpyro": [
        "pipekit_train.adapters.numpyro_svi",
        "pipekit_train.adapters.numpyro_mcmc",
    ],
    "pipekit-train-blackjax": ["pipekit_train.adapters.blackjax"],
    "pipekit-train-lightning": ["pipekit_train.adapters.lightning"],
    "pipekit-train-keras": ["pipekit_train.adapters.keras"],
}

# Backend entry points each distribution must register (name → module); any other is an error.
ENTRY_POINTS: dict[str, dict[str, str]] = {
    "pipekit-train-equinox": {"equinox": "pipekit_train.adapters.equinox"},
    "pipekit-train-numpyro": {
        "numpyro-svi": "pipekit_train.adapters.numpyro_svi",
        "numpyro-mcmc": "pipekit_train.adapters.numpyro_mcmc",
    },
    "pipekit-train-keras": {"keras": "pipekit_train.adapters.keras"},
    "pipekit-train-blackjax": {"blackjax": "pipekit_train.adapters.blackjax"},
    "pipekit-train-lightning": {"lightning": "pipekit_train.adapters.lightning"},
}

# What a backend's own venv must not hold (Keras runs on JAX: TensorFlow never comes along).
ABSENT: dict[str, tuple[str, ...]] = {"pipekit-train-keras": ("tensorflow",)}

# Heavy frameworks a bare `pip install pipekit-train-core` must not pull in.
NOT_IN_CORE = ("jax", "jaxlib", "torch", "keras", "numpyro")

ROOT = Path(__file__).resolve().parents[1]

# distribution → the Markdown files whose ```python blocks must run in its venv (each block's
# first line `# pip install …` says what to install; the distribution's wheel is pinned);
# "FILE:N" runs only block N (1-based) — the top README's first block is the Equinox one.
README_EXAMPLES: dict[str, list[str]] = {
    "pipekit-train-equinox": ["packages/equinox/README.md", "README.md:1"],
    "pipekit-train-numpyro": ["packages/numpyro/README.md"],
    "pipekit-train-blackjax": ["packages/blackjax/README.md"],
    "pipekit-train-lightning": ["packages/lightning/README.md"],
    "pipekit-train-keras": ["packages/keras/README.md"],
}
EXAMPLE_TIMEOUT_S = 600

_BLOCK_RE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_PIP_RE = re.compile(r"^# pip install (.+)$")


def readme_examples(markdown: str) -> list[tuple[list[str], str]]:
    """``(requirements, code)`` of each plain ```python block (``{.python notest}`` skipped).

    The requirements are the words of the block's first line ``# pip install …`` (quotes
    removed), or none.
    """
    import shlex

    found = []
    for code in _BLOCK_RE.findall(markdown):
        first = code.splitlines()[0] if code else ""
        match = _PIP_RE.match(first)
        found.append((shlex.split(match.group(1)) if match else [], code))
    return found


WHEEL_RE = re.compile(r"^(?P<name>[A-Za-z0-9_]+)-(?P<version>[^-]+)-.*\.whl$")

# Runs inside a checked venv: imports the modules, reports where they came from, loads the
# backend entry points. Prints one line per finding; exit status 1 on any failure.
PROBE = textwrap.dedent(
    """
    import importlib, importlib.metadata as md, importlib.util, json, sys, sysconfig
    spec = json.loads(sys.argv[1])
    site = sysconfig.get_paths()["purelib"]
    bad = []
    for name in spec["modules"]:
        mod = importlib.import_module(name)
        where = list(getattr(mod, "__path__", [])) or [mod.__file__]
        if not all(str(p).startswith(site) for p in where):
            bad.append(f"{name} imported from outside site-packages: {where}")
        print(f"  import {name}: ok ({where[0]})")
    for dist, version in spec["versions"].items():
        got = md.version(dist)
        if got != version:
            bad.append(f"{dist} is {got}, expected the built wheel's {version}")
    eps = {ep.name: ep for ep in md.entry_points(group="pipekit_train.backends")}
    if sorted(eps) != sorted(spec["entry_points"]):
        bad.append(f"backend entry points {sorted(eps)}, expected {sorted(spec['entry_points'])}")
    for name, ep in eps.items():
        mod = ep.load()
        print(f"  entry point {name} -> {ep.value}: loads {mod.__name__}")
        if ep.value != spec["entry_points"].get(name):
            bad.append(f"entry point {name} -> {ep.value}")
    for name in spec["absent"]:
        if importlib.util.find_spec(name) is not None:
            bad.append(f"{name} is installed but must not be")
    if spec["absent"]:
        print(f"  not installed, as required: {', '.join(spec['absent'])}")
    for line in bad:
        print("  FAIL:", line)
    sys.exit(1 if bad else 0)
    """
)


class Job:
    """One fresh venv and the checks run in it; output is collected and printed in one block."""

    def __init__(self, checker: Checker, label: str) -> None:
        self.checker = checker
        self.label = label
        self.log: list[str] = []
        self.failures: list[str] = []
        self.bin = checker.work / label / "bin"

    def run(
        self,
        cmd: list[str | Path],
        *,
        show: str | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        self.log.append(f"$ {show or ' '.join(map(str, cmd))}")
        try:
            proc = subprocess.run(
                [str(c) for c in cmd],
                cwd=cwd or self.checker.work,
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            self.failures.append(f"{self.label}: `{show or cmd[0]}` ran over {timeout:.0f} s")
            return subprocess.CompletedProcess(cmd, 124, "", "")
        out = (proc.stdout + proc.stderr).rstrip()
        if out:
            self.log.append(textwrap.indent(out, "  "))
        if proc.returncode != 0:
            self.failures.append(f"{self.label}: `{show or cmd[0]}` exited {proc.returncode}")
        return proc

    def venv(self) -> None:
        shutil.rmtree(self.bin.parent, ignore_errors=True)
        self.run([sys.executable, "-m", "venv", self.bin.parent])

    def pip_install(self, *names: str) -> bool:
        if any(n in VIA_UV for n in names) and shutil.which("uv"):
            # Same wheels from the same index, installed by uv (hard-linked from its cache):
            # pip would download and unpack torch's ~5 GB CUDA build on every run.
            uv_cmd: list[str | Path] = [
                "uv",
                "pip",
                "install",
                "--quiet",
                "--python",
                self.bin / "python",
                "--find-links",
                self.checker.dist_dir,
                "--constraint",
                self.checker.constraints,
                *names,
            ]
            show = f"uv pip install --find-links DIST {' '.join(names)}"
            return self.run(uv_cmd, show=show).returncode == 0
        cmd: list[str | Path] = [
            self.bin / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",  # byte-compiling jax & co. is most of the install time
            "--disable-pip-version-check",
            "--find-links",
            self.checker.dist_dir,
            "--constraint",
            self.checker.constraints,
            *names,
        ]
        return (
            self.run(cmd, show=f"pip install --find-links DIST {' '.join(names)}").returncode == 0
        )

    def pip_check(self) -> None:
        self.run([self.bin / "python", "-m", "pip", "check", "--disable-pip-version-check"])

    def probe(
        self, dists: list[str], entry_points: dict[str, str], absent: tuple[str, ...] = ()
    ) -> None:
        spec = {
            "modules": [m for d in dists for m in MODULES[d]],
            "versions": {d: self.checker.versions[d] for d in dists},
            "entry_points": entry_points,
            "absent": list(absent),
        }
        self.run([self.bin / "python", "-c", PROBE, json.dumps(spec)], show="python -c PROBE")

    def readme_examples(self, dist: str) -> None:
        """Run each README example of ``dist`` here, after installing what its block names."""
        for entry in README_EXAMPLES.get(dist, []):
            readme, _, only = entry.partition(":")
            blocks = readme_examples((ROOT / readme).read_text(encoding="utf-8"))
            for i, (requirements, code) in enumerate(blocks):
                if only and i + 1 != int(only):
                    continue
                extra = [r for r in requirements if r != dist]
                if extra and not self.pip_install(*extra):
                    continue
                folder = self.bin.parent / f"example-{Path(readme).parent.name or 'top'}-{i + 1}"
                folder.mkdir(parents=True, exist_ok=True)
                script = folder / "example.py"
                script.write_text(code, encoding="utf-8")
                env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
                self.run(
                    [self.bin / "python", script],
                    show=f"python <{readme} example {i + 1}>",
                    cwd=folder,
                    env=env,
                    timeout=EXAMPLE_TIMEOUT_S,
                )

    def backends_command(self, must_list: str | None = None) -> None:
        proc = self.run([self.bin / "pipekit-train", "backends"], show="pipekit-train backends")
        # Every known backend is printed; an installed one as "NAME  installed: DIST VERSION".
        installed = {
            line.split()[0]
            for line in proc.stdout.splitlines()[1:]
            if len(line.split()) > 1 and line.split()[1] == "installed:"
        }
        if must_list and proc.returncode == 0 and must_list not in installed:
            self.failures.append(
                f"{self.label}: `pipekit-train backends` does not list {must_list} as installed"
            )


class Checker:
    def __init__(self, dist_dir: Path, work: Path) -> None:
        self.dist_dir = dist_dir
        self.work = work
        self.versions = self._built_versions()
        self.constraints = work / "constraints.txt"
        # Pin our own distributions to the wheels just built, so a same-named release on the
        # package index can never be picked instead.
        self.constraints.write_text(
            "".join(f"{name}=={v}\n" for name, v in sorted(self.versions.items()))
        )

    def _built_versions(self) -> dict[str, str]:
        versions: dict[str, str] = {}
        for wheel in sorted(self.dist_dir.glob("*.whl")):
            m = WHEEL_RE.match(wheel.name)
            if m:
                versions[m["name"].replace("_", "-").lower()] = m["version"]
        missing = sorted(set(MODULES) - set(versions))
        if missing:
            sys.exit(f"no wheel in {self.dist_dir} for: {', '.join(missing)}")
        return versions

    def check_one(self, dist: str) -> Job:
        job = Job(self, dist)
        job.venv()
        if job.pip_install(dist):
            job.pip_check()
            if dist == "pipekit-train-core":
                job.probe([dist], {}, absent=NOT_IN_CORE)
                job.backends_command()
            else:
                job.probe([dist], ENTRY_POINTS.get(dist, {}), absent=ABSENT.get(dist, ()))
            if not job.failures:
                job.readme_examples(dist)
        return job

    def check_core_then_equinox(self) -> Job:
        """Core's wheel first, equinox's added later: the namespace must join up in wheels."""
        job = Job(self, "core-then-equinox")
        job.venv()
        if job.pip_install("pipekit-train-core") and job.pip_install("pipekit-train-equinox"):
            job.pip_check()
            job.probe(
                ["pipekit-train-core", "pipekit-train-equinox"],
                ENTRY_POINTS["pipekit-train-equinox"],
            )
            job.backends_command(must_list="equinox")
        return job


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dist", type=Path, required=True, help="folder holding the wheels")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for the venvs")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="check only these distributions (and 'core-then-equinox' only if named)",
    )
    parser.add_argument(
        "--jobs", type=int, default=min(4, os.cpu_count() or 1), help="venvs built at once"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the venvs even when every check passed"
    )
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    checker = Checker(args.dist.resolve(), args.work.resolve())

    selected = args.only or [*MODULES, "core-then-equinox"]
    for name in selected:
        if name != "core-then-equinox" and name not in MODULES:
            parser.error(f"unknown distribution {name!r}")

    def task(name: str) -> tuple[Job, float]:
        start = time.monotonic()
        if name == "core-then-equinox":
            job = checker.check_core_then_equinox()
        else:
            job = checker.check_one(name)
        return job, time.monotonic() - start

    failures: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for job, seconds in pool.map(task, selected):
            status = "FAILED" if job.failures else "ok"
            print(f"\n=== {job.label}: {status} ({seconds:.0f}s) ===", *job.log, sep="\n")
            for failure in job.failures:
                print("  FAIL:", failure)
            sys.stdout.flush()
            failures += job.failures

    if failures:
        print("\nwheel checks FAILED:", *failures, sep="\n  ", file=sys.stderr)
        return 1
    print(f"\nwheel checks passed: {', '.join(selected)}")
    if not args.keep:  # several GB of venvs; kept when a check failed, for a look
        for name in selected:
            shutil.rmtree(checker.work / name, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
