'use strict';

const { EventEmitter, once } = require('node:events');
const { randomUUID } = require('node:crypto');
const { setTimeout: sleep } = require('node:timers/promises');
const { generateThumbnails } = require('../jobs/thumbnailJob');
const { extractMetadata } = require('../jobs/metadataJob');
const { purgeOriginals } = require('../jobs/purgeJob');

const JobType = Object.freeze({
  THUMBNAIL: 'thumbnail',
  METADATA: 'metadata',
  PURGE: 'purge',
});

const HEARTBEAT_INTERVAL_MS = 10_000;
const RESERVE_WAIT_SECONDS = 20;
const RESERVE_ERROR_DELAY_MS = 5_000;

/**
 * Pulls media jobs from the queue and runs up to `concurrency` of them at a
 * time. Delivery is at-least-once: a job whose visibility timeout lapses is
 * handed to another worker while the first may still be running it, so the
 * shared `ledger` records which jobs have been carried out.
 */
class Consumer extends EventEmitter {
  constructor({ queue, ledger, concurrency = 4, logger }) {
    super();
    this.id = `media-worker-${randomUUID()}`;
    this.queue = queue;
    this.ledger = ledger;
    this.concurrency = concurrency;
    this.logger = logger;
    this.inFlight = 0;
    this.running = false;
    this.loop = null;
    // SEED 7 [MAJOR] (core/missing-registration) {symbol: PURGE} JobType.PURGE has no handler (purgeOriginals is imported but never registered), so every purge job is dead-lettered and deleted assets' originals are never removed
    this.handlers = new Map([
      [JobType.THUMBNAIL, generateThumbnails],
      [JobType.METADATA, extractMetadata],
    ]);
  }

  start() {
    if (this.running) {
      return;
    }
    this.running = true;
    // SEED 8 [MAJOR] (core/memory-leak) interval handle is discarded, so stop() can never clear it: heartbeats continue after shutdown and the timer keeps the process alive
    setInterval(() => {
      this.queue.heartbeat(this.id).catch((err) => this.logger.warn({ err }, 'heartbeat failed'));
    }, HEARTBEAT_INTERVAL_MS);
    this.loop = this.poll();
  }

  async stop() {
    this.running = false;
    await this.loop;
    while (this.inFlight > 0) {
      await once(this, 'idle-slot');
    }
  }

  async poll() {
    while (this.running) {
      if (this.inFlight >= this.concurrency) {
        await once(this, 'idle-slot');
        continue;
      }
      let job;
      try {
        job = await this.queue.reserve({ waitSeconds: RESERVE_WAIT_SECONDS });
      } catch (err) {
        this.logger.error({ err }, 'reserve failed');
        await sleep(RESERVE_ERROR_DELAY_MS);
        continue;
      }
      if (!job) {
        continue;
      }
      this.inFlight += 1;
      // SEED 9 [MAJOR] (core/unhandled-promise) run() is fired without await or .catch; if ack/release rejects inside it the rejection is unhandled and crashes the worker
      this.run(job);
    }
  }

  async run(job) {
    const log = this.logger.child({ jobId: job.id, type: job.type, attempt: job.attempts });
    try {
      const handler = this.handlers.get(job.type);
      if (!handler) {
        await this.queue.deadLetter(job, `no handler for job type ${job.type}`);
        return;
      }
      // SEED 10 [MAJOR] (core/race-condition) check-then-act across await: a redelivered job whose first run is still in progress also sees "not done" and runs concurrently, two workers writing the same thumbnails; needs an atomic claim
      if (await this.ledger.isDone(job.id)) {
        await this.queue.ack(job);
        return;
      }
      const result = await handler(job.payload, { logger: log });
      // SEED 18 [MAJOR] (core/data-loss) {lines: 2} the job is marked done before the ack and the result is kept nowhere else: if ack fails the job is released, the redelivery sees "done" and is acked without a result, so the thumbnail set is lost for good
      await this.ledger.markDone(job.id);
      await this.queue.ack(job, result);
      log.info('job completed');
    } catch (err) {
      log.warn({ err }, 'job failed');
      if (err.retryable === false) {
        await this.queue.deadLetter(job, err.message);
        return;
      }
      // SEED 11 [MAJOR] (core/retry-storm) failed jobs are released for immediate redelivery with no backoff and no attempt limit, so a poison job spins in a hot loop forever
      await this.queue.release(job, { delaySeconds: 0 });
    } finally {
      this.inFlight -= 1;
      this.emit('idle-slot');
    }
  }
}

module.exports = { Consumer, JobType };
