'use strict';

const crypto = require('node:crypto');

/**
 * Signed download links for private media and envelope encryption of the
 * per-file data keys stored next to each object.
 */

function requireEnv(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} must be set`);
  }
  return value;
}

const SIGNING_SECRET = requireEnv('DOWNLOAD_SIGNING_SECRET');
const FILE_KEK = Buffer.from(requireEnv('FILE_KEK_HEX'), 'hex');
const DEFAULT_TTL_SECONDS = 15 * 60;
const MAX_TTL_SECONDS = 24 * 60 * 60;

if (FILE_KEK.length !== 32) {
  throw new Error('FILE_KEK_HEX must encode a 256-bit key');
}
if (SIGNING_SECRET.length < 32) {
  throw new Error('DOWNLOAD_SIGNING_SECRET must be at least 32 characters');
}

function safeEqual(a, b) {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

function sign(tenantId, pathname, expires) {
  return crypto
    .createHmac('sha256', SIGNING_SECRET)
    .update(`${tenantId}\n${pathname}\n${expires}`)
    .digest('base64url');
}

function createSignedUrl(baseUrl, { tenantId, pathname, ttlSeconds = DEFAULT_TTL_SECONDS, now = Date.now() }) {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be between 1 and ${MAX_TTL_SECONDS}`);
  }
  const expires = Math.floor(now / 1000) + ttlSeconds;
  const target = new URL(pathname, baseUrl);
  target.searchParams.set('tenant', tenantId);
  target.searchParams.set('expires', String(expires));
  target.searchParams.set('sig', sign(tenantId, target.pathname, expires));
  return target.toString();
}

/**
 * Checks a request target (req.url: path plus query string).
 * @returns {{ tenantId: string, pathname: string } | null}
 */
function verifySignedUrl(requestUrl, now = Date.now()) {
  const { pathname, searchParams } = new URL(requestUrl, 'http://localhost');
  const tenant = searchParams.get('tenant');
  const expires = searchParams.get('expires');
  const sig = searchParams.get('sig');
  if (!tenant || !expires || !sig) {
    return null;
  }
  const expiresAt = Number(expires);
  if (!Number.isInteger(expiresAt) || expiresAt * 1000 < now) {
    return null;
  }
  if (!safeEqual(sig, sign(tenant, pathname, expiresAt))) {
    return null;
  }
  return { tenantId: tenant, pathname };
}

/** Wraps a per-file data key with the service key-encryption key. */
function wrapFileKey(dataKey) {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', FILE_KEK, iv);
  const ciphertext = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

function unwrapFileKey(wrapped) {
  const blob = Buffer.from(wrapped, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', FILE_KEK, blob.subarray(0, 12));
  decipher.setAuthTag(blob.subarray(12, 28));
  return Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
}

function newFileKey() {
  const dataKey = crypto.randomBytes(32);
  return { dataKey, wrapped: wrapFileKey(dataKey) };
}

module.exports = { createSignedUrl, verifySignedUrl, newFileKey, unwrapFileKey };
