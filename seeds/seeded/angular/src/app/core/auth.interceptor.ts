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
import { catchError, finalize, map, shareReplay, switchMap } from 'rxjs/operators';

import { environment } from '../../environments/environment';
import { TelemetryService } from './telemetry.service';

const ACCESS_TOKEN_KEY = 'agent_console.access_token';
const REFRESH_URL = `${environment.apiBaseUrl}/auth/refresh`;
const OAUTH_CLIENT_ID = 'agent-console';
// SEED 19 [BLOCKER] (core/hardcoded-secrets) confidential OAuth client secret for the token endpoint is hard-coded and compiled into the public JS bundle, where anyone can extract it and authenticate as the agent-console client
const OAUTH_CLIENT_SECRET = 'acs-prod-5d81f2c9e07b4a3f96e2b4c18a70d3e5';

interface RefreshResponse {
  accessToken: string;
  expiresIn: number;
}

/**
 * Holds the agent's access token and performs a single shared refresh when the API
 * answers 401. The refresh token itself lives in an HttpOnly cookie set by the API.
 */
@Injectable({ providedIn: 'root' })
export class AuthTokenStore {
  private readonly http = inject(HttpClient);
  private readonly telemetry = inject(TelemetryService);
  private refreshInFlight: Observable<string> | null = null;

  get accessToken(): string | null {
    return localStorage.getItem(ACCESS_TOKEN_KEY);
  }

  setAccessToken(token: string): void {
    // SEED 3 [MAJOR] (core/insecure-storage) bearer token persisted in localStorage, where any script running on the origin (one XSS, one compromised dependency) can read and exfiltrate it
    localStorage.setItem(ACCESS_TOKEN_KEY, token);
  }

  clear(): void {
    localStorage.removeItem(ACCESS_TOKEN_KEY);
  }

  refresh(): Observable<string> {
    if (!this.refreshInFlight) {
      this.refreshInFlight = this.http
        .post<RefreshResponse>(
          REFRESH_URL,
          { clientId: OAUTH_CLIENT_ID, clientSecret: OAUTH_CLIENT_SECRET },
          { withCredentials: true },
        )
        .pipe(
          map((res) => {
            this.setAccessToken(res.accessToken);
            return res.accessToken;
          }),
          catchError((err: HttpErrorResponse) => {
            // SEED 16 [MAJOR] (core/secrets-in-logs) the agent's bearer token is put in a telemetry event payload, so it is stored in the analytics backend and visible to anyone with dashboard access; usually it is the token the API just rejected, but the token read from the shared localStorage may be a fresh one another tab stored, or one rejected for a reason other than expiry
            this.telemetry.trackEvent('auth.refresh_failed', { status: err.status, token: this.accessToken });
            this.clear();
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

  if (req.url === REFRESH_URL) {
    return next(req);
  }
  // SEED 2 [CRITICAL] (core/sensitive-data-exposure) the bearer token is attached to every outgoing request, including the separately hosted desk vendor API (environment.deskApiUrl) and any absolute third-party URL, handing the agent's session credential to hosts outside the console's trust boundary
  const authed = withBearer(req, tokens.accessToken);
  return next(authed).pipe(
    catchError((err: unknown) => {
      if (!(err instanceof HttpErrorResponse) || err.status !== 401) {
        return throwError(() => err);
      }
      // SEED 17 [MAJOR] (core/logic-error) {lines: 4} the catchError sits after switchMap, so it also catches failures of the retried request (403, 404, 409, 500, offline) after a successful refresh and sends an authenticated agent to /login, discarding their work
      return tokens.refresh().pipe(
        switchMap((fresh) => next(withBearer(req, fresh))),
        catchError((refreshErr: unknown) => {
          redirectToLogin(router);
          return throwError(() => refreshErr);
        }),
      );
    }),
  );
};
