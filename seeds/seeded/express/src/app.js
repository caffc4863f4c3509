'use strict';

const express = require('express');
const helmet = require('helmet');
const cors = require('cors');
const cookieParser = require('cookie-parser');
const pinoHttp = require('pino-http');
const { Pool } = require('pg');
const { MongoClient } = require('mongodb');

const { authenticate, createTokenService } = require('./middleware/auth');
const { errorHandler, notFound } = require('./middleware/errors');
const ordersRouter = require('./routes/orders');
const usersRouter = require('./routes/users');
const { createMailer } = require('./mail');
const config = require('./config');

function createApp({ pg, mongoDb, mailer, logger }) {
  const tokens = createTokenService(config.auth, mongoDb.collection('refresh_tokens'));
  const requireUser = authenticate(config.auth);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 1);
  app.use(helmet());
  app.use(pinoHttp({
    logger,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-internal-key"]', 'res.headers["set-cookie"]'],
  }));
  // SEED 1 [MAJOR] (core/cors-misconfiguration) origin: true reflects any Origin together with credentials: true, so any website may send credentialed cross-origin requests (the refresh_token cookie rides along) and read the responses; use an allow-list of origins
  app.use(cors({ origin: true, credentials: true }));
  app.use(express.json({ limit: '100kb' }));
  app.use(cookieParser());

  app.get('/healthz', async (_req, res) => {
    try {
      await pg.query('SELECT 1');
      await mongoDb.command({ ping: 1 });
      res.json({ status: 'ok' });
    } catch (err) {
      logger.error({ err }, 'health check failed');
      res.status(503).json({ status: 'unavailable' });
    }
  });

  app.use('/api/users', usersRouter({ db: mongoDb, tokens, requireUser, mailer }));
  app.use('/api/orders', requireUser, ordersRouter({ pg }));

  // SEED 2 [MAJOR] (core/missing-registration) {symbol: errorHandler} errorHandler is imported but never mounted: HttpErrors and failures fall through to Express's default handler, which answers in HTML (with stack traces outside production) instead of the JSON error contract
  app.use(notFound);

  return app;
}

async function main() {
  const logger = require('pino')({ level: config.logLevel });
  // SEED 16 [MAJOR] (core/missing-registration) the pg Pool gets no 'error' listener: when an idle client's connection drops (database restart, failover) the pool emits 'error' with no handler and the whole API process crashes
  const pg = new Pool({ connectionString: config.postgresUrl, max: 20, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000 });
  const mongo = await MongoClient.connect(config.mongoUrl, { serverSelectionTimeoutMS: 5_000 });
  const app = createApp({ pg, mongoDb: mongo.db(config.mongoDbName), mailer: createMailer(config.mail), logger });
  const server = app.listen(config.port, () => logger.info({ port: config.port }, 'orders api listening'));

  const shutdown = (signal) => {
    logger.info({ signal }, 'shutting down');
    server.close(async () => {
      await Promise.allSettled([pg.end(), mongo.close()]);
      process.exit(0);
    });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { createApp };
