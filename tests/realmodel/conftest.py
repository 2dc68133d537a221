"""The real-model fixtures (see llama_support.py), and the closing notes the tests leave."""

from tests.realmodel.llama_support import CLOSING_NOTES, llama_server, llama_tools_server  # noqa: F401  (fixtures, used by name)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """The closing notes (llama_support.closing_note), when a test left any."""
    if CLOSING_NOTES:
        terminalreporter.section("real-model notes")
        for line in CLOSING_NOTES:
            terminalreporter.write_line(line)
