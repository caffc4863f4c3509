/**
 * Thin fetch wrapper for the account pages.
 *
 * Session auth is cookie based (same-origin); every state-changing request carries the
 * CSRF token the server renders into <meta name="csrf-token">.
 */

const API_BASE = '/api/v1';
const METRICS_ENDPOINT = `${API_BASE}/metrics/events`;
const REQUEST_TIMEOUT_MS = 15000;

let revealedApiKey = null;

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

  const res = await fetch(`${API_BASE}${path}`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
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

/** Returns the user's personal API key, asking the server to reveal it once per page load. */
export async function getPersonalApiKey() {
  if (revealedApiKey) {
    return revealedApiKey;
  }
  const { key } = await api.post('/me/api-key/reveal');
  revealedApiKey = key;
  return key;
}

/** Fire-and-forget product analytics; never blocks or breaks the page. */
export function trackUsage(event, props = {}) {
  const body = JSON.stringify({ event, props, page: location.pathname, ts: Date.now() });
  return fetch(METRICS_ENDPOINT, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken() },
    credentials: 'same-origin',
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
