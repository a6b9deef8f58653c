import { Command } from 'commander';

/** What asks for help rather than naming something: never taken for an id. */
const HELP_FLAGS = new Set(['-h', '--help']);

/**
 * A command whose arguments are ids pasted from a listing. Base64url kids and session ids begin
 * with `-` about once in 64, and school ids or usernames may too; commander would read such an id
 * as an unknown option. Here, while the command still expects an argument, an argument that is
 * not one of its options fills that slot; options before and after it keep their meaning, and
 * once every slot is filled an unknown option is still refused. Values of options (`--school -x`)
 * are taken as given by commander already.
 */
export class OperatorCommand extends Command {
  override createCommand(name?: string): OperatorCommand {
    return new OperatorCommand(name);
  }

  override parseOptions(args: string[]): { operands: string[]; unknown: string[] } {
    const parsed = super.parseOptions(args);
    const [first, ...rest] = parsed.unknown;
    if (first === undefined || first === '--' || HELP_FLAGS.has(first)) return parsed;
    // Only a leaf command with an empty slot: a parent command passes unknown words to its subcommand.
    if (this.commands.length > 0 || parsed.operands.length >= this.registeredArguments.length) return parsed;
    const after = this.parseOptions(rest);
    return { operands: [...parsed.operands, first, ...after.operands], unknown: after.unknown };
  }
}
