"""``acpgen conduct``'s command line: the chain's components split at ``--``."""

from __future__ import annotations

import pytest
from acpgen.cli import main
from acpgen.cli.conduct import split_chain
from click.testing import CliRunner


def test_the_groups_between_separators_are_the_components_the_last_the_agent() -> None:
    assert split_chain(["p1", "-x", "--", "p2", "--", "agent", "--acp"]) == [["p1", "-x"], ["p2"], ["agent", "--acp"]]
    assert split_chain(["--", "agent"]) == [["agent"]]
    assert split_chain(["agent"]) == [["agent"]]


@pytest.mark.parametrize("words", [["p1", "--", "--", "agent"], ["p1", "--"]])
def test_an_empty_component_is_a_usage_error(words: list[str]) -> None:
    result = CliRunner().invoke(main, ["conduct", "--", *words], prog_name="acpgen")
    assert result.exit_code == 2
    assert "every component of the chain needs a command" in result.output


def test_a_chain_needs_a_command() -> None:
    result = CliRunner().invoke(main, ["conduct"], prog_name="acpgen")
    assert result.exit_code == 2
