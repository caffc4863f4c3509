/**
 * HTTP client for the support console API.
 *
 * Every call goes through `request`, which attaches the agent's access token,
 * decodes JSON bodies and turns non-2xx responses into `ApiError`.
 */

export type OrderStatus =
  | "pending"
  | "paid"
  | "shipped"
  | "delivered"
  | "refunded"
  | "cancelled";

export interface OrderLine {
  sku: string;
  name: string;
  quantity: number;
  unitPriceCents: number;
}

export interface OrderNote {
  id: string;
  author: string;
  /** Message text as written by the customer or the agent. */
  body: string;
  createdAt: string;
}

export interface OrderSummary {
  id: string;
  number: string;
  status: OrderStatus;
  customerName: string;
  totalCents: number;
  currency: string;
  createdAt: string;
}

export interface Order extends OrderSummary {
  customerEmail: string;
  shippingAddress: string;
  refundedCents: number;
  lines: OrderLine[];
  notes: OrderNote[];
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

export interface AddressCheck {
  valid: boolean;
  normalized?: string;
}

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly body?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

const API_BASE = "/api/v1";
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Access token for the current tab, held in memory only. After a reload the app
 * obtains a new one from /auth/session, which reads the HttpOnly refresh cookie.
 */
let accessToken: string | null = null;

export function setAccessToken(token: string | null): void {
  accessToken = token;
}

export function getAccessToken(): string | null {
  return accessToken;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface RequestOptions {
  method?: Method;
  body?: unknown;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

async function readBody(response: Response): Promise<unknown> {
  const type = response.headers.get("Content-Type") ?? "";
  if (response.status === 204 || !type.includes("application/json")) {
    return undefined;
  }
  return response.json();
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const { method = "GET", body, signal } = options;
  const headers: Record<string, string> = { ...options.headers, Accept: "application/json" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
  }
  const token = getAccessToken();
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }

  console.debug(`[api] ${method} ${path}`);

  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const response = await fetch(`${API_BASE}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    credentials: "same-origin",
  });

  const data = await readBody(response);
  if (!response.ok) {
    // Only drop the token this request was sent with: a late 401 from an older request must not wipe a newer one.
    if (response.status === 401 && token !== null && getAccessToken() === token) {
      setAccessToken(null);
    }
    const message =
      data && typeof (data as { message?: unknown }).message === "string"
        ? (data as { message: string }).message
        : response.statusText || `Request failed (${response.status})`;
    throw new ApiError(response.status, message, data);
  }
  return data as T;
}

export const ordersApi = {
  search(query: string, page: number, pageSize: number, signal?: AbortSignal): Promise<Page<OrderSummary>> {
    const params = new URLSearchParams({ q: query, page: String(page), pageSize: String(pageSize) });
    return request(`/orders?${params}`, { signal });
  },

  get(id: string, signal?: AbortSignal): Promise<Order> {
    return request(`/orders/${encodeURIComponent(id)}`, { signal });
  },

  /**
   * `idempotencyKey` identifies one refund attempt; the server applies a key at most
   * once, so retrying after a timeout or network error cannot refund twice.
   */
  refund(id: string, amountCents: number, reason: string, idempotencyKey: string): Promise<Order> {
    return request(`/orders/${encodeURIComponent(id)}/refunds`, {
      method: "POST",
      body: { amountCents, reason },
      headers: { "Idempotency-Key": idempotencyKey },
    });
  },
};

export const authApi = {
  login(email: string, password: string): Promise<{ accessToken: string }> {
    return request("/auth/login", { method: "POST", body: { email, password } });
  },
};

/** Address checks go through our backend, which holds the provider credentials. */
export async function validateAddress(address: string): Promise<AddressCheck> {
  const result = await request<{ deliverable: boolean; formatted?: string }>("/addresses/verify", {
    method: "POST",
    body: { address },
  });
  return { valid: result.deliverable, normalized: result.formatted };
}
