"""Property-based tests: parsing never raises, and the frontmatter is what YAML gives."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.core.discovery.frontmatter import parse_bytes, split_allowed_tools
from skilldeck.core.model import Skill

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # what the reader uses
PATH = Path("/nonexistent/demo/SKILL.md")
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(skill: Skill, data: bytes) -> None:
    assert isinstance(skill.name, str) and skill.name
    assert isinstance(skill.description, str)
    assert 0 <= skill.body_offset <= len(data)
    assert skill.size == len(data)
    assert isinstance(skill.frontmatter, dict)
    assert all(isinstance(k, str) for k in skill.frontmatter)
    assert all(d.code.startswith("SD") for d in skill.diagnostics)
    assert not any(d.code == "SD199" for d in skill.diagnostics), skill.diagnostics
    skill.to_dict()  # JSON-ready, never raises


@FAST
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    check(parse_bytes(data, PATH), data)


@FAST
@given(st.binary(max_size=512), st.binary(max_size=256))
def test_fenced_arbitrary_bytes_never_raise(inner: bytes, body: bytes) -> None:
    data = b"---\n" + inner + b"\n---\n" + body
    check(parse_bytes(data, PATH), data)


@FAST
@given(st.text(max_size=400))
def test_fenced_arbitrary_text_never_raises(inner: str) -> None:
    data = ("---\nname: x\n" + inner + "\n---\nbody").encode("utf-8", "surrogatepass")
    check(parse_bytes(data, PATH), data)


SCALAR_CHARS = st.sampled_from([*"abcXYZ019 -_.:#'\"[]{},!&*|>%@`?~=\\/", "é", "\u00a0"])
SCALARS = st.text(SCALAR_CHARS, min_size=1, max_size=12)
KEYS = st.sampled_from(["name", "description", "on", "yes", "a-b", "x.y", "tags", "n", "_k"])


@st.composite
def simple_docs(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(KEYS)
        kind = draw(st.integers(0, 4))
        if kind == 0:
            lines.append(f"{key}: {draw(SCALARS)}")
        elif kind == 1:
            items = draw(st.lists(SCALARS, max_size=4))
            lines.append(f"{key}: [{', '.join(items)}]")
        elif kind == 2:
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  ", "    "]))
            for item in draw(st.lists(SCALARS, min_size=1, max_size=3)):
                lines.append(f"{indent}- {item}")
        elif kind == 3:
            lines.append(f"{key}:")
            for sub in draw(st.lists(KEYS, min_size=1, max_size=3)):
                lines.append(f"  {sub}: {draw(SCALARS)}")
        else:
            quote = draw(st.sampled_from(["'", '"']))
            lines.append(f"{key}: {quote}{draw(SCALARS)}{quote}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(simple_docs())
def test_frontmatter_is_what_yaml_gives(text: str) -> None:
    try:
        expected = yaml.load(text, Loader=LOADER)
    except yaml.YAMLError:
        expected = None
    data = ("---\n" + text + "---\nbody\n").encode()
    skill = parse_bytes(data, PATH)
    if isinstance(expected, dict):  # keys are kept as text (``on: 0`` gives "True")
        assert skill.frontmatter == {str(k): v for k, v in expected.items()}
    else:
        assert skill.frontmatter == {}


@FAST
@given(st.one_of(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=5), st.integers()))
def test_split_allowed_tools_total(value: object) -> None:
    tools = split_allowed_tools(value)
    assert all(t and t == t.strip() for t in tools)
    assert len(set(tools)) == len(tools)
