import { Injectable, inject } from '@angular/core';
import {
  HttpClient,
  HttpErrorResponse,
  HttpHandlerFn,
  HttpInterceptorFn,
  HttpRequest,
} from '@angular/common/http';
import { Router } from '@angular/router';
import { Observable, throwError } from 'rxjs';
import { catchError, finalize, map, shareReplay, switchMap, timeout } from 'rxjs/operators';

import { environment } from '../../environments/environment';
import { TelemetryService } from './telemetry.service';

const REFRESH_URL = `${environment.apiBaseUrl}/auth/refresh`;
/** A stalled refresh must fail, or every request waiting on the shared refresh hangs with it. */
const REFRESH_TIMEOUT_MS = 15_000;

interface RefreshResponse {
  accessToken: string;
  expiresIn: number;
}

/**
 * Holds the agent's access token in memory only and performs a single shared refresh
 * when the API answers 401. The refresh token lives in an HttpOnly cookie set by the API,
 * so a page reload obtains a new access token through refresh().
 */
@Injectable({ providedIn: 'root' })
export class AuthTokenStore {
  private readonly http = inject(HttpClient);
  private readonly telemetry = inject(TelemetryService);
  private refreshInFlight: Observable<string> | null = null;
  private token: string | null = null;

  get accessToken(): string | null {
    return this.token;
  }

  setAccessToken(token: string): void {
    this.token = token;
  }

  clear(): void {
    this.token = null;
  }

  refresh(): Observable<string> {
    if (!this.refreshInFlight) {
      this.refreshInFlight = this.http
        .post<RefreshResponse>(REFRESH_URL, {}, { withCredentials: true })
        .pipe(
          timeout(REFRESH_TIMEOUT_MS),
          map((res) => {
            this.setAccessToken(res.accessToken);
            return res.accessToken;
          }),
          catchError((err: unknown) => {
            this.telemetry.trackEvent('auth.refresh_failed', {
              status: err instanceof HttpErrorResponse ? err.status : 0, // 0: timed out
            });
            if (isSessionRejected(err)) {
              this.clear();
            }
            return throwError(() => err);
          }),
          finalize(() => {
            this.refreshInFlight = null;
          }),
          shareReplay(1),
        );
    }
    return this.refreshInFlight;
  }
}

/** Only the refresh endpoint rejecting the refresh cookie means the session is gone. */
function isSessionRejected(err: unknown): boolean {
  return err instanceof HttpErrorResponse && (err.status === 400 || err.status === 401 || err.status === 403);
}

function isOwnApi(url: string): boolean {
  return url.startsWith(`${environment.apiBaseUrl}/`);
}

function withBearer(req: HttpRequest<unknown>, token: string | null): HttpRequest<unknown> {
  return token ? req.clone({ setHeaders: { Authorization: `Bearer ${token}` } }) : req;
}

function redirectToLogin(router: Router): void {
  void router.navigate(['/login'], { queryParams: { returnUrl: router.url } });
}

/**
 * Adds the bearer token and retries once after a successful refresh when the API
 * answers 401. Registered in app.config.ts via provideHttpClient(withInterceptors(...)).
 */
export const authInterceptor: HttpInterceptorFn = (
  req: HttpRequest<unknown>,
  next: HttpHandlerFn,
) => {
  const tokens = inject(AuthTokenStore);
  const router = inject(Router);

  if (!isOwnApi(req.url) || req.url === REFRESH_URL) {
    return next(req);
  }
  const authed = withBearer(req, tokens.accessToken);
  return next(authed).pipe(
    catchError((err: unknown) => {
      if (!(err instanceof HttpErrorResponse) || err.status !== 401) {
        return throwError(() => err);
      }
      // Only a refresh the API rejects means the session is gone; a network error or 5xx on
      // the refresh, and errors of the retried request, propagate to the caller unchanged.
      return tokens.refresh().pipe(
        catchError((refreshErr: unknown) => {
          if (isSessionRejected(refreshErr)) {
            redirectToLogin(router);
          }
          return throwError(() => refreshErr);
        }),
        switchMap((fresh) => next(withBearer(req, fresh))),
      );
    }),
  );
};
