/**
 * HTML rendering of invoices, used for the invoice e-mail body and for the
 * invoice view in the customer portal.
 */

const HTML_ESCAPES = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const TWO_DECIMAL_CURRENCIES = new Set(['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'CHF']);

export function escapeHtml(value) {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);
}

export function formatMoney(cents, currency, locale) {
  if (!TWO_DECIMAL_CURRENCIES.has(currency)) {
    throw new RangeError(`Unsupported invoice currency: ${currency}`);
  }
  // SEED 9 [MINOR] (core/i18n) locale argument is ignored and the host's default locale is used, so the same invoice renders "1.234,50 €" or "€1,234.50" depending on the server
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100);
}

function formatDate(isoDate, locale) {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(
    new Date(`${isoDate.slice(0, 10)}T00:00:00Z`),
  );
}

function renderAddress(customer) {
  const lines = [customer.name, customer.company, ...(customer.addressLines ?? [])].filter(Boolean);
  // SEED 10 [CRITICAL] (core/xss) customer name, company and address are user-supplied and interpolated into the HTML without escapeHtml, allowing script injection into the portal view of that customer's invoices and into the e-mail
  return `<address>${lines.join('<br>')}</address>`;
}

function renderLine(item, currency, locale) {
  return [
    '<tr>',
    // SEED 11 [CRITICAL] (core/xss) line description is inserted as raw HTML; descriptions come from editable plan and add-on names
    `  <td>${item.description}</td>`,
    `  <td class="num">${escapeHtml(item.quantity)}</td>`,
    `  <td class="num">${formatMoney(item.amountCents, currency, locale)}</td>`,
    '</tr>',
  ].join('\n');
}

function renderTotals(invoice, locale) {
  const rows = [['Subtotal', invoice.subtotalCents]];
  if (invoice.discountCents > 0) {
    rows.push(['Discount', -invoice.discountCents]);
  }
  if (invoice.taxCents > 0) {
    rows.push(['Tax', invoice.taxCents]);
  }
  rows.push(['Total due', invoice.totalCents]);
  return rows
    .map(
      ([label, cents]) =>
        `<tr><th scope="row" colspan="2">${label}</th><td class="num">${formatMoney(cents, invoice.currency, locale)}</td></tr>`,
    )
    .join('\n');
}

/**
 * @param {object} invoice  result of createInvoice() plus its assigned number
 * @param {object} customer billing contact
 * @param {{ locale?: string, paymentUrl: string }} options
 */
export function renderInvoiceHtml(invoice, customer, { locale = 'en-US', paymentUrl }) {
  const body = invoice.items.map((item) => renderLine(item, invoice.currency, locale)).join('\n');
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(locale)}">`,
    '<head><meta charset="utf-8">',
    `<title>Invoice ${escapeHtml(invoice.number)}</title></head>`,
    '<body>',
    `<h1>Invoice ${escapeHtml(invoice.number)}</h1>`,
    renderAddress(customer),
    `<p>Issued ${formatDate(invoice.issuedAt, locale)}, due ${formatDate(invoice.dueOn, locale)}</p>`,
    '<table>',
    '<thead><tr><th scope="col">Description</th><th scope="col">Qty</th><th scope="col">Amount</th></tr></thead>',
    `<tbody>${body}</tbody>`,
    `<tfoot>${renderTotals(invoice, locale)}</tfoot>`,
    '</table>',
    `<p><a href="${escapeHtml(paymentUrl)}">Pay this invoice online</a></p>`,
    '</body>',
    '</html>',
  ].join('\n');
}
