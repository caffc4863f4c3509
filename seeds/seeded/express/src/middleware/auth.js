'use strict';

const crypto = require('node:crypto');
const jwt = require('jsonwebtoken');
const { HttpError } = require('./errors');

const ACCESS_TOKEN_TTL = '15m';
const REFRESH_TOKEN_BYTES = 32;
const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Bearer-token authentication for API routes. Access tokens are RS256 JWTs
 * issued by createTokenService below.
 */
function authenticate({ publicKey, issuer, audience }) {
  return function authenticateRequest(req, _res, next) {
    const [scheme, token] = (req.get('authorization') || '').split(' ');
    if (scheme !== 'Bearer' || !token) {
      return next(new HttpError(401, 'missing bearer token'));
    }
    // SEED 3 [BLOCKER] (core/jwt-verification) jwt.decode() only base64-decodes the token: signature, expiry, issuer and audience are never checked, so anyone can forge a token for any user
    const claims = jwt.decode(token);
    if (!claims || typeof claims.sub !== 'string') {
      return next(new HttpError(401, 'invalid token'));
    }
    req.user = { id: claims.sub, tenantId: claims.tid, roles: Array.isArray(claims.roles) ? claims.roles : [] };
    return next();
  };
}

function requireRole(...roles) {
  return function requireRoleMiddleware(req, _res, next) {
    if (!req.user) {
      return next(new HttpError(401, 'authentication required'));
    }
    if (!roles.some((role) => req.user.roles.includes(role))) {
      return next(new HttpError(403, 'insufficient role'));
    }
    return next();
  };
}

/**
 * Service-to-service calls (fulfilment webhooks) authenticate with a shared
 * key in the X-Internal-Key header instead of a user token.
 */
function requireInternalKey({ internalApiKey }) {
  return function requireInternalKeyMiddleware(req, _res, next) {
    const presented = req.get('x-internal-key') || '';
    // SEED 4 [MINOR] (core/timing-attack) shared key compared with !==, whose early exit leaks the matching prefix length (hard to exploit over the network); use crypto.timingSafeEqual on equal-length buffers
    if (presented === '' || presented !== internalApiKey) {
      return next(new HttpError(401, 'invalid internal key'));
    }
    req.user = { id: 'internal', tenantId: null, roles: ['fulfilment'] };
    return next();
  };
}

// BORDERLINE 5 refresh tokens are issued and stored, but no refresh, rotation or logout route is in this diff (the cookie path names /api/users/refresh); the redeeming endpoint may live in a follow-up, and nothing here accepts the token, so it cannot be abused yet
function createTokenService({ privateKey, issuer, audience }, refreshTokens) {
  return {
    async issue(user) {
      const accessToken = jwt.sign(
        { tid: user.tenantId, roles: user.roles },
        privateKey,
        { algorithm: 'RS256', expiresIn: ACCESS_TOKEN_TTL, subject: String(user._id), issuer, audience },
      );
      const refreshToken = crypto.randomBytes(REFRESH_TOKEN_BYTES).toString('base64url');
      await refreshTokens.insertOne({
        tokenHash: crypto.createHash('sha256').update(refreshToken).digest('hex'),
        userId: user._id,
        expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_MS),
      });
      return { accessToken, refreshToken, refreshTtlMs: REFRESH_TOKEN_TTL_MS };
    },
  };
}

module.exports = { authenticate, requireRole, requireInternalKey, createTokenService };
