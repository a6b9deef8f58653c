/**
 * One row (id 1): the last position given to a revocation. Every statement that ends sessions
 * takes the next one, holding this row until it commits, so positions become visible in order.
 */
export interface RevocationSequenceTable {
  id: number;
  last_position: number;
}
