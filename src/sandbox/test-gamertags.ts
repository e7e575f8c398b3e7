/**
 * Gamertags the sandbox treats specially, so every path of a payout can be tried offline.
 * Any other gamertag is an ordinary, known player with a stable userId.
 */
export const TEST_GAMERTAGS = {
  /** Lookups answer 400 "No user found with this gamertag" (so does any gamertag starting `nobody-`). */
  unknown: 'nobody',
  /** Payments are refused with 400 "Insufficient balance in project wallet". */
  refused: 'broke',
  /** Every answer comes after `slowMs` (default 1.5 s): slow, but inside the relay's timeout. */
  slow: 'slowpoke',
  /** The payment settles at once but its answer comes after `limboMs` (default 30 s): past the relay's timeout. */
  ambiguous: 'limbo',
  /** The payment answers `processing`; the payment-status endpoint reports it completed after `processingMs`. */
  processing: 'tortoise',
} as const;

export const isUnknownGamertag = (gamertag: string): boolean => {
  const g = gamertag.toLowerCase();
  return g === TEST_GAMERTAGS.unknown || g.startsWith(`${TEST_GAMERTAGS.unknown}-`);
};
