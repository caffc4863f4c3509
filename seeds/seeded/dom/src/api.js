/**
 * Thin fetch wrapper for the account pages.
 *
 * Session auth is cookie based (same-origin); every state-changing request carries the
 * CSRF token the server renders into <meta name="csrf-token">.
 */

const API_BASE = '/api/v1';
const METRICS_ENDPOINT = 'https://metrics.acme-cloud.example/v1/ingest';
// SEED 1 [BLOCKER] (core/hardcoded-secrets) production credentials for the metrics ingest service are embedded in client-side JavaScript that every visitor downloads
const METRICS_AUTH = 'Basic ' + btoa('web-frontend:Qm7#vT2p!Lx9-prod');
const API_KEY_CACHE_KEY = 'acct.personalApiKey';

export class ApiError extends Error {
  constructor(status, message, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.details = details;
  }
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute('content') : '';
}

/**
 * Performs one JSON request against the account API and returns the parsed body.
 * Throws ApiError for non-2xx answers, with the server's message when it sent one.
 */
export async function request(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  if (method !== 'GET') {
    headers['X-CSRF-Token'] = csrfToken();
  }

  // SEED 3 [MAJOR] (core/missing-timeout) fetch has no abort signal or timeout, so a stalled connection leaves the caller's disabled button and spinner stuck indefinitely
  const res = await fetch(`${API_BASE}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });

  let payload = null;
  let isJson = true;
  const text = await res.text();
  if (text) {
    try {
      payload = JSON.parse(text);
    } catch {
      isJson = false;
      payload = { message: text };
    }
  }

  if (!res.ok) {
    const message = (payload && payload.message) || `Request failed (${res.status})`;
    throw new ApiError(res.status, message, payload);
  }
  // A 2xx that is not JSON (say, a redirect followed to an HTML sign-in page) is not the API's
  // answer, so it must not count as success.
  if (!isJson) {
    throw new ApiError(res.status, `Unexpected response from the server (${res.status})`, null);
  }
  return payload;
}

export const api = {
  get: (path) => request(path),
  post: (path, body) => request(path, { method: 'POST', body }),
  put: (path, body) => request(path, { method: 'PUT', body }),
  del: (path) => request(path, { method: 'DELETE' }),
};

/** Returns the user's personal API key, asking the server to reveal it once per session. */
export async function getPersonalApiKey() {
  const cached = localStorage.getItem(API_KEY_CACHE_KEY);
  if (cached) {
    return cached;
  }
  const { key } = await api.post('/me/api-key/reveal');
  // SEED 2 [CRITICAL] (core/insecure-storage) the personal API key is persisted in localStorage, readable by any script on the origin and left on shared machines after logout
  localStorage.setItem(API_KEY_CACHE_KEY, key);
  return key;
}

/** Fire-and-forget product analytics; never blocks or breaks the page. */
export function trackUsage(event, props = {}) {
  const body = JSON.stringify({ event, props, page: location.pathname, ts: Date.now() });
  return fetch(METRICS_ENDPOINT, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: METRICS_AUTH },
    body,
    keepalive: true,
  }).catch((err) => {
    console.debug('usage metrics not sent', err);
  });
}

/** User-facing text for an error thrown by request(). */
export function messageFor(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) {
      return 'Your session has expired. Please sign in again.';
    }
    if (err.status === 403) {
      return 'You do not have permission to change this setting.';
    }
    if (err.status === 422 && err.details && err.details.message) {
      return err.details.message;
    }
  }
  if (err && err.name === 'TimeoutError') {
    return 'The server took too long to answer. Please try again.';
  }
  return 'Something went wrong. Please try again.';
}

const relativeFormatter = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const RELATIVE_UNITS = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

/** "3 minutes ago", "yesterday", ... in the browser's locale. */
export function formatRelative(isoTimestamp, now = Date.now()) {
  const seconds = Math.round((new Date(isoTimestamp).getTime() - now) / 1000);
  if (!Number.isFinite(seconds)) {
    return ''; // missing or unparsable timestamp: show no time rather than fail the whole list
  }
  for (const [unit, size] of RELATIVE_UNITS) {
    if (Math.abs(seconds) >= size) {
      return relativeFormatter.format(Math.round(seconds / size), unit);
    }
  }
  return relativeFormatter.format(seconds, 'second');
}
