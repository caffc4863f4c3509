import { FormEvent, useState } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import { ApiError, authApi, setAccessToken } from "../api/client";

const DEFAULT_LANDING = "/orders";

/**
 * Only same-origin paths are accepted as a post-login destination. The value is parsed the way the
 * browser will parse it (the URL parser drops tab, CR and LF, so "/\t/evil.example" means "//evil.example"),
 * and only its path, query and fragment are kept.
 */
function safeReturnTo(value: string | null): string {
  // eslint-disable-next-line no-control-regex
  if (!value || !value.startsWith("/") || /[\u0000-\u0020\u007f\\]/.test(value)) {
    return DEFAULT_LANDING;
  }
  let url: URL;
  try {
    url = new URL(value, window.location.origin);
  } catch {
    return DEFAULT_LANDING;
  }
  // Dot segments can normalise "/a/..//evil.example" to the path "//evil.example", which a later
  // navigation would read as another host: the result must be a single-slash path too.
  if (url.origin !== window.location.origin || url.pathname.startsWith("//")) {
    return DEFAULT_LANDING;
  }
  return `${url.pathname}${url.search}${url.hash}`;
}

function EyeIcon({ open }: { open: boolean }) {
  return (
    <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d="M12 5C6.5 5 2.7 9.1 1.5 12c1.2 2.9 5 7 10.5 7s9.3-4.1 10.5-7C21.3 9.1 17.5 5 12 5zm0 11a4 4 0 1 1 0-8 4 4 0 0 1 0 8z"
        fill="currentColor"
      />
      {!open && <path d="M3 3l18 18" stroke="currentColor" strokeWidth="2" />}
    </svg>
  );
}

function loginErrorMessage(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return "Email or password is incorrect.";
    if (err.status === 429) return "Too many attempts. Wait a minute and try again.";
  }
  return "Sign-in failed. Please try again.";
}

export function LoginPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [showPassword, setShowPassword] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (submitting) return;
    setSubmitting(true);
    setError(null);
    try {
      const { accessToken } = await authApi.login(email.trim(), password);
      setAccessToken(accessToken);
      navigate(safeReturnTo(params.get("returnTo")), { replace: true });
    } catch (err) {
      setError(loginErrorMessage(err));
      setPassword("");
    } finally {
      setSubmitting(false);
    }
  }

  return (
    <main className="login">
      <form className="login-form" onSubmit={onSubmit} noValidate>
        <h1>Support console</h1>

        <label htmlFor="login-email">Work email</label>
        <input
          id="login-email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          required
        />

        <label htmlFor="login-password">Password</label>
        <div className="password-field">
          <input
            id="login-password"
            type={showPassword ? "text" : "password"}
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
          <button
            type="button"
            className="password-toggle"
            aria-label={showPassword ? "Hide password" : "Show password"}
            aria-pressed={showPassword}
            onClick={() => setShowPassword((v) => !v)}
          >
            <EyeIcon open={showPassword} />
          </button>
        </div>

        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}

        <button type="submit" disabled={submitting || !email || !password}>
          {submitting ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
