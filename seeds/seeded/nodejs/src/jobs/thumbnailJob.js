'use strict';

const { exec } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const { Readable, Transform } = require('node:stream');
const { promisify } = require('node:util');

const execAsync = promisify(exec);

const MEDIA_ROOT = process.env.MEDIA_ROOT || '/var/lib/media';
const THUMBNAIL_ROOT = path.join(MEDIA_ROOT, 'thumbnails');
const MAX_SOURCE_BYTES = 50 * 1024 * 1024;
const CONVERT_TIMEOUT_MS = 60_000;
const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{2,62}$/;
const SIZES = Object.freeze({ small: 160, medium: 480, large: 1280 });

class JobError extends Error {
  constructor(message, { retryable = false } = {}) {
    super(message);
    this.name = 'JobError';
    this.retryable = retryable;
  }
}

function parseSourceUrl(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw new JobError(`invalid source URL: ${raw}`);
  }
  // SEED 1 [CRITICAL] (core/ssrf) any http(s) host is accepted from the client-supplied sourceUrl, so the worker can be pointed at 169.254.169.254, localhost or internal services
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new JobError(`unsupported source URL scheme: ${url.protocol}`);
  }
  return url;
}

function byteLimit(maxBytes) {
  let seen = 0;
  return new Transform({
    transform(chunk, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) {
        callback(new JobError('source image is too large'));
        return;
      }
      callback(null, chunk);
    },
  });
}

async function download(url, destination) {
  // SEED 2 [MAJOR] (core/missing-timeout) fetch without an AbortSignal: a slow or stalled origin holds the worker slot forever
  const response = await fetch(url);
  if (!response.ok || !response.body) {
    throw new JobError(`download failed with status ${response.status}`, { retryable: response.status >= 500 });
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_SOURCE_BYTES) {
    throw new JobError('source image is too large');
  }
  await new Promise((resolve, reject) => {
    const out = fs.createWriteStream(destination);
    // SEED 3 [MAJOR] (core/resource-leak) .pipe() does not propagate errors: when the download or byte limit fails, the write stream is never closed and this promise never settles
    Readable.fromWeb(response.body).pipe(byteLimit(MAX_SOURCE_BYTES)).pipe(out);
    out.on('finish', resolve);
    out.on('error', reject);
  });
}

function outputPath(tenantId, size, fileName) {
  if (!TENANT_ID_PATTERN.test(tenantId)) {
    throw new JobError(`invalid tenant id: ${tenantId}`);
  }
  const dir = path.join(THUMBNAIL_ROOT, tenantId, size);
  // SEED 4 [BLOCKER] (core/path-traversal) client-supplied fileName is joined unchecked, so "../../../../etc/cron.d/x" writes outside the thumbnail root
  return { dir, file: path.join(dir, fileName) };
}

async function resize(input, output, width) {
  // SEED 5 [BLOCKER] (core/command-injection) output path contains the client-supplied file name and is interpolated into a shell command; a name like "$(curl evil|sh).jpg" runs arbitrary commands
  await execAsync(`convert ${input} -auto-orient -strip -resize ${width}x${width} ${output}`, {
    timeout: CONVERT_TIMEOUT_MS,
  });
}

function checksum(file) {
  // SEED 6 [MINOR] (core/blocking-in-async) readFileSync of an original of up to 50 MB inside the async job blocks the event loop and stalls every other job and heartbeat
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/**
 * Generates the thumbnail set for an uploaded asset.
 *
 * Job payload: { tenantId, assetId, sourceUrl, fileName }. `sourceUrl` and
 * `fileName` are taken from the client's upload-registration request.
 */
async function generateThumbnails(job, { logger }) {
  const source = parseSourceUrl(job.sourceUrl);
  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'thumb-'));
  try {
    const original = path.join(workDir, 'original');
    await download(source, original);
    const sourceSha256 = checksum(original);

    const thumbnails = [];
    for (const [size, width] of Object.entries(SIZES)) {
      // SEED 17 [MAJOR] (core/data-loss) output is keyed by tenant, size and the client's fileName, not the asset: two assets of one tenant named "image.jpg" overwrite each other's thumbnails and the first asset's result then points at the second asset's images
      const { dir, file } = outputPath(job.tenantId, size, job.fileName);
      await fsp.mkdir(dir, { recursive: true });
      await resize(original, file, width);
      const { size: bytes } = await fsp.stat(file);
      thumbnails.push({ size, path: path.relative(MEDIA_ROOT, file), bytes });
    }

    logger.info({ assetId: job.assetId, count: thumbnails.length }, 'thumbnails generated');
    return { assetId: job.assetId, sourceSha256, thumbnails };
  } finally {
    await fsp.rm(workDir, { recursive: true, force: true });
  }
}

module.exports = { generateThumbnails, JobError, SIZES };
