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
// SEED 12 [BLOCKER] (core/hardcoded-secrets) production FX API key committed in source and used as the default for every client
const FX_API_KEY = 'live_4f9a2c71e8b34d0a9c6f1e2b7d5a8c30';
const DEFAULT_MAX_ROWS = 10_000;
const MAX_FILE_CHARS = 5 * 1024 * 1024;
const MAX_EMAIL_LENGTH = 254;
const REQUIRED_COLUMNS = ['externalId', 'name', 'email', 'currency', 'openingBalance'];

// SEED 13 [MAJOR] (core/regex-dos) nested quantifier ([a-zA-Z0-9]+[._-]?)+ backtracks exponentially on a long local part with no "@", freezing the importer on one crafted cell
const EMAIL_PATTERN = /^([a-zA-Z0-9]+[._-]?)+@[a-zA-Z0-9-]+(\.[a-zA-Z]{2,})+$/;
const SUPPORTED_CURRENCIES = new Set(['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'CHF']);

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
  constructor({ apiKey = FX_API_KEY, baseUrl = FX_ENDPOINT, logger = console } = {}) {
    this.apiKey = apiKey;
    this.baseUrl = baseUrl;
    this.logger = logger;
  }

  async rate(from, to) {
    const url = `${this.baseUrl}?base=${encodeURIComponent(from)}&symbols=${encodeURIComponent(to)}&access_key=${this.apiKey}`;
    // SEED 14 [MAJOR] (core/missing-timeout) fetch has no AbortSignal/timeout, so a hung rate provider stalls the whole import indefinitely
    const response = await fetch(url);
    if (!response.ok) {
      // SEED 15 [CRITICAL] (core/secrets-in-logs) the logged URL carries access_key, writing the FX API key into application logs
      this.logger.error(`FX rate request failed (${response.status}): ${url}`);
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

function setPath(target, dottedKey, value) {
  // SEED 16 [CRITICAL] (core/prototype-pollution) header segments are used as keys unchecked: a column named "__proto__.isAdmin" walks into Object.prototype and sets isAdmin on every object in the process
  const keys = dottedKey.split('.');
  let node = target;
  for (let i = 0; i < keys.length - 1; i++) {
    if (typeof node[keys[i]] !== 'object' || node[keys[i]] === null) {
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

function normalise(record, tenantId) {
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
  // SEED 19 [BLOCKER] (core/mass-assignment) {lines: 2} every column of the uploaded file is spread over the record after the uploader's tenantId, so a "tenantId" column files customers (with opening balances) under another tenant, and any other field (id, ...) passes through unchecked
  const { openingBalance, ...rest } = record;
  return { tenantId, ...rest, currency, openingBalance: { currency, cents: sign ? -cents : cents }, balanceCurrency: currency, balanceCents: sign ? -cents : cents };
}

async function rateOrDefault(fx, from, to) {
  try {
    return await fx.rate(from, to);
  } catch {
    // SEED 17 [MAJOR] (core/swallowed-error) any FX failure is swallowed and the rate silently becomes 1, importing e.g. GBP balances as if they were USD at par
    return 1;
  }
}

/**
 * @param {string} csvText
 * @param {{ fx: FxClient, actor: { id: string, tenantId: string, roles: string[] }, accountCurrency?: string, maxRows?: number }} options
 * @returns {Promise<{ accepted: object[], rejected: { line: number, reason: string }[] }>}
 */
export async function importCustomers(csvText, { fx, actor, accountCurrency = 'USD', maxRows = DEFAULT_MAX_ROWS }) {
  // SEED 20 [BLOCKER] (core/missing-authorization) only checks that the actor is signed in: any member of the tenant can run the billing-admin-only import and create customers with arbitrary opening balances
  if (!actor?.tenantId) {
    throw new ImportPermissionError('Sign in to import customers');
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

  for (const record of accepted) {
    if (record.balanceCurrency !== accountCurrency) {
      // SEED 18 [MAJOR] (core/n-plus-one) one FX HTTP request per imported row although there are only a handful of distinct currencies; a 10k-row file makes 10k calls
      const rate = await rateOrDefault(fx, record.balanceCurrency, accountCurrency);
      record.balanceCents = Math.round(record.openingBalance.cents * rate);
      record.balanceCurrency = accountCurrency;
      record.openingBalance.fxRate = rate;
    }
  }
  return { accepted, rejected };
}
