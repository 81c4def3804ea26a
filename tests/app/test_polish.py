"""Pilot tests of the polish pass (issue #25): nothing cut at 80x24, pane titles, one
warning colour, honest toasts, key labels and order, the score explained, one skill count."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptools import build_root, new_app, plain, settle, text_of
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from conftest import git, write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.colors import WARNING
from skilldeck.app.dialogs.force_load import ForceLoadDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.screens.updates_screen import UpdatesScreen, tail
from skilldeck.app.widgets.diagnostics_list import SEVERITY_STYLE
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.tools_table import ToolsTable
from skilldeck.cli.main import main as cli_main
from skilldeck.core.install import candidates, fetched, install, read_lock
from skilldeck.core.model import Severity
from skilldeck.core.tools import ToolAvailability
from skilldeck.core.tools.model import ToolStatus

SMALL = (80, 24)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path / "skills")


def header(app: SkilldeckApp) -> str:
    return text_of(app.screen.query_one("#frontmatter", Static))


def footer(app: SkilldeckApp) -> list[tuple[str, str]]:
    """(key shown, label) of each footer entry, left to right."""
    keys = sorted(app.screen.query(FooterKey), key=lambda k: k.region.x)
    return [(k.key_display, k.description) for k in keys]


async def wait_for_toast(pilot: Pilot[int], count: int) -> list[str]:
    """Wait (at most about 5 s) until ``count`` notifications were shown; their texts."""
    app = pilot.app
    for _ in range(100):
        if len(app._notifications) >= count:
            break
        await pilot.pause(0.05)
    return [n.message for n in app._notifications]


# ----------------------------------------------------------------- 1. nothing cut at 80x24


def fits(widget: Input) -> bool:
    return cell_len(widget.placeholder) <= widget.content_region.width


async def test_small_screen_placeholders_and_review_header_keep_whole_words(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        search = app.screen.query_one("#search", Input)
        assert fits(search) and "F1 help" in search.placeholder
        assert search.render_line(0).text.strip() == search.placeholder
        await pilot.press("f4")
        await settle(pilot)
        filters = app.screen.query_one("#review-filters", Static)
        line = plain(filters.content)
        assert cell_len(line) <= filters.content_region.width
        assert line.endswith(("grouped by rule", "open at line")), line
        await pilot.press("escape", "f5")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        tool = app.screen.query_one("#tool", Input)
        assert fits(tool) and tool.placeholder.startswith("tool")
    wide = new_app([root])
    async with wide.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert wide.screen.query_one("#search", Input).placeholder.startswith("Search skills")


async def test_small_screen_tools_table_ends_long_names_with_an_ellipsis(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "3")
        await settle(pilot)
        table = app.screen.query_one(ToolsTable)
        entries = [
            ToolStatus("Read", False, "available", "preset"),
            ToolStatus("mcp__github_enterprise__create_pull_request", True, "available", "mcp:gh"),
            ToolStatus("Fetch", True, "available", "mcp:github-enterprise-server-eu"),
        ]
        table.show(ToolAvailability(entries=entries))
        await settle(pilot)
        columns = list(table.columns.values())
        used = sum(c.get_render_width(table) for c in columns)
        assert used <= table.scrollable_content_region.width
        assert [str(c.label) for c in columns] == ["Tool", "Status", "Required", "Source"]
        cells = [plain(cell) for cell in table.get_row_at(1)]
        assert cells[0].endswith("…") and cells[0].startswith("mcp__")
        assert plain(table.get_row_at(2)[3]).endswith("…")
        assert plain(table.get_row_at(0)[3]) == "preset"


@pytest.fixture
def locked(tmp_path: Path) -> Path:
    """Two skills installed from a git repository into a deep project folder."""
    repo = tmp_path / "upstream"
    for name in ("alpha", "a-skill-with-a-rather-long-name"):
        (repo / name).mkdir(parents=True)
        (repo / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Formats tables. Use when asked to.\n---\n# T\n",
            encoding="utf-8",
        )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    root = tmp_path / "a-rather-long-project-folder-name" / "nested" / ".agents" / "skills"
    lock = read_lock(root)
    with fetched(repo.as_uri(), "") as fetch:
        for c in candidates(fetch, lock):
            install(lock, c, repo.as_uri(), "", fetch.commit or "")
    return root


async def test_small_screen_updates_paths_and_pane_titles(locked: Path, root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = UpdatesScreen(app.workspace, roots=[locked])
        await app.push_screen(screen)
        await settle(pilot)
        assert screen.query_one("#diff-scroll").border_title == "Diff"
        assert screen.query_one("#findings-scroll").border_title == "Findings"
        shot = app.export_screenshot()
        assert "Diff" in shot and "Findings" in shot
        listing = screen.query_one("#update-list")
        width = listing.scrollable_content_region.width
        lines = [listing.render_line(y).text.strip() for y in range(4)]
        assert lines[0].startswith("a-skill-with-") and lines[0].endswith("…  ok")
        assert lines[2].startswith("alpha") and lines[2].endswith("ok")
        for path in (lines[1], lines[3]):
            assert path.startswith("…/") and path.endswith("/.agents/skills")
        assert all(cell_len(line) <= width for line in lines)


def test_tail_cuts_paths_at_a_folder() -> None:
    assert tail("/short/skills", 20) == "/short/skills"
    assert tail("/home/someone/projects/website/.claude/skills", 24) == "…/website/.claude/skills"
    assert cell_len(tail("/x/" + "y" * 40, 12)) <= 12


# ----------------------------------------------------------------- 3. one warning colour


async def test_warnings_are_the_theme_orange_everywhere(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme_variables["warning"].lower() == WARNING.lower()  # badges, toasts
        assert WARNING in SEVERITY_STYLE[Severity.WARNING]  # diagnostics
        await pilot.press("f4")
        await settle(pilot)
        counts = app.screen.query_one("#review-counts", Static).content
        spans = [s for s in counts.spans if "▲" in counts.plain[s.start : s.end]]  # type: ignore[union-attr]
        assert spans and all(WARNING in str(s.style) for s in spans)
    package = Path(SkilldeckApp.__module__.replace(".", "/")).parent
    sources = Path(__file__).resolve().parents[2] / "tui" / package
    for path in sources.rglob("*.py"):
        assert "yellow" not in path.read_text(encoding="utf-8"), path  # terminal yellow


# ----------------------------------------------------------------- 4. honest toasts


async def test_screenshot_toasts_say_where_or_why_without_markup(
    root: Path, tmp_path: Path
) -> None:
    app = new_app([root])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.deliver_screenshot("shot.svg", str(tmp_path / "no" / "such" / "folder"))
        failed = (await wait_for_toast(pilot, 1))[-1]
        assert failed.startswith("Could not save the screenshot: ")
        assert "No such file or directory" in failed and "[" not in failed
        app.deliver_screenshot("shot.svg", str(tmp_path))
        saved = (await wait_for_toast(pilot, 2))[-1]
        assert saved.startswith("Saved the screenshot to ") and saved.endswith("shot.svg.")
        assert "[" not in saved and (tmp_path / "shot.svg").is_file()
        await pilot.press("ctrl+c")
        hint = (await wait_for_toast(pilot, 3))[-1]
        assert hint == "Press ctrl+q to quit Skilldeck."
        assert len(app._notifications) == 3  # Textual's own markup toasts were not shown


# ----------------------------------------------------------------- 5. broken YAML


async def test_broken_yaml_skill_says_invalid_not_enabled(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"broken", "down")
        await settle(pilot)
        text = header(app)
        assert "invalid" in text and "enabled" not in text
        await pilot.press("/", "ctrl+u", *"pdf-forms", "down")
        await settle(pilot)
        assert "enabled" in header(app) and "invalid" not in header(app)


# ----------------------------------------------------------------- 6. review badges


def badge(counts: str, glyph: str) -> int:
    match = re.search(rf"{glyph} (\d+)", counts)
    assert match, counts
    return int(match.group(1))


async def test_review_badges_count_what_the_filters_show(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)

        def check() -> None:
            counts = text_of(screen.query_one("#review-counts", Static))
            shown = [d.severity for _s, d in screen._visible()]
            assert badge(counts, "✖") == shown.count(Severity.ERROR)
            assert badge(counts, "▲") == shown.count(Severity.WARNING)
            assert counts.startswith(f"{len(shown)} finding")

        check()
        await pilot.press("2")  # warnings off
        await settle(pilot)
        check()
        assert badge(text_of(screen.query_one("#review-counts", Static)), "▲") == 0
        await pilot.press("2", "slash", *"SL10")  # warnings back, one code
        await settle(pilot)
        check()
        counts = text_of(screen.query_one("#review-counts", Static))
        assert badge(counts, "✖") == 0 and badge(counts, "▲") == 1


# ----------------------------------------------------------------- 7. enter on a finding


async def test_enter_on_a_finding_keeps_the_search_text(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "f4")
        await settle(pilot)
        await pilot.press("slash", *"SL103", "enter", "enter")  # the vague skill's link
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.screen.query_one("#search", Input).value == "pdf"
        preview = app.screen.query_one(PreviewPane)
        assert preview.skill is not None and preview.skill.name == "vague" and preview.raw
        assert app.screen.query_one(ResultsList).current == preview.skill


async def test_enter_on_a_diagnostic_keeps_the_search_text(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"vague", "down", "2", "tab", "enter")
        await settle(pilot)
        assert app.screen.query_one("#search", Input).value == "vague"
        assert app.screen.query_one(PreviewPane).raw


# ----------------------------------------------------------------- 8. force-load arguments


async def test_force_load_keeps_arguments_when_tab_leaves_and_comes_back(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "f6")
        await settle(pilot)
        assert isinstance(app.screen, ForceLoadDialog)
        await pilot.press(*"a.pdf", "tab", "shift+tab", *" b.pdf", "tab")
        await settle(pilot)
        assert app.screen.query_one("#arguments", Input).value == "a.pdf b.pdf"
        assert app.screen.result is not None and app.screen.result.arguments == "a.pdf b.pdf"


# ----------------------------------------------------------------- 9, 10. the footer


async def test_footer_lists_f_keys_in_order_and_fits_80_columns(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        keys = [k for k, _label in footer(app)]
        assert keys == ["f2", "f3", "f4", "f5", "f6", "f7", "f8", "^q"]
        await pilot.press("f2")
        await settle(pilot)
        assert footer(app)[0] == ("f2", "Rendered")
        last = max(app.screen.query(FooterKey), key=lambda k: k.region.right)
        assert last.region.right <= SMALL[0] and last.description == "Quit"
        await pilot.press("f1")  # not listed here, still works
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
    wide = new_app([root])
    async with wide.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        keys = [k for k, _label in footer(wide)]
        assert keys == ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "^q"]


async def test_raw_key_is_labelled_with_the_view_it_switches_to(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        preview = app.screen.query_one(PreviewPane)
        assert ("f2", "Raw") in footer(app)
        await pilot.press("down", "f2")
        await settle(pilot)
        assert preview.raw and ("f2", "Rendered") in footer(app)
        await pilot.press("tab")  # into the raw source: the letter key shows
        await settle(pilot)
        assert ("r", "Rendered") in footer(app)
        await pilot.press("r")
        await settle(pilot)
        assert not preview.raw and ("r", "Raw") in footer(app)
        await pilot.press("r", "r")  # at full speed: raw, then rendered again
        await settle(pilot)
        assert not preview.raw and ("r", "Raw") in footer(app)


# ----------------------------------------------------------------- 11. explain


async def test_explain_adds_the_weighted_signals_up_to_the_score(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"fill pdf form", "down", "f3")
        await settle(pilot)
        text = text_of(app.screen.query_one("#explain-text", Static))
        assert "how the score adds up" in text
        points = [
            float(m.group(1))
            for m in re.finditer(
                r"^(?:bm25|coverage|name)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", text, re.M
            )
        ]
        assert len(points) == 3
        mean = re.search(r"weighted mean\s+([\d.]+)", text)
        score = re.search(r"calibrated score\s+([\d.]+)", text)
        assert mean and score
        assert abs(sum(points) - float(mean.group(1))) < 0.002
        assert f"score {score.group(1)}" in text  # the same score as the headline


# ----------------------------------------------------------------- 12. one skill count


async def test_skill_count_matches_skilldeck_list(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = tmp_path / "later"
    write_skill(later, "pdf-forms", description="A copy that wins. Use when testing shadows.")
    assert cli_main(["--root", str(root), "--root", str(later), "list"]) == 0
    listed = re.search(r"^(\d+) skill\(s\)", capsys.readouterr().out, re.M)
    assert listed
    app = new_app([root, later])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        status = text_of(app.screen.query_one("#status", Static))
        assert status.startswith(f"{listed.group(1)} skills (+")
        assert "1 shadowed" in status and "1 invalid" in status
        assert len(app.screen.query_one(ResultsList).hits) == int(listed.group(1)) + 2
    small = new_app([root, later])
    async with small.run_test(size=SMALL) as pilot:
        await settle(pilot)
        line = small.screen.query_one("#status", Static)
        shown = line.render_line(0).text.strip()
        assert shown == f"{listed.group(1)} skills (+2 not usable)"  # no room for reasons, time


# ----------------------------------------------------------------- preview: inputs, examples


async def test_preview_shows_parameters_and_examples(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "csv-report",
        description="Builds a CSV report. Use when asked for a report.",
        extra="parameters:\n  - name: month\n    type: string\n    required: true\n"
        "    description: Which month\n  - name: rows\n    type: integer\n    default: 50\n"
        "examples:\n  - request: Report for May\n    does: Builds may.csv\n",
    )
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        text = header(app)
        assert "month string required  Which month" in text
        assert "rows integer = 50" in text
        assert "“Report for May” → Builds may.csv" in text
