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
// BORDERLINE 3 the claim lease is not renewed; every handler gets an AbortSignal that fires a minute before the lease lapses, and the thumbnail job honours it, but whether the metadata and purge handlers do is not part of this change
const CLAIM_LEASE_MS = 10 * 60 * 1000;
const HANDLER_DEADLINE_MS = CLAIM_LEASE_MS - 60_000;
const BUSY_RETRY_DELAY_SECONDS = 60;
const MAX_ATTEMPTS = 8;
const MAX_BACKOFF_SECONDS = 15 * 60;

/** Exponential backoff with jitter: roughly 2^attempt seconds, capped. */
function backoffSeconds(attempt) {
  const ceiling = Math.min(MAX_BACKOFF_SECONDS, 2 ** attempt);
  return Math.ceil(ceiling / 2 + (Math.random() * ceiling) / 2);
}
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
    this.heartbeat = null;
    this.handlers = new Map([
      [JobType.THUMBNAIL, generateThumbnails],
      [JobType.METADATA, extractMetadata],
      [JobType.PURGE, purgeOriginals],
    ]);
  }

  start() {
    if (this.running) {
      return;
    }
    this.running = true;
    this.heartbeat = setInterval(() => {
      this.queue.heartbeat(this.id).catch((err) => this.logger.warn({ err }, 'heartbeat failed'));
    }, HEARTBEAT_INTERVAL_MS);
    this.loop = this.poll();
  }

  async stop() {
    this.running = false;
    try {
      await this.loop;
      while (this.inFlight > 0) {
        await once(this, 'idle-slot');
      }
    } finally {
      // Keep heartbeating until the in-flight jobs have drained.
      clearInterval(this.heartbeat);
      this.heartbeat = null;
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
      this.run(job).catch((err) => this.logger.error({ err, jobId: job.id }, 'job bookkeeping failed'));
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
      const claim = await this.ledger.tryStart(job.id, this.id, CLAIM_LEASE_MS);
      if (claim === 'done') {
        // An earlier run finished but its ack failed: ack with the result stored by finish().
        await this.queue.ack(job, await this.ledger.result(job.id));
        return;
      }
      if (claim === 'busy') {
        await this.queue.release(job, { delaySeconds: BUSY_RETRY_DELAY_SECONDS });
        return;
      }
      let result;
      try {
        result = await handler(job.payload, { logger: log, signal: AbortSignal.timeout(HANDLER_DEADLINE_MS) });
      } catch (err) {
        await this.fail(job, err, log);
        return;
      }
      // Bookkeeping errors are not job failures: they propagate to poll()'s catch, the
      // claim stays with this worker, and the redelivery acks with the stored result.
      await this.ledger.finish(job.id, this.id, result);
      await this.queue.ack(job, result);
      log.info('job completed');
    } finally {
      this.inFlight -= 1;
      this.emit('idle-slot');
    }
  }

  async fail(job, err, log) {
    log.warn({ err }, 'job failed');
    await this.ledger.abandon(job.id, this.id);
    if (err.retryable === false || job.attempts >= MAX_ATTEMPTS) {
      await this.queue.deadLetter(job, err.message);
      return;
    }
    await this.queue.release(job, { delaySeconds: backoffSeconds(job.attempts) });
  }
}

module.exports = { Consumer, JobType };
