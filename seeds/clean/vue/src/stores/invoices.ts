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
const REQUEST_TIMEOUT_MS = 15_000;

/** Incremented per list request; only the newest response may update the store. */
let latestListRequest = 0;

/**
 * One idempotency key per invoice payment, kept until the server confirms it: a retry after a
 * timeout or a lost response reuses the key, so the billing API records the payment only once.
 */
const pendingPaymentKeys = new Map<string, string>();

function paymentKey(invoiceId: string): string {
  let key = pendingPaymentKeys.get(invoiceId);
  if (key === undefined) {
    key = crypto.randomUUID();
    pendingPaymentKeys.set(invoiceId, key);
  }
  return key;
}

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
  return invoice.status === "open" && invoice.dueOn < today;
}

/** Decimal string to integer minor units, so sums stay exact. */
function toCents(amount: string): number {
  return Math.round(Number(amount) * 100);
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
      return [...state.invoices].sort((a, b) => compare(a, b, state.sortBy) * direction);
    },

    outstanding(state): number {
      const cents = state.invoices.filter((i) => i.status === "open").reduce((sum, i) => sum + toCents(i.amount), 0);
      return cents / 100;
    },

    byId(state): (id: string) => Invoice | undefined {
      return (id) => state.invoices.find((i) => i.id === id);
    },
  },

  actions: {
    async fetchInvoices() {
      const request = ++latestListRequest;
      this.loading = true;
      this.error = null;
      const params = new URLSearchParams({ status: this.status, q: this.search });
      // BORDERLINE 1 loads every matching invoice and paginates client-side; fine only while accounts stay at a few hundred invoices
      try {
        const data = await send<InvoiceList>(`${API_BASE}/invoices?${params}`);
        if (request !== latestListRequest) return;
        this.invoices = data.items;
        this.currency = data.currency;
      } catch (err) {
        if (request === latestListRequest) this.error = messageOf(err);
      } finally {
        if (request === latestListRequest) this.loading = false;
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

    /** Records a manual payment for each open invoice in ids; invoices in any other status are left alone. */
    async markPaid(ids: string[]) {
      const payable = ids.filter((id) => this.byId(id)?.status === "open");
      const paid = new Set<string>();
      const failed: string[] = [];
      for (const id of payable) {
        try {
          await send(`${API_BASE}/invoices/${encodeURIComponent(id)}/payments`, {
            method: "POST",
            headers: { "Idempotency-Key": paymentKey(id) },
            body: JSON.stringify({ method: "manual" }),
          });
          pendingPaymentKeys.delete(id);
          paid.add(id);
        } catch (err) {
          console.error(`marking invoice ${id} as paid failed`, err);
          failed.push(id);
        }
      }
      this.invoices = this.invoices.map((i) => (paid.has(i.id) ? { ...i, status: "paid" as const } : i));
      if (failed.length > 0) {
        throw new Error(`${failed.length} of ${payable.length} invoices could not be marked as paid.`);
      }
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
      const response = await fetch(`${API_BASE}/exports?${params}`, {
        credentials: "same-origin",
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (!response.ok) throw new HttpError(response.status, "Export failed");
      return response.blob();
    },
  },
});
