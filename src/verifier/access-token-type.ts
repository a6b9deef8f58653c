/** The JWT `typ` of access tokens (RFC 9068). */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
