/** Random keys the service creates for itself once, shared by every instance through the database. */
export interface ServerSecretsTable {
  name: string;
  value: string;
}
