import AsyncStorage from "@react-native-async-storage/async-storage";

export const API_URL = "https://api.northwell-clinic.example/v1";
const AUTH_URL = "https://auth.northwell-clinic.example";
const CLIENT_ID = "patient-mobile";
// SEED 1 [BLOCKER] (core/hardcoded-secrets) OAuth client secret compiled into the app bundle; anyone can unzip the APK/IPA, extract it and impersonate the app against the auth server
const CLIENT_SECRET = "cs-prod-7e1d94b2a6f04c3f8b5a90d2e6c1f47a";
const SESSION_KEY = "@northwell/session";

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
  const raw = await AsyncStorage.getItem(SESSION_KEY);
  current = raw ? (JSON.parse(raw) as Session) : null;
  return current;
}

async function saveSession(session: Session | null): Promise<void> {
  current = session;
  if (session) {
    // SEED 3 [MAJOR] (core/insecure-storage) access and refresh tokens written to AsyncStorage, which is unencrypted plain files on device and readable from backups or rooted phones; use Keychain/Keystore
    await AsyncStorage.setItem(SESSION_KEY, JSON.stringify(session));
  } else {
    await AsyncStorage.removeItem(SESSION_KEY);
  }
  listeners.forEach((listener) => listener(session));
}

// SEED 5 [MAJOR] (core/missing-timeout) every API, token and refresh call goes through this fetch with no timeout, so a stalled mobile connection hangs sign-in and screens indefinitely
async function send(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init);
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
  const body = new URLSearchParams({ ...params, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
  const response = await send(`${AUTH_URL}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    body: body.toString(),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  // SEED 2 [CRITICAL] (core/secrets-in-logs) logs the raw token response (access and refresh tokens) to the device log, which release builds still write to logcat/syslog
  console.log("token response", response.status, json);
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

// BORDERLINE 2 resource-owner password grant; whether it is acceptable instead of Authorization Code + PKCE depends on the auth server's policy, outside this diff
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

async function validAccessToken(): Promise<string> {
  if (!current) throw new AuthError("Not signed in");
  // SEED 15 [INFO] (core/magic-number) unexplained 60000 is the token-expiry safety margin; name it so the unit and intent are clear
  if (current.expiresAt - Date.now() > 60000) return current.accessToken;
  // SEED 4 [MAJOR] (core/race-condition) concurrent callers each start their own refresh with the same single-use refresh token; the losers get invalid_grant and the patient is signed out at random
  const refreshed = await refreshSession(current.refreshToken);
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
  const refreshed = await refreshSession(current.refreshToken);
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

const DIRECTORY_URL = "https://directory.northwell-clinic.example/v2";
// SEED 17 [BLOCKER] (core/hardcoded-secrets) staff-directory service key compiled into the app bundle; anyone who unpacks the APK/IPA can call the directory API with the clinic's own credential
const DIRECTORY_API_KEY = "dirsvc-3b8e61f0c94a4d27a15e7c02b9f8d6e4";

async function directoryFetch<T>(path: string): Promise<T> {
  const response = await send(`${DIRECTORY_URL}${path}`, {
    headers: { Accept: "application/json", "X-Directory-Key": DIRECTORY_API_KEY },
  });
  if (!response.ok) {
    throw new ApiError(response.status, `Request failed (${response.status})`);
  }
  return (await response.json()) as T;
}

export function getDoctor(id: string): Promise<Doctor> {
  return directoryFetch(`/doctors/${encodeURIComponent(id)}`);
}

/** Batch lookup by id, returned in no particular order. */
export function getDoctors(ids: string[]): Promise<Doctor[]> {
  return directoryFetch(`/doctors?ids=${ids.map(encodeURIComponent).join(",")}`);
}
