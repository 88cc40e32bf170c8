// Ships three logs through pino and pino-http-send's stream (NDJSON, no Content-Type), to the
// URL in SLUICE_PINO_URL with the key in SLUICE_API_KEY.
const pino = require('pino');
const { createWriteStream } = require('pino-http-send');

const stream = createWriteStream({
  url: process.env.SLUICE_PINO_URL,
  headers: { authorization: `Bearer ${process.env.SLUICE_API_KEY}` },
  bodyType: 'ndjson',
  batchSize: 3,
  retries: 0,
});
const logger = pino({ level: 'debug' }, stream);
logger.debug('pino: cache warmed');
logger.info({ userId: 7 }, 'pino: user signed in');
logger.error(new Error('disk full on /var'), 'pino: write failed');
