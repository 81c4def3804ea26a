"""Optional export of telemetry events to a dashboard: OpenTelemetry logs over OTLP/HTTP.

Off by default. With ``telemetry_otlp_endpoint`` set (or
``SKILLDECK_TELEMETRY_OTLP_ENDPOINT``), every event written to the local JSONL files is
also sent as one OpenTelemetry log record (event name as ``event_name`` and body, the
record's fields as attributes, ``skilldeck.schema`` naming the schema version) through the
OpenTelemetry SDK's batching OTLP/HTTP exporter. Needs the ``otlp`` extra
(``pip install 'skilldeck[otlp]'``); without it the local files go on and one
``telemetry_export_unavailable`` event says why. Events may carry search queries: point it
only at a collector you trust.
"""

from __future__ import annotations

import json
from typing import Any

SERVICE_NAME = "skilldeck"


class OtlpExport:
    """Sends telemetry records to an OTLP/HTTP logs endpoint (batched, in the background).

    Args:
        endpoint: The logs URL, e.g. ``http://127.0.0.1:4318/v1/logs``.

    Raises:
        ImportError: The ``otlp`` extra is not installed.
    """

    def __init__(self, endpoint: str) -> None:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        self.endpoint = endpoint
        self._provider = LoggerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
        self._provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, timeout=5))
        )
        self._logger = self._provider.get_logger("skilldeck.telemetry")

    def send(self, record: dict[str, Any], timestamp_ns: int) -> None:
        """Queue one record (the JSONL line's fields) for export."""
        event = str(record.get("event", ""))
        self._logger.emit(
            timestamp=timestamp_ns,
            body=event,
            event_name=event,
            attributes=attributes(record),
        )

    def flush(self) -> None:
        """Send what is queued now (waits up to a few seconds)."""
        self._provider.force_flush(5000)


def attributes(record: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry attributes of a record: strings, numbers and booleans as they are,
    lists of strings as lists, anything else as its JSON text; None left out. The schema
    field becomes ``skilldeck.schema``."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = "skilldeck.schema" if key == "schema" else key
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[name] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[name] = list(value)
        else:
            out[name] = json.dumps(value, ensure_ascii=False, default=str)
    return out
