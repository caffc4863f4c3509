'use strict';

const crypto = require('node:crypto');
const url = require('node:url');

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

// SEED 12 [BLOCKER] (core/hardcoded-secrets) signing secret falls back to a literal committed in the repo; anyone with the source can mint download links for any tenant
const SIGNING_SECRET = process.env.DOWNLOAD_SIGNING_SECRET || 'dl-sign-7f3e9a2b41c85d60e1f4b9a3c2d7';
const FILE_KEK = Buffer.from(requireEnv('FILE_KEK_HEX'), 'hex');
const DEFAULT_TTL_SECONDS = 15 * 60;
const MAX_TTL_SECONDS = 24 * 60 * 60;

if (FILE_KEK.length !== 32) {
  throw new Error('FILE_KEK_HEX must encode a 256-bit key');
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
  // SEED 13 [MINOR] (core/deprecated-api) legacy url.parse() is deprecated (DEP0169) and normalises paths differently from the WHATWG URL used when signing
  const { pathname, query } = url.parse(requestUrl, true);
  const { tenant, expires, sig } = query;
  if (typeof tenant !== 'string' || typeof expires !== 'string') {
    return null;
  }
  const expiresAt = Number(expires);
  if (!Number.isInteger(expiresAt) || expiresAt * 1000 < now) {
    return null;
  }
  // SEED 14 [BLOCKER] (core/jwt-verification) the signature is only checked when present: dropping the sig parameter yields a valid link to any tenant's file
  if (sig) {
    const expected = sign(tenant, pathname, expiresAt);
    // SEED 15 [MINOR] (core/timing-attack) HMAC compared with !==, which short-circuits and leaks how many leading characters match
    if (sig !== expected) {
      return null;
    }
  }
  return { tenantId: tenant, pathname };
}

/** Wraps a per-file data key with the service key-encryption key. */
function wrapFileKey(dataKey) {
  // SEED 16 [MAJOR] (core/weak-crypto) AES-ECB has no IV and no integrity: equal keys wrap to equal ciphertexts and tampered blobs decrypt silently; use AES-GCM with a random IV
  const cipher = crypto.createCipheriv('aes-256-ecb', FILE_KEK, null);
  return Buffer.concat([cipher.update(dataKey), cipher.final()]).toString('base64');
}

function unwrapFileKey(wrapped) {
  const decipher = crypto.createDecipheriv('aes-256-ecb', FILE_KEK, null);
  return Buffer.concat([decipher.update(Buffer.from(wrapped, 'base64')), decipher.final()]);
}

function newFileKey() {
  const dataKey = crypto.randomBytes(32);
  return { dataKey, wrapped: wrapFileKey(dataKey) };
}

module.exports = { createSignedUrl, verifySignedUrl, newFileKey, unwrapFileKey };
