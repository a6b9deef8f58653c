import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/cli/event-text.js';

describe('events in words (the table of `school-auth events`)', () => {
  it.each([
    ['mfa.reset', '1 factors removed; 2 sessions ended', 'second factors reset by an operator: 1 factor removed; 2 sessions ended'],
    ['school.suspended', '1 sessions ended', 'school suspended: 1 session ended'],
    ['login.failure', 'unknown_account', 'sign-in refused: no such administrator'],
    ['login.failure', 'sessions_ended_meanwhile', 'sign-in refused: the sessions were ended meanwhile'],
    ['mfa.challenged', 'enroll', 'second factor asked for: to enroll one'],
    ['logout', null, 'signed out'],
    ['keys.revoked', 'key abc revoked; new key def signs now', 'signing key revoked: key abc revoked; new key def signs now'],
  ])('%s with detail %j reads %j', (type, detail, expected) => {
    expect(describeEvent(type, detail)).toBe(expected);
  });

  it('shows an event type it does not know as it is stored', () => {
    expect(describeEvent('sso.callback', 'x')).toBe('sso.callback: x');
  });
});
