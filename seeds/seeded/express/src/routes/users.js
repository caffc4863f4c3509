'use strict';

const crypto = require('node:crypto');
const express = require('express');
const bcrypt = require('bcrypt');
const rateLimit = require('express-rate-limit');
const { ObjectId } = require('mongodb');
const { HttpError, asyncHandler } = require('../middleware/errors');
const { requireRole } = require('../middleware/auth');

const RESET_TOKEN_TTL_MS = 30 * 60 * 1000;
const BCRYPT_ROUNDS = 12;
const ROLES = ['customer', 'support', 'fulfilment', 'admin'];
const LOCALES = ['en-US', 'en-GB', 'de-DE', 'fr-FR'];
// Compared against when the e-mail is unknown so both paths cost one bcrypt check.
const DUMMY_HASH = '$2b$12$W2IOvaYJN/ASt0VfRr00oO/wD1UcIsHie1qV5wxCvSKtJXBPhL6c.';

const authLimiter = rateLimit({ windowMs: 15 * 60 * 1000, limit: 10, standardHeaders: true, legacyHeaders: false });

function sha256(value) {
  return crypto.createHash('sha256').update(value).digest('hex');
}

function publicUser(user) {
  return { id: String(user._id), email: user.email, name: user.name, locale: user.locale, roles: user.roles };
}

module.exports = function usersRouter({ db, tokens, requireUser, mailer }) {
  const users = db.collection('users');
  const router = express.Router();

  router.post(
    '/login',
    authLimiter,
    asyncHandler(async (req, res) => {
      const { email, password } = req.body;
      if (typeof email !== 'string' || typeof password !== 'string') {
        throw new HttpError(400, 'email and password are required');
      }
      const user = await users.findOne({ email: email.trim().toLowerCase(), disabledAt: null });
      const valid = await bcrypt.compare(password, user ? user.passwordHash : DUMMY_HASH);
      if (!user || !valid) {
        throw new HttpError(401, 'invalid email or password');
      }
      const { accessToken, refreshToken, refreshTtlMs } = await tokens.issue(user);
      // SEED 12 [MAJOR] (core/insecure-cookie) refresh-token cookie is set without httpOnly and secure, so any XSS can read a 30-day credential and it is sent over plain HTTP
      res.cookie('refresh_token', refreshToken, { sameSite: 'lax', maxAge: refreshTtlMs, path: '/api/users/refresh' });
      res.json({ accessToken, user: publicUser(user) });
    }),
  );

  router.post(
    '/password-reset',
    authLimiter,
    asyncHandler(async (req, res) => {
      const email = typeof req.body.email === 'string' ? req.body.email.trim().toLowerCase() : '';
      if (!email) {
        throw new HttpError(400, 'email is required');
      }
      // SEED 13 [CRITICAL] (core/insecure-randomness) reset token comes from Math.random(), whose output is predictable; an attacker who can predict it takes over the account
      const token = Math.random().toString(36).slice(2, 14);
      const { matchedCount } = await users.updateOne(
        { email, disabledAt: null },
        { $set: { resetTokenHash: sha256(token), resetExpiresAt: new Date(Date.now() + RESET_TOKEN_TTL_MS) } },
      );
      if (matchedCount === 1) {
        // Not awaited: known and unknown addresses must answer alike, with no timing or error difference.
        mailer.sendPasswordReset(email, token).catch((err) => req.log.error({ err }, 'password reset mail failed'));
      }
      res.status(202).end();
    }),
  );

  router.post(
    '/password-reset/confirm',
    authLimiter,
    asyncHandler(async (req, res) => {
      const { token, password } = req.body;
      if (typeof token !== 'string' || typeof password !== 'string' || password.length < 12) {
        throw new HttpError(400, 'a token and a password of at least 12 characters are required');
      }
      const passwordHash = await bcrypt.hash(password, BCRYPT_ROUNDS);
      const user = await users.findOneAndUpdate(
        { resetTokenHash: sha256(token), resetExpiresAt: { $gt: new Date() } },
        { $set: { passwordHash }, $unset: { resetTokenHash: '', resetExpiresAt: '' } },
      );
      if (!user) {
        throw new HttpError(400, 'reset link is invalid or has expired');
      }
      await db.collection('refresh_tokens').deleteMany({ userId: user._id });
      res.status(204).end();
    }),
  );

  router.get(
    '/',
    requireUser,
    requireRole('admin', 'support'),
    asyncHandler(async (req, res) => {
      // SEED 14 [BLOCKER] (core/nosql-injection) req.query (parsed by qs) is spread into the Mongo filter after tenantId, so ?tenantId[$ne]=x or ?email[$regex]=. injects operators and lists users of every tenant
      const filter = { tenantId: req.user.tenantId, ...req.query };
      const found = await users.find(filter).sort({ email: 1 }).limit(100).toArray();
      res.json(found.map(publicUser));
    }),
  );

  router.get(
    '/me',
    requireUser,
    asyncHandler(async (req, res) => {
      const user = await users.findOne({ _id: new ObjectId(req.user.id) });
      if (!user) {
        throw new HttpError(404, 'user not found');
      }
      res.json(publicUser(user));
    }),
  );

  router.patch(
    '/me',
    requireUser,
    asyncHandler(async (req, res) => {
      // SEED 15 [BLOCKER] (core/mass-assignment) the whole request body is $set on the user, so a customer can send {"roles":["admin"]} or a new tenantId/passwordHash and escalate privileges
      const changes = req.body;
      if (changes.locale !== undefined && !LOCALES.includes(changes.locale)) {
        throw new HttpError(400, `locale must be one of ${LOCALES.join(', ')}`);
      }
      const updated = await users.findOneAndUpdate(
        { _id: new ObjectId(req.user.id) },
        { $set: { ...changes, updatedAt: new Date() } },
        { returnDocument: 'after' },
      );
      if (!updated) {
        throw new HttpError(404, 'user not found');
      }
      res.json(publicUser(updated));
    }),
  );

  return router;
};

module.exports.ROLES = ROLES;
