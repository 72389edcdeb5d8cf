"""`pipekit-train --help` is plain text with one example per command, and `--version` prints
every installed pipekit distribution with its version."""

from __future__ import annotations

from importlib import metadata

import pytest
from _core_helpers import run_module_cli

COMMANDS = ("run", "backends", "inspect")


def test_top_level_help_is_plain_text_with_an_example_per_command() -> None:
    result = run_module_cli("--help")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "``" not in out and ":func:" not in out
    for command in COMMANDS:
        examples = [ln for ln in out.splitlines() if ln.strip().startswith("pipekit-train ")]
        assert sum(ln.split()[1] == command for ln in examples) == 1, out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_help_shows_one_example(command: str) -> None:
    result = run_module_cli(command, "--help")
    assert result.returncode == 0, result.stderr
    assert "``" not in result.stdout
    examples = [ln for ln in result.stdout.splitlines() if ln.strip().startswith("pipekit-train ")]
    assert len(examples) == 1 and examples[0].split()[1] == command, result.stdout


def test_version_lists_every_installed_pipekit_distribution() -> None:
    result = run_module_cli("--version")
    assert result.returncode == 0, result.stderr
    printed = dict(line.split() for line in result.stdout.splitlines())
    expected = {
        d.metadata["Name"]: d.version
        for d in metadata.distributions()
        if (d.metadata["Name"] or "").startswith("pipekit-train")
    }
    if not expected:
        pytest.skip("no pipekit distribution installed (running from a source tree)")
    assert printed == expected
