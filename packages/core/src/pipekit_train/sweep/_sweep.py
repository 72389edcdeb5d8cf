"""``Sweep``: many configurations of one loop, each a normal run, searched by Optuna.

Every trial is the base loop config with the trial's values set at their dotted paths,
run by ``TrainingLoop.run()`` in its own run folder ``<folder>/trials/<number>`` (its
``checkpoint_dir``, its writers' logs). The study lives in Optuna's RDB storage (SQLite
``<folder>/study.db`` unless ``storage`` names another SQLAlchemy URL) and the budget in
the slot table beside it (``_claims``), so a killed sweep started again goes on where it
stopped: a trial left unfinished is run again with the same params in the same folder,
resuming from its checkpoint, and new trials are suggested by a sampler re-created for
every suggestion from the sweep's seed, the trial number and the parameter's index — a
function of the stored history alone, not of the process that asks.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._compile_cache_default import runs_on_jax
from ..errors import ConfigError, PipekitError, TrainingError
from ._claims import Claims, Slot
from ._optuna import check_names, import_optuna, make_pruner, make_sampler, open_storage, spec_of
from ._pruning import PRUNED_ATTR, ReportToMembers, ReportToTrial
from ._space import Param, apply_params, parse_space

__all__ = ["Sweep", "INJECTABLE", "SLOT_ATTR", "METRICS_ATTR"]

#: Hyper-parameters a population (``population=N``) may vary: injectable at run time.
INJECTABLE = (
    "seed",
    "optimizer_config.lr",
    "optimizer_config.weight_decay",
    "optimizer_config.b1",
    "optimizer_config.b2",
)
SLOT_ATTR = "pipekit_slot"
METRICS_ATTR = "final_metrics"
_DIRECTIONS = ("maximize", "minimize")
_LOCATION_KEY = {"jsonl": "path", "csv": "path", "tensorboard": "path"}


def _local_writer(spec: Any) -> Any:
    """The loop's ``metric_writer`` without file locations: each trial logs in its folder."""
    if spec is None:
        return "jsonl"
    if isinstance(spec, list):
        return [_local_writer(s) for s in spec]
    if isinstance(spec, str):
        kind, sep, _ = spec.partition(":")
        return kind if sep and kind in _LOCATION_KEY else spec
    if isinstance(spec, Mapping) and spec.get("kind") in _LOCATION_KEY:
        return {k: v for k, v in spec.items() if k != _LOCATION_KEY[str(spec["kind"])]}
    return spec


def _seed(seed: int, number: int, index: int) -> int:
    return (seed * 1_000_003 + number * 1_009 + index) % (2**32)


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"sweep {name} must be a positive integer, got {value!r}", field=name)
    return value


@dataclass(kw_only=True)
class Sweep:
    """A search over ``space`` of the loop config ``loop``, run with ``run()``.

    Args:
        loop: the base loop, as its YAML-form mapping or a ``TrainingLoop`` (whose
            objects must be ``'module:factory'`` references, as for ``to_yaml``).
        space: ``{dotted path: distribution}`` (see ``pipekit_train.sweep``).
        objective: the metric of ``backend_info["final_metrics"]`` to optimise, also
            fed to the pruner at host events (``val_*`` after evaluations).
        direction: ``"maximize"`` or ``"minimize"``.
        n_trials: the budget, counted in the storage over every process sharing it.
        timeout: seconds after which this process starts no new trial (``None``: none).
        sampler / pruner: Optuna class names, or ``{name, kwargs}``; ``pruner=None``: none.
        storage: a SQLAlchemy URL; ``None``: SQLite ``<folder>/study.db``.
        folder: the sweep folder (trial run folders, best config, plots).
        seed: seeds every suggestion (with the trial number).
        population: Equinox only: run this many trials at once as one vmapped program.
        search_path: folders the loop's ``'module:factory'`` references resolve from.
        grace_s: a trial whose process has sent no heartbeat for this long (another
            host's, or one whose death cannot be seen) is run again by another process.
        compilation_cache: the JAX persistent compilation cache folder given to every
            trial on a JAX backend (``pipekit-train sweep`` sets it as ``run`` does), so
            trials of one shape compile once; not part of the trials' configs.
    """

    loop: Any
    space: Any
    objective: str
    direction: str = "maximize"
    n_trials: int = 10
    timeout: float | None = None
    sampler: Any = "TPESampler"
    pruner: Any = "MedianPruner"
    storage: str | None = None
    folder: str | os.PathLike[str] = "runs/sweep"
    seed: int = 0
    population: int | None = None
    population_rule: bool = True
    study_name: str = "sweep"
    search_path: tuple[str, ...] = ()
    grace_s: float = 600.0
    compilation_cache: str | None = None
    params: tuple[Param, ...] = field(init=False, repr=False)
    #: Set by ``run()``: whether a trial was stopped by a signal (left to resume).
    interrupted: bool = field(init=False, default=False)
    #: Set by ``run()`` when ``population`` is given: the rule's verdict (``pays``, ``reason``).
    population_choice: Any = field(init=False, default=None, repr=False)
    _populating: bool = field(init=False, default=False, repr=False)

    def __post_init__(self) -> None:
        from ..config import _field_names, loop_from_dict

        if hasattr(self.loop, "to_dict") and not isinstance(self.loop, Mapping):
            self.loop = self.loop.to_dict()
        if not isinstance(self.loop, Mapping):
            raise ConfigError(
                "sweep loop must be a loop config mapping or a TrainingLoop", field="loop"
            )
        self.loop = copy.deepcopy(dict(self.loop))
        self.params = parse_space(self.space, _field_names())
        if not isinstance(self.objective, str) or not self.objective:
            raise ConfigError(
                "sweep objective must be a metric name such as 'val_accuracy' or 'loss'",
                field="objective",
            )
        if self.direction not in _DIRECTIONS:
            raise ConfigError(
                f"sweep direction must be 'maximize' or 'minimize', got {self.direction!r}",
                field="direction",
            )
        _positive_int(self.n_trials, "n_trials")
        if self.timeout is not None and (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or self.timeout <= 0
        ):
            raise ConfigError(
                f"sweep timeout must be a positive number of seconds or null, got {self.timeout!r}",
                field="timeout",
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError(f"sweep seed must be an integer, got {self.seed!r}", field="seed")
        self._sampler = spec_of(self.sampler, "sampler") or ("TPESampler", {})
        self._pruner = spec_of(self.pruner, "pruner")
        self.folder = Path(self.folder)
        if self.population is not None:
            self._check_population()
        # Every path must make a valid loop: build one at the low end of the space.
        sample = {p.path: p.sample_value() for p in self.params}
        try:
            loop_from_dict(self.trial_config(0, sample), self.search_path)
        except ConfigError as exc:
            raise ConfigError(
                f"sweep loop with the space's values: {exc}", field=exc.field
            ) from exc

    def _check_population(self) -> None:
        _positive_int(self.population, "population")
        if not isinstance(self.population_rule, bool):
            raise ConfigError(
                "sweep population_rule must be true (the documented rule may run the trials "
                f"one by one where a population does not pay) or false, got "
                f"{self.population_rule!r}",
                field="population_rule",
            )
        backend = self.loop.get("backend", "equinox")
        if backend != "equinox":
            raise ConfigError(
                f"sweep population runs trials as one vmapped Equinox program; the loop's "
                f"backend is {backend!r}: drop population, or sweep an equinox loop",
                field="population",
            )
        for p in self.params:
            if p.path not in INJECTABLE:
                raise ConfigError(
                    f"sweep population: space.{p.path} is not a hyper-parameter injectable at "
                    f"run time (a population may vary only {', '.join(INJECTABLE)}); drop "
                    "population to sweep it trial by trial",
                    field=f"space.{p.path}",
                )

    # -- paths -------------------------------------------------------------------------------
    @property
    def storage_url(self) -> str:
        return self.storage or f"sqlite:///{Path(self.folder) / 'study.db'}"

    def trial_dir(self, number: int) -> Path:
        return Path(self.folder) / "trials" / str(number)

    # -- running ------------------------------------------------------------------------------
    def open_study(self) -> Any:
        """The Optuna study (created on first use), after checking sampler and pruner names."""
        optuna = import_optuna()
        check_names(self._sampler, self._pruner)
        Path(self.folder).mkdir(parents=True, exist_ok=True)
        (Path(self.folder) / "sweep.json").write_text(
            json.dumps(
                {
                    "storage": self.storage_url,
                    "study_name": self.study_name,
                    "objective": self.objective,
                    "direction": self.direction,
                },
                indent=2,
            )
        )
        storage = open_storage(self.storage_url)
        for attempt in range(5):  # two processes creating the study at once
            try:
                return optuna.create_study(
                    storage=storage,
                    study_name=self.study_name,
                    direction=self.direction,
                    load_if_exists=True,
                    sampler=make_sampler(self._sampler, self.seed),
                    pruner=make_pruner(self._pruner),
                )
            except optuna.exceptions.DuplicatedStudyError:
                if attempt == 4:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")

    def run(self) -> Any:
        """Run (or resume) the sweep until the budget is spent; return the Optuna study."""
        study = self.open_study()
        self.interrupted = False
        self._populating = self.population is not None and self._population_pays()
        claims = Claims(self.storage_url, self.study_name, grace_s=self.grace_s)
        start = time.monotonic()
        try:
            while True:
                group = claims.adopt()  # a dead process's trial, or its whole population
                if not group:
                    if self.timeout is not None and time.monotonic() - start > self.timeout:
                        break
                    group = self._take(claims)
                    if not group:
                        break
                if group[0].group is not None:
                    stopped = self._run_population(study, claims, group)
                else:
                    stopped = self._run_slot(study, claims, group[0])
                if stopped:
                    self.interrupted = True
                    break
        finally:
            claims.close()
        self.write_best(study)
        return study

    def _population_pays(self) -> bool:
        """Whether to run ``population`` trials at once: the Equinox rule's verdict
        (``population_pays``: parameters x rows per step, the platform), unless
        ``population_rule`` is false. Deterministic, so a resumed sweep decides the same."""
        assert self.population is not None
        pays = _equinox_population("population_pays")
        loop = self._loop(self.trial_config(0, {})).resolved()
        self.population_choice = pays(loop, self.population)
        return bool(self.population_choice.pays) or not self.population_rule

    def _take(self, claims: Claims) -> list[Slot]:
        if not self._populating:
            one = claims.take_free(self.n_trials)
            return [one] if one is not None else []
        assert self.population is not None
        return claims.take_group(self.n_trials, self.population)

    def _trial_id(self, study: Any, claims: Claims, slot: Slot) -> tuple[int, int]:
        """The trial of ``slot`` (made now if it has none): ``(trial_id, number)``."""
        optuna = import_optuna()
        storage, sid = study._storage, study._study_id
        if slot.trial_number is not None:
            tid = storage.get_trial_id_from_study_id_trial_number(sid, slot.trial_number)
            return tid, slot.trial_number
        # A process killed between making the trial and recording it left it marked.
        for t in study.get_trials(deepcopy=False):
            if t.user_attrs.get(SLOT_ATTR) == slot.index:
                claims.set_trial(slot.index, t.number)
                return t._trial_id, t.number
        template = optuna.trial.create_trial(
            state=optuna.trial.TrialState.WAITING, user_attrs={SLOT_ATTR: slot.index}
        )
        tid = storage.create_new_trial(sid, template_trial=template)
        number = storage.get_trial_number_from_id(tid)
        claims.set_trial(slot.index, number)
        return tid, number

    def _suggest(self, study: Any, trial_id: int, number: int) -> tuple[Any, dict[str, Any]]:
        """The trial's params, each from a sampler seeded by (seed, number, index)."""
        optuna = import_optuna()
        storage = study._storage
        if storage.get_trial(trial_id).state == optuna.trial.TrialState.WAITING:
            storage.set_trial_state_values(trial_id, optuna.trial.TrialState.RUNNING)
        values: dict[str, Any] = {}
        for i, p in enumerate(self.params):
            study.sampler = make_sampler(self._sampler, _seed(self.seed, number, i))
            values[p.path] = p.suggest(optuna.trial.Trial(study, trial_id))
        study.sampler = make_sampler(self._sampler, _seed(self.seed, number, len(self.params)))
        return optuna.trial.Trial(study, trial_id), values

    def trial_config(self, number: int, values: Mapping[str, Any]) -> dict[str, Any]:
        """The loop config of trial ``number``: the base with ``values``, in its own folder."""
        data = apply_params(self.loop, values)
        data["checkpoint_dir"] = str(self.trial_dir(number))
        data["metric_writer"] = _local_writer(data.get("metric_writer"))
        return data

    def _write_trial_yaml(self, number: int, data: dict[str, Any]) -> None:
        """``trials/<n>/trial.yaml``: the trial's loop, as ``pipekit-train run`` takes it."""
        import yaml

        folder = self.trial_dir(number)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trial.yaml").write_text(yaml.safe_dump(data, sort_keys=False))

    def _loop(self, data: dict[str, Any]) -> Any:
        from ..config import loop_from_dict

        loop = loop_from_dict(data, self.search_path)
        if self.compilation_cache and runs_on_jax(loop.backend):
            loop.backend_options.setdefault("compilation_cache", self.compilation_cache)
        return loop

    def _finished(self, study: Any, claims: Claims, slot: Slot, trial_id: int) -> bool:
        """Settle a trial a killed process left told or pruned; ``True`` when nothing is left."""
        optuna = import_optuna()
        frozen = study._storage.get_trial(trial_id)
        if frozen.state.is_finished():
            claims.finish(slot.index)
            return True
        if PRUNED_ATTR in frozen.user_attrs:
            study.tell(frozen.number, state=optuna.trial.TrialState.PRUNED)
            claims.finish(slot.index)
            return True
        return False

    def _run_slot(self, study: Any, claims: Claims, slot: Slot) -> bool:
        """Run the slot's trial to its end; ``True`` when the run was interrupted (stop)."""

        optuna = import_optuna()
        trial_id, number = self._trial_id(study, claims, slot)
        if self._finished(study, claims, slot, trial_id):
            return False
        trial, values = self._suggest(study, trial_id, number)
        data = self.trial_config(number, values)
        self._write_trial_yaml(number, data)
        loop = self._loop(data)
        loop.callbacks.append(ReportToTrial(trial, self.objective))
        try:
            _, info = loop.run()
        except TrainingError as exc:  # a diverging trial fails; the sweep goes on
            trial.set_user_attr("error", str(exc))
            study.tell(number, state=optuna.trial.TrialState.FAIL)
            claims.finish(slot.index)
            return False
        except BaseException as exc:
            if isinstance(exc, PipekitError):  # the same mistake would fail every trial
                trial.set_user_attr("error", str(exc))
                study.tell(number, state=optuna.trial.TrialState.FAIL)
                claims.finish(slot.index)
            raise
        if info.get("interrupted"):
            return True  # left unfinished: the next start resumes it from its checkpoint
        self._tell(study, claims, slot, trial, number, info.get("final_metrics") or {})
        return False

    def _tell(
        self,
        study: Any,
        claims: Claims,
        slot: Slot,
        trial: Any,
        number: int,
        metrics: Mapping[str, Any],
    ) -> None:
        optuna = import_optuna()
        metrics = {k: float(v) for k, v in metrics.items()}
        trial.set_user_attr(METRICS_ATTR, metrics)
        if PRUNED_ATTR in study._storage.get_trial(trial._trial_id).user_attrs:
            study.tell(number, state=optuna.trial.TrialState.PRUNED)
        elif self.objective not in metrics:
            study.tell(number, state=optuna.trial.TrialState.FAIL)
            claims.finish(slot.index)
            raise ConfigError(
                f"sweep objective {self.objective!r} is not among trial {number}'s final "
                f"metrics ({', '.join(sorted(metrics)) or 'none'}); name one of them "
                "(val_* needs a val_dataset)",
                field="objective",
            )
        else:
            study.tell(number, metrics[self.objective])
        claims.finish(slot.index)

    def _run_population(self, study: Any, claims: Claims, slots: Sequence[Slot]) -> bool:
        """Run ``slots`` (a whole group) as one vmapped Equinox population (``run_population``).

        Every member of the group is in the population, also one already finished (pruned,
        or told before a kill): with its stored params, so a resumed population is the one
        its checkpoint holds. A finished member is masked: trained on (the compiled program
        has one member axis), never reported or told again. The pruner is asked for each
        live member at host events (``ReportToMembers``); a pruned member's trial is told
        ``PRUNED`` there and then, and the others go on.
        """
        members: list[dict[str, Any]] = []
        trials: list[tuple[Slot, Any, int]] = []
        for slot in slots:
            trial_id, number = self._trial_id(study, claims, slot)
            if slot.done or self._finished(study, claims, slot, trial_id):
                frozen = study._storage.get_trial(trial_id)
                values = {p.path: frozen.params[p.path] for p in self.params}
                trial = None
            else:
                trial, values = self._suggest(study, trial_id, number)
            members.append(values)
            trials.append((slot, trial, number))
            self._write_trial_yaml(number, self.trial_config(number, values))
        if all(trial is None for _, trial, _ in trials):
            return False
        data = self.trial_config(trials[0][2], {})
        data["checkpoint_dir"] = str(Path(self.folder) / "populations" / str(slots[0].group))
        loop = self._loop(data)

        def pruned(i: int, step: int, metrics: dict[str, float]) -> None:
            slot, trial, number = trials[i]
            trial.set_user_attr(METRICS_ATTR, {k: float(v) for k, v in metrics.items()})
            study.tell(number, state=import_optuna().trial.TrialState.PRUNED)
            claims.finish(slot.index)

        loop.callbacks.append(ReportToMembers([t for _, t, _ in trials], self.objective, pruned))
        run_population = _equinox_population("run_population")
        results = run_population(loop, members)
        if any(info.get("interrupted") for _, info in results):
            return True  # left unfinished: the next start resumes the whole group
        for (slot, trial, number), (_, info) in zip(trials, results, strict=True):
            if trial is None or study._storage.get_trial(trial._trial_id).state.is_finished():
                continue  # finished before this run, or pruned in it
            self._tell(study, claims, slot, trial, number, info.get("final_metrics") or {})
        return False

    # -- results ------------------------------------------------------------------------------
    def write_best(self, study: Any) -> Path | None:
        """Write ``<folder>/best.yaml``: the best trial's loop, ready for ``pipekit-train run``."""
        return write_best(study, Path(self.folder))


def _equinox_population(name: str) -> Any:
    """The Equinox backend's population function ``name`` (resolved lazily: core imports no
    backend); a missing backend, or one without populations, is a ``ConfigError``."""
    import pkgutil

    try:
        return pkgutil.resolve_name(f"pipekit_train.adapters.equinox:{name}")
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            "sweep population needs pipekit_train.adapters.equinox.run_population "
            "(pip install 'pipekit-train-equinox', a version with populations); or drop "
            "population to run the trials one by one",
            field="population",
        ) from exc


def write_best(study: Any, folder: Path) -> Path | None:
    """The best complete trial's ``trial.yaml`` as ``folder/best.yaml`` (a fresh run folder)."""
    import yaml

    try:
        best = study.best_trial
    except ValueError:  # no complete trial yet
        return None
    source = folder / "trials" / str(best.number) / "trial.yaml"
    if not source.is_file():
        return None
    data = yaml.safe_load(source.read_text())
    data["checkpoint_dir"] = str(folder / "best")
    out = folder / "best.yaml"
    head = (
        f"# The best trial ({best.number}) of the sweep in {folder}: "
        f"{study.direction.name.lower()} value {best.value!r}.\n"
        f"# Train it again with: pipekit-train run {out}\n"
    )
    out.write_text(head + yaml.safe_dump(data, sort_keys=False))
    return out
