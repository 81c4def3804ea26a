"""Why an install or update step is refused: a stable code and a sentence, no advice.

Each face words its own advice from the code (the CLI says ``--force``, the terminal UI
names its key or sends the user to the CLI): core never names a face's flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ReasonCode = Literal[
    "refused",
    "error_findings",
    "local_edits",
    "unlocked_folder",
    "other_source",
    "renamed",
    "left_source",
    "name_mismatch",
    "fetch_problem",
    "unsafe_source",
]
"""``refused`` (nothing overrides it: caps, escaping links, bad names), ``unsafe_source``
(nothing overrides it: a local source holding a device, FIFO or socket, or over a cap),
``error_findings``
and ``local_edits`` and ``unlocked_folder`` (overridable by forcing), ``other_source``
(overridable by switching sources), and facts of the source: ``renamed``, ``left_source``,
``name_mismatch``, ``fetch_problem``."""

FORCIBLE: frozenset[str] = frozenset({"error_findings", "local_edits", "unlocked_folder"})
"""The codes a user may override by forcing the step."""


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a step is refused.

    Attributes:
        code: What kind of reason (:data:`ReasonCode`), for a face to word advice on.
        text: One sentence for a person, without advice.
    """

    code: ReasonCode
    text: str

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"code": self.code, "text": self.text}
