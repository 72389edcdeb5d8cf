"""The end-of-run report of a Bayesian run, from ``backend_info`` alone: one row per element
of each site (capped per site), every column, the divergences, and one health line that says
the run is fine or lists what is wrong and what to change."""

from __future__ import annotations

from pipekit_train._report import MAX_ELEMENTS_PER_SITE, posterior_report


def _site(mean, **extra):
    return {"mean": mean, "sd": mean, "hdi_low": mean, "hdi_high": mean, **extra}


def _mcmc(**sites):
    return {
        "kind": "mcmc",
        "hdi_prob": 0.94,
        "num_chains": 4,
        "num_draws": 500,
        "divergences": 0,
        "sites": sites,
    }


def test_healthy_sampler_run() -> None:
    stats = {"r_hat": 1.001, "ess_bulk": 1800.0, "ess_tail": 1500.0}
    lines = posterior_report(
        {
            "diagnostics": _mcmc(
                mu=_site(1.5, **stats), v=_site([1.0, 2.0], **{k: [x, x] for k, x in stats.items()})
            ),
            "warnings": [],
        }
    )
    assert lines[0] == "posterior (4 chain(s) × 500 draws; 94% highest-density interval):"
    assert lines[1].split() == [
        "site",
        "mean",
        "sd",
        "hdi_3%",
        "hdi_97%",
        "r_hat",
        "ess_bulk",
        "ess_tail",
    ]
    assert lines[2].split() == ["mu", "1.5", "1.5", "1.5", "1.5", "1.001", "1800", "1500"]
    assert [r.split()[0] for r in lines[3:5]] == ["v[0]", "v[1]"]
    assert "divergences: 0" in lines
    assert lines[-1].startswith("health: OK")


def test_a_backends_own_checks_join_the_ok_line() -> None:
    stats = {"r_hat": 1.001, "ess_bulk": 1800.0, "ess_tail": 1500.0}
    diag = {**_mcmc(mu=_site(1.5, **stats)), "checks": ["unadjusted MCLMC's energy error 2e-4"]}
    (line,) = [x for x in posterior_report({"diagnostics": diag}) if x.startswith("health")]
    assert line.startswith("health: OK — no divergences")
    assert line.endswith("every draw finite, unadjusted MCLMC's energy error 2e-4")


def test_problems_are_listed_with_their_fix() -> None:
    diag = _mcmc(
        w=_site(list(range(25)), r_hat=[1.2] * 25, ess_bulk=[50.0] * 25, ess_tail=[40.0] * 25)
    )
    lines = posterior_report(
        {"diagnostics": diag, "warnings": ["R-hat above 1.01 for w: run longer"]}
    )
    rows = [line for line in lines if line.strip().startswith("w[")]
    assert len(rows) == MAX_ELEMENTS_PER_SITE
    assert any("15 more element(s) not shown" in line for line in lines)
    assert (
        "health: 1 problem(s)" in lines[-2]
        and lines[-1] == "  - R-hat above 1.01 for w: run longer"
    )


def test_variational_report_has_no_sampler_columns() -> None:
    diag = {
        "kind": "variational",
        "hdi_prob": 0.94,
        "num_chains": 1,
        "num_draws": 200,
        "sites": {"b": _site(0.25)},
    }
    lines = posterior_report({"diagnostics": diag, "warnings": [], "final_elbo": -12.5})
    assert lines[0] == "posterior (200 guide draws; 94% highest-density interval):"
    assert lines[1].split() == ["site", "mean", "sd", "hdi_3%", "hdi_97%"]
    assert not any(line.startswith("divergences") for line in lines)
    # Without the fitted-guide checks' figures the line says what was not checked, never OK.
    assert lines[-1].startswith(
        "health: no problems found, but not checked: ELBO convergence (too few logged windows"
    )
    assert "Pareto k-hat (not computed)" in lines[-1] and "(final ELBO -12.5;" in lines[-1]


def test_variational_health_line_is_ok_only_with_both_checks_passed() -> None:
    diag = {
        "kind": "variational",
        "num_chains": 1,
        "num_draws": 200,
        "sites": {"b": _site(0.25)},
        "elbo_convergence": {"checked": True, "moving": False, "improvement": 0.01},
        "importance": {"khat": 0.31, "num_draws": 1000, "narrow": {}},
    }
    info = {"diagnostics": diag, "warnings": [], "final_elbo": -12.5}
    line = posterior_report(info)[-1]
    assert line.startswith("health: OK — final ELBO -12.5 converged")
    assert "Pareto k-hat 0.31 <= 0.7 over 1000 guide draws" in line
    skipped = {**diag, "importance": {"skipped": "a stream: the full data is not in memory"}}
    line = posterior_report({**info, "diagnostics": skipped})[-1]
    assert line.startswith("health: no problems found, but not checked: Pareto k-hat (a stream")
    warned = posterior_report({**info, "warnings": ["Pareto k-hat ... > 0.7"]})
    assert warned[-2].startswith("health: 1 problem(s)")


def test_a_run_without_diagnostics_has_no_report() -> None:
    assert posterior_report({"final_metrics": {"loss": 0.1}}) == []
