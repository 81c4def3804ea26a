"""The MCP server's tools over local and remote skills (federation).

:class:`FederatedService` is the :class:`~skilldeck.mcp.service.SkillService` of
``skilldeck serve``: with no ``remotes`` configured it is that service unchanged; with
remotes it adds their skills (:mod:`skilldeck.core.remote`) to what agents see:

* ``search_skills`` ranks local and remote skills in one index (remote ones by their
  frontmatter: name, description, triggers…), each remote result marked with its remote,
  URI and review state; ``list_skills`` lists them too; both answers carry ``remotes``
  (how each remote answered) and say which were skipped;
* ``load_skill`` and ``read_skill_resource`` of ``label:name`` ask for the skill's current
  entry, refuse one an operator has not approved as it is now (with the remote's
  ``review`` on), and fetch only the file needed (SKILL.md on load), verified against its
  digest; the text says which server the skill came from;
* an offline remote is skipped with a note: local skills are served as before.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from skilldeck.core import loader
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.remote import (
    CombinedSearch,
    Federation,
    Listing,
    RemoteEntry,
    read_approvals,
    review_of,
)
from skilldeck.mcp.answers import search_answer
from skilldeck.mcp.service import SkillService, ToolOutput, content_notes


class FederatedService(SkillService):
    """A :class:`SkillService` that also serves the skills of configured remotes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.federation = Federation(self.settings)
        self.combined = CombinedSearch(self.workspace)

    def _remote_name(self, name: str) -> bool:
        return self.federation.configured and ":" in name

    def _listing(self) -> Listing | None:
        """The remotes' listing (cached per remote), None without remotes or skills off."""
        if not self.federation.configured or not self.settings.skills_v1:
            return None
        return self.federation.listing()

    # ------------------------------------------------------------------ tools

    def search_skills(self, query: str, limit: int = 3) -> ToolOutput:
        """Agent-facing search over local and remote skills."""
        listing = self._listing()
        if listing is None:
            return super().search_skills(query, limit)
        if not listing.documents:
            output = super().search_skills(query, limit)
            return _with_remotes(output, listing)
        if not query.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "query must not be blank")
        response = self.combined.search(listing.documents, query, limit, tools=self._known_tools())
        data, text = search_answer(query, response, len(self.visible) + len(listing.documents))
        approvals = None
        for item in data["results"]:
            entry = listing.entry(item["name"])
            if entry is None:
                continue
            if approvals is None:
                approvals = read_approvals()
            item["remote"] = entry.label
            item["path"] = entry.uri
            item["digest"] = f"remote-sha256:{entry.digest}"
            item["review"] = review_of(entry, approvals).state
        remote = sorted({str(r["remote"]) for r in data["results"] if "remote" in r})
        if remote:
            text += (
                f"\nNames with a label prefix ({', '.join(f'{r}:' for r in remote)}) are skills "
                "of remote catalogs: untrusted content from another server, loadable only "
                "once an operator approved them (see each result's review)."
            )
        return _with_remotes(ToolOutput(data, text), listing)

    def list_skills(self, budget: int | None = None) -> ToolOutput:
        """The tier-1 listing, remote skills included."""
        listing = self._listing()
        if listing is None:
            return super().list_skills(budget)
        if not listing.documents:
            return _with_remotes(super().list_skills(budget), listing)

        chosen = self.settings.prompt_char_budget if budget is None else budget
        skills = [*self.visible, *listing.documents]
        rendered = loader.render_listing(skills, budget=chosen, fmt="xml")
        data = rendered.to_dict()
        data["total"] = len(skills)
        text = rendered.text or "No skills are available."
        return _with_remotes(ToolOutput(data, text), listing)

    def load_skill(
        self, name: str, arguments: str = "", *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Tier 2 of a local skill, or of a remote one (``label:name``: its current entry,
        the review gate, its SKILL.md verified), tagged with its origin."""
        if not self._remote_name(name):
            return super().load_skill(name, arguments, client_key=client_key)

        self._require_skills()
        started = time.perf_counter()
        remote = self.federation.load(name, agent=True)
        skill = remote.skill
        result = loader.load_skill(
            skill,
            arguments,
            token_cap=self.settings.body_token_cap,
            settings=self.settings,
            store=self.workspace.store,
        )
        session_id, problem = self._activate(skill, arguments, client_key)
        loader.record_load(
            skill,
            result,
            (time.perf_counter() - started) * 1000,
            actor="agent",
            telemetry=self.workspace.telemetry,
            session=session_id,
            source="mcp-remote",
        )
        entry = remote.entry
        root = entry.uri.removesuffix("/SKILL.md")
        data = result.to_dict()
        data.update(_remote_facts(entry.label, entry, remote.review.state))
        data["base_dir"] = root
        data["allowed_tools"] = list(skill.allowed_tools)
        data["session"] = session_id
        data["resources"] = list(skill.resources)
        origin = (
            f"[skilldeck] Remote skill {name} from the server labelled {entry.label!r} "
            f"({entry.uri}): untrusted content, not a local skill. SKILL.md was verified "
            "against its digest; read its files with read_skill_resource."
        )
        notes: list[str] = []
        if problem is not None:
            data["session_error"] = problem.to_dict()
            notes.append(f"This load was not recorded in a session ({problem.message}).")
        if remote.review.state != "approved" and remote.skill.frontmatter.get("allowed-tools"):
            notes.append("Its allowed-tools are not granted: it is not approved as it is now.")
        notes.extend(f"Warning: {w}" for w in result.warnings)
        notes.extend(content_notes(skill))
        text = origin + "\n\n" + result.text.replace(str(skill.base_dir), root)
        if notes:
            text = text.rstrip("\n") + "\n\n[skilldeck]\n" + "\n".join(notes)
        data["text"], data["path"] = text, entry.uri
        return ToolOutput(data, text)

    def read_skill_resource(
        self, name: str, path: str, *, client_key: str = "stdio", reason: str | None = None
    ) -> ToolOutput:
        """Tier 3 of a local skill, or of a remote one (a file its current entry lists,
        fetched when first read and verified against its digest)."""
        if not self._remote_name(name):
            return super().read_skill_resource(name, path, client_key=client_key, reason=reason)
        from skilldeck.mcp.resources import check_path

        self._require_skills()
        check_path(path)
        entry, review, blob = self.federation.read(name, path.replace("\\", "/"), agent=True)
        cap = self.settings.resource_byte_cap
        if len(blob) > cap:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"{path} is {len(blob)} bytes, over the {cap}-byte cap on resources",
                reason="too_large",
            )
        item = entry.file(path.replace("\\", "/"))
        uri = item.uri if item is not None else entry.uri
        text = loader.exact_text(blob)
        mime = loader.mime_of(path)
        self.workspace.telemetry.emit(
            "skill_resource_requested",
            name=name,
            resource=path,
            size=len(blob),
            binary=text is None,
            ok=True,
            actor="agent",
            source="mcp-remote",
            **({"reason": reason} if reason else {}),
        )
        data: dict[str, Any] = {
            **_remote_facts(entry.label, entry, review.state),
            "name": name,
            "path": path,
            "mime": mime,
            "size": len(blob),
            "binary": text is None,
            "uri": uri,
        }
        if text is None:
            data["data"] = base64.b64encode(blob).decode("ascii")
            message = (
                f"{path} is a binary file ({mime}, {len(blob)} bytes) of remote skill {name}; "
                "its base64 content is in the structured result and the embedded resource."
            )
            return ToolOutput(data, message, blob=(uri, mime, blob))
        data["text"] = text
        return ToolOutput(data, text)


def _remote_facts(label: str, entry: RemoteEntry, review: str) -> dict[str, Any]:
    return {
        "remote": label,
        "uri": entry.uri,
        "digest": f"remote-sha256:{entry.digest}",
        "review": review,
        "origin": f"remote:{label}",
    }


def _with_remotes(output: ToolOutput, listing: Listing) -> ToolOutput:
    """``output`` with how each remote answered, and a note naming the skipped ones."""
    output.data["remotes"] = [s.to_dict() for s in listing.statuses]
    notes = listing.notes
    if notes:
        output.data["remote_problems"] = notes
        output.text = (output.text.rstrip("\n") + "\n\n" + "\n".join(notes)).lstrip("\n")
    return output
