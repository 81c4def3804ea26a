"""Errors with stable codes, shared by the CLI and the MCP server."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Error codes a caller can branch on."""

    INVALID_PARAM = "INVALID_PARAM"
    NOT_FOUND = "NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class SkilldeckError(Exception):
    """An expected failure with a code and a message fit to show a person.

    Args:
        code: The stable error code.
        message: One sentence saying what went wrong.
        details: Extra JSON-ready facts (for example ``suggestions``).
    """

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"code": self.code.value, "message": self.message, **self.details}
