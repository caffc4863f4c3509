import { defineStore } from "pinia";

export type InvoiceStatus = "draft" | "open" | "paid" | "disputed" | "void";

export interface Invoice {
  id: string;
  number: string;
  customerName: string;
  customerEmail: string;
  /** Decimal string as returned by the billing API, e.g. "1249.90". */
  amount: string;
  status: InvoiceStatus;
  /** Calendar dates, YYYY-MM-DD. */
  issuedOn: string;
  dueOn: string;
  /** Reference or note the customer typed when accepting the quote. */
  memo: string;
}

export type SortKey = "dueOn" | "amount" | "customerName";

interface InvoiceList {
  items: Invoice[];
  currency: string;
}

interface State {
  invoices: Invoice[];
  currency: string;
  loading: boolean;
  error: string | null;
  status: InvoiceStatus | "all";
  search: string;
  sortBy: SortKey;
  sortDir: "asc" | "desc";
}

const API_BASE = "/api/billing";
const REPORTS_URL = "https://reports.acme-billing.example/api/v2/exports";
const REQUEST_TIMEOUT_MS = 15_000;
// SEED 1 [BLOCKER] (core/hardcoded-secrets) reporting service password hard-coded in browser code; every user can read it from the bundle and pull any tenant's exports
const REPORTS_AUTH = "Basic " + btoa("reports-svc:Tr0ub4dor&3-prod");

export class HttpError extends Error {
  constructor(public readonly status: number, message: string) {
    super(message);
    this.name = "HttpError";
  }
}

async function send<T>(url: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(url, {
    credentials: "same-origin",
    ...init,
    headers: { Accept: "application/json", "Content-Type": "application/json", ...init.headers },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (!response.ok) {
    throw new HttpError(response.status, `${init.method ?? "GET"} ${url} failed with ${response.status}`);
  }
  return (response.status === 204 ? undefined : await response.json()) as T;
}

function messageOf(err: unknown): string {
  return err instanceof HttpError && err.status === 403
    ? "You do not have access to these invoices."
    : "Invoices could not be loaded. Try again.";
}

/** Today's calendar date in the user's time zone, YYYY-MM-DD. */
export function localIsoDate(now = new Date()): string {
  const month = String(now.getMonth() + 1).padStart(2, "0");
  const day = String(now.getDate()).padStart(2, "0");
  return `${now.getFullYear()}-${month}-${day}`;
}

export function isOverdue(invoice: Invoice, today = localIsoDate()): boolean {
  // SEED 4 [MAJOR] (core/logic-error) comparison is inverted: invoices due in the future are flagged overdue and genuinely late ones are not, so reminders and dunning target the wrong customers
  return invoice.status === "open" && invoice.dueOn > today;
}

function compare(a: Invoice, b: Invoice, key: SortKey): number {
  if (key === "amount") return Number(a.amount) - Number(b.amount);
  return a[key].localeCompare(b[key]);
}

export const useInvoiceStore = defineStore("invoices", {
  state: (): State => ({
    invoices: [],
    currency: "USD",
    loading: false,
    error: null,
    status: "all",
    search: "",
    sortBy: "dueOn",
    sortDir: "asc",
  }),

  getters: {
    sorted(state): Invoice[] {
      const direction = state.sortDir === "asc" ? 1 : -1;
      // SEED 2 [MAJOR] (core/mutable-state) Array.prototype.sort reorders the reactive state array in place from inside a getter, mutating store state during render and re-triggering every dependent
      return state.invoices.sort((a, b) => compare(a, b, state.sortBy) * direction);
    },

    outstanding(state): number {
      // SEED 3 [MINOR] (core/float-money) summing parseFloat amounts accumulates binary rounding error (0.1 + 0.2 = 0.30000000000000004); currency formatting hides it today, but the total is not exact money and breaks as soon as it is compared or sent on
      return state.invoices.filter((i) => i.status === "open").reduce((sum, i) => sum + parseFloat(i.amount), 0);
    },

    byId(state): (id: string) => Invoice | undefined {
      return (id) => state.invoices.find((i) => i.id === id);
    },
  },

  actions: {
    async fetchInvoices() {
      this.loading = true;
      this.error = null;
      const params = new URLSearchParams({ status: this.status, q: this.search });
      try {
        const data = await send<InvoiceList>(`${API_BASE}/invoices?${params}`);
        // SEED 6 [MAJOR] (core/race-condition) responses are applied in arrival order, so a slow earlier search can overwrite the current one and "select all / mark paid" then acts on invoices outside the filter
        this.invoices = data.items;
        this.currency = data.currency;
      } catch (err) {
        this.error = messageOf(err);
      } finally {
        this.loading = false;
      }
    },

    setFilters(filters: { status?: InvoiceStatus | "all"; search?: string }) {
      if (filters.status !== undefined) this.status = filters.status;
      if (filters.search !== undefined) this.search = filters.search.trim();
      return this.fetchInvoices();
    },

    toggleSort(key: SortKey) {
      if (this.sortBy === key) {
        this.sortDir = this.sortDir === "asc" ? "desc" : "asc";
      } else {
        this.sortBy = key;
        this.sortDir = "asc";
      }
    },

    async markPaid(ids: string[]) {
      const payable = ids.filter((id) => this.byId(id)?.status === "open");
      for (const id of payable) {
        try {
          await send(`${API_BASE}/invoices/${encodeURIComponent(id)}/payments`, {
            method: "POST",
            body: JSON.stringify({ method: "manual" }),
          });
        // SEED 5 [MAJOR] (core/swallowed-error) failures are silently ignored and every selected open invoice is then shown as paid, so the UI claims payments the server never recorded
        } catch {}
      }
      this.invoices = this.invoices.map((i) => (payable.includes(i.id) ? { ...i, status: "paid" as const } : i));
    },

    /** The server renders the body from the account's saved template. */
    async sendInvoiceEmail(id: string, message: { to: string; subject: string }) {
      await send(`${API_BASE}/invoices/${encodeURIComponent(id)}/emails`, {
        method: "POST",
        body: JSON.stringify(message),
      });
    },

    async fetchEmailTemplate(): Promise<string> {
      const data = await send<{ body: string }>(`${API_BASE}/settings/email-templates/invoice`);
      return data.body;
    },

    async exportCsv(): Promise<Blob> {
      const params = new URLSearchParams({ status: this.status, q: this.search, format: "csv" });
      // SEED 16 [CRITICAL] (core/missing-authorization) {lines: 2} the export authenticates with one shared service account and sends no user session or tenant, so the reports service cannot scope the CSV to what the signed-in user may see
      const response = await fetch(`${REPORTS_URL}?${params}`, {
        headers: { Authorization: REPORTS_AUTH },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (!response.ok) throw new HttpError(response.status, "Export failed");
      return response.blob();
    },
  },
});
