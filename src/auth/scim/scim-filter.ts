/**
 * A parsed SCIM filter (RFC 7644 §3.4.2.2). Attribute names are canonical: a core attribute by its
 * name or dotted sub-attribute (`userName`, `emails.value`, `name.givenName`, `meta.lastModified`),
 * an extension attribute prefixed by its schema URN (`urn:...:enterprise:2.0:User:department`).
 * Inside a value path (`emails[type eq "work"]`) the names are the complex attribute's own.
 */
export type Comparison = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

export type FilterValue = string | number | boolean | null;

export type ScimFilter =
  | { readonly kind: 'and' | 'or'; readonly left: ScimFilter; readonly right: ScimFilter }
  | { readonly kind: 'not'; readonly filter: ScimFilter }
  | { readonly kind: 'present'; readonly attribute: string }
  | { readonly kind: 'compare'; readonly op: Comparison; readonly attribute: string; readonly value: FilterValue }
  | { readonly kind: 'valuePath'; readonly attribute: string; readonly filter: ScimFilter };
