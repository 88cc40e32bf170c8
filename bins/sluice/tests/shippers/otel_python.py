"""Ships two logs through the OpenTelemetry Python SDK's OTLP/HTTP (protobuf) exporter, set up
only with the standard OTEL_* variables: OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES."""

import logging

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource

provider = LoggerProvider(resource=Resource.create())
provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
logger = logging.getLogger("checkout")
logger.setLevel(logging.DEBUG)
logger.addHandler(LoggingHandler(level=logging.DEBUG, logger_provider=provider))

logger.warning("python: payment retried", extra={"user.id": "u-42", "order": 1001})
try:
    raise ValueError("card declined")
except ValueError:
    logger.exception("python: payment failed")
provider.shutdown()
