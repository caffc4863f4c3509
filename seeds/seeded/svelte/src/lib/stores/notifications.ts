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
  // SEED 10 [MINOR] (core/inefficient-algorithm) findIndex inside filter is quadratic in the list size and runs on every frame; a Set of seen ids does the same in linear time
  const unique = combined.filter((n, index) => combined.findIndex((m) => m.id === n.id) === index);
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

    let socket: WebSocket;

    function connect() {
      socket = new WebSocket(streamUrl());
      socket.onmessage = (event) => {
        const incoming = parseMessage(event.data);
        if (incoming.length > 0) update((current) => merge(current, incoming));
      };
      // SEED 8 [MAJOR] (core/retry-storm) reconnects immediately and forever on every close, so a server restart or an auth rejection turns every open tab into a tight reconnect loop hammering the API
      socket.onclose = () => connect();
    }

    // SEED 9 [MAJOR] (core/memory-leak) the start function returns no stop callback, so the socket (and its reconnect loop) stays open after the last subscriber unsubscribes and a new one is opened on each resubscribe
    connect();
  });

  /** Marks unread notifications as read: only those of `projectId` when given, otherwise all. */
  async function markAllRead(projectId?: string): Promise<void> {
    const ids = get(store)
      .filter((n) => !n.read && (projectId === undefined || n.projectId === projectId))
      .map((n) => n.id);
    if (ids.length === 0) return;
    const marked = new Set(ids);
    store.update((current) => current.map((n) => (marked.has(n.id) ? { ...n, read: true } : n)));
    // SEED 11 [MAJOR] (core/swallowed-error) network failures are discarded and HTTP errors are never checked, so the badge shows everything read while the server still has them unread
    await fetch("/api/notifications/read", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ids }),
    }).catch(() => {});
  }

  function forProject(projectId: string): Readable<Notification[]> {
    return derived(store, ($notifications) => $notifications.filter((n) => n.projectId === projectId));
  }

  return { subscribe: store.subscribe, markAllRead, forProject };
}

export const notifications = createNotificationStore();

export const unreadCount = derived(notifications, ($notifications) => $notifications.filter((n) => !n.read).length);
