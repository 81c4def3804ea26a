"""Did-you-mean for names: the nearest skill or file names to one that does not exist."""

from __future__ import annotations

from skilldeck.core.errors import ErrorCode, SkilldeckError

_SUGGEST_CUTOFF = 70.0
_SUGGEST_SPREAD = 15.0


def suggest_names(name: str, names: list[str], n: int = 3) -> list[str]:
    """Up to ``n`` names from ``names`` closest to ``name`` (for "unknown skill" errors).

    Scored with rapidfuzz ``WRatio`` (case-insensitive); a name is suggested when it
    scores at least 70 and within 15 points of the best match, best first.
    """
    from rapidfuzz import fuzz, process, utils  # only on a miss: `load` stays light

    if not name or not names or n <= 0:
        return []
    matches = process.extract(
        name,
        names,
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        limit=n,
        score_cutoff=_SUGGEST_CUTOFF,
    )
    if not matches:
        return []
    floor = matches[0][1] - _SUGGEST_SPREAD
    return [match[0] for match in matches if match[1] >= floor]


def unknown_skill(name: str, names: list[str], advice: str = "") -> SkilldeckError:
    """The NOT_FOUND error for a skill name, naming the nearest ones.

    Args:
        name: The name asked for.
        names: The names that exist.
        advice: Appended to the message (for example where to search instead).
    """
    hints = suggest_names(name, names)
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    return SkilldeckError(
        ErrorCode.NOT_FOUND, f"no skill named {name!r}{hint}{advice}", name=name, suggestions=hints
    )
