/** The top bar of /docs: our name on Swagger UI's dark bar, instead of the framework's logo. */
export const DOCS_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40" role="img" aria-label="school-auth">
  <path d="M20 3 L35 9 V19 C35 28 28.5 34.5 20 37 C11.5 34.5 5 28 5 19 V9 Z" fill="#2f7d5b"/>
  <path d="M13.5 20 L18 24.5 L27 15" stroke="#ffffff" stroke-width="3.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
  <text x="46" y="27" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="21" font-weight="600" fill="#ffffff">school-auth</text>
</svg>
`;

/** The browser tab's icon: the shield alone. */
export const DOCS_FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 40 40">
  <path d="M20 3 L35 9 V19 C35 28 28.5 34.5 20 37 C11.5 34.5 5 28 5 19 V9 Z" fill="#2f7d5b"/>
  <path d="M13.5 20 L18 24.5 L27 15" stroke="#ffffff" stroke-width="3.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`;
