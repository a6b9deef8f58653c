/**
 * A variable or a `.env` line that looks like a mistake: named by `config check` and logged as a
 * warning by `serve`. It carries names and line numbers only, never a value: the line or the
 * variable may hold a secret.
 */
export interface SettingNotice {
  /** The line of `.env`; undefined for a variable of the environment. */
  readonly line: number | undefined;
  /** The variable the line or the environment defines, when it has a usable name. */
  readonly variable: string | undefined;
  /** The setting it was probably meant to be. */
  readonly suggestion: string | undefined;
  /** One line for a person: where, what, and what to write instead. */
  readonly text: string;
}

export function unknownSetting(line: number | undefined, variable: string, suggestion: string): SettingNotice {
  const where = line === undefined ? `environment variable ${variable}` : `.env line ${line}: ${variable}`;
  return { line, variable, suggestion, text: `${where} is not a setting of school-auth; did you mean ${suggestion}?` };
}

export function lineNotice(line: number, variable: string | undefined, problem: string): SettingNotice {
  return { line, variable, suggestion: undefined, text: `.env line ${line}: ${problem}` };
}
