"""pipekit-train sessions: `nox -t ci` runs what CI runs; `nox -l` lists them all."""

# Every session but the `lowest` cells of the test matrix (see below) installs from uv.lock
# (`uv sync --locked`) into its own virtualenv. The per-distribution sessions install *only*
# that distribution and what it declares, plus the `test` dependency group, so a missing
# dependency declaration fails in its own session.
#
# Install modes, on purpose:
# - the tests-* sessions install workspace members non-editable (built wheels, as a user gets
#   them); each member's `[tool.uv] cache-keys` makes uv rebuild when its sources change;
# - `integration` installs every member editable (the developer's setup), which exercises the
#   pkgutil.extend_path namespace across several src folders;
# - `wheels` builds every distribution with --no-sources and installs each wheel with plain pip
#   into a fresh venv, third-party dependencies from the package index.

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).parent / "scripts"))
import nox_matrix  # noqa: E402  (scripts/nox_matrix.py: what a lowest cell installs)

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.tags = ["ci"]  # a bare `nox` runs what CI runs, like `nox -t ci`

ROOT = Path(__file__).parent

CORE = "pipekit-train-core"

# distribution → its tests folder under tests/
DISTRIBUTIONS: dict[str, str] = {
    "pipekit-train-core": "core",
    "pipekit-train-equinox": "equinox",
    "pipekit-train-bayes": "bayes",
    "pipekit-train-numpyro": "numpyro",
    "pipekit-train-blackjax": "blackjax",
    "pipekit-train-lightning": "lightning",
    "pipekit-train-keras": "keras",
}

# core's extras installed by the tests-core-jax session
CORE_JAX_EXTRAS: list[str] = ["jax", "tensorboard", "mlflow", "plot", "sweep"]

LINT_PATHS = ["packages", "tests", "examples", "benchmarks", "scripts", "noxfile.py", "conftest.py"]

TEST_ENV = {"JAX_PLATFORMS": "cpu"}


#: How the sessions that only test (every one but ``bench``) install: without compiling
#: bytecode (decision 0221). uv's ``compile-bytecode`` (pyproject.toml, decision 0163) compiles
#: every installed file, 7,400-18,500 of them, 10-34 s a session and ~6 min of a CI run on 2
#: cores; a test session imports ~2,600 of them. Its processes write those ``.pyc`` files
#: themselves on first import instead (``_test_env`` lets them, where the machine sets
#: ``PYTHONDONTWRITEBYTECODE``), so every later process and subprocess reads them.
NO_BYTECODE = ("--no-compile-bytecode",)


def _uv_sync(session: nox.Session, *args: str, bytecode: bool = False) -> None:
    """``uv sync --locked`` into this session's virtualenv (exact: nothing else stays in it);
    ``bytecode`` compiles every installed file (the benchmarks time fresh processes)."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        *(("--compile-bytecode",) if bytecode else NO_BYTECODE),
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


#: The one persistent JAX compilation cache of every test session (``_test_env``).
COMPILATION_CACHE = ROOT / ".nox" / "jax-compilation-cache"


def _test_env(session: nox.Session) -> dict[str, str]:
    """TEST_ENV plus one persistent JAX compilation cache for every session.

    Every JAX process — pytest itself and the subprocesses the resume and CLI tests start, in
    this session and the ones after it — reads and writes the same cache folder, so a program
    that several tests compile (the digits MLP's training chunk, eight schools' NUTS chunk,
    NumPyro's eager operations, which the bayes, numpyro and integration tests all run) is
    compiled once per CI run. An entry's key holds the program, the compile options and the
    JAX and jaxlib versions, so a `lowest` cell never reads another version's entry; a hit
    returns the same executable, so bits are unchanged.
    """
    cache = COMPILATION_CACHE.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    return {
        **TEST_ENV,
        # empty is unset: Python writes each imported module's .pyc once (see NO_BYTECODE)
        "PYTHONDONTWRITEBYTECODE": "",
        "JAX_COMPILATION_CACHE_DIR": str(cache),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


#: pytest-xdist for every test session: one worker per core, at most four, each taking whole
#: files (``loadfile``), so a file's module fixtures (a trained run its tests read) run once.
#: The tests are mostly single-threaded JAX tracing and XLA compilation, so two workers on a
#: 2-core machine ran tests/numpyro in 281 s against 446 s one after the other (2026-12-06).
XDIST = ["-n", "auto", "--maxprocesses", "4", "--dist", "loadfile"]


def _pytest(session: nox.Session, folder: str, *args: str) -> None:
    session.run(
        "pytest", f"tests/{folder}", *XDIST, *args, *session.posargs, env=_test_env(session)
    )


# --- the matrix: every tests-<dist> session × Python × dependency resolution ------------------
#
# - `locked`: `uv sync --locked` of the distribution alone (the versions in uv.lock);
# - `lowest`: the distribution's wheel and its workspace siblings' wheels, built here, installed
#   into a fresh venv with `uv pip install --resolution lowest-direct`, outside the lock. Every
#   range the closure declares (the distribution's, its siblings', the extras it names) is passed
#   as a direct requirement, so each one resolves to its floor; the test tools that are not ours
#   (pytest, scikit-learn, …) stay at their locked versions. The cell runs the tests marked
#   `lowest` (pytest -m lowest): at least the README example, a real-SIGKILL bit-identical
#   resume, a bad option refused before compiling, and an operator saved and loaded.
#
# A Python this machine does not have is skipped, and nox says so ("Python interpreter 3.12 not
# found"); none is downloaded. docs/compatibility.md is written from what the cells installed.

PYTHONS = ["3.11", "3.12", "3.13"]
RESOLUTIONS = ["locked", "lowest"]
nox.options.error_on_missing_interpreters = False
nox.options.download_python = "never"

# session folder → (distribution, extras of it the session installs)
TEST_SESSIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "core": (CORE, ()),
    "core_jax": (CORE, tuple(CORE_JAX_EXTRAS)),
    **{folder: (dist, ()) for dist, folder in DISTRIBUTIONS.items() if dist != CORE},
}


def _session_name(folder: str) -> str:
    return "tests-" + folder.replace("_", "-")


def _tests_locked(session: nox.Session, folder: str) -> None:
    dist, extras = TEST_SESSIONS[folder]
    extra_args = [arg for extra in extras for arg in ("--extra", extra)]
    _uv_sync(session, "--package", dist, *extra_args, "--group", "test", "--no-editable")
    _compatibility(session, folder, "locked", "record")
    _pytest(session, folder)
    _compatibility(session, folder, "locked", "check")


def _tests_lowest(session: nox.Session, folder: str) -> None:
    dist, extras = TEST_SESSIONS[folder]
    members, requirements = nox_matrix.closure(ROOT, dist, extras)
    wheels = Path(session.create_tmp()).resolve() / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    for member in members:
        session.run(
            "uv", "build", "--package", member, "--no-sources", "--wheel", "--quiet",
            "--out-dir", str(wheels), external=True,
        )  # fmt: skip
    ours = [_wheel_requirement(wheels, m, members[m]) for m in members]
    tools = nox_matrix.locked_test_tools(ROOT, exclude=requirements)
    session.run_install(
        "uv", "pip", "install", "--python", _python(session), "--resolution", "lowest-direct",
        *NO_BYTECODE, *ours, *requirements, *tools, external=True,
    )  # fmt: skip
    _compatibility(session, folder, "lowest", "record")
    _pytest(session, folder, "-m", "lowest")
    _compatibility(session, folder, "lowest", "check")


def _wheel_requirement(folder: Path, dist: str, extras: list[str]) -> str:
    """``name[extras] @ file://…whl``: the wheel just built, never a same-named index release."""
    (wheel,) = folder.glob(dist.replace("-", "_") + "-*.whl")
    return (
        f"{dist}[{','.join(extras)}] @ {wheel.as_uri()}" if extras else f"{dist} @ {wheel.as_uri()}"
    )


def _python(session: nox.Session) -> str:
    return str(Path(session.virtualenv.location) / "bin" / "python")


def _compatibility(session: nox.Session, folder: str, resolution: str, command: str) -> None:
    """scripts/compatibility.py in this cell's venv: ``record`` what it installed (before the
    tests) or ``check`` docs/compatibility.md against that record (after them)."""
    dist, extras = TEST_SESSIONS[folder]
    name = _session_name(folder)
    args = ["--session", name, "--resolution", resolution]
    if command == "record":
        requirements = nox_matrix.closure(ROOT, dist, extras)[1]
        packages = nox_matrix.requirement_names(requirements)
        args += ["--packages", *packages, "--requirements", *requirements]
    script = str(ROOT / "scripts" / "compatibility.py")
    if command == "check" and os.environ.get("PIPEKIT_COMPAT_WRITE"):
        session.run("python", script, "write")  # regenerate the table first (a developer's run)
    session.run("python", script, command, *args)


def _test_session(folder: str) -> None:
    dist = TEST_SESSIONS[folder][0]

    def _session(session: nox.Session, resolution: str) -> None:
        if resolution == "locked":
            _tests_locked(session, folder)
        else:
            _tests_lowest(session, folder)

    what = (
        "core alone"
        if folder == "core"
        else f"{dist}" + (" + extras" if folder == "core_jax" else "")
    )
    _session.__doc__ = f"{what}, locked or lowest versions (the matrix); runs tests/{folder}."
    parametrized = nox.parametrize("resolution", RESOLUTIONS, ids=RESOLUTIONS)(_session)
    nox.session(name=_session_name(folder), python=PYTHONS, tags=["ci"])(parametrized)


for _folder in TEST_SESSIONS:
    _test_session(_folder)


@nox.session(tags=["ci"])
def integration(session: nox.Session) -> None:
    """Every distribution, editable; `uv pip check` enforces the ranges between members."""
    _uv_sync(session, "--all-packages", "--all-extras", "--group", "test")
    # uv does not enforce version ranges between workspace members; `uv pip check` does.
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    session.run("uv", "pip", "check", "--python", python, external=True)
    _pytest(session, "integration")


@nox.session(tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and the import contracts (``lint-imports``).

    ``[tool.importlinter]`` in pyproject.toml holds core's layers and the backends' rules.
    import-linter reads the installed modules, so every distribution is installed into this
    session's venv from its own folder (``--no-deps``: their sources are all it reads), one
    ``pipekit_train`` package holding every distribution's modules.
    """
    _uv_sync(session, "--only-group", "lint")
    paths = [p for p in LINT_PATHS if (ROOT / p).exists()]
    session.run("ruff", "check", *paths, *session.posargs)
    session.run("ruff", "format", "--check", *paths)
    folders = [str(ROOT / "packages" / folder) for folder in DISTRIBUTIONS.values()]
    session.run_install(
        "uv", "pip", "install", "--python", _python(session), "--no-deps", "--reinstall",
        "--quiet", *folders, external=True,
    )  # fmt: skip
    session.run("lint-imports", str(ROOT / "pyproject.toml"))
    session.run("python", "scripts/import_contract_violation.py", str(ROOT / "pyproject.toml"))


def typed_packages() -> dict[str, list[str]]:
    """distribution → the import packages it ships, found from its ``src`` folder.

    Core ships ``pipekit_train``; each backend the packages under
    ``pipekit_train/adapters/``. A new backend under ``packages/`` is type-checked
    without editing this file.
    """
    found: dict[str, list[str]] = {}
    for dist, folder in DISTRIBUTIONS.items():
        src = ROOT / "packages" / folder / "src"
        if dist == CORE:
            found[dist] = ["pipekit_train"]
            continue
        adapters = src / "pipekit_train" / "adapters"
        found[dist] = sorted(
            f"pipekit_train.adapters.{p.parent.name}" for p in adapters.glob("*/__init__.py")
        )
    return found


@nox.session(tags=["ci"])
def typecheck(session: nox.Session) -> None:
    """mypy over every distribution's packages, from source (see [tool.mypy]).

    The packages come from ``typed_packages()``; each backend's ``src`` folder is put on
    ``MYPYPATH`` next to ``[tool.mypy] mypy_path``. Installed: every member with its
    extras (for the third-party libraries' types) and the typecheck group.
    """
    _uv_sync(session, "--all-packages", "--all-extras", "--group", "typecheck")
    packages = typed_packages()
    paths = [str(ROOT / "packages" / DISTRIBUTIONS[d] / "src") for d in packages]
    args = [arg for pkgs in packages.values() for pkg in pkgs for arg in ("-p", pkg)]
    session.run("mypy", *args, *session.posargs, env={"MYPYPATH": os.pathsep.join(paths)})


def docs_test_paths() -> list[str]:
    """The Markdown files whose Python blocks ``nox -s docs`` runs.

    README.md, docs/ and every package README: pages under docs/ that include a README
    with ``--8<--`` hold no code themselves, so the README is tested as its own file
    (tests/integration checks that every included file is in this list).
    """
    readmes = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("packages/*/README.md"))
    return ["README.md", "docs", *readmes]


@nox.session(tags=["ci"])
def docs(session: nox.Session) -> None:
    """The site: ``mkdocs build --strict``; then every Python block of the docs and READMEs.

    The reference pages are generated from the code (scripts/gen_docs_reference.py). The
    blocks of ``docs_test_paths()`` run with pytest-markdown-docs (superfences syntax:
    ``{.python notest}`` marks the few that cannot run here), each in its own temporary
    folder (conftest.py). The built site goes to a scratch folder; see docs/index.md for
    building one to open.
    """
    _uv_sync(session, "--all-packages", "--all-extras", "--group", "docs", "--group", "examples")
    site = Path(session.create_tmp()) / "site"
    quiet = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=quiet)
    session.run(
        "pytest",
        "--markdown-docs",
        "--markdown-docs-syntax=superfences",
        "-p",
        "no:cacheprovider",
        *XDIST,
        *docs_test_paths(),
        *session.posargs,
        env=_test_env(session),
    )


@nox.session(tags=["ci"])
def wheels(session: nox.Session) -> None:
    """Build every wheel with --no-sources; install each with pip in a fresh venv and check it."""
    tmp = Path(session.create_tmp())
    dist_dir = tmp / "dist"
    shutil.rmtree(dist_dir, ignore_errors=True)
    for dist in DISTRIBUTIONS:
        session.run(
            "uv",
            "build",
            "--package",
            dist,
            "--no-sources",
            "--out-dir",
            str(dist_dir),
            external=True,
        )
    session.run(
        "python",
        "scripts/check_wheels.py",
        "--dist",
        str(dist_dir),
        "--work",
        str(tmp / "venvs"),
        *session.posargs,
        env=_test_env(session),
    )


@nox.session
def validate(session: nox.Session) -> None:
    """posteriordb posteriors on numpyro-mcmc, numpyro-svi and blackjax → docs/validation.md.

    The seven of ``shared/posteriordb`` on numpyro-mcmc, numpyro-svi and blackjax nuts / hmc /
    mclmc with their measured settings; sblrc and the mixture on blackjax smc, sgld and sghmc
    (minibatches; SG-MCMC by its own stated tolerance); three more (``examples/posteriordb``:
    arma11, hmm_example, kilpisjarvi) on numpyro-mcmc, numpyro-svi and blackjax nuts at the
    backends' default options. Not in CI (~25 minutes on 2 cores). Needs the posteriordb copy
    beside the checkout (``shared/posteriordb``) or ``PIPEKIT_POSTERIORDB``; arguments go to the
    script, e.g. ``nox -s validate -- --backends mcmc --out /tmp/validation.md`` or
    ``nox -s validate -- --posteriors arma-arma11 --update`` (keeps the other rows).
    """
    _uv_sync(session, "--all-packages", "--all-extras", "--group", "test", "--no-editable")
    env = dict(TEST_ENV)
    if os.environ.get("PIPEKIT_POSTERIORDB"):
        env["PIPEKIT_POSTERIORDB"] = os.environ["PIPEKIT_POSTERIORDB"]
    session.run("python", "scripts/validate_posteriordb.py", *session.posargs, env=env)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks against scikit-learn and Keras (JAX backend); everything installed.

    Every case by default, the whole-run suite (case 17: each backend against its peer in
    fresh processes) included; ``nox -s bench -- --whole [--quick]`` runs that suite alone and
    writes ``benchmarks/results/whole-runs.md`` and its table in ``docs/performance.md``.

    ``--compile-bytecode`` writes the ``.pyc`` files at install, as pip does for a user: on a
    machine with ``PYTHONDONTWRITEBYTECODE=1`` every fresh interpreter would otherwise compile
    the sources it imports again (ArviZ alone ~3 s), which the whole-run cases would time.
    """
    _uv_sync(
        session,
        "--all-packages",
        "--all-extras",
        "--group",
        "bench",
        "--no-editable",
        bytecode=True,
    )
    env = {**TEST_ENV, "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "jax")}
    session.run("python", "benchmarks/run.py", *session.posargs, env=env)


DOWNSTREAM = ROOT / "examples" / "downstream-backend"

_FROM_THE_WHEELS = """\
import sys, pipekit_train, pipekit_train_flax
site = sys.argv[1]
for module in (pipekit_train, pipekit_train_flax):
    assert module.__file__.startswith(site), f"{module.__name__} imported from {module.__file__}"
print("pipekit_train and pipekit_train_flax import from", site)
"""


@nox.session(python=PYTHONS, tags=["ci"])
def downstream(session: nox.Session) -> None:
    """A third-party backend outside the workspace (examples/downstream-backend, flax-nnx).

    Core's wheel and the example's wheel are built with --no-sources and installed from their
    files into a fresh venv, core's own dependencies held to uv.lock, the example's (flax)
    resolved from the index within its declared ranges, pytest pinned as in uv.lock; then the
    example's tests run against the installed wheels (no workspace source on sys.path).
    Like the matrix, on every Python of PYTHONS this machine has.
    """
    wheels = Path(session.create_tmp()).resolve() / "downstream-wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    for folder in (ROOT / "packages" / "core", DOWNSTREAM):
        session.run(
            "uv", "build", "--wheel", "--no-sources", "--quiet", str(folder),
            "--out-dir", str(wheels), external=True,
        )  # fmt: skip
    constraints = wheels / "core-locked.txt"
    session.run(
        "uv", "export", "--frozen", "--package", CORE, "--extra", "jax", "--no-hashes",
        "--no-emit-workspace", "--no-header", "--quiet", "--output-file", str(constraints),
        external=True,
    )  # fmt: skip
    tools = nox_matrix.locked_test_tools(ROOT, exclude=[])
    pytest_pin = [t for t in tools if nox_matrix.requirement_names([t]) == ["pytest"]]
    session.run_install(
        "uv", "pip", "install", "--python", _python(session), *NO_BYTECODE,
        "--constraints", str(constraints),
        _wheel_requirement(wheels, CORE, ["jax"]),
        _wheel_requirement(wheels, "pipekit-train-flax", []),
        *pytest_pin, external=True,
    )  # fmt: skip
    site = session.run(
        "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", silent=True
    )
    session.run("python", "-c", _FROM_THE_WHEELS, str(site).strip())
    session.run(
        "pytest", str(DOWNSTREAM / "tests"), "-p", "no:cacheprovider", *session.posargs,
        env=_test_env(session),
    )  # fmt: skip
