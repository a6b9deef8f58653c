import type { ScimFilter } from './scim-filter.js';
import { FilterParser } from './filter-parse.js';

/**
 * The target of one PATCH operation (RFC 7644 §3.5.2, figure 7: `attrPath / valuePath [subAttr]`),
 * names canonical as in filters: `attribute` is a top-level attribute (an enterprise one keeps its
 * schema URN as prefix), `filter` selects elements of a multi-valued attribute with names relative
 * to them, and `subAttribute` is a sub-attribute of the attribute or of the selected elements.
 */
export interface PatchPath {
  readonly attribute: string;
  readonly filter?: ScimFilter;
  readonly subAttribute?: string;
}

/**
 * Parses a PATCH `path`: `active`, `name.givenName`, `emails[type eq "work"].value`,
 * `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager`. Any problem, an unknown
 * attribute included, is a 400 `invalidPath` saying where; the value filter has the filter's bounds.
 */
export function parsePath(text: string): PatchPath {
  const parser = new FilterParser(text, 'invalidPath');
  const name = parser.attributeName();
  if (!parser.next('[')) {
    parser.end();
    return name.subAttribute === undefined ? { attribute: name.attribute } : { attribute: name.attribute, subAttribute: name.subAttribute.name };
  }
  const filter = parser.valueFilter(name);
  if (parser.atEnd()) return { attribute: name.attribute, filter };
  const subAttribute = parser.trailingSubAttribute(name).name;
  parser.end();
  return { attribute: name.attribute, filter, subAttribute };
}
