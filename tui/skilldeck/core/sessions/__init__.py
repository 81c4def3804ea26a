"""Sessions, approvals and the audit log."""
