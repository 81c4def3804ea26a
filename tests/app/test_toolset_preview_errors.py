"""A toolset module the parser cannot read shows an error row in the tools pane: the TUI
stays up (a Pilot test with a real skill folder)."""

from __future__ import annotations

from pathlib import Path

from apptools import main_screen, new_app, ready, showing, wait_for

from conftest import write_skill
from skilldeck.app.widgets.toolset_table import ToolsetTable

DEEP_MODULE = (
    "x = "
    + "+".join(["1"] * 200_000)
    + "\n\nclass HelloToolset:\n    def greet(self, name: str) -> str:\n        return name\n"
)
"""A toolset module with a 200,000-term expression: too deep for Python's parser."""


async def test_a_module_too_deep_to_parse_is_an_error_row(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "hello",
        description="Greets people. Use when testing toolsets.",
        extra='toolsets: ["toolsets/index:HelloToolset"]\n',
    )
    (root / "hello" / "toolsets").mkdir()
    (root / "hello" / "toolsets" / "index.py").write_text(DEEP_MODULE, encoding="utf-8")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"hello", "down", "3")
        await showing(pilot, "hello")
        table = main_screen(app).query_one(ToolsetTable)

        def error_row_shown() -> bool:
            return table.row_count == 1 and [s.state for s in table.statuses] == ["error"]

        await wait_for(pilot, error_row_shown, what="one error row in the toolset table")
        assert table.display and app.is_running
        assert table.statuses[0].error.startswith("toolsets/index.py is nested too deeply")
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[1] == "error" and "nested too deeply" in cells[2]
