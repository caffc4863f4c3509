import { browser } from "$app/environment";
import { derived, get, writable, type Readable } from "svelte/store";

export interface Notification {
  id: string;
  projectId: string;
  kind: "comment" | "assigned" | "status_changed" | "mentioned";
  message: string;
  actorName: string;
  /** ISO 8601 timestamp. */
  createdAt: string;
  read: boolean;
}

/** How many notifications are kept client-side; older ones are available on the inbox page. */
const MAX_KEPT = 200;
const RECONNECT_BASE_MS = 1_000;
const RECONNECT_MAX_MS = 60_000;
/** A connection must stay open this long before the reconnect backoff starts over. */
const STABLE_AFTER_MS = 30_000;
/** Close code 1008 (policy violation): the server rejected the session; only a new sign-in can help. */
const CLOSE_POLICY_VIOLATION = 1008;

function streamUrl(): string {
  const protocol = location.protocol === "https:" ? "wss:" : "ws:";
  return `${protocol}//${location.host}/api/notifications/stream`;
}

function parseMessage(data: unknown): Notification[] {
  if (typeof data !== "string") return [];
  try {
    const parsed = JSON.parse(data) as Notification | Notification[];
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch (err) {
    console.warn("ignoring malformed notification frame", err);
    return [];
  }
}

function merge(current: Notification[], incoming: Notification[]): Notification[] {
  const combined = [...incoming, ...current];
  const seen = new Set<string>();
  const unique = combined.filter((n) => {
    if (seen.has(n.id)) return false;
    seen.add(n.id);
    return true;
  });
  return unique
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .slice(0, MAX_KEPT);
}

/**
 * Live notifications for the signed-in user. The socket is opened when the
 * first component subscribes.
 */
function createNotificationStore() {
  const store = writable<Notification[]>([], (set, update) => {
    if (!browser) return;

    let socket: WebSocket | null = null;
    let stopped = false;
    let attempts = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let stableTimer: ReturnType<typeof setTimeout> | undefined;

    function connect() {
      socket = new WebSocket(streamUrl());
      socket.onopen = () => {
        // Only a connection that stays up resets the backoff, so a server that accepts and
        // then drops the socket keeps backing off instead of being retried in a tight loop.
        stableTimer = setTimeout(() => {
          attempts = 0;
        }, STABLE_AFTER_MS);
      };
      socket.onmessage = (event) => {
        const incoming = parseMessage(event.data);
        if (incoming.length > 0) update((current) => merge(current, incoming));
      };
      socket.onclose = (event) => {
        clearTimeout(stableTimer);
        if (stopped) return;
        if (event.code === CLOSE_POLICY_VIOLATION) {
          // The server rejected this session: its notifications go, and the socket is retried only at the slowest
          // pace, so signing in again in this tab resumes live updates without hammering a server that refuses.
          set([]);
          retryTimer = setTimeout(connect, RECONNECT_MAX_MS);
          return;
        }
        const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** attempts);
        attempts += 1;
        retryTimer = setTimeout(connect, delay / 2 + Math.random() * (delay / 2));
      };
    }

    connect();
    return () => {
      stopped = true;
      clearTimeout(retryTimer);
      clearTimeout(stableTimer);
      socket?.close();
      // Drop the cached list so a later subscriber (possibly another signed-in user) starts empty.
      set([]);
    };
  });

  /** Marks unread notifications as read: only those of `projectId` when given, otherwise all. */
  async function markAllRead(projectId?: string): Promise<void> {
    const ids = get(store)
      .filter((n) => !n.read && (projectId === undefined || n.projectId === projectId))
      .map((n) => n.id);
    if (ids.length === 0) return;
    const marked = new Set(ids);
    store.update((current) => current.map((n) => (marked.has(n.id) ? { ...n, read: true } : n)));
    try {
      const response = await fetch("/api/notifications/read", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ids }),
      });
      if (!response.ok) {
        throw new Error(`marking notifications read failed (${response.status})`);
      }
    } catch (err) {
      store.update((current) => current.map((n) => (marked.has(n.id) ? { ...n, read: false } : n)));
      throw err;
    }
  }

  function forProject(projectId: string): Readable<Notification[]> {
    return derived(store, ($notifications) => $notifications.filter((n) => n.projectId === projectId));
  }

  return { subscribe: store.subscribe, markAllRead, forProject };
}

export const notifications = createNotificationStore();

export const unreadCount = derived(notifications, ($notifications) => $notifications.filter((n) => !n.read).length);
