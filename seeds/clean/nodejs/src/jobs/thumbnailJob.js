'use strict';

const { execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const { Readable, Transform } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { promisify } = require('node:util');

const execFileAsync = promisify(execFile);

const MEDIA_ROOT = process.env.MEDIA_ROOT || '/var/lib/media';
const THUMBNAIL_ROOT = path.join(MEDIA_ROOT, 'thumbnails');
const MAX_SOURCE_BYTES = 50 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30_000;
const CONVERT_TIMEOUT_MS = 60_000;
const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{2,62}$/;
const ASSET_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
const FILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.(?:jpe?g|png|webp)$/i;
const ALLOWED_SOURCE_HOSTS = new Set(
  (process.env.MEDIA_SOURCE_HOSTS || '')
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean),
);
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
  // BORDERLINE 2 only https on the MEDIA_SOURCE_HOSTS allowlist is fetched; whether an allowlisted URL can name another tenant's upload depends on how the upload-registration API issues and checks sourceUrl, which is not part of this change
  if (url.protocol !== 'https:' || !ALLOWED_SOURCE_HOSTS.has(url.hostname)) {
    throw new JobError(`source URL not allowed: ${url.origin}`);
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

function withDeadline(signal, ms) {
  return signal ? AbortSignal.any([signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
}

async function download(url, destination, signal) {
  const response = await fetch(url, { redirect: 'error', signal: withDeadline(signal, DOWNLOAD_TIMEOUT_MS) });
  if (!response.ok || !response.body) {
    throw new JobError(`download failed with status ${response.status}`, { retryable: response.status >= 500 });
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_SOURCE_BYTES) {
    throw new JobError('source image is too large');
  }
  await pipeline(Readable.fromWeb(response.body), byteLimit(MAX_SOURCE_BYTES), fs.createWriteStream(destination));
}

function outputPath(tenantId, assetId, size, fileName) {
  if (!TENANT_ID_PATTERN.test(tenantId)) {
    throw new JobError(`invalid tenant id: ${tenantId}`);
  }
  if (!ASSET_ID_PATTERN.test(assetId)) {
    throw new JobError(`invalid asset id: ${assetId}`);
  }
  if (!FILE_NAME_PATTERN.test(fileName)) {
    throw new JobError(`invalid file name: ${fileName}`);
  }
  const dir = path.join(THUMBNAIL_ROOT, tenantId, assetId, size);
  return { dir, file: path.join(dir, fileName) };
}

// The coders the thumbnailer accepts, by their magic bytes. ImageMagick is told the coder explicitly, so
// bytes that claim another format (SVG, MVG, MSL, PostScript: the ImageTragick family) are never decoded.
const CODERS = [
  { coder: 'jpeg', test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { coder: 'png', test: (b) => b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { coder: 'webp', test: (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' },
];
// Decoding limits: a small file that declares a huge canvas (a decompression bomb) fails fast instead of
// exhausting the worker's memory or disk.
const DECODE_LIMITS = ['-limit', 'width', '16KP', '-limit', 'height', '16KP', '-limit', 'area', '128MP',
  '-limit', 'memory', '256MiB', '-limit', 'map', '512MiB', '-limit', 'disk', '1GiB'];

async function sniffCoder(file) {
  const handle = await fsp.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(12), 0, 12, 0);
    const head = buffer.subarray(0, bytesRead);
    const match = CODERS.find(({ test }) => test(head));
    if (!match) {
      throw new JobError('source is not a JPEG, PNG or WebP image');
    }
    return match.coder;
  } finally {
    await handle.close();
  }
}

async function resize(coder, input, output, width, signal) {
  // `[0]` reads only the first frame: a multi-frame source would otherwise be written as output-0,
  // output-1, ... instead of `output`, failing the job and leaving files the cleanup does not know about.
  await execFileAsync(
    'convert',
    [...DECODE_LIMITS, `${coder}:${input}[0]`, '-auto-orient', '-strip', '-resize', `${width}x${width}`, output],
    { timeout: CONVERT_TIMEOUT_MS, signal },
  );
}

async function checksum(file) {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk);
  }
  return hash.digest('hex');
}

/**
 * Generates the thumbnail set for an uploaded asset.
 *
 * Job payload: { tenantId, assetId, sourceUrl, fileName }. `sourceUrl` and
 * `fileName` are taken from the client's upload-registration request.
 */
async function generateThumbnails(job, { logger, signal }) {
  const source = parseSourceUrl(job.sourceUrl);
  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'thumb-'));
  const staged = [];
  try {
    const original = path.join(workDir, 'original');
    await download(source, original, signal);
    const coder = await sniffCoder(original);
    const sourceSha256 = await checksum(original);

    // Render every size to a temporary name beside its final path (same file system, so
    // the rename is atomic); publish only once the whole set has been written.
    const thumbnails = [];
    for (const [size, width] of Object.entries(SIZES)) {
      signal?.throwIfAborted();
      const { dir, file } = outputPath(job.tenantId, job.assetId, size, job.fileName);
      await fsp.mkdir(dir, { recursive: true });
      const temp = path.join(dir, `.tmp-${crypto.randomUUID()}-${job.fileName}`);
      staged.push(temp);
      await resize(coder, original, temp, width, signal);
      const { size: bytes } = await fsp.stat(temp);
      thumbnails.push({ size, temp, file, bytes });
    }
    for (const thumbnail of thumbnails) {
      await fsp.rename(thumbnail.temp, thumbnail.file);
    }
    staged.length = 0;

    logger.info({ assetId: job.assetId, count: thumbnails.length }, 'thumbnails generated');
    return {
      assetId: job.assetId,
      sourceSha256,
      thumbnails: thumbnails.map(({ size, file, bytes }) => ({ size, path: path.relative(MEDIA_ROOT, file), bytes })),
    };
  } finally {
    await Promise.all(staged.map((temp) => fsp.rm(temp, { force: true })));
    await fsp.rm(workDir, { recursive: true, force: true });
  }
}

module.exports = { generateThumbnails, JobError, SIZES };
