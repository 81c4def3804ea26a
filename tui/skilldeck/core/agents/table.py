"""Where each coding agent looks for skills, from its own documentation.

Every folder, precedence and listing limit below is what the agent's documentation says
(the ``docs`` URLs, also listed in docs/usage.md); where a
document is silent the entry says so (``precedence`` "not documented") instead of guessing.
Folders are relative to the home folder (``user``) or to a project folder (``project``:
the working folder and its parents up to the repository root, nearest first).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent's documented skill folders and listing limits.

    Attributes:
        id: Short identifier (``claude-code``).
        name: Display name.
        project: Project folders, highest precedence first.
        user: User folders (relative to the home folder), highest precedence first.
        project_first: Project folders win a name clash over user folders.
        precedence: The documented rule, in words.
        budget_chars: Characters of the initial skill listing (names and descriptions),
            or None when no limit is documented.
        description_cap: Longest description the listing keeps, or None.
        shortens_first: Over budget, descriptions are shortened before skills are cut.
        docs: The documentation the entry is taken from.
        marks: Home folders or commands whose presence says the agent is installed.
    """

    id: str
    name: str
    project: tuple[str, ...]
    user: tuple[str, ...]
    project_first: bool
    precedence: str
    budget_chars: int | None
    description_cap: int | None
    shortens_first: bool
    docs: tuple[str, ...]
    marks: tuple[str, ...] = ()


AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "claude-code",
        "Claude Code",
        project=(".claude/skills",),
        user=(".claude/skills",),
        project_first=False,
        precedence="enterprise (managed) > personal (~/.claude/skills) > project "
        "(.claude/skills); plugin skills are namespaced",
        budget_chars=8_000,
        description_cap=1_536,
        shortens_first=False,
        docs=("https://code.claude.com/docs/en/skills",),
        marks=(".claude", "claude"),
    ),
    AgentSpec(
        "codex",
        "Codex",
        project=(".agents/skills",),
        user=(".agents/skills", ".codex/skills"),
        project_first=True,
        precedence="REPO (.agents/skills from the working folder up to the repository "
        "root) > USER ($HOME/.agents/skills; $CODEX_HOME/skills = ~/.codex/skills in "
        "earlier revisions) > ADMIN (/etc/codex/skills) > SYSTEM (bundled)",
        budget_chars=8_000,
        description_cap=None,
        shortens_first=True,
        docs=("https://developers.openai.com/codex/skills",),
        marks=(".codex", "codex"),
    ),
    AgentSpec(
        "cursor",
        "Cursor",
        project=(".agents/skills", ".cursor/skills", ".claude/skills", ".codex/skills"),
        user=(".cursor/skills", ".claude/skills", ".codex/skills"),
        project_first=True,
        precedence="not documented (project folders are listed first)",
        budget_chars=None,
        description_cap=None,
        shortens_first=False,
        docs=("https://cursor.com/docs/context/skills",),
        marks=(".cursor", "cursor", "cursor-agent"),
    ),
    AgentSpec(
        "gemini-cli",
        "Gemini CLI",
        project=(".agents/skills", ".gemini/skills"),
        user=(".agents/skills", ".gemini/skills"),
        project_first=True,
        precedence="workspace (.gemini/skills or .agents/skills) > user (~/.gemini/skills "
        "or ~/.agents/skills) > extensions > built-in; the .agents alias wins in a tier",
        budget_chars=None,
        description_cap=None,
        shortens_first=False,
        docs=(
            "https://geminicli.com/docs/cli/skills",
            "https://geminicli.com/docs/cli/using-agent-skills/",
        ),
        marks=(".gemini", "gemini"),
    ),
    AgentSpec(
        "github-copilot",
        "GitHub Copilot",
        project=(".github/skills", ".claude/skills", ".agents/skills"),
        user=(".copilot/skills", ".claude/skills", ".agents/skills"),
        project_first=True,
        precedence="not documented (project skills are listed first)",
        budget_chars=None,
        description_cap=None,
        shortens_first=False,
        docs=(
            "https://docs.github.com/en/copilot/concepts/agents/about-agent-skills",
            "https://docs.github.com/en/copilot/how-tos/use-copilot-agents/cloud-agent/"
            "create-skills",
        ),
        marks=(".copilot", "copilot"),
    ),
    AgentSpec(
        "opencode",
        "OpenCode",
        project=(".opencode/skills", ".claude/skills", ".agents/skills"),
        user=(".config/opencode/skills", ".claude/skills", ".agents/skills"),
        project_first=True,
        precedence="not documented (project folders, walked up to the git worktree, are "
        "listed first)",
        budget_chars=None,
        description_cap=None,
        shortens_first=False,
        docs=("https://opencode.ai/docs/skills",),
        marks=(".config/opencode", "opencode"),
    ),
)
"""The agents ``skilldeck agents`` reports, in that order."""
