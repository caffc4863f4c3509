import { Component, OnDestroy, OnInit, inject } from '@angular/core';
import { CommonModule } from '@angular/common';
import { HttpErrorResponse } from '@angular/common/http';
import { FormControl, FormGroup, ReactiveFormsModule, Validators } from '@angular/forms';
import { ActivatedRoute, Router, RouterLink } from '@angular/router';
import { EMPTY, Subject, interval, merge } from 'rxjs';
import {
  catchError,
  debounceTime,
  distinctUntilChanged,
  exhaustMap,
  map,
  startWith,
  switchMap,
  takeUntil,
} from 'rxjs/operators';

import { Ticket, TicketComment, TicketPage, TicketService, TicketStatus } from './ticket.service';

const COMMENT_POLL_INTERVAL_MS = 30_000;

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
  private readonly destroy$ = new Subject<void>();
  private readonly pageRequests$ = new Subject<number>();

  readonly pageSize = 25;
  readonly searchControl = new FormControl('', { nonNullable: true });
  readonly replyControl = new FormControl('', {
    nonNullable: true,
    validators: [Validators.required, Validators.maxLength(10000)],
  });
  readonly internalNoteControl = new FormControl(false, { nonNullable: true });
  readonly replyForm = new FormGroup({ body: this.replyControl, internal: this.internalNoteControl });

  ticket: Ticket | null = null;
  descriptionHtml = '';
  comments: TicketComment[] = [];
  commentsFailed = false;
  related: Ticket[] = [];
  relatedTotal = 0;
  searchFailed = false;
  page = 1;
  loadError: string | null = null;
  saving = false;
  private destroyed = false;

  ngOnInit(): void {
    // The router reuses this component when a related-ticket link changes only :id, so the
    // ticket and its comment polling follow the route parameter, not a one-time snapshot.
    const ticketIds$ = this.route.paramMap.pipe(
      // BORDERLINE 2 non-null assertion relies on the route config (not in this diff) always declaring an :id parameter for this component
      map((params) => params.get('id')!),
      distinctUntilChanged(),
    );

    ticketIds$
      .pipe(
        switchMap((ticketId) => {
          this.resetForTicket();
          return this.tickets.getTicket(ticketId).pipe(
            catchError((err: unknown) => {
              this.handleLoadError(ticketId, err);
              return EMPTY;
            }),
          );
        }),
        takeUntil(this.destroy$),
      )
      .subscribe((ticket) => {
        this.ticket = ticket;
        this.descriptionHtml = ticket.descriptionHtml;
      });

    ticketIds$
      .pipe(
        switchMap((ticketId) =>
          interval(COMMENT_POLL_INTERVAL_MS).pipe(
            startWith(0),
            // exhaustMap: a tick that arrives while a load is still running is skipped, so a
            // slow load of a long conversation is never cancelled and restarted.
            exhaustMap(() =>
              this.tickets.listComments(ticketId).pipe(
                catchError(() => {
                  this.commentsFailed = true;
                  return EMPTY;
                }),
              ),
            ),
          ),
        ),
        takeUntil(this.destroy$),
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

    // One stream for new terms and page changes, so only the latest request's results apply.
    merge(termChanges$, pageChanges$)
      .pipe(
        switchMap(({ term, page }) =>
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
    this.destroyed = true;
    this.destroy$.next();
    this.destroy$.complete();
  }

  get totalPages(): number {
    return Math.max(1, Math.ceil(this.relatedTotal / this.pageSize));
  }

  goToPage(page: number): void {
    if (page < 1 || page > this.totalPages || page === this.page) {
      return;
    }
    this.pageRequests$.next(page);
  }

  statusLabel(status: TicketStatus): string {
    switch (status) {
      case TicketStatus.Open:
        return 'Open';
      case TicketStatus.Escalated:
        return 'Escalated';
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
    // Not cancelled on destroy, so a reply the agent sent still reaches the customer when
    // they leave the page right after clicking Send.
    this.tickets
      .addComment(ticketId, this.replyControl.value, this.internalNoteControl.value)
      .subscribe({
        next: (comment) => {
          if (this.destroyed || this.ticket?.id !== ticketId) {
            return; // the agent has moved on; resetForTicket already cleared saving
          }
          this.saving = false;
          this.comments = [...this.comments, comment];
          this.replyControl.reset();
        },
        error: () => {
          if (this.destroyed) {
            return;
          }
          if (this.ticket?.id !== ticketId) {
            this.loadError = `Your reply on ticket ${ticketId} was not sent.`;
            return; // the current ticket's saving state is not this request's
          }
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
    const ticketId = this.ticket.id;
    // Not cancelled on destroy, so the close still completes; a finished close only navigates
    // while this component is still showing the ticket it closed.
    this.tickets.updateStatus(ticketId, TicketStatus.Closed).subscribe({
      next: () => {
        if (this.destroyed || this.ticket?.id !== ticketId) {
          return; // the agent has moved on (another ticket or another route); do not navigate away
        }
        const returnUrl = this.route.snapshot.queryParamMap.get('returnUrl');
        const target = returnUrl && returnUrl.startsWith('/') && !returnUrl.startsWith('//') ? returnUrl : '/tickets';
        void this.router.navigateByUrl(target);
      },
      error: () => {
        if (this.destroyed) {
          return;
        }
        if (this.ticket?.id !== ticketId) {
          this.loadError = `Closing ticket ${ticketId} failed.`;
          return;
        }
        this.loadError = 'Closing the ticket failed. Please try again.';
        this.saving = false;
      },
    });
  }

  trackById(_index: number, item: { id: string }): string {
    return item.id;
  }

  private resetForTicket(): void {
    this.ticket = null;
    this.descriptionHtml = '';
    this.comments = [];
    this.commentsFailed = false;
    this.loadError = null;
    this.saving = false;
    this.replyForm.reset();
  }

  private handleLoadError(id: string, err: unknown): void {
    if (err instanceof HttpErrorResponse && err.status === 404) {
      void this.router.navigate(['/tickets'], { queryParams: { missing: id } });
      return;
    }
    this.loadError = 'This ticket could not be loaded.';
  }

  private applySearch(result: TicketPage): void {
    this.searchFailed = false;
    this.related = result.items.filter((t) => t.id !== this.ticket?.id);
    this.relatedTotal = result.total;
    this.page = result.page;
  }
}
