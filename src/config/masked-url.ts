/**
 * A query parameter that may hold a secret. The pg driver takes the password from the user-info
 * and from `password` and `sslpassword` parameters; any parameter whose name mentions a password
 * (whatever its case or percent-encoding) is masked, so a future spelling is masked too.
 */
const SECRET_PARAMETER = /pass/i;

/** The password of a URL (DATABASE_URL, SMTP_URL) never reaches a terminal or a log, in whatever form it is given. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    for (const name of new Set(parsed.searchParams.keys())) {
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '****');
    }
    return parsed.toString();
  } catch {
    // Unparsable: nothing of it is shown, since we cannot tell where a password would be.
    return '****';
  }
}

