/**
 * Failed second factors per admin and scope: `ip:<address>` for each client address the factor
 * was tried from, `new` for all addresses the admin never signed in from together. `failures`
 * in the window that began at `window_start`, `consecutive` ones across windows; `locked_at` is
 * set on the `new` row by the failure that reaches the ceiling and cleared by `admin unlock`,
 * `admin passwd` or `admin mfa reset`.
 */
export interface MfaThrottleTable {
  admin_id: string;
  scope: string;
  window_start: number;
  failures: number;
  consecutive: number;
  locked_at: number | null;
}
