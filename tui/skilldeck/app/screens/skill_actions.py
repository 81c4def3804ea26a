"""What the main screen does with the highlighted skill after asking in a dialog.

Force-loading it into a session, enabling or disabling it in the governance registry,
and approving or denying one of its toolset modules: each opens a dialog, and the write
the operator confirms runs in a thread worker that reports back with a notification.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.screen import Screen

from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import short_path
from skilldeck.app.widgets.toolset_table import ToolsetTable
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.workspace import SessionRef

if TYPE_CHECKING:
    from skilldeck.core.model import Skill
    from skilldeck.core.workspace import Workspace


class SkillActions(UsesDeck, Screen[None]):
    """Base of :class:`~skilldeck.app.screens.main_screen.MainScreen`: the skill actions
    that ask first and then write (the main screen binds their keys)."""

    workspace: Workspace
    """The skills shown."""

    @property
    def current(self) -> Skill | None:
        """The highlighted skill (the main screen's results list knows which)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- force-load

    def action_force_load(self) -> None:
        """Open the force-load dialog for the highlighted skill."""
        from skilldeck.app.dialogs.force_load import ForceLoadDialog, ForceLoadOutcome

        skill = self.current
        if skill is None:
            return

        def done(outcome: ForceLoadOutcome | None) -> None:
            if outcome is not None:
                self.deck.after_store_change()
                self.notify(
                    f"{outcome.skill} force-loaded into session {outcome.session_id} "
                    f"({outcome.tokens} tokens)",
                    title="Force-load",
                )

        self.app.push_screen(ForceLoadDialog(skill), done)

    # ----------------------------------------------------------------- registry

    def action_toggle_enabled(self) -> None:
        """Enable or disable the highlighted skill in the governance registry."""
        from skilldeck.app.dialogs.confirm import ConfirmDialog

        skill = self.current
        if skill is None:
            return
        verb = "Disable" if skill.enabled else "Enable"
        registry = self.deck.settings.registry_file
        question = (
            f"{verb} skill '{skill.name}'?\n\n"
            f"This writes the governance registry\n{short_path(registry)}\n"
            "and never touches the SKILL.md. Disabled skills stay visible here "
            "but are not listed to models."
        )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._set_enabled(skill, not skill.enabled)

        self.app.push_screen(ConfirmDialog(question, confirm=verb, title=f"{verb} skill"), done)

    @work(thread=True, exclusive=True, group="registry", exit_on_error=False)
    def _set_enabled(self, skill: Skill, enabled: bool) -> None:
        from skilldeck.core.registry import set_enabled

        try:
            set_enabled(
                self.deck.settings.registry_file, skill.name, enabled, skill.default_enabled
            )
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"registry not written: {exc}", severity="error")
            return
        for same in self.workspace.catalog.skills:
            if same.name == skill.name:
                same.enabled = enabled
        self.app.call_from_thread(self._enabled_changed, skill, enabled)

    def _enabled_changed(self, skill: Skill, enabled: bool) -> None:
        self.notify(
            f"{skill.name} {'enabled' if enabled else 'disabled'} in the registry",
            title="Governance",
        )
        self.deck.bump()

    # ----------------------------------------------------------------- toolsets

    @on(ToolsetTable.Review)
    def _review_toolset(self, event: ToolsetTable.Review) -> None:
        from skilldeck.app.dialogs.request_review import RequestReviewDialog
        from skilldeck.core.execution import parse_file_request

        request = parse_file_request(event.status.approval)
        if request is None:
            self.notify(event.status.error or "module not readable", severity="error")
            return
        session_id = self.deck.session_id
        if session_id is None:
            self.notify(
                "No session in use: pick one in Sessions (s) to approve a toolset for it.",
                severity="warning",
            )
            return

        def done(verdict: str | None) -> None:
            if verdict in ("approve", "deny"):
                self._decide_toolset(session_id, verdict, request.entry)

        self.app.push_screen(RequestReviewDialog(request, session_id), done)

    @work(thread=True, group="toolset-decision", exit_on_error=False)
    def _decide_toolset(self, session_id: str, verdict: str, entry: str) -> None:
        door, here = self.deck.workspace.actions, SessionRef(self.deck.store, session_id)
        try:
            if verdict == "approve":
                door.approve(entry, actor="operator", session=here)
            else:
                door.deny(entry, actor="operator", session=here)
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        done = "Approved" if verdict == "approve" else "Denied"
        self.app.call_from_thread(self.notify, f"{done} {entry}", timeout=3)
        self.app.call_from_thread(self.deck.after_store_change)
