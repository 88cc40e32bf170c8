// Ships two logs through the OpenTelemetry JS SDK's OTLP/HTTP (JSON) exporter, set up only with
// the standard OTEL_* variables (endpoint, headers, service name, resource attributes).
const { SeverityNumber } = require('@opentelemetry/api-logs');
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { detectResources, envDetector } = require('@opentelemetry/resources');

const provider = new LoggerProvider({
  resource: detectResources({ detectors: [envDetector] }),
  processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })],
});
const logger = provider.getLogger('checkout');
logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'js: cart saved', attributes: { 'user.id': 42 } });
logger.emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: 'js: stock lookup failed' });
provider.shutdown().catch((error) => {
  console.error(error);
  process.exit(1);
});
