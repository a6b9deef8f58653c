/** Failed single sign-on callbacks of one client IP in the current window. */
export interface SsoCallbackFailuresTable {
  ip: string;
  window_start: number;
  failures: number;
}
