"""How skills are really used: matches, loads, silent misses, script runs, gaps.

:func:`collect_usage` (:mod:`.collect`) reads the local telemetry (``skill_selected``,
``skill_loaded``, ``skill_exec_result``; :mod:`.events`) and the session audit, and
:func:`aggregate_usage` (:mod:`.aggregate`, pure) turns them into a :class:`UsageReport`
(:mod:`.model`, whose docstring documents the stable JSON form, ``"schema": 1``). A silent
miss is a session in which a skill was the confident top match of a request and was never
loaded.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.usage.aggregate import aggregate_usage
    from skilldeck.core.usage.collect import TELEMETRY_OFF, collect_usage
    from skilldeck.core.usage.events import USAGE_EVENTS, telemetry_mark, usage_events
    from skilldeck.core.usage.model import (
        SCHEMA,
        Request,
        SilentMiss,
        SkillUsage,
        Sources,
        Unmatched,
        UsageReport,
        day_of,
        stamp,
    )
    from skilldeck.core.usage.triggers import (
        TriggerCase,
        TriggerReport,
        load_trigger_cases,
        trigger_view,
    )

__all__ = [
    "SCHEMA",
    "TELEMETRY_OFF",
    "USAGE_EVENTS",
    "Request",
    "SilentMiss",
    "SkillUsage",
    "Sources",
    "TriggerCase",
    "TriggerReport",
    "Unmatched",
    "UsageReport",
    "aggregate_usage",
    "collect_usage",
    "day_of",
    "load_trigger_cases",
    "stamp",
    "telemetry_mark",
    "trigger_view",
    "usage_events",
]

_NAMES = {
    "aggregate_usage": "aggregate",
    "TELEMETRY_OFF": "collect",
    "collect_usage": "collect",
    "USAGE_EVENTS": "events",
    "telemetry_mark": "events",
    "usage_events": "events",
    "SCHEMA": "model",
    "Request": "model",
    "SilentMiss": "model",
    "SkillUsage": "model",
    "Sources": "model",
    "Unmatched": "model",
    "UsageReport": "model",
    "day_of": "model",
    "stamp": "model",
    "TriggerCase": "triggers",
    "TriggerReport": "triggers",
    "load_trigger_cases": "triggers",
    "trigger_view": "triggers",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
