import { Injectable, inject } from '@angular/core';
import { HttpClient, HttpErrorResponse, HttpHeaders, HttpParams } from '@angular/common/http';
import { EMPTY, Observable, throwError, timer } from 'rxjs';
import { catchError, expand, reduce, retry, timeout } from 'rxjs/operators';

import { environment } from '../../environments/environment';

export enum TicketStatus {
  Open = 'open',
  Pending = 'pending',
  Escalated = 'escalated',
  Resolved = 'resolved',
  Closed = 'closed',
}

export type TicketPriority = 'low' | 'normal' | 'high' | 'urgent';

export interface Agent {
  id: string;
  name: string;
  avatarUrl: string;
}

export interface Ticket {
  id: string;
  subject: string;
  descriptionHtml: string;
  status: TicketStatus;
  priority: TicketPriority;
  requesterEmail: string;
  assignee: Agent | null;
  createdAt: string;
  updatedAt: string;
}

export interface TicketComment {
  id: string;
  ticketId: string;
  authorName: string;
  body: string;
  internal: boolean;
  createdAt: string;
}

export interface TicketPage {
  items: Ticket[];
  total: number;
  page: number;
  pageSize: number;
}

export interface TicketQuery {
  term: string;
  status?: TicketStatus;
  page: number;
  pageSize: number;
}

interface CommentListResponse {
  comments: TicketComment[];
  nextCursor: string | null;
}

const MAX_READ_RETRIES = 3;
/** Upper bound on comment pages per load, so a misbehaving cursor cannot loop forever. */
const MAX_COMMENT_PAGES = 50;
const RETRY_BASE_DELAY_MS = 500;
/**
 * Deadline for each read. HttpClient has none, and a stalled load would otherwise hang the
 * view (and stop the exhaustMap comment poller for good). Writes get none: aborting a POST
 * the server may still commit would invite a duplicate reply on retry.
 */
const READ_TIMEOUT_MS = 20_000;

function isRetryable(error: unknown): boolean {
  return error instanceof HttpErrorResponse && (error.status === 0 || error.status >= 500);
}

/**
 * Data access for the agent console's ticket workspace.
 *
 * All requests go through the backend's support proxy, which authenticates the agent and
 * holds the desk vendor credentials; components never build URLs themselves.
 */
@Injectable({ providedIn: 'root' })
export class TicketService {
  private readonly http = inject(HttpClient);
  private readonly baseUrl = `${environment.apiBaseUrl}/support/tickets`;

  search(query: TicketQuery): Observable<TicketPage> {
    let params = new HttpParams()
      .set('q', query.term)
      .set('page', query.page)
      .set('pageSize', query.pageSize);
    if (query.status) {
      params = params.set('status', query.status);
    }
    return this.http
      .get<TicketPage>(this.baseUrl, { headers: this.deskHeaders(), params })
      .pipe(timeout(READ_TIMEOUT_MS));
  }

  getTicket(id: string): Observable<Ticket> {
    return this.http
      .get<Ticket>(`${this.baseUrl}/${encodeURIComponent(id)}`, { headers: this.deskHeaders() })
      .pipe(
        timeout(READ_TIMEOUT_MS),
        retry({
          count: MAX_READ_RETRIES,
          delay: (error: unknown, retryCount: number) =>
            isRetryable(error) ? timer(RETRY_BASE_DELAY_MS * 2 ** (retryCount - 1)) : throwError(() => error),
        }),
      );
  }

  /**
   * The whole conversation: follows nextCursor until the API reports the last page. A
   * repeated cursor or more than MAX_COMMENT_PAGES pages is reported as an error.
   */
  listComments(ticketId: string): Observable<TicketComment[]> {
    const url = `${this.baseUrl}/${encodeURIComponent(ticketId)}/comments`;
    const seenCursors = new Set<string>();
    const fetchPage = (cursor: string | null) =>
      this.http
        .get<CommentListResponse>(url, {
          headers: this.deskHeaders(),
          params: cursor ? { cursor } : {},
        })
        .pipe(timeout(READ_TIMEOUT_MS));
    const nextPage = (res: CommentListResponse): Observable<CommentListResponse> => {
      const cursor = res.nextCursor;
      if (!cursor) {
        return EMPTY;
      }
      if (seenCursors.has(cursor) || seenCursors.size + 1 >= MAX_COMMENT_PAGES) {
        return throwError(() => new Error(`Comment pagination for ticket ${ticketId} did not terminate`));
      }
      seenCursors.add(cursor);
      return fetchPage(cursor);
    };
    return fetchPage(null)
      .pipe(
        expand(nextPage),
        reduce<CommentListResponse, TicketComment[]>((all, res) => all.concat(res.comments), []),
        catchError((err: unknown) => {
          console.error(`Loading comments for ticket ${ticketId} failed`, err);
          return throwError(() => err);
        }),
      );
  }

  addComment(ticketId: string, body: string, internal: boolean): Observable<TicketComment> {
    return this.http.post<TicketComment>(
      `${this.baseUrl}/${encodeURIComponent(ticketId)}/comments`,
      { body, internal },
      { headers: this.deskHeaders() },
    );
  }

  updateStatus(ticketId: string, status: TicketStatus): Observable<Ticket> {
    return this.http.patch<Ticket>(
      `${this.baseUrl}/${encodeURIComponent(ticketId)}`,
      { status },
      { headers: this.deskHeaders() },
    );
  }

  private deskHeaders(): HttpHeaders {
    return new HttpHeaders({
      'X-Desk-Client': 'agent-console',
    });
  }
}
