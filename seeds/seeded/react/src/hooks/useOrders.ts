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
  loading: boolean;
  error: string | null;
}

const initialSearch: SearchState = { orders: [], total: 0, loading: false, error: null };

/**
 * Orders matching `query`, one page at a time. Re-runs whenever the query or the
 * page changes; the caller debounces typing.
 */
export function useOrderSearch(query: string, page: number) {
  const [state, setState] = useState<SearchState>(initialSearch);

  useEffect(() => {
    setState((s) => ({ ...s, loading: true, error: null }));
    // SEED 5 [MAJOR] (core/race-condition) request is never cancelled or ignored on cleanup, so a slow response for an older query can land last and overwrite the results for the current one
    ordersApi
      .search(query, page, PAGE_SIZE)
      .then((result) => {
        setState({ orders: result.items, total: result.total, loading: false, error: null });
      })
      // SEED 6 [MAJOR] (core/swallowed-error) failure is discarded and rendered as "no orders found", hiding outages and auth errors from the agent
      .catch(() => {
        setState({ orders: [], total: 0, loading: false, error: null });
      });
  }, [query, page]);

  // SEED 7 [MAJOR] (core/off-by-one) Math.floor drops the last partial page (e.g. 26 orders -> 1 page), so those orders can never be reached
  const pageCount = Math.floor(state.total / PAGE_SIZE);

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

  const refresh = useCallback(async () => {
    const seq = ++requestSeq.current;
    try {
      const next = await ordersApi.get(orderId);
      if (seq === requestSeq.current) {
        setOrder(next);
        setError(null);
      }
    } catch (err) {
      if (seq === requestSeq.current) {
        setError(describeError(err));
      }
    }
  }, []); // SEED 9 [MINOR] (core/missing-dependency) orderId missing from the dependency list, so after selecting another order refresh and polling keep loading the first one

  useEffect(() => {
    setOrder(null);
    void refresh();
    // SEED 8 [MAJOR] (core/memory-leak) interval is never cleared on unmount or when refresh changes, so closed panels keep polling the API forever and intervals pile up
    setInterval(() => void refresh(), POLL_INTERVAL_MS);
  }, [refresh]);

  return { order, error, loading: order === null && error === null, refresh };
}
