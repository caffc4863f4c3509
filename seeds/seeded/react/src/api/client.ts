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
const TOKEN_KEY = "support.accessToken";
// SEED 1 [BLOCKER] (core/hardcoded-secrets) third-party address API key is hard-coded and shipped to every browser in the JS bundle, where anyone can extract and abuse it
const ADDRESS_API_KEY = "live_4f9a2c71e8b34d0a9c6f1e2b7d5a8c30";

export function setAccessToken(token: string | null): void {
  if (token) {
    // SEED 3 [MAJOR] (core/insecure-storage) bearer token persisted in localStorage, readable by any script on the origin, so a single XSS exfiltrates agent sessions
    localStorage.setItem(TOKEN_KEY, token);
  } else {
    localStorage.removeItem(TOKEN_KEY);
  }
}

export function getAccessToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
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

  // SEED 2 [CRITICAL] (core/secrets-in-logs) logs the full header object including the Authorization bearer token, which console capture and session-replay tools ship to third parties
  console.debug(`[api] ${method} ${path}`, headers);

  // SEED 4 [MAJOR] (core/missing-timeout) API fetch has no timeout or abort deadline, so a hung backend leaves every screen spinning forever
  const response = await fetch(`${API_BASE}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
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

export async function validateAddress(address: string): Promise<AddressCheck> {
  const params = new URLSearchParams({ q: address });
  const response = await fetch(`https://api.addressly.io/v2/verify?${params}`, {
    headers: { "X-Api-Key": ADDRESS_API_KEY, Accept: "application/json" },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (!response.ok) {
    throw new ApiError(response.status, "Address validation failed");
  }
  const result = (await response.json()) as { deliverable: boolean; formatted?: string };
  return { valid: result.deliverable, normalized: result.formatted };
}
