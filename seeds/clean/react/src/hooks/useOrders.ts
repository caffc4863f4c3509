import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, Order, OrderSummary, ordersApi } from "../api/client";

export const PAGE_SIZE = 25;
const POLL_INTERVAL_MS = 30_000;

export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 404) return "This order no longer exists.";
    if (err.status === 403) return "You do not have access to this order.";
    return err.message;
  }
  if (err instanceof DOMException && err.name === "TimeoutError") {
    return "The server took too long to respond.";
  }
  return "Something went wrong. Please try again.";
}

interface SearchState {
  orders: OrderSummary[];
  total: number;
  /** Page size the server actually used for this result (it is asked for PAGE_SIZE). */
  pageSize: number;
  loading: boolean;
  error: string | null;
}

const initialSearch: SearchState = { orders: [], total: 0, pageSize: PAGE_SIZE, loading: false, error: null };

/**
 * Orders matching `query`, one page at a time. Re-runs whenever the query or the
 * page changes; the caller debounces typing.
 */
export function useOrderSearch(query: string, page: number) {
  const [state, setState] = useState<SearchState>(initialSearch);

  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    ordersApi
      .search(query, page, PAGE_SIZE, controller.signal)
      .then((result) => {
        if (controller.signal.aborted) return;
        const pageSize = Number.isInteger(result.pageSize) && result.pageSize > 0 ? result.pageSize : PAGE_SIZE;
        setState({ orders: result.items, total: result.total, pageSize, loading: false, error: null });
      })
      .catch((err: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, loading: false, error: describeError(err) }));
      });
    return () => controller.abort();
  }, [query, page]);

  const pageCount = Math.ceil(state.total / state.pageSize);

  return { ...state, pageCount };
}

/**
 * One order, kept fresh by polling while the details panel is open.
 * `refresh` can be called after a mutation to reload immediately.
 */
export function useOrder(orderId: string) {
  const [order, setOrder] = useState<Order | null>(null);
  const [error, setError] = useState<string | null>(null);
  const requestSeq = useRef(0);
  // The order shown now: a refresh captured for an earlier order (a refund's onRefunded finishing after the
  // panel switched to another order) must not put that order on screen.
  const shownOrderId = useRef(orderId);
  shownOrderId.current = orderId;

  const refresh = useCallback(async () => {
    const seq = ++requestSeq.current;
    const current = () => seq === requestSeq.current && shownOrderId.current === orderId;
    try {
      const next = await ordersApi.get(orderId);
      if (current()) {
        setOrder(next);
        setError(null);
      }
    } catch (err) {
      if (current()) {
        setError(describeError(err));
      }
    }
  }, [orderId]);

  useEffect(() => {
    setOrder(null);
    void refresh();
    // BORDERLINE 1 polls every 30s even while the tab is hidden; acceptable or not depends on the API's load budget and how many agents keep panels open
    const timer = setInterval(() => void refresh(), POLL_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  return { order, error, loading: order === null && error === null, refresh };
}
