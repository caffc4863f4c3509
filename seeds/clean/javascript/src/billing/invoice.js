/**
 * Invoice construction for subscription billing.
 *
 * Catalogue prices arrive as decimal strings ("19.99"); every amount that
 * leaves this module is an integer number of minor units (cents).
 */

export const DiscountType = Object.freeze({
  PERCENT: 'percent',
  FIXED: 'fixed',
  FREE_MONTHS: 'free_months',
});

const DEFAULT_OPTIONS = {
  currency: 'USD',
  netDays: 30,
  taxRate: 0,
  installments: 1,
};

const MS_PER_DAY = 24 * 60 * 60 * 1000;
/** Smallest amount the payment processor will charge; below it the invoice is not collected. */
const MINIMUM_CHARGE_CENTS = 50;

/**
 * Parses a decimal amount with at most two fractional digits into cents.
 * @param {string|number} amount
 * @returns {number}
 */
export function toCents(amount) {
  const match = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(String(amount).trim());
  if (!match) {
    throw new RangeError(`Invalid amount: ${amount}`);
  }
  const [, sign, whole, fraction = ''] = match;
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`Amount out of range: ${amount}`);
  }
  return sign ? -cents : cents;
}

function sum(values) {
  return values.reduce((total, value) => total + value, 0);
}

function lineTotalCents(line) {
  if (!Number.isInteger(line.quantity) || line.quantity <= 0) {
    throw new RangeError(`Invalid quantity for "${line.description}": ${line.quantity}`);
  }
  const unitCents = toCents(line.unitPrice);
  if (unitCents < 0) {
    // Credits are not invoice lines: a negative price would turn the subtotal, the discounts
    // and the tax negative.
    throw new RangeError(`Invalid unit price for "${line.description}": ${line.unitPrice}`);
  }
  const amountCents = unitCents * line.quantity;
  if (!Number.isSafeInteger(amountCents)) {
    throw new RangeError(`Line total out of range for "${line.description}"`);
  }
  return amountCents;
}

function discountCents(discount, subtotalCents, recurringCents, now) {
  if (!discount) {
    return 0;
  }
  if (discount.expiresAt && new Date(discount.expiresAt) <= now) {
    return 0;
  }
  switch (discount.type) {
    case DiscountType.FREE_MONTHS:
      return recurringCents;
    case DiscountType.PERCENT:
      if (!Number.isFinite(discount.percent) || discount.percent < 0 || discount.percent > 100) {
        throw new RangeError(`Invalid discount percent: ${discount.percent}`);
      }
      return Math.round((subtotalCents * discount.percent) / 100);
    case DiscountType.FIXED: {
      const amountCents = toCents(discount.amount);
      if (amountCents < 0) {
        throw new RangeError(`Invalid discount amount: ${discount.amount}`);
      }
      return Math.min(amountCents, subtotalCents);
    }
    default:
      throw new TypeError(`Unknown discount type: ${discount.type}`);
  }
}

/**
 * Opaque token embedded in the hosted "pay this invoice" link; whoever holds
 * it can view and pay the invoice without signing in.
 */
function paymentToken() {
  const bytes = new Uint8Array(24);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Splits a total into `count` instalments that differ by at most one cent and
 * add up exactly to the total.
 */
export function splitIntoInstallments(totalCents, count) {
  if (!Number.isSafeInteger(totalCents) || totalCents < 0) {
    throw new RangeError(`Invalid total: ${totalCents}`);
  }
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`Invalid instalment count: ${count}`);
  }
  const base = Math.floor(totalCents / count);
  const remainder = totalCents - base * count;
  const parts = [];
  for (let i = 0; i < count; i++) {
    parts.push(base + (i < remainder ? 1 : 0));
  }
  return parts;
}

/**
 * Calendar due date (YYYY-MM-DD, UTC) `netDays` after the issue instant.
 */
export function dueDate(issuedAt, netDays) {
  const issued = new Date(issuedAt);
  const due = new Date(Date.UTC(issued.getUTCFullYear(), issued.getUTCMonth(), issued.getUTCDate() + netDays));
  return due.toISOString().slice(0, 10);
}

export function daysOverdue(invoice, now = new Date()) {
  const due = Date.parse(`${invoice.dueOn}T00:00:00Z`);
  return Math.max(0, Math.floor((now.getTime() - due) / MS_PER_DAY));
}

export function createInvoice(customer, lines, overrides = {}, now = new Date()) {
  if (!customer?.id) {
    throw new TypeError('customer.id is required');
  }
  if (!Array.isArray(lines) || lines.length === 0) {
    throw new TypeError('An invoice needs at least one line');
  }
  const options = { ...DEFAULT_OPTIONS, ...overrides };
  // BORDERLINE 1 the customer's billing currency takes precedence over overrides.currency, which only applies to customers without one, and amounts are not converted: correct if callers price lines in the customer's currency, which no caller in this diff shows either way
  options.currency = customer.currency || options.currency;

  const items = lines.map((line) => ({
    description: line.description,
    quantity: line.quantity,
    recurring: Boolean(line.recurring),
    amountCents: lineTotalCents(line),
  }));
  const subtotalCents = sum(items.map((item) => item.amountCents));
  const recurringCents = sum(items.filter((item) => item.recurring).map((item) => item.amountCents));
  const discount = discountCents(customer.discount, subtotalCents, recurringCents, now);
  // A fraction (0.2 for 20 %); a percentage such as 20, a string or NaN is rejected.
  if (typeof options.taxRate !== 'number' || !(options.taxRate >= 0 && options.taxRate <= 1)) {
    throw new RangeError(`Invalid tax rate: ${options.taxRate}`);
  }
  const taxCents = Math.round((subtotalCents - discount) * options.taxRate);
  const totalCents = subtotalCents - discount + taxCents;
  const installments =
    options.installments > 1 ? splitIntoInstallments(totalCents, options.installments) : [totalCents];

  return {
    customerId: customer.id,
    currency: options.currency,
    issuedAt: now.toISOString(),
    dueOn: dueDate(now, options.netDays),
    items,
    subtotalCents,
    discountCents: discount,
    taxCents,
    totalCents,
    collectible: installments.every((part) => part >= MINIMUM_CHARGE_CENTS),
    paymentToken: paymentToken(),
    installments,
  };
}
