/**
 * Failed second factors per admin: `failures` in the window that began at `window_start`, and
 * `consecutive` ones across windows; `locked_at` is set by the failure that reaches the ceiling
 * and cleared only by `admin mfa reset`.
 */
export interface MfaThrottleTable {
  admin_id: string;
  window_start: number;
  failures: number;
  consecutive: number;
  locked_at: number | null;
}
