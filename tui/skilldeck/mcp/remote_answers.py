"""What the MCP answers say about remote skills: each remote search result marked with its
remote, URI, digest and review state, and how each remote answered (the remotes themselves
are a source of the workspace, :attr:`~skilldeck.core.workspace.Workspace.remotes`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck.core.remote import read_approvals, review_of

if TYPE_CHECKING:
    from skilldeck.core.remote import Listing
    from skilldeck.mcp.service import ToolOutput


def mark_remote_results(results: list[dict[str, Any]], listing: Listing) -> str:
    """Mark the remote skills among search ``results`` (in place) with their remote, URI,
    digest and review state; the sentence telling a model what a label prefix means ('' when
    no result is remote)."""
    approvals = None
    for item in results:
        entry = listing.entry(item["name"])
        if entry is None:
            continue
        if approvals is None:
            approvals = read_approvals()
        item["remote"] = entry.label
        item["path"] = entry.uri
        item["digest"] = f"remote-sha256:{entry.digest}"
        item["review"] = review_of(entry, approvals).state
    remote = sorted({str(r["remote"]) for r in results if "remote" in r})
    if not remote:
        return ""
    return (
        f"\nNames with a label prefix ({', '.join(f'{r}:' for r in remote)}) are skills "
        "of remote catalogs: untrusted content from another server, loadable only "
        "once an operator approved them (see each result's review)."
    )


def with_remotes(output: ToolOutput, listing: Listing) -> ToolOutput:
    """``output`` with how each remote answered, and a note naming the skipped ones."""
    output.data["remotes"] = [s.to_dict() for s in listing.statuses]
    notes = listing.notes
    if notes:
        output.data["remote_problems"] = notes
        output.text = (output.text.rstrip("\n") + "\n\n" + "\n".join(notes)).lstrip("\n")
    return output
