/** A JSON log line of the service (pino). */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly reqId?: string;
  readonly method?: string;
  readonly route?: string | null;
  readonly status?: number;
  readonly [key: string]: unknown;
}

/** JSON log output, one object a line; throws on a line that is not JSON. */
export function parseLogLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
}
