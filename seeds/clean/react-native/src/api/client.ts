import * as Keychain from "react-native-keychain";

export const API_URL = "https://api.northwell-clinic.example/v1";
const AUTH_URL = "https://auth.northwell-clinic.example";
/** Registered as a public client: the app holds no client secret. */
const CLIENT_ID = "patient-mobile";
const KEYCHAIN_SERVICE = "northwell.session";
const REQUEST_TIMEOUT_MS = 20_000;
/** Refresh this long before the access token expires, to absorb clock skew and slow networks. */
const EXPIRY_SKEW_MS = 60_000;

export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  patientId: string;
}

export interface Doctor {
  id: string;
  name: string;
  specialty: string;
  photoUrl: string | null;
}

export interface Appointment {
  id: string;
  doctorId: string;
  title: string;
  status: "booked" | "checked_in" | "completed" | "cancelled";
  /** ISO 8601 timestamp with offset. */
  startsAt: string;
  durationMinutes: number;
  location: string;
  /** Free text entered by the clinic when the appointment is booked. */
  preparationNotes: string;
  videoUrl: string | null;
}

export interface Page<T> {
  items: T[];
  page: number;
  totalPages: number;
}

export class ApiError extends Error {
  constructor(public readonly status: number, message: string) {
    super(message);
    this.name = "ApiError";
  }
}

export class AuthError extends Error {
  name = "AuthError";
}

type SessionListener = (session: Session | null) => void;

let current: Session | null = null;
/** Bumped by every sign-out: a token response for a request started before it is never stored. */
let generation = 0;
const listeners = new Set<SessionListener>();

export function onSessionChange(listener: SessionListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function loadSession(): Promise<Session | null> {
  const stored = await Keychain.getGenericPassword({ service: KEYCHAIN_SERVICE });
  current = stored ? (JSON.parse(stored.password) as Session) : null;
  return current;
}

// BORDERLINE 3 memory is updated before the Keychain write and listeners run only if it succeeds, so a failing Keychain reset on sign-out leaves the stored session and the signed-in UI; whether the platform Keychain can fail here is outside this diff
async function saveSession(session: Session | null): Promise<void> {
  current = session;
  if (session) {
    await Keychain.setGenericPassword("session", JSON.stringify(session), {
      service: KEYCHAIN_SERVICE,
      accessible: Keychain.ACCESSIBLE.WHEN_UNLOCKED_THIS_DEVICE_ONLY,
    });
  } else {
    await Keychain.resetGenericPassword({ service: KEYCHAIN_SERVICE });
  }
  listeners.forEach((listener) => listener(session));
}

async function send(url: string, init: RequestInit): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    return await fetch(url, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A refresh response may omit refresh_token (RFC 6749 section 6) and patient_id; the
 * previous session's values are kept then. A response without a usable access token
 * or lifetime is rejected instead of being stored as the string "undefined".
 */
function toSession(json: Record<string, unknown>, previous: Session | null): Session {
  const expiresIn = Number(json.expires_in);
  const refreshToken = typeof json.refresh_token === "string" ? json.refresh_token : previous?.refreshToken;
  const patientId = typeof json.patient_id === "string" ? json.patient_id : previous?.patientId;
  if (typeof json.access_token !== "string" || !Number.isFinite(expiresIn) || expiresIn <= 0 || !refreshToken || !patientId) {
    throw new ApiError(502, "Malformed token response");
  }
  return {
    accessToken: json.access_token,
    refreshToken,
    expiresAt: Date.now() + expiresIn * 1000,
    patientId,
  };
}

async function tokenRequest(params: Record<string, string>, previous: Session | null = null): Promise<Session> {
  const startedIn = generation;
  const body = new URLSearchParams({ ...params, client_id: CLIENT_ID });
  const response = await send(`${AUTH_URL}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    body: body.toString(),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  console.log("token response", response.status);
  // Only 400/401 (invalid_grant, invalid_client) reject the credentials; 429 and 5xx are
  // transient and must not end the session.
  if (response.status === 400 || response.status === 401) {
    throw new AuthError(typeof json.error_description === "string" ? json.error_description : "Sign-in failed");
  }
  if (!response.ok) {
    throw new ApiError(response.status, `Token request failed (${response.status})`);
  }
  const session = toSession(json, previous);
  if (startedIn !== generation) {
    // The patient signed out while this request ran: storing it would sign them back in.
    if (session.refreshToken !== previous?.refreshToken) void revoke(session.refreshToken);
    throw new AuthError("Signed out");
  }
  await saveSession(session);
  return session;
}

// BORDERLINE 1 resource-owner password grant; acceptable for a first-party public client only if the auth server's policy allows it instead of PKCE
export function signIn(email: string, password: string): Promise<Session> {
  return tokenRequest({ grant_type: "password", username: email, password, scope: "openid appointments" });
}

async function revoke(refreshToken: string): Promise<void> {
  try {
    await send(`${AUTH_URL}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: refreshToken, client_id: CLIENT_ID }).toString(),
    });
  } catch (err) {
    console.warn("token revocation failed", err instanceof Error ? err.message : String(err));
  }
}

export async function signOut(): Promise<void> {
  generation += 1;
  refreshInFlight = null;
  const session = current;
  await saveSession(null);
  if (!session) return;
  await revoke(session.refreshToken);
}

/** A rejected refresh token ends the session; network failures leave it for a retry. */
async function refreshSession(refreshToken: string): Promise<Session> {
  const startedIn = generation;
  try {
    return await tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken }, current);
  } catch (err) {
    // Only the session whose refresh token was rejected ends, not one signed in since.
    if (err instanceof AuthError && startedIn === generation) await signOut();
    throw err;
  }
}

/** Shared by all callers while a refresh is running, so the refresh token is used once. */
let refreshInFlight: Promise<Session> | null = null;

function sharedRefresh(session: Session): Promise<Session> {
  if (!refreshInFlight) {
    const refresh: Promise<Session> = refreshSession(session.refreshToken).finally(() => {
      if (refreshInFlight === refresh) refreshInFlight = null;
    });
    refreshInFlight = refresh;
  }
  return refreshInFlight;
}

async function validAccessToken(): Promise<string> {
  if (!current) throw new AuthError("Not signed in");
  if (current.expiresAt - Date.now() > EXPIRY_SKEW_MS) return current.accessToken;
  const refreshed = await sharedRefresh(current);
  return refreshed.accessToken;
}

/**
 * The API rejected `rejected` although it looked valid here (device clock moved, server-side
 * rotation): refresh once, unless another caller already replaced the token. A rejected
 * refresh token signs out in refreshSession.
 */
async function replacementAccessToken(rejected: string): Promise<string> {
  if (!current) throw new AuthError("Not signed in");
  if (current.accessToken !== rejected) return current.accessToken;
  const refreshed = await sharedRefresh(current);
  return refreshed.accessToken;
}

function sendAuthorized(path: string, init: { method?: string; body?: unknown }, token: string): Promise<Response> {
  return send(`${API_URL}${path}`, {
    method: init.method ?? "GET",
    headers: {
      Accept: "application/json",
      "Content-Type": "application/json",
      Authorization: `Bearer ${token}`,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

export async function apiFetch<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  let token = await validAccessToken();
  let response = await sendAuthorized(path, init, token);
  if (response.status === 401) {
    // A 401 means the request was not processed, so one retry with a fresh token is safe.
    token = await replacementAccessToken(token);
    response = await sendAuthorized(path, init, token);
  }
  if (response.status === 401) {
    // Only end the session this request used; a newer session from a concurrent sign-in stays.
    if (current?.accessToken === token) await signOut();
    throw new AuthError("Your session has expired");
  }
  if (!response.ok) {
    throw new ApiError(response.status, `Request failed (${response.status})`);
  }
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export function listAppointments(page: number): Promise<Page<Appointment>> {
  return apiFetch(`/appointments?upcoming=true&page=${page}`);
}

export function getAppointment(id: string): Promise<Appointment> {
  return apiFetch(`/appointments/${encodeURIComponent(id)}`);
}

export function cancelAppointment(id: string): Promise<Appointment> {
  return apiFetch(`/appointments/${encodeURIComponent(id)}/cancel`, { method: "POST" });
}

export function getDoctor(id: string): Promise<Doctor> {
  return apiFetch(`/doctors/${encodeURIComponent(id)}`);
}

/** Batch lookup by id, returned in no particular order. */
export function getDoctors(ids: string[]): Promise<Doctor[]> {
  return apiFetch(`/doctors?ids=${ids.map(encodeURIComponent).join(",")}`);
}
