import { Component, OnDestroy, OnInit, inject } from '@angular/core';
import { CommonModule } from '@angular/common';
import { HttpErrorResponse } from '@angular/common/http';
import { FormControl, ReactiveFormsModule, Validators } from '@angular/forms';
import { ActivatedRoute, Router, RouterLink } from '@angular/router';
import { DomSanitizer, SafeHtml } from '@angular/platform-browser';
import { EMPTY, Subject, interval, merge } from 'rxjs';
import { catchError, debounceTime, distinctUntilChanged, map, mergeMap, startWith, switchMap, takeUntil } from 'rxjs/operators';

import { Ticket, TicketComment, TicketPage, TicketService, TicketStatus } from './ticket.service';

@Component({
  selector: 'app-ticket-detail',
  standalone: true,
  imports: [CommonModule, ReactiveFormsModule, RouterLink],
  templateUrl: './ticket-detail.component.html',
  styleUrls: ['./ticket-detail.component.scss'],
})
export class TicketDetailComponent implements OnInit, OnDestroy {
  private readonly tickets = inject(TicketService);
  private readonly route = inject(ActivatedRoute);
  private readonly router = inject(Router);
  private readonly sanitizer = inject(DomSanitizer);
  private readonly destroy$ = new Subject<void>();
  private readonly pageRequests$ = new Subject<number>();

  readonly pageSize = 25;
  readonly searchControl = new FormControl('', { nonNullable: true });
  readonly replyControl = new FormControl('', {
    nonNullable: true,
    validators: [Validators.required, Validators.maxLength(10000)],
  });
  readonly internalNoteControl = new FormControl(false, { nonNullable: true });

  ticket: Ticket | null = null;
  descriptionHtml: SafeHtml = '';
  comments: TicketComment[] = [];
  commentsFailed = false;
  related: Ticket[] = [];
  relatedTotal = 0;
  searchFailed = false;
  page = 1;
  loadError: string | null = null;
  saving = false;

  ngOnInit(): void {
    // BORDERLINE 1 non-null assertion relies on the route config (not in this diff) always declaring an :id parameter for this component
    // SEED 20 [MAJOR] (core/logic-error) the ticket id is read once from the route snapshot, but the related-ticket links route to /tickets/<other id> and the router reuses this component for them, so the URL changes while the page keeps showing, polling, replying to and closing the previous ticket
    const ticketId = this.route.snapshot.paramMap.get('id')!;
    this.loadTicket(ticketId);

    // SEED 10 [MAJOR] (core/memory-leak) the polling subscription is never torn down, so every ticket opened leaves another poller running after the component is destroyed
    // SEED 14 [INFO] (core/magic-number) the 30000 ms polling interval is an unexplained literal
    interval(30000)
      .pipe(
        startWith(0),
        switchMap(() =>
          this.tickets.listComments(ticketId).pipe(
            catchError(() => {
              this.commentsFailed = true;
              return EMPTY;
            }),
          ),
        ),
      )
      .subscribe((comments) => {
        this.commentsFailed = false;
        this.comments = comments;
      });

    const termChanges$ = this.searchControl.valueChanges.pipe(
      debounceTime(250),
      distinctUntilChanged(),
      map((term) => ({ term, page: 1 })),
    );
    const pageChanges$ = this.pageRequests$.pipe(map((page) => ({ term: this.searchControl.value, page })));

    merge(termChanges$, pageChanges$)
      .pipe(
        // SEED 9 [MAJOR] (core/race-condition) mergeMap lets a slower response for an earlier term or page overwrite the results for the current one, so the agent can merge into a ticket from a stale list
        mergeMap(({ term, page }) =>
          this.tickets.search({ term, page, pageSize: this.pageSize }).pipe(
            catchError(() => {
              this.searchFailed = true;
              return EMPTY;
            }),
          ),
        ),
        takeUntil(this.destroy$),
      )
      .subscribe((result) => this.applySearch(result));
  }

  ngOnDestroy(): void {
    this.destroy$.next();
    this.destroy$.complete();
  }

  get totalPages(): number {
    // SEED 12 [MAJOR] (core/off-by-one) Math.floor drops the last partial page: 60 matches at 25 per page give 2 pages, so matches 51-60 can never be shown
    return Math.floor(this.relatedTotal / this.pageSize);
  }

  goToPage(page: number): void {
    if (page < 1 || page > this.totalPages || page === this.page) {
      return;
    }
    this.pageRequests$.next(page);
  }

  statusLabel(status: TicketStatus): string {
    // SEED 11 [MAJOR] (core/missing-case) {symbol: Escalated} TicketStatus.Escalated has no case and falls through to 'Unknown', so escalated tickets are shown to agents with an unknown status
    switch (status) {
      case TicketStatus.Open:
        return 'Open';
      case TicketStatus.Pending:
        return 'Waiting on customer';
      case TicketStatus.Resolved:
        return 'Resolved';
      case TicketStatus.Closed:
        return 'Closed';
      default:
        return 'Unknown';
    }
  }

  sendReply(): void {
    if (!this.ticket || this.replyControl.invalid || this.saving) {
      return;
    }
    this.saving = true;
    const ticketId = this.ticket.id;
    this.tickets
      .addComment(ticketId, this.replyControl.value, this.internalNoteControl.value)
      .pipe(takeUntil(this.destroy$))
      .subscribe({
        next: (comment) => {
          this.comments = [...this.comments, comment];
          this.replyControl.reset();
          this.saving = false;
        },
        error: () => {
          this.loadError = 'Your reply was not sent. Please try again.';
          this.saving = false;
        },
      });
  }

  closeTicket(): void {
    if (!this.ticket || this.saving) {
      return;
    }
    this.saving = true;
    this.tickets.updateStatus(this.ticket.id, TicketStatus.Closed).subscribe({
      next: () => {
        const returnUrl = this.route.snapshot.queryParamMap.get('returnUrl') ?? '/tickets';
        // SEED 8 [CRITICAL] (core/xss) returnUrl from the query string is assigned to window.location: a crafted link with returnUrl=javascript:... runs script in the agent's session when they close the ticket (DOM XSS), and an absolute URL sends them off-site
        window.location.href = returnUrl;
      },
      error: () => {
        this.loadError = 'Closing the ticket failed. Please try again.';
        this.saving = false;
      },
    });
  }

  trackById(_index: number, item: { id: string }): string {
    return item.id;
  }

  private loadTicket(id: string): void {
    this.tickets
      .getTicket(id)
      .pipe(takeUntil(this.destroy$))
      .subscribe({
        next: (ticket) => {
          this.ticket = ticket;
          // SEED 7 [BLOCKER] (core/xss) requester-supplied HTML (stored from inbound email) is marked trusted, bypassing Angular's sanitizer, so an <img onerror> payload any requester plants runs script in the session of every agent who opens the ticket
          this.descriptionHtml = this.sanitizer.bypassSecurityTrustHtml(ticket.descriptionHtml);
        },
        error: (err: unknown) => {
          if (err instanceof HttpErrorResponse && err.status === 404) {
            void this.router.navigate(['/tickets'], { queryParams: { missing: id } });
            return;
          }
          this.loadError = 'This ticket could not be loaded.';
        },
      });
  }

  private applySearch(result: TicketPage): void {
    this.searchFailed = false;
    this.related = result.items.filter((t) => t.id !== this.ticket?.id);
    this.relatedTotal = result.total;
    this.page = result.page;
  }
}
