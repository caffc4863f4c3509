import { Injectable, inject } from '@angular/core';
import { HttpClient, HttpHeaders } from '@angular/common/http';
import { EMPTY, Observable, of, throwError } from 'rxjs';
import { catchError, expand, reduce, retry } from 'rxjs/operators';

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

/** Upper bound on comment pages per load, so a misbehaving cursor cannot loop forever. */
const MAX_COMMENT_PAGES = 50;

/**
 * Data access for the agent console's ticket workspace.
 *
 * All requests go to the support-desk API; components never build URLs themselves.
 */
@Injectable({ providedIn: 'root' })
export class TicketService {
  private readonly http = inject(HttpClient);
  private readonly baseUrl = `${environment.deskApiUrl}/v2/tickets`;
  // SEED 1 [BLOCKER] (core/hardcoded-secrets) support-desk vendor API key is hard-coded and compiled into the public JS bundle, where anyone can extract and reuse it
  private readonly deskApiKey = 'live_7c2e94b1d03f4a6e8b15c9d2a7f04e61';

  search(query: TicketQuery): Observable<TicketPage> {
    const statusFilter = query.status ? `&status=${query.status}` : '';
    // SEED 4 [MAJOR] (core/unvalidated-input) raw search term interpolated into the query string: a term containing '&', '#' or '=' injects extra parameters or truncates the request
    const url = `${this.baseUrl}?q=${query.term}&page=${query.page}&pageSize=${query.pageSize}${statusFilter}`;
    return this.http.get<TicketPage>(url, { headers: this.deskHeaders() });
  }

  getTicket(id: string): Observable<Ticket> {
    return this.http
      .get<Ticket>(`${this.baseUrl}/${encodeURIComponent(id)}`, { headers: this.deskHeaders() })
      .pipe(
        // SEED 6 [MAJOR] (core/retry-storm) retry() with no count and no delay resubscribes immediately and forever, flooding the API while it is failing
        retry(),
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
      this.http.get<CommentListResponse>(url, {
        headers: this.deskHeaders(),
        params: cursor ? { cursor } : {},
      });
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
        // SEED 5 [MAJOR] (core/swallowed-error) every failure (401, 500, offline) is turned into an empty list, so the agent sees "no comments" instead of an error and may reply without context
        catchError(() => of([])),
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
      'X-Desk-Api-Key': this.deskApiKey,
      'X-Desk-Client': 'agent-console',
    });
  }
}
