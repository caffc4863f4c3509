/**
 * Imports customer records from a CSV export of another billing system.
 *
 * Headers map onto nested fields with dot notation ("billing.country"), so a
 * file exported from most CRMs can be imported without a mapping step.
 * Opening balances are converted to the account's currency on the way in; the
 * customer keeps their own billing currency, and the balance as it appeared in
 * the file is kept next to the converted one (with the rate used).
 * Accepted records belong to the uploader's tenant. Importing is restricted to
 * billing administrators (role "billing-admin") because opening balances become
 * receivables; the upload route only authenticates the actor.
 */

const FX_ENDPOINT = 'https://api.ratefeed.io/v2/latest';
const FX_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_ROWS = 10_000;
const MAX_FILE_CHARS = 5 * 1024 * 1024;
const MAX_EMAIL_LENGTH = 254;
const REQUIRED_COLUMNS = ['externalId', 'name', 'email', 'currency', 'openingBalance'];

const EMAIL_PATTERN = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
const SUPPORTED_CURRENCIES = new Set(['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'CHF']);
const IMPORT_ROLE = 'billing-admin';
/** Columns copied onto a customer besides the required ones; anything else in the file is ignored. */
const OPTIONAL_FIELDS = ['company', 'phone'];
const BILLING_FIELDS = ['line1', 'line2', 'city', 'region', 'postalCode', 'country'];

export class ImportError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ImportError';
  }
}

export class ImportPermissionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ImportPermissionError';
  }
}

export class FxClient {
  constructor({ apiKey, baseUrl = FX_ENDPOINT, timeoutMs = FX_TIMEOUT_MS, logger = console } = {}) {
    if (!apiKey) {
      throw new TypeError('FxClient requires an apiKey');
    }
    this.apiKey = apiKey;
    this.baseUrl = baseUrl;
    this.timeoutMs = timeoutMs;
    this.logger = logger;
  }

  async rate(from, to) {
    const url = `${this.baseUrl}?base=${encodeURIComponent(from)}&symbols=${encodeURIComponent(to)}`;
    const response = await fetch(url, {
      headers: { Authorization: `Bearer ${this.apiKey}` },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok) {
      this.logger.error(`FX rate request failed (${response.status}) for ${from}->${to}`);
      throw new Error(`FX rate request failed with status ${response.status}`);
    }
    const body = await response.json();
    const rate = body?.rates?.[to];
    if (typeof rate !== 'number' || !(rate > 0)) {
      throw new Error(`FX provider returned no usable ${from}->${to} rate`);
    }
    return rate;
  }
}

/**
 * RFC 4180 parser: quoted fields, doubled quotes, CRLF or LF line endings.
 * Each row carries the physical line it starts on (quoted fields may span lines).
 * @returns {{ line: number, cells: string[] }[]}
 */
function parseCsvRows(text) {
  const rows = [];
  let row = [];
  let field = '';
  let inQuotes = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inQuotes) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') {
        inQuotes = false;
      } else {
        field += ch;
        if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) {
          line++;
        }
      }
    } else if (ch === '"') {
      inQuotes = true;
    } else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') {
        i++;
      }
      row.push(field);
      rows.push({ line: rowLine, cells: row });
      row = [];
      field = '';
      line++;
      rowLine = line;
    } else {
      field += ch;
    }
  }
  if (inQuotes) {
    throw new ImportError('Unterminated quoted field');
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push({ line: rowLine, cells: row });
  }
  return rows.filter(({ cells }) => !(cells.length === 1 && cells[0].trim() === ''));
}

/** @returns {string[][]} */
export function parseCsv(text) {
  return parseCsvRows(text).map((row) => row.cells);
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

function setPath(target, dottedKey, value) {
  const keys = dottedKey.split('.');
  if (keys.some((key) => key === '' || FORBIDDEN_KEYS.has(key))) {
    throw new ImportError(`Unsupported column name: ${dottedKey}`);
  }
  let node = target;
  for (let i = 0; i < keys.length - 1; i++) {
    if (!Object.hasOwn(node, keys[i]) || typeof node[keys[i]] !== 'object' || node[keys[i]] === null) {
      node[keys[i]] = {};
    }
    node = node[keys[i]];
  }
  node[keys[keys.length - 1]] = value;
}

function toRecord(columns, cells) {
  if (cells.length !== columns.length) {
    throw new ImportError(`Expected ${columns.length} fields, found ${cells.length}`);
  }
  const record = {};
  columns.forEach((column, index) => setPath(record, column, cells[index].trim()));
  return record;
}

function pickStrings(source, fields) {
  const picked = {};
  for (const field of fields) {
    if (typeof source?.[field] === 'string' && source[field] !== '') {
      picked[field] = source[field];
    }
  }
  return picked;
}

function normalise(record, tenantId) {
  for (const name of REQUIRED_COLUMNS) {
    if (typeof record[name] !== 'string') {
      throw new ImportError(`Column "${name}" cannot also have nested fields`);
    }
  }
  if (!record.externalId || !record.name) {
    throw new ImportError('externalId and name are required');
  }
  if (record.email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(record.email)) {
    throw new ImportError(`Invalid e-mail address: ${record.email}`);
  }
  const currency = record.currency.toUpperCase();
  if (!SUPPORTED_CURRENCIES.has(currency)) {
    throw new ImportError(`Invalid currency: ${record.currency}`);
  }
  const balance = /^(-)?(\d{1,13})(?:\.(\d{1,2}))?$/.exec(record.openingBalance);
  if (!balance) {
    throw new ImportError(`Invalid opening balance: ${record.openingBalance}`);
  }
  const [, sign, whole, fraction = ''] = balance;
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  return {
    tenantId,
    externalId: record.externalId,
    name: record.name,
    email: record.email,
    ...pickStrings(record, OPTIONAL_FIELDS),
    billing: pickStrings(record.billing, BILLING_FIELDS),
    currency,
    openingBalance: { currency, cents: sign ? -cents : cents },
    balanceCurrency: currency,
    balanceCents: sign ? -cents : cents,
  };
}

/**
 * @param {string} csvText
 * @param {{ fx: FxClient, actor: { id: string, tenantId: string, roles: string[] }, accountCurrency?: string, maxRows?: number }} options
 * @returns {Promise<{ accepted: object[], rejected: { line: number, reason: string }[] }>}
 */
export async function importCustomers(csvText, { fx, actor, accountCurrency = 'USD', maxRows = DEFAULT_MAX_ROWS }) {
  if (!actor?.tenantId) {
    throw new ImportPermissionError('Sign in to import customers');
  }
  if (!actor.roles?.includes(IMPORT_ROLE)) {
    throw new ImportPermissionError('Only billing administrators can import customers');
  }
  if (csvText.length > MAX_FILE_CHARS) {
    throw new ImportError('The file is too large to import');
  }
  const [header, ...rows] = parseCsvRows(csvText);
  if (!header) {
    throw new ImportError('The file is empty');
  }
  if (rows.length > maxRows) {
    throw new ImportError(`At most ${maxRows} rows can be imported at once`);
  }
  const columns = header.cells.map((name) => name.trim());
  const missing = REQUIRED_COLUMNS.filter((name) => !columns.includes(name));
  if (missing.length > 0) {
    throw new ImportError(`Missing columns: ${missing.join(', ')}`);
  }

  const accepted = [];
  const rejected = [];
  const firstLineByExternalId = new Map();
  rows.forEach(({ line, cells }) => {
    try {
      const record = normalise(toRecord(columns, cells), actor.tenantId);
      // The same customer twice (concatenated or re-run exports) would be imported twice,
      // with its opening balance counted twice; the first row wins.
      const firstLine = firstLineByExternalId.get(record.externalId);
      if (firstLine !== undefined) {
        throw new ImportError(`Duplicate externalId ${record.externalId} (first seen on line ${firstLine})`);
      }
      firstLineByExternalId.set(record.externalId, line);
      accepted.push(record);
    } catch (err) {
      if (!(err instanceof ImportError)) {
        throw err;
      }
      rejected.push({ line, reason: err.message });
    }
  });

  const rates = new Map();
  for (const currency of new Set(accepted.map((record) => record.currency))) {
    if (currency !== accountCurrency) {
      rates.set(currency, await fx.rate(currency, accountCurrency));
    }
  }
  for (const record of accepted) {
    if (record.balanceCurrency !== accountCurrency) {
      const rate = rates.get(record.balanceCurrency);
      record.balanceCents = Math.round(record.openingBalance.cents * rate);
      record.balanceCurrency = accountCurrency;
      record.openingBalance.fxRate = rate;
    }
  }
  return { accepted, rejected };
}
