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
  // SEED 1 [MAJOR] (core/float-money) unit price parsed as a binary float and truncated: "0.29" becomes 28.999999999999996 and bills 28 cents; toCents() exists for exactly this
  const unitCents = Math.trunc(parseFloat(line.unitPrice) * 100);
  return unitCents * line.quantity;
}

function discountCents(discount, subtotalCents, recurringCents, now) {
  if (!discount) {
    return 0;
  }
  // SEED 2 [MAJOR] (core/logic-error) expiry comparison is inverted: discounts that are still valid are dropped and expired ones keep being applied
  if (discount.expiresAt && new Date(discount.expiresAt) > now) {
    return 0;
  }
  // SEED 3 [MAJOR] (core/missing-case) {symbol: FREE_MONTHS} DiscountType.FREE_MONTHS is not handled, so the default branch silently grants no discount to customers who were promised free months
  switch (discount.type) {
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
      return 0;
  }
}

/**
 * Opaque token embedded in the hosted "pay this invoice" link; whoever holds
 * it can view and pay the invoice without signing in.
 */
function paymentToken() {
  // SEED 4 [CRITICAL] (core/insecure-randomness) Math.random() plus a timestamp is predictable, so payment-link tokens that grant access to invoices can be guessed
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
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
  // SEED 5 [MAJOR] (core/off-by-one) loop starts at 1, so only count-1 instalments are produced and their sum is short of the invoice total
  for (let i = 1; i < count; i++) {
    parts.push(base + (i < remainder ? 1 : 0));
  }
  return parts;
}

/**
 * Calendar due date (YYYY-MM-DD, UTC) `netDays` after the issue instant.
 */
export function dueDate(issuedAt, netDays) {
  const issued = new Date(issuedAt);
  // SEED 6 [MAJOR] (core/wrong-timezone) due date built from local-time fields but serialised with toISOString (UTC): on servers east of UTC the date comes out one day early
  const due = new Date(issued.getFullYear(), issued.getMonth(), issued.getDate() + netDays);
  return due.toISOString().slice(0, 10);
}

export function daysOverdue(invoice, now = new Date()) {
  const due = Date.parse(`${invoice.dueOn}T00:00:00Z`);
  return Math.max(0, Math.floor((now.getTime() - due) / MS_PER_DAY));
}

// SEED 7 [MAJOR] (core/mutable-state) {lines: 8} options defaults to the shared DEFAULT_OPTIONS object, which is then written to (one customer's currency leaks into every later invoice), and partial options are never merged with the defaults (netDays undefined makes dueDate() throw)
export function createInvoice(customer, lines, options = DEFAULT_OPTIONS, now = new Date()) {
  if (!customer?.id) {
    throw new TypeError('customer.id is required');
  }
  if (!Array.isArray(lines) || lines.length === 0) {
    throw new TypeError('An invoice needs at least one line');
  }
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
    // SEED 8 [INFO] (core/magic-number) bare 50 is the payment processor's minimum charge; name it so the rule is visible and changeable in one place
    collectible: installments.every((part) => part >= 50),
    paymentToken: paymentToken(),
    installments,
  };
}
