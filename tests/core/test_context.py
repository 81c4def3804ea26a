"""Per-query context (:mod:`skilldeck.core.context`): the four tiers, the ranking among
matches, ``max_skills``, the character budget and what never counts (real workspaces)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import load_settings
from skilldeck.core.context import build_context, is_meta_question, recent_use
from skilldeck.core.sessions import SessionStore
from skilldeck.core.workspace import Workspace


def workspace(root: Path, *, skills_v1: bool = True) -> Workspace:
    settings = load_settings()
    settings.skills_v1 = skills_v1
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(settings, [root])
    ws.discover()
    return ws


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Skills with and without triggers, plus a disabled and a hidden one."""
    base = tmp_path / "skills"
    write_skill(
        base,
        "pdf-forms",
        description="Fill in PDF forms field by field. Use when asked to fill a PDF form.",
        body="# PDF forms\n\nFill the form for $ARGUMENTS.\n",
        extra="triggers:\n  keywords: [fill form, pdf form]\n",
    )
    write_skill(
        base,
        "deploy-app",
        description="Deploy the web app to production. Use when shipping a release.",
        extra="triggers:\n  verbs: [deploying]\n",
    )
    write_skill(
        base,
        "git-history",
        description="Summarise git history, commit logs and blame. Use when asked what "
        "changed in a repository.",
    )
    write_skill(
        base,
        "secret-ops",
        description="Deploy secrets. Use when deploying secrets.",
        extra="triggers: [deploy, fill form]\ndefault_enabled: false\n",
    )
    write_skill(
        base,
        "manual-only",
        description="Only for people. Use when deploying by hand.",
        extra="triggers: [deploy]\ndisable-model-invocation: true\n",
    )
    return base


def test_tier_none_without_skills(tmp_path: Path) -> None:
    answer = build_context(workspace(tmp_path / "empty"), "fill form please")
    assert answer.tier == "none" and answer.text == "" and answer.skills == []
    assert "no skill" in answer.reason


def test_tier_none_when_skills_are_off(root: Path) -> None:
    answer = build_context(workspace(root, skills_v1=False), "$pdf-forms fill form")
    assert answer.tier == "none" and answer.text == ""
    assert "skills_v1" in answer.reason


def test_tier_breadcrumb_counts_only_model_visible_skills(root: Path) -> None:
    answer = build_context(workspace(root), "what is the weather like in Lisbon")
    assert answer.tier == "breadcrumb"
    assert answer.text == "[3 skills available]"
    assert answer.total == 3 and answer.skills == []
    assert answer.reason == "no skill matches the message"


@pytest.mark.parametrize(
    "message",
    ["What can you do?", "which skills do you have", "Please list your skills.", "help", "/help"],
)
def test_tier_listing_for_meta_questions(root: Path, message: str) -> None:
    answer = build_context(workspace(root), message)
    assert answer.tier == "listing", answer.reason
    assert answer.reason == "the message asks what the agent can do"
    lines = answer.text.splitlines()
    assert lines[0] == "[3 skills available]"
    assert lines[1:] == [
        "- deploy-app: Deploy the web app to production.",
        "- git-history: Summarise git history, commit logs and blame.",
        "- pdf-forms: Fill in PDF forms field by field.",
    ]
    assert [s.name for s in answer.skills] == ["deploy-app", "git-history", "pdf-forms"]
    assert all(s.instructions is None for s in answer.skills)


@pytest.mark.parametrize(
    ("message", "meta"),
    [
        ("what can you do", True),
        ("What else could you help me with?", True),
        ("what skills are available", True),
        ("show me all your skills", True),
        ("what can you do with this pdf form", False),
        ("help me deploy the app", False),
        ("fill form for Bob", False),
    ],
)
def test_meta_question_detection(message: str, meta: bool) -> None:
    assert is_meta_question(message) is meta


def test_tier_full_for_a_confident_match_without_triggers(root: Path) -> None:
    answer = build_context(workspace(root), "summarise the git history and blame of this repo")
    assert answer.tier == "full", answer.reason
    assert answer.reason == "1 skill matched by confident search"
    first = answer.skills[0]
    assert first.name == "git-history" and first.match == "search"
    assert first.score is not None and first.score >= 0.75
    assert "confident best match" in first.reason and "declares no triggers" in first.reason
    assert first.instructions is not None and '<skill name="git-history">' in answer.text


def test_tier_listing_when_close_matches_have_no_triggers(root: Path) -> None:
    write_skill(
        root,
        "history-git",
        description="Summarise git history, commit logs and blame. Use when asked what "
        "changed in a repository.",
    )
    answer = build_context(workspace(root), "summarise the git history and blame of this repo")
    assert answer.tier == "listing", answer.reason
    assert answer.reason == "skills match the message but declare no triggers"
    assert {s.name for s in answer.skills[:2]} == {"history-git", "git-history"}
    assert all(s.score is not None and s.score >= 0.75 for s in answer.skills[:2])
    assert "declares no triggers" in answer.skills[0].reason
    assert answer.text.splitlines()[1].startswith(("- git-history:", "- history-git:"))


def test_tier_full_when_triggers_match(root: Path) -> None:
    answer = build_context(workspace(root), "can you fill form 1040 for me")
    assert answer.tier == "full"
    assert [s.name for s in answer.skills] == ["pdf-forms"]
    skill = answer.skills[0]
    assert skill.match == "exact_phrase" and "'fill form'" in skill.reason
    assert skill.instructions is not None
    assert skill.instructions.startswith("Base directory for this skill: ")
    assert "# PDF forms" in skill.instructions
    assert answer.text.startswith('<skill name="pdf-forms">\n') and answer.text.endswith("</skill>")
    assert skill.instructions in answer.text
    assert answer.to_dict()["skills"][0]["instructions"] == skill.instructions


def test_stemmed_trigger_is_a_match_but_not_an_exact_phrase(root: Path) -> None:
    answer = build_context(workspace(root), "we deploy tonight")
    assert answer.tier == "full"
    assert [(s.name, s.match) for s in answer.skills] == [("deploy-app", "trigger")]


def test_mention_wins_even_over_a_meta_question(root: Path) -> None:
    answer = build_context(workspace(root), "what can you do with $git-history?")
    assert answer.tier == "full"
    assert answer.skills[0].name == "git-history" and answer.skills[0].match == "mention"


@pytest.fixture
def ranked_root(tmp_path: Path) -> Path:
    """Four skills whose triggers all fire on :data:`RANKED_MESSAGE`, each differently."""
    base = tmp_path / "ranked"
    write_skill(base, "alpha-tool", description="Alpha helper. Use when asked for alpha.")
    write_skill(
        base,
        "bravo",
        description="Rotates keys. Use when keys need rotating.",
        extra="triggers:\n  keywords: [rotate keys]\n",
    )
    for name in ("charlie", "delta"):
        write_skill(
            base,
            name,
            description=f"{name.title()} release notes. Use when releasing.",
            extra="triggers:\n  keywords: [deploying]\n",
        )
    return base


RANKED_MESSAGE = "alpha-tool first, then rotate keys and deploy"


def test_ranking_mention_then_exact_phrase_then_recent_use(ranked_root: Path) -> None:
    ws = workspace(ranked_root)
    now = time.time()
    answer = build_context(ws, RANKED_MESSAGE, max_skills=4, recent={"delta": now})
    assert [(s.name, s.match) for s in answer.skills] == [
        ("alpha-tool", "mention"),
        ("bravo", "exact_phrase"),
        ("delta", "trigger"),
        ("charlie", "trigger"),
    ]
    assert answer.skills[2].recent and "used earlier in this session" in answer.skills[2].reason
    swapped = build_context(
        ws, RANKED_MESSAGE, max_skills=4, recent={"charlie": now, "bravo": now - 5}
    )
    assert [s.name for s in swapped.skills] == ["alpha-tool", "bravo", "charlie", "delta"]
    recent_exact = build_context(ws, RANKED_MESSAGE, max_skills=4, recent={"bravo": now})
    assert [s.name for s in recent_exact.skills][:2] == ["alpha-tool", "bravo"]


def test_dollar_mention_of_a_one_word_name(ranked_root: Path) -> None:
    answer = build_context(workspace(ranked_root), "let's use $charlie today")
    assert [(s.name, s.match) for s in answer.skills] == [("charlie", "mention")]
    assert "$charlie" in answer.skills[0].reason


def test_max_skills_caps_the_full_tier(ranked_root: Path) -> None:
    answer = build_context(workspace(ranked_root), RANKED_MESSAGE, max_skills=2)
    assert [s.name for s in answer.skills] == ["alpha-tool", "bravo"]
    assert answer.text.count("<skill name=") == 2
    assert "4 skills matched" in answer.reason and "top 2" in answer.reason


def test_full_instructions_respect_the_character_budget(tmp_path: Path) -> None:
    base = tmp_path / "big"
    long_body = "# Big\n\n" + "".join(f"Step {i}: do the thing carefully.\n" for i in range(400))
    for name in ("big-one", "big-two"):
        write_skill(
            base,
            name,
            description="Large instructions. Use when testing budgets.",
            body=long_body,
            extra="triggers: [budget test]\n",
        )
    ws = workspace(base)
    answer = build_context(ws, "run the budget test", budget=1500)
    assert answer.tier == "full" and len(answer.text) <= 1500
    first, second = answer.skills
    assert first.truncated and first.instructions is not None
    assert "cut to fit the context budget" in first.instructions
    assert second.omitted and second.instructions is None
    assert "budget is used up" in second.reason
    tiny = build_context(ws, "run the budget test", budget=50)
    assert all(s.omitted for s in tiny.skills)
    assert tiny.text == "[2 skills available; matching, but left out: big-one, big-two]"
    roomy = build_context(ws, "run the budget test", budget=100_000)
    assert all(s.instructions and not s.truncated for s in roomy.skills)
    assert len(roomy.text) > 20_000


def test_disabled_and_hidden_skills_never_count(root: Path) -> None:
    ws = workspace(root)
    answer = build_context(ws, "$secret-ops and $manual-only: deploy now", max_skills=5)
    names = [s.name for s in answer.skills]
    assert "secret-ops" not in names and "manual-only" not in names
    assert names == ["deploy-app"]
    listing = build_context(ws, "what can you do?")
    assert "secret-ops" not in listing.text and "manual-only" not in listing.text


def test_recent_use_reads_the_session_store(root: Path) -> None:
    with SessionStore(settings=load_settings()) as store:
        session = store.create(mode="permissive", actor="agent")
        store.activate_skill(session.id, "git-history", [], actor="agent")
        store.activate_skill(session.id, "pdf-forms", [], actor="agent")
        recent = recent_use(store.get(session.id))
    assert set(recent) == {"git-history", "pdf-forms"}
    assert all(stamp > time.time() - 60 for stamp in recent.values())


def test_json_shape(root: Path) -> None:
    data = build_context(workspace(root), "fill form now").to_dict()
    assert set(data) >= {"tier", "reason", "skills", "text", "total", "budget", "max_skills"}
    assert set(data["skills"][0]) >= {"name", "reason", "score", "instructions"}


def test_a_skill_file_gone_since_discovery_is_left_out_with_the_reason(root: Path) -> None:
    ws = workspace(root)
    (root / "pdf-forms" / "SKILL.md").unlink()
    answer = build_context(ws, "fill form now")
    assert answer.tier == "full" and answer.skills[0].omitted
    assert "left out" in answer.skills[0].reason and answer.skills[0].instructions is None
